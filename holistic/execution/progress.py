"""Progress reporting: a live bar per run on a terminal, plain log lines otherwise.

The runner talks to a :class:`Progress`; :func:`make_progress` picks the right one:
``tqdm`` bars (instances/s, cache hits, errors, ETA) when the stream is a terminal,
one line per run start, every ~10% and per run end when it is not (CI logs, files),
and nothing with ``quiet``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any, Protocol, TextIO

from holistic.core.naming import cut

_BAR_NAME_WIDTH = 48
"""Widest a run's name is in a progress bar's description (the bar takes the rest of the line)."""


class Progress(Protocol):
    def start_run(self, index: int, total_runs: int, run_id: str, name: str) -> None: ...

    def set_total(self, instances: int, requests: int) -> None: ...

    def advance(self, instances: int, cache_hits: int, errors: int) -> None: ...

    def end_run(self, status: str, detail: str = "") -> None: ...

    def message(self, text: str) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    """Reports nothing (``--quiet``)."""

    def start_run(self, index: int, total_runs: int, run_id: str, name: str) -> None:
        pass

    def set_total(self, instances: int, requests: int) -> None:
        pass

    def advance(self, instances: int, cache_hits: int, errors: int) -> None:
        pass

    def end_run(self, status: str, detail: str = "") -> None:
        pass

    def message(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


class _Counts:
    def __init__(self) -> None:
        self.reset(0)

    def reset(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.hits = 0
        self.errors = 0
        self.started = time.monotonic()


class LogProgress:
    """Plain lines for non-terminals: start, every ~10%, end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.counts = _Counts()
        self.label = ""
        self._next_report = 0

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def start_run(self, index: int, total_runs: int, run_id: str, name: str) -> None:
        self.counts.reset(0)
        self.label = f"[{index}/{total_runs}] {run_id}"
        self._write(f"{self.label}: start {name}")

    def set_total(self, instances: int, requests: int) -> None:
        self.counts.total = instances
        self._next_report = max(1, instances // 10)
        self._write(f"{self.label}: {instances} instances, {requests} requests")

    def advance(self, instances: int, cache_hits: int, errors: int) -> None:
        c = self.counts
        c.done += instances
        c.hits += cache_hits
        c.errors += errors
        if c.done >= self._next_report and c.done < c.total:
            self._next_report = c.done + max(1, c.total // 10)
            rate = c.done / max(time.monotonic() - c.started, 1e-9)
            self._write(
                f"{self.label}: {c.done}/{c.total} instances ({rate:.1f}/s, {c.hits} cached requests, {c.errors} errors)"
            )

    def end_run(self, status: str, detail: str = "") -> None:
        c = self.counts
        elapsed = time.monotonic() - c.started
        self._write(
            f"{self.label}: {status} in {elapsed:.1f}s ({c.hits} cached requests, {c.errors} errors)"
            + (f" {detail}" if detail else "")
        )

    def message(self, text: str) -> None:
        self._write(text)

    def close(self) -> None:
        pass


class BarProgress:
    """A tqdm bar per run (instances, rate, ETA; cache hits and errors as postfix)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.bar: Any = None
        self.counts = _Counts()

    def start_run(self, index: int, total_runs: int, run_id: str, name: str) -> None:
        from tqdm import tqdm

        self.close()
        self.counts.reset(0)
        self.bar = tqdm(
            total=None,
            desc=f"[{index}/{total_runs}] {cut(name, _BAR_NAME_WIDTH)}",
            unit="inst",
            file=self.stream,
            dynamic_ncols=True,
            leave=True,
        )
        self.bar.set_postfix(cached=0, errors=0)

    def set_total(self, instances: int, requests: int) -> None:
        self.counts.total = instances
        if self.bar is not None:
            self.bar.reset(total=instances)
            self.bar.set_postfix(cached=0, errors=0)

    def advance(self, instances: int, cache_hits: int, errors: int) -> None:
        c = self.counts
        c.hits += cache_hits
        c.errors += errors
        if self.bar is not None:
            self.bar.set_postfix(cached=c.hits, errors=c.errors, refresh=False)
            self.bar.update(instances)

    def end_run(self, status: str, detail: str = "") -> None:
        if self.bar is not None:
            c = self.counts
            self.bar.set_postfix_str(
                f"cached={c.hits}, errors={c.errors}, {status}" + (f": {detail}" if detail else "")
            )
            self.bar.close()
            self.bar = None

    def message(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class NamedProgress:
    """``inner``, told each run's name as people read it (``names``: run id -> name, as the site,
    ``--plan`` and the closing scores name runs) instead of its full ``RunSpec.name``."""

    def __init__(self, inner: Progress, names: Mapping[str, str]) -> None:
        self.inner = inner
        self.names = names

    def start_run(self, index: int, total_runs: int, run_id: str, name: str) -> None:
        self.inner.start_run(index, total_runs, run_id, self.names.get(run_id, name))

    def set_total(self, instances: int, requests: int) -> None:
        self.inner.set_total(instances, requests)

    def advance(self, instances: int, cache_hits: int, errors: int) -> None:
        self.inner.advance(instances, cache_hits, errors)

    def end_run(self, status: str, detail: str = "") -> None:
        self.inner.end_run(status, detail)

    def message(self, text: str) -> None:
        self.inner.message(text)

    def close(self) -> None:
        self.inner.close()


def make_progress(*, quiet: bool = False, stream: TextIO | None = None) -> Progress:
    """The reporter for ``stream`` (stderr by default): bar on a terminal, lines otherwise."""
    if quiet:
        return NullProgress()
    out = stream if stream is not None else sys.stderr
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        return BarProgress(out)
    return LogProgress(out)
