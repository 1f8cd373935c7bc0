"""The shared jar through urllib, requests and httpx against a real keyjard and HTTP server."""

from __future__ import annotations

import asyncio
import urllib.request
import uuid
from http.cookiejar import Cookie
from typing import List, Optional

import httpx
import requests

from keyjar import KeyjarCookieJar
from keyjar.errors import CookieRejected
from keyjar.httpx_transport import async_keyjar_client, keyjar_client
from keyjar.requests_adapter import KeyjarAdapter, keyjar_session

from . import live
from .httpd import CookieServer

import unittest


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def pairs(header: Optional[str]) -> List[str]:
    return [] if not header else header.split("; ")


class _FakeResponse:
    """What extract_cookies reads of a response: its headers' Set-Cookie values."""

    def __init__(self, set_cookies: List[str]) -> None:
        self._set_cookies = set_cookies

    def info(self) -> "_FakeResponse":
        return self

    def get_all(self, name: str, default=None):
        return list(self._set_cookies) if name.lower() == "set-cookie" else default


class LiveCookieTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.keyjard = live.require()
        self.client = self.keyjard.client()
        self.other = self.keyjard.client()  # another program on the same store
        self.addCleanup(self.client.close)
        self.addCleanup(self.other.close)
        self.server = CookieServer()
        self.addCleanup(self.server.stop)
        self.addCleanup(self._forget_cookies)

    def _forget_cookies(self) -> None:
        self.client.clear_cookies(self.server.host)

    def stored_names(self) -> List[str]:
        return [cookie["name"] for cookie in self.other.list_cookies(self.server.host)]


class UrllibTests(LiveCookieTestCase):
    def test_set_cookie_is_stored_sent_and_seen_by_another_client(self) -> None:
        name = unique("sid")
        jar = KeyjarCookieJar(self.client)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(self.server.url("/set", f"{name}=abc; Path=/; HttpOnly")).read()
        opener.open(self.server.url("/next")).read()
        self.assertEqual(pairs(self.server.cookie_sent_to("/next")), [f"{name}=abc"])
        self.assertEqual(self.other.cookie_header(self.server.url("/")), f"{name}=abc")
        self.assertIsNone(self.other.cookie_header(self.server.url("/"), non_http=True))  # HttpOnly
        (stored,) = self.other.list_cookies(self.server.host)
        self.assertEqual((stored["domain"], stored["hostOnly"], stored["httpOnly"]), (self.server.host, True, True))

    def test_a_cookie_another_program_stores_is_sent_at_once(self) -> None:
        name = unique("fresh")
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(KeyjarCookieJar(self.client)))
        opener.open(self.server.url("/first")).read()
        self.assertIsNone(self.server.cookie_sent_to("/first"))
        self.assertEqual(self.other.set_cookies(self.server.url("/"), [f"{name}=1"]), [None])
        opener.open(self.server.url("/second")).read()
        self.assertEqual(pairs(self.server.cookie_sent_to("/second")), [f"{name}=1"])

    def test_a_redirect_hop_gets_its_cookie(self) -> None:
        name = unique("hop")
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(KeyjarCookieJar(self.client)))
        opener.open(self.server.url("/redirect", f"{name}=2", to="/landed")).read()
        self.assertEqual(pairs(self.server.cookie_sent_to("/landed")), [f"{name}=2"])

    def test_policy_rejections_are_not_stored(self) -> None:
        jar = KeyjarCookieJar(self.client)
        suffix, good = unique("pub"), unique("good")
        host = f"{unique('shop')}.example.com"
        request = urllib.request.Request(f"https://{host}/")
        self.addCleanup(self.client.clear_cookies, host)
        jar.extract_cookies(_FakeResponse([f"{suffix}=1; Domain=com", f"{good}=1"]), request)
        self.assertEqual([c["name"] for c in self.other.list_cookies(host)], [good])
        outcomes = self.client.set_cookies(f"https://{host}/", [f"{suffix}=1; Domain=com"])
        self.assertEqual(len(outcomes), 1)
        self.assertIn("public suffix", outcomes[0])
        self.assertNotIn(suffix, self.other.cookie_header(f"https://{host}/") or "")

    def test_the_jar_api_on_the_shared_store(self) -> None:
        jar = KeyjarCookieJar(self.client)
        host = self.server.host
        session, lasting = unique("sess"), unique("keep")
        self.client.set_cookies(self.server.url("/"), [f"{session}=1", f"{lasting}=2; Max-Age=3600; Path=/p"])
        cookies = {cookie.name: cookie for cookie in jar if cookie.domain == host}
        self.assertEqual(set(cookies), {session, lasting})
        self.assertTrue(cookies[session].discard)
        self.assertEqual(cookies[lasting].path, "/p")
        self.assertGreaterEqual(len(jar), 2)
        jar.clear_session_cookies()
        self.assertEqual(self.stored_names(), [lasting])
        with self.assertRaises(KeyError):
            jar.clear(host, "/nowhere")
        jar.clear(host, "/p", lasting)
        self.assertEqual(self.stored_names(), [])
        # A domain cookie of a named host (keyjard keeps a cookie of an IP address host-only).
        named = f"{unique('jar')}.example"
        self.addCleanup(self.client.clear_cookies, named)
        cookie = Cookie(0, unique("hand"), "v", None, False, "." + named, True, True, "/", True, False, None, True, None, None, {"HttpOnly": None})
        jar.set_cookie(cookie)
        (stored,) = self.other.list_cookies(named)
        self.assertEqual((stored["name"], stored["domain"], stored["hostOnly"], stored["httpOnly"]), (cookie.name, named, False, True))
        self.assertIn(f"{cookie.name}=v", self.other.cookie_header(f"http://www.{named}/") or "")
        with self.assertRaises(KeyError):
            jar.clear(named)  # Python's clear: exactly that domain, and this one is ".named"
        jar.clear("." + named)
        self.assertEqual(self.other.list_cookies(named), [])
        with self.assertRaises(CookieRejected):
            jar.set_cookie(Cookie(0, "x", "v", None, False, "", False, False, "/", True, False, None, True, None, None, {}))
        secret = unique("session-secret-")
        self.client.set_cookies(self.server.url("/"), [f"sid={secret}"])
        self.assertIn(secret, [cookie.value for cookie in jar])
        self.assertNotIn(secret, repr(jar) + str(jar))  # never the cookies' values


