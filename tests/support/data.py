"""The data mirror (the authors' benchmark files) for the tests: one lookup, one way to skip.

The mirror is ``$HOLISTIC_DATA_ROOT`` when that is set, else ``../shared/data`` beside the clone
(where CI puts it). A test that reads it takes the ``data_root`` fixture (``tests/conftest.py``)
and carries the ``needs_data`` marker; when the mirror is present, such a test that skips for
want of data fails the run (so a renamed or missing file cannot hide behind a skip).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[2]

DATA_MISSING = "benchmark data not available"
"""How every skip for want of data begins (the ``needs_data`` hook recognises it)."""


def find_data_root(repo: Path = REPO) -> Path | None:
    """The data mirror of the clone at ``repo``, or ``None`` when there is none on this machine."""
    env = os.environ.get("HOLISTIC_DATA_ROOT")
    candidate = Path(env) if env else repo.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


def skip_without_data(what: str) -> NoReturn:
    """Skip the test: ``what`` (a file or folder under the mirror) is not on this machine."""
    pytest.skip(f"{DATA_MISSING}: {what} (set HOLISTIC_DATA_ROOT or place the mirror at ../shared/data)")


def need(path: Path) -> Path:
    """``path`` (under the mirror) when it exists, else skip the test naming it."""
    if not path.exists():
        skip_without_data(str(path))
    return path
