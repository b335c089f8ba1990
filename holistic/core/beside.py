"""One piece of work done beside this process, on a CPU it leaves idle, by a forked copy of it.

A summary's files and its site are both made from the summary in memory and from nothing else,
and writing the files is pure Python (JSON, CSV, LaTeX), so threads would take turns at the GIL.
A copy of this process made by ``fork`` (Linux) starts at once with everything this one holds,
writes them while this one renders the site, and hands back its result (or its exception)
through a pipe. Where forking is not safe -- not Linux, another thread of this process running
(the copy would hold only the forking thread, and locks held by the others forever), or the
caller asked for one process -- or where no pipe or process can be had, the work is done here and
now, as a plain call would do it.

The copy runs no exit handler of this process and writes nothing this process would write again:
it ends with :func:`os._exit` once its result is sent.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

from holistic.core.errors import HolisticError

R = TypeVar("R")


def can_fork() -> bool:
    """Whether a forked copy of this process is safe to start now (Linux, and no other thread)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


class Beside(Generic[R]):
    """``fn()`` done by a forked copy of this process (or here, see the module docstring); its value
    is :meth:`result` (done here, an exception of ``fn`` is raised by the constructor). Use it in a ``with`` block: leaving the block waits for the copy, so no copy
    outlives the work it was started for, whatever happens meanwhile."""

    def __init__(self, fn: Callable[[], R], what: str, *, fork: bool = True) -> None:
        self.what = what
        self._pid = 0
        self._read = -1
        self._outcome: tuple[bool, object] | None = None
        if not (fork and can_fork() and self._fork(fn)):
            self._outcome = (True, fn())  # its exception is raised here, as a plain call's would be

    def _fork(self, fn: Callable[[], R]) -> bool:
        """Start the copy doing ``fn``; whether it started (no pipe or no process to be had -- a limit
        on descriptors, processes or memory -- leaves the work to be done here)."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        # Objects the collector scans are written to: frozen, the two processes' collections leave
        # the pages they share alone (each write to one would copy it).
        gc.freeze()
        fds: tuple[int, ...] = ()
        try:
            fds = read, write = os.pipe()
            pid = os.fork()
        except OSError:
            for fd in fds:
                os.close(fd)
            gc.unfreeze()
            return False
        if pid == 0:  # the copy: do the work, send its outcome, end without the parent's exit handlers
            status = 0
            try:
                gc.disable()
                os.close(read)
                _send(write, _call(fn))
            except BaseException:  # nothing of the copy may go on running the parent's code
                status = 1
            finally:
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(Exception):
                        stream.flush()
                os._exit(status)
        os.close(write)
        self._pid, self._read = pid, read
        return True

    @property
    def forked(self) -> bool:
        """Whether the work was handed to a forked copy (else it was done in the constructor)."""
        return self._pid != 0

    def result(self) -> R:
        """The work's value, waiting for the copy; its exception is raised here."""
        ok, value = self._wait()
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        return value  # type: ignore[return-value]

    def _wait(self) -> tuple[bool, object]:
        if self._outcome is None:
            data = bytearray()
            try:
                while chunk := os.read(self._read, 1 << 20):  # read all before waiting: a full pipe blocks the copy
                    data += chunk
            finally:
                os.close(self._read)
                _, status = os.waitpid(self._pid, 0)
                gc.unfreeze()
            self._outcome = _received(bytes(data), status, self.what)
        return self._outcome

    def __enter__(self) -> Beside[R]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._wait()


def _call(fn: Callable[[], R]) -> tuple[bool, object]:
    try:
        return True, fn()
    except Exception as exc:  # handed to the caller of result()
        return False, exc


def _send(fd: int, outcome: tuple[bool, object]) -> None:
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an exception that does not pickle is sent as its text
        data = pickle.dumps((False, HolisticError(f"{outcome[1]!r} ({exc})")))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)


def _received(data: bytes, status: int, what: str) -> tuple[bool, object]:
    """The outcome the copy sent (our own process's pickle, through a pipe only it and we hold)."""
    code = os.waitstatus_to_exitcode(status)
    if not data:
        how = f"was killed by signal {-code}" if code < 0 else f"ended with status {code}"
        return False, HolisticError(f"the process writing the {what} {how} before it was done")
    outcome = pickle.loads(data)  # written by our own forked copy, never by anyone else
    assert isinstance(outcome, tuple) and len(outcome) == 2
    return bool(outcome[0]), outcome[1]
