"""Accuracy of generated answers and of multiple-choice picks.

Generation (``generation`` method): every value is the maximum over the
instance's correct references, defined as HELM defines it
(``evaluate_reference_metrics.py`` in crfm-helm 0.5.16). An answer that is empty
once its surrounding whitespace is stripped scores 0 on every one of them.

- ``exact_match``: the answer equals a reference (surrounding whitespace ignored).
- ``quasi_exact_match``: equal after :func:`~holistic.metrics.text.normalize_quasi`.
- ``prefix_exact_match`` / ``quasi_prefix_exact_match``: the answer starts with a reference.
- ``f1_score``: F-measure of the *sets* of quasi-normalised tokens (a repeated word
  counts once; no token on either side scores 0).
- ``final_number_exact_match`` (maths scenarios): the last numbers are the same
  text, by HELM's pattern (:func:`final_number_exact_match`).

Scenarios whose main metric is one of HELM's special scorers also get it (and its
family): ``exact_match_indicator`` (Dyck: only the text after the last space is
compared) and ``f1_set_match`` with ``iou_set_match`` and ``exact_set_match``
(synthetic reasoning in natural language: the sets of attributes after the last
`` is ``, split on `` and ``; ``Nothing.`` is the empty set).

With ``num_outputs > 1`` each value is computed on the most probable completion
(HELM sorts the completions by log-probability; without log-probabilities, the
first), and the same name with ``@k`` appended is the best over all ``k``
completions (pass@k-style; WikiFact's top-k accuracy).

Holistic's option ``f1_multiset`` (name it in ``metrics:``) adds
``f1_score_multiset``: SQuAD's F1, where repeats count and two empty texts agree.

Multiple choice: ``exact_match`` is the accuracy of the picked choice
(:mod:`holistic.metrics.choices`); ``invalid_answer`` (joint method) is the share
of answers that name no choice. Separate scoring reports, from the same requests,
``exact_match`` (argmax of the summed logprob; under ``protocol: helm``, HELM's: the
pick under the run's ``length_normalization``, per token for
``multiple_choice_separate_original``) and the length-normalised
``exact_match_per_char`` (lm-evaluation-harness ``acc_norm``),
``exact_match_per_token`` (HELM's pick for ``multiple_choice_separate_original``)
and ``exact_match_per_byte`` (lm-evaluation-harness ``acc_bytes``), plus
``predicted_index`` (the pick under the run's ``length_normalization``); the
``exact_match`` row's ``details`` keep each choice's logprob and lengths and the
pick under every normalisation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from holistic.core.interfaces import MetricContext, MetricInfo, MetricResult, ScenarioInfo
from holistic.core.specs import CALIBRATED, JOINT, LENGTH_NORMALIZATIONS, MULTIPLE_CHOICE_METHODS
from holistic.core.types import AdapterSpec, ModelDeployment, PerInstanceStat, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.choices import NORMALIZATION_STATS, SeparateScores, pattern_repr, resolve, separate_scores
from holistic.metrics.states import Unit, group_units, outputs, scorable_units
from holistic.metrics.text import normalize_quasi, quasi_tokens

AT_K = "@k"


def exact_match(prediction: str, reference: str) -> float:
    """HELM's exact match: the stripped answer equals the stripped reference; an empty answer scores 0."""
    pred = prediction.strip()
    return float(bool(pred) and pred == reference.strip())


def quasi_exact_match(prediction: str, reference: str) -> float:
    """Equal after :func:`normalize_quasi`; an empty answer scores 0 (even against an empty reference)."""
    if not prediction.strip():
        return 0.0
    return float(normalize_quasi(prediction) == normalize_quasi(reference))


def prefix_exact_match(prediction: str, reference: str) -> float:
    pred = prediction.strip()
    return float(bool(pred) and pred.startswith(reference.strip()))


def quasi_prefix_exact_match(prediction: str, reference: str) -> float:
    if not prediction.strip():
        return 0.0
    return float(normalize_quasi(prediction).startswith(normalize_quasi(reference)))


