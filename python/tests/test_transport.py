"""Checks before anything is sent, the deadline on every reply, and unreachable keyjards."""

from __future__ import annotations

import os
import socket
import unittest
from unittest import mock

from keyjar import Client
from keyjar.errors import NotServing, SocketRefused, Unreachable
from keyjar.socketpath import default_database_path, default_socket_path, directory_problem
from keyjar.transport import Connection

from .support import ANSWER_TIMEOUT, FakeKeyjard, SilentListener, private_directory, reply

NOBODY = 65534


def ok_handler(number, request_id, name, fields):
    return reply(request_id, {"status": {"status": {"pid": 1}}})


class DirectoryCheckTests(unittest.TestCase):
    def test_a_private_directory_passes(self) -> None:
        directory = private_directory(self)
        self.assertIsNone(directory_problem(directory))
        server = FakeKeyjard(directory, ok_handler)
        self.addCleanup(server.close)
        Connection.open(server.path, 5).close()

    def test_a_symbolic_link_is_refused_not_followed(self) -> None:
        root = private_directory(self)
        real = os.path.join(root, "real")
        os.mkdir(real, 0o700)
        server = FakeKeyjard(real, ok_handler)
        self.addCleanup(server.close)
        link = os.path.join(root, "link")
        os.symlink(real, link)
        self.assertIn("symbolic link", directory_problem(link))
        with self.assertRaises(SocketRefused):
            Connection.open(os.path.join(link, "keyjar.sock"), 5)
        self.assertEqual(server.connections, 0)  # nothing was even connected

    def test_a_directory_open_to_others_is_refused(self) -> None:
        directory = private_directory(self)
        server = FakeKeyjard(directory, ok_handler)
        self.addCleanup(server.close)
        for mode in (0o755, 0o710, 0o701, 0o770):
            os.chmod(directory, mode)
            with self.subTest(mode=oct(mode)):
                self.assertIn("open to other users", directory_problem(directory))
                with self.assertRaises(SocketRefused):
                    Client(server.path, timeout=ANSWER_TIMEOUT, autostart=False).status()
        os.chmod(directory, 0o700)
        self.assertEqual(server.connections, 0)

    def test_a_file_is_not_a_directory(self) -> None:
        directory = private_directory(self)
        path = os.path.join(directory, "file")
        open(path, "w").close()
        self.assertIn("not a directory", directory_problem(path))
        with self.assertRaises(SocketRefused):
            Connection.open(os.path.join(path, "keyjar.sock"), 5)

    def test_a_directory_of_another_user_is_refused(self) -> None:
        if os.geteuid() != 0:
            self.skipTest("only root can give a directory to another user (chown)")
        directory = private_directory(self)
        server = FakeKeyjard(directory, ok_handler)
        self.addCleanup(server.close)
        os.chown(directory, NOBODY, NOBODY)
        self.addCleanup(os.chown, directory, 0, 0)
        self.assertIn(f"belongs to uid {NOBODY}", directory_problem(directory))
        with self.assertRaises(SocketRefused):
            Client(server.path, timeout=ANSWER_TIMEOUT, autostart=False).status()
        self.assertEqual(server.connections, 0)

    def test_a_server_of_another_uid_is_refused_before_hello(self) -> None:
        directory = private_directory(self)
        server = FakeKeyjard(directory, ok_handler)
        self.addCleanup(server.close)
        real = os.geteuid()
        # The directory check is told it passes; the peer then runs as "another" uid.
        with mock.patch("keyjar.transport.private_directory_problem", return_value=None), mock.patch(
            "keyjar.transport.os.geteuid", return_value=real + 1
        ):
            with self.assertRaises(SocketRefused) as caught:
                Client(server.path, timeout=ANSWER_TIMEOUT, autostart=False).status()
        self.assertIn(f"runs as uid {real}", str(caught.exception))
        self.assertEqual(server.names(), [])  # not even hello was sent

    def test_missing_directory_is_nobody_serving(self) -> None:
        directory = private_directory(self)
        with self.assertRaises(NotServing):
            Connection.open(os.path.join(directory, "absent", "keyjar.sock"), 5)
        with self.assertRaises(NotServing):
            Connection.open(os.path.join(directory, "keyjar.sock"), 5)


class UnreachableTests(unittest.TestCase):
    def test_a_keyjard_that_never_answers_times_out(self) -> None:
        directory = private_directory(self)
        listener = SilentListener(directory)
        self.addCleanup(listener.close)
        client = Client(listener.path, timeout=0.5, autostart=False)
        with self.assertRaises(Unreachable) as caught:
            client.status()
        self.assertEqual(caught.exception.exit_status, 3)
        with self.assertRaises(Unreachable):  # and again, on a new connection
            client.cookie_header("https://example.com/")

    def test_autostart_disabled_and_no_keyjard(self) -> None:
        directory = private_directory(self)
        environment = {
            "KEYJAR_SOCKET": os.path.join(directory, "run", "keyjar.sock"),
            "KEYJAR_DATABASE": os.path.join(directory, "data", "store.sqlite3"),
            "KEYJAR_NO_AUTOSTART": "1",
            "KEYJAR_KEYJARD": "/bin/false",
        }
        with mock.patch.dict(os.environ, environment):
            client = Client()
            self.assertFalse(client.autostart)
            with self.assertRaises(Unreachable) as caught:
                client.status()
        self.assertIn("autostart is off", str(caught.exception))
        self.assertFalse(os.path.exists(os.path.join(directory, "run")))  # nothing was started

    def test_a_socket_nobody_listens_on(self) -> None:
        directory = private_directory(self)
        path = os.path.join(directory, "keyjar.sock")
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(path)
        stale.close()  # the file stays, nobody listens: ECONNREFUSED
        with self.assertRaises(NotServing):
            Client(path, timeout=1, autostart=False, database_path=os.path.join(directory, "db")).status()


class DiscoveryTests(unittest.TestCase):
    def test_socket_path_order(self) -> None:
        uid = os.geteuid()
        self.assertEqual(default_socket_path({"KEYJAR_SOCKET": "/s/k.sock", "XDG_RUNTIME_DIR": "/r"}), "/s/k.sock")
        self.assertEqual(
            default_socket_path({"KEYJAR_SOCKET": "rel.sock"}), os.path.join(os.getcwd(), "rel.sock")
        )
        self.assertEqual(default_socket_path({"XDG_RUNTIME_DIR": "/r"}), "/r/keyjar/keyjar.sock")
        login = private_directory(self)
        self.assertEqual(
            default_socket_path({"XDG_RUNTIME_DIR": "relative"}, login_runtime_directory=login),
            login + "/keyjar/keyjar.sock",
        )
        os.chmod(login, 0o755)
        self.assertEqual(default_socket_path({}, login_runtime_directory=login), f"/tmp/keyjar-{uid}/keyjar.sock")

    def test_database_path_order(self) -> None:
        self.assertEqual(default_database_path({"KEYJAR_DATABASE": "/d/s.db", "XDG_DATA_HOME": "/x"}), "/d/s.db")
        self.assertEqual(default_database_path({"XDG_DATA_HOME": "/x", "HOME": "/h"}), "/x/keyjar/store.sqlite3")
        self.assertEqual(default_database_path({"HOME": "/h"}), "/h/.local/share/keyjar/store.sqlite3")
        self.assertEqual(
            default_database_path({"XDG_DATA_HOME": "rel", "HOME": "/h"}), "/h/.local/share/keyjar/store.sqlite3"
        )


if __name__ == "__main__":
    unittest.main()
