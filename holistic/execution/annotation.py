"""The annotation stage: judges grade a run's generations, between generation and metrics.

For every judge of the run (:class:`~holistic.core.judges.JudgeSpec`) and every main
``generate`` request that succeeded:

1. the judge's template is rendered in the sandbox with :data:`~holistic.core.judges.JUDGE_VARIABLES`;
2. the prompt goes to the judge's deployment through :func:`~holistic.execution.serving.serve`,
   so through the request cache, keyed on the judge's identity and the rendered prompt:
   re-judging a finished run with another judge sends nothing to the evaluated model, and
   re-running with the same judge sends nothing to the judge;
3. the answer is read by the judge's :class:`~holistic.core.judges.VerdictRule`. An
   unparseable answer is asked again (``retries`` times, each with its own cache key), then
   recorded as ``unparseable``. A judge request that fails is recorded as ``failed``: the
   run is then partial and the request is retried on the next run (errors are not cached).
   An answer the rule cannot read is not cached either
   (:class:`~holistic.execution.verdict_cache.ReadableVerdictCache`), so a rerun asks again;
   and when not one verdict of a judge could be read, its verdicts count as failed (the run
   is partial, its notes say which judge), never as a complete run with no score.

A template written in a spec sees ``completion`` inside a code fence the candidate cannot
close (:func:`~holistic.core.judges.fence`; ``raw_completion`` is the text unfenced); a
scenario's template (HELM's prompts, kept byte for byte) sees it as generated.

A candidate answer longer than :data:`MAX_CANDIDATE_CHARS` is cut to that length before
the judge's template is rendered (the annotation's fields record ``candidate_cut_from``,
the original length), so one huge answer cannot push the prompt over the template limit
and fail the run.

Each judged state carries one :class:`~holistic.core.judges.Annotation` per judge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from holistic.core.errors import HolisticError
from holistic.core.interfaces import Client
from holistic.core.judges import Annotation, JudgeSpec, fence
from holistic.core.secrets import Redactor
from holistic.core.template_limits import TemplateProblem
from holistic.core.types import CORRECT_TAG, Message, ModelDeployment, Request, RequestRole, RequestState
from holistic.execution.serving import serve
from holistic.execution.verdict_cache import ReadableVerdictCache, VerdictReader
from holistic.models.cache import ResultCache

MAX_CANDIDATE_CHARS = 100_000
"""Characters of a candidate answer a judge is shown; a longer answer is cut (and the cut recorded)."""


class JudgeTemplateError(HolisticError):
    """A judge template failed to render for an instance (a field missing at run time)."""


@dataclass(frozen=True)
class JudgeStats:
    """Counts of one run's annotation stage (over every judge)."""

    requests: int = 0
    """Judged requests times judges (one verdict each)."""
    cache_hits: int = 0
    model_calls: int = 0
    """Distinct prompts sent to judges (attempts included)."""
    failed: int = 0
    """Verdicts whose judge request failed (the run is partial)."""
    unparseable: int = 0
    """Verdicts no attempt of which the rule could read (counted in the error rate)."""
    skipped: int = 0
    """Requests not judged because they had failed themselves."""
    cost_usd: float = 0.0
    """What the judges' answers cost (attempts included; from the cache: their original price)."""
    unreadable: tuple[str, ...] = ()
    """Judges not one of whose verdicts could be read (their verdicts count as failed)."""

    def __add__(self, other: JudgeStats) -> JudgeStats:
        return JudgeStats(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))


def judged(state: RequestState) -> bool:
    """Whether a judge grades this request: a main generation."""
    return state.role == RequestRole.MAIN and state.request.kind == "generate"


def judge_variables(state: RequestState) -> dict[str, Any]:
    """What a judge template sees for one request (see :data:`~holistic.core.judges.JUDGE_VARIABLES`)."""
    inst = state.instance
    request = state.request
    if request.messages is not None:
        users = [m.content for m in request.messages if m.role == "user"]
        prompt = users[-1] if users else request.text
    else:
        prompt = request.prompt
    completion = state.result.completions[0].text if state.result and state.result.completions else ""
    return {
        "input": inst.input,
        "prompt": prompt,
        "completion": completion,
        "raw_completion": completion,
        "references": [r.output for r in inst.references],
        "correct_references": [r.output for r in inst.references if CORRECT_TAG in r.tags],
        "metadata": dict(inst.metadata),
        "instance_id": inst.id,
        "split": inst.split,
    }


