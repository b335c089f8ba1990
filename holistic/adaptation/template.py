"""Jinja2 instance templates (``AdapterSpec.template``).

A template renders one instance block: an in-context example (with its answer) or
the evaluated instance (``output`` is then the empty string). Variables:

- ``input``: the instance input (possibly truncated to fit the context window);
- ``references``: the :class:`~holistic.core.types.Reference` objects (``.output``, ``.tags``);
- ``choices``: the reference texts, in order; ``letters``: ``A``, ``B``, ... one per choice;
- ``output``: the answer shown for an example (the correct letter for joint multiple
  choice, the first correct reference otherwise), ``""`` for the evaluated instance;
- ``passage``: for ``ranking_binary``, the passage of the pair (``""`` otherwise);
- ``instance``: the :class:`~holistic.core.types.Instance`; ``metadata``: its metadata.

Undefined variables are errors (``StrictUndefined``): the message names the unknown
variable and lists the available ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from holistic.core.errors import SpecError, did_you_mean
from holistic.core.template_limits import TemplateLimitError, TemplateProblem

TEMPLATE_VARIABLES: tuple[str, ...] = (
    "input",
    "references",
    "choices",
    "letters",
    "output",
    "passage",
    "instance",
    "metadata",
)

_UNDEFINED_RE = re.compile(r"'([^']+)' is undefined")


class InstanceTemplate:
    """A compiled instance template with clear errors for unknown variables."""

    def __init__(self, source: str) -> None:
        from holistic.core.templates import compile_template  # Jinja2 is imported by the first template

        try:
            self._template = compile_template(source)
        except TemplateProblem as exc:
            raise SpecError(f"template line {exc.line}: {exc.message}", path="adaptation.template") from None

    def render(self, variables: Mapping[str, Any]) -> str:
        import jinja2

        from holistic.core.templates import render as render_sandboxed

        try:
            return render_sandboxed(self._template, dict(variables))
        except TemplateProblem as exc:
            raise SpecError(exc.message, path="adaptation.template") from None
        except TemplateLimitError as exc:
            raise TemplateLimitError(f"adaptation.template: {exc}") from None
        except jinja2.UndefinedError as exc:
            match = _UNDEFINED_RE.search(str(exc))
            name = match.group(1) if match else str(exc)
            hint = did_you_mean(name, TEMPLATE_VARIABLES)
            suggestion = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise SpecError(
                f"template uses unknown variable {name!r} (available: {', '.join(TEMPLATE_VARIABLES)}){suggestion}",
                path="adaptation.template",
            ) from None
