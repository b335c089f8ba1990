"""Progress: a live bar on a terminal, plain lines otherwise, nothing when quiet."""

from __future__ import annotations

import io

from holistic.execution.progress import BarProgress, LogProgress, NullProgress, make_progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _drive(progress: object) -> None:
    p = progress
    p.start_run(1, 2, "run-abc", "arithmetic:digits=1")  # type: ignore[attr-defined]
    p.set_total(20, 40)  # type: ignore[attr-defined]
    for _ in range(20):
        p.advance(1, 1, 0)  # type: ignore[attr-defined]
    p.end_run("done")  # type: ignore[attr-defined]
    p.close()  # type: ignore[attr-defined]


def test_terminal_gets_a_bar_with_rate_cache_hits_and_eta() -> None:
    stream = _Terminal()
    progress = make_progress(stream=stream)
    assert isinstance(progress, BarProgress)
    _drive(progress)
    text = stream.getvalue()
    assert "[1/2] arithmetic:digits=1" in text  # a bar shows the run by its name (helm-run: as the site does)
    assert "20/20" in text
    assert "inst/s" in text
    assert "cached=20" in text


def test_a_pipe_gets_plain_lines() -> None:
    stream = io.StringIO()
    progress = make_progress(stream=stream)
    assert isinstance(progress, LogProgress)
    _drive(progress)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[1/2] run-abc: start arithmetic:digits=1"
    assert lines[1] == "[1/2] run-abc: 20 instances, 40 requests"
    assert any("/20 instances" in line and "cached requests" in line for line in lines[2:-1])
    assert lines[-1].startswith("[1/2] run-abc: done in")
    assert "\r" not in stream.getvalue()


def test_quiet_reports_nothing() -> None:
    assert isinstance(make_progress(quiet=True, stream=_Terminal()), NullProgress)
