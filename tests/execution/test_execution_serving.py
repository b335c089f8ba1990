"""Serving requests: cache hits, deduplication, batching, failures, concurrency."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import ModelError
from holistic.core.types import Completion, Instance, ModelDeployment, Request, RequestResult, RequestState
from holistic.execution.serving import serve
from holistic.models.cache import RequestCache


class FakeClient:
    """Answers the prompt reversed; fails prompts containing 'FAIL'; counts calls."""

    request_batch_size = 32

    def __init__(self, provider: str = "simple", raise_on: str | None = None) -> None:
        self.deployment = ModelDeployment(name=f"{provider}/fake", provider=provider, model_id="fake")
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()
        self.raise_on = raise_on
        self.lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {**self.deployment.identity(), "engine": "fake"}

    def tokenizer(self) -> Any:
        raise NotImplementedError

    def usage(self) -> dict[str, int]:
        return {}

    def begin_run(self) -> None:
        pass

    def close(self) -> None:
        pass

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        with self.lock:
            self.batches.append([r.prompt for r in requests])
            self.threads.add(threading.current_thread().name)
        if self.raise_on and any(self.raise_on in r.prompt for r in requests):
            raise RuntimeError("provider bug")
        return [
            RequestResult(success=False, error="bad prompt", error_kind="client")
            if "FAIL" in r.prompt
            else RequestResult(success=True, completions=(Completion(text=r.prompt[::-1]),), latency_s=0.5)
            for r in requests
        ]


def _states(prompts: Sequence[str]) -> list[RequestState]:
    return [
        RequestState(instance=Instance(id=f"i{n}", input=p), request=Request(model="simple/fake", prompt=p))
        for n, p in enumerate(prompts)
    ]


def test_second_serve_comes_entirely_from_the_cache(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    prompts = [f"prompt {i}" for i in range(10)]
    client = FakeClient()
    out, keys, stats = serve(_states(prompts), client, cache, batch_size=4)
    assert [s.result.completions[0].text for s in out if s.result] == [p[::-1] for p in prompts]
    assert (stats.model_calls, stats.cache_hits, stats.failed) == (10, 0, 0)
    assert [len(b) for b in client.batches] == [4, 4, 2]
    again = FakeClient()
    out2, keys2, stats2 = serve(_states(prompts), again, cache, batch_size=4)
    assert again.batches == []
    assert keys2 == keys
    assert (stats2.model_calls, stats2.cache_hits) == (0, 10)
    assert all(s.result is not None and s.result.cached and s.result.latency_s == 0.5 for s in out2)


def test_identical_requests_are_sent_once() -> None:
    client = FakeClient()
    out, _, stats = serve(_states(["same", "same", "other"]), client, None)
    assert sum(len(b) for b in client.batches) == 2
    assert (stats.requests, stats.unique) == (3, 2)
    assert [s.result.completions[0].text for s in out if s.result] == ["emas", "emas", "rehto"]


def test_failures_are_recorded_counted_and_not_cached(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    out, _, stats = serve(_states(["ok", "FAIL me", "fine"]), FakeClient(), cache)
    assert stats.failed == 1
    assert stats.error_rate == pytest.approx(1 / 3)
    assert out[1].result is not None and out[1].result.error == "bad prompt"
    retry = FakeClient()
    serve(_states(["ok", "FAIL me", "fine"]), retry, cache)
    assert retry.batches == [["FAIL me"]]  # only the failure is asked again


def test_a_raising_provider_fails_its_batch_and_the_run_goes_on() -> None:
    client = FakeClient(raise_on="boom")
    out, _, stats = serve(_states(["a boom", "b", "c", "d"]), client, None, batch_size=2)
    assert stats.failed == 2
    failed = [s for s in out if s.result is not None and not s.result.success]
    assert all("RuntimeError: provider bug" in (s.result.error or "") for s in failed if s.result)


def test_setup_errors_propagate() -> None:
    class Broken(FakeClient):
        def process(self, requests: Sequence[Request]) -> list[RequestResult]:
            raise ModelError("OPENAI_API_KEY is not set")

    with pytest.raises(ModelError):
        serve(_states(["a"]), Broken(), None)


def test_api_providers_use_threads_local_providers_do_not() -> None:
    prompts = [f"p{i}" for i in range(16)]
    api = FakeClient(provider="openai")
    progress: list[int] = []
    out, _, _ = serve(
        _states(prompts),
        api,
        None,
        batch_size=1,
        concurrency=4,
        progress=lambda idx, hits, errors: progress.extend(idx),
    )
    assert sorted(progress) == list(range(16))
    assert [s.request.prompt for s in out] == prompts  # order restored
    local = FakeClient(provider="simple")
    serve(_states(prompts), local, None, batch_size=1, concurrency=4)
    assert local.threads == {threading.current_thread().name}
