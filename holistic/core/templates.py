"""The one Jinja2 environment for user templates: sandboxed, immutable, strict.

Run specs and datasets are data a user may have been sent by someone else, so a
template in them (``adaptation.template``, a ``file`` scenario's ``template``) must
not reach Python internals. Every user template compiles in :func:`environment`, an
:class:`~jinja2.sandbox.ImmutableSandboxedEnvironment`: attributes starting with
``_``, function internals and mutating methods are refused while rendering.

:func:`template_problem` also finds the known escapes *statically* (a ``__dunder__``
attribute or item, ``attr('__x__')``, a format string reaching an attribute), so
``helm-run`` and ``--plan`` can reject them with the spec's file and line before any
run starts.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = ["SecurityError", "TemplateProblem", "compile_template", "environment", "template_problem"]

_UNSAFE_FILTERS = frozenset({"attr"})
_FORMAT_FIELD_RE = re.compile(r"\{[^{}]*[.\[][^{}]*\}")


class TemplateProblem(ValueError):
    """A template that does not compile or reaches for something it must not; ``line`` is 1-based."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    """The shared sandboxed environment (undefined variables are errors)."""
    return ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def _unsafe_name(name: object) -> bool:
    return isinstance(name, str) and (name.startswith("_") or name in {"mro", "func_globals", "gi_frame", "f_globals"})


def template_problem(source: str) -> TemplateProblem | None:
    """Why ``source`` cannot be used as a user template (``None`` when it can)."""
    env = environment()
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return TemplateProblem(f"template syntax error: {exc.message}", exc.lineno)
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter, nodes.Const, nodes.Call)):
        line = getattr(node, "lineno", None)
        if isinstance(node, nodes.Getattr) and _unsafe_name(node.attr):
            return TemplateProblem(
                f"template reaches for the internal attribute {node.attr!r}, which is not allowed "
                "(templates render in a sandbox)",
                line,
            )
        if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and _unsafe_name(node.arg.value):
            return TemplateProblem(
                f"template reaches for the internal item {node.arg.value!r}, which is not allowed "
                "(templates render in a sandbox)",
                line,
            )
        if isinstance(node, nodes.Filter) and node.name in _UNSAFE_FILTERS:
            names = [a.value for a in node.args if isinstance(a, nodes.Const)]
            if not names or any(_unsafe_name(n) for n in names):
                return TemplateProblem(
                    f"template uses the filter {node.name!r} with a computed or internal name, "
                    "which is not allowed (templates render in a sandbox)",
                    line,
                )
        if (
            isinstance(node, nodes.Call)
            and isinstance(node.node, nodes.Getattr)
            and node.node.attr in {"format", "format_map"}
            and isinstance(node.node.node, nodes.Const)
            and isinstance(node.node.node.value, str)
            and _FORMAT_FIELD_RE.search(node.node.node.value)
        ):
            return TemplateProblem(
                "template calls str.format with a field that reaches into an object, which is "
                "not allowed (templates render in a sandbox)",
                line,
            )
    return None


def compile_template(source: str) -> jinja2.Template:
    """``source`` compiled in the sandbox; :class:`TemplateProblem` when it is unsafe or invalid."""
    problem = template_problem(source)
    if problem is not None:
        raise problem
    return environment().from_string(source)


def render(template: jinja2.Template, variables: dict[str, Any]) -> str:
    """Render, turning a sandbox refusal into :class:`TemplateProblem`."""
    try:
        return template.render(**variables)
    except SecurityError as exc:
        raise TemplateProblem(f"template refused by the sandbox: {exc}") from None
