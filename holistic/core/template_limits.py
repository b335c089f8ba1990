"""What a user template may spend, and the errors of templates: the part of
:mod:`holistic.core.templates` that does not need Jinja2, so that reading a spec, planning and
starting a run import Jinja2 only when a template is compiled."""

from __future__ import annotations

from dataclasses import dataclass

from holistic.core.errors import LimitError


class TemplateProblem(ValueError):
    """A template that does not compile or reaches for something it must not; ``line`` is 1-based."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class TemplateLimits:
    """What one render of a user template may spend (see the module docstring)."""

    max_chars: int = 10_000_000
    """Characters one render may produce, and the size of any one value it builds
    (``helm-run --max-template-chars``)."""
    max_steps: int = 1_000_000
    """Loop iterations plus calls (filters, macros, methods) per render (``--max-template-steps``)."""
    max_depth: int = 50
    """Nesting of macro calls and recursive loops (``--max-template-depth``)."""


class TemplateLimitError(LimitError):
    """A render went past one of its :class:`TemplateLimits`."""


_limits = [TemplateLimits()]


def configure(limits: TemplateLimits) -> None:
    """Set the budget of every later render in this process (the command line calls this once)."""
    _limits[0] = limits


def limits() -> TemplateLimits:
    """The budget renders use now."""
    return _limits[0]
