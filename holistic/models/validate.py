"""What a model may answer: checked before an answer is cached, used or trusted from the cache.

A server can send text that cannot be written (a lone surrogate such as ``\\ud800``),
numbers that are not numbers (NaN, Infinity log-probabilities) or out of any range
(``prompt_tokens = 10**30``), or simply too much. Cached, such an answer would fail every
rerun; so :func:`result_problem` says what is wrong with a result, serving turns that
into a failed request (recorded, retried on the next run, never stored), and the cache
treats a stored row with a problem as a miss.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from holistic.core.types import RequestResult

MAX_COUNT = 2**53
"""Largest token count accepted (exact in a float64, far inside Parquet's int64)."""

MAX_RESULT_CHARS = 64 * 1024 * 1024
"""Characters of text one result may carry (its completions, tokens and error together)."""


def _texts(result: RequestResult) -> Iterator[tuple[str, str]]:
    for i, completion in enumerate(result.completions):
        yield f"completion {i}", completion.text
        if completion.finish_reason is not None:
            yield f"completion {i} finish_reason", completion.finish_reason
        for token in completion.tokens:
            yield f"completion {i} token", token.text
            yield from ((f"completion {i} top_logprobs", k) for k in token.top_logprobs)
    for token in result.prompt_logprobs or ():
        yield "prompt token", token.text
        yield from (("prompt top_logprobs", k) for k in token.top_logprobs)
    if result.error is not None:
        yield "error", result.error
    yield "engine", result.engine


def _numbers(result: RequestResult) -> Iterator[tuple[str, object]]:
    yield "latency_s", result.latency_s
    yield "cost_usd", result.cost_usd
    for i, completion in enumerate(result.completions):
        yield f"completion {i} logprob", completion.logprob
        for token in completion.tokens:
            yield f"completion {i} token logprob", token.logprob
            yield from ((f"completion {i} top logprob", v) for v in token.top_logprobs.values())
    for token in result.prompt_logprobs or ():
        yield "prompt token logprob", token.logprob
        yield from (("prompt top logprob", v) for v in token.top_logprobs.values())


def result_problem(result: RequestResult, *, max_chars: int = MAX_RESULT_CHARS) -> str | None:
    """Why ``result`` cannot be stored and used (``None`` when it can)."""
    chars = 0
    for where, text in _texts(result):
        if not isinstance(text, str):
            return f"{where} is {type(text).__name__}, not text"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{where} has text that is not Unicode ({exc.reason} at character {exc.start})"
        chars += len(text)
        if chars > max_chars:
            return f"the answer carries more than {max_chars:,} characters of text"
    for where, value in _numbers(result):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{where} is {type(value).__name__}, not a number"
        if not math.isfinite(value):
            return f"{where} is {value}, not a finite number"
    for where, count in (
        ("prompt_tokens", result.prompt_tokens),
        ("completion_tokens", result.completion_tokens),
        ("attempts", result.attempts),
    ):
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
            return f"{where} is {count!r}, not a count between 0 and {MAX_COUNT:,}"
    return None


def checked(result: RequestResult) -> RequestResult:
    """``result``, or a failed result saying what was wrong with it (``error_kind="invalid_response"``)."""
    if not result.success:
        problem = result_problem(result)
        if problem is None:
            return result
        return RequestResult.failure(f"unusable failure report: {problem}", "invalid_response")
    problem = result_problem(result)
    if problem is None:
        return result
    return RequestResult.failure(
        f"the model's answer cannot be used: {problem}",
        "invalid_response",
        attempts=result.attempts if isinstance(result.attempts, int) and 0 <= result.attempts <= MAX_COUNT else 1,
        engine=result.engine if isinstance(result.engine, str) and result.engine.isprintable() else "",
    )
