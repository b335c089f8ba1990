"""One writer per suite: an advisory lock on ``<suite>/.lock``.

For a suite in a local folder (:class:`SuiteLock`):

The lock is an ``flock`` on the file, so the operating system releases it when its
holder exits, however it exits (``kill -9`` included): a lock left by a dead process is
simply taken over. The file records who holds it (pid, host, command, start time) so a
second ``helm-run`` on the same suite can say whom it waits for, or, with ``--no-wait``,
stop at once with exit 2.

For a suite on a URI (:class:`ObjectStoreLock`) there is no kernel to lock with. The lock
is the ``.lock`` object itself, created with an exclusive create (fsspec ``mode="xb"``:
S3's ``If-None-Match`` conditional write, a local ``O_EXCL``...) and holding its holder's
host, pid, start time and a random token; it is deleted on release. Limits: where the
filesystem has no exclusive create, holistic writes the object and reads it back, which
catches most but not all races between two writers starting at the same instant; and a
holder killed with ``kill -9`` (or a lost machine) leaves its lock behind — it is taken
over automatically only when it names this host and a process that no longer runs,
otherwise the message says which object to delete once that writer is known to be gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Generic, Self, TypeVar

from holistic.core.errors import StoreError
from holistic.results.fs import Location, UriPath
from holistic.results.layout import LOCK_FILE


class SuiteLockedError(StoreError):
    """Another process writes this suite (and we were told not to wait)."""


def _describe(info: dict[str, object]) -> str:
    if not info:
        return "another process"
    parts = [f"pid {info.get('pid')}"]
    if info.get("host"):
        parts.append(f"on {info.get('host')}")
    if info.get("started"):
        parts.append(f"since {info.get('started')}")
    if info.get("command"):
        parts.append(f"({info.get('command')})")
    return " ".join(parts)


def _holder_info() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200],
    }


def _default_on_wait(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def suite_lock(
    suite_dir: Location, *, wait: bool = True, poll_s: float = 0.5, on_wait: Callable[[str], None] | None = None
) -> SuiteLock | ObjectStoreLock:
    """The lock that fits where the suite lives: a kernel lock for a folder, a lock object for a URI."""
    if isinstance(suite_dir, UriPath):
        return ObjectStoreLock(suite_dir, wait=wait, poll_s=max(poll_s, 1.0), on_wait=on_wait)
    return SuiteLock(suite_dir, wait=wait, poll_s=poll_s, on_wait=on_wait)


_Where = TypeVar("_Where", Path, UriPath)


class _Lock(Generic[_Where]):
    """What both suite locks share: the lock file, how to wait for it, its holder, ``with``."""

    def __init__(self, path: _Where, *, wait: bool, poll_s: float, on_wait: Callable[[str], None] | None) -> None:
        self.path: _Where = path
        self.wait = wait
        self.poll_s = poll_s
        self.on_wait = on_wait or _default_on_wait

    def holder(self) -> dict[str, object]:
        """What the lock file says about its holder (``{}`` when there is none or it is unreadable)."""
        try:
            data = json.loads(self.path.read_bytes().decode("utf-8") or "{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def acquire(self) -> None:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class SuiteLock(_Lock[Path]):
    """``with SuiteLock(suite_dir): ...`` — held for the whole execution of a suite."""

    def __init__(
        self, suite_dir: Path, *, wait: bool = True, poll_s: float = 0.5, on_wait: Callable[[str], None] | None = None
    ) -> None:
        super().__init__(Path(suite_dir) / LOCK_FILE, wait=wait, poll_s=poll_s, on_wait=on_wait)
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot create the suite lock {self.path}: {exc.strerror or exc}") from None
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                who = _describe(self.holder())
                if not self.wait:
                    os.close(fd)
                    raise SuiteLockedError(
                        f"suite {self.path.parent.name!r} is being written by {who}; wait for it to finish "
                        f"(omit --no-wait) or use another --suite"
                    ) from None
                if not told:
                    self.on_wait(f"waiting for suite {self.path.parent.name!r}: it is being written by {who}")
                    told = True
                time.sleep(self.poll_s)
            except OSError as exc:
                os.close(fd)
                raise StoreError(f"cannot lock {self.path}: {exc.strerror or exc}") from None
        info = _holder_info()
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _process_gone(info: dict[str, object]) -> bool:
    """Whether a lock's holder ran on this host and no longer does."""
    if info.get("host") != socket.gethostname():
        return False
    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


class ObjectStoreLock(_Lock[UriPath]):
    """``with ObjectStoreLock(suite_uri): ...`` — the suite lock on a store without kernel locks."""

    def __init__(
        self,
        suite_dir: UriPath,
        *,
        wait: bool = True,
        poll_s: float = 1.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(suite_dir / LOCK_FILE, wait=wait, poll_s=poll_s, on_wait=on_wait)
        self._token: str | None = None

    def _try_create(self, payload: bytes, token: str) -> bool:
        """Create the lock object if absent; whether we now hold it."""
        try:
            with self.path.open("xb") as fh:
                fh.write(payload)
            return True
        except FileExistsError:
            return False
        except (ValueError, NotImplementedError, TypeError):
            pass  # no exclusive create on this filesystem: write, then read back (see the module notes)
        if self.path.exists():
            return False
        self.path.write_bytes(payload)
        time.sleep(0.2)  # let a writer that raced us land its own object, then see whose survived
        return self.holder().get("token") == token

    def acquire(self) -> None:
        token = uuid.uuid4().hex
        payload = json.dumps({**_holder_info(), "token": token}).encode("utf-8")
        suite = self.path.parent.name
        told = False
        while True:
            try:
                if self._try_create(payload, token):
                    break
            except OSError as exc:
                raise StoreError(
                    f"cannot create the suite lock {self.path}: {self.path.redact(exc.strerror or str(exc))}"
                ) from None
            info = self.holder()
            if info and _process_gone(info):
                self.on_wait(f"suite {suite!r}: taking over the lock left by {_describe(info)} (no longer running)")
                with contextlib.suppress(OSError):
                    self.path.unlink(missing_ok=True)
                continue
            who = _describe(info)
            if not self.wait:
                raise SuiteLockedError(
                    f"suite {suite!r} is being written by {who}; wait for it to finish (omit --no-wait) or use "
                    f"another --suite (if that writer is gone for good, delete {self.path})"
                )
            if not told:
                self.on_wait(
                    f"waiting for suite {suite!r}: it is being written by {who} "
                    f"(if that writer is gone for good, delete {self.path})"
                )
                told = True
            time.sleep(self.poll_s)
        self._token = token

    def release(self) -> None:
        token, self._token = self._token, None
        if token is None:
            return
        if self.holder().get("token") == token:
            with contextlib.suppress(OSError):
                self.path.unlink(missing_ok=True)
