"""Serve a run's requests: cache look-up, batching, concurrency, incremental caching.

- Identical requests within a run (same cache key) are sent once.
- Cache hits are answered first; the misses go to ``client.process`` in batches.
- Misses are sorted longest prompt first before batching: batches of similar length
  waste less padding in local models, and a prompt that does not fit in memory fails
  in the first batch rather than after an hour. Results are put back by key, so the
  run's order never depends on this.
- With ``concurrency > 1`` batches are sent from that many threads (useful for API
  providers; local providers keep one thread, see :attr:`~holistic.models.provider.Provider.in_process`).
- Every answer is checked (:mod:`holistic.models.validate`) before it is cached or used: one
  that cannot be stored (text that is not Unicode, a NaN, a count out of range, too much
  text) becomes a failed request, retried on the next run.
- Each finished batch is written to the cache in one transaction before the next is
  reported, so an interrupted run loses at most the batches in flight.
- A batch whose ``process`` raises (a provider bug; providers should not raise for a
  bad request) is recorded as failed requests with the exception as error, and the run
  goes on. Set-up errors (:class:`~holistic.core.errors.HolisticError`, e.g. a missing
  API key) and interrupts propagate.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from holistic.core.errors import HolisticError
from holistic.core.interfaces import Client
from holistic.core.secrets import REDACTED, Redactor
from holistic.core.types import Completion, Request, RequestResult, RequestState, Token
from holistic.models.cache import ResultCache, cache_key
from holistic.models.registry import runs_in_process
from holistic.models.reliability import completed_concurrently
from holistic.models.validate import checked

ProgressCallback = Callable[[Sequence[int], int, int], None]
"""``(state indices just finished, cache hits among them, failures among them)``."""


@dataclass(frozen=True)
class ServeStats:
    """Counts of one run's request serving."""

    requests: int
    """Request states in the run."""
    unique: int
    """Distinct cache keys among them (identical requests are sent once)."""
    cache_hits: int
    """Distinct requests answered from the cache."""
    model_calls: int
    """Distinct requests sent to the model."""
    failed: int
    """Request states whose result is a failure."""
    engine: Mapping[str, int] = field(default_factory=dict)
    """What a local engine did for these requests: ``forward_calls``, ``forward_tokens``
    (real tokens through the model), ``padded_positions``, ``prefix_hits``, ``model_loads``.
    Empty for providers that do not count."""

    @property
    def error_rate(self) -> float:
        return self.failed / self.requests if self.requests else 0.0


def effective_concurrency(client: Client, concurrency: int) -> int:
    """Threads to use for ``client``: 1 for in-process providers, ``concurrency`` for the rest,
    at least the client's ``batches_in_flight`` when it asks for more (an adaptive API client)."""
    if runs_in_process(client.deployment.provider):
        return 1
    return max(1, concurrency, int(getattr(client, "batches_in_flight", 1)))


def _call_batch(client: Client, requests: Sequence[Request]) -> list[RequestResult]:
    start = time.perf_counter()
    try:
        results = list(client.process(list(requests)))
    except HolisticError:
        raise
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        return [RequestResult.failure(message, "client") for _ in requests]
    if len(results) != len(requests):
        message = f"provider returned {len(results)} results for {len(requests)} requests"
        return [RequestResult.failure(message, "client") for _ in requests]
    elapsed = time.perf_counter() - start
    share = elapsed / max(len(requests), 1)
    # A provider that does not time single requests gets its share of the batch's wall time.
    return [r if r.latency_s > 0 else replace(r, latency_s=share) for r in results]


def redact_result(result: RequestResult, redactor: Redactor | None) -> RequestResult:
    """``result`` with known secret values removed from its completions and error."""
    if not redactor:
        return result
    completions = tuple(_redact_completion(c, redactor) for c in result.completions)
    error = redactor.text(result.error) if result.error else result.error
    prompt_tokens = result.prompt_logprobs
    if prompt_tokens is not None and _leaks(prompt_tokens, redactor):
        prompt_tokens = tuple(replace(t, text=REDACTED, top_logprobs={}) for t in prompt_tokens)
    if completions == result.completions and error == result.error and prompt_tokens is result.prompt_logprobs:
        return result
    return replace(result, completions=completions, error=error, prompt_logprobs=prompt_tokens)


