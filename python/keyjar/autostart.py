"""Finding or starting the keyjard that serves this user's database, as Keyjar's Swift clients
do (Sources/KeyjarConnection/KeyjardLauncher.swift), so that a Python program and ``keyjar``
never start two keyjards or miss the one serving:

1. a keyjard serving the same database on another socket (a shell without XDG_RUNTIME_DIR
   beside a desktop session's) is found through ``DATABASE.keyjard`` beside the database, a
   pointer file the serving keyjard holds locked;
2. otherwise, unless ``KEYJAR_NO_AUTOSTART=1``, keyjard is started under ``autostart.lock``
   beside the socket (so concurrent clients start it once), with ``--socket`` and
   ``--database``, detached in a session of its own, and waited for until
   ``KEYJAR_START_TIMEOUT`` seconds (10) pass.

Who holds a lock is read from the kernel's table (``/proc/locks``), not by taking the lock:
taking it even for a moment could make a keyjard starting at that instant give up (the Swift
launcher's reason). Only where ``/proc/locks`` cannot be read is a non-blocking shared
``flock`` tried instead.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import subprocess
import threading
import time
from typing import Mapping, Optional, Tuple

from .errors import NotServing, Unreachable
from .socketpath import absolute, database_pointer_path, seconds_from_environment, socket_directory
from .transport import Connection

_POINTER_HEADER = "keyjar-database-pointer 1"
_POINTER_MAX_BYTES = 1024
_FIRST_PAUSE = 0.005
_LONGEST_PAUSE = 0.1


def autostart_allowed(environment: Optional[Mapping[str, str]] = None) -> bool:
    """False when ``KEYJAR_NO_AUTOSTART`` is ``1`` (``keyjar --no-start``)."""
    env = os.environ if environment is None else environment
    return env.get("KEYJAR_NO_AUTOSTART", "") != "1"


def start_timeout(environment: Optional[Mapping[str, str]] = None) -> float:
    return seconds_from_environment("KEYJAR_START_TIMEOUT", 10.0, environment)


def _is_executable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_keyjard(environment: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """``$KEYJAR_KEYJARD``, else ``keyjard`` beside the ``keyjar`` found on PATH (or beside the
    file that ``keyjar`` links to), else ``keyjard`` on PATH. Only absolute PATH entries count:
    ``.`` or an empty entry would run whatever ``keyjard`` the working directory holds, with
    every secret of the user."""
    env = os.environ if environment is None else environment
    explicit = env.get("KEYJAR_KEYJARD", "")
    if explicit and _is_executable_file(absolute(explicit)):
        return absolute(explicit)
    directories = [d for d in env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":") if d.startswith("/")]
    for directory in directories:
        front = os.path.join(directory, "keyjar")
        if _is_executable_file(front):
            for beside in (directory, os.path.dirname(os.path.realpath(front))):
                candidate = os.path.join(beside, "keyjard")
                if _is_executable_file(candidate):
                    return candidate
            break
    for directory in directories:
        candidate = os.path.join(directory, "keyjard")
        if _is_executable_file(candidate):
            return candidate
    return None


def lock_holder(path: str) -> Optional[int]:
    """The pid holding an ``flock`` on ``path``; None when nobody does (or it cannot be told)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    try:
        with open("/proc/locks", "rb") as table:
            text = table.read().decode("ascii", "replace")
    except OSError:
        return _probe_lock(path)
    # The kernel prints the file as major:minor:inode, the numbers in at least two hex digits.
    wanted = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    for line in text.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; "1: -> FLOCK ..." lines are waiters.
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted:
            try:
                return int(fields[4])
            except ValueError:
                continue
    return None


