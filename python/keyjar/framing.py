"""Frames and JSON of the Keyjar wire protocol (Schemas/protocol.md, "Framing").

A frame is a 4-byte big-endian length N, 1 <= N <= 64 MiB, then N bytes of UTF-8 JSON. The
decoder trusts nothing it reads: a length is checked before a byte of its payload is kept, no
buffer is sized by a length, and every way a frame can be wrong (length 0 or over the limit,
invalid UTF-8, not JSON, a duplicate key, nesting too deep, not an object) is a
``ProtocolError`` and nothing else, so a caller has exactly one failure to handle.
"""

from __future__ import annotations

import json
import struct
from typing import Any, Dict, List, Optional, Tuple

from .errors import ProtocolError

#: keyjard's default largest frame (``keyjard --max-frame-bytes``).
MAX_FRAME_BYTES = 64 * 1024 * 1024

_LENGTH = struct.Struct(">I")


def _refuse_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """json's object hook: "A document with a duplicate key is not a message" (the protocol)."""
    result: Dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ProtocolError("a message has a duplicate key")
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are Python's extension, not JSON.
    raise ProtocolError(f"a message holds {name}, which is not JSON")


def decode_json(payload: bytes) -> Dict[str, Any]:
    """A frame's payload as a JSON object; ``ProtocolError`` for anything else."""
    try:
        text = payload.decode("utf-8")  # strict: invalid UTF-8 is refused, not replaced
    except UnicodeDecodeError:
        raise ProtocolError("a frame is not UTF-8") from None
    try:
        value = json.loads(
            text, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant
        )
    except ProtocolError:
        raise
    except (ValueError, RecursionError, TypeError, OverflowError, MemoryError):
        # ValueError covers JSONDecodeError; RecursionError a document nested too deep.
        raise ProtocolError("a frame is not valid JSON") from None
    if not isinstance(value, dict):
        raise ProtocolError("a message is not a JSON object")
    return value


def encode_frame(message: Dict[str, Any], max_bytes: int = MAX_FRAME_BYTES) -> bytes:
    """One frame holding ``message``. Compact JSON, UTF-8 unescaped (keyjard reads either)."""
    payload = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )
    if not 1 <= len(payload) <= max_bytes:
        raise ProtocolError(f"a request of {len(payload)} bytes does not fit in a frame")
    return _LENGTH.pack(len(payload)) + payload


class FrameDecoder:
    """Turns a stream of bytes into messages, whatever sizes the bytes arrive in.

    ``feed`` returns the messages completed so far; ``finish`` says whether the stream ended
    between frames (a frame cut off by the end of the stream is a framing error). After a
    ``ProtocolError`` the decoder is unusable: the stream has lost its framing.
    """

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._max = max_frame_bytes
        self._buffer = bytearray()
        self._expected: Optional[int] = None
        self._broken = False

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a whole message."""
        return len(self._buffer)

    def feed(self, data: bytes) -> List[Dict[str, Any]]:
        if self._broken:
            raise ProtocolError("the stream's framing was already lost")
        self._buffer += data
        messages: List[Dict[str, Any]] = []
        try:
            while True:
                if self._expected is None:
                    if len(self._buffer) < _LENGTH.size:
                        return messages
                    (length,) = _LENGTH.unpack_from(self._buffer)
                    # Checked before any of the payload is kept waiting for: a length is the
                    # peer's claim, never a size to allocate or wait for blindly.
                    if length == 0:
                        raise ProtocolError("a frame has length 0")
                    if length > self._max:
                        raise ProtocolError(
                            f"a frame of {length} bytes is over the limit of {self._max}"
                        )
                    del self._buffer[: _LENGTH.size]
                    self._expected = length
                if len(self._buffer) < self._expected:
                    return messages
                payload = bytes(self._buffer[: self._expected])
                del self._buffer[: self._expected]
                self._expected = None
                messages.append(decode_json(payload))
        except ProtocolError:
            self._broken = True
            self._buffer = bytearray()
            raise

    def finish(self) -> None:
        """The stream ended: refuse a frame it cut off."""
        if self._broken:
            return
        if self._expected is not None or self._buffer:
            self._broken = True
            raise ProtocolError("the stream ended inside a frame")

