"""``KeyjarAdapter``: a requests transport adapter that takes cookies from, and gives them to,
keyjard by its exact rules (not Python's cookie policy).

``send`` sets ``Cookie`` from keyjard when the prepared request has none, then stores the
response's ``Set-Cookie`` headers in keyjard. requests' session keeps a jar of its own and
would set a Cookie header from its copy first (which then wins), so ``install(session)``
mounts the adapter and gives the session a jar that stores nothing (``NoLocalCookiesPolicy``);
redirects requests follows come through ``send`` again, each hop with its own cookies.
Cookies passed with one request (``cookies=``) are still sent, instead of keyjard's.
"""

from __future__ import annotations

from typing import Any, Optional

import requests
from requests.adapters import HTTPAdapter
from requests.cookies import RequestsCookieJar

from .client import Client, shared_client
from .cookiejar import NoLocalCookiesPolicy


class KeyjarAdapter(HTTPAdapter):
    """requests' ``HTTPAdapter`` with keyjard's cookies."""

    def __init__(self, client: Optional[Client] = None, **options: Any) -> None:
        super().__init__(**options)
        self._keyjar_client = client

    @property
    def keyjar_client(self) -> Client:
        if self._keyjar_client is None:
            self._keyjar_client = shared_client()
        return self._keyjar_client

    def send(self, request: requests.PreparedRequest, **options: Any) -> requests.Response:
        url = request.url or ""
        method = request.method or "GET"
        if "Cookie" not in request.headers:
            header = self.keyjar_client.cookie_header(url, method=method)
            if header:
                request.headers["Cookie"] = header
        # The redirect's copy of this request's jar must not store (and then send) a cookie
        # keyjard may have refused: requests copies the jar's policy with it.
        jar = getattr(request, "_cookies", None)
        if isinstance(jar, RequestsCookieJar):
            jar.set_policy(NoLocalCookiesPolicy())
        response = super().send(request, **options)
        raw_headers = getattr(response.raw, "headers", None)
        values = raw_headers.getlist("Set-Cookie") if hasattr(raw_headers, "getlist") else []
        if values:
            try:
                self.keyjar_client.set_cookies(url, list(values), method=method)
            except BaseException:
                response.close()
                raise
        return response

    @classmethod
    def install(cls, session: requests.Session, client: Optional[Client] = None, **options: Any) -> "KeyjarAdapter":
        """Mounts a ``KeyjarAdapter`` on ``session`` for http and https, and makes the
        session's own jar store nothing, so that keyjard's cookies are the ones sent."""
        adapter = cls(client, **options)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        jar = RequestsCookieJar()
        jar.set_policy(NoLocalCookiesPolicy())
        session.cookies = jar
        return adapter


def keyjar_session(client: Optional[Client] = None) -> requests.Session:
    """A ``requests.Session`` whose cookies are keyjard's alone."""
    session = requests.Session()
    KeyjarAdapter.install(session, client)
    return session
