"""Starting keyjard when none serves, once, and finding one that serves the database elsewhere."""

from __future__ import annotations

import os
import signal
import threading
import time
import unittest
from typing import List
from unittest import mock

from keyjar import Client
from keyjar.autostart import lock_holder, read_pointer
from keyjar.errors import Unreachable

from . import live
from .support import ANSWER_TIMEOUT, private_directory


class AutostartTests(unittest.TestCase):
    def setUp(self) -> None:
        binary = live.keyjard_binary()
        if binary is None:
            live.require()  # fails or skips, as for every live test, saying why
        self.root = private_directory(self)
        self.socket_path = os.path.join(self.root, "run", "keyjar", "keyjar.sock")
        self.database = os.path.join(self.root, "data", "store.sqlite3")
        environment = {
            "KEYJAR_KEYJARD": binary,
            "KEYJAR_SECRETS": "file",
            "HOME": self.root,
            "KEYJAR_START_TIMEOUT": "20",
        }
        patcher = mock.patch.dict(os.environ, environment)
        patcher.start()
        self.addCleanup(patcher.stop)
        os.environ.pop("KEYJAR_NO_AUTOSTART", None)

    def client(self, socket_path: str = "", autostart: bool = True) -> Client:
        client = Client(
            socket_path or self.socket_path, timeout=ANSWER_TIMEOUT, database_path=self.database, autostart=autostart
        )
        self.addCleanup(client.close)
        return client

    def stop_when_done(self, pid: int) -> None:
        def stop() -> None:
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            # Until it has let go of the database (its pointer's lock): a condition, not a delay.
            while lock_holder(self.database + ".keyjard") == pid and time.monotonic() < deadline:
                time.sleep(0.01)

        self.addCleanup(stop)

    def test_a_keyjard_is_started_once_for_concurrent_clients(self) -> None:
        statuses: List[dict] = []
        failures: List[BaseException] = []

        def ask() -> None:
            try:
                statuses.append(self.client().status())
            except BaseException as error:  # reported below
                failures.append(error)

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        if statuses:
            self.stop_when_done(statuses[0]["pid"])
        self.assertEqual(failures, [])
        self.assertEqual(len({status["pid"] for status in statuses}), 1)
        self.assertEqual(statuses[0]["socketPath"], self.socket_path)
        self.assertEqual(statuses[0]["databasePath"], self.database)
        directory = os.path.dirname(self.socket_path)
        self.assertEqual(os.stat(directory).st_mode & 0o777, 0o700)
        self.assertTrue(os.path.exists(os.path.join(directory, "autostart.lock")))
        self.assertEqual(read_pointer(self.database + ".keyjard"), (self.socket_path, statuses[0]["pid"]))
        self.assertEqual(lock_holder(os.path.join(directory, "keyjard.lock")), statuses[0]["pid"])

    def test_the_keyjard_of_the_database_is_found_on_another_socket(self) -> None:
        status = self.client().status()
        self.stop_when_done(status["pid"])
        elsewhere = os.path.join(self.root, "elsewhere", "keyjar.sock")
        # Another socket (a shell without XDG_RUNTIME_DIR, say), autostart off: still reached.
        found = self.client(elsewhere, autostart=False).status()
        self.assertEqual((found["pid"], found["socketPath"]), (status["pid"], self.socket_path))
        self.assertFalse(os.path.exists(elsewhere))

    def test_a_keyjard_that_cannot_start_is_reported(self) -> None:
        program = os.path.join(self.root, "broken-keyjard")
        with open(program, "w") as file:
            file.write("#!/bin/sh\necho 'keyjard: cannot open the database' >&2\nexit 1\n")
        os.chmod(program, 0o700)
        with mock.patch.dict(os.environ, {"KEYJAR_KEYJARD": program, "KEYJAR_START_TIMEOUT": "5"}):
            with self.assertRaises(Unreachable) as caught:
                self.client().status()
        self.assertIn("cannot open the database", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
