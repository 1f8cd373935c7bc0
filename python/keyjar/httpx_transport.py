"""httpx transports that take cookies from, and give them to, keyjard by its exact rules.

``KeyjarTransport`` wraps another transport (``httpx.HTTPTransport()`` by default): before a
request goes, unless it carries a ``Cookie`` header already, keyjard's header for its URL is
set; after the response comes, its ``Set-Cookie`` headers are sent to keyjard. Redirects that
httpx follows pass through the transport again, so each hop gets its own cookies.
``AsyncKeyjarTransport`` does the same for ``httpx.AsyncClient``, calling keyjard in a worker
thread so that the event loop never blocks on the socket.

httpx's client keeps a cookie jar of its own, whose copy of a cookie would be sent instead
(a Cookie header already set wins). ``keyjar_client()`` / ``async_keyjar_client()`` make a
client whose own jar stores nothing (``NoLocalCookiesPolicy``); pass the transport to a client
of your own the same way.

A programmatic request is its own top-level document: no main document URL is sent, so it is
same-site, as Keyjar's own loader does for a request without a main document.
"""

from __future__ import annotations

import asyncio
from http.cookiejar import CookieJar
from typing import Any, List, Optional

import httpx

from .client import Client, shared_client
from .cookiejar import NoLocalCookiesPolicy

class _KeyjarCookies:
    """The two calls both transports make; the client is chosen lazily."""

    def __init__(self, client: Optional[Client]) -> None:
        self._client = client

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = shared_client()
        return self._client

    def add_header(self, request: httpx.Request) -> None:
        if "cookie" in request.headers:
            return
        header = self.client.cookie_header(str(request.url), method=request.method)
        if header:
            request.headers["Cookie"] = header

    def store(self, request: httpx.Request, response: httpx.Response) -> None:
        values: List[str] = response.headers.get_list("set-cookie")
        if values:
            self.client.set_cookies(str(request.url), values, method=request.method)


class KeyjarTransport(httpx.BaseTransport):
    """A sync transport adding keyjard's cookies to ``inner``'s traffic."""

    def __init__(self, inner: Optional[httpx.BaseTransport] = None, client: Optional[Client] = None) -> None:
        self._inner = inner if inner is not None else httpx.HTTPTransport()
        self._cookies = _KeyjarCookies(client)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._cookies.add_header(request)
        response = self._inner.handle_request(request)
        try:
            self._cookies.store(request, response)
        except BaseException:
            response.close()
            raise
        return response

    def close(self) -> None:
        self._inner.close()


class AsyncKeyjarTransport(httpx.AsyncBaseTransport):
    """An async transport adding keyjard's cookies to ``inner``'s traffic, off the event loop."""

    def __init__(self, inner: Optional[httpx.AsyncBaseTransport] = None, client: Optional[Client] = None) -> None:
        self._inner = inner if inner is not None else httpx.AsyncHTTPTransport()
        self._cookies = _KeyjarCookies(client)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.to_thread(self._cookies.add_header, request)
        response = await self._inner.handle_async_request(request)
        try:
            await asyncio.to_thread(self._cookies.store, request, response)
        except BaseException:
            await response.aclose()
            raise
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def _no_local_cookies() -> CookieJar:
    # The jar itself, not an httpx.Cookies around it: httpx copies a Cookies object into a
    # jar of its own (default policy), and keeps a CookieJar as it is.
    return CookieJar(policy=NoLocalCookiesPolicy())


def keyjar_client(client: Optional[Client] = None, **options: Any) -> httpx.Client:
    """An ``httpx.Client`` whose cookies are keyjard's alone (options go to ``httpx.Client``)."""
    transport = KeyjarTransport(options.pop("transport", None), client)
    return httpx.Client(transport=transport, cookies=_no_local_cookies(), **options)


def async_keyjar_client(client: Optional[Client] = None, **options: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose cookies are keyjard's alone."""
    transport = AsyncKeyjarTransport(options.pop("transport", None), client)
    return httpx.AsyncClient(transport=transport, cookies=_no_local_cookies(), **options)