def f1_score(prediction: str, reference: str) -> float:
    """HELM's token F1: F-measure of the *sets* of quasi-normalised tokens.

    A repeated word counts once; an answer or reference with no token left after
    normalisation scores 0 (two empty texts too). Computed as NLTK's ``f_measure``
    with alpha 0.5: ``1 / (0.5 / P + 0.5 / R)``.
    """
    pred, gold = set(quasi_tokens(prediction)), set(quasi_tokens(reference))
    if not pred or not gold:
        return 0.0
    common = len(pred & gold)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 1.0 / (0.5 / precision + 0.5 / recall)


def f1_score_multiset(prediction: str, reference: str) -> float:
    """SQuAD's token F1 (holistic's option ``f1_multiset``): repeated tokens count, two empty texts agree."""
    pred, gold = quasi_tokens(prediction), quasi_tokens(reference)
    if not pred or not gold:
        return float(pred == gold)
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


_HELM_NUMBER = re.compile(r"-?[\d,]+(?:.\d+)?")
"""HELM's number pattern, unescaped ``.`` included (``3:30`` and ``1 000`` are one number)."""


def helm_final_number(text: str) -> str:
    """The last match of HELM's number pattern with its commas removed; ``""`` when there is none."""
    matches = _HELM_NUMBER.findall(text)
    return matches[-1].replace(",", "") if matches else ""


def final_number_exact_match(prediction: str, reference: str) -> float:
    r"""HELM's ``final_number_exact_match``: the last numbers are the same *text*.

    As crfm-helm 0.5.16 computes it: the last match of ``-?[\d,]+(?:.\d+)?`` in each,
    commas removed, compared as strings (``3.50`` is not ``3.5``, ``$5`` is ``5``); no
    number in the answer scores 0.
    """
    pred = helm_final_number(prediction.strip())
    return float(bool(pred) and pred.strip() == helm_final_number(reference).strip())


def exact_match_indicator(prediction: str, reference: str, indicator: str = " ") -> float:
    """HELM's ``exact_match_indicator``: exact match of what follows the last ``indicator``.

    With HELM's indicator, a space, only the last space-separated item of the
    (stripped) answer and of the reference are compared: for a Dyck reference
    ``] ) )`` the answer ``] )`` matches, since both end in ``)``.
    """
    return exact_match(prediction.strip().split(indicator)[-1], reference.split(indicator)[-1])


EMPTY_SET_TEXT = "Nothing."


def answer_set(text: str) -> frozenset[str]:
    """The set a sentence states, as HELM reads it: ``The cow is big and red.`` -> {big, red}.

    ``Nothing.`` is the empty set; otherwise periods are dropped and the text after
    the last `` is `` is split on `` and ``.
    """
    if text == EMPTY_SET_TEXT:
        return frozenset()
    return frozenset(text.replace(".", "").split(" is ")[-1].split(" and "))


def _sets(prediction: str, reference: str) -> tuple[frozenset[str], frozenset[str]]:
    """(predicted set, gold set); only the first line of the stripped answer counts."""
    return answer_set(prediction.strip().split("\n")[0]), answer_set(reference)


def exact_set_match(prediction: str, reference: str) -> float:
    predicted, gold = _sets(prediction, reference)
    return float(predicted == gold)


def iou_set_match(prediction: str, reference: str) -> float:
    """Intersection over union of the two sets (an empty gold set: 1 only for an empty answer set)."""
    predicted, gold = _sets(prediction, reference)
    if not gold:
        return float(predicted == gold)
    return len(predicted & gold) / len(predicted | gold)


def f1_set_match(prediction: str, reference: str) -> float:
    """F1 of the two sets: ``2 |P & G| / (|P| + |G|)`` (an empty gold set: 1 only for an empty answer set)."""
    predicted, gold = _sets(prediction, reference)
    if not gold:
        return float(predicted == gold)
    return 2 * len(predicted & gold) / (len(predicted) + len(gold))


Scorer = Callable[[str, str], float]

_GENERATION_SCORERS: dict[str, Scorer] = {
    "exact_match": exact_match,
    "quasi_exact_match": quasi_exact_match,
    "prefix_exact_match": prefix_exact_match,
    "quasi_prefix_exact_match": quasi_prefix_exact_match,
    "f1_score": f1_score,
}


