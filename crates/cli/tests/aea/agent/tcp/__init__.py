"""A client of AEA's TCP connection, behaving as aea 1.2.5's fetchai/tcp client."""
