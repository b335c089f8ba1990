"""helm-summarize: groups, leaderboards, win rates with their uncertainty.

Calling the package, ``holistic.summarize(...)``, is :func:`holistic.api.summarize`. Its names are
imported on first use: a module of the package (its tables, its run facts) can be imported without
the whole summary, as ``helm-run`` does when it writes a run's browser bundle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from holistic.core.callable_module import make_callable

if TYPE_CHECKING:
    from holistic.summarize.build import Summary, summarize_suite
    from holistic.summarize.schema import SummarySchema, load_schema
    from holistic.summarize.write import write_summary

__all__ = ["Summary", "SummarySchema", "load_schema", "summarize_suite", "write_summary"]

_WHERE = {
    "Summary": "holistic.summarize.build",
    "summarize_suite": "holistic.summarize.build",
    "SummarySchema": "holistic.summarize.schema",
    "load_schema": "holistic.summarize.schema",
    "write_summary": "holistic.summarize.write",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'holistic.summarize' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


# ``holistic.summarize(...)`` is the API's :func:`holistic.api.summarizing.summarize` (see :mod:`holistic.core.callable_module`).
make_callable(__name__, "holistic.api.summarizing:summarize")
