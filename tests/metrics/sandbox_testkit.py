"""Shared helpers for the sandbox tests: skip without the sandbox, find leftover processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from holistic.metrics.sandbox import sandbox_problem


@pytest.fixture
def sandbox() -> None:
    problem = sandbox_problem()
    if problem is not None:
        pytest.skip(f"the OS sandbox is not available here: {problem}")


def processes_in(folder_name: str) -> list[int]:
    """Host pids of live processes whose working directory ends with ``folder_name``
    (a sandboxed program marks its processes by working in a folder of that name)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if cwd.endswith("/" + folder_name) and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(folder_name: str, seconds: float = 3.0) -> list[int]:
    """The marked processes still alive after ``seconds`` (empty: all gone)."""
    deadline = time.monotonic() + seconds
    while True:
        left = processes_in(folder_name)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)
