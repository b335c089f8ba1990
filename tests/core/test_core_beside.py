"""Work done by a forked copy of this process: its value or its exception comes back to the caller,
a copy that dies is reported, no copy outlives its block, and where forking is unsafe the work is a
plain call."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from holistic.core import beside
from holistic.core.beside import Beside, can_fork
from holistic.core.errors import HolisticError, StoreError
from holistic.results import SuiteReader
from tests.support.fake_suite import FakeRun, rewrite_run, write_fake_suite

LINUX = sys.platform.startswith("linux") and hasattr(os, "fork")
F = TypeVar("F", bound=Callable[..., None])


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Earlier tests in this process may leave an idle thread behind (tqdm's monitor): the test forks
    anyway, as the only thread that runs anything is the test's own."""
    monkeypatch.setattr(beside, "can_fork", lambda: True)


def needs_fork(test: F) -> F:
    """A test of the forked copy: on Linux only, forking whatever idle threads are about."""
    marked = pytest.mark.usefixtures("forking")(test)
    return pytest.mark.skipif(not LINUX, reason="a copy of the process is forked on Linux only")(marked)  # type: ignore[no-any-return]


@needs_fork
def test_the_value_comes_from_another_process_and_is_a_large_one_whole() -> None:
    big = ["x" * 100] * 50_000  # ~5 MB pickled: more than a pipe holds, read while the copy writes
    with Beside(lambda: (os.getpid(), big), "test") as work:
        assert work.forked
        pid, value = work.result()
    assert pid != os.getpid()
    assert value == big
    assert work.result()[1] == big  # asked again: the same outcome, not a second wait


@needs_fork
def test_the_copys_exception_is_raised_by_result_with_its_type_and_message() -> None:
    def fail() -> None:
        raise StoreError("cannot write the summary in /nowhere: read-only")

    with Beside(fail, "summary") as work, pytest.raises(StoreError, match="read-only"):
        work.result()


@needs_fork
def test_a_copy_killed_before_it_answered_is_a_clear_error() -> None:
    parent = os.getpid()

    def die() -> None:
        if os.getpid() != parent:  # never the test's own process
            os.kill(os.getpid(), signal.SIGKILL)

    with (
        Beside(die, "summary") as work,
        pytest.raises(HolisticError, match="writing the summary was killed by signal 9"),
    ):
        work.result()


@needs_fork
def test_an_exception_that_does_not_pickle_comes_back_as_its_text() -> None:
    class Local(Exception):  # a class defined in a function does not pickle
        pass

    def fail() -> None:
        raise Local("the cause")

    with Beside(fail, "test") as work, pytest.raises(HolisticError, match="the cause"):
        work.result()


@needs_fork
def test_leaving_the_block_on_an_error_waits_for_the_copy(tmp_path: Path) -> None:
    done = tmp_path / "done"

    def slow() -> None:
        import time

        time.sleep(0.3)
        done.write_text("yes", encoding="utf-8")

    with pytest.raises(RuntimeError, match="the caller's own"), Beside(slow, "test") as work:
        pid = work._pid
        raise RuntimeError("the caller's own error")
    assert done.read_text(encoding="utf-8") == "yes"
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no copy left behind


def test_with_another_thread_running_or_fork_false_the_work_is_a_plain_call() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not can_fork()
        work = Beside(os.getpid, "test")
        assert not work.forked and work.result() == os.getpid()
    finally:
        stop.set()
        other.join()
    assert not Beside(os.getpid, "test", fork=False).forked


@needs_fork
def test_no_process_to_be_had_leaves_the_work_to_this_one(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    frozen, fds = gc.get_freeze_count(), len(os.listdir("/proc/self/fd"))
    work = Beside(os.getpid, "test")
    assert not work.forked and work.result() == os.getpid()
    assert gc.get_freeze_count() == frozen  # the collector as it was
    assert len(os.listdir("/proc/self/fd")) == fds  # the pipe closed


def test_done_here_an_exception_is_raised_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(beside, "can_fork", lambda: False)

    def fail() -> None:
        raise StoreError("at once")

    with pytest.raises(StoreError, match="at once"):
        Beside(fail, "test")


RUNS = [FakeRun(sc, f"model/{i}", skill=0.3 + 0.2 * i, num_instances=20) for sc in ("alpha", "beta") for i in range(2)]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_fork
def test_a_summary_written_beside_the_site_is_the_one_one_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holistic.api import SummarizeOptions, summarize

    suite = write_fake_suite(tmp_path, "s", RUNS)
    forks: list[bool] = []
    real = beside.Beside.__init__

    def noting(self: Beside[object], *args: object, **kwargs: object) -> None:
        real(self, *args, **kwargs)  # type: ignore[arg-type]
        forks.append(self.forked)

    monkeypatch.setattr(beside.Beside, "__init__", noting)
    one = summarize(suite, options=SummarizeOptions(num_bootstrap=20, jobs=1))
    alone = _files(one.summary_dir)
    rewrite_run(tmp_path, "s", RUNS[1], seed=3)
    rewrite_run(tmp_path, "s", RUNS[1], seed=0)  # back to the same results, new files
    two = summarize(suite, options=SummarizeOptions(num_bootstrap=20, jobs=2))
    assert forks == [False, True]
    assert _files(two.summary_dir) == alone
    assert sorted(two.files) == sorted(one.files)
    assert two.site_index is not None and two.site_index.is_file()
    assert SuiteReader(suite).summary_dir == two.summary_dir


@needs_fork
def test_a_summary_the_copy_cannot_write_fails_the_summarize_and_the_site_is_still_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holistic.api import SummarizeOptions, summarize
    from holistic.summarize import write as summary_write

    suite = write_fake_suite(tmp_path, "s", RUNS)

    def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("cannot write the summary: the disk is full")

    monkeypatch.setattr(summary_write, "_write_into", broken)
    with pytest.raises(StoreError, match="the disk is full"):
        summarize(suite, options=SummarizeOptions(num_bootstrap=20, jobs=2))
    reader = SuiteReader(suite)
    assert not (reader.summary_dir / "summary.json").exists()
    assert (reader.site_dir / "index.html").is_file()
