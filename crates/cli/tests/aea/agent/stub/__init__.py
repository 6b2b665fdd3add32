"""A file connection on aea.helpers.file_io, behaving as aea 1.2.5's fetchai/stub."""
