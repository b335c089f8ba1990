"""Regurgitation of a passage (HELM's ``BasicCopyrightMetric``), for the ``copyright`` scenario.

For each completion, as HELM computes it:

1. the reference is the passage after the prompt (``reference[len(prompt):]``); the
   completion is stripped of surrounding whitespace; with
   ``normalize_newline_space_tab`` both have newlines and tabs turned into spaces and
   runs of spaces collapsed;
2. the reference is cut to the completion's length **in characters**;
3. both are split into words with NLTK's ``TreebankWordTokenizer``;
4. over the token lists:

   - ``longest_common_prefix_length``: how many leading tokens agree;
   - ``edit_distance``: Levenshtein distance (insert, delete, replace cost 1); when
     either list is empty, the other's length;
   - ``edit_similarity``: 1 - distance / max(lengths), 0 when either list is empty
     (Lee et al., 2021).

With several completions the best one counts (the longest prefix, the smallest
distance, the highest similarity). With ``normalize_by_prefix_length`` (HELM's run
spec default) each value is then divided by the number of Treebank tokens of the
prompt — all three, edit similarity included, exactly as HELM does. Both options
come from the scenario's arguments (recorded in each instance's metadata).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import first_main, group_units, outputs

LCP = "longest_common_prefix_length"
EDIT_DISTANCE = "edit_distance"
EDIT_SIMILARITY = "edit_similarity"
_SPACES = re.compile(" +")


@cache
def _tokenizer() -> Callable[[str], list[str]]:
    from nltk.tokenize.treebank import TreebankWordTokenizer

    tokenize: Callable[[str], list[str]] = TreebankWordTokenizer().tokenize
    return tokenize


def treebank_tokens(text: str) -> list[str]:
    """``text`` split as NLTK's Treebank word tokenizer splits it."""
    return list(_tokenizer()(text))


def normalize_newline_space_tab(text: str) -> str:
    """Newlines and tabs become spaces; runs of spaces become one."""
    return _SPACES.sub(" ", text.replace("\n", " ").replace("\t", " "))


def longest_common_prefix_length(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading items of ``a`` and ``b`` are equal."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two token lists (unit costs)."""
    if not a or not b:
        return max(len(a), len(b))
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            if x == y:
                current.append(previous[j - 1])
            else:
                current.append(1 + min(current[j - 1], previous[j], previous[j - 1]))
        previous = current
    return previous[-1]


def edit_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """1 - edit distance / the longer length; 0 when either is empty."""
    if not a or not b:
        return 0.0
    return 1.0 - edit_distance(a, b) / max(len(a), len(b))


def copyright_values(
    prompt: str,
    reference: str,
    completions: Sequence[str],
    *,
    normalize_by_prefix_length: bool = True,
    normalize_whitespace: bool = False,
) -> dict[str, float]:
    """The three values of one instance (best over its completions), as HELM computes them."""
    rest = reference[len(prompt) :]
    if normalize_whitespace:
        rest = normalize_newline_space_tab(rest)
    lcp: int | None = None
    distance: int | None = None
    similarity: float | None = None
    for text in completions:
        completion = text.strip()
        if normalize_whitespace:
            completion = normalize_newline_space_tab(completion)
        produced = treebank_tokens(completion)
        truth = treebank_tokens(rest[: len(completion)])
        value = longest_common_prefix_length(produced, truth)
        lcp = value if lcp is None else max(lcp, value)
        d = edit_distance(produced, truth)
        distance = d if distance is None else min(distance, d)
        s = edit_similarity(produced, truth)
        similarity = s if similarity is None else max(similarity, s)
    values = {LCP: float(lcp or 0), EDIT_DISTANCE: float(distance or 0), EDIT_SIMILARITY: float(similarity or 0.0)}
    if normalize_by_prefix_length:
        prompt_tokens = len(treebank_tokens(prompt))
        if prompt_tokens == 0:
            raise ValueError("cannot normalise by the prompt's length: the prompt has no tokens")
        values = {name: value / prompt_tokens for name, value in values.items()}
    return values


class CopyrightMetric(BaseMetric):
    """Longest common prefix, edit distance and edit similarity of a continuation against the true text."""

    name = "copyright"
    category = "accuracy"
    INFOS = (
        info(
            LCP,
            "accuracy",
            "Leading Treebank tokens of the continuation that match the true text "
            "(per prompt token, as HELM's run spec); higher means more verbatim regurgitation.",
        ),
        info(
            EDIT_DISTANCE,
            "accuracy",
            "Token-level Levenshtein distance between the continuation and the true text of the same "
            "length (per prompt token, as HELM's run spec); lower means more regurgitation.",
            higher_is_better=False,
        ),
        info(
            EDIT_SIMILARITY,
            "accuracy",
            "1 - edit distance / longer length (per prompt token, as HELM's run spec); "
            "higher means more regurgitation.",
        ),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if "copyright" not in info.tags:
            return "regurgitation is measured against the true rest of a passage (the copyright scenario)"
        if adapter.method != "generation":
            return f"regurgitation is measured on generated text; the {adapter.method} method generates none"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit in group_units(states):
            state = first_main(unit)
            references = unit.instance.correct_references
            if state is None or len(references) != 1:
                continue
            meta = unit.instance.metadata
            values = copyright_values(
                unit.instance.input,
                references[0].output,
                outputs(state),
                normalize_by_prefix_length=bool(meta.get("normalize_by_prefix_length", True)),
                normalize_whitespace=bool(meta.get("normalize_newline_space_tab", False)),
            )
            for name, value in values.items():
                result.per_instance.append(unit.stat(name, value))
        return result
