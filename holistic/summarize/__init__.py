"""helm-summarize: groups, leaderboards, win rates with their uncertainty.

Calling the package, ``holistic.summarize(...)``, is :func:`holistic.api.summarize`.
"""

from holistic.core.callable_module import make_callable
from holistic.summarize.build import Summary, summarize_suite
from holistic.summarize.schema import SummarySchema, load_schema
from holistic.summarize.write import write_summary

__all__ = ["Summary", "SummarySchema", "load_schema", "summarize_suite", "write_summary"]

# ``holistic.summarize(...)`` is the API's :func:`holistic.api.summarize` (see :mod:`holistic.core.callable_module`).
make_callable(__name__, "holistic.api.summarizing:summarize")
