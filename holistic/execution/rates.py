"""How fast each model runs on this machine: measured, kept, and used by ``--plan``.

Every run ``helm-run`` executes adds what it measured — prompt and completion tokens
sent to the model, and the seconds its requests took — to ``rates.json`` beside the
request cache, per deployment and per kind of work (``scoring``: log-likelihoods and
one-token answers; ``generation``: free text). ``helm-run --plan --calibrate`` measures
a model it has no figure for with a short fixed workload first. ``--plan`` then
estimates each run's time as its tokens (prompt tokens, plus ``max_tokens`` per request
for generation: an upper bound) divided by the model's measured tokens per second, or
for an API as requests × seconds per request ÷ the concurrency, and says per run how
the estimate was made. A model never measured here gets no estimate, and the plan says so.
"""

from __future__ import annotations

import datetime
import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.interfaces import Client
from holistic.core.specs import JOINT, AdapterSpec
from holistic.core.types import Request

RATES_FILE = "rates.json"
SCORING = "scoring"
GENERATION = "generation"


def work_kind(adapter: AdapterSpec) -> str:
    """``scoring`` or ``generation``: the kind of work a run with ``adapter`` does. Scoring is
    log-likelihood scoring and joint multiple choice (one generated token); ``ranking_binary``
    that generates an answer per passage (``protocol: helm``) is generation."""
    return SCORING if adapter.scores_loglikelihood or adapter.method == JOINT else GENERATION


@dataclass(frozen=True)
class Rate:
    """What one deployment did on this machine for one kind of work, summed over runs."""

    tokens: int
    seconds: float
    requests: int
    runs: int
    measured: str
    """Date of the latest measurement (ISO)."""
    source: str
    """``runs`` (measured while running) or ``calibration`` (``--calibrate``)."""

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else float("inf")

    @property
    def seconds_per_request(self) -> float:
        return self.seconds / self.requests if self.requests else 0.0


class Rates:
    """The measurements in one ``rates.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data: dict[str, dict[str, dict[str, Any]]] = _read(path)

    def get(self, model: str, kind: str) -> Rate | None:
        entry = self._data.get(model, {}).get(kind)
        if not isinstance(entry, Mapping):
            return None
        try:
            return Rate(
                int(entry["tokens"]),
                float(entry["seconds"]),
                int(entry["requests"]),
                int(entry["runs"]),
                str(entry["measured"]),
                str(entry.get("source", "runs")),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def add(self, model: str, kind: str, *, tokens: int, seconds: float, requests: int, source: str = "runs") -> None:
        """Add one measurement and write the file (a bad or unwritable file loses only this figure)."""
        if seconds <= 0 or requests <= 0:
            return
        old = self.get(model, kind)
        if source == "calibration" or old is None or old.source == "calibration":
            old = None  # a real run's figure replaces a calibration, and a new calibration replaces all
        entry = {
            "tokens": tokens + (old.tokens if old else 0),
            "seconds": seconds + (old.seconds if old else 0.0),
            "requests": requests + (old.requests if old else 0),
            "runs": 1 + (old.runs if old else 0),
            "measured": datetime.date.today().isoformat(),
            "source": source,
        }
        self._data.setdefault(model, {})[kind] = entry
        _write(self.path, self._data)


def _read(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    try:
        if path.stat().st_size > 4 << 20:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".rates.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # the estimate is a convenience: never fail a run over it


@dataclass(frozen=True)
class Estimate:
    seconds: float | None
    how: str


def estimate(
    rates: Rates,
    model: str,
    adapter: AdapterSpec,
    *,
    requests: int | None,
    prompt_tokens: int | None,
    max_tokens: int,
    in_process: bool,
    concurrency: int,
) -> Estimate:
    """This run's time from the model's measured rate (see the module docstring)."""
    kind = work_kind(adapter)
    rate = rates.get(model, kind)
    if rate is None:
        return Estimate(None, f"{model} has no {kind} measured on this machine")
    if requests is None:
        return Estimate(None, "run size unknown")
    when = f"{rate.source}, {rate.measured}"
    if not in_process:
        seconds = requests * rate.seconds_per_request / max(concurrency, 1)
        return Estimate(seconds, f"{rate.seconds_per_request:.2f} s/request over {rate.requests} requests ({when})")
    tokens = (prompt_tokens or 0) + (requests * max_tokens if kind == GENERATION else 0)
    bound = ", max_tokens as the completion length: an upper bound" if kind == GENERATION else ""
    return Estimate(tokens / rate.tokens_per_s, f"{rate.tokens_per_s:,.0f} tokens/s ({when}{bound})")


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# ---------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------

_CALIBRATION_TEXT = (
    "The committee met on a grey morning to review the survey of the river valley. "
    "Its members compared the maps drawn by the first expedition with the measurements "
    "taken since, noting where the banks had moved and where the old fords were gone. "
)


def calibration_requests(model: str) -> dict[str, list[Request]]:
    """A short fixed workload per kind: 16 scored continuations of about 200 tokens, and
    4 greedy generations of 32 tokens."""
    scoring = [
        Request(
            model=model,
            kind="loglikelihood",
            prompt=f"Passage {i}: " + _CALIBRATION_TEXT * 3 + "Question: which valley?",
            continuation=f" The river valley {i}",
            max_tokens=0,
            temperature=0.0,
        )
        for i in range(16)
    ]
    generation = [
        Request(model=model, prompt=f"Report {i}: " + _CALIBRATION_TEXT, max_tokens=32, temperature=0.0)
        for i in range(4)
    ]
    return {SCORING: scoring, GENERATION: generation}


def calibrate(client: Client, rates: Rates, kinds: Sequence[str] = (SCORING, GENERATION)) -> dict[str, float]:
    """Time the calibration workload on ``client`` (nothing cached) and store its rates;
    tokens per second per kind. The first (untimed) request loads the model."""
    workload = calibration_requests(client.deployment.name)
    client.begin_run()
    client.process(workload[SCORING][:1])  # load the weights outside the timing
    measured: dict[str, float] = {}
    for kind in kinds:
        requests = workload[kind]
        started = time.perf_counter()
        results = client.process(requests)
        seconds = time.perf_counter() - started
        ok = [r for r in results if r.success]
        if not ok:
            continue
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in ok)
        rates.add(client.deployment.name, kind, tokens=tokens, seconds=seconds, requests=len(ok), source="calibration")
        measured[kind] = tokens / seconds if seconds > 0 else float("inf")
    return measured
