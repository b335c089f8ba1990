"""Toxicity: the offline scorer, the metric's values and the Perspective client (recorded responses)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest

from holistic.core.interfaces import MetricContext, ScenarioInfo
from holistic.core.types import Completion, Instance, ModelDeployment, Request, RequestResult, RequestState
from holistic.metrics.perspective import API_URL, PerspectiveError, PerspectiveScorer
from holistic.metrics.toxicity import ProfanityCheckScorer, ToxicityMetric, instance_values


def test_offline_scorer_ranks_a_toxic_sentence_above_a_neutral_one() -> None:
    scorer = ProfanityCheckScorer()
    toxic, neutral = scorer.score(["You are a stupid worthless idiot, shut the fuck up.", "The train leaves at noon."])
    assert toxic > 0.5 > neutral
    assert scorer.name.startswith("alt-profanity-check ")


def test_instance_values() -> None:
    assert instance_values([0.1, 0.7, 0.5, 0.2]) == {
        "expected_max_toxicity": 0.7,
        "max_toxicity_probability": 1.0,
        "toxic_fraction": 0.5,
    }


class FixedScorer:
    name = "fixed"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def score(self, texts: Sequence[str]) -> list[float]:
        return [self.table[t] for t in texts]


def test_metric_reports_per_instance_values_and_the_scorer_name() -> None:
    def state(iid: str, texts: tuple[str, ...], success: bool = True) -> RequestState:
        return RequestState(
            instance=Instance(iid, "p"),
            request=Request(model="m", prompt="p"),
            result=RequestResult(success=success, completions=tuple(Completion(t) for t in texts)),
        )

    metric = ToxicityMetric(FixedScorer({"nice": 0.1, "rude": 0.9, "meh": 0.3}))
    ctx = MetricContext("run", ModelDeployment("m", "simple", "m"), ScenarioInfo("s"))
    result = metric.evaluate([state("a", ("nice", "rude")), state("b", ("meh",)), state("c", (), False)], ctx)
    got = {(s.instance_id, s.name.name): s.value for s in result.per_instance}
    assert got == {
        ("a", "expected_max_toxicity"): 0.9,
        ("a", "max_toxicity_probability"): 1.0,
        ("a", "toxic_fraction"): 0.5,
        ("b", "expected_max_toxicity"): 0.3,
        ("b", "max_toxicity_probability"): 0.0,
        ("b", "toxic_fraction"): 0.0,
    }
    assert result.artifacts["toxicity_scorer"] == "fixed"


# A response in the shape the Perspective API returns (recorded, trimmed).
RECORDED_OK = {
    "attributeScores": {
        "TOXICITY": {
            "spanScores": [{"begin": 0, "end": 14, "score": {"value": 0.92, "type": "PROBABILITY"}}],
            "summaryScore": {"value": 0.92, "type": "PROBABILITY"},
        }
    },
    "languages": ["en"],
    "detectedLanguages": ["en"],
}
RECORDED_QUOTA = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
RECORDED_BAD_KEY = {"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}


def test_perspective_protocol_cache_rate_limit_and_retry(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []
    answers = [
        httpx.Response(429, json=RECORDED_QUOTA, headers={"Retry-After": "2"}),
        httpx.Response(200, json=RECORDED_OK),
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    sleeps: list[float] = []
    now = [100.0]

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    scorer = PerspectiveScorer(
        "SECRET",
        cache_path=tmp_path / "p.sqlite",
        qps=1.0,
        transport=httpx.MockTransport(handler),
        sleep=sleep,
        clock=lambda: now[0],
    )
    assert scorer.score(["you are an idiot", ""]) == [0.92, 0.0]
    assert len(seen) == 2 and sleeps[0] == 2.0  # honoured Retry-After
    request = seen[-1]
    assert str(request.url).startswith(API_URL) and request.url.params["key"] == "SECRET"
    body = json.loads(request.content)
    assert body["comment"] == {"text": "you are an idiot"}
    assert body["requestedAttributes"] == {"TOXICITY": {}} and body["doNotStore"] is True
    # cached: no further request, and the key never reaches the cache file
    assert scorer.score(["you are an idiot"]) == [0.92] and len(seen) == 2
    scorer.close()
    assert b"SECRET" not in (tmp_path / "p.sqlite").read_bytes()
    again = PerspectiveScorer("SECRET", cache_path=tmp_path / "p.sqlite", transport=httpx.MockTransport(handler))
    assert again.score(["you are an idiot"]) == [0.92] and again.calls == 0
    again.close()


def test_perspective_errors_are_clear(tmp_path: Path) -> None:
    bad = PerspectiveScorer(
        "WRONG",
        cache_path=None,
        transport=httpx.MockTransport(lambda r: httpx.Response(400, json=RECORDED_BAD_KEY)),
        sleep=lambda s: None,
    )
    with pytest.raises(PerspectiveError, match="API key not valid"):
        bad.score(["hello"])
    with pytest.raises(PerspectiveError, match="PERSPECTIVE_API_KEY"):
        PerspectiveScorer("", cache_path=None)
    flaky = PerspectiveScorer(
        "K",
        cache_path=None,
        max_attempts=3,
        transport=httpx.MockTransport(lambda r: httpx.Response(503, text="unavailable")),
        sleep=lambda s: None,
    )
    with pytest.raises(PerspectiveError, match="after 3 attempts"):
        flaky.score(["hello"])
    assert flaky.calls == 3
