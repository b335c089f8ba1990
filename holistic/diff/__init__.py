"""helm-diff: compare two result releases run by run."""

from holistic.diff.align import read_side, resolve_suite_dir
from holistic.diff.compare import DiffReport, RunDiff, diff_suites

__all__ = ["DiffReport", "RunDiff", "diff_suites", "read_side", "resolve_suite_dir"]
