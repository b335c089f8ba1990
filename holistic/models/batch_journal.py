"""The batch journal: which requests were sent in which provider batch, kept beside the request cache.

``batches.sqlite`` (next to ``requests.sqlite``) holds every batch this cache's runs submitted,
with the ``custom_id`` of each of its lines. A batch is written twice, each time in one
transaction: as an *intent* (state ``submitting``, its id the intent id the provider is given)
before it is sent, and under the provider's batch id once the provider accepted it, before
anything waits on it. So a ``helm-run`` killed at any moment and started again finds its
batches here, polls them, and sends nothing they already hold; an intent left behind (killed
between the provider's reply and the second write, or the reply lost) is looked up at the
provider first (:meth:`~holistic.models.batch_client.BatchClient`) and sent again only when the
provider has no batch for it. A line is sent again only once its batch has been read and did
not answer it. A batch stays here until its results have been read into the request cache
(``collected``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from holistic.core.errors import StoreError

JOURNAL_FILE = "batches.sqlite"
SUBMITTING = "submitting"
"""The state of an intent: written before the batch is sent, replaced by the provider's id."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batches (
        batch_id TEXT PRIMARY KEY, scope TEXT NOT NULL, endpoint TEXT NOT NULL, lines INTEGER NOT NULL,
        submitted REAL NOT NULL, state TEXT NOT NULL, collected INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS lines (
        custom_id TEXT PRIMARY KEY, batch_id TEXT NOT NULL, key TEXT NOT NULL, call INTEGER NOT NULL,
        tries INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS lines_batch ON lines (batch_id)",
)


@dataclass(frozen=True)
class JournalBatch:
    """One submitted batch."""

    batch_id: str
    endpoint: str
    lines: int
    submitted: float
    state: str


class BatchJournal:
    """The journal file (thread-safe: one connection per thread)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the batch journal {self.path}: {exc}") from None

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")  # a recorded batch survives a power cut
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.commit()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _run(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        try:
            conn = self._conn()
            with conn:
                return list(conn.execute(sql, params))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"batch journal {self.path}: {exc}") from None

    def record(
        self,
        batch_id: str,
        scope: str,
        endpoint: str,
        lines: Iterable[tuple[str, str, int, int]],
        *,
        state: str = "submitted",
    ) -> None:
        """Record a batch and its lines ``(custom_id, key, call, tries)`` in one transaction."""
        try:
            conn = self._conn()
            with conn:
                rows = [(cid, batch_id, key, call, tries) for cid, key, call, tries in lines]
                conn.execute(
                    "INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, ?, ?, 0)",
                    (batch_id, scope, endpoint, len(rows), time.time(), state),
                )
                conn.executemany("INSERT OR REPLACE INTO lines VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot record batch {batch_id} in {self.path}: {exc}") from None

    def intend(self, intent_id: str, scope: str, endpoint: str, lines: Iterable[tuple[str, str, int, int]]) -> None:
        """Record a batch about to be sent (state ``submitting``, under its intent id)."""
        self.record(intent_id, scope, endpoint, lines, state=SUBMITTING)

    def _together(self, failure: str, *statements: tuple[str, Sequence[object]]) -> None:
        """Run ``statements`` in one transaction; ``failure`` begins the error when they cannot."""
        try:
            conn = self._conn()
            with conn:
                for sql, params in statements:
                    conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{failure}: {exc}") from None

    def adopt(self, intent_id: str, batch_id: str) -> None:
        """The provider holds the intent's batch as ``batch_id``: the batch and its lines move to that id."""
        self._together(
            f"cannot record batch {batch_id} in {self.path}",
            (
                "UPDATE batches SET batch_id = ?, state = 'submitted' WHERE batch_id = ? AND state = ?",
                (batch_id, intent_id, SUBMITTING),
            ),
            ("UPDATE lines SET batch_id = ? WHERE batch_id = ?", (batch_id, intent_id)),
        )

    def abandon(self, intent_id: str) -> None:
        """The provider never took the intent's batch: its lines count one send fewer and are free again."""
        self._together(
            f"cannot update {self.path}",
            ("DELETE FROM batches WHERE batch_id = ? AND state = ?", (intent_id, SUBMITTING)),
            ("UPDATE lines SET tries = tries - 1 WHERE batch_id = ?", (intent_id,)),
        )

    def known_ids(self) -> set[str]:
        """Every batch id in the journal (any scope, collected or not)."""
        return {str(b) for (b,) in self._run("SELECT batch_id FROM batches")}

    def open_batches(self, scope: str) -> list[JournalBatch]:
        """The batches of ``scope`` whose results have not been read yet, oldest first."""
        rows = self._run(
            "SELECT batch_id, endpoint, lines, submitted, state FROM batches "
            "WHERE scope = ? AND collected = 0 ORDER BY submitted",
            (scope,),
        )
        return [JournalBatch(str(b), str(e), int(str(n)), float(str(t)), str(s)) for b, e, n, t, s in rows]

    def lines_of(self, batch_id: str) -> dict[str, tuple[str, int, int]]:
        """``custom_id -> (key, call, tries)`` of a batch's lines."""
        rows = self._run("SELECT custom_id, key, call, tries FROM lines WHERE batch_id = ?", (batch_id,))
        return {str(c): (str(k), int(str(n)), int(str(t))) for c, k, n, t in rows}

    def tries(self, custom_ids: Sequence[str]) -> dict[str, int]:
        """Times each of these lines was sent already (absent: never)."""
        out: dict[str, int] = {}
        for start in range(0, len(custom_ids), 500):
            chunk = list(custom_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for cid, tries in self._run(f"SELECT custom_id, tries FROM lines WHERE custom_id IN ({marks})", chunk):
                out[str(cid)] = int(str(tries))
        return out

    def set_state(self, batch_id: str, state: str) -> None:
        self._run("UPDATE batches SET state = ? WHERE batch_id = ?", (state, batch_id))

    def collected(self, batch_id: str) -> None:
        """The batch's results are all read: it is no longer waited for (its lines keep their tries)."""
        self._run("UPDATE batches SET collected = 1 WHERE batch_id = ?", (batch_id,))

    def close(self) -> None:
        with self._lock:
            conns, self._connections = self._connections, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()
