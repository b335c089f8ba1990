"""holistic: holistic evaluation of language models.

The Python API (:mod:`holistic.api`) is available here too: ``holistic.plan``, ``holistic.run``,
``holistic.summarize``, ``holistic.diff`` and ``holistic.load``, with the option types
``holistic.RunOptions``, ``holistic.SpecLimits`` and ``holistic.SummarizeOptions``. They are
imported on first use, so ``import holistic`` stays light.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from holistic.core.version import __version__

if TYPE_CHECKING:
    from holistic.api import RunOptions, SpecLimits, SummarizeOptions, diff, load, plan, run, summarize

_API = frozenset({"plan", "run", "summarize", "diff", "load", "RunOptions", "SpecLimits", "SummarizeOptions"})

__all__ = ["RunOptions", "SpecLimits", "SummarizeOptions", "__version__", "diff", "load", "plan", "run", "summarize"]


def __getattr__(name: str) -> Any:
    """``holistic.run`` and the rest of the API's front door, imported from :mod:`holistic.api` on first use."""
    package = sys.modules.get(f"{__name__}.{name}")
    if package is not None:
        # ``holistic.diff`` and ``holistic.summarize`` are packages too: while one is being imported
        # (its name not yet bound here), ``import holistic.diff.x as x`` must find the package.
        return package
    if name in _API:
        from holistic import api

        return getattr(api, name)
    raise AttributeError(f"module 'holistic' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
