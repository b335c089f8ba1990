"""The SQLite request cache: keys, round trips, errors, threads and processes."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path
from typing import Any

from holistic.core.types import Completion, Request, RequestResult, Token
from holistic.models.cache import RequestCache, cache_key

IDENTITY: dict[str, Any] = {
    "provider": "simple",
    "model_id": "echo",
    "args": {},
    "tokenizer": None,
    "engine": "simple-1",
}


def _result(text: str = " yes", latency: float = 0.25) -> RequestResult:
    tokens = (Token(" yes", -0.1, {" yes": -0.1, " no": -2.3}),)
    return RequestResult(
        success=True,
        completions=(Completion(text=text, logprob=-0.1, tokens=tokens, finish_reason="stop"),),
        prompt_tokens=7,
        completion_tokens=1,
        prompt_logprobs=(Token("Q", -1.5),),
        latency_s=latency,
        has_logprobs=True,
        engine="simple",
    )


def test_cached_result_round_trips_with_cached_flag_and_original_latency(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    req = Request(model="simple/echo", prompt="Q: is it?\nA:")
    key = cache_key(IDENTITY, req)
    assert cache.get(key) is None
    assert cache.put(key, _result(latency=0.25))
    got = cache.get(key)
    assert got is not None
    assert got.cached is True
    assert got.latency_s == 0.25
    assert got.completions == _result().completions
    assert got.prompt_logprobs == _result().prompt_logprobs
    assert got.prompt_tokens == 7
    cache.close()
    # persisted: a new cache object on the same file sees it
    reopened = RequestCache(tmp_path / "c.sqlite")
    assert reopened.get(key) is not None
    assert len(reopened) == 1


def test_errors_are_never_cached(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    key = cache_key(IDENTITY, Request(model="m", prompt="x"))
    stored = cache.put(key, RequestResult(success=False, error="rate limited", error_kind="rate_limit"))
    assert stored is False
    assert cache.get(key) is None
    assert len(cache) == 0


def test_key_depends_on_model_identity_and_request_but_not_on_secrets() -> None:
    req = Request(model="a", prompt="hello")
    base = cache_key(IDENTITY, req)
    assert cache_key({**IDENTITY, "model_id": "other"}, req) != base
    assert cache_key({**IDENTITY, "engine": "llama.cpp"}, req) != base
    assert cache_key({**IDENTITY, "revision": "abc123"}, req) != base
    assert cache_key(IDENTITY, Request(model="a", prompt="hello", temperature=0.7)) != base
    assert cache_key(IDENTITY, Request(model="a", prompt="hello", trial_tag="trial=1")) != base
    # the registry name of the deployment is not part of the key (identity is)
    assert cache_key(IDENTITY, Request(model="renamed", prompt="hello")) == base
    secret = {**IDENTITY, "args": {"api_key": "sk-123", "base_url": "http://x"}}
    assert cache_key(secret, req) == cache_key({**IDENTITY, "args": {"base_url": "http://x"}}, req)
    # a tokenizer is not a secret
    assert cache_key({**IDENTITY, "tokenizer": "gpt2"}, req) != base


def test_database_uses_wal_and_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    identity = {**IDENTITY, "args": {"api_key": "sk-very-secret"}}
    cache.put(cache_key(identity, Request(model="m", prompt="p")), _result())
    cache.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    dump = "\n".join(conn.iterdump())
    conn.close()
    assert "sk-very-secret" not in dump


def test_many_threads_share_one_cache(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")

    def work(t: int) -> None:
        for i in range(40):
            key = cache_key(IDENTITY, Request(model="m", prompt=f"{t}-{i}"))
            cache.put(key, _result(text=f"{t}-{i}"))
            assert cache.get(key) is not None

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(cache) == 240


def _process_writer(path: str, worker: int) -> None:
    cache = RequestCache(Path(path))
    items = [
        (cache_key(IDENTITY, Request(model="m", prompt=f"p{worker}-{i}")), _result(text=str(i)), "echo", "generate")
        for i in range(30)
    ]
    for start in range(0, 30, 5):
        cache.put_many(items[start : start + 5])
    cache.close()


def test_several_processes_write_the_same_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    RequestCache(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(str(path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(RequestCache(path)) == 90


def test_get_many_returns_only_cached_keys(tmp_path: Path) -> None:
    cache = RequestCache(tmp_path / "c.sqlite")
    keys = [cache_key(IDENTITY, Request(model="m", prompt=str(i))) for i in range(1200)]
    cache.put_many((k, _result(), "echo", "generate") for k in keys[::2])
    got = cache.get_many(keys)
    assert set(got) == set(keys[::2])
    assert all(r.cached for r in got.values())
