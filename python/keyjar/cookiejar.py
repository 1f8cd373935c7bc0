"""``KeyjarCookieJar``: an ``http.cookiejar.CookieJar`` that is the shared store itself.

It keeps no copy: every read asks keyjard and every write goes to it, so a cookie another
process stored is seen at once, and keyjard's accept policy and matching rules (RFC 6265bis:
public suffixes, SameSite, HttpOnly, partitions) decide what is stored and sent, not Python's
``DefaultCookiePolicy``.

Where each rule is applied:

* ``add_cookie_header`` / ``extract_cookies`` (urllib's ``HTTPCookieProcessor``, and
  ``extract_cookies`` from requests): keyjard's rules exactly. The request's context follows
  ``http.cookiejar``'s notions: an ``unverifiable`` request is not a top-level navigation, and
  an ``origin_req_host`` other than the request's own host is the main document's site;
* iteration (``for cookie in jar``; requests and httpx copy a jar this way before each request
  and then filter with Python's policy): every unexpired cookie, shaped as Python's jar would
  hold it (``keyjar.cookies``). Python's policy is looser than keyjard's: it ignores SameSite
  and partitions, and sends a host-only cookie of ``example.com`` to its subdomains; and the
  process holds a copy of every cookie's value while it chooses. For keyjard's exact rules with
  requests or httpx use ``KeyjarAdapter`` / ``keyjar_session()`` or ``keyjar_client()``.

``make_cookies`` keeps the base behaviour (Python's parse, nothing stored).
"""

from __future__ import annotations

import threading
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy
from typing import Any, Dict, Iterator, List, Optional
from urllib.parse import urlsplit

from .client import Client, shared_client
from .cookies import from_python_cookie, python_domain_of, to_python_cookie
from .errors import CookieRejected


class NoLocalCookiesPolicy(DefaultCookiePolicy):
    """A policy under which a library's own jar stores nothing, so that keyjard's cookies (set
    by ``KeyjarAdapter`` / ``KeyjarTransport``) are not shadowed by a stale local copy.
    Cookies a caller passes with one request are still sent."""

    def set_ok(self, cookie: Cookie, request: Any) -> bool:
        return False


def _host(url_or_host: str) -> str:
    """The host of a URL or of a ``host[:port]`` (lower-case, IPv6 without brackets)."""
    text = url_or_host if "//" in url_or_host else "//" + url_or_host
    try:
        return (urlsplit(text).hostname or "").lower()
    except ValueError:
        return ""


def request_context(request: Any) -> Dict[str, Any]:
    """keyjard's context for a urllib-style request (``urllib.request.Request`` or requests'
    ``MockRequest``): URL, method, top-level and main document by ``http.cookiejar``'s notions."""
    url = request.get_full_url()
    get_method = getattr(request, "get_method", None)
    method = get_method() if callable(get_method) else "GET"
    unverifiable = bool(getattr(request, "unverifiable", False))
    origin = getattr(request, "origin_req_host", None) or ""
    main_document: Optional[str] = None
    if origin and _host(origin) != _host(url):
        scheme = urlsplit(url).scheme or "http"
        origin_host = _host(origin)
        shown = f"[{origin_host}]" if ":" in origin_host else origin_host
        main_document = f"{scheme}://{shown}/"
    return {
        "url": url,
        "main_document_url": main_document,
        "top_level": not unverifiable,
        "method": method,
    }


class KeyjarCookieJar(CookieJar):
    """The shared jar as an ``http.cookiejar.CookieJar`` (see the module). Thread-safe: it
    holds no state but its client, which serialises calls."""

    def __init__(self, client: Optional[Client] = None, policy: Optional[Any] = None) -> None:
        super().__init__(policy)
        self._client = client
        self._client_lock = threading.Lock()

    @property
    def client(self) -> Client:
        with self._client_lock:
            if self._client is None:
                self._client = shared_client()
            return self._client

    def __repr__(self) -> str:
        # Never the cookies: their values are often session secrets.
        return f"<{type(self).__name__} socket={self.client.socket_path!r}>"

    __str__ = __repr__

    # Sending and receiving --------------------------------------------------------------------

    def add_cookie_header(self, request: Any) -> None:
        """Sets ``Cookie`` from keyjard, unless the request already has one (its own wins)."""
        if request.has_header("Cookie"):
            return
        context = request_context(request)
        header = self.client.cookie_header(
            context["url"],
            main_document_url=context["main_document_url"],
            top_level=context["top_level"],
            method=context["method"],
        )
        if header:
            request.add_unredirected_header("Cookie", header)

    def extract_cookies(self, response: Any, request: Any) -> None:
        """Sends every ``Set-Cookie`` of the response to keyjard (``Set-Cookie2`` is obsolete
        and ignored); keyjard's policy decides what is stored."""
        headers = response.info().get_all("Set-Cookie") or []
        if not headers:
            return
        context = request_context(request)
        self.client.set_cookies(
            context["url"],
            [str(header) for header in headers],
            main_document_url=context["main_document_url"],
            method=context["method"],
            top_level=context["top_level"],
        )

    # Python's jar API on the shared store -----------------------------------------------------

    def set_cookie(self, cookie: Cookie) -> None:
        """Stores ``cookie`` in keyjard as it is (no policy check: ``set_cookie_if_ok`` does
        that). ``CookieRejected`` when keyjard does not store it (an empty domain, say)."""
        (outcome,) = self.client.insert_cookies([from_python_cookie(cookie)]) or [None]
        if outcome is not None:
            raise CookieRejected(f"keyjard did not store cookie {cookie.name!r}: {outcome}")

    def _stored(self) -> List[Dict[str, Any]]:
        return self.client.list_cookies()

    def __iter__(self) -> Iterator[Cookie]:
        return iter([to_python_cookie(wire) for wire in self._stored()])

    def __len__(self) -> int:
        return len(self._stored())

    def clear(self, domain: Optional[str] = None, path: Optional[str] = None, name: Optional[str] = None) -> None:
        """As ``CookieJar.clear``: no argument clears every cookie; otherwise the cookies whose
        Python domain (``.example.com`` for a domain cookie, ``example.com`` for a host-only
        one) is exactly ``domain`` (and path, and name). ``KeyError`` when none matches, as the
        base class raises."""
        if domain is None:
            if path is not None or name is not None:
                raise ValueError("domain must be given in order to give path")
            self.client.clear_cookies()
            return
        if name is not None and path is None:
            raise ValueError("domain and path must be given to remove a cookie by name")
        matching = [
            wire
            for wire in self._stored()
            if python_domain_of(wire) == domain
            and (path is None or wire.get("path") == path)
            and (name is None or wire.get("name") == name)
        ]
        if not matching:
            raise KeyError(domain if path is None else (domain, path, name))
        self.client.delete_cookies(matching)

    def clear_session_cookies(self) -> None:
        """Deletes the cookies without an expiry (session cookies)."""
        self.client.delete_cookies([wire for wire in self._stored() if wire.get("expires") is None])

    def clear_expired_cookies(self) -> None:
        """Nothing to do: keyjard never returns an expired cookie and removes them itself."""
