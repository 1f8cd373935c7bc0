"""The keyring backend: round trips on a real keyjard, viability, and error mapping."""

from __future__ import annotations

import os
import unittest
import uuid
from unittest import mock

import keyring
from keyring import errors as keyring_errors
from keyring.credentials import SimpleCredential

from keyjar import Client
from keyjar.errors import Locked, SecretsUnavailable, Unreachable
from keyjar.keyring_backend import KeyjarKeyring, KeyjarSecretsUnavailable, KeyjarUnreachable
from keyjar.spaces import server_space, space_for

from . import live
from .support import ANSWER_TIMEOUT, FakeKeyjard, SilentListener, message, private_directory


def host() -> str:
    return f"kr-{uuid.uuid4().hex[:10]}.example"


class LiveKeyringTests(unittest.TestCase):
    def setUp(self) -> None:
        self.keyjard = live.require()
        self.client = self.keyjard.client()
        self.addCleanup(self.client.close)
        self.backend = KeyjarKeyring(self.client)
        self.other = self.keyjard.client()
        self.addCleanup(self.other.close)

    def forget(self, space: dict, user: str) -> None:
        self.addCleanup(lambda: [self.client.remove_credential(space, user) for record in self.client.credentials(space) if record["user"] == user])

    def test_url_round_trip_and_default_user(self) -> None:
        service = f"https://{host()}"
        space = space_for(service)
        self.forget(space, "alice")
        self.forget(space, "bob")
        self.assertIsNone(self.backend.get_password(service, "alice"))
        self.assertIsNone(self.backend.get_credential(service, None))
        self.backend.set_password(service, "alice", "pw-alice")
        self.backend.set_password(service, "bob", "pw-bob")
        self.assertEqual(self.backend.get_password(service, "alice"), "pw-alice")
        self.assertEqual(self.backend.get_password(service + "/some/path", "bob"), "pw-bob")
        # The space's first credential became its default: it answers when no user is named.
        default = self.backend.get_credential(service, None)
        self.assertIsInstance(default, SimpleCredential)
        self.assertEqual((default.username, default.password), ("alice", "pw-alice"))
        named = self.backend.get_credential(service, "bob")
        self.assertEqual((named.username, named.password), ("bob", "pw-bob"))
        self.assertEqual(sorted(r["user"] for r in self.other.credentials(space)), ["alice", "bob"])
        self.backend.set_password(service, "alice", "pw-alice-2")  # updated, not doubled
        self.assertEqual(self.other.password(space, "alice"), "pw-alice-2")
        self.assertEqual(len(self.other.credentials(space)), 2)
        self.backend.delete_password(service, "alice")
        self.assertIsNone(self.backend.get_password(service, "alice"))
        only = self.backend.get_credential(service, None)  # one user left: that one answers
        self.assertEqual((only.username, only.password), ("bob", "pw-bob"))
        with self.assertRaises(keyring_errors.PasswordDeleteError):
            self.backend.delete_password(service, "alice")

    def test_bare_host_is_https_and_named_services_work(self) -> None:
        name = host()
        self.forget(server_space("https", name), "carol")
        self.backend.set_password(name, "carol", "pw-carol")
        self.assertEqual(self.backend.get_password(f"https://{name}:443/", "carol"), "pw-carol")
        self.assertEqual(self.other.password(server_space("https", name, 443), "carol"), "pw-carol")
        self.assertIsNone(self.backend.get_password(f"http://{name}", "carol"))  # another origin

        service = f"My Tool {uuid.uuid4().hex[:8]}"
        self.forget(space_for(service), "dave")
        self.backend.set_password(service, "dave", "pw-dave")
        self.assertEqual(self.backend.get_password(service, "dave"), "pw-dave")
        self.assertEqual(self.backend.get_password(service.lower(), "dave"), "pw-dave")
        (record,) = self.other.credentials(space_for(service))
        self.assertEqual(record["space"]["host"], service.lower())
        # keyjard's audit sees the pair whole (a space in another form would look half).
        mismatches = self.other.status().get("credentialMismatches") or []
        self.assertFalse([m for m in mismatches if m["space"]["host"] == service.lower()])
        self.backend.delete_password(service, "dave")
        self.assertEqual(self.other.credentials(space_for(service)), [])

    def test_a_realm_credential_answers_and_is_updated_in_place(self) -> None:
        name = host()
        realm_space = dict(server_space("https", name), realm="Admin", authenticationMethod="httpBasic")
        self.forget(realm_space, "erin")
        self.other.set_credential(realm_space, "erin", "pw-realm")
        service = f"https://{name}"
        self.assertEqual(self.backend.get_password(service, "erin"), "pw-realm")
        self.backend.set_password(service, "erin", "pw-new")
        self.assertEqual(self.other.password(realm_space, "erin"), "pw-new")
        self.assertEqual(self.other.credentials(space_for(service)), [])  # no second credential

    def test_a_netrc_login_answers_but_is_never_overwritten(self) -> None:
        name = host()
        wildcard = {"protocol": "*", "host": name, "port": 0, "proxyType": "none", "authenticationMethod": "default"}
        service = f"https://{name}"
        self.forget(wildcard, "nina")
        self.forget(space_for(service), "nina")
        self.other.set_credential(wildcard, "nina", "pw-netrc")
        self.assertEqual(self.backend.get_password(service, "nina"), "pw-netrc")
        self.backend.set_password(service, "nina", "pw-server")
        self.assertEqual(self.other.password(wildcard, "nina"), "pw-netrc")
        self.assertEqual(self.other.password(space_for(service), "nina"), "pw-server")
        self.assertEqual(self.backend.get_password(service, "nina"), "pw-server")
        self.backend.delete_password(service, "nina")  # the server's own goes
        with self.assertRaises(keyring_errors.PasswordDeleteError):
            self.backend.delete_password(service, "nina")  # the login for the whole host stays
        self.assertEqual(self.other.password(wildcard, "nina"), "pw-netrc")

    def test_through_keyring_itself(self) -> None:
        service = f"https://{host()}"
        self.forget(space_for(service), "frank")
        previous = keyring.get_keyring()
        keyring.set_keyring(self.backend)
        self.addCleanup(keyring.set_keyring, previous)
        keyring.set_password(service, "frank", "pw-frank")
        self.assertEqual(keyring.get_password(service, "frank"), "pw-frank")
        self.assertEqual(keyring.get_credential(service, None).username, "frank")
        keyring.delete_password(service, "frank")
        self.assertIsNone(keyring.get_password(service, "frank"))

    def test_priority_where_keyjard_answers(self) -> None:
        with mock.patch.dict(os.environ, {"KEYJAR_SOCKET": self.keyjard.socket_path, "KEYJAR_NO_AUTOSTART": "1"}):
            self.assertEqual(KeyjarKeyring.priority, 9)


