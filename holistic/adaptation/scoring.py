"""Arithmetic that metrics apply to log-likelihood request states.

Adaptation stores raw material only: each ``loglikelihood`` result carries the summed
logprob (``Completion.logprob``) and the scored tokens (``Completion.tokens``); the
scored text is ``Request.continuation``. Metrics turn these into scores with the
helpers here, so every metric applies ``AdapterSpec.length_normalization`` and the
calibration difference the same way.
"""

from __future__ import annotations

from holistic.core.specs import LENGTH_NORMALIZATIONS
from holistic.core.types import RequestState


def calibrated_score(main_logprob: float, calibration_logprob: float) -> float:
    """Score of a choice under ``multiple_choice_separate_calibrated``.

    ``log p(choice | prompt) - log p(choice | answer cue alone)``: how much the question
    raises the choice's probability over its prior. Higher is better.
    """
    return main_logprob - calibration_logprob


def normalized_logprob(logprob: float, choice: str, num_tokens: int, mode: str) -> float:
    """A choice's summed logprob under ``AdapterSpec.length_normalization``.

    ``choice`` is the choice text itself, without the space the prompt layout puts
    before it (lm-evaluation-harness's ``target_delimiter``):

    - ``none``: the sum (lm-evaluation-harness ``acc``);
    - ``char``: divided by ``len(choice)``, lm-evaluation-harness's ``acc_norm``;
    - ``token``: divided by the number of scored tokens (HELM, which scores the
      continuation as sent, its leading space included);
    - ``byte``: divided by the UTF-8 bytes of ``choice`` (lm-evaluation-harness ``acc_bytes``).

    A zero length divides by 1.
    """
    if mode == "none":
        return logprob
    if mode == "char":
        return logprob / max(len(choice), 1)
    if mode == "token":
        return logprob / max(num_tokens, 1)
    if mode == "byte":
        return logprob / max(len(choice.encode("utf-8")), 1)
    raise ValueError(f"unknown length normalization {mode!r} (valid: {', '.join(LENGTH_NORMALIZATIONS)})")


def choice_text(state: RequestState) -> str:
    """The choice a scored state is about: the continuation as sent without the
    delimiter space the prompt layout put before it (the reference's own text for
    multiple choice)."""
    continuation = state.request.continuation
    index = state.reference_index
    references = state.instance.references
    if index is not None and 0 <= index < len(references):
        text = references[index].output
        if continuation in (text, " " + text):
            return text
    prompt = state.request.prompt
    if continuation.startswith(" ") and prompt and not prompt[-1].isspace():
        return continuation[1:]
    return continuation


def state_logprob(state: RequestState, mode: str = "none") -> float | None:
    """The (normalised) logprob of a scored state's choice, ``None`` without a result."""
    result = state.result
    if result is None or not result.success or not result.completions:
        return None
    completion = result.completions[0]
    return normalized_logprob(completion.logprob, choice_text(state), len(completion.tokens), mode)


def scored_bytes(state: RequestState) -> int:
    """UTF-8 bytes of the text a ``loglikelihood`` state scores (for bits per byte)."""
    return len(state.request.continuation.encode("utf-8"))
