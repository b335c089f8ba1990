"""Which choice a model picked in a multiple-choice unit, whether it is correct, and
how confident the model was.

- ``multiple_choice_joint``, ``answer_parsing="helm"`` (HELM's reading): the
  completion, stripped, must be exactly a key of the state's ``output_mapping``
  (letter -> choice text); anything else (``"a"``, ``"(A)"``, ``"A cat"``) picks no
  choice and is wrong. With an ``answer_pattern`` (HELM's ``output_mapping_pattern``) the
  stripped completion is searched first and the match's first group (else the whole
  match) is looked up instead (:func:`read_answer`). Confidence is HELM's ``max_prob``,
  the probability of the whole completion (``exp`` of its log-probability), kept for
  unreadable answers too, so calibration counts them as confident wrong answers.
- ``multiple_choice_joint``, ``answer_parsing="lenient"``: the letter is read by
  :func:`parse_letter` (lower case, ``(B)``, ``B.``, ``Answer: B``, the choice text).
  Confidence is the predicted letter's probability among the choice letters, from
  the first answer token's top-k logprobs when the model returned them (variants
  such as ``" A"`` and ``"A"`` are summed), else the probability of that token
  itself. The answer token is the first generated token that is the letter (else the
  first non-blank token). Unreadable answers have no confidence.
- ``multiple_choice_separate_original``: one log-likelihood request per choice
  (``reference_index``); the pick is the argmax of the choice's summed logprob
  (``none``), or of that sum divided by the choice's length (:data:`NORMALIZATIONS`):
  ``char`` — characters of the choice text without the space before it, as
  lm-evaluation-harness's ``acc_norm`` (``len(choice)``); ``token`` — the scored
  tokens of the continuation (a space and the choice), as HELM divides for this
  method; ``byte`` — UTF-8 bytes of the choice text, as lm-evaluation-harness's
  ``acc_bytes``. One set of requests gives every variant (:func:`separate_scores`).
- ``multiple_choice_separate_calibrated``: the score is
  ``logprob(choice | prompt) - logprob(choice | neutral context)``, the latter from
  the ``calibration``-role state with the same ``reference_index``. Length
  normalisation is not applied on top (the neutral context already corrects for it).

Under partial scoring (an instance with a ``continuation``: each choice is its own
context), the lengths are the shared continuation's, so every normalisation picks as
the raw sum does (lm-evaluation-harness's WinoGrande ``acc``).

For the separate methods the confidence is the softmax of the choice scores at the
pick. Ties go to the lowest choice index. A unit whose requests failed has no pick
(scored wrong, and left out of calibration).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from holistic.core.specs import (
    ANSWER_PARSINGS,
    CALIBRATED,
    JOINT,
    LENGTH_NORMALIZATIONS,
    MULTIPLE_CHOICE_METHODS,
    SEPARATE,
)
from holistic.core.types import Completion, RequestRole, RequestState, Token
from holistic.core.verdict_limits import PATTERN_TIMEOUT_S
from holistic.metrics.states import Unit, outputs, succeeded

NORMALIZATION_STATS = {
    "none": "exact_match",
    "char": "exact_match_per_char",
    "token": "exact_match_per_token",
    "byte": "exact_match_per_byte",
}
"""Separate multiple choice: the accuracy stat of each length normalisation."""

_LEADING_LETTER = re.compile(r"^\(?([A-Za-z])(?:[\).:,\s]|$)")
_LETTER_AFTER_ANSWER = re.compile(r"\banswer\s*(?:is|:)?\s*[:\-]?\s*\(?([A-Z])\)?(?![A-Za-z])", re.IGNORECASE)


@dataclass(frozen=True)
class ChoiceOutcome:
    """The result of one multiple-choice unit."""

    predicted: int | None
    """Index of the picked reference, or ``None`` (failed request, unparseable answer)."""
    correct: bool
    confidence: float | None
    """Probability the model gave its pick (``None`` without logprobs)."""
    choice_probs: tuple[float, ...] | None = None
    """Normalised probabilities over the choices when known."""


def headline_stat(main_metric: str, method: str, length_normalization: str) -> str:
    """The stat a run headlines: a separate-original run that headlines ``exact_match``
    headlines the variant its ``length_normalization`` names (HELM: ``token``)."""
    if method == SEPARATE and main_metric == "exact_match":
        return NORMALIZATION_STATS.get(length_normalization, main_metric)
    return main_metric


def resolve(
    unit: Unit,
    method: str,
    length_normalization: str = "none",
    answer_parsing: str = "helm",
    answer_pattern: str | None = None,
) -> ChoiceOutcome:
    """Resolve one unit of a multiple-choice run (``answer_pattern``: the run's, joint only)."""
    if method == JOINT:
        if answer_parsing not in ANSWER_PARSINGS:
            raise ValueError(f"answer_parsing must be one of {', '.join(ANSWER_PARSINGS)}; got {answer_parsing!r}")
        if answer_parsing == "lenient":
            return _resolve_joint(unit, answer_pattern)
        return _resolve_joint_helm(unit, answer_pattern)
    if method in (SEPARATE, CALIBRATED):
        if length_normalization not in LENGTH_NORMALIZATIONS:
            raise ValueError(
                f"length_normalization must be one of {', '.join(LENGTH_NORMALIZATIONS)}; got {length_normalization!r}"
            )
        return _resolve_separate(unit, calibrated=method == CALIBRATED, normalization=length_normalization)
    raise ValueError(f"not a multiple-choice method: {method!r} (expected one of {', '.join(MULTIPLE_CHOICE_METHODS)})")


# ---------------------------------------------------------------------------
# joint
# ---------------------------------------------------------------------------


def parse_letter(text: str, mapping: Mapping[str, str]) -> str | None:
    """The choice letter in ``text``.

    Accepted, in order: the letter alone; a choice's own text (what the
    ``letter_to_choice`` post-processor returns); a leading ``B.``, ``(B)``, ``B)``;
    ``Answer: B`` / ``the answer is (B)``.
    """
    answer = text.strip().lstrip("*_ ")
    if answer in mapping:
        return answer
    for letter, choice in mapping.items():
        if answer and answer == choice.strip():
            return letter
    for pattern in (_LEADING_LETTER, _LETTER_AFTER_ANSWER):
        match = pattern.search(answer)
        if match:
            for letter in (match.group(1), match.group(1).upper()):
                if letter in mapping:
                    return letter
    return None


def pattern_repr(pattern: str | None) -> str:
    """A metric's ``answer_pattern`` in its repr: nothing when unset (the reprs of runs without one
    are those they always were)."""
    return "" if pattern is None else f", answer_pattern={pattern!r}"


_SLOW_PATTERNS: set[str] = set()
"""Answer patterns that ran past the time limit once in this process: not searched again."""


def read_answer(text: str, pattern: str | None) -> str:
    """The answer of a joint completion as HELM reads it: the stripped text or, with an
    ``answer_pattern``, the first group (else the whole) of its first match in it (``""``: no
    match, or the search ran past :data:`~holistic.core.verdict_limits.PATTERN_TIMEOUT_S`). A
    pattern that ran past the limit once is not searched again in this process (its answers pick
    no choice), so a pattern slow on every answer costs one limit, not one per answer."""
    answer = text.strip()
    if not pattern:
        return answer
    if pattern in _SLOW_PATTERNS:
        return ""
    import regex

    try:
        match = regex.search(pattern, answer, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        _SLOW_PATTERNS.add(pattern)
        return ""
    except regex.error:  # a pattern from a results folder that does not compile
        return ""
    if match is None:
        return ""
    return str(match.group(1) or "") if match.groups() else str(match.group(0))


def _resolve_joint_helm(unit: Unit, pattern: str | None = None) -> ChoiceOutcome:
    mains = unit.with_role(RequestRole.MAIN)
    if not mains or not succeeded(mains[0]) or not mains[0].output_mapping:
        return ChoiceOutcome(None, False, None)
    state = mains[0]
    mapping = state.output_mapping or {}
    assert state.result is not None
    completions = state.result.completions
    best = max(completions, key=lambda c: c.logprob) if completions else None
    confidence = math.exp(best.logprob) if best is not None and state.result.has_logprobs else None
    choice = mapping.get(read_answer(best.text, pattern)) if best is not None else None
    index = None if choice is None else _reference_index(unit, choice)
    correct = index is not None and unit.instance.references[index].is_correct
    return ChoiceOutcome(index, correct, confidence)


def _resolve_joint(unit: Unit, pattern: str | None = None) -> ChoiceOutcome:
    mains = unit.with_role(RequestRole.MAIN)
    if not mains:
        return ChoiceOutcome(None, False, None)
    state = mains[0]
    mapping = state.output_mapping or {}
    if not succeeded(state) or not mapping:
        return ChoiceOutcome(None, False, None)
    letter = parse_letter(read_answer(outputs(state)[0], pattern), mapping)
    if letter is None:
        return ChoiceOutcome(None, False, None)
    index = _reference_index(unit, mapping[letter])
    correct = index is not None and unit.instance.references[index].is_correct
    confidence, probs = _letter_confidence(state, mapping, letter)
    return ChoiceOutcome(index, correct, confidence, probs)


def _reference_index(unit: Unit, output: str) -> int | None:
    for i, ref in enumerate(unit.instance.references):
        if ref.output == output:
            return i
    return None


def _answer_token(completion: Completion, letter: str) -> Token | None:
    """The token that carries the letter (else the first non-blank token)."""
    for token in completion.tokens:
        if token.text.strip().strip("().") == letter:
            return token
    for token in completion.tokens:
        if token.text.strip():
            return token
    return None


def _letter_confidence(
    state: RequestState, mapping: Mapping[str, str], letter: str
) -> tuple[float | None, tuple[float, ...] | None]:
    result = state.result
    if result is None or not result.has_logprobs or not result.completions:
        return None, None
    token = _answer_token(result.completions[0], letter)
    if token is None:
        return None, None
    if token.top_logprobs:
        letters = list(mapping)
        scores = [_letter_logprob(token.top_logprobs, candidate) for candidate in letters]
        found = [s for s in scores if s is not None]
        if scores[letters.index(letter)] is not None and found:
            top = max(found)
            weights = [math.exp(s - top) if s is not None else 0.0 for s in scores]
            total = sum(weights)
            probs = tuple(w / total for w in weights)
            return probs[letters.index(letter)], probs
    return min(math.exp(token.logprob), 1.0), None


def _letter_logprob(top: Mapping[str, float], letter: str) -> float | None:
    matches = [lp for text, lp in top.items() if text.strip() == letter]
    if not matches:
        return None
    top_lp = max(matches)
    return top_lp + math.log(sum(math.exp(lp - top_lp) for lp in matches))


# ---------------------------------------------------------------------------
# separate
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SeparateScores:
    """What one separate multiple-choice unit's requests say about each choice."""

    logprobs: tuple[float, ...]
    """Per choice: summed logprob of the continuation (calibrated: minus the neutral context's)."""
    chars: tuple[int, ...]
    """Characters of each choice text (no leading space)."""
    tokens: tuple[int, ...]
    """Scored tokens of each continuation."""
    bytes: tuple[int, ...]
    """UTF-8 bytes of each choice text."""
    calibrated: bool = False

    def scores(self, normalization: str) -> list[float]:
        """Each choice's score under ``normalization`` (calibrated scores are never divided)."""
        if normalization == "none" or self.calibrated:
            return list(self.logprobs)
        lengths = {"char": self.chars, "token": self.tokens, "byte": self.bytes}[normalization]
        return [lp / max(n, 1) for lp, n in zip(self.logprobs, lengths, strict=True)]

    def pick(self, normalization: str) -> int:
        """The argmax choice (ties go to the lowest index, as numpy's argmax)."""
        scores = self.scores(normalization)
        return max(range(len(scores)), key=lambda i: (scores[i], -i))

    def details(self) -> dict[str, object]:
        """JSON-compatible record of the unit: kept beside its per-instance stats."""
        picks = {"none": self.pick("none")} if self.calibrated else {n: self.pick(n) for n in LENGTH_NORMALIZATIONS}
        return {
            "choice_logprobs": list(self.logprobs),
            "choice_chars": list(self.chars),
            "choice_tokens": list(self.tokens),
            "choice_bytes": list(self.bytes),
            "calibrated": self.calibrated,
            "chosen_index": picks,
        }


def separate_scores(unit: Unit, *, calibrated: bool) -> SeparateScores | None:
    """The unit's choice scores, or ``None`` when a request failed or is missing."""
    references = unit.instance.references
    main = _by_reference(unit.with_role(RequestRole.MAIN))
    neutral = _by_reference(unit.with_role(RequestRole.CALIBRATION)) if calibrated else {}
    logprobs: list[float] = []
    tokens: list[int] = []
    for i in range(len(references)):
        state = main.get(i)
        if state is None or not succeeded(state):
            return None
        logprob = _logprob(state)
        if calibrated:
            base = neutral.get(i)
            if base is None or not succeeded(base):
                return None
            logprob -= _logprob(base)
        logprobs.append(logprob)
        tokens.append(_scored_tokens(state))
    if not logprobs:
        return None
    # What is scored: each choice's text, or, under partial scoring, the one continuation
    # shared by every choice (so every normalisation picks as the raw sum does).
    scored = [unit.instance.continuation if unit.instance.continuation is not None else r.output for r in references]
    return SeparateScores(
        logprobs=tuple(logprobs),
        chars=tuple(len(text) for text in scored),
        tokens=tuple(tokens),
        bytes=tuple(len(text.encode("utf-8")) for text in scored),
        calibrated=calibrated,
    )


def _resolve_separate(unit: Unit, *, calibrated: bool, normalization: str) -> ChoiceOutcome:
    scored = separate_scores(unit, calibrated=calibrated)
    if scored is None:
        return ChoiceOutcome(None, False, None)
    scores = scored.scores(normalization)
    predicted = scored.pick(normalization)
    probs = softmax(scores)
    correct = unit.instance.references[predicted].is_correct
    return ChoiceOutcome(predicted, correct, probs[predicted], tuple(probs))


def _by_reference(states: Sequence[RequestState]) -> dict[int, RequestState]:
    out: dict[int, RequestState] = {}
    for state in states:
        if state.reference_index is not None and state.reference_index not in out:
            out[state.reference_index] = state
    return out


def _logprob(state: RequestState) -> float:
    assert state.result is not None and state.result.completions
    completion = state.result.completions[0]
    if completion.tokens:
        return sum(t.logprob for t in completion.tokens)
    return completion.logprob


def _scored_tokens(state: RequestState) -> int:
    assert state.result is not None and state.result.completions
    completion = state.result.completions[0]
    continuation = state.request.continuation or completion.text
    return len(completion.tokens) or max(len(continuation.split()), 1)


def softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return [w / total for w in weights]