def _leaks(tokens: Sequence[Token], redactor: Redactor) -> bool:
    """Whether a secret shows in the tokens' text (joined: a key may be split across tokens) or
    in their alternatives."""
    joined = "".join(t.text for t in tokens)
    return redactor.text(joined) != joined or any(redactor.text(alt) != alt for t in tokens for alt in t.top_logprobs)


def _redact_completion(completion: Completion, redactor: Redactor) -> Completion:
    """A completion with known secrets removed from its text and, where they show in its tokens
    (split across them or not), every token's text masked (their log-probabilities are kept)."""
    text = redactor.text(completion.text)
    tokens = completion.tokens
    if tokens and _leaks(tokens, redactor):
        tokens = tuple(replace(t, text=REDACTED, top_logprobs={}) for t in tokens)
    reason = completion.finish_reason
    reason = redactor.text(reason) if reason else reason
    if text == completion.text and tokens is completion.tokens and reason == completion.finish_reason:
        return completion
    return replace(completion, text=text, tokens=tokens, finish_reason=reason)


def serve(
    states: Sequence[RequestState],
    client: Client,
    cache: ResultCache | None,
    *,
    batch_size: int = 32,
    concurrency: int = 1,
    progress: ProgressCallback | None = None,
    redactor: Redactor | None = None,
    answered: Callable[[list[tuple[int, RequestResult]]], None] | None = None,
) -> tuple[list[RequestState], list[str], ServeStats]:
    """Fill every state's ``result``; returns the states (same order), their cache keys and counts.

    ``redactor`` scrubs known secret values from every answer before it is cached or returned;
    ``answered`` is told each state's result (by index) as soon as it exists (from the cache at
    the start, then batch by batch), so later stages can start before the last answer."""
    identity = client.identity()
    usage_before = _usage(client)
    keys = [cache_key(identity, s.request) for s in states]
    by_key: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        by_key.setdefault(key, []).append(i)
    results: dict[str, RequestResult] = {}

    def report(done_keys: Sequence[str], hits: int) -> None:
        indices = [i for k in done_keys for i in by_key[k]]
        if answered is not None:
            answered([(i, results[keys[i]]) for i in indices])
        if progress is None:
            return
        failures = sum(len(by_key[k]) for k in done_keys if not results[k].success)
        progress(indices, hits, failures)

    if cache is not None:
        results.update({k: redact_result(r, redactor) for k, r in cache.get_many(list(by_key)).items()})
        if results:
            report(list(results), len(results))
    hits = len(results)

    misses = [k for k in by_key if k not in results]
    # Longest first; equal prompts side by side, so the choices of one question (which an
    # engine computes from one shared context) fall in the same batch.
    misses.sort(key=lambda k: (-len(states[by_key[k][0]].request.text), states[by_key[k][0]].request.text))
    batches = [misses[i : i + max(1, batch_size)] for i in range(0, len(misses), max(1, batch_size))]
    model_id = client.deployment.model_id

    def run_batch(batch: list[str]) -> list[str]:
        batch_results = [
            checked(redact_result(r, redactor))
            for r in _call_batch(client, [states[by_key[k][0]].request for k in batch])
        ]
        if cache is not None:
            cache.put_many(
                (k, r, model_id, states[by_key[k][0]].request.kind) for k, r in zip(batch, batch_results, strict=True)
            )
        for k, r in zip(batch, batch_results, strict=True):
            results[k] = r
        return batch

    threads = effective_concurrency(client, concurrency)
    if threads == 1 or len(batches) <= 1:
        for batch in batches:
            report(run_batch(batch), 0)
    else:
        # Daemon threads, not a thread pool: on Ctrl-C the process must not wait for a stuck batch.
        for _, batch in completed_concurrently(run_batch, batches, threads):
            report(batch, 0)

    out = [s.with_result(results[k]) for s, k in zip(states, keys, strict=True)]
    stats = ServeStats(
        requests=len(states),
        unique=len(by_key),
        cache_hits=hits,
        model_calls=len(misses),
        failed=sum(1 for s in out if s.result is not None and not s.result.success),
        engine={k: v - usage_before.get(k, 0) for k, v in _usage(client).items()},
    )
    return out, keys, stats


def _usage(client: Client) -> dict[str, int]:
    return dict(client.usage())
