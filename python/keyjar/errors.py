"""Typed errors of the Keyjar client.

Why typed: a caller reacts differently to "keyjard is not there" (start it, or tell the user),
"the secrets are locked" (run ``keyjar unlock``) and "keyjard refused this request" (a bug or bad
input). Each keyjard ``failure`` code (Schemas/protocol.md, "Error codes") maps to one class, and
``exit_status`` follows the ``keyjar`` command's documented statuses (docs/command-line.md), so a
Python script can exit the way ``keyjar`` would.

No message here ever holds a secret: messages are keyjard's own (which never carry one, by the
protocol) or ours, built from paths and codes, never from a request's content.
"""

from __future__ import annotations

from typing import Dict, Optional, Type


class KeyjarError(Exception):
    """Any failure of a Keyjar call.

    ``code`` is keyjard's wire code when keyjard said so (None for failures found on this side);
    ``exit_status`` is what ``keyjar`` would exit with for it (1: the request failed).
    """

    exit_status: int = 1

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


class Unreachable(KeyjarError):
    """No keyjard answers: none serving (and none may or could be started), none answering
    within the timeout (a stopped keyjard), or a socket that is not this user's keyjard's."""

    exit_status = 3


class NotServing(Unreachable):
    """Nobody listens on the socket (missing, or connection refused): starting keyjard may help."""


class SocketRefused(Unreachable):
    """The socket failed the checks made before anything is sent (its directory is not the
    user's alone, or its server runs as another user): starting keyjard would not help, and the
    socket must not be used."""


class ConnectionLost(Unreachable):
    """An open connection ended (keyjard stopped or restarted) before the reply came."""


class ProtocolError(KeyjarError):
    """A frame or message that is not the protocol: bad length, not UTF-8, not JSON, a duplicate
    key, an unknown message; or keyjard's codes 1-4 (framing, version, malformed, handshake)."""


class InvalidArgument(KeyjarError):
    """Code 10: keyjard refused an argument (a URL without a host, say)."""


class NotFound(KeyjarError):
    """Code 11: no such credential (or other thing named)."""


class CookieRejected(KeyjarError):
    """Code 12, or a cookie keyjard's policy did not store (the reason is the message)."""


class LoginRequired(KeyjarError):
    """Code 13: the token cannot be refreshed; store a new one."""


class StorageFailure(KeyjarError):
    """Code 20: the database could not be written; nothing was acknowledged."""


class SecretsUnavailable(KeyjarError):
    """Code 21: the secret store cannot be used (no Secret Service, locked keyring, ...);
    keyjard's message says what to do."""


class Overloaded(KeyjarError):
    """Code 22: keyjard serves as many clients as it allows; the connection was closed."""


class ShuttingDown(KeyjarError):
    """Code 23: keyjard is stopping."""


class Locked(KeyjarError):
    """Code 24: the secrets are in the encrypted file, which is locked; nothing was read or
    stored. ``keyjar unlock`` opens it."""

    exit_status = 4

    def __init__(self, message: str, code: Optional[int] = 24) -> None:
        if "keyjar unlock" not in message:
            message = f"{message} (run `keyjar unlock` to open the secrets file)"
        super().__init__(message, code)


class WrongPassphrase(KeyjarError):
    """Code 25: the passphrase does not open the encrypted secrets file."""


_BY_CODE: Dict[int, Type[KeyjarError]] = {
    1: ProtocolError,
    2: ProtocolError,
    3: ProtocolError,
    4: ProtocolError,
    10: InvalidArgument,
    11: NotFound,
    12: CookieRejected,
    13: LoginRequired,
    20: StorageFailure,
    21: SecretsUnavailable,
    22: Overloaded,
    23: ShuttingDown,
    24: Locked,
    25: WrongPassphrase,
}


def from_failure(code: int, message: str) -> KeyjarError:
    """The typed error of a keyjard ``failure`` with ``code`` and ``message``."""
    if code == 2:
        # Protocol "Versions": a refused client says which keyjard refused it and to restart it.
        message = f"{message} (keyjard speaks another protocol version: restart keyjard)"
    return _BY_CODE.get(code, KeyjarError)(message, code)
