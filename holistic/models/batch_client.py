"""Batch mode: a deployment's requests sent through its provider's batch API (:mod:`holistic.models.batch_api`).

:class:`BatchClient` wraps the deployment's online client (:class:`~holistic.models.api_client.ApiClient`)
and has the same identity, so batch and online answers share the request cache. A request is
built by the online client's own code: its SDK calls are captured instead of sent (each becomes
a batch line whose ``custom_id`` is the request's cache key; a second call of the same request,
when a server ignores ``n``, gets a key of its own), and when a line's answer comes back the
same code reads it, checks it and prices it as it would an online answer. So a batch answer
equals the online answer, and every request kind the online path sends (generation, chat,
completions with logprobs, echo scoring, judge prompts) goes the same way. (An OpenAI server's
echo-alignment probe, one call per run that scores continuations, stays online.)

1. Lines are written to files beside the request cache, split by the provider's limits
   (requests and bytes per batch) and by endpoint, and submitted; each batch is journaled
   (:mod:`holistic.models.batch_journal`) as an intent before it is sent and under the
   provider's id before anything waits on it. A leftover intent (killed before the reply was
   recorded, or the reply lost) and a retried submission are looked up at the provider first:
   a batch it holds is taken, never sent again. A submission failed for good leaves its
   requests failed (``batch_unsubmitted``) and its intent for the next run.
2. The batches are polled (every 1, 2, 4... seconds up to ``batch_poll_s``); progress shows
   each batch's state, counts and the time waited. With ``wait=False`` (``--no-wait``) nothing
   is waited for: the requests are recorded as failed (``batch_pending``), the run is partial,
   and the same command collects the batches later.
3. An ended batch's results are streamed line by line; each answer is checked
   (:mod:`holistic.models.validate`) and written to the request cache as it is read. A line
   naming a ``custom_id`` its batch was not sent, or one named twice, is reported; the answers
   already read are kept.
4. A line not answered (expired, cancelled, failed by the server, past a size bound) is sent
   again, in a new batch or online (``batch_retry``), at most ``batch_max_retries`` times; then
   its request is recorded as failed, with the server's reason. A line failed for good (a 400)
   is recorded at once, as online.
5. Batches not ended within ``batch_timeout_s`` of waiting leave their requests failed
   (``batch_timeout``) and the run partial; they stay in the journal for the next run.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from holistic.core.hashing import canonical_json, sha256_hex
from holistic.core.interfaces import Tokenizer
from holistic.core.types import Request, RequestResult
from holistic.models.api_client import ApiClient, Attempts, RequestFailed
from holistic.models.base_client import BaseClient
from holistic.models.batch_api import BadBatchAnswer, BatchStatus, Line, call_body, read_lines, vendor_for
from holistic.models.batch_journal import SUBMITTING, BatchJournal
from holistic.models.batch_spec import BATCH_IO_TIMEOUT_S, BatchSettings
from holistic.models.cache import ResultCache, cache_key, scrub_identity
from holistic.models.pricing import BUDGET_ERROR_KIND, current_spending
from holistic.models.reliability import Failure
from holistic.models.validate import checked

AnswerHook = Callable[[Request, RequestResult], None]
"""Called with each request and its result as batch answers are read (a spending tracker's hook)."""


class _NeedCall(BaseException):
    """The online code asked for an SDK call that has no batch answer yet."""

    def __init__(self, index: int, call: Callable[[], Any]) -> None:
        super().__init__(index)
        self.index = index
        self.call = call


class _Replay(Attempts):
    """The SDK calls of one request answered from batch lines (call ``i`` from ``answers[i]``)."""

    def __init__(self, client: ApiClient, key: str, answers: Mapping[int, Any]) -> None:
        super().__init__(client, key)
        self.batch = True
        self._answers = answers
        self._index = 0

    def send(self, call: Callable[[], Any], what: str = "request") -> Any:
        index = self._index
        self._index += 1
        if index not in self._answers:
            raise _NeedCall(index, call)
        self.count += 1
        answer = self._answers[index]
        if isinstance(answer, Failure):
            raise RequestFailed(answer, self.count)
        return answer


def line_id(key: str, call: int) -> str:
    """The ``custom_id`` of a request's ``call``-th SDK call: its cache key for the first (64
    characters, within both vendors' rules)."""
    return key if call == 0 else sha256_hex(f"{key}:{call}")


@dataclass
class _Job:
    request: Request
    answers: dict[int, Any] = field(default_factory=dict)
    result: RequestResult | None = None
    last_failure: Failure | None = None


@dataclass
class _Chunk:
    """One batch file being written."""

    endpoint: str
    path: Path
    handle: IO[bytes]
    lines: list[tuple[str, str, int, int]] = field(default_factory=list)
    size: int = 0


class BatchClient(BaseClient):
    """A deployment served through its provider's batch API (see the module docstring)."""

    request_batch_size = 1_000_000
    """Every request of a run in one ``process`` call: the split is by the provider's limits."""
    batches_in_flight = 1

    def __init__(
        self,
        inner: ApiClient,
        *,
        folder: Path,
        cache: ResultCache | None,
        clean: Callable[[RequestResult], RequestResult] = checked,
        wait: bool = True,
        notify: Callable[[str], None] | None = None,
        on_answer: AnswerHook | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(inner.deployment)
        d = inner.deployment
        self.inner = inner
        self.settings = BatchSettings.of(d.name, d.provider, d.args)
        self.folder = Path(folder)
        self.journal = BatchJournal(self.folder / "batches.sqlite")
        self.cache = cache
        self.clean = clean
        """What every answer goes through before it is used or cached (serving's check and redaction)."""
        self.wait = wait
        self.notify = notify or (lambda text: print(text, file=sys.stderr, flush=True))
        self.on_answer = on_answer
        self._sleep = sleep
        self._clock = clock
        from holistic.models.http_bounds import bounded_client

        io_sdk = inner._connect(
            api_key=inner._api_key,
            base_url=d.args.get("base_url"),
            max_retries=0,
            timeout=BATCH_IO_TIMEOUT_S,
            # results files are bounded as they are read (answers before the bound are kept)
            http_client=bounded_client(deadline_s=BATCH_IO_TIMEOUT_S, max_bytes=2**62, base_url=d.args.get("base_url")),
        )
        self._io_sdk = io_sdk
        self.vendor = vendor_for(d.provider, inner._sdk, io_sdk)
        self.scope = sha256_hex(canonical_json(scrub_identity(inner.identity())))
        self._max_line_bytes = int(d.args.get("max_response_bytes", 64 * 1024 * 1024))
        self._pending_cache: list[tuple[str, RequestResult, str, str]] = []
        self._read: set[str] = set()
        """Batches whose results this process has read (never waited for again)."""

    # -- Client protocol -----------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def tokenizer(self) -> Tokenizer:
        return self.inner.tokenizer()

    def begin_run(self) -> None:
        self.inner.begin_run()

    def usage(self) -> dict[str, int]:
        return self.inner.usage()

    def prepare_scoring(self) -> dict[str, object] | None:
        prepare = getattr(self.inner, "prepare_scoring", None)
        return prepare() if prepare is not None else None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._io_sdk.close()
        self.journal.close()
        self.inner.close()

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        identity = self.identity()
        keys = [cache_key(identity, r) for r in requests]
        jobs = {k: _Job(r) for k, r in zip(keys, requests, strict=True)}
        rounds = (self.settings.max_retries + 1) * (max((r.num_completions for r in requests), default=1) + 1) + 2
        why = "batch_pending"
        for _ in range(rounds):
            needed, waiting = self._prepare_round(jobs)
            if not needed:
                break
            why = self._wait_and_collect(waiting, jobs)
            if why:
                break
        self._flush_cache()
        return [self._final(jobs[k], why) for k in keys]

    # -- a round: replay, submit ---------------------------------------------------------

    def _replay(self, key: str, job: _Job) -> _NeedCall | None:
        """Run the online code on the answers so far: sets ``job.result``, or says which call it needs."""
        try:
            result = self.inner._process_one(job.request, _Replay(self.inner, key, job.answers))
        except _NeedCall as need:
            return need
        job.answers = {}
        job.result = replace(result, batch=True, latency_s=0.0) if result.success else result
        return None

    def _prepare_round(self, jobs: dict[str, _Job]) -> tuple[dict[str, tuple[str, int]], set[str]]:
        """The lines still needed (``custom_id -> (key, call)``) and the batches to wait for
        (those already holding some of them, and those submitted now)."""
        unresolved = self._resolve_intents()
        in_flight: dict[str, str] = {}
        for batch in self.journal.open_batches(self.scope):
            if batch.batch_id in self._read or batch.state == SUBMITTING:
                continue
            for custom_id in self.journal.lines_of(batch.batch_id):
                in_flight[custom_id] = batch.batch_id
        needed: dict[str, tuple[str, int]] = {}
        for key, job in jobs.items():
            if job.result is not None:
                continue
            need = self._replay(key, job)
            if need is None:
                self._answered(key, job)
                continue
            custom_id = line_id(key, need.index)
            if custom_id in unresolved:
                job.result = RequestResult.failure(
                    f"{unresolved[custom_id]}; run again to look it up",
                    "batch_unsubmitted",
                    attempts=0,
                    engine=self.inner.engine_name,
                )
                continue
            needed[custom_id] = (key, need.index)
        waiting = {in_flight[c] for c in needed if c in in_flight}
        waiting |= self._submit([(c, k, i) for c, (k, i) in needed.items() if c not in in_flight], jobs)
        return {c: kc for c, kc in needed.items() if jobs[kc[0]].result is None}, waiting

    def _submit(self, lines: list[tuple[str, str, int]], jobs: dict[str, _Job]) -> set[str]:
        """Write the lines to batch files (split by limits) and submit them; returns the new batch ids.

        Each line's body is built again from its request as it is written (nothing holds the bodies)."""
        tries = self.journal.tries([line[0] for line in lines])
        limits = self.settings.limits
        chunks: dict[str, _Chunk] = {}
        ready: list[_Chunk] = []
        for custom_id, key, index in lines:
            job = jobs[key]
            sent = tries.get(custom_id, 0)
            if sent > self.settings.max_retries:
                job.result = self._gave_up(job, sent)
                continue
            if sent and self.settings.retry == "online":
                job.result = self.inner._process_one(job.request)
                self._answered(key, job)
                continue
            spending = current_spending()
            if spending is not None and not spending.allows():  # --max-cost reached: nothing new is sent
                job.result = RequestResult.failure(
                    spending.refusal(), BUDGET_ERROR_KIND, attempts=0, engine=self.inner.engine_name
                )
                continue
            need = self._replay(key, job)
            assert need is not None and need.index == index
            try:
                owner, body = call_body(need.call)
                endpoint = self.vendor.endpoint(owner)
                data = self.vendor.line(custom_id, endpoint, body)
            except (TypeError, ValueError, UnicodeError) as exc:
                job.result = RequestResult.failure(f"cannot be sent by batch: {exc}", "client", attempts=0)
                continue
            chunk = chunks.get(endpoint)
            extra = len(data) + len(self.vendor.separator)
            if chunk is not None and (len(chunk.lines) >= limits.max_requests or chunk.size + extra > limits.max_bytes):
                ready.append(self._close_chunk(chunk))
                chunk = None
            if chunk is None:
                chunk = chunks[endpoint] = self._open_chunk(endpoint, len(ready) + len(chunks))
            if chunk.lines:
                chunk.handle.write(self.vendor.separator)
            chunk.handle.write(data)
            chunk.size += extra
            chunk.lines.append((custom_id, key, index, sent + 1))
        ready.extend(self._close_chunk(c) for c in chunks.values())
        submitted = {self._send_chunk(c, jobs) for c in ready if c.lines}
        return {batch_id for batch_id in submitted if batch_id}

    def _open_chunk(self, endpoint: str, n: int) -> _Chunk:
        folder = self.folder / "batch-files"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.scope[:16]}-{time.time_ns()}-{n}.jsonl"
        handle = path.open("wb")
        handle.write(self.vendor.opening)
        return _Chunk(endpoint, path, handle, size=len(self.vendor.opening) + len(self.vendor.closing))

    def _close_chunk(self, chunk: _Chunk) -> _Chunk:
        chunk.handle.write(self.vendor.closing)
        chunk.handle.close()
        return chunk

    def _send_chunk(self, chunk: _Chunk, jobs: dict[str, _Job]) -> str:
        """Submit one batch file under a new intent; its batch id (``""`` when it failed for good:
        its requests are failed and the intent is left for the next run to look up)."""
        intent = f"holistic-{uuid.uuid4().hex}"
        since = time.time()
        submit = self.vendor.submit(chunk.endpoint, chunk.path, intent)
        tried = 0

        def once() -> str:
            nonlocal tried
            tried += 1  # a try after the first may follow one accepted with its reply lost
            found = self._find(intent, since, len(chunk.lines)) if tried > 1 else ""
            return found or submit()

        self.journal.intend(intent, self.scope, chunk.endpoint, chunk.lines)
        try:
            batch_id = Attempts(self.inner, f"batch-submit:{chunk.path.name}").send(once, "batch submission")
        except RequestFailed as exc:
            message = f"its batch could not be submitted: {exc.failure.message[:500]}"
            self.notify(f"WARNING: {self.deployment.name}: {message}")
            for _, key, _, _ in chunk.lines:
                jobs[key].result = RequestResult.failure(
                    message, "batch_unsubmitted", attempts=exc.attempts, engine=self.inner.engine_name
                )
            return ""
        finally:
            chunk.path.unlink(missing_ok=True)
        self.journal.adopt(intent, batch_id)
        self.notify(f"{self.deployment.name}: submitted batch {batch_id} ({len(chunk.lines):,} requests)")
        return batch_id

    def _find(self, intent: str, since: float, lines: int) -> str:
        """The provider's id of the batch sent under ``intent`` (``""``: it holds none)."""
        return self.vendor.find(intent, since, lines, self.journal.known_ids()) or ""

    def _resolve_intents(self) -> dict[str, str]:
        """Look up at the provider each batch left as an intent: take the one it holds, free the
        lines of one it never took. Returns ``custom_id -> why`` of the lines still unresolved
        (the provider could not be asked: they are not sent now)."""
        unresolved: dict[str, str] = {}
        for batch in self.journal.open_batches(self.scope):
            if batch.state != SUBMITTING:
                continue
            try:
                look = functools.partial(self._find, batch.batch_id, batch.submitted, batch.lines)
                found = Attempts(self.inner, f"batch-find:{batch.batch_id}").send(look, "batch lookup")
            except RequestFailed as exc:
                why = f"whether batch {batch.batch_id} was submitted cannot be asked now ({exc.failure.message[:300]})"
                self.notify(f"WARNING: {self.deployment.name}: {why}")
                unresolved.update(dict.fromkeys(self.journal.lines_of(batch.batch_id), why))
                continue
            if found:
                self.journal.adopt(batch.batch_id, found)
                self.notify(f"{self.deployment.name}: batch {found} found at the provider for {batch.batch_id}")
            else:
                self.journal.abandon(batch.batch_id)
                self.notify(f"{self.deployment.name}: {batch.batch_id} never reached the provider; sent again")
        return unresolved

    # -- waiting and collecting ----------------------------------------------------------

    def _wait_and_collect(self, waiting: set[str], jobs: dict[str, _Job]) -> str:
        """Poll ``waiting`` until each has ended (and is collected); ``""``, or why the wait stopped."""
        start = self._clock()
        pause = min(1.0, self.settings.poll_s)
        shown: dict[str, tuple[str, int, int]] = {}
        remaining = set(waiting)
        unreadable = False
        while remaining:
            for batch_id in sorted(remaining):
                status = self._status(batch_id)
                if status is None:
                    remaining.discard(batch_id)
                    unreadable = True
                    continue
                waited = self._clock() - start
                if shown.get(batch_id) != (status.state, status.done, status.failed):
                    shown[batch_id] = (status.state, status.done, status.failed)
                    self.notify(
                        f"{self.deployment.name}: batch {batch_id} {status.state}, {status.done:,}/{status.total:,} "
                        f"done, {status.failed:,} failed, waited {_duration(waited)}"
                    )
                if status.ended:
                    self.journal.set_state(batch_id, status.state)
                    unreadable |= not self._collect(batch_id, jobs)
                    remaining.discard(batch_id)
            if not remaining:
                break
            if not self.wait:
                self._tell_pending(remaining)
                return "batch_pending"
            waited = self._clock() - start
            if waited >= self.settings.timeout_s:
                self.notify(
                    f"{self.deployment.name}: {len(remaining)} batch(es) not ended after {_duration(waited)} "
                    f"(batch_timeout_s); run the same command again to collect them"
                )
                return "batch_timeout"
            self._sleep(min(pause, self.settings.timeout_s - waited))
            pause = min(pause * 2, self.settings.poll_s)
        return "batch_unreadable" if unreadable else ""

    def _status(self, batch_id: str) -> BatchStatus | None:
        try:
            status: BatchStatus = Attempts(self.inner, f"batch-status:{batch_id}").send(
                lambda: self.vendor.status(batch_id), "batch status"
            )
            return status
        except (RequestFailed, BadBatchAnswer) as exc:
            self.notify(f"WARNING: {self.deployment.name}: cannot read batch {batch_id}: {exc}; it is kept for later")
            return None

    def _collect(self, batch_id: str, jobs: dict[str, _Job]) -> bool:
        """Read an ended batch's results into the jobs and the request cache; ``False`` when the
        download broke off (the batch stays in the journal: nothing it holds is sent again)."""
        sent = self.journal.lines_of(batch_id)
        endpoint = next((b.endpoint for b in self.journal.open_batches(self.scope) if b.batch_id == batch_id), "")
        seen: set[str] = set()
        foreign: list[str] = []
        unknown: list[str] = []
        twice: list[str] = []
        problems: list[str] = []
        try:
            for opener in self.vendor.result_streams(batch_id):
                with opener() as response:
                    chunks = bounded(self.vendor.chunks(response), self.settings.max_results_bytes)
                    for raw in read_lines(chunks, self._max_line_bytes):
                        line = self._line(raw, endpoint, problems)
                        if line is None:
                            continue
                        if line.custom_id not in sent:
                            unknown.append(line.custom_id)
                        elif line.custom_id in seen:
                            twice.append(line.custom_id)
                        else:
                            seen.add(line.custom_id)
                            if not self._take(line, sent[line.custom_id], jobs):
                                foreign.append(sent[line.custom_id][0])
        except ResultsTooLarge as exc:  # read up to the bound: the lines past it are sent again
            problems.append(str(exc))
        except Exception as exc:  # a broken download: keep what was read, read the batch again later
            self._flush_cache()
            self.notify(
                f"WARNING: {self.deployment.name}: batch {batch_id}: reading its results failed "
                f"({type(exc).__name__}: {str(exc)[:300]}); the answers read are kept, the batch is read again later"
            )
            return False
        self._flush_cache()
        self._read.add(batch_id)
        if not self._unread_elsewhere(foreign):
            self.journal.collected(batch_id)
        if unknown or twice:
            problems.append(
                f"its results name {len(unknown)} custom_id(s) it was not sent{_examples(unknown)} and "
                f"{len(twice)} twice{_examples(twice)}; the first answer of each was kept, the rest ignored"
            )
        missing = len(sent) - len(seen)
        for problem in problems:
            self.notify(f"WARNING: {self.deployment.name}: batch {batch_id}: {problem}")
        if missing:
            reason = "; ".join(problems) or "the batch ended without answering it"
            for custom_id in sent.keys() - seen:
                job = jobs.get(sent[custom_id][0])
                if job is not None and job.result is None:
                    job.last_failure = Failure("batch_unanswered", f"batch {batch_id}: {reason}", True)
        return True

    def _line(self, raw: bytes | None, endpoint: str, problems: list[str]) -> Line | None:
        if raw is None:
            problems.append(f"a results line is larger than {self._max_line_bytes:,} bytes (max_response_bytes)")
            return None
        try:
            return self.vendor.parse(json.loads(raw), endpoint)
        except (ValueError, TypeError, AttributeError, BadBatchAnswer, RecursionError) as exc:
            if len(problems) < 20:
                problems.append(f"a results line cannot be read: {type(exc).__name__}: {str(exc)[:200]}")
            return None

    def _take(self, line: Line, sent: tuple[str, int, int], jobs: dict[str, _Job]) -> bool:
        """Give a line's answer to its request; ``False`` when this call did not ask it."""
        key, index, _ = sent
        job = jobs.get(key)
        if job is None:
            return line.answer is None
        if job.result is not None:
            return True
        if line.failure is not None and line.failure.retryable:
            job.last_failure = line.failure
            return True
        job.answers[index] = line.failure if line.failure is not None else line.answer
        if self._replay(key, job) is None:
            self._answered(key, job)
        return True

    def _unread_elsewhere(self, keys: list[str]) -> bool:
        """Whether answers in a batch belong to requests another run asked and has not cached yet (the
        batch then stays in the journal for that run to read: they are never paid twice)."""
        if not keys:
            return False
        if self.cache is None:
            return True
        return any(
            len(self.cache.get_many(keys[i : i + 500])) < len(set(keys[i : i + 500])) for i in range(0, len(keys), 500)
        )

    # -- results -------------------------------------------------------------------------

    def _answered(self, key: str, job: _Job) -> None:
        """A job just got its result: checked, handed to the hook, queued for the cache."""
        assert job.result is not None
        result = self.clean(job.result)
        job.result = result
        if result.batch:
            spending = current_spending()
            if spending is not None:  # --max-cost: a batch answer's price counts as it is read
                spending.add(result.cost_usd)
            if self.on_answer is not None:
                self.on_answer(job.request, result)
        if result.success and self.cache is not None:
            self._pending_cache.append((key, result, self.deployment.model_id, job.request.kind))
            if len(self._pending_cache) >= 500:
                self._flush_cache()

    def _flush_cache(self) -> None:
        items, self._pending_cache = self._pending_cache, []
        if items and self.cache is not None:
            self.cache.put_many(items)

    def _gave_up(self, job: _Job, sent: int) -> RequestResult:
        failure = job.last_failure or Failure("batch_unanswered", "no batch answered it", True)
        return self.inner._failed(
            Failure(failure.kind, f"not answered after {sent} batch(es): {failure.message}", False), sent, 0.0
        )

    def _final(self, job: _Job, why: str) -> RequestResult:
        if job.result is not None:
            return job.result
        if why == "batch_unreadable":
            message = "its batch's status or results cannot be read now; it is kept for the next run"
        elif why == "batch_timeout":
            message = (
                f"its batch had not ended after batch_timeout_s={self.settings.timeout_s:g}s; run again to collect"
            )
        else:
            message = "waiting in a provider batch (--no-wait); run the same command again to collect"
        if job.last_failure is not None and why != "batch_pending":
            message += f" (last: {job.last_failure.message})"
        return RequestResult.failure(message, why or "batch_pending", attempts=0, engine=self.inner.engine_name)

    def _tell_pending(self, waiting: set[str]) -> None:
        self.notify(
            f"{self.deployment.name}: {len(waiting)} batch(es) submitted or waiting ({', '.join(sorted(waiting))}); "
            "not waiting (--no-wait): run the same command again to collect the answers and finish the suite"
        )


def bounded(chunks: Iterator[bytes], max_bytes: int) -> Iterator[bytes]:
    """``chunks`` until ``max_bytes`` have passed; then :class:`ResultsTooLarge`."""
    seen = 0
    for chunk in chunks:
        seen += len(chunk)
        if seen > max_bytes:
            raise ResultsTooLarge(f"the results file is larger than {max_bytes:,} bytes (batch_max_results_bytes)")
        yield chunk


class ResultsTooLarge(Exception):
    """A results file past ``batch_max_results_bytes``."""


def _examples(ids: list[str]) -> str:
    return f" (e.g. {', '.join(repr(i[:70]) for i in ids[:3])})" if ids else ""


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
