"""One writer per suite: an advisory lock on ``<suite>/.lock``.

The lock is an ``flock`` on the file, so the operating system releases it when its
holder exits, however it exits (``kill -9`` included): a lock left by a dead process is
simply taken over. The file records who holds it (pid, host, command, start time) so a
second ``helm-run`` on the same suite can say whom it waits for, or, with ``--no-wait``,
stop at once with exit 2.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from holistic.core.errors import StoreError
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


class SuiteLock:
    """``with SuiteLock(suite_dir): ...`` — held for the whole execution of a suite."""

    def __init__(
        self, suite_dir: Path, *, wait: bool = True, poll_s: float = 0.5, on_wait: Callable[[str], None] | None = None
    ) -> None:
        self.path = Path(suite_dir) / LOCK_FILE
        self.wait = wait
        self.poll_s = poll_s
        self.on_wait = on_wait or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self._fd: int | None = None

    def holder(self) -> dict[str, object]:
        """What the lock file says about its holder (``{}`` when unknown)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

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
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200],
        }
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

    def __enter__(self) -> SuiteLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
