"""MATH answer equivalence after LaTeX normalisation (Hendrycks et al., 2021; as HELM scores it).

- ``math_equiv``: the generated answer and the reference answer are equal after
  :func:`normalize_latex`;
- ``math_equiv_chain_of_thought``: the same on the last ``\\boxed{}`` of the
  generated solution and of the reference solution (no box in the output: wrong).

:func:`normalize_latex` follows the MATH authors' normalisation step by step:
drop line breaks, ``\\!`` and ``\\left``/``\\right``; ``\\\\`` -> ``\\``;
``tfrac``/``dfrac`` -> ``frac``; drop degree marks, ``\\$``, a trailing ``\\text{ unit}``
and ``\\%``; write a leading ``.`` as ``0.``; drop a short ``x =`` prefix; brace
``\\sqrt3`` and ``\\frac12``; remove spaces; ``0.5`` -> ``\\frac{1}{2}``; and ``a/b`` of
two integers -> ``\\frac{a}{b}``. Answers whose normalisation fails are compared
as written.
"""

from __future__ import annotations

from collections.abc import Sequence

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.latex import boxed_answer
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import outputs, scorable_units

EQUIV = "math_equiv"
EQUIV_COT = "math_equiv_chain_of_thought"


class _Unnormalisable(ValueError):
    pass


def _brace_fracs(text: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{72}`` -> ``\\frac{1}{72}``."""
    head, *parts = text.split("\\frac")
    out = [head]
    for part in parts:
        out.append("\\frac")
        if part.startswith("{"):
            out.append(part)
            continue
        if len(part) < 2:
            raise _Unnormalisable(text)
        numerator, rest = part[0], part[1:]
        if rest.startswith("{"):
            out.append("{" + numerator + "}" + rest)
        else:
            out.append("{" + numerator + "}{" + rest[0] + "}" + rest[1:])
    return "".join(out)


def _slash_fraction(text: str) -> str:
    """``2/3`` -> ``\\frac{2}{3}`` when both sides are plain integers."""
    parts = text.split("/")
    if len(parts) != 2:
        return text
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        return text
    return f"\\frac{{{a}}}{{{b}}}" if text == f"{a}/{b}" else text


def _brace_sqrt(text: str) -> str:
    """``\\sqrt3`` -> ``\\sqrt{3}``."""
    if "\\sqrt" not in text:
        return text
    head, *parts = text.split("\\sqrt")
    out = [head]
    for part in parts:
        if not part:
            raise _Unnormalisable(text)
        out.append("\\sqrt" + part if part[0] == "{" else "\\sqrt{" + part[0] + "}" + part[1:])
    return "".join(out)


def _drop_units(text: str) -> str:
    """Drop a trailing ``\\text{ unit}`` (the MATH answers use it only for units)."""
    if "\\text{ " not in text:
        return text
    parts = text.split("\\text{ ")
    if len(parts) != 2:
        raise _Unnormalisable(text)
    return parts[0]


def normalize_latex(text: str) -> str:
    """A MATH answer in the authors' canonical form (see the module docstring)."""
    text = text.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    text = text.replace("tfrac", "frac").replace("dfrac", "frac")
    text = text.replace("\\left", "").replace("\\right", "")
    text = text.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\$", "")
    text = _drop_units(text)
    text = text.replace("\\%", "").replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        text = sides[1]
    text = _brace_sqrt(text).replace(" ", "")
    text = _brace_fracs(text)
    if text == "0.5":
        text = "\\frac{1}{2}"
    return _slash_fraction(text)


def is_equiv(answer: str | None, reference: str | None) -> float:
    """1.0 when two answers agree after normalisation (two missing answers agree)."""
    if answer is None or reference is None:
        return float(answer is None and reference is None)
    try:
        return float(normalize_latex(answer) == normalize_latex(reference))
    except _Unnormalisable:
        return float(answer == reference)


def is_equiv_chain_of_thought(output: str, reference_solution: str) -> float:
    """Equivalence of the last boxed answers of two worked solutions."""
    return is_equiv(boxed_answer(output), boxed_answer(reference_solution))


class MathEquivalence(BaseMetric):
    """MATH: is the generated answer the reference after LaTeX normalisation?"""

    name = "math_equiv"
    category = "accuracy"
    INFOS = (
        info(
            EQUIV,
            "accuracy",
            "The answer equals the reference after MATH's LaTeX normalisation.",
            needs_generation=True,
        ),
        info(
            EQUIV_COT,
            "accuracy",
            "The last \\boxed{} answer of the worked solution equals the reference's after MATH's LaTeX normalisation.",
            needs_generation=True,
        ),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if "math_latex" not in info.tags:
            return "MATH equivalence applies to scenarios with LaTeX answers (tag math_latex)"
        if adapter.method != "generation":
            return f"MATH equivalence needs the generation method, not {adapter.method}"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit, state, references in scorable_units(states):
            output = outputs(state)[0]
            if unit.instance.metadata.get("chain_of_thought"):
                result.per_instance.append(unit.stat(EQUIV_COT, is_equiv_chain_of_thought(output, references[0])))
            else:
                result.per_instance.append(unit.stat(EQUIV, is_equiv(output, references[0])))
        return result