def _probe_lock(path: str) -> Optional[int]:
    """Without /proc/locks: whether a shared lock can be had at once; if not, somebody holds
    it exclusively, whose pid the file names (keyjard.lock holds it; a pointer its line)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None
            text = os.read(descriptor, _POINTER_MAX_BYTES).decode("utf-8", "replace")
            for word in text.replace("pid ", " ").split():
                if word.isdigit() and int(word) > 0:
                    return int(word)
            return None
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return None
    finally:
        os.close(descriptor)


def read_pointer(path: str) -> Optional[Tuple[str, int]]:
    """The (socket, pid) a ``DATABASE.keyjard`` pointer names, when it is a small regular file of
    this user's not reached through a link (another user cannot make a client follow theirs)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not (stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()):
            return None
        if info.st_size > _POINTER_MAX_BYTES:
            return None
        data = os.read(descriptor, _POINTER_MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    lines = data.decode("utf-8", "replace").split("\n")
    if len(lines) < 3 or lines[0] != _POINTER_HEADER or not lines[1].startswith("socket /"):
        return None
    if not lines[2].startswith("pid "):
        return None
    try:
        pid = int(lines[2][4:])
    except ValueError:
        return None
    return (lines[1][7:], pid) if pid > 0 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, but not ours to signal
    return True


def answers(socket_path: str, timeout: float = 1.0) -> bool:
    """Whether a keyjard of this user accepts on ``socket_path`` now (checked as every socket
    is). A socket that fails the checks raises ``SocketRefused``: no keyjard may replace it."""
    try:
        Connection.open(socket_path, timeout).close()
    except NotServing:
        return False
    return True


class _Pause:
    """Short, growing pauses between looks at a condition (a lock's holder, a socket)."""

    def __init__(self) -> None:
        self._next = _FIRST_PAUSE

    def __call__(self, deadline: float) -> None:
        time.sleep(max(0.0, min(self._next, deadline - time.monotonic())))
        self._next = min(self._next * 2, _LONGEST_PAUSE)


def serving_elsewhere(socket_path: str, database: str, deadline: float) -> Optional[str]:
    """The socket of the keyjard serving ``database`` when that is not ``socket_path``: its
    pointer held by a live process, answering there. One that holds the database but does not
    answer yet is waited for until ``deadline`` while it lives."""
    pointer_path = database_pointer_path(database)
    pause = _Pause()
    while True:
        holder = lock_holder(pointer_path)
        if holder is None:
            return None
        pointer = read_pointer(pointer_path)
        if pointer is None or pointer[0] == socket_path:
            return None
        try:
            if answers(pointer[0]):
                return pointer[0]
        except Unreachable:
            return None  # a pointer to a socket that fails the checks is no keyjard of ours
        if time.monotonic() >= deadline or not _alive(holder):
            return None
        pause(deadline)


def serving_now(socket_path: str, database: str) -> Optional[str]:
    """Where a keyjard serving this database answers now, starting none and waiting for none."""
    if answers(socket_path):
        return socket_path
    return serving_elsewhere(socket_path, database, time.monotonic())


def _wait_for_starting_keyjard(lock_path: str, socket_path: str, deadline: float) -> bool:
    """While a live process holds keyjard's serving lock, wait for the socket to answer (True)
    or the deadline (``Unreachable``); False at once when nobody holds it, or its holder dies."""
    holder = lock_holder(lock_path)
    if holder is None:
        return False
    pause = _Pause()
    while time.monotonic() < deadline:
        if answers(socket_path):
            return True
        if not _alive(holder):
            holder = lock_holder(lock_path)
            if holder is None:
                return False
        pause(deadline)
    raise Unreachable(
        f"keyjard (pid {holder}) holds {lock_path} but did not start serving {socket_path} in time"
    )


def _make_missing_directories(path: str) -> None:
    """mkdir 0700 of each missing ancestor, outermost first (``os.makedirs`` would make the
    parents with the umask's mode); one made meanwhile by another process is fine."""
    missing = []
    current = path
    while current and current != "/" and not os.path.lexists(current):
        missing.append(current)
        current = os.path.dirname(current)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass


def make_private_directory(path: str) -> None:
    """The socket's directory, made 0700 with missing parents; an existing one must be a real
    directory of this user, and is tightened to 0700 (as keyjard and the Swift client do)."""
    try:
        _make_missing_directories(path)
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise Unreachable(f"keyjard cannot be started: the socket directory {path}: {error.strerror}") from None
    try:
        info = os.fstat(descriptor)
        if info.st_uid != os.geteuid():
            raise Unreachable(
                f"keyjard cannot be started: {path} belongs to uid {info.st_uid}, not to you"
            )
        if info.st_mode & 0o777 != 0o700:
            os.fchmod(descriptor, 0o700)
    finally:
        os.close(descriptor)


def _lock_exclusively(descriptor: int, path: str, deadline: float) -> None:
    """``autostart.lock``, waiting for another client's start at most until ``deadline``."""
    pause = _Pause()
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                raise Unreachable(f"cannot lock {path}: {error.strerror}") from None
        if time.monotonic() >= deadline:
            raise Unreachable(f"another client kept {path} locked while starting keyjard")
        pause(deadline)


def not_found_message(socket_path: str, environment: Optional[Mapping[str, str]] = None) -> str:
    """Why no keyjard can be started, and the ways to provide one."""
    env = os.environ if environment is None else environment
    message = f"no keyjard answers at {socket_path} and none was found to start"
    if env.get("KEYJAR_KEYJARD"):
        message += f" (KEYJAR_KEYJARD is {env['KEYJAR_KEYJARD']!r}, which is not an executable file)"
    return message + ": set KEYJAR_KEYJARD to keyjard's path, or install keyjard on PATH"


def _last_log_line(log_path: str) -> str:
    try:
        with open(log_path, "rb") as log:
            log.seek(max(0, os.fstat(log.fileno()).st_size - 4096))
            lines = log.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""


def _spawn(binary: str, socket_path: str, database: str, log_path: str, deadline: float) -> None:
    """Starts keyjard detached (its own session, stdin and stdout /dev/null, stderr appended to
    ``keyjard.log`` beside the socket) and waits until it answers; ``Unreachable`` when it stops
    or the deadline passes first."""
    try:
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    except OSError:
        log = subprocess.DEVNULL
    try:
        process = subprocess.Popen(
            [binary, "--socket", socket_path, "--database", database],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            close_fds=True,
            start_new_session=True,  # outlives this process and its terminal
            cwd="/",
        )
    except OSError as error:
        raise Unreachable(f"cannot start keyjard ({binary}): {error.strerror or error}") from None
    finally:
        if isinstance(log, int) and log >= 0:
            os.close(log)
    try:
        pause = _Pause()
        while time.monotonic() < deadline:
            if answers(socket_path):
                return
            if process.poll() is not None:
                break  # it stopped (lost the race for the serving lock, or failed)
            pause(deadline)
        raise Unreachable(f"keyjard ({binary}) did not become ready; see {log_path}{_last_log_line(log_path)}")
    finally:
        if process.returncode is None:
            # Reaps keyjard whenever it exits, so that a long-lived program leaves no zombie.
            threading.Thread(target=process.wait, name="keyjard-reaper", daemon=True).start()


def ensure_running(socket_path: str, database: str, timeout: Optional[float] = None) -> str:
    """Makes sure a keyjard serves ``database``, starting one on ``socket_path`` if none does;
    returns the socket it answers on (``socket_path``, unless one serves the database elsewhere).
    """
    timeout = start_timeout() if timeout is None else timeout
    directory = socket_directory(socket_path)
    make_private_directory(directory)
    lock_path = os.path.join(directory, "autostart.lock")
    try:
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise Unreachable(f"cannot open {lock_path}: {error.strerror}") from None
    try:
        _lock_exclusively(lock, lock_path, time.monotonic() + timeout)
        if answers(socket_path):
            return socket_path
        deadline = time.monotonic() + timeout
        server_lock = os.path.join(directory, "keyjard.lock")
        if _wait_for_starting_keyjard(server_lock, socket_path, deadline):
            return socket_path
        elsewhere = serving_elsewhere(socket_path, database, deadline)
        if elsewhere:
            return elsewhere
        binary = find_keyjard()
        if binary is None:
            raise Unreachable(not_found_message(socket_path))
        # Ours may lose the race for the serving lock to one started meanwhile (then that one
        # is waited for), which may itself stop before serving: look again after each, a few
        # times, as the Swift launcher does.
        attempts = 0
        while True:
            attempts += 1
            try:
                _spawn(binary, socket_path, database, os.path.join(directory, "keyjard.log"), deadline)
                return socket_path
            except Unreachable:
                if _wait_for_starting_keyjard(server_lock, socket_path, deadline) or answers(socket_path):
                    return socket_path
                elsewhere = serving_elsewhere(socket_path, database, deadline)
                if elsewhere:
                    return elsewhere
                if attempts >= 3 or time.monotonic() >= deadline:
                    raise
    finally:
        os.close(lock)  # closing releases the flock
