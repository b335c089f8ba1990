"""Freed tensor memory kept in the process for the next forward pass.

torch allocates a CPU tensor's memory with ``malloc``. glibc serves a large block
(above 128 KiB at first) by mapping fresh pages from the kernel and unmaps them when the
block is freed, and it gives the free top of its heap back to the kernel as soon as it
passes a threshold. A forward pass of a local model allocates and frees blocks of
megabytes in every layer (activations, attention masks, the output head's logits), so
every pass faults the same memory in again, page by page, each page zeroed by the
kernel: on the embedded model's choice-by-choice scoring that was about half a million
page faults per 400 requests and a tenth of the CPU time in the kernel.

:func:`keep_freed_blocks` raises both thresholds once, when a local model is loaded:
blocks up to 32 MiB come from the heap and freed memory stays there for the next
pass. The process's peak memory is unchanged (it is what the passes use at once); its
memory after a pass stays near that peak instead of shrinking. Other C libraries
(musl, macOS, Windows) are left as they are.
"""

from __future__ import annotations

import ctypes
import platform
import sys

MMAP_THRESHOLD = 32 * 2**20
"""Blocks up to this size come from the heap (glibc's largest allowed value on 64-bit)."""
TRIM_THRESHOLD = 2**31 - 1
"""Free memory at the top of the heap kept rather than given back (mallopt takes an int)."""
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_applied: bool | None = None


def keep_freed_blocks() -> bool:
    """Set glibc's thresholds (once per process); whether they are set."""
    global _applied
    if _applied is None:
        _applied = False
        if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
            try:
                mallopt = ctypes.CDLL(None).mallopt
            except (OSError, AttributeError):
                return False
            mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            mallopt.restype = ctypes.c_int
            mapped = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
            trimmed = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
            _applied = bool(mapped and trimmed)
    return _applied
