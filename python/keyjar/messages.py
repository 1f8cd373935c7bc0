"""The shapes of the wire's messages (Schemas/protocol.md, "Messages"), built and read in one
place so that the client's requests match the golden files and a reply that is not the
protocol is refused, never half-read.

Readers follow the protocol's leniency: members in any order, unknown members ignored, an
integer written as any JSON number with an exact integral value.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from .errors import KeyjarError, ProtocolError, from_failure

#: Messages pushed to subscribers; this client does not subscribe, but skips them should one come.
PUSHED = ("event", "snapshot", "resynchronise")

_IDENTITY_FIELDS = ("name", "domain", "hostOnly", "path", "partitionKey")


def integer(value: Any, what: str) -> int:
    """An integer as the protocol allows it: any JSON number with an exact integral value."""
    if isinstance(value, bool):
        raise ProtocolError(f"{what} is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ProtocolError(f"{what} is not an integer")


def request(request_id: int, name: str, fields: Dict[str, Any]) -> Dict[str, Any]:
    """A ``ClientMessage``: every enum is an object with one key, the case's name."""
    return {"id": request_id, "request": {name: fields}}


def reply_fields(reply: Any, request_id: int, expect: str) -> Dict[str, Any]:
    """The fields of the ``expect`` response in a reply to ``request_id``."""
    if not isinstance(reply, dict) or integer(reply.get("id"), "a reply's id") != request_id:
        raise ProtocolError("keyjard's reply does not answer the request sent")
    response = reply.get("response")
    if not isinstance(response, dict) or len(response) != 1 or not isinstance(response.get(expect), dict):
        raise ProtocolError(f"keyjard answered with another response than {expect!r}")
    return response[expect]


def failure_error(failure: Any, request_id: int) -> Tuple[KeyjarError, bool]:
    """The typed error of a ``failure`` to ``request_id``, and whether it ends the connection
    (a failure without an id is the connection's own: keyjard closes it)."""
    error = failure.get("error") if isinstance(failure, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        raise ProtocolError("keyjard sent a malformed failure")
    code = integer(error.get("code"), "a failure's code")
    failed_id = failure.get("id")
    if failed_id is not None and integer(failed_id, "a failure's id") != request_id:
        raise ProtocolError("keyjard's failure does not answer the request sent")
    return from_failure(code, error["message"]), failed_id is None


def cookie_context(
    url: str,
    main_document_url: Optional[str] = None,
    top_level: bool = True,
    method: str = "GET",
    non_http: bool = False,
) -> Dict[str, Any]:
    """The request a cookie is sent with or set from (the wire's ``context``)."""
    context: Dict[str, Any] = {
        "url": url,
        "isTopLevelNavigation": bool(top_level),
        "method": method,
        "nonHTTP": bool(non_http),
    }
    if main_document_url is not None:
        context["mainDocumentURL"] = main_document_url
    return context


def cookie_identity(cookie: Dict[str, Any]) -> Dict[str, Any]:
    """What names a stored cookie (name, domain, host-only, path, partition)."""
    return {key: cookie[key] for key in _IDENTITY_FIELDS if cookie.get(key) is not None}