def judge_request(judge: JudgeSpec, deployment: ModelDeployment, prompt: str, attempt: int) -> Request:
    """The request a judge is sent: chat messages for a chat model, else the plain prompt.

    Attempt 0 has no trial tag; a retry of an unparseable verdict is tagged so it gets its own cache key."""
    caps = deployment.capabilities
    as_chat = caps.chat or not caps.completions
    return Request(
        model=judge.model,
        prompt="" if as_chat else prompt,
        messages=(Message(role="user", content=prompt),) if as_chat else None,
        max_tokens=judge.max_tokens,
        temperature=judge.temperature,
        logprobs=False,
        trial_tag=f"judge-retry-{attempt}" if attempt else "",
    )


def _skipped(judge: JudgeSpec, error: str) -> Annotation:
    return Annotation(
        judge=judge.label,
        model=judge.model,
        prompt_hash=judge.prompt_hash,
        rule_hash=judge.rule.rule_hash,
        status="skipped",
        error=error,
    )


def _judge_prompt(
    judge: JudgeSpec, template: Any, variables: dict[str, Any], instance_id: str
) -> tuple[str, int | None]:
    """The judge's prompt for one request, and the candidate's length when it was cut."""
    completion = str(variables["completion"])
    length = len(completion) if len(completion) > MAX_CANDIDATE_CHARS else None
    if length is not None:
        completion = variables["raw_completion"] = variables["completion"] = completion[:MAX_CANDIDATE_CHARS]
    if judge.source == "spec":
        variables["completion"] = fence(completion)
    from holistic.core.templates import render  # Jinja2: only a judged run imports it

    try:
        return render(template, variables), length
    except TemplateProblem as exc:
        raise JudgeTemplateError(f"judge {judge.label!r}: {exc.message}") from None
    except Exception as exc:  # StrictUndefined: a field the instance lacks
        raise JudgeTemplateError(
            f"judge {judge.label!r}: template does not render for instance {instance_id!r}: {exc}"
        ) from None


def _judge_prompts(
    judge: JudgeSpec, states: Sequence[RequestState]
) -> tuple[list[Annotation | None], dict[int, str], dict[int, int], int]:
    """The judge's prompt for each judged state, and the annotations settled without asking:
    (annotations so far, prompts by state index, candidate cut lengths, skipped count)."""
    from holistic.core.templates import compile_template

    template = compile_template(judge.template)
    out: list[Annotation | None] = [None] * len(states)
    prompts: dict[int, str] = {}
    cut: dict[int, int] = {}
    skipped = 0
    for i, state in enumerate(states):
        if not judged(state):
            continue
        if state.result is None or not state.result.success:
            out[i] = _skipped(judge, "the judged request failed: nothing to judge")
            skipped += 1
            continue
        variables = judge_variables(state)
        if judge.empty_score is not None and not str(variables["completion"]).strip():
            out[i] = Annotation(
                judge=judge.label,
                model=judge.model,
                prompt_hash=judge.prompt_hash,
                rule_hash=judge.rule.rule_hash,
                status="ok",
                fields={"empty_output": True},
                score=judge.empty_score,
            )
            continue
        prompts[i], length = _judge_prompt(judge, template, variables, state.instance.id)
        if length is not None:
            cut[i] = length
    return out, prompts, cut, skipped


def annotate_with(
    judge: JudgeSpec,
    states: Sequence[RequestState],
    client: Client,
    cache: ResultCache | None,
    *,
    batch_size: int = 32,
    concurrency: int = 1,
    redactor: Redactor | None = None,
    settle: bool = True,
) -> tuple[list[Annotation | None], JudgeStats]:
    """One judge's annotation of every state (``None`` for states it does not judge); ``settle``:
    apply the none-readable rule here (``False`` when these states are one part of a run's, which
    :func:`settle_unreadable` settles once every part is judged)."""
    out, prompts, cut, skipped = _judge_prompts(judge, states)

    pending = sorted(prompts)
    reader = VerdictReader(judge.rule)
    verdicts = None if cache is None else ReadableVerdictCache(cache, reader)
    hits, calls, cost = 0, 0, 0.0
    spent: dict[int, float] = {}
    for attempt in range(judge.retries + 1):
        if not pending:
            break
        asked = [
            RequestState(
                instance=states[i].instance,
                request=judge_request(judge, client.deployment, prompts[i], attempt),
            )
            for i in pending
        ]
        answered, keys, served = serve(
            asked, client, verdicts, batch_size=batch_size, concurrency=concurrency, redactor=redactor
        )
        hits += served.cache_hits
        calls += served.model_calls
        cost += sum(s.result.cost_usd for s in answered if s.result is not None)
        retry: list[int] = []
        for i, state, key in zip(pending, answered, keys, strict=True):
            result = state.result
            assert result is not None
            spent[i] = spent.get(i, 0.0) + result.cost_usd
            base = Annotation(
                judge=judge.label,
                model=judge.model,
                prompt_hash=judge.prompt_hash,
                rule_hash=judge.rule.rule_hash,
                status="failed",
                prompt=prompts[i],
                attempts=attempt + 1,
                cache_key=key,
                cached=bool(result.cached),
                cost_usd=spent[i],
                batch=bool(result.batch),
            )
            if not result.success:
                out[i] = replace(base, error=result.error or "the judge's request failed")
                continue
            text = result.completions[0].text if result.completions else ""
            reading = reader.read(text)
            if isinstance(reading, str):
                out[i] = replace(base, status="unparseable", verdict=text, error=reading)
                retry.append(i)
                continue
            fields, score = reading
            if i in cut:
                fields = {**fields, "candidate_cut_from": cut[i]}
            out[i] = replace(base, status="ok", verdict=text, fields=fields, score=score)
        pending = retry
    unreadable = _none_readable(judge, out, prompts) if settle else False
    statuses = [a.status for a in out if a is not None]
    return out, JudgeStats(
        requests=len(statuses),
        cache_hits=hits,
        model_calls=calls,
        failed=statuses.count("failed"),
        unparseable=statuses.count("unparseable"),
        skipped=skipped,
        cost_usd=cost,
        unreadable=(judge.label,) if unreadable else (),
    )


