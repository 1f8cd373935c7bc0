"""The one place a keyring "service" becomes a protection space, and the two rules of choosing
among keyjard's candidates that a client applies itself.

A service is read as, in this order:

* a URL with a scheme and a host (``https://example.com:8443/path``): the server's space, as
  ``keyjar credential add --url`` and git's helper build it (protocol = scheme, host lower-case
  without IPv6 brackets, port = explicit or the scheme's default, no realm, method
  ``default``, proxy type ``none``);
* a bare ``host`` or ``host:port`` that is a valid host name or IP address and contains a dot,
  names a port, or is ``localhost`` (``pypi.org``, ``[::1]:8443``): that server over https;
* anything else (``gh:github.com``, ``my app``): a named service, protocol ``keyring`` with the
  service string as the host (in Keyjar's canonical form: see ``named_space``), so any
  keyring service name can be stored.

Matching itself (which stored credential answers which space) stays in keyjard: the client asks
``credentialChoice`` and only picks among the answer, by ``choose`` and ``space_for_storing``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

Space = Dict[str, Any]
Record = Dict[str, Any]

#: The protocol of a space named by an arbitrary keyring service string.
NAMED_SERVICE_PROTOCOL = "keyring"

_SCHEME_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_\-]{0,61}[a-z0-9_])?$")
_BARE_HOST_PORT = re.compile(r"^(?P<host>\[[^\]]*\]|[^:\[\]]+)(?::(?P<port>[0-9]{1,5}))?$")

# Wildcard protocols of `.netrc` logins (ProtectionSpace.anyScheme, anySchemeInClearToo).
_WILDCARD_PROTOCOLS = ("*", "*+clear")


def default_port(scheme: str) -> int:
    """A scheme's default port, exactly as Keyjar's ProtectionSpace gives it (so a space made
    here equals the one ``keyjar credential add`` stores): https and wss 443, ftp 21, ftps 990,
    every other scheme 80 (ProtectionSpace.defaultPort, Sources/KeyjarCore/ProtectionSpace.swift).
    """
    return {"https": 443, "wss": 443, "ftp": 21, "ftps": 990}.get(scheme, 80)


def checked_server_host(host: str) -> Optional[str]:
    """A host as Keyjar stores it: IPv6 without brackets, lower-case, no trailing root dot, a
    Unicode name by its IDNA A-labels; None when it is no valid host name or IP address."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        # Checked, but kept as written (lower-case), as Keyjar's URL hosts are: "::1" stays "::1"
        # and "0:0::1" is not rewritten, so the space equals the one Swift clients store.
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
        return host.lower()
    name = host.lower()
    if any(ord(character) >= 0x80 for character in name):
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if len(name) > 1 and name.endswith("."):
        name = name[:-1]
    if not name or len(name) > 253:
        return None
    try:
        return str(ipaddress.IPv4Address(name))
    except ValueError:
        pass
    return name if all(_LABEL.match(label) for label in name.split(".")) else None


def server_space(scheme: str, host: str, port: Optional[int] = None) -> Space:
    """A server's space with no realm and method ``default``: what a program asks with when it
    names no challenge (every credential of the origin answers, by keyjard's rule)."""
    scheme = scheme.lower()
    return {
        "protocol": scheme,
        "host": host,
        "port": port if port and port > 0 else default_port(scheme),
        "proxyType": "none",
        "authenticationMethod": "default",
    }


def keyjar_canonical_host(host: str) -> str:
    """A host as Keyjar's ProtectionSpace writes any host it is given (CookieURL.canonicalHost
    and ProtectionSpace.init): brackets dropped, lower-case, trailing root dots dropped."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = host.lower()
    while len(host) > 1 and host.endswith("."):
        host = host[:-1]
    return host


def named_space(service: str) -> Space:
    """The space of a keyring service that names no server: protocol ``keyring``, the service
    as the host.

    In Keyjar's canonical form (the host as ``keyjar_canonical_host`` writes it, the port the
    default Keyjar gives an unknown scheme, 80), not the string verbatim with port 0: keyjard
    keeps secrets under the canonical form and refuses a credential in any other
    (Schemas/protocol.md). Service names are therefore case-insensitive, as host names are:
    ``My App`` and ``my app`` are one.
    """
    return {
        "protocol": NAMED_SERVICE_PROTOCOL,
        "host": keyjar_canonical_host(service),
        "port": default_port(NAMED_SERVICE_PROTOCOL),
        "proxyType": "none",
        "authenticationMethod": "default",
    }


def _url_space(service: str) -> Optional[Space]:
    match = _SCHEME_URL.match(service)
    if not match:
        return None
    try:
        parts = urlsplit(service)
        port = parts.port
    except ValueError:
        return None
    netloc_host = parts.netloc.rpartition("@")[2]
    if netloc_host.startswith("["):
        raw_host = netloc_host[: netloc_host.find("]") + 1]
    else:
        raw_host = netloc_host.partition(":")[0]
    host = checked_server_host(raw_host) if raw_host else None
    if host is None:
        return None
    return server_space(match.group(1), host, port)


def _bare_host_space(service: str) -> Optional[Space]:
    if service.count(":") >= 2 and not service.startswith("["):
        # A bare IPv6 address (its colons are no port).
        host = checked_server_host(service)
        return server_space("https", host) if host else None
    match = _BARE_HOST_PORT.match(service)
    if not match:
        return None
    port_text = match.group("port")
    port = int(port_text) if port_text else None
    if port is not None and port > 65535:
        return None
    raw_host = match.group("host")
    host = checked_server_host(raw_host)
    if host is None:
        return None
    names_server = "." in host or ":" in host or host == "localhost" or port is not None
    return server_space("https", host, port) if names_server else None


def space_for(service: str) -> Space:
    """The protection space a keyring ``service`` stands for (see the module's rules)."""
    return _url_space(service) or _bare_host_space(service) or named_space(service)


# The two functions below mirror CredentialCandidates.answer(forUser:) and
# space(forStoring:challengedAt:) in Sources/KeyjarCore/CredentialChoice.swift, and
# ProtectionSpace.isWildcard in ProtectionSpace.swift: they must change with them.


def is_wildcard(space: Space) -> bool:
    """Whether a space stands for several origins (a ``.netrc`` login: protocol ``*`` or
    ``*+clear``; host ``*`` with it for every server)."""
    return space.get("protocol") in _WILDCARD_PROTOCOLS


def choose(candidates: List[Record], preferred: Optional[Record], user: Optional[str]) -> Optional[Record]:
    """The credential that answers: the named user's most specific one (candidates come most
    specific first), else, with no user named, the one keyjard prefers."""
    if user is None:
        return preferred
    return next((record for record in candidates if record.get("user") == user), None)


def space_for_storing(
    candidates: List[Record], preferred: Optional[Record], user: str, lookup: Space
) -> Space:
    """Where a password for ``user`` looked up at ``lookup`` is stored: in the space of that
    user's credential that answers there (updated, rather than doubled by a second one), unless
    that is a ``.netrc`` wildcard (one server's password must not go to every server); else in
    ``lookup`` itself."""
    answering = choose(candidates, preferred, user)
    if answering is not None and not is_wildcard(answering["space"]):
        return answering["space"]
    return lookup


def split_choice(response: Dict[str, Any]) -> Tuple[List[Record], Optional[Record]]:
    """A ``credentialChoice`` response as (candidates, preferred)."""
    return list(response.get("candidates") or []), response.get("preferred")
