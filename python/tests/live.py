"""The keyjard the live tests talk to.

``KEYJAR_SOCKET`` set by the caller: that keyjard (it must answer). Otherwise a private keyjard
is started once for the test run, in a temporary directory with ``--secrets file`` (no D-Bus
needed), from ``KEYJAR_KEYJARD``, the repository's ``.build/debug/keyjard``, or PATH, and
stopped at exit. With ``KEYJAR_TEST_REQUIRE_KEYJARD=1`` a missing keyjard fails the tests
instead of skipping them.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
from typing import Optional

from keyjar import Client
from keyjar.autostart import answers, find_keyjard
from keyjar.errors import Unreachable

from .support import ANSWER_TIMEOUT

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class LiveKeyjard:
    def __init__(self, socket_path: str, database_path: Optional[str], private: bool) -> None:
        self.socket_path = socket_path
        self.database_path = database_path
        #: Started by these tests: may be cleared wholesale.
        self.private = private

    def client(self, **options) -> Client:
        options.setdefault("timeout", ANSWER_TIMEOUT)
        return Client(
            socket_path=self.socket_path,
            database_path=self.database_path,
            autostart=False,
            client_name="keyjar-python-tests",
            **options,
        )


_lock = threading.Lock()
_live: Optional[LiveKeyjard] = None
_problem: Optional[str] = None


def keyjard_binary() -> Optional[str]:
    built = os.path.join(REPOSITORY, ".build", "debug", "keyjard")
    found = find_keyjard()
    if found:
        return found
    return built if os.access(built, os.X_OK) else None


def _start_private() -> LiveKeyjard:
    binary = keyjard_binary()
    if binary is None:
        raise RuntimeError("no keyjard to start (set KEYJAR_KEYJARD or KEYJAR_SOCKET)")
    root = tempfile.mkdtemp(prefix="keyjar-live-")
    os.chmod(root, 0o700)
    run = os.path.join(root, "run")
    os.mkdir(run, 0o700)
    socket_path = os.path.join(run, "keyjar", "keyjar.sock")
    database = os.path.join(root, "data", "store.sqlite3")
    environment = dict(os.environ, HOME=root, XDG_RUNTIME_DIR=run)
    environment.pop("KEYJAR_SOCKET", None)
    log = open(os.path.join(root, "keyjard.log"), "ab")
    process = subprocess.Popen(
        [binary, "--socket", socket_path, "--database", database, "--secrets", "file"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=environment,
        start_new_session=True,
    )
    log.close()

    def stop() -> None:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(root, True)

    atexit.register(stop)
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while not answers(socket_path):  # a condition wait: keyjard listening
        if process.poll() is not None:
            raise RuntimeError(f"keyjard exited with status {process.returncode}; see its log in {root}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"keyjard did not serve {socket_path} within {ANSWER_TIMEOUT:g} s")
        time.sleep(0.01)
    return LiveKeyjard(socket_path, database, private=True)


def _find() -> LiveKeyjard:
    given = os.environ.get("KEYJAR_SOCKET", "")
    if given:
        live = LiveKeyjard(given, None, private=False)
        live.client().status()  # must answer
        return live
    return _start_private()


def require() -> LiveKeyjard:
    """The live keyjard; fails (KEYJAR_TEST_REQUIRE_KEYJARD=1) or skips the test when none."""
    global _live, _problem
    with _lock:
        if _live is None and _problem is None:
            try:
                _live = _find()
            except (RuntimeError, Unreachable, OSError) as error:
                _problem = str(error)
    if _live is not None:
        return _live
    if os.environ.get("KEYJAR_TEST_REQUIRE_KEYJARD") == "1":
        raise AssertionError(f"no keyjard answers, and KEYJAR_TEST_REQUIRE_KEYJARD=1: {_problem}")
    raise unittest.SkipTest(f"no keyjard answers: {_problem}")
