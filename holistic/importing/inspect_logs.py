"""inspect_ai logs (``.eval`` archives and ``.json`` logs), read with inspect's own log reader
(``inspect_ai.log.read_eval_log``; the extra ``holistic[inspect]``).

Every log is a run (a task of a model), every sample an instance (its input, and its choices with
the target's tagged correct, or the target as reference), with one request (the messages sent,
the output, the usage) per epoch; each scorer's value on a sample is a per-instance value named
after the scorer (a scorer giving several values: ``<scorer>.<key>``), converted to a number as
inspect does (``value_to_float``: C = 1, I = 0, P = 0.5). A log whose status is not ``success``
or with samples in error is imported ``partial``.

Before inspect opens an ``.eval`` archive it is checked here (:func:`holistic.importing.safe.check_archive`):
member names, each member's declared and real size, the total and the expansion ratio are bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from holistic.core.extras import MissingExtraError, install_command
from holistic.importing.runs import ImportedRun, instance_row, per_instance_row, request_defaults
from holistic.importing.safe import ImportFileError, check_archive, finite, read_json


def log_files(source: Path) -> list[Path]:
    """The ``.eval`` and ``.json`` logs under ``source`` (a folder or one log)."""
    if source.is_file():
        return [source]
    return sorted(p for p in source.rglob("*") if p.suffix in (".eval", ".json") and p.is_file() and not p.is_symlink())


def is_json_log(path: Path) -> bool:
    """An inspect ``.json`` log (not lm-eval's or another tool's JSON), read by its first bytes."""
    with path.open("rb") as fh:
        head = fh.read(4096)
    return head.lstrip().startswith(b"{") and b'"eval"' in head and b'"version"' in head


def _reader() -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise MissingExtraError(
            f"reading inspect_ai logs needs inspect's log reader: {install_command('inspect')}"
        ) from None
    return read_eval_log


def read_inspect(source: Path, model_map: Mapping[str, str]) -> list[ImportedRun]:
    read_eval_log = _reader()
    runs = []
    for path in log_files(source):
        if path.suffix == ".eval":
            check_archive(path)
        elif is_json_log(path):
            read_json(path, allow_nan=True)  # bounded, strict UTF-8, complete: before inspect reads it
        else:
            continue
        try:
            log = read_eval_log(str(path))
        except Exception as exc:  # inspect's reader: pydantic, JSON, zip errors
            problem = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            raise ImportFileError(path, f"inspect_ai could not read this log: {problem}") from None
        runs.append(_run(path, log, model_map))
    if not runs:
        raise ImportFileError(source, "no .eval or .json inspect_ai log here")
    return runs


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            text = getattr(item, "text", None)
            if text is None and isinstance(item, dict):
                text = item.get("text")
            if text is not None:
                parts.append(str(text))
        return "".join(parts)
    return "" if content is None else str(content)


def _run(path: Path, log: Any, model_map: Mapping[str, str]) -> ImportedRun:
    spec = log.eval
    tool_model = str(spec.model)
    config = spec.model_generate_config.model_dump(exclude_none=True) if spec.model_generate_config else {}
    run = ImportedRun(
        tool="inspect_ai",
        name=str(spec.task),
        source=path,
        model=model_map.get(tool_model, tool_model),
        method="generation",
        main_metric="",
        reported=_reported(log),
        origin={
            "harness_version": _version(spec),
            "tool_model": tool_model,
            "task_id": spec.task_id,
            "task_version": str(spec.task_version),
            "task_args": _plain(spec.task_args),
            "solver": spec.solver,
            "scorers": [s.name for s in spec.scorers or []],
            "generate_config": _plain(config),
            "dataset": _plain(spec.dataset.model_dump(exclude_none=True) if spec.dataset else {}),
            "created": spec.created,
            "status": log.status,
        },
    )
    if log.status != "success":
        run.failed.append(f"the log's status is {log.status!r}" + (f": {log.error.message}" if log.error else ""))
    scorers: list[str] = []
    for k, sample in enumerate(log.samples or []):
        _sample(run, path, sample, k, config, scorers)
    run.main_metric = scorers[0] if scorers else "accuracy"
    return run


def _version(spec: Any) -> str | None:
    packages = spec.packages or {}
    return str(packages.get("inspect_ai")) if packages.get("inspect_ai") else None


def _plain(value: Any) -> Any:
    import json

    from holistic.core.hashing import canonical_json

    return json.loads(canonical_json(value)) if value is not None else None


def _reported(log: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if log.results is None:
        return out
    for score in log.results.scores or []:
        for name, metric in (score.metrics or {}).items():
            out[f"{score.name}.{name}"] = metric.value
    return out


def _sample(run: ImportedRun, path: Path, sample: Any, k: int, config: Mapping[str, Any], scorers: list[str]) -> None:
    where = f"samples[{k}] (id {str(sample.id)[:60]!r}, epoch {sample.epoch})"
    instance_id = str(sample.id)
    trial = max(int(sample.epoch or 1) - 1, 0)
    if trial == 0 or not any(r["instance_id"] == instance_id for r in run.instances):
        text = (
            _text(sample.input) if isinstance(sample.input, str) else "\n".join(_text(m.content) for m in sample.input)
        )
        targets = sample.target if isinstance(sample.target, list) else [sample.target]
        if sample.choices:
            letters = [chr(ord("A") + i) for i in range(len(sample.choices))]
            refs = [(str(c), letters[i] in targets) for i, c in enumerate(sample.choices)]
        else:
            refs = [(str(t), True) for t in targets]
        run.instances.append(instance_row(instance_id, text, refs, _plain(sample.metadata or {})))
    messages = list(sample.messages or [])
    if messages and messages[-1].role == "assistant":
        messages = messages[:-1]  # the output, not sent
    sent = [{"role": str(m.role), "content": _text(m.content)} for m in messages] or [
        {"role": "user", "content": _text(sample.input) if isinstance(sample.input, str) else ""}
    ]
    output = sample.output
    usage = output.usage if output is not None else None
    completion = output.completion if output is not None else None
    error = sample.error.message if sample.error else None
    if error:
        run.failed.append(f"sample {instance_id}: {error[:200]}")
    run.requests.append(
        request_defaults(
            instance_id=instance_id,
            split="test",
            trial=trial,
            request_index=0,
            kind="generate",
            prompt="\n\n".join(f"{m['role']}: {m['content']}" for m in sent),
            messages=sent,
            max_tokens=int(config.get("max_tokens") or 0),
            temperature=float(config.get("temperature") or 0.0),
            stop=[str(s) for s in config.get("stop_seqs") or []],
            success=error is None and output is not None,
            error=error,
            completion=completion,
            logprob=0.0,
            completions=[]
            if completion is None
            else [{"text": completion, "logprob": 0.0, "finish_reason": None, "is_greedy": None, "num_tokens": 0}],
            prompt_tokens=int(usage.input_tokens) if usage else 0,
            completion_tokens=int(usage.output_tokens) if usage else 0,
            latency_s=float(output.time or 0.0) if output is not None else 0.0,
            engine="inspect_ai",
            raw=_raw_sample(sample),
        )
    )
    _scores(run, path, sample, instance_id, trial, where, scorers)


def _scores(
    run: ImportedRun, path: Path, sample: Any, instance_id: str, trial: int, where: str, scorers: list[str]
) -> None:
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    for name, score in (sample.scores or {}).items():
        if name not in scorers:
            scorers.append(name)
        value = score.value
        items = value.items() if isinstance(value, dict) else [("", value)]
        for key, v in items:
            metric = f"{name}.{key}" if key else name
            number = to_float(v) if isinstance(v, str) else finite(v, path, f"{where}: scores.{metric}")
            run.per_instance.append(
                per_instance_row(instance_id, metric, finite(number, path, f"{where}: scores.{metric}"), trial=trial)
            )


def _raw_sample(sample: Any) -> str:
    from holistic.core.hashing import canonical_json

    scores = {
        name: {"answer": s.answer, "explanation": (s.explanation or "")[:2000]}
        for name, s in (sample.scores or {}).items()
    }
    return canonical_json({"target": sample.target, "scores": scores, "uuid": sample.uuid})
