"""Judges that overlap their candidates (:mod:`holistic.execution.judging`): with a candidate and a
judge both served over the network, the judge is asked while candidate requests are still being
answered, and the run's results equal those of judging after the last answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from holistic.execution import pipeline
from tests.support.rate_limited_server import RateLimitedServer
from tools.bench.judges import write_suite

ROWS = 24


@pytest.fixture
def servers() -> Iterator[tuple[RateLimitedServer, RateLimitedServer]]:
    with (
        RateLimitedServer(limit=64, latency_s=0.1, max_requests=2_000, deadline_s=240) as candidate,
        RateLimitedServer(limit=64, latency_s=0.1, max_requests=2_000, deadline_s=240) as judge,
    ):
        yield candidate, judge


def write(folder: Path, candidate_url: str, judge_url: str, *, rule: str) -> list[str]:
    """The benchmark's judged run (``ROWS`` questions), in batches of 4; the argv."""
    models, _, judged = write_suite(folder, ROWS, candidate_url, judge_url, rule)
    return [str(judged), "--models-file", str(models), "--batch-size", "4", "--quiet"]


def verdicts(out: Path) -> list[dict[str, object]]:
    [table] = list(out.rglob("annotations.parquet"))
    rows = pq.read_table(table).to_pylist()
    keep = ("instance_id", "judge", "status", "verdict", "score", "attempts", "error")
    return sorted(({k: r[k] for k in keep} for r in rows), key=lambda r: str(r["instance_id"]))


def stat_rows(out: Path) -> list[dict[str, object]]:
    [table] = list(out.rglob("stats.parquet"))
    return sorted(pq.read_table(table).to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.mark.parametrize(
    "rule",
    [
        "{regex: '(?P<score>[0-9])', score: score}",  # a digit in the answer's hex words: read
        "{regex: '(?P<score>never)', score: score}",  # never read: every verdict failed, the run partial
    ],
)
def test_the_judge_is_asked_before_the_last_candidate_answer_and_the_results_are_the_sequential_ones(
    servers: tuple[RateLimitedServer, RateLimitedServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rule: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    candidate, judge = servers
    argv = write(tmp_path, candidate.url, judge.url, rule=rule)
    overlapped = main([*argv, "--output-dir", str(tmp_path / "a"), "--cache-dir", str(tmp_path / "cache-a")])
    first_verdict, last_answer = judge.stats().first_arrival, candidate.stats().last_answer
    assert first_verdict is not None and last_answer is not None
    assert first_verdict < last_answer  # judged while candidates were still being answered
    asked = judge.stats().served

    candidate.reset()
    judge.reset()
    monkeypatch.setattr(pipeline, "can_overlap", lambda *_: False)  # judge after the last answer
    sequential = main([*argv, "--output-dir", str(tmp_path / "b"), "--cache-dir", str(tmp_path / "cache-b")])
    first_verdict, last_answer = judge.stats().first_arrival, candidate.stats().last_answer
    assert first_verdict is not None and last_answer is not None
    assert first_verdict > last_answer

    assert overlapped == sequential
    assert judge.stats().served == asked  # the same judge requests, retries included
    assert verdicts(tmp_path / "a") == verdicts(tmp_path / "b")
    assert stat_rows(tmp_path / "a") == stat_rows(tmp_path / "b")
    found = verdicts(tmp_path / "a")
    assert len(found) == ROWS
    if "never" in rule:
        assert overlapped == 3 and {r["status"] for r in found} == {"failed"}
        assert all("no verdict of judge" in str(r["error"]) for r in found)
    else:
        assert overlapped == 0 and {r["status"] for r in found} == {"ok"}
