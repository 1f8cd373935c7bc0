"""One checked connection to keyjard: connect, send a frame, read a message by a deadline.

Why the checks come first: nothing (not even ``hello``) may be sent before the socket is known
to be this user's keyjard's (docs/protocol.md, "Checking that it is the user's own keyjard"):
its directory must be the user's alone, and the process at the other end must run as the user
(``SO_PEERCRED``). Why a deadline on every read: a stopped keyjard (SIGSTOP, a debugger)
accepts connections and never answers; a caller is then told ``Unreachable`` after its timeout
rather than hanging.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
import time
from collections import deque
from typing import Any, Deque, Dict, Optional

from .errors import ConnectionLost, NotServing, SocketRefused, Unreachable
from .framing import MAX_FRAME_BYTES, FrameDecoder, encode_frame
from .socketpath import private_directory_problem, socket_directory

#: Linux's ``struct ucred``: pid, uid, gid, three 32-bit integers.
_UCRED = struct.Struct("3i")
_NOT_LISTENING = (errno.ENOENT, errno.ECONNREFUSED)
_READ_SIZE = 64 * 1024


def peer_uid(sock: socket.socket) -> Optional[int]:
    """The uid of the process serving ``sock`` (``SO_PEERCRED``), None when unknown."""
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    except OSError:
        return None
    if len(raw) != _UCRED.size:
        return None
    _pid, uid, _gid = _UCRED.unpack(raw)
    return uid & 0xFFFFFFFF  # uid_t is unsigned; "3i" reads it signed


def _remaining(deadline: float) -> float:
    return deadline - time.monotonic()


class Connection:
    """A connected, checked socket to keyjard and the decoder of what it sends."""

    def __init__(self, sock: socket.socket, path: str) -> None:
        self._socket = sock
        self.path = path
        self._decoder = FrameDecoder(MAX_FRAME_BYTES)
        self._pending: Deque[Dict[str, Any]] = deque()
        self._closed = False
        #: The process that opened it: a child after fork() must not use its parent's stream.
        self.pid = os.getpid()

    @classmethod
    def open(cls, path: str, timeout: float) -> "Connection":
        """Connects to ``path`` after checking its directory, then checks the peer.

        ``NotServing`` when nobody listens (missing directory or socket, refused): starting
        keyjard may help. ``SocketRefused`` when a check fails. ``Unreachable`` otherwise.
        """
        directory = socket_directory(path)
        try:
            problem = private_directory_problem(directory)
        except FileNotFoundError:
            raise NotServing(f"no keyjard at {path}: {directory} does not exist") from None
        except OSError as error:
            problem = f"{directory} cannot be read: {error.strerror}"
        if problem is not None:
            raise SocketRefused(f"refusing to use {path}: {problem}")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # not inherited by children
        try:
            sock.settimeout(timeout)
            sock.connect(path)
        except OSError as error:
            sock.close()
            if isinstance(error, socket.timeout):
                raise Unreachable(f"keyjard at {path} did not accept within {timeout:g} s") from None
            if error.errno in _NOT_LISTENING:
                raise NotServing(f"no keyjard at {path}: {error.strerror}") from None
            raise Unreachable(f"cannot connect to {path}: {error.strerror or error}") from None
        uid = peer_uid(sock)
        if uid is None or uid != os.geteuid():
            sock.close()
            if uid is None:
                why = "the process serving it cannot be identified (SO_PEERCRED)"
            else:
                why = f"the process serving it runs as uid {uid}, not as you (uid {os.geteuid()})"
            raise SocketRefused(f"refusing to use {path}: {why}")
        return cls(sock, path)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._socket.close()
            except OSError:
                pass

    def send(self, message: Dict[str, Any], deadline: float) -> None:
        """Sends one message whole. ``ConnectionLost`` when the connection is found gone (the
        frame was then not received whole: keyjard acted on none of it); ``Unreachable`` when
        keyjard stops reading past the deadline."""
        data = memoryview(encode_frame(message))
        try:
            while data:
                remaining = _remaining(deadline)
                if remaining <= 0:
                    raise socket.timeout()
                self._socket.settimeout(remaining)
                # MSG_NOSIGNAL: a closed peer is an error here, never SIGPIPE for the process.
                sent = self._socket.send(data, socket.MSG_NOSIGNAL)
                data = data[sent:]
        except socket.timeout:
            self.close()
            raise Unreachable("keyjard did not read the request in time") from None
        except OSError as error:
            self.close()
            raise ConnectionLost(f"the connection to keyjard was lost: {error.strerror or error}") from None

    def receive(self, deadline: float) -> Dict[str, Any]:
        """The next message, waiting until ``deadline`` (``time.monotonic()``) at most.

        ``Unreachable`` when nothing whole came in time (the connection is then closed: a late
        reply must not be taken for the next request's); ``ConnectionLost`` at the end of the
        stream; ``ProtocolError`` for a bad frame.
        """
        while not self._pending:
            remaining = _remaining(deadline)
            if remaining <= 0:
                self.close()
                raise Unreachable("keyjard did not answer in time")
            try:
                self._socket.settimeout(remaining)
                data = self._socket.recv(_READ_SIZE)
            except socket.timeout:
                self.close()
                raise Unreachable("keyjard did not answer in time") from None
            except OSError as error:
                self.close()
                if error.errno == errno.ECONNRESET:
                    raise ConnectionLost("keyjard closed the connection") from None
                raise Unreachable(f"reading from keyjard failed: {error.strerror or error}") from None
            if not data:
                self.close()
                self._decoder.finish()  # a frame cut off is a ProtocolError
                raise ConnectionLost("keyjard closed the connection")
            self._pending.extend(self._feed(data))
        return self._pending.popleft()

    def _feed(self, data: bytes) -> "list[Dict[str, Any]]":
        try:
            return self._decoder.feed(data)
        except Exception:
            self.close()
            raise

    @property
    def received_nothing_pending(self) -> bool:
        """Whether no byte of an unread message is buffered (a reply has not begun)."""
        return not self._pending and self._decoder.buffered == 0

    def drain_without_waiting(self) -> "list[Dict[str, Any]]":
        """What keyjard sent while nobody was waiting, read without blocking; marks the
        connection closed when keyjard has closed its end. Used before a request is sent, so
        that a connection keyjard already dropped (a restart) is replaced before anything is
        sent on it."""
        messages = list(self._pending)
        self._pending.clear()
        while not self._closed:
            # poll, not select: select fails for descriptors over 1023.
            poller = select.poll()
            poller.register(self._socket.fileno(), select.POLLIN)
            if not poller.poll(0):
                break
            try:
                data = self._socket.recv(_READ_SIZE, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.close()
                break
            if not data:
                self.close()
                break
            messages.extend(self._feed(data))
        return messages
