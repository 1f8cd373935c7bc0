"""Where keyjard listens and where its database is, by the same rules as every Keyjar client
(docs/protocol.md, "Finding the socket"; docs/environment.md), and the check a socket's
directory must pass before anything is sent through it.

Why the check: ``/tmp/keyjar-<uid>`` could have been made first by another local user, who
would then be sent this user's passwords. The directory must be a real directory (not a link),
owned by this process's effective uid, with no access for anyone else.
"""

from __future__ import annotations

import os
import pwd
import stat
from typing import Mapping, Optional


def _environment(environment: Optional[Mapping[str, str]]) -> Mapping[str, str]:
    return os.environ if environment is None else environment


def absolute(path: str) -> str:
    """A path a user gave, resolved against the working directory (``~`` expanded): an
    autostarted keyjard runs in ``/`` and would read a relative path differently."""
    if not path or path.startswith("/"):
        return path
    expanded = os.path.expanduser(path)
    if expanded.startswith("/"):
        return expanded
    return os.path.normpath(os.path.join(os.getcwd(), expanded))


def _xdg_directory(name: str, environment: Mapping[str, str]) -> Optional[str]:
    """An XDG variable when usable: set, not empty, absolute (the XDG specification)."""
    value = environment.get(name, "")
    return value if value.startswith("/") else None


def home(environment: Optional[Mapping[str, str]] = None) -> str:
    """``$HOME`` when usable, else the home the password database names, else ``/``."""
    env = _environment(environment)
    explicit = _xdg_directory("HOME", env)
    if explicit:
        return explicit
    try:
        return pwd.getpwuid(os.geteuid()).pw_dir or "/"
    except KeyError:
        return "/"


def directory_problem(path: str) -> Optional[str]:
    """Why ``path`` is not a private directory of this user (read with ``lstat``: a link is
    refused, never followed); None when it is one."""
    try:
        return private_directory_problem(path)
    except OSError as error:
        return f"{path} cannot be read: {error.strerror}"


def private_directory_problem(path: str) -> Optional[str]:
    """As ``directory_problem``, but a directory that cannot be read raises (``FileNotFoundError``
    when it is missing: nobody serves there yet, which is no reason to refuse it)."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link, not a directory"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if info.st_uid != os.geteuid():
        return f"{path} belongs to uid {info.st_uid}, not to you (uid {os.geteuid()})"
    if info.st_mode & 0o077:
        return f"{path} is open to other users (mode {info.st_mode & 0o777:o}), not 0700"
    return None


def socket_directory(socket_path: str) -> str:
    """The directory the socket is in (``.`` for a bare name, ``/`` for one at the root)."""
    directory, _, _ = socket_path.rpartition("/")
    if "/" not in socket_path:
        return "."
    return directory or "/"


def default_socket_path(
    environment: Optional[Mapping[str, str]] = None, login_runtime_directory: Optional[str] = None
) -> str:
    """``$KEYJAR_SOCKET``, else ``$XDG_RUNTIME_DIR/keyjar/keyjar.sock``, else the login's
    ``/run/user/<uid>/keyjar/keyjar.sock`` when that directory is the user's alone (cron, su and
    ssh without pam_systemd leave XDG_RUNTIME_DIR unset), else ``/tmp/keyjar-<uid>/keyjar.sock``."""
    env = _environment(environment)
    explicit = env.get("KEYJAR_SOCKET", "")
    if explicit:
        return absolute(explicit)
    runtime = _xdg_directory("XDG_RUNTIME_DIR", env)
    if runtime:
        return runtime + "/keyjar/keyjar.sock"
    uid = os.geteuid()
    login = login_runtime_directory or f"/run/user/{uid}"
    if directory_problem(login) is None:
        return login + "/keyjar/keyjar.sock"
    return f"/tmp/keyjar-{uid}/keyjar.sock"


def default_database_path(environment: Optional[Mapping[str, str]] = None) -> str:
    """``$KEYJAR_DATABASE``, else ``$XDG_DATA_HOME/keyjar/store.sqlite3``, else
    ``~/.local/share/keyjar/store.sqlite3``: the database a client looks for keyjard by, and
    gives to a keyjard it starts."""
    env = _environment(environment)
    explicit = env.get("KEYJAR_DATABASE", "")
    if explicit:
        return absolute(explicit)
    data_home = _xdg_directory("XDG_DATA_HOME", env) or home(env) + "/.local/share"
    return data_home + "/keyjar/store.sqlite3"


def database_pointer_path(database_path: str) -> str:
    """``DATABASE.keyjard``: held by the keyjard serving the database, naming its socket."""
    return database_path + ".keyjard"


def seconds_from_environment(
    name: str, default: float, environment: Optional[Mapping[str, str]] = None
) -> float:
    """A positive, finite number of seconds from ``name``; ``default`` when unset or unusable
    (as the Swift client reads KEYJAR_TIMEOUT and KEYJAR_START_TIMEOUT)."""
    text = _environment(environment).get(name, "")
    try:
        seconds = float(text)
    except ValueError:
        return default
    if seconds > 0 and seconds != float("inf"):
        return seconds
    return default
