"""Names shared by the code scenarios and the ``code`` metric (which runs code in the sandbox).

A code scenario tags itself :data:`EXECUTES_CODE_TAG` and stores the run's sandbox
limits (its arguments :class:`SandboxLimitArgs`) in every instance's metadata under
:data:`SANDBOX_KEY`, so the limits are part of the run's identity and of its results.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from holistic.core.arguments import arg

EXECUTES_CODE_TAG = "executes_code"
"""Scenario tag: scoring runs the model's output (only ever in the sandbox)."""

SANDBOX_KEY = "sandbox"
"""Instance metadata key holding the sandbox limits of the run."""


@dataclass(frozen=True, kw_only=True)
class SandboxLimitArgs:
    """The sandbox limit arguments every code scenario accepts (a base of the scenario's
    dataclass; see the sandbox's ``Limits``). One left out keeps the sandbox's default."""

    timeout_s: float | None = arg(None, exclusiveMinimum=0, maximum=600)
    cpu_time_s: int | None = arg(None, minimum=1, maximum=3600)
    memory_mb: int | None = arg(None, minimum=64, maximum=65536)
    max_processes: int | None = arg(None, minimum=2, maximum=1024)
    max_output_bytes: int | None = arg(None, minimum=1024, maximum=1 << 30)
    max_file_mb: int | None = arg(None, minimum=1, maximum=4096)

    @property
    def sandbox(self) -> dict[str, Any]:
        """The limit arguments given."""
        return {f.name: v for f in fields(SandboxLimitArgs) if (v := getattr(self, f.name)) is not None}
