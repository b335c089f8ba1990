"""Which choice a model picked in a multiple-choice unit, whether it is correct, and
how confident the model was.

- ``multiple_choice_joint``, ``answer_parsing="helm"`` (HELM's reading): the
  completion, stripped, must be exactly a key of the state's ``output_mapping``
  (letter -> choice text); anything else (``"a"``, ``"(A)"``, ``"A cat"``) picks no
  choice and is wrong. Confidence is HELM's ``max_prob``, the probability of the whole
  completion (``exp`` of its log-probability), kept for unreadable answers too, so
  calibration counts them as confident wrong answers.
- ``multiple_choice_joint``, ``answer_parsing="lenient"``: the letter is read by
  :func:`parse_letter` (lower case, ``(B)``, ``B.``, ``Answer: B``, the choice text).
  Confidence is the predicted letter's probability among the choice letters, from
  the first answer token's top-k logprobs when the model returned them (variants
  such as ``" A"`` and ``"A"`` are summed), else the probability of that token
  itself. The answer token is the first generated token that is the letter (else the
  first non-blank token). Unreadable answers have no confidence.
- ``multiple_choice_separate_original``: one log-likelihood request per choice
  (``reference_index``); the pick is the argmax of the choice's logprob,
  optionally divided by its length in characters (``char``) or tokens (``token``).
- ``multiple_choice_separate_calibrated``: the score is
  ``logprob(choice | prompt) - logprob(choice | neutral context)``, the latter from
  the ``calibration``-role state with the same ``reference_index``. Length
  normalisation is not applied on top (the neutral context already corrects for it).

For the separate methods the confidence is the softmax of the choice scores at the
pick. Ties go to the lowest choice index. A unit whose requests failed has no pick
(scored wrong, and left out of calibration).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from holistic.core.types import Completion, RequestState, Token
from holistic.metrics.states import CALIBRATION_ROLE, MAIN_ROLE, Unit, outputs, succeeded

JOINT = "multiple_choice_joint"
SEPARATE_ORIGINAL = "multiple_choice_separate_original"
SEPARATE_CALIBRATED = "multiple_choice_separate_calibrated"
MULTIPLE_CHOICE_METHODS = (JOINT, SEPARATE_ORIGINAL, SEPARATE_CALIBRATED)
LENGTH_NORMALIZATIONS = ("none", "char", "token")
ANSWER_PARSINGS = ("helm", "lenient")

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


def resolve(unit: Unit, method: str, length_normalization: str = "none", answer_parsing: str = "helm") -> ChoiceOutcome:
    """Resolve one unit of a multiple-choice run."""
    if method == JOINT:
        if answer_parsing not in ANSWER_PARSINGS:
            raise ValueError(f"answer_parsing must be one of {', '.join(ANSWER_PARSINGS)}; got {answer_parsing!r}")
        return _resolve_joint(unit) if answer_parsing == "lenient" else _resolve_joint_helm(unit)
    if method in (SEPARATE_ORIGINAL, SEPARATE_CALIBRATED):
        if length_normalization not in LENGTH_NORMALIZATIONS:
            raise ValueError(
                f"length_normalization must be one of {', '.join(LENGTH_NORMALIZATIONS)}; got {length_normalization!r}"
            )
        return _resolve_separate(unit, calibrated=method == SEPARATE_CALIBRATED, normalization=length_normalization)
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


def _resolve_joint_helm(unit: Unit) -> ChoiceOutcome:
    mains = unit.with_role(MAIN_ROLE)
    if not mains or not succeeded(mains[0]) or not mains[0].output_mapping:
        return ChoiceOutcome(None, False, None)
    state = mains[0]
    mapping = state.output_mapping or {}
    assert state.result is not None
    completions = state.result.completions
    best = max(completions, key=lambda c: c.logprob) if completions else None
    confidence = math.exp(best.logprob) if best is not None and state.result.has_logprobs else None
    choice = mapping.get(best.text.strip()) if best is not None else None
    index = None if choice is None else _reference_index(unit, choice)
    correct = index is not None and unit.instance.references[index].is_correct
    return ChoiceOutcome(index, correct, confidence)


def _resolve_joint(unit: Unit) -> ChoiceOutcome:
    mains = unit.with_role(MAIN_ROLE)
    if not mains:
        return ChoiceOutcome(None, False, None)
    state = mains[0]
    mapping = state.output_mapping or {}
    if not succeeded(state) or not mapping:
        return ChoiceOutcome(None, False, None)
    letter = parse_letter(outputs(state)[0], mapping)
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


def _resolve_separate(unit: Unit, *, calibrated: bool, normalization: str) -> ChoiceOutcome:
    n_choices = len(unit.instance.references)
    main = _by_reference(unit.with_role(MAIN_ROLE))
    neutral = _by_reference(unit.with_role(CALIBRATION_ROLE)) if calibrated else {}
    scores: list[float] = []
    for i in range(n_choices):
        state = main.get(i)
        if state is None or not succeeded(state):
            return ChoiceOutcome(None, False, None)
        if calibrated:
            base = neutral.get(i)
            if base is None or not succeeded(base):
                return ChoiceOutcome(None, False, None)
            scores.append(_logprob(state) - _logprob(base))
        else:
            scores.append(_normalised(state, normalization))
    if not scores:
        return ChoiceOutcome(None, False, None)
    predicted = max(range(n_choices), key=lambda i: (scores[i], -i))
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


def _normalised(state: RequestState, normalization: str) -> float:
    logprob = _logprob(state)
    if normalization == "none":
        return logprob
    assert state.result is not None
    completion = state.result.completions[0]
    continuation = state.request.continuation or completion.text
    if normalization == "char":
        return logprob / max(len(continuation), 1)
    n_tokens = len(completion.tokens) or max(len(continuation.split()), 1)
    return logprob / n_tokens


def softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return [w / total for w in weights]
