"""A connection on two files, as aea 1.2.5's fetchai/stub behaves.

Facts it follows (the connection package is not on PyPI; the framework's file functions
are): every millisecond the input file is read whole under `aea.helpers.file_io.lock_file`
(an exclusive flock) and emptied; what was read is cut into records with the stub's rule
(three comma-ended header fields, then everything up to the last comma and an optional
newline) and each is decoded by `envelope_from_bytes`. The output file is opened with
"wb+" (so it is emptied when the agent connects) and every envelope is appended by
`write_envelope` (one record, under the lock, no newline).
"""
import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, List, Optional

from aea.configurations.base import PublicId
from aea.connections.base import Connection, ConnectionStates
from aea.helpers.file_io import envelope_from_bytes, lock_file, write_envelope
from aea.mail.base import Envelope

PUBLIC_ID = PublicId.from_str("fetchai/stub:0.21.3")
SEPARATOR = b","
RECORD = re.compile(b"(?:[^,]*,){3}.*,\n?", re.DOTALL)
READ_DELAY = 0.001


def split_records(data: bytes) -> List[bytes]:
    """The stub's cut: greedy to the last comma, so records read together are one."""
    return [m.group(0) for m in RECORD.finditer(data)]


class StubConnection(Connection):
    """Envelopes in from input_file, out to output_file."""

    connection_id = PUBLIC_ID

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        config = self.configuration.config
        paths = []
        for key in ("input_file", "output_file"):
            path = Path(config.get(key, "./" + key))
            # Relative to where the agent runs (its project directory under `aea run`).
            paths.append(path if path.is_absolute() else Path.cwd() / path)
        self.input_path, self.output_path = paths
        self.input_path.touch(exist_ok=True)
        self.input = None
        self.output = None
        self.queue: Optional[asyncio.Queue] = None
        self.reader: Optional[asyncio.Task] = None
        self.writer = ThreadPoolExecutor(max_workers=1)

    async def connect(self) -> None:
        if self.is_connected:
            return
        with self._connect_context():
            self.queue = asyncio.Queue()
            self.input = open(self.input_path, "rb+")  # pylint: disable=consider-using-with
            self.output = open(self.output_path, "wb+")  # pylint: disable=consider-using-with
            self.reader = self.loop.create_task(self.read_loop())

    def drain(self) -> bytes:
        with lock_file(self.input, self.logger):
            data = self.input.read()
            if data:
                self.input.truncate(0)
                self.input.seek(0)
        return data

    async def read_loop(self) -> None:
        while not self.input.closed:
            data = self.drain()
            if not data:
                await asyncio.sleep(READ_DELAY)
                continue
            for record in split_records(data):
                envelope = envelope_from_bytes(record, SEPARATOR, self.logger)
                if envelope is not None:
                    await self.queue.put(envelope)

    async def receive(self, *args: Any, **kwargs: Any) -> Optional[Envelope]:
        self._ensure_connected()
        return await self.queue.get()

    async def send(self, envelope: Envelope) -> None:
        self._ensure_connected()
        self._ensure_valid_envelope_for_external_comms(envelope)
        await self.loop.run_in_executor(
            self.writer, write_envelope, envelope, self.output, SEPARATOR, self.logger
        )

    async def disconnect(self) -> None:
        if self.is_disconnected:
            return
        self.state = ConnectionStates.disconnecting
        if self.reader is not None and not self.reader.done():
            self.reader.cancel()
            try:
                await self.reader
            except asyncio.CancelledError:
                pass
        self.writer.shutdown(wait=True)
        if self.queue is not None:
            self.queue.put_nowait(None)
        for file in (self.input, self.output):
            if file is not None:
                file.close()
        self.state = ConnectionStates.disconnected
