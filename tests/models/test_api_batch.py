"""Batch mode at the client level: the real openai and anthropic SDKs against a loopback server
that speaks both batch APIs (:mod:`tests.support.batch_server`), bad input included."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import ModelError
from holistic.core.types import Capabilities, Message, ModelDeployment, Request, RequestResult
from holistic.models.anthropic_client import AnthropicClient
from holistic.models.api_client import ApiClient
from holistic.models.batch_client import BatchClient
from holistic.models.batch_journal import BatchJournal
from holistic.models.cache import RequestCache, cache_key
from holistic.models.openai_client import OpenAIClient
from holistic.models.pricing import spending_limit
from tests.support.batch_server import BatchServer

KEY = "sk-loop-0123456789abcdef"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOP_KEY", KEY)


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer(polls_to_end=2) as s:
        yield s


def deployment(server: BatchServer, provider: str = "openai", **args: Any) -> ModelDeployment:
    url = server.openai_url if provider == "openai" else server.anthropic_url
    return ModelDeployment(
        name=f"loop/{provider}",
        provider=provider,
        model_id="m",
        args={"base_url": url, "batch_poll_s": 0.01, **args},
        capabilities=Capabilities(chat=True, completions=provider == "openai", logprobs=provider == "openai"),
        api_key_env="LOOP_KEY",
        price_input_per_million=1.0,
        price_output_per_million=2.0,
    )


def online_client(d: ModelDeployment) -> ApiClient:
    return OpenAIClient(d) if d.provider == "openai" else AnthropicClient(d)


def batch_client(d: ModelDeployment, folder: Path, **kw: Any) -> tuple[BatchClient, RequestCache, list[str]]:
    cache = RequestCache(folder / "requests.sqlite")
    said: list[str] = []
    client = BatchClient(online_client(d), folder=folder, cache=cache, notify=said.append, sleep=lambda s: None, **kw)
    return client, cache, said


def requests(d: ModelDeployment, n: int = 6) -> list[Request]:
    plain = [
        Request(model=d.name, prompt=f"What is {i} + {i}?", max_tokens=3, logprobs=True, top_k_logprobs=2)
        for i in range(n)
    ]
    chat = Request(model=d.name, messages=(Message("system", "Be brief."), Message("user", "Hi?")), max_tokens=2)
    return [*plain, chat]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_answers_equal_online_answers(server: BatchServer, tmp_path: Path, provider: str) -> None:
    d = deployment(server, provider)
    reqs = requests(d)
    online = online_client(d).process(reqs)
    sent_online = server.seen.online
    heard: list[RequestResult] = []
    client, cache, said = batch_client(d, tmp_path, on_answer=lambda req, res: heard.append(res))
    got = client.process(reqs)
    assert server.seen.online == sent_online
    for o, g in zip(online, got, strict=True):
        assert o.success and g.success
        assert (g.completions, g.prompt_tokens, g.completion_tokens) == (
            o.completions,
            o.prompt_tokens,
            o.completion_tokens,
        )
        assert g.batch and not o.batch
        assert o.cost_usd > 0 and g.cost_usd == pytest.approx(o.cost_usd * 0.5)  # the batch discount
    if provider == "openai":
        assert got[0].completions[0].tokens and got[0].has_logprobs  # completions with logprobs, by batch
    # answers landed in the cache under the requests' own keys
    keys = [cache_key(client.identity(), r) for r in reqs]
    assert set(cache.get_many(keys)) == set(keys)
    assert len(heard) == len(reqs)
    assert any("submitted batch" in s for s in said) and any("waited" in s for s in said)


def test_a_budget_counts_batch_answers_and_sends_nothing_new_once_reached(server: BatchServer, tmp_path: Path) -> None:
    d = deployment(server)
    reqs = requests(d)
    with spending_limit(1.0) as spending:
        assert spending is not None
        client, cache, _ = batch_client(d, tmp_path)
        got = client.process(reqs[:3])
        assert all(r.success for r in got)
        assert spending.spent_usd == pytest.approx(sum(r.cost_usd for r in got))  # batch prices, as read
        spending.add(1.0)  # the budget is reached
        created = server.seen.batches_created
        rest = client.process(reqs[3:])
    assert server.seen.batches_created == created  # nothing new was sent
    assert [r.error_kind for r in rest] == ["budget"] * len(rest)
    keys = [cache_key(client.identity(), r) for r in reqs[3:]]
    assert cache.get_many(keys) == {}  # never cached: a rerun sends them


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_prompt_tokens_read_from_the_providers_cache_are_priced_lower(tmp_path: Path, provider: str) -> None:
    prices: list[list[float]] = []
    tokens: list[int] = []
    for cached in (0, 40):
        with BatchServer(polls_to_end=1, cached_tokens=cached) as s:
            d = replace(deployment(s, provider), price_cached_input_per_million=0.1)
            req = Request(model=d.name, prompt="What is 2 + 2? " * 20, max_tokens=3)
            online = online_client(d).process([req])[0]
            client, _, _ = batch_client(d, tmp_path / f"{cached}")
            by_batch = client.process([req])[0]
            assert online.success and by_batch.success
            prices.append([online.cost_usd, by_batch.cost_usd])
            tokens.append(online.prompt_tokens)
    assert tokens[0] == tokens[1] > 40  # the same prompt, 40 of its tokens at $0.1/M instead of $1/M
    assert prices[1][0] == pytest.approx(prices[0][0] - 40 * 0.9 / 1e6)
    assert prices[1][0] < prices[0][0] and prices[1][1] < prices[0][1]
    assert prices[1][1] == pytest.approx(prices[1][0] * 0.5)  # batch answers too, discounted


def test_several_samples_take_several_lines(server: BatchServer, tmp_path: Path) -> None:
    d = deployment(server, "anthropic")
    req = Request(model=d.name, prompt="Pick a number", max_tokens=2, num_completions=3, temperature=1.0)
    online = online_client(d).process([req])[0]
    got = batch_client(d, tmp_path)[0].process([req])[0]
    assert got.success and got.completions == online.completions and len(got.completions) == 3


def test_batches_are_split_by_the_limits(server: BatchServer, tmp_path: Path) -> None:
    d = deployment(server, batch_max_requests=3)
    got = batch_client(d, tmp_path)[0].process(requests(d, 7))
    assert all(r.success for r in got)
    assert server.seen.batches_created == 4  # 7 plain prompts in threes; the chat request by itself


def test_expired_lines_go_again_in_a_new_batch(server: BatchServer, tmp_path: Path) -> None:
    server.mode = "expire_first"
    d = deployment(server)
    got = batch_client(d, tmp_path)[0].process(requests(d, 3))
    assert all(r.success for r in got)
    assert server.seen.batches_created == 3 and server.seen.online == 0  # chat and plain batches, then the retry


def test_expired_lines_go_online_with_batch_retry_online(server: BatchServer, tmp_path: Path) -> None:
    server.mode = "expire_first"
    d = deployment(server, "anthropic", batch_retry="online")
    got = batch_client(d, tmp_path)[0].process(requests(d, 3))
    assert all(r.success for r in got)
    assert server.seen.batches_created == 1 and server.seen.online == 4
    assert not any(r.batch for r in got)


def test_garbage_results_fail_each_request_bounded_and_cache_nothing(server: BatchServer, tmp_path: Path) -> None:
    server.mode = "garbage"
    d = deployment(server, batch_max_retries=1)
    client, cache, _ = batch_client(d, tmp_path)
    got = client.process(requests(d, 3))
    assert not any(r.success for r in got)
    assert all("not answered after 2 batch(es)" in (r.error or "") and "cannot be read" in (r.error or "") for r in got)
    assert server.seen.batches_created == 4  # two endpoints, sent twice each, then given up
    assert len(cache) == 0


def test_unknown_and_duplicate_custom_ids_are_reported_and_lose_nothing(server: BatchServer, tmp_path: Path) -> None:
    server.mode = "dupes"
    d = deployment(server)
    client, cache, said = batch_client(d, tmp_path)
    got = client.process(requests(d, 3))
    assert all(r.success for r in got)
    assert len(cache) == 4
    warning = next(s for s in said if "custom_id" in s)
    assert "1 custom_id(s) it was not sent" in warning and "3 twice" in warning


def test_answers_that_cannot_be_stored_are_failed_requests(server: BatchServer, tmp_path: Path) -> None:
    server.mode = "nan"
    d = deployment(server)
    d = ModelDeployment(**{**d.__dict__, "capabilities": Capabilities(chat=False, completions=True, logprobs=True)})
    client, cache, _ = batch_client(d, tmp_path)
    got = client.process(requests(d, 2)[:2])
    assert not any(r.success for r in got)
    assert all(r.error_kind == "invalid_response" and "not a finite number" in (r.error or "") for r in got)
    assert len(cache) == 0


def test_a_results_file_past_its_bound_keeps_what_was_read(server: BatchServer, tmp_path: Path) -> None:
    server.mode, server.huge_bytes = "huge", 3_000_000
    d = deployment(server, batch_max_results_bytes=1_000_000)
    client, _, said = batch_client(d, tmp_path)
    got = client.process(requests(d, 3))
    assert all(r.success for r in got)  # every answer came before the padding
    assert any("larger than 1,000,000 bytes" in s for s in said)


def test_a_batch_that_never_ends_leaves_requests_failed_and_is_resumed(server: BatchServer, tmp_path: Path) -> None:
    server.mode = "never"
    d = deployment(server, batch_timeout_s=0.2)
    client, _, _ = batch_client(d, tmp_path, clock=iter(range(0, 10**6)).__next__)
    got = client.process(requests(d, 2))
    assert all(r.error_kind == "batch_timeout" for r in got)
    assert len(BatchJournal(tmp_path / "batches.sqlite").open_batches(client.scope)) == 2
    client.close()
    server.mode = "ok"
    again = batch_client(d, tmp_path)[0].process(requests(d, 2))
    assert all(r.success for r in again)
    assert server.seen.batches_created == 2  # the same batches, collected


def test_no_wait_submits_and_a_later_call_collects(server: BatchServer, tmp_path: Path) -> None:
    d = deployment(server)
    client, _, said = batch_client(d, tmp_path, wait=False)
    first = client.process(requests(d, 2))
    assert all(r.error_kind == "batch_pending" for r in first)
    assert any("run the same command again" in s for s in said)
    for _ in range(3):  # (serving asks the cache first: answered requests never reach process again)
        got = batch_client(d, tmp_path, wait=False)[0].process(requests(d, 2))
        if all(r.success for r in got):
            break
    assert all(r.success for r in got)
    assert server.seen.batches_created == 2


def test_a_status_the_api_does_not_define_keeps_the_batch(server: BatchServer, tmp_path: Path) -> None:
    server.mode = "bad_status"
    d = deployment(server, "anthropic", max_attempts=1)
    got = batch_client(d, tmp_path)[0].process(requests(d, 1))
    assert all(r.error_kind == "batch_unreadable" for r in got)
    assert server.seen.batches_created == 1


def test_a_broken_download_keeps_the_batch_for_later_and_sends_nothing_again(
    server: BatchServer, tmp_path: Path
) -> None:
    server.mode = "cut"
    d = deployment(server, "anthropic", max_attempts=1)
    client, cache, _ = batch_client(d, tmp_path)
    got = client.process(requests(d, 3))
    assert any(r.error_kind == "batch_unreadable" for r in got)
    assert len(cache) == sum(r.success for r in got)  # the answers read before the break are kept
    server.mode = "ok"
    again = batch_client(d, tmp_path)[0].process(requests(d, 3))
    assert all(r.success for r in again)
    assert server.seen.batches_created == 1


def test_batch_settings_are_checked(server: BatchServer, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="batch_retry must be one of batch, online"):
        batch_client(deployment(server, batch_retry="later"), tmp_path)
    with pytest.raises(ModelError, match="batch_max_requests must be a number from 1 to 50000"):
        batch_client(deployment(server, batch_max_requests=60_000), tmp_path)


class _Killed(BaseException):
    """The process dying at a chosen line (nothing after it runs, no cleanup of ours)."""


def _kill_once(monkeypatch: pytest.MonkeyPatch, cls: type, name: str, before: bool) -> None:
    """Make ``cls.name`` kill the process once: before it runs, or right after."""
    real = getattr(cls, name)
    done: list[bool] = []

    def dying(self: Any, *args: Any, **kwargs: Any) -> Any:
        if done:
            return real(self, *args, **kwargs)
        done.append(True)
        if before:
            raise _Killed
        real(self, *args, **kwargs)
        raise _Killed

    monkeypatch.setattr(cls, name, dying)


ONE_LINE = json.dumps(
    {"requests": [{"custom_id": "x", "params": {"model": "m", "max_tokens": 1, "messages": []}}]}
).encode()
"""A batch body of one line, created at the server directly (someone else's batch)."""

BATCHES_PER_RUN = {"openai": 2, "anthropic": 1}  # requests() holds completions and chat: two OpenAI endpoints


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_lost_creation_reply_is_found_at_the_provider_not_sent_twice(tmp_path: Path, provider: str) -> None:
    with BatchServer(polls_to_end=2, mode="lose_create") as server:
        d = deployment(server, provider)
        client, _, _ = batch_client(d, tmp_path)
        got = client.process(requests(d, 3))
        assert all(r.success for r in got), [r.error for r in got]
        assert server.seen.batches_created == BATCHES_PER_RUN[provider]  # the lost one was found, not re-created
        assert any(p.startswith("GET /v1/") and p.split("?")[0].endswith("batches") for p in server.seen.paths)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_killed_between_the_providers_reply_and_the_journal_resumes_that_batch(
    server: BatchServer, tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = deployment(server, provider)
    _kill_once(monkeypatch, BatchJournal, "adopt", before=True)  # the provider took it; its id never written
    with pytest.raises(_Killed):
        batch_client(d, tmp_path)[0].process(requests(d, 3))
    assert server.seen.batches_created == 1
    client, cache, said = batch_client(d, tmp_path)
    got = client.process(requests(d, 3))
    assert all(r.success for r in got), [r.error for r in got]
    assert server.seen.batches_created == BATCHES_PER_RUN[provider]  # the first batch was taken up, not sent again
    assert any("found at the provider" in s for s in said)
    assert len(cache) == len(got)


def test_killed_before_the_batch_was_sent_sends_it_on_restart(
    server: BatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = deployment(server, "anthropic")
    _kill_once(monkeypatch, BatchJournal, "intend", before=False)  # the intent written, nothing sent
    with pytest.raises(_Killed):
        batch_client(d, tmp_path)[0].process(requests(d, 3))
    assert server.seen.batches_created == 0
    client, _, said = batch_client(d, tmp_path)
    got = client.process(requests(d, 3))
    assert all(r.success for r in got)
    assert server.seen.batches_created == 1
    assert any("never reached the provider" in s for s in said)
    journal = BatchJournal(tmp_path / "batches.sqlite")
    assert set(journal.tries(_lines(journal)).values()) == {1}  # sent once, counted once


def test_an_anthropic_batch_that_cannot_be_told_apart_is_not_taken(server: BatchServer, tmp_path: Path) -> None:
    """Two unknown batches of the intent's size since it was written: neither is taken."""
    d = deployment(server, "anthropic")
    vendor = batch_client(d, tmp_path)[0].vendor
    for _ in range(2):
        server._new_batch("anthropic", "/v1/messages", ONE_LINE)
    assert vendor.find("holistic-x", time.time(), 1, set()) is None
    assert vendor.find("holistic-x", time.time(), 1, {"batch_1"}) == "batch_2"
    assert vendor.find("holistic-x", time.time(), 2, set()) is None  # not the intent's size
    assert vendor.find("holistic-x", time.time() + 3600, 1, set()) is None  # created before the intent


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_listing_that_pages_in_circles_is_read_once(server: BatchServer, tmp_path: Path, provider: str) -> None:
    server.mode = "circular_list"
    d = deployment(server, provider)
    vendor = batch_client(d, tmp_path)[0].vendor
    server._new_batch(provider, "/v1/messages", ONE_LINE, {"holistic_intent": "other"})
    assert vendor.find("holistic-x", time.time(), 5, set()) is None
    listings = [p for p in server.seen.paths if p.startswith("GET") and p.split("?")[0].endswith("batches")]
    assert 1 <= len(listings) <= 2  # the second page repeats the first: the lookup stops


def _lines(journal: BatchJournal) -> list[str]:
    return [str(c) for (c,) in journal._run("SELECT custom_id FROM lines")]
