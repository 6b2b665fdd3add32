"""The client side of AEA's TCP connection, as aea 1.2.5's fetchai/tcp behaves.

Facts it follows (the connection package is not on PyPI; the framework's Envelope is):
every frame, either way, is a 4-byte length packed with `struct.pack("I", n)` (native
order: little-endian here) followed by that many bytes. On connect the client sends its
agent address (UTF-8) as the first frame; every later frame is an envelope as
`Envelope.encode()` serializes it, and each frame read is decoded by `Envelope.decode`.
The client does not reconnect: a closed socket ends its receiving.
"""
import asyncio
import struct
from typing import Any, Optional

from aea.configurations.base import PublicId
from aea.connections.base import Connection, ConnectionStates
from aea.mail.base import Envelope

PUBLIC_ID = PublicId.from_str("fetchai/tcp:0.21.3")
LENGTH = struct.calcsize("I")


class TCPClientConnection(Connection):
    """Envelopes to and from a TCP server."""

    connection_id = PUBLIC_ID

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        config = self.configuration.config
        self.host = str(config.get("address", "127.0.0.1"))
        self.port = int(config.get("port", 10000))
        self.reader: Optional[asyncio.StreamReader] = None
        self.writer: Optional[asyncio.StreamWriter] = None

    async def send_frame(self, data: bytes) -> None:
        assert self.writer is not None
        self.writer.write(struct.pack("I", len(data)) + data)
        await self.writer.drain()

    async def connect(self) -> None:
        if self.is_connected:
            return
        with self._connect_context():
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            await self.send_frame(self.address.encode("utf-8"))

    async def send(self, envelope: Envelope) -> None:
        self._ensure_connected()
        self._ensure_valid_envelope_for_external_comms(envelope)
        await self.send_frame(envelope.encode())

    async def receive(self, *args: Any, **kwargs: Any) -> Optional[Envelope]:
        self._ensure_connected()
        assert self.reader is not None
        try:
            size = struct.unpack("I", await self.reader.readexactly(LENGTH))[0]
            return Envelope.decode(await self.reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError):
            self.logger.warning("the server closed the connection")
            return None

    async def disconnect(self) -> None:
        if self.is_disconnected:
            return
        self.state = ConnectionStates.disconnecting
        if self.writer is not None:
            self.writer.close()
        self.state = ConnectionStates.disconnected
