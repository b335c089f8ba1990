"""Names shared by the code scenarios and the ``code`` metric (which runs code in the sandbox).

A code scenario tags itself :data:`EXECUTES_CODE_TAG` and stores the run's sandbox
limits (its arguments :data:`LIMIT_ARGS`) in every instance's metadata under
:data:`SANDBOX_KEY`, so the limits are part of the run's identity and of its results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EXECUTES_CODE_TAG = "executes_code"
"""Scenario tag: scoring runs the model's output (only ever in the sandbox)."""

SANDBOX_KEY = "sandbox"
"""Instance metadata key holding the sandbox limits of the run."""

LIMIT_ARGS: Mapping[str, Any] = {
    "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 600},
    "cpu_time_s": {"type": "integer", "minimum": 1, "maximum": 3600},
    "memory_mb": {"type": "integer", "minimum": 64, "maximum": 65536},
    "max_processes": {"type": "integer", "minimum": 2, "maximum": 1024},
    "max_output_bytes": {"type": "integer", "minimum": 1024, "maximum": 1 << 30},
    "max_file_mb": {"type": "integer", "minimum": 1, "maximum": 4096},
}
"""JSON Schema of the limit arguments every code scenario accepts (see the sandbox's ``Limits``)."""


def limit_args(values: Mapping[str, Any]) -> dict[str, Any]:
    """The limit arguments given (the others keep the sandbox's defaults)."""
    return {k: v for k, v in values.items() if k in LIMIT_ARGS and v is not None}