EXTRA_SCORERS: dict[str, Scorer] = {
    "final_number_exact_match": final_number_exact_match,
    "exact_match_indicator": exact_match_indicator,
    "f1_set_match": f1_set_match,
    "iou_set_match": iou_set_match,
    "exact_set_match": exact_set_match,
}
"""Scorers measured only where a scenario asks for them (see :data:`SCORER_FAMILIES`)."""

SCORER_FAMILIES: dict[str, tuple[str, ...]] = {
    "final_number_exact_match": ("final_number_exact_match",),
    "exact_match_indicator": ("exact_match_indicator",),
    "f1_set_match": ("f1_set_match", "iou_set_match", "exact_set_match"),
    "iou_set_match": ("f1_set_match", "iou_set_match", "exact_set_match"),
    "exact_set_match": ("f1_set_match", "iou_set_match", "exact_set_match"),
}
"""A scenario's main metric -> the extra scorers HELM reports with it."""

BINARY_SCORERS: dict[str, Scorer] = {
    **{k: v for k, v in _GENERATION_SCORERS.items() if k != "f1_score"},
    "final_number_exact_match": final_number_exact_match,
    "exact_match_indicator": exact_match_indicator,
    "exact_set_match": exact_set_match,
}
"""The 0/1 match scorers (what calibration can use as 'correct')."""


def best_over_references(scorer: Scorer, prediction: str, references: Sequence[str]) -> float:
    return max(scorer(prediction, ref) for ref in references)


def most_probable_first(state: RequestState, predictions: tuple[str, ...]) -> tuple[str, ...]:
    """``predictions`` (one per completion) ordered by the completions' log-probability, highest first.

    Left as they are when there is one, when the model gave no log-probabilities,
    or when they do not correspond one to one with the completions.
    """
    result = state.result
    if len(predictions) < 2 or result is None or not result.has_logprobs:
        return predictions
    if len(result.completions) != len(predictions):
        return predictions
    order = sorted(range(len(predictions)), key=lambda i: -result.completions[i].logprob)
    return tuple(predictions[i] for i in order)


_GEN_DESCRIPTIONS = {
    "exact_match": "Answer equals a correct reference (surrounding whitespace ignored; empty answer scores 0).",
    "quasi_exact_match": "Exact match after lower-casing and removing punctuation, articles and extra whitespace.",
    "prefix_exact_match": "Answer starts with a correct reference.",
    "quasi_prefix_exact_match": "Quasi-normalised answer starts with a quasi-normalised reference.",
    "f1_score": "F1 of the sets of normalised tokens with the best reference (as HELM; empty answer scores 0).",
    "final_number_exact_match": "The last number of the answer is the reference's, as text (HELM's pattern).",
    "exact_match_indicator": "The last space-separated item of the answer equals the reference's (HELM's Dyck metric).",
    "f1_set_match": "F1 of the set of attributes the answer states against the reference's set.",
    "iou_set_match": "Intersection over union of the answer's and the reference's sets of attributes.",
    "exact_set_match": "The answer states exactly the reference's set of attributes.",
}


def _generation_infos() -> tuple[MetricInfo, ...]:
    out: list[MetricInfo] = []
    for name, text in _GEN_DESCRIPTIONS.items():
        out.append(info(name, "accuracy", text, needs_generation=True))
        out.append(info(name + AT_K, "accuracy", f"Best over the k sampled outputs: {text}", needs_generation=True))
    return tuple(out)


