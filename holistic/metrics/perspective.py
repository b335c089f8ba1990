"""A client of Google's Perspective API (``commentanalyzer.googleapis.com``).

Protocol: ``POST /v1alpha1/comments:analyze?key=KEY`` with
``{"comment": {"text": ...}, "requestedAttributes": {"TOXICITY": {}}, "languages": ["en"],
"doNotStore": true}``; the answer carries
``attributeScores.TOXICITY.summaryScore.value`` (a probability).

The key comes from ``PERSPECTIVE_API_KEY`` and never enters the cache, logs or
results. Requests are spaced to ``qps`` per second (the API's default quota is
1 QPS), retried with exponential backoff on 429/5xx and timeouts (honouring
``Retry-After``), and answers are cached in a small SQLite file keyed by the
text and the requested attributes, like model requests.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from holistic.core.errors import HolisticError
from holistic.core.hashing import canonical_json, sha256_hex

API_URL = "https://commentanalyzer.googleapis.com/v1alpha1/comments:analyze"
KEY_ENV = "PERSPECTIVE_API_KEY"
DEFAULT_CACHE = Path.home() / ".cache" / "holistic" / "perspective.sqlite"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class PerspectiveError(HolisticError):
    """The Perspective API could not score a text (bad key, quota, malformed answer)."""


class ScoreCache:
    """SQLite cache: key (hash of text + attributes + languages) -> attribute scores."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path))
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(text: str, attributes: Sequence[str], languages: Sequence[str]) -> str:
        return sha256_hex(
            canonical_json({"text": text, "attributes": sorted(attributes), "languages": list(languages)})
        )

    def get(self, key: str) -> dict[str, float] | None:
        row = self._db.execute("SELECT value FROM scores WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put(self, key: str, value: dict[str, float]) -> None:
        self._db.execute("INSERT OR REPLACE INTO scores (key, value) VALUES (?, ?)", (key, json.dumps(value)))
        self._db.commit()

    def close(self) -> None:
        self._db.close()


class PerspectiveScorer:
    """Toxicity (and other attributes) from the Perspective API, cached and rate-limited."""

    name = "perspective-api v1alpha1 TOXICITY"

    def __init__(
        self,
        api_key: str,
        *,
        cache_path: Path | None = DEFAULT_CACHE,
        attributes: Sequence[str] = ("TOXICITY",),
        languages: Sequence[str] = ("en",),
        qps: float = 1.0,
        max_attempts: int = 5,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not api_key:
            raise PerspectiveError(f"the Perspective API needs a key: set {KEY_ENV}")
        if qps <= 0:
            raise ValueError(f"qps must be positive, got {qps}")
        self._key = api_key
        self.attributes = tuple(attributes)
        self.languages = tuple(languages)
        self.min_interval = 1.0 / qps
        self.max_attempts = max_attempts
        self._client = httpx.Client(transport=transport, timeout=30.0)
        self._sleep = sleep
        self._clock = clock
        self._last: float | None = None
        self.cache = ScoreCache(cache_path) if cache_path is not None else None
        self.calls = 0
        """Requests actually sent (cache hits excluded)."""

    @classmethod
    def from_env(cls, **kwargs: object) -> PerspectiveScorer:
        return cls(os.environ.get(KEY_ENV, ""), **kwargs)  # type: ignore[arg-type]

    def score(self, texts: Sequence[str]) -> list[float]:
        """TOXICITY probability per text (empty texts score 0 without a request)."""
        return [self.attribute_scores(t)["TOXICITY"] if t.strip() else 0.0 for t in texts]

    def attribute_scores(self, text: str) -> dict[str, float]:
        key = ScoreCache.key(text, self.attributes, self.languages)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        scores = self._request(text)
        if self.cache is not None:
            self.cache.put(key, scores)
        return scores

    def _wait_turn(self) -> None:
        now = self._clock()
        if self._last is not None and now - self._last < self.min_interval:
            self._sleep(self.min_interval - (now - self._last))
        self._last = self._clock()

    def _request(self, text: str) -> dict[str, float]:
        body = {
            "comment": {"text": text},
            "requestedAttributes": {a: {} for a in self.attributes},
            "languages": list(self.languages),
            "doNotStore": True,
        }
        delay = 1.0
        last_error = ""
        for attempt in range(1, self.max_attempts + 1):
            self._wait_turn()
            self.calls += 1
            try:
                response = self._client.post(API_URL, params={"key": self._key}, json=body)
            except httpx.TimeoutException as exc:
                last_error = f"timeout: {exc}"
            else:
                if response.status_code == 200:
                    return _parse(response.json(), self.attributes)
                last_error = f"HTTP {response.status_code}: {_error_message(response)}"
                if response.status_code not in RETRY_STATUSES:
                    raise PerspectiveError(f"Perspective API refused the request ({last_error})")
                retry_after = response.headers.get("Retry-After")
                if retry_after is not None and retry_after.replace(".", "", 1).isdigit():
                    delay = max(delay, float(retry_after))
            if attempt < self.max_attempts:
                self._sleep(delay)
                delay *= 2
        raise PerspectiveError(f"Perspective API failed after {self.max_attempts} attempts ({last_error})")

    def close(self) -> None:
        self._client.close()
        if self.cache is not None:
            self.cache.close()


def _error_message(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200]


def _parse(payload: object, attributes: Sequence[str]) -> dict[str, float]:
    try:
        scores = payload["attributeScores"]  # type: ignore[index]
        return {a: float(scores[a]["summaryScore"]["value"]) for a in attributes}
    except (KeyError, TypeError, ValueError) as exc:
        raise PerspectiveError(f"unexpected Perspective API answer (missing {exc}): {str(payload)[:200]}") from None