class ViabilityTests(unittest.TestCase):
    def test_not_viable_without_keyjard_and_without_autostart(self) -> None:
        directory = private_directory(self)
        environment = {
            "KEYJAR_SOCKET": os.path.join(directory, "keyjar.sock"),
            "KEYJAR_DATABASE": os.path.join(directory, "store.sqlite3"),
            "KEYJAR_NO_AUTOSTART": "1",
        }
        with mock.patch.dict(os.environ, environment):
            with self.assertRaises(RuntimeError) as caught:
                KeyjarKeyring.priority
        self.assertIn("KEYJAR_NO_AUTOSTART", str(caught.exception))

    def test_not_viable_when_no_keyjard_can_be_found(self) -> None:
        directory = private_directory(self)
        environment = {
            "KEYJAR_SOCKET": os.path.join(directory, "keyjar.sock"),
            "KEYJAR_DATABASE": os.path.join(directory, "store.sqlite3"),
            "KEYJAR_NO_AUTOSTART": "0",
            "KEYJAR_KEYJARD": os.path.join(directory, "missing"),
            "PATH": directory,
        }
        with mock.patch.dict(os.environ, environment):
            with self.assertRaises(RuntimeError) as caught:
                KeyjarKeyring.priority
        self.assertIn("none was found to start", str(caught.exception))

    def test_viable_when_keyjard_can_be_started(self) -> None:
        directory = private_directory(self)
        program = os.path.join(directory, "keyjard")
        with open(program, "w") as file:
            file.write("#!/bin/sh\nexit 1\n")
        os.chmod(program, 0o700)
        environment = {
            "KEYJAR_SOCKET": os.path.join(directory, "keyjar.sock"),
            "KEYJAR_DATABASE": os.path.join(directory, "store.sqlite3"),
            "KEYJAR_KEYJARD": program,
        }
        with mock.patch.dict(os.environ, environment):
            os.environ.pop("KEYJAR_NO_AUTOSTART", None)
            self.assertEqual(KeyjarKeyring.priority, 9)
        self.assertFalse(os.path.exists(environment["KEYJAR_SOCKET"]))  # judged, not started


class ErrorMappingTests(unittest.TestCase):
    def backend_failing_with(self, code: int) -> KeyjarKeyring:
        def handle(number, request_id, name, fields):
            return message({"failure": {"id": request_id, "error": {"code": code, "message": "no"}}})

        server = FakeKeyjard(private_directory(self), handle)
        self.addCleanup(server.close)
        client = Client(server.path, timeout=ANSWER_TIMEOUT, autostart=False)
        self.addCleanup(client.close)
        return KeyjarKeyring(client)

    def test_locked(self) -> None:
        backend = self.backend_failing_with(24)
        with self.assertRaises(keyring_errors.KeyringLocked) as caught:
            backend.get_password("https://a.example", "u")
        self.assertIsInstance(caught.exception.__cause__, Locked)
        self.assertIn("keyjar unlock", str(caught.exception))

    def test_secrets_unavailable(self) -> None:
        backend = self.backend_failing_with(21)
        with self.assertRaises(KeyjarSecretsUnavailable) as caught:
            backend.set_password("https://a.example", "u", "secret-value")
        self.assertIsInstance(caught.exception, keyring_errors.KeyringError)
        self.assertIsInstance(caught.exception.__cause__, SecretsUnavailable)
        self.assertNotIn("secret-value", str(caught.exception))

    def test_other_refusals_by_operation(self) -> None:
        backend = self.backend_failing_with(10)
        with self.assertRaises(keyring_errors.PasswordSetError):
            backend.set_password("https://a.example", "u", "p")
        with self.assertRaises(keyring_errors.PasswordDeleteError):
            backend.delete_password("https://a.example", "u")

    def test_unreachable_within_the_timeout(self) -> None:
        listener = SilentListener(private_directory(self))
        self.addCleanup(listener.close)
        client = Client(listener.path, timeout=0.5, autostart=False)
        self.addCleanup(client.close)
        with self.assertRaises(KeyjarUnreachable) as caught:
            KeyjarKeyring(client).get_credential("https://a.example", None)
        self.assertIsInstance(caught.exception.__cause__, Unreachable)


if __name__ == "__main__":
    unittest.main()
