"""Keyring services become the protection spaces Keyjar's own clients would use."""

from __future__ import annotations

import unittest

from keyjar.spaces import choose, is_wildcard, named_space, space_for, space_for_storing


def server(protocol: str, host: str, port: int) -> dict:
    return {"protocol": protocol, "host": host, "port": port, "proxyType": "none", "authenticationMethod": "default"}


def record(user: str, space: dict, is_default: bool = False) -> dict:
    return {"space": space, "user": user, "persistence": "permanent", "isDefault": is_default, "created": 0}


class SpaceForTests(unittest.TestCase):
    def test_table(self) -> None:
        table = {
            "https://Example.COM:8443/path?q": server("https", "example.com", 8443),
            "https://example.com": server("https", "example.com", 443),
            "https://example.com.": server("https", "example.com", 443),
            "https://alice@example.com/": server("https", "example.com", 443),
            "http://example.com": server("http", "example.com", 80),
            "HTTP://example.com:0": server("http", "example.com", 80),
            "ftp://files.example": server("ftp", "files.example", 21),
            "ftps://files.example": server("ftps", "files.example", 990),
            "ws://chat.example": server("ws", "chat.example", 80),
            "wss://chat.example": server("wss", "chat.example", 443),
            # Keyjar's ProtectionSpace gives every other scheme 80 (what `keyjar credential add
            # --url ssh://host.example` stores).
            "ssh://host.example": server("ssh", "host.example", 80),
            "http://[::1]:8080/": server("http", "::1", 8080),
            "https://[FE80::1]/": server("https", "fe80::1", 443),
            "https://127.0.0.1:9": server("https", "127.0.0.1", 9),
            "https://bücher.example/": server("https", "xn--bcher-kva.example", 443),
            "pypi.org": server("https", "pypi.org", 443),
            "PyPI.org": server("https", "pypi.org", 443),
            "example.com:8443": server("https", "example.com", 8443),
            "localhost": server("https", "localhost", 443),
            "localhost:5000": server("https", "localhost", 5000),
            "intranet:8080": server("https", "intranet", 8080),
            "10.0.0.1": server("https", "10.0.0.1", 443),
            "[::1]:8443": server("https", "::1", 8443),
            "::1": server("https", "::1", 443),
            "bücher.example": server("https", "xn--bcher-kva.example", 443),
        }
        for service, expected in table.items():
            with self.subTest(service=service):
                self.assertEqual(space_for(service), expected)

    def test_named_services(self) -> None:
        for service, host in {
            "gh:github.com": "gh:github.com",
            "my app": "my app",
            "My App": "my app",
            "example": "example",
            "example.com:99999": "example.com:99999",
            "https://": "https://",
            "https://exa mple.com/": "https://exa mple.com/",
            "system.": "system",
            "": "",
        }.items():
            with self.subTest(service=service):
                self.assertEqual(
                    space_for(service),
                    {"protocol": "keyring", "host": host, "port": 80, "proxyType": "none", "authenticationMethod": "default"},
                )
        self.assertEqual(named_space("A"), space_for("a"))


class ChoiceTests(unittest.TestCase):
    lookup = server("https", "example.com", 443)
    alice = record("alice", server("https", "example.com", 443), is_default=True)
    bob_realm = record("bob", dict(server("https", "example.com", 443), realm="Admin", authenticationMethod="httpBasic"))
    bob_netrc = record("bob", {"protocol": "*", "host": "example.com", "port": 0, "proxyType": "none", "authenticationMethod": "default"})
    carol_everywhere = record("carol", {"protocol": "*+clear", "host": "*", "port": 0, "proxyType": "none", "authenticationMethod": "default"})

    def test_choose(self) -> None:
        candidates = [self.alice, self.bob_realm]
        self.assertIs(choose(candidates, self.alice, None), self.alice)
        self.assertIsNone(choose(candidates, None, None))  # several users, no default: nobody
        self.assertIs(choose(candidates, None, "bob"), self.bob_realm)
        self.assertIs(choose(candidates, self.alice, "bob"), self.bob_realm)
        self.assertIsNone(choose(candidates, self.alice, "dave"))

    def test_choose_takes_the_first_of_a_user(self) -> None:
        later = record("bob", server("https", "example.com", 443))
        self.assertIs(choose([self.bob_realm, later], None, "bob"), self.bob_realm)

    def test_space_for_storing(self) -> None:
        # The answering credential's own space is updated, not doubled.
        self.assertEqual(space_for_storing([self.alice, self.bob_realm], self.alice, "bob", self.lookup), self.bob_realm["space"])
        # Nobody of that user answers: the lookup space.
        self.assertEqual(space_for_storing([self.alice], self.alice, "dave", self.lookup), self.lookup)
        # A `.netrc` wildcard answers: never stored there.
        self.assertEqual(space_for_storing([self.bob_netrc], self.bob_netrc, "bob", self.lookup), self.lookup)
        self.assertEqual(space_for_storing([self.carol_everywhere], None, "carol", self.lookup), self.lookup)

    def test_is_wildcard(self) -> None:
        self.assertTrue(is_wildcard(self.bob_netrc["space"]))
        self.assertTrue(is_wildcard(self.carol_everywhere["space"]))
        self.assertFalse(is_wildcard(self.alice["space"]))


if __name__ == "__main__":
    unittest.main()
