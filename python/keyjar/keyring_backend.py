"""A ``keyring`` backend on Keyjar's shared credential storage, so Python tools (pip, twine,
poetry, ...) share credentials with git, ``keyjar`` and every Keyjar program.

A service becomes a protection space by ``keyjar.spaces.space_for`` (URL, bare host, or a
named service). Which stored credential answers is keyjard's rule (``credentialChoice``): a
credential stored for ``https://example.com`` answers a lookup for it whatever realm, and a
``.netrc`` login answers where nothing more specific is stored.

Viability (``priority``): 9, above the Secret Service backend's 5 and below keyring's chainer
(10), when keyjard answers on its socket or could be started (autostart allowed and a keyjard
found); otherwise ``RuntimeError`` with the reason, keyring's way of saying "not viable".
Every call is bounded by the client's timeout (``KEYJAR_TIMEOUT``): it never hangs.
"""

from __future__ import annotations

from typing import Optional

from keyring import errors as keyring_errors
from keyring.backend import KeyringBackend
from keyring.compat import properties
from keyring.credentials import SimpleCredential

from . import autostart
from .client import Client, shared_client
from .errors import KeyjarError, Locked, NotFound, SecretsUnavailable, SocketRefused, Unreachable
from .spaces import choose, space_for, space_for_storing


class KeyjarUnreachable(keyring_errors.KeyringError):
    """keyjard did not answer (none serving, none startable, or not within the timeout)."""


class KeyjarSecretsUnavailable(keyring_errors.KeyringError):
    """keyjard answered, but its secret store cannot be used (no Secret Service, locked keyring)."""


def _translated(error: KeyjarError, fallback: type = keyring_errors.KeyringError) -> Exception:
    """keyring's exception for a Keyjar error (raised ``from`` it: the original is the cause)."""
    if isinstance(error, Locked):
        kind: type = keyring_errors.KeyringLocked
        message = f"Keyjar's secrets are locked: {error.message}"
    elif isinstance(error, SecretsUnavailable):
        kind, message = KeyjarSecretsUnavailable, f"Keyjar's secret store is unavailable: {error.message}"
    elif isinstance(error, Unreachable):
        kind, message = KeyjarUnreachable, f"keyjard is unreachable: {error.message}"
    else:
        kind, message = fallback, f"Keyjar could not do it: {error.message}"
    return kind(message)


def viability_problem() -> Optional[str]:
    """Why this backend cannot work here, or None when it can."""
    client = Client()  # not connected: only its paths are read
    try:
        if autostart.serving_now(client.socket_path, client.database_path):
            return None
    except SocketRefused as refused:
        return str(refused)
    if not autostart.autostart_allowed():
        return f"no keyjard answers at {client.socket_path} and KEYJAR_NO_AUTOSTART=1"
    if autostart.find_keyjard() is None:
        return autostart.not_found_message(client.socket_path)
    return None


class KeyjarKeyring(KeyringBackend):
    """Keyjar's shared credential storage as a keyring."""

    def __init__(self, client: Optional[Client] = None) -> None:
        super().__init__()
        self._client = client

    @properties.classproperty
    def priority(cls) -> float:
        problem = viability_problem()
        if problem is not None:
            raise RuntimeError(problem)
        return 9

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = shared_client()
        return self._client

    def _answering(self, service: str, username: Optional[str]):
        lookup = space_for(service)
        candidates, preferred = self.client.credential_choice(lookup)
        return lookup, candidates, preferred, choose(candidates, preferred, username)

    def get_password(self, service: str, username: str) -> Optional[str]:
        try:
            _, _, _, record = self._answering(service, username)
            if record is None:
                return None
            return self.client.password(record["space"], record["user"])
        except KeyjarError as error:
            raise _translated(error) from error

    def set_password(self, service: str, username: str, password: str) -> None:
        try:
            lookup, candidates, preferred, _ = self._answering(service, username)
            space = space_for_storing(candidates, preferred, username, lookup)
            self.client.set_credential(space, username, password, make_default=False)
        except KeyjarError as error:
            raise _translated(error, keyring_errors.PasswordSetError) from error

    def delete_password(self, service: str, username: str) -> None:
        try:
            lookup, candidates, preferred, _ = self._answering(service, username)
            # The same credential set_password would have written, never a `.netrc` wildcard.
            space = space_for_storing(candidates, preferred, username, lookup)
            removed = self.client.remove_credential(space, username)
        except NotFound as missing:
            raise keyring_errors.PasswordDeleteError(self._nothing_to_delete(service)) from missing
        except KeyjarError as error:
            raise _translated(error, keyring_errors.PasswordDeleteError) from error
        if not removed:
            raise keyring_errors.PasswordDeleteError(self._nothing_to_delete(service))

    @staticmethod
    def _nothing_to_delete(service: str) -> str:
        # A `.netrc` login that answers the service is not this server's to delete.
        return f"no credential of that user is stored for {service!r}"

    def get_credential(self, service: str, username: Optional[str]) -> Optional[SimpleCredential]:
        """The credential that answers ``service`` for ``username``, or (None) the preferred one."""
        try:
            _, _, _, record = self._answering(service, username)
            if record is None:
                return None
            password = self.client.password(record["space"], record["user"])
        except KeyjarError as error:
            raise _translated(error) from error
        if password is None:
            return None
        return SimpleCredential(record["user"], password)
