"""keyjard's cookies as Python's jar would hold them, and back."""

from __future__ import annotations

import unittest
import urllib.request
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy

from keyjar.cookiejar import request_context
from keyjar.cookies import from_python_cookie, python_domain_of, to_python_cookie

SESSION = {
    "name": "session", "value": "a=b; c", "domain": "www.example.co.uk", "hostOnly": True, "path": "/a/b",
    "expires": 1900000000.125, "secure": True, "httpOnly": True, "sameSite": "Strict",
    "creation": 1700000000.5, "lastAccess": 1700000001.0625,
}
DOMAIN = {
    "name": "", "value": "", "domain": "example.com", "hostOnly": False, "path": "/", "secure": False,
    "httpOnly": False, "sameSite": "Unspecified", "creation": 1600000000, "lastAccess": 1600000000,
}
PARTITIONED = {
    "name": "__Host-chat", "value": "1", "domain": "chat.example", "hostOnly": True, "path": "/", "secure": True,
    "httpOnly": False, "sameSite": "None", "creation": 1700000000, "lastAccess": 1700000000,
    "partitionKey": "https://news.example",
}


def returned(cookie: Cookie, url: str) -> bool:
    """Whether Python's own jar, default policy, sends ``cookie`` with a request to ``url``
    (what requests and httpx do with the copy they make by iterating a jar)."""
    jar = CookieJar(DefaultCookiePolicy())
    jar.set_cookie(cookie)
    request = urllib.request.Request(url)
    jar.add_cookie_header(request)
    header = request.unredirected_hdrs.get("Cookie", "")
    return f"{cookie.name}={cookie.value}" in header


class ToPythonTests(unittest.TestCase):
    def test_host_only_cookie(self) -> None:
        cookie = to_python_cookie(SESSION)
        self.assertEqual(
            (cookie.name, cookie.value, cookie.domain, cookie.domain_specified, cookie.domain_initial_dot),
            ("session", "a=b; c", "www.example.co.uk", False, False),
        )
        self.assertEqual((cookie.path, cookie.secure, cookie.expires, cookie.discard), ("/a/b", True, 1900000000, False))
        self.assertTrue(cookie.has_nonstandard_attr("HttpOnly"))
        self.assertEqual(cookie.get_nonstandard_attr("SameSite"), "Strict")

    def test_domain_cookie(self) -> None:
        cookie = to_python_cookie(DOMAIN)
        self.assertEqual((cookie.domain, cookie.domain_specified, cookie.domain_initial_dot), (".example.com", True, True))
        self.assertIsNone(cookie.expires)
        self.assertTrue(cookie.discard)
        self.assertFalse(cookie.has_nonstandard_attr("HttpOnly"))
        self.assertFalse(cookie.has_nonstandard_attr("SameSite"))

    def test_python_policy_returns_them_for_the_right_requests(self) -> None:
        session = to_python_cookie(SESSION)
        self.assertTrue(returned(session, "https://www.example.co.uk/a/b/c"))
        self.assertFalse(returned(session, "http://www.example.co.uk/a/b/c"))  # Secure
        self.assertFalse(returned(session, "https://www.example.co.uk/other"))  # path
        self.assertFalse(returned(session, "https://other.co.uk/a/b"))
        domain = to_python_cookie(dict(DOMAIN, name="n"))
        self.assertTrue(returned(domain, "http://example.com/"))
        self.assertTrue(returned(domain, "http://a.b.example.com/x"))
        self.assertFalse(returned(domain, "http://example.org/"))
        self.assertFalse(returned(domain, "http://notexample.com/"))

    def test_hosts_without_a_dot_are_named_as_python_names_them(self) -> None:
        local = to_python_cookie(dict(SESSION, domain="localhost", path="/", secure=False))
        self.assertEqual(local.domain, "localhost.local")
        self.assertTrue(returned(local, "http://localhost:8080/"))
        ipv6 = to_python_cookie(dict(SESSION, domain="::1", path="/", secure=False))
        self.assertEqual(ipv6.domain, "[::1].local")
        self.assertTrue(returned(ipv6, "http://[::1]:8080/"))
        ipv4 = to_python_cookie(dict(SESSION, domain="127.0.0.1", path="/", secure=False))
        self.assertEqual(ipv4.domain, "127.0.0.1")
        self.assertTrue(returned(ipv4, "http://127.0.0.1:9/"))

    def test_python_domain_of(self) -> None:
        self.assertEqual(python_domain_of(SESSION), "www.example.co.uk")
        self.assertEqual(python_domain_of(DOMAIN), ".example.com")
        self.assertEqual(python_domain_of(dict(SESSION, domain="localhost")), "localhost.local")


class RoundTripTests(unittest.TestCase):
    identity = ("name", "value", "domain", "hostOnly", "path", "secure", "httpOnly", "sameSite")

    def test_round_trips_keep_every_field_but_times(self) -> None:
        for wire in (SESSION, DOMAIN, PARTITIONED, dict(SESSION, domain="localhost"), dict(SESSION, domain="::1")):
            with self.subTest(domain=wire["domain"]):
                back = from_python_cookie(to_python_cookie(wire), now=5.0)
                for key in self.identity:
                    self.assertEqual(back[key], wire[key], key)
                self.assertEqual(back.get("expires"), None if "expires" not in wire else float(int(wire["expires"])))
                self.assertEqual(back.get("partitionKey"), wire.get("partitionKey"))
                self.assertEqual((back["creation"], back["lastAccess"]), (5.0, 5.0))

    def test_a_cookie_made_by_hand(self) -> None:
        cookie = Cookie(
            0, "token", "xyz", None, False, ".Example.com", True, True, "/", True, False, 2000000000, False,
            None, None, {"httponly": None, "samesite": "lax"},
        )
        wire = from_python_cookie(cookie, now=1.0)
        self.assertEqual(
            wire,
            {
                "name": "token", "value": "xyz", "domain": "example.com", "hostOnly": False, "path": "/",
                "secure": False, "httpOnly": True, "sameSite": "Lax", "creation": 1.0, "lastAccess": 1.0,
                "expires": 2000000000.0,
            },
        )

    def test_a_session_cookie_without_a_domain_flag_is_host_only(self) -> None:
        cookie = Cookie(0, "a", None, None, False, "host.example", False, False, "/p", True, True, None, True, None, None, {})
        wire = from_python_cookie(cookie, now=1.0)
        self.assertEqual((wire["domain"], wire["hostOnly"], wire["value"], wire["secure"]), ("host.example", True, "", True))
        self.assertNotIn("expires", wire)


class RequestContextTests(unittest.TestCase):
    def test_a_plain_request_is_top_level_and_same_site(self) -> None:
        request = urllib.request.Request("http://example.com/a", method="POST")
        self.assertEqual(
            request_context(request),
            {"url": "http://example.com/a", "main_document_url": None, "top_level": True, "method": "POST"},
        )

    def test_an_unverifiable_third_party_request(self) -> None:
        request = urllib.request.Request("https://ads.example/x", origin_req_host="news.example", unverifiable=True)
        self.assertEqual(
            request_context(request),
            {"url": "https://ads.example/x", "main_document_url": "https://news.example/", "top_level": False, "method": "GET"},
        )


if __name__ == "__main__":
    unittest.main()
