"""Keyjar's Python client: the shared store of HTTP cookies and URL credentials that keyjard
keeps for this user, reached over its Unix socket.

* ``Client``: the connection and every request (``keyjar.client``);
* ``KeyjarCookieJar``: the shared jar as an ``http.cookiejar.CookieJar`` (urllib, requests);
* ``KeyjarTransport`` / ``AsyncKeyjarTransport`` (httpx) and ``KeyjarAdapter`` (requests):
  keyjard's exact cookie rules for those libraries, imported on first use so that neither
  library is needed otherwise;
* ``keyjar.keyring_backend.KeyjarKeyring``: a ``keyring`` backend (entry point ``keyjar``);
* ``errors``: the typed errors.

The client itself uses the standard library alone.
"""

from __future__ import annotations

from typing import Any

from . import errors
from .client import Client, shared_client
from .cookiejar import KeyjarCookieJar
from .errors import (
    CookieRejected,
    InvalidArgument,
    KeyjarError,
    Locked,
    LoginRequired,
    NotFound,
    Overloaded,
    ProtocolError,
    SecretsUnavailable,
    ShuttingDown,
    Unreachable,
)

__version__ = "0.1.0"

_LAZY = {
    "KeyjarTransport": "httpx_transport",
    "AsyncKeyjarTransport": "httpx_transport",
    "KeyjarAdapter": "requests_adapter",
}

__all__ = [
    "Client",
    "shared_client",
    "KeyjarCookieJar",
    "errors",
    "KeyjarError",
    "Unreachable",
    "Locked",
    "SecretsUnavailable",
    "LoginRequired",
    "NotFound",
    "InvalidArgument",
    "CookieRejected",
    "Overloaded",
    "ShuttingDown",
    "ProtocolError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    # httpx and requests are optional: their adapters load only when asked for.
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
