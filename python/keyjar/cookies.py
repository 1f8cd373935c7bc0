"""Conversions between keyjard's cookies (wire objects) and ``http.cookiejar.Cookie``.

Why these shapes: requests and httpx copy a jar by iterating it and then let Python's
``DefaultCookiePolicy`` choose what to send, so a cookie must look exactly as Python's own jar
would have stored it from the same Set-Cookie:

* a host-only cookie (no Domain attribute): ``domain`` is the host as Python's
  ``eff_request_host`` writes it (a name without a dot gets ``.local``, as ``localhost``
  becomes ``localhost.local``; an IPv6 address is bracketed), ``domain_specified`` False;
* a domain cookie: ``domain`` ``"." + domain``, ``domain_specified`` and
  ``domain_initial_dot`` True.

The other way (``set_cookie``), those conventions are undone, so a cookie survives a round trip.
"""

from __future__ import annotations

import time
from http.cookiejar import Cookie
from typing import Any, Dict, Optional

_SAME_SITE = {"strict": "Strict", "lax": "Lax", "none": "None"}
#: Where a partitioned cookie's key travels in ``Cookie._rest`` (Python has no field for it).
PARTITION_KEY_ATTRIBUTE = "PartitionKey"


def python_host(host: str) -> str:
    """A host as Python's cookie code names a host-only cookie's domain (``eff_request_host``)."""
    shown = f"[{host}]" if ":" in host else host
    return shown if "." in shown else shown + ".local"


def _wire_host(domain: str) -> str:
    """Undoes ``python_host``: the host keyjard knows."""
    if domain.endswith(".local") and "." not in domain[: -len(".local")]:
        domain = domain[: -len(".local")]
    if domain.startswith("[") and domain.endswith("]"):
        domain = domain[1:-1]
    return domain.lower()


def to_python_cookie(wire: Dict[str, Any]) -> Cookie:
    """A keyjard cookie as Python's jar would hold it."""
    host_only = bool(wire.get("hostOnly"))
    domain = str(wire.get("domain", ""))
    expires = wire.get("expires")
    rest: Dict[str, Optional[str]] = {}
    if wire.get("httpOnly"):
        rest["HttpOnly"] = None
    same_site = wire.get("sameSite")
    if same_site and same_site != "Unspecified":
        rest["SameSite"] = same_site
    if wire.get("partitionKey"):
        rest["Partitioned"] = None
        rest[PARTITION_KEY_ATTRIBUTE] = wire["partitionKey"]
    return Cookie(
        version=0,
        name=str(wire.get("name", "")),
        value=str(wire.get("value", "")),
        port=None,
        port_specified=False,
        domain=python_host(domain) if host_only else "." + domain,
        domain_specified=not host_only,
        domain_initial_dot=not host_only,
        path=str(wire.get("path", "/")),
        path_specified=True,
        secure=bool(wire.get("secure")),
        expires=int(expires) if expires is not None else None,
        discard=expires is None,
        comment=None,
        comment_url=None,
        rest=rest,
    )


def _attribute(cookie: Cookie, name: str) -> "tuple[bool, Optional[str]]":
    """Whether a nonstandard attribute is there (any case, as servers write them) and its value."""
    rest = getattr(cookie, "_rest", None) or {}
    for key, value in rest.items():
        if key.lower() == name.lower():
            return True, value
    return False, None


def from_python_cookie(cookie: Cookie, now: Optional[float] = None) -> Dict[str, Any]:
    """A Python cookie as keyjard stores it (``insertCookies``)."""
    now = time.time() if now is None else now
    host_only = not cookie.domain_specified
    domain = cookie.domain or ""
    domain = _wire_host(domain) if host_only else domain.lstrip(".").lower()
    wire: Dict[str, Any] = {
        "name": cookie.name,
        "value": cookie.value if cookie.value is not None else "",
        "domain": domain,
        "hostOnly": host_only,
        "path": cookie.path or "/",
        "secure": bool(cookie.secure),
        "httpOnly": _attribute(cookie, "HttpOnly")[0],
        "sameSite": _SAME_SITE.get(str(_attribute(cookie, "SameSite")[1] or "").lower(), "Unspecified"),
        "creation": now,
        "lastAccess": now,
    }
    if cookie.expires is not None and not cookie.discard:
        wire["expires"] = float(cookie.expires)
    has_key, key = _attribute(cookie, PARTITION_KEY_ATTRIBUTE)
    if has_key and key:
        wire["partitionKey"] = key
    return wire


def python_domain_of(wire: Dict[str, Any]) -> str:
    """The ``domain`` the cookie has in Python's jar (what ``clear(domain)`` compares)."""
    domain = str(wire.get("domain", ""))
    return python_host(domain) if wire.get("hostOnly") else "." + domain
