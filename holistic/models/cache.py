"""The request cache: every model answer kept in SQLite, keyed by model identity + request.

Design points (and why):

- **Key.** ``sha256`` of the canonical JSON of ``{"identity": client.identity(),
  "request": request.canonical()}``. The identity carries provider, model id,
  revision / weights hash and engine, so two models never share answers (the
  failure lm-evaluation-harness had). The deployment's registry *name* is not in
  the key: renaming an entry keeps its answers. Secret-looking fields are dropped
  from the identity before hashing (see :func:`scrub_identity`), so rotating an
  API key keeps the cache and no secret ever reaches the database.
- **Only successes.** :meth:`RequestCache.put` ignores failed results, so a rate
  limit or a timeout is retried on the next run instead of being replayed.
- **Original latency.** Results come back with ``cached=True`` and the latency of
  the call that produced them, so efficiency numbers stay meaningful on a rerun.
- **Concurrency.** WAL journal mode, a busy timeout, and one connection per thread
  (and per process: a forked child opens its own), so threads of one run and
  several processes (``--executor ray`` on one machine) can share one file.
- **Durability.** Each :meth:`put_many` is one committed transaction: a killed
  process loses at most the batch that was in flight.
- **Damage.** A row that cannot be decoded (edited by hand, written by a buggy
  version, nested too deeply to parse, or holding an answer :mod:`holistic.models.validate`
  refuses) is a miss: the request is recomputed and the row overwritten; each such
  key is reported once, with the cache's path.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from holistic.core.errors import StoreError
from holistic.core.hashing import canonical_json, sha256_hex
from holistic.core.secrets import drop_secrets
from holistic.core.types import Completion, Request, RequestResult, Token
from holistic.models.validate import result_problem

CACHE_FORMAT = 1
"""Version of the stored value layout; part of every key so a change never mis-reads old rows."""

DEFAULT_BUSY_TIMEOUT_S = 60.0


def scrub_identity(value: Any) -> Any:
    """``value`` with every mapping entry whose name looks like a secret removed (recursively)."""
    return drop_secrets(value)


def cache_key(identity: Mapping[str, Any], request: Request) -> str:
    """The cache key of ``request`` sent to the model described by ``identity``."""
    payload = {"format": CACHE_FORMAT, "identity": scrub_identity(identity), "request": request.canonical()}
    return sha256_hex(canonical_json(payload))


# ---------------------------------------------------------------------------
# (De)serialisation of results
# ---------------------------------------------------------------------------


def encode_result(result: RequestResult) -> str:
    """JSON text of a result (``cached`` is not stored: it describes the retrieval)."""
    data = asdict(result)
    data.pop("cached", None)
    return canonical_json(data)


def _token(data: Mapping[str, Any]) -> Token:
    return Token(text=data["text"], logprob=float(data["logprob"]), top_logprobs=dict(data.get("top_logprobs") or {}))


def decode_result(text: str) -> RequestResult:
    """Inverse of :func:`encode_result`; the result is marked ``cached=True``."""
    data = json.loads(text)
    completions = tuple(
        Completion(
            text=c["text"],
            logprob=float(c.get("logprob", 0.0)),
            tokens=tuple(_token(t) for t in c.get("tokens") or ()),
            finish_reason=c.get("finish_reason"),
            is_greedy=c.get("is_greedy"),
            reasoning=c.get("reasoning"),
            reasoning_unfinished=bool(c.get("reasoning_unfinished", False)),
            reasoning_note=c.get("reasoning_note"),
        )
        for c in data.get("completions") or ()
    )
    prompt_logprobs = data.get("prompt_logprobs")
    fields = {k: v for k, v in data.items() if k in RequestResult.__dataclass_fields__}
    fields.update(
        completions=completions,
        prompt_logprobs=None if prompt_logprobs is None else tuple(_token(t) for t in prompt_logprobs),
        cached=True,
    )
    return RequestResult(**fields)


# ---------------------------------------------------------------------------
# The cache
# ---------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class ResultCache(Protocol):
    """What serving needs of a cache: :class:`RequestCache`, or a proxy to one in another
    process (the Ray executor's cache actor)."""

    def get_many(self, keys: Sequence[str]) -> dict[str, RequestResult]: ...

    def put_many(self, items: Iterable[tuple[str, RequestResult, str, str]]) -> int: ...

    def close(self) -> None: ...


class RequestCache:
    """A SQLite-backed cache of successful request results, safe across threads and processes."""

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        on_damaged: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.on_damaged = on_damaged or (lambda msg: print(f"warning: {msg}", file=sys.stderr, flush=True))
        self.damaged: set[str] = set()
        """Keys whose stored rows could not be decoded (treated as misses)."""
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connection()  # create the file and table now: fail early on a bad path
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the request cache {self.path}: {exc}") from None

    # -- connections -------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(_SCHEMA)
        conn.commit()
        self._local.conn = conn
        self._local.pid = os.getpid()
        with self._lock:
            self._connections.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this object opened (in this process)."""
        with self._lock:
            conns, self._connections = self._connections, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- API -----------------------------------------------------------------

    @staticmethod
    def key(identity: Mapping[str, Any], request: Request) -> str:
        return cache_key(identity, request)

    def get(self, key: str) -> RequestResult | None:
        return self.get_many([key]).get(key)

    def _decode(self, key: str, value: object) -> RequestResult | None:
        try:
            if not isinstance(value, str):
                raise TypeError(f"stored value is {type(value).__name__}, not text")
            result = decode_result(value)
            problem = result_problem(result)
            if problem is not None:
                raise ValueError(problem)
            return result
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            if key not in self.damaged:
                self.damaged.add(key)
                detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:300]
                self.on_damaged(
                    f"request cache {self.path}: the row for key {key} cannot be decoded "
                    f"({type(exc).__name__}: {detail}); recomputing it"
                )
            return None

    def get_many(self, keys: Sequence[str]) -> dict[str, RequestResult]:
        """Results for those keys that are cached (chunked to respect SQLite's parameter limit).

        A row that cannot be decoded is left out (a miss), and reported once."""
        out: dict[str, RequestResult] = {}
        unique = list(dict.fromkeys(keys))
        try:
            conn = self._connection()
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, value in conn.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk):
                    result = self._decode(key, value)
                    if result is not None:
                        out[key] = result
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot read the request cache {self.path}: {exc}; move it away to start a new cache"
            ) from None
        return out

    def put(self, key: str, result: RequestResult, *, model_id: str = "", kind: str = "") -> bool:
        """Store one result; returns ``False`` (and stores nothing) for a failed one."""
        return self.put_many([(key, result, model_id, kind)]) == 1

    def put_many(self, items: Iterable[tuple[str, RequestResult, str, str]]) -> int:
        """Store ``(key, result, model_id, kind)`` items in one transaction; failures are skipped.

        Returns how many were stored.
        """
        now = time.time()
        rows = [
            (key, model_id, kind, encode_result(result), now) for key, result, model_id, kind in items if result.success
        ]
        if not rows:
            return 0
        try:
            conn = self._connection()
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO results (key, model_id, kind, value, created) VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot write the request cache {self.path}: {exc}") from None
        return len(rows)

    def __len__(self) -> int:
        row = self._connection().execute("SELECT COUNT(*) FROM results").fetchone()
        return int(row[0])