class GenerationAccuracy(BaseMetric):
    """Exact-match family and token F1 of generated answers (plus final-number match for maths)."""

    name = "generation_accuracy"
    category = "accuracy"
    INFOS = _generation_infos()

    def __init__(self, *, final_number: bool = False, extra: Sequence[str] = ()) -> None:
        unknown = [name for name in extra if name not in EXTRA_SCORERS]
        if unknown:
            raise ValueError(f"unknown extra scorer(s) {', '.join(unknown)}; known: {', '.join(EXTRA_SCORERS)}")
        self.scorers = dict(_GENERATION_SCORERS)
        self.extra = tuple(name for name in extra if name != "final_number_exact_match")
        if final_number or "final_number_exact_match" in extra:
            self.scorers["final_number_exact_match"] = final_number_exact_match
        for name in self.extra:
            self.scorers[name] = EXTRA_SCORERS[name]

    @classmethod
    def selected_for(cls, info: ScenarioInfo, adapter: AdapterSpec) -> bool:
        # long_context answers are id lists, scored as sets by the haystack metric, not as strings;
        # a memorization continuation is compared with the rest of a whole passage by the copyright metric;
        # disinformation samples have no right answer (their references are in-context headlines);
        # an instruction-following response has no reference (its instructions are checked by program),
        # and a program is right when its tests pass (the code metric runs them in the sandbox), not
        # when it matches the reference solution's text.
        return info.task not in ("long_context", "memorization", "disinformation", "instruction_following", "code")

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method != "generation":
            return f"generated-answer accuracy needs the generation method, not {adapter.method}"
        return None

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> GenerationAccuracy:
        maths = info.main_metric == "final_number_exact_match" or "math" in info.tags
        return cls(final_number=maths, extra=SCORER_FAMILIES.get(info.main_metric, ()))

    def __repr__(self) -> str:
        extra = f", extra={self.extra!r}" if self.extra else ""
        return f"GenerationAccuracy(final_number={'final_number_exact_match' in self.scorers}{extra})"

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit, state, references in scorable_units(states):
            predictions = most_probable_first(state, outputs(state))
            for name, scorer in self.scorers.items():
                scores = [best_over_references(scorer, p, references) for p in predictions]
                result.per_instance.append(unit.stat(name, scores[0]))
                if len(predictions) > 1:
                    result.per_instance.append(unit.stat(name + AT_K, max(scores)))
        return result


class MultisetF1(GenerationAccuracy):
    """Holistic's option: SQuAD token F1 with repeated tokens counted (``f1_score_multiset``).

    HELM's ``f1_score`` compares token sets; this keeps the SQuAD definition under its
    own name so the two are never mixed. Measured only when a run names it.
    """

    name = "f1_multiset"
    optional = True
    INFOS = tuple(
        info(
            name,
            "accuracy",
            "SQuAD token F1 with the best reference: repeated tokens count, two empty texts "
            "agree (holistic option)" + (", best over the k outputs." if name.endswith(AT_K) else "."),
            needs_generation=True,
        )
        for name in ("f1_score_multiset", "f1_score_multiset" + AT_K)
    )

    def __init__(self) -> None:
        self.scorers = {"f1_score_multiset": f1_score_multiset}

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> MultisetF1:
        return cls()

    def __repr__(self) -> str:
        return "MultisetF1()"


