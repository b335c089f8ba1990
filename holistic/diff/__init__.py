"""helm-diff: compare two result releases run by run.

Calling the package, ``holistic.diff(...)``, is :func:`holistic.api.diff`.
"""

from holistic.core.callable_module import make_callable
from holistic.diff.align import read_side, resolve_suite_dir
from holistic.diff.compare import DiffReport, RunDiff, diff_suites

__all__ = ["DiffReport", "RunDiff", "diff_suites", "read_side", "resolve_suite_dir"]

# ``holistic.diff(...)`` is the API's :func:`holistic.api.diff` (see :mod:`holistic.core.callable_module`).
make_callable(__name__, "holistic.api.reading:diff")
