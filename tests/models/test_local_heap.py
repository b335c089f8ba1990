"""Freed memory stays in the process once a local model is loaded (glibc's malloc)."""

from __future__ import annotations

import platform
import resource
import sys

import numpy as np
import pytest

from holistic.models.heap import keep_freed_blocks

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only"
)


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _one_pass() -> None:
    """What a layer-by-layer forward pass does to the heap: blocks of megabytes, written, all freed."""
    blocks = [np.ones(3 * 2**20 // 8) for _ in range(10)]
    del blocks


def test_memory_freed_by_one_pass_is_reused_by_the_next_without_faulting_its_pages_in_again() -> None:
    assert keep_freed_blocks()
    assert keep_freed_blocks()  # once per process; asking again is harmless
    for _ in range(2):  # the first passes fault their memory in
        _one_pass()
    before = _faults()
    for _ in range(3):
        _one_pass()
    # Without the thresholds glibc gives the freed top of its heap back to the kernel after
    # every pass and each pass faults its 7,680 pages in again.
    assert _faults() - before < 500
