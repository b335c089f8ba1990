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

The sandbox stops code, not amplification, so every render also has a budget
(:class:`TemplateLimits`, set once per process with :func:`configure`): the characters it
may produce (output, including ``{% set %}`` blocks and macro bodies, and any one string or
list it builds with ``*``, ``+``, ``~``, ``%``, a filter or a method), the loop iterations
and calls it may make, and how deep macros and recursive loops may nest. Sizes are checked
*before* an operator or a filter builds its value where the arguments tell the size
(``"A" * 10**9`` never allocates); a render past a budget stops with :class:`TemplateLimitError`
(exit 2), naming the limit and the option that raises it.
"""

from __future__ import annotations

import contextvars
import functools
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Sized
from functools import lru_cache
from typing import Any, cast

import jinja2
from jinja2 import nodes, pass_context
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from holistic.core.template_limits import (
    TemplateLimitError,
    TemplateLimits,
    TemplateProblem,
    configure,
    limits,
)

__all__ = [
    "SecurityError",
    "TemplateLimitError",
    "TemplateLimits",
    "TemplateProblem",
    "compile_template",
    "configure",
    "environment",
    "template_problem",
]

_UNSAFE_FILTERS = frozenset({"attr"})
_FORMAT_FIELD_RE = re.compile(r"\{[^{}]*[.\[][^{}]*\}")


class _Budget:
    """What the render in progress has spent."""

    def __init__(self, limits: TemplateLimits) -> None:
        self.limits = limits
        self.chars = 0
        self.steps = 0
        self.depth = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.limits.max_steps:
            raise TemplateLimitError(
                f"template makes more than {self.limits.max_steps:,} loop iterations and calls in one render "
                "(raise it with --max-template-steps)"
            )

    def size(self, n: int, what: str = "builds a value of") -> None:
        if n > self.limits.max_chars:
            raise TemplateLimitError(
                f"template {what} more than {self.limits.max_chars:,} characters in one render "
                "(raise it with --max-template-chars)"
            )

    def output(self, text: str) -> None:
        self.chars += len(text)
        self.size(self.chars, "writes")


_budget: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("holistic_template_budget", default=None)


def _current() -> _Budget:
    budget = _budget.get()
    if budget is None:  # a template rendered without render(): it still gets a budget
        budget = _Budget(limits())
        _budget.set(budget)
    return budget


def _measure(value: object) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple, Sized)) and not isinstance(value, range) else 0


def _check_args(budget: _Budget, args: Iterable[object]) -> None:
    """A width, count or repeat argument larger than the budget would build a value past it."""
    for arg in args:
        if isinstance(arg, int) and not isinstance(arg, bool):
            budget.size(abs(arg), "asks for a width or count of")
        elif isinstance(arg, (str, list, tuple)):
            budget.size(len(arg))


def _checked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a filter or a global) counted as a step, its size arguments and result checked."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        budget = _current()
        budget.step()
        _check_args(budget, [*args, *kwargs.values()])
        result = fn(*args, **kwargs)
        budget.size(_measure(result))
        return result

    return wrapper


def _bounded_range(*args: int) -> range:
    rng = range(*args)
    budget = _current()
    if len(rng) > budget.limits.max_steps:
        raise TemplateLimitError(
            f"template asks for range() of {len(rng):,} items, more than the {budget.limits.max_steps:,} loop "
            "iterations a render may make (raise it with --max-template-steps)"
        )
    return rng


@pass_context
def _loop(context: Context, iterable: Iterable[Any]) -> Iterator[Any]:
    budget = _current()
    for item in iterable:
        budget.step()
        yield item


@pass_context
def _out(context: Context, value: Any) -> Any:
    _current().output(value if isinstance(value, str) else str(value))
    return value


@pass_context
def _built(context: Context, value: Any) -> Any:
    _current().size(_measure(value))
    return value


_LOOP, _OUT, _BUILT = "holistic_loop", "holistic_out", "holistic_built"


def _repeat(left: Any, right: Any) -> Any:
    budget = _current()
    for seq, n in ((left, right), (right, left)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
            budget.size(len(seq) * max(n, 0))
    return operator.mul(left, right)


def _concat(left: Any, right: Any) -> Any:
    if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
        _current().size(len(left) + len(right))
    return operator.add(left, right)


def _power(left: Any, right: Any) -> Any:
    if isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 0:
        # digits of the result ~ right * log10(left): refuse what would be a huge number
        _current().size(right * max(abs(left).bit_length(), 1) // 3, "computes a number of")
    return operator.pow(left, right)


def _format(left: Any, right: Any) -> Any:
    budget = _current()
    _check_args(budget, right if isinstance(right, tuple) else [right])
    result = operator.mod(left, right)
    budget.size(_measure(result))
    return result


class _BudgetedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox plus the render budget: operators that can amplify are checked, calls counted."""

    intercepted_binops = frozenset({"*", "+", "**", "%"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.binop_table.update({"*": _repeat, "+": _concat, "**": _power, "%": _format})
        self.filters = {name: _checked(fn) for name, fn in self.filters.items()}
        self.filters.update({_LOOP: _loop, _OUT: _out, _BUILT: _built})
        self.globals = {name: _checked(fn) if callable(fn) else fn for name, fn in self.globals.items()}
        self.globals["range"] = _bounded_range

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = _current()
        budget.step()
        _check_args(budget, [*args, *kwargs.values()])
        budget.depth += 1
        try:
            if budget.depth > budget.limits.max_depth:
                raise TemplateLimitError(
                    f"template nests macro calls or recursive loops more than {budget.limits.max_depth} deep "
                    "(raise it with --max-template-depth)"
                )
            result = super().call(__context, __obj, *args, **kwargs)
        finally:
            budget.depth -= 1
        budget.size(_measure(result))
        return result


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    """The shared sandboxed environment (undefined variables are errors), with the render budget."""
    return _BudgetedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def _filtered(node: nodes.Expr, name: str) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)


class _Budgeted(NodeTransformer):
    """Every loop's iterable counted; every output and every ``~`` concatenation measured."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _filtered(cast(nodes.Expr, node.iter), _LOOP)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _filtered(node, _BUILT)

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [
            _filtered(nodes.Const(n.data, lineno=n.lineno) if isinstance(n, nodes.TemplateData) else n, _OUT)
            for n in node.nodes
        ]
        return node


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
    env = environment()
    return env.from_string(_Budgeted().visit(env.parse(source)))


def render(template: jinja2.Template, variables: dict[str, Any]) -> str:
    """Render within the budget, turning a sandbox refusal into :class:`TemplateProblem` and a
    budget overrun into :class:`TemplateLimitError`."""
    token = _budget.set(_Budget(limits()))
    try:
        return template.render(**variables)
    except SecurityError as exc:
        raise TemplateProblem(f"template refused by the sandbox: {exc}") from None
    except RecursionError:
        raise TemplateLimitError(
            "template nests too deeply to render (recursive macros or loops; see --max-template-depth)"
        ) from None
    finally:
        _budget.reset(token)
