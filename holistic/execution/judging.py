"""Judges that overlap their candidates: a judge request is sent as soon as its candidate's answer exists.

Without this, a judged run serves every candidate request, then judges every answer: its time is
the sum of the two phases. Here :func:`~holistic.execution.serving.serve` tells a
:class:`JudgeAlongside` each answer as it arrives (cached ones at once, then batch by batch),
and a worker thread post-processes those answers and judges them in groups while the candidate
requests go on: the run takes little more than the longer phase.

The candidate requests, their batching and their answers are exactly those of the sequential
path (serving is unchanged; only its answers are watched), and so are the judge requests (each
candidate judged once, by the same prompt, cached as before). The one rule that needs every
verdict of a run, that a judge none of whose verdicts could be read fails them all
(:func:`~holistic.execution.annotation.settle_unreadable`), is applied once the last group is
judged.

The overlap is used when the candidate and every judge are served over the network and online:
an in-process model computes one thing at a time (and one model may be both candidate and
judge), and a provider batch answers everything at once anyway.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace

from holistic.core.interfaces import Client
from holistic.core.judges import Annotation, JudgeSpec
from holistic.core.secrets import Redactor
from holistic.core.specs import AdapterSpec
from holistic.core.types import RequestResult, RequestState
from holistic.execution.annotation import JudgeStats, annotate, judged, settle_unreadable
from holistic.models.cache import ResultCache

_DONE = None
"""Queued after the last answer: the worker judges what is left and stops."""
GROUPS_IN_FLIGHT = 4
"""Groups of answers judged at once (the judge's own concurrency cap still bounds its requests)."""


def can_overlap(candidate: Client, judges: Sequence[Client]) -> bool:
    """Whether the judges may run beside the candidate: every client served over the network,
    online (see the module docstring)."""
    from holistic.models.batch_client import BatchClient
    from holistic.models.registry import runs_in_process

    clients = [candidate, *judges]
    return all(not runs_in_process(c.deployment.provider) and not isinstance(c, BatchClient) for c in clients)


class JudgeAlongside:
    """Judges a run's answers on a worker thread as :func:`serve` reports them (its ``answered``
    hook); :meth:`finish` waits for the last verdict and attaches every annotation."""

    def __init__(
        self,
        states: Sequence[RequestState],
        judges: Sequence[JudgeSpec],
        adapter: AdapterSpec,
        *,
        client_of: Callable[[str], Client],
        cache: ResultCache | None,
        batch_size: int | None = None,
        concurrency: int = 1,
        redactor: Redactor | None = None,
    ) -> None:
        self._states, self._judges, self._adapter = list(states), list(judges), adapter
        self._annotate = functools.partial(
            annotate,
            judges=self._judges,
            client_of=client_of,
            cache=cache,
            batch_size=batch_size,
            concurrency=concurrency,
            redactor=redactor,
            settle=False,
        )
        self._queue: queue.Queue[list[tuple[int, RequestResult]] | None] = queue.Queue()
        self._annotations: dict[int, tuple[Annotation, ...]] = {}
        self._stats = JudgeStats()
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._work, name="judges-alongside", daemon=True)
        self._thread.start()

    def answered(self, done: list[tuple[int, RequestResult]]) -> None:
        """:func:`serve`'s hook: these states' answers exist."""
        wanted = [(i, r) for i, r in done if judged(self._states[i])]
        if wanted:
            self._queue.put(wanted)

    def _work(self) -> None:
        """Take the answers as they come, in groups (everything queued since the last take), and
        judge up to :data:`GROUPS_IN_FLIGHT` groups at once, each on a daemon thread (on Ctrl-C
        the process never waits for a judge request that hangs)."""
        slots = threading.BoundedSemaphore(GROUPS_IN_FLIGHT)
        threads: list[threading.Thread] = []

        def judge_group(done: list[tuple[int, RequestResult]]) -> None:
            try:
                self._judge(done)
            except BaseException as exc:  # re-raised by finish() in the run's own thread
                with self._lock:
                    self._error = self._error or exc
            finally:
                slots.release()

        finished = False
        while not finished:
            group = [self._queue.get()]
            while True:  # everything answered meanwhile joins this group
                try:
                    group.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            finished = _DONE in group
            done = [pair for part in group if part is not None for pair in part]
            if done and self._error is None:
                slots.acquire()
                thread = threading.Thread(target=judge_group, args=(done,), name="judge-group", daemon=True)
                thread.start()
                threads.append(thread)
        for thread in threads:
            thread.join()

    def _judge(self, done: list[tuple[int, RequestResult]]) -> None:
        from holistic.adaptation import postprocess

        indices = [i for i, _ in done]
        answered = [self._states[i].with_result(r) for i, r in done]
        annotated, stats = self._annotate(postprocess(answered, self._adapter))
        with self._lock:
            self._stats = self._stats + stats
            for i, state in zip(indices, annotated, strict=True):
                self._annotations[i] = state.annotations

    def finish(self, states: Sequence[RequestState]) -> tuple[list[RequestState], JudgeStats]:
        """Wait for the last verdict; ``states`` (the served, post-processed run, in order) with
        every annotation attached, settled as a whole, and the stage's counts."""
        self._queue.put(_DONE)
        self._thread.join()
        if self._error is not None:
            raise self._error
        out = [
            replace(s, annotations=self._annotations[i]) if i in self._annotations else s for i, s in enumerate(states)
        ]
        return settle_unreadable(out, self._judges, self._stats)

    def abandon(self) -> None:
        """Stop the worker after what it is judging (the run failed or was interrupted)."""
        self._queue.put(_DONE)
