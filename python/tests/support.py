"""Test doubles that need no keyjard: a scripted keyjard speaking the protocol, and a
listener that accepts and never answers (a stopped keyjard)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import tempfile
import threading
from typing import Any, Callable, Dict, List

from keyjar.framing import FrameDecoder

#: How long a call that must succeed may wait for its answer in these tests: a guard against a
#: hang, never a measure of speed. The suite runs beside other tests on a busy machine, where
#: keyjard (or the scripted one) can be queued for seconds; the Swift suite's time limit ends a
#: real hang first. Tests of the timeout itself pass their own short one.
ANSWER_TIMEOUT = 600.0


def private_directory(test: Any) -> str:
    """A fresh 0700 directory removed after ``test``."""
    path = tempfile.mkdtemp(prefix="keyjar-test-")
    os.chmod(path, 0o700)
    test.addCleanup(shutil.rmtree, path, True)
    return path


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


def message(value: Dict[str, Any]) -> bytes:
    return frame(json.dumps(value).encode("utf-8"))


def reply(request_id: int, response: Dict[str, Any]) -> bytes:
    return message({"reply": {"id": request_id, "response": response}})


CLOSE = object()  # a handler's answer: close the connection without replying

# A handler gets (connection number from 1, the request's id, its name, its fields) and returns
# bytes to send (any number of frames), or CLOSE.
Handler = Callable[[int, int, str, Dict[str, Any]], Any]


class FakeKeyjard:
    """A keyjard stand-in on a Unix socket: answers ``hello`` itself (unless the handler takes
    it), everything else by ``handler``; records every request it received."""

    def __init__(self, directory: str, handler: Handler, answer_hello: bool = True) -> None:
        self.path = os.path.join(directory, "keyjar.sock")
        self.handler = handler
        self.answer_hello = answer_hello
        self.received: List[tuple] = []
        self.connections = 0
        if os.path.exists(self.path):
            os.unlink(self.path)  # a predecessor's: a restarted keyjard binds anew
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(8)
        self._open: List[socket.socket] = []
        self._threads: List[threading.Thread] = []
        self._lock = threading.Lock()
        self._start(self._accept)

    def _start(self, target: Callable[..., None], *arguments: Any) -> None:
        thread = threading.Thread(target=target, args=arguments, daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def close(self) -> None:
        """Stops every thread before any descriptor is closed: a thread that went on using a
        closed descriptor's number could read whatever socket reuses it (another test's)."""
        _shut(self._server)
        while True:
            with self._lock:
                for connection in self._open:
                    _shut(connection)
                running = [thread for thread in self._threads if thread.is_alive()]
            if not running:
                break
            running[0].join()
        self._server.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                number = self.connections
                self._open.append(connection)
            self._start(self._serve, connection, number)

    def _serve(self, connection: socket.socket, number: int) -> None:
        decoder = FrameDecoder()
        with connection:
            while True:
                try:
                    data = connection.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                for received in decoder.feed(data):
                    request_id = received["id"]
                    ((name, fields),) = received["request"].items()
                    with self._lock:
                        self.received.append((number, request_id, name, fields))
                    if name == "hello" and self.answer_hello:
                        answer: Any = reply(
                            request_id, {"hello": {"version": 4, "server": "fake", "sequence": 0}}
                        )
                    else:
                        answer = self.handler(number, request_id, name, fields)
                    if answer is CLOSE:
                        _shut(connection)
                        return
                    try:
                        connection.sendall(answer)
                    except OSError:
                        return

    def names(self) -> List[str]:
        with self._lock:
            return [entry[2] for entry in self.received]


class SilentListener:
    """Accepts connections and never says anything: a stopped keyjard."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, "keyjar.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(8)
        self._held: List[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            self._held.append(connection)  # held open, never answered

    def close(self) -> None:
        _shut(self._server)
        self._thread.join()
        self._server.close()
        for connection in self._held:
            connection.close()


def _shut(sock: socket.socket) -> None:
    """Wakes a thread blocked in accept or recv on ``sock`` (it then sees an end)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