class RequestsTests(LiveCookieTestCase):
    def test_session_with_the_jar(self) -> None:
        name, hop = unique("rq"), unique("rqhop")
        session = requests.Session()
        session.cookies = KeyjarCookieJar(self.client)
        self.addCleanup(session.close)
        session.get(self.server.url("/set", f"{name}=1; SameSite=Lax")).raise_for_status()
        session.get(self.server.url("/echo")).raise_for_status()
        self.assertEqual(pairs(self.server.cookie_sent_to("/echo")), [f"{name}=1"])
        self.assertIn(name, self.stored_names())
        session.get(self.server.url("/redirect", f"{hop}=2", to="/after")).raise_for_status()
        self.assertEqual(sorted(pairs(self.server.cookie_sent_to("/after"))), sorted([f"{name}=1", f"{hop}=2"]))

    def test_session_with_the_adapter(self) -> None:
        name, hop, elsewhere = unique("ad"), unique("adhop"), unique("other")
        session = keyjar_session(self.client)
        self.addCleanup(session.close)
        self.assertIsInstance(session.get_adapter(self.server.url("/")), KeyjarAdapter)
        session.get(self.server.url("/set", f"{name}=1; SameSite=Strict")).raise_for_status()
        self.other.set_cookies(self.server.url("/"), [f"{elsewhere}=3"])
        session.get(self.server.url("/echo")).raise_for_status()
        self.assertEqual(sorted(pairs(self.server.cookie_sent_to("/echo"))), sorted([f"{name}=1", f"{elsewhere}=3"]))
        session.get(self.server.url("/redirect", f"{hop}=2", to="/after")).raise_for_status()
        self.assertIn(f"{hop}=2", pairs(self.server.cookie_sent_to("/after")))
        self.assertEqual(len(session.cookies), 0)  # nothing kept locally
        # keyjard's copy is the one: a cookie removed elsewhere is no longer sent.
        self.other.delete_cookies(self.other.list_cookies(self.server.host))
        session.get(self.server.url("/gone")).raise_for_status()
        self.assertIsNone(self.server.cookie_sent_to("/gone"))

    def test_a_cookie_header_of_the_caller_wins(self) -> None:
        self.client.set_cookies(self.server.url("/"), [f"{unique('stored')}=1"])
        session = keyjar_session(self.client)
        self.addCleanup(session.close)
        session.get(self.server.url("/mine"), headers={"Cookie": "mine=1"}).raise_for_status()
        self.assertEqual(self.server.cookie_sent_to("/mine"), "mine=1")


class HttpxTests(LiveCookieTestCase):
    def test_sync_transport(self) -> None:
        name, hop = unique("hx"), unique("hxhop")
        with keyjar_client(self.client, follow_redirects=True) as http:
            http.get(self.server.url("/set", f"{name}=1")).raise_for_status()
            http.get(self.server.url("/echo")).raise_for_status()
            self.assertEqual(pairs(self.server.cookie_sent_to("/echo")), [f"{name}=1"])
            http.get(self.server.url("/redirect", f"{hop}=2", to="/after")).raise_for_status()
            self.assertEqual(sorted(pairs(self.server.cookie_sent_to("/after"))), sorted([f"{name}=1", f"{hop}=2"]))
            self.assertEqual(len(http.cookies), 0)
        self.assertEqual(sorted(self.stored_names()), sorted([name, hop]))

    def test_async_transport(self) -> None:
        name, elsewhere = unique("ax"), unique("axother")

        async def run() -> None:
            async with async_keyjar_client(self.client, follow_redirects=True) as http:
                (await http.get(self.server.url("/set", f"{name}=1"))).raise_for_status()
                await asyncio.to_thread(self.other.set_cookies, self.server.url("/"), [f"{elsewhere}=2"])
                responses = await asyncio.gather(*(http.get(self.server.url(f"/echo{n}")) for n in range(4)))
                for response in responses:
                    response.raise_for_status()

        asyncio.run(run())
        for n in range(4):
            self.assertEqual(sorted(pairs(self.server.cookie_sent_to(f"/echo{n}"))), sorted([f"{name}=1", f"{elsewhere}=2"]))

    def test_transport_under_a_plain_client(self) -> None:
        from keyjar.httpx_transport import KeyjarTransport

        name = unique("plain")
        self.other.set_cookies(self.server.url("/"), [f"{name}=1"])
        with httpx.Client(transport=KeyjarTransport(client=self.client)) as http:
            http.get(self.server.url("/plain")).raise_for_status()
        self.assertEqual(pairs(self.server.cookie_sent_to("/plain")), [f"{name}=1"])


if __name__ == "__main__":
    unittest.main()