def _none_readable(judge: JudgeSpec, out: list[Annotation | None], prompts: dict[int, str]) -> bool:
    """When the judge was asked and not one verdict could be read, mark the unparseable ones failed
    (in place): the judged metric measured nothing, so the run is partial and a rerun asks again."""
    asked = [a for i in prompts if (a := out[i]) is not None]
    if any(a.ok for a in asked) or not any(a.status == "unparseable" for a in asked):
        return False
    for i in prompts:
        found = out[i]
        if found is not None and found.status == "unparseable":
            error = f"no verdict of judge {judge.label!r} could be read (this one: {found.error})"
            out[i] = replace(found, status="failed", error=error)
    return True


def annotate(
    states: Sequence[RequestState],
    judges: Sequence[JudgeSpec],
    client_of: Callable[[str], Client],
    cache: ResultCache | None,
    *,
    batch_size: int | None = None,
    concurrency: int = 1,
    redactor: Redactor | None = None,
    settle: bool = True,
) -> tuple[list[RequestState], JudgeStats]:
    """``states`` with every judge's annotation attached, and the stage's counts (``settle``: as
    :func:`annotate_with`'s).

    ``client_of`` gives the client of a deployment name (clients are shared with the
    rest of the execution, so a judge that is also an evaluated model loads once)."""
    total = JudgeStats()
    per_state: list[list[Annotation]] = [[] for _ in states]
    for judge in judges:
        client = client_of(judge.model)
        client.begin_run()
        found, stats = annotate_with(
            judge,
            states,
            client,
            cache,
            batch_size=batch_size or client.request_batch_size,
            concurrency=concurrency,
            redactor=redactor,
            settle=settle,
        )
        total = total + stats
        for i, annotation in enumerate(found):
            if annotation is not None:
                per_state[i].append(annotation)
    out = [replace(s, annotations=tuple(a)) if a else s for s, a in zip(states, per_state, strict=True)]
    return out, total


def settle_unreadable(
    states: Sequence[RequestState], judges: Sequence[JudgeSpec], stats: JudgeStats
) -> tuple[list[RequestState], JudgeStats]:
    """The none-readable rule over a whole run judged in parts (``settle=False``): a judge asked
    for verdicts not one of which could be read has its unparseable verdicts failed, and the
    counts of failed and unparseable verdicts are those of the states' annotations."""
    out = list(states)
    unreadable: list[str] = []
    for judge in judges:
        asked = {
            i: a
            for i, state in enumerate(out)
            for a in state.annotations
            if a.judge == judge.label and a.prompt and a.status != "skipped"
        }
        found: list[Annotation | None] = [asked.get(i) for i in range(len(out))]
        if not _none_readable(judge, found, {i: a.prompt for i, a in asked.items()}):
            continue
        unreadable.append(judge.label)
        for i in asked:
            settled = found[i]
            assert settled is not None
            annotations = tuple(settled if a.judge == judge.label else a for a in out[i].annotations)
            out[i] = replace(out[i], annotations=annotations)
    statuses = [a.status for s in out for a in s.annotations]
    return out, replace(
        stats,
        failed=statuses.count("failed"),
        unparseable=statuses.count("unparseable"),
        unreadable=tuple(unreadable),
    )