class MultipleChoiceAccuracy(BaseMetric):
    """Accuracy of the picked choice for the three multiple-choice methods."""

    name = "multiple_choice_accuracy"
    category = "accuracy"
    INFOS = (
        info(
            "exact_match",
            "accuracy",
            "The picked choice is a correct one (separate scoring: the choice with the highest summed logprob; "
            "under protocol helm, HELM's pick under the run's length_normalization).",
            needs_generation=False,
        ),
        info(
            "exact_match_per_char",
            "accuracy",
            "Separate scoring: the choice with the highest logprob per character "
            "of its text (no leading space) is correct; lm-evaluation-harness's acc_norm.",
            needs_generation=False,
        ),
        info(
            "exact_match_per_token",
            "accuracy",
            "Separate scoring: the choice with the highest logprob per scored "
            "token is correct; HELM's exact_match for multiple_choice_separate_original.",
            needs_generation=False,
        ),
        info(
            "exact_match_per_byte",
            "accuracy",
            "Separate scoring: the choice with the highest logprob per UTF-8 byte "
            "of its text is correct; lm-evaluation-harness's acc_bytes.",
            needs_generation=False,
        ),
        info(
            "predicted_index",
            "accuracy",
            "Separate scoring: 0-based index of the picked choice under the run's "
            "length_normalization (HELM's predicted_index); its mean shows position bias.",
            needs_generation=False,
        ),
        info(
            "exact_match_lenient",
            "accuracy",
            "The picked choice is a correct one, the letter read leniently (answer_parsing: lenient; not HELM's).",
            needs_generation=True,
        ),
        info(
            "invalid_answer",
            "accuracy",
            "Share of joint multiple-choice answers that name no choice letter.",
            higher_is_better=False,
            needs_generation=True,
        ),
    )

    def __init__(
        self,
        method: str = JOINT,
        length_normalization: str = "none",
        answer_parsing: str = "helm",
        at_run_normalization: bool = False,
        answer_pattern: str | None = None,
    ) -> None:
        if method not in MULTIPLE_CHOICE_METHODS:
            raise ValueError(f"not a multiple-choice method: {method!r}")
        if length_normalization not in LENGTH_NORMALIZATIONS:
            raise ValueError(
                f"length_normalization must be one of {', '.join(LENGTH_NORMALIZATIONS)}; got {length_normalization!r}"
            )
        self.method = method
        self.length_normalization = length_normalization
        self.answer_parsing = answer_parsing
        self.at_run_normalization = at_run_normalization
        """``exact_match`` of separate scoring is the pick under ``length_normalization`` (HELM's)."""
        self.answer_pattern = answer_pattern
        """The run's ``answer_pattern`` (joint answers are searched with it first)."""

    @classmethod
    def selected_for(cls, info: ScenarioInfo, adapter: AdapterSpec) -> bool:
        # reasoned multiple choice is scored on the letter its reasoning ends with (chain_of_thought)
        return "chain_of_thought_mc" not in info.tags

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method not in MULTIPLE_CHOICE_METHODS:
            return f"choice accuracy needs a multiple-choice method, not {adapter.method}"
        if adapter.method != JOINT and not deployment.capabilities.prompt_logprobs:
            return f"model {deployment.name} cannot score choices (no prompt logprobs) for {adapter.method}"
        return None

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> MultipleChoiceAccuracy:
        at_run = adapter.behaviour.exact_match_at_run_normalization
        return cls(adapter.method, adapter.length_normalization, adapter.answer_parsing, at_run, adapter.answer_pattern)

    def __repr__(self) -> str:
        return (
            f"MultipleChoiceAccuracy({self.method!r}, {self.length_normalization!r}, {self.answer_parsing!r}, "
            f"{self.at_run_normalization!r}{pattern_repr(self.answer_pattern)})"
        )

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit in group_units(states):
            if not unit.instance.correct_references:
                continue
            if self.method != JOINT:
                result.per_instance.extend(self._separate(unit))
                continue
            # ``exact_match`` is always HELM's reading; lenient reading adds its own stat.
            outcome = resolve(unit, self.method, self.length_normalization, answer_pattern=self.answer_pattern)
            result.per_instance.append(unit.stat("exact_match", float(outcome.correct)))
            if self.answer_parsing == "lenient":
                lenient = resolve(unit, self.method, self.length_normalization, "lenient", self.answer_pattern)
                result.per_instance.append(unit.stat("exact_match_lenient", float(lenient.correct)))
            result.per_instance.append(unit.stat("invalid_answer", float(outcome.predicted is None)))
        return result

    def _separate(self, unit: Unit) -> list[PerInstanceStat]:
        """Every normalisation's accuracy from one set of scores (a failed unit scores 0 everywhere)."""
        calibrated = self.method == CALIBRATED
        scored: SeparateScores | None = separate_scores(unit, calibrated=calibrated)
        names = {"none": NORMALIZATION_STATS["none"]} if calibrated else NORMALIZATION_STATS
        out: list[PerInstanceStat] = []
        for normalization, name in names.items():
            # under HELM's protocol its exact_match is the pick under the run's normalisation
            chosen = self.length_normalization if self.at_run_normalization and name == "exact_match" else normalization
            correct = scored is not None and unit.instance.references[scored.pick(chosen)].is_correct
            stat = unit.stat(name, float(correct))
            if normalization == "none" and scored is not None:
                stat = replace(stat, details=scored.details())
            out.append(stat)
        if scored is not None:
            out.append(unit.stat("predicted_index", float(scored.pick(self.length_normalization))))
        return out
