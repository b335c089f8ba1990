"""What the code scenarios (HumanEval, APPS) share when reading problems."""

from __future__ import annotations

import ast

from holistic.core.errors import DataSourceError


def check_parses(source: str, where: str, what: str) -> None:
    """Raise a :class:`DataSourceError` at ``where`` when ``source`` is not valid Python
    (parsed only, never run)."""
    try:
        ast.parse(source)
    except SyntaxError as exc:
        raise DataSourceError(f"{where}: {what} does not parse as Python: {exc.msg} (its line {exc.lineno})") from None
    except ValueError as exc:
        raise DataSourceError(f"{where}: {what} does not parse as Python: {exc}") from None
