"""``Client``: the Python program's one kept connection to keyjard, and every request it makes.

Decision: the client asks keyjard on each call, over a connection kept open, rather than
keeping a replica of the store. So every matching rule (which cookies go with a request, which
Set-Cookie is stored, which credential answers a space) stays in keyjard: one rule, one place,
and a change another process makes is seen at the next call. Whether a replica would be worth
its complexity for Python callers is to be measured later.

Connection rules:

* connected lazily, checked (docs/protocol.md), greeted with ``hello`` version 4 first;
* when nobody serves the socket: a keyjard serving the same database elsewhere is used, else
  one is started unless ``KEYJAR_NO_AUTOSTART=1`` (``autostart``);
* every call waits for its reply ``timeout`` seconds at most (``KEYJAR_TIMEOUT``, else 30), then
  raises ``Unreachable``; the connection is then dropped (a late reply must not answer the next
  request) and the next call connects again;
* one retry, on a new connection, and only where no request can be done twice: when the kept
  connection is found closed before sending (keyjard restarted between calls); when sending
  failed (keyjard never received the frame whole, so acted on none of it); or, for a request
  that only reads (``SAFE_TO_REPEAT``), when the connection ended before any byte of its
  reply. A write whose connection ended after it was sent raises ``Unreachable``: it may or
  may not have been applied, and repeating it could apply it twice;
* thread-safe: one call at a time holds the connection; ids increase;
* after ``fork()`` a child never uses its parent's connection: it connects anew.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from . import autostart, messages
from .errors import ConnectionLost, KeyjarError, NotServing, ProtocolError
from .messages import cookie_context, cookie_identity
from .socketpath import absolute, default_database_path, default_socket_path, seconds_from_environment
from .spaces import Record, Space, split_choice
from .transport import Connection

PROTOCOL_VERSION = 4

#: Requests that only read: repeating one after a lost connection changes nothing.
SAFE_TO_REPEAT = frozenset(
    {
        "status",
        "cookieHeader",
        "cookies",
        "listCookies",
        "policy",
        "credentials",
        "allCredentials",
        "credentialChoice",
        "password",
    }
)


def default_timeout() -> float:
    """``KEYJAR_TIMEOUT`` seconds, else 30."""
    return seconds_from_environment("KEYJAR_TIMEOUT", 30.0)


class Client:
    """A kept, checked connection to this user's keyjard. See the module's rules."""

    def __init__(
        self,
        socket_path: Optional[str] = None,
        timeout: Optional[float] = None,
        client_name: str = "python",
        database_path: Optional[str] = None,
        autostart: Optional[bool] = None,
    ) -> None:
        self.socket_path = absolute(socket_path) if socket_path else default_socket_path()
        self.database_path = absolute(database_path) if database_path else default_database_path()
        self.timeout = float(timeout) if timeout is not None else default_timeout()
        self.client_name = client_name
        self.autostart = autostart_allowed() if autostart is None else autostart
        self.server_version: Optional[str] = None
        self._lock = threading.RLock()
        self._connection: Optional[Connection] = None
        self._next_id = 1
        # Where keyjard was last reached, when that is another socket (found by its pointer).
        self._reached_path: Optional[str] = None
        _clients.add(self)

    def _after_fork_in_child(self) -> None:
        # A lock another thread of the parent held at the fork would stay held for ever in
        # the child; the parent's connection is the parent's (closed by pid in the child).
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<keyjar.Client socket={self.socket_path!r} timeout={self.timeout:g}>"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    # Connecting -----------------------------------------------------------------------------

    def _open(self, deadline: float) -> Connection:
        path = self._reached_path or self.socket_path
        try:
            connection = Connection.open(path, self.timeout)
        except NotServing as failure:
            # Our own socket again first: the keyjard reached elsewhere may be gone.
            if self.autostart:
                path = autostart.ensure_running(self.socket_path, self.database_path)
            else:
                found = autostart.serving_now(self.socket_path, self.database_path)
                if found is None:
                    raise NotServing(f"keyjard is not reachable (autostart is off): {failure}") from None
                path = found
            connection = Connection.open(path, self.timeout)
            # Starting keyjard had its own limit (KEYJAR_START_TIMEOUT): the hello gets the
            # whole timeout from here.
            deadline = max(deadline, time.monotonic() + self.timeout)
        self._reached_path = None if path == self.socket_path else path
        try:
            hello = self._exchange(
                connection,
                "hello",
                {"version": PROTOCOL_VERSION, "client": self.client_name},
                "hello",
                deadline,
            )
        except BaseException:
            connection.close()
            raise
        self.server_version = hello.get("server")
        return connection

    def _usable_connection(self, deadline: float) -> Connection:
        connection = self._connection
        if connection is not None and connection.pid != os.getpid():
            connection.close()  # the child's copy only; the parent's stays open
            connection = None
        if connection is not None:
            try:
                for message in connection.drain_without_waiting():
                    failure = message.get("failure")
                    if isinstance(failure, dict) and failure.get("id") is None:
                        connection.close()  # keyjard ended this connection (stopping, say)
            except ProtocolError:
                connection.close()
            if connection.closed:
                connection = None
        if connection is None:
            self._connection = None
            connection = self._open(deadline)
            self._connection = connection
        return connection

    # Exchanging -----------------------------------------------------------------------------

    def _take_id(self) -> int:
        request_id = self._next_id
        self._next_id += 1
        return request_id

    def _exchange(
        self, connection: Connection, name: str, fields: Dict[str, Any], expect: str, deadline: float
    ) -> Dict[str, Any]:
        request_id = self._take_id()
        connection.send(messages.request(request_id, name, fields), deadline)
        return self._await_reply(connection, request_id, expect, deadline)

    @staticmethod
    def _await_reply(connection: Connection, request_id: int, expect: str, deadline: float) -> Dict[str, Any]:
        while True:
            message = connection.receive(deadline)
            if "reply" in message:
                return messages.reply_fields(message["reply"], request_id, expect)
            if "failure" in message:
                error, ends_connection = messages.failure_error(message["failure"], request_id)
                if ends_connection:
                    connection.close()
                raise error
            if not any(kind in message for kind in messages.PUSHED):
                raise ProtocolError("keyjard sent a message this client does not know")

    def call(self, name: str, fields: Dict[str, Any], expect: str) -> Dict[str, Any]:
        """Sends request ``name`` with ``fields`` and returns the ``expect`` response's fields.
        Typed errors as in ``keyjar.errors``; the retry rule is the module's."""
        with self._lock:
            for attempt in (1, 2):
                connection = self._usable_connection(time.monotonic() + self.timeout)
                # The request's own timeout starts once there is a connection (one that had to
                # be made, keyjard started, took its own time).
                deadline = time.monotonic() + self.timeout
                # Whether the stream is still in step (a whole reply or failure was read): if
                # not (a bad message, an interrupt), the connection is not used again.
                in_step = False
                try:
                    request_id = self._take_id()
                    try:
                        connection.send(messages.request(request_id, name, fields), deadline)
                    except ConnectionLost:
                        if attempt == 1:
                            continue  # never received whole: keyjard did nothing of it
                        raise
                    try:
                        result = self._await_reply(connection, request_id, expect, deadline)
                    except ConnectionLost as lost:
                        if name in SAFE_TO_REPEAT:
                            if attempt == 1:
                                continue  # a read: asking again changes nothing
                            raise
                        raise ConnectionLost(
                            f"{lost.message} before answering {name!r}; it may or may not have been applied"
                        ) from None
                    in_step = True
                    return result
                except KeyjarError as error:
                    in_step = error.code is not None  # keyjard's own failure, read whole
                    raise
                finally:
                    if not in_step:
                        connection.close()
                    if connection.closed and self._connection is connection:
                        self._connection = None
            raise AssertionError("unreachable: the second attempt returns or raises")

    # Status and policy ----------------------------------------------------------------------

    def status(self) -> Dict[str, Any]:
        """keyjard's status: paths, counts, secrets backend health, policy, clients."""
        return self.call("status", {}, "status")["status"]

    def policy(self) -> Dict[str, Any]:
        """The cookie accept policy and domain rules."""
        return self.call("policy", {}, "policy")["policy"]

    # Cookies --------------------------------------------------------------------------------

    def cookie_header(
        self,
        url: str,
        main_document_url: Optional[str] = None,
        top_level: bool = True,
        method: str = "GET",
        non_http: bool = False,
    ) -> Optional[str]:
        """The ``Cookie`` header value for a request to ``url``, or None when no cookie goes."""
        context = cookie_context(url, main_document_url, top_level, method, non_http)
        return self.call("cookieHeader", {"context": context}, "cookieHeader").get("header")

    def cookies(
        self,
        url: str,
        main_document_url: Optional[str] = None,
        top_level: bool = True,
        method: str = "GET",
        non_http: bool = False,
    ) -> List[Dict[str, Any]]:
        """The cookies that go with a request to ``url`` (wire cookie objects)."""
        context = cookie_context(url, main_document_url, top_level, method, non_http)
        return list(self.call("cookies", {"context": context}, "cookies").get("cookies") or [])

    def set_cookies(
        self,
        url: str,
        set_cookie_headers: Sequence[str],
        main_document_url: Optional[str] = None,
        method: str = "GET",
        top_level: bool = True,
        non_http: bool = False,
    ) -> List[Optional[str]]:
        """Stores a response's Set-Cookie values (one header value each) in one transaction.
        One outcome per header: None when stored, else the rejection as a sentence."""
        headers = list(set_cookie_headers)
        if not headers:
            return []
        context = cookie_context(url, main_document_url, top_level, method, non_http)
        response = self.call("setCookies", {"headers": headers, "context": context}, "cookieOutcomes")
        return list(response.get("outcomes") or [])

    def list_cookies(self, domain: Optional[str] = None) -> List[Dict[str, Any]]:
        """Every unexpired cookie (of ``domain`` and its subdomains), sorted by domain, path, name."""
        fields = {} if domain is None else {"domain": domain}
        return list(self.call("listCookies", fields, "cookies").get("cookies") or [])

    def insert_cookies(self, cookies: Iterable[Dict[str, Any]]) -> List[Optional[str]]:
        """Stores whole cookies (wire cookie objects); one outcome each, None when stored."""
        response = self.call("insertCookies", {"cookies": list(cookies)}, "cookieOutcomes")
        return list(response.get("outcomes") or [])

    def delete_cookies(self, identities: Iterable[Dict[str, Any]]) -> None:
        """Deletes the cookies named (cookie objects or identities; only identity fields go)."""
        chosen = [cookie_identity(identity) for identity in identities]
        if chosen:
            self.call("deleteCookies", {"identities": chosen}, "committed")

    def clear_cookies(self, domain: Optional[str] = None) -> None:
        """Deletes every cookie, or those of ``domain`` and its subdomains."""
        self.call("clearCookies", {} if domain is None else {"domain": domain}, "committed")

    # Credentials ----------------------------------------------------------------------------

    def credential_choice(self, space: Space) -> Tuple[List[Record], Optional[Record]]:
        """keyjard's candidates for ``space`` (most specific first) and the one that answers
        unasked (None when several users and no default leave the choice to a person)."""
        return split_choice(self.call("credentialChoice", {"space": space}, "credentialChoice"))

    def credentials(self, space: Space) -> List[Record]:
        """The credentials stored in exactly ``space`` (no secrets)."""
        return list(self.call("credentials", {"space": space}, "credentials").get("records") or [])

    def all_credentials(self) -> List[Record]:
        """Every stored credential's record (no secrets)."""
        return list(self.call("allCredentials", {}, "credentials").get("records") or [])

    def password(self, space: Space, user: str) -> Optional[str]:
        """The password of ``user`` in exactly ``space``; None when there is none."""
        return self.call("password", {"space": space, "user": user}, "password").get("password")

    def set_credential(self, space: Space, user: str, password: str, make_default: bool = False) -> None:
        """Stores a permanent credential; a space's first credential becomes its default.

        Give ``space`` in Keyjar's canonical form (``keyjar.spaces`` builds it: lower-case host,
        effective port): keyjard refuses another form (``InvalidArgument``), since it keeps
        secrets under the canonical one."""
        fields = {"space": space, "user": user, "password": password, "makeDefault": bool(make_default)}
        self.call("setCredential", fields, "committed")

    def remove_credential(self, space: Space, user: str) -> bool:
        """Removes ``user``'s credential in exactly ``space``; whether there was one.

        keyjard answers ``committed`` either way (not ``NotFound``); a reply without a
        ``sequence`` is one that changed nothing (Schemas/protocol.md)."""
        response = self.call("removeCredential", {"space": space, "user": user}, "committed")
        return response.get("sequence") is not None


def autostart_allowed() -> bool:
    return autostart.autostart_allowed()


_shared: Optional[Client] = None
_shared_lock = threading.Lock()
_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    global _shared_lock
    _shared_lock = threading.Lock()
    for client in list(_clients):
        client._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def shared_client() -> Client:
    """One process-wide ``Client`` with the defaults, for the cookie jar, transports and keyring
    backend when none is given: one connection for all of them."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Client()
        return _shared
