"""lm-evaluation-harness results folders (0.4.x): ``results_<time>.json`` and, written with
``--log_samples``, ``samples_<task>_<time>.jsonl`` beside it.

Every task of a results file becomes a run; every logged document an instance:

- its input is the context of its first request (the prompt lm-eval built, in-context examples
  included), its references the choices of a multiple-choice task (the target's tagged correct)
  or the target of a generation task, its raw document kept in ``raw``;
- its requests are lm-eval's ``arguments`` (context and continuation, or context and generation
  settings) with the responses (log-likelihood and whether the continuation is greedy, or the
  generated text, and the filtered response);
- its per-document metrics are per-instance values. ``acc``, ``acc_norm``, ``acc_bytes`` and
  ``exact_match`` take the names of holistic's metrics that score the same way
  (:data:`holistic.importing.runs.METRIC_NAMES`); the others keep lm-eval's. Values of a filter
  other than ``none`` are named ``<metric>@<filter>``.

The model, its arguments, the harness version and the task's configuration are recorded in
``imported_from``; lm-eval's own aggregate values are kept beside the recomputed stats.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from holistic.importing.runs import (
    METRIC_NAMES,
    ImportedRun,
    instance_row,
    per_instance_row,
    request_defaults,
)
from holistic.importing.safe import ImportFileError, finite, iter_jsonl, read_json

RESULTS = re.compile(r"^results_(?P<time>.+)\.json$")
SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>[^_]+)\.jsonl$")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def results_files(source: Path) -> list[Path]:
    """Every ``results_*.json`` under ``source`` (a results folder or one results file)."""
    if source.is_file():
        return [source] if RESULTS.match(source.name) else []
    return sorted(p for p in source.rglob("results_*.json") if p.is_file() and not p.is_symlink())


def read_lm_eval(source: Path, model_map: Mapping[str, str]) -> list[ImportedRun]:
    files = results_files(source)
    if not files:
        raise ImportFileError(source, "no results_*.json here (not an lm-evaluation-harness output folder)")
    runs: list[ImportedRun] = []
    for path in files:
        runs.extend(_read_results(path, model_map))
    return runs


def _samples_files(results: Path, time: str) -> dict[str, Path]:
    """task -> its samples file, found by listing the folder (a task name is never joined to a path)."""
    out: dict[str, Path] = {}
    for path in results.parent.iterdir():
        match = SAMPLES.match(path.name)
        if match and match["time"] == time and path.is_file() and not path.is_symlink():
            out[match["task"]] = path
    return out


def _read_results(path: Path, model_map: Mapping[str, str]) -> list[ImportedRun]:
    data = read_json(path, allow_nan=True)
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ImportFileError(path, "no 'results' object (not an lm-evaluation-harness results file)")
    time = RESULTS.match(path.name)["time"]  # type: ignore[index]
    config = _dict(data.get("config"))
    model_args = config.get("model_args")
    tool_model = str(data.get("model_name") or config.get("model") or "unknown")
    model = model_map.get(tool_model, tool_model)
    samples = _samples_files(path, time)
    configs = _dict(data.get("configs"))
    hib = _dict(data.get("higher_is_better"))
    runs = []
    for task, reported in data["results"].items():
        if task not in samples:
            if task in (data.get("group_subtasks") or {}):
                continue  # a group: its subtasks are runs of their own
            raise ImportFileError(
                path,
                f"task {str(task)[:80]!r} has no samples_{task}_{time}.jsonl beside it (run lm-eval with --log_samples)",
            )
        task_config = _dict(configs.get(task))
        run = ImportedRun(
            tool="lm-evaluation-harness",
            name=str(task),
            source=samples[task],
            model=model,
            method=_method(task_config),
            main_metric="exact_match",
            reported=dict(reported) if isinstance(reported, dict) else {},
            origin={
                "harness_version": data.get("lm_eval_version"),
                "model_type": config.get("model"),
                "model_args": model_args,
                "tool_model": tool_model,
                "results_file": path.name,
                "date": data.get("date"),
                "git_hash": data.get("git_hash"),
                "transformers_version": data.get("transformers_version"),
                "task_config": task_config,
                "task_version": (data.get("versions") or {}).get(task),
                "n_shot": (data.get("n-shot") or {}).get(task),
            },
            higher_is_better={
                METRIC_NAMES.get(k, k): bool(v) for k, v in (hib.get(task) or {}).items() if isinstance(v, bool)
            },
        )
        _read_samples(run)
        metrics = {r["metric"] for r in run.per_instance}
        run.main_metric = next((m for m in ("exact_match", *sorted(metrics)) if m in metrics), "exact_match")
        runs.append(run)
    return runs


def _method(task_config: Mapping[str, Any]) -> str:
    kind = task_config.get("output_type")
    return {
        "multiple_choice": "multiple_choice_separate_original",
        "loglikelihood": "language_modeling",
        "loglikelihood_rolling": "language_modeling",
    }.get(str(kind), "generation")


def _arguments(sample: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """lm-eval logs each request's arguments as a list, or as ``{"gen_args_<k>": {"arg_<j>": ...}}``."""
    args = sample.get("arguments")
    if isinstance(args, dict):
        out = []
        for k in range(len(args)):
            item = args.get(f"gen_args_{k}")
            if not isinstance(item, dict):
                raise ValueError(f"arguments.gen_args_{k}: missing")
            out.append(tuple(item.get(f"arg_{j}") for j in range(len(item))))
        return out
    if isinstance(args, list):
        return [tuple(a) if isinstance(a, list) else (a,) for a in args]
    raise ValueError("arguments: missing (not a logged lm-eval sample)")


def _read_samples(run: ImportedRun) -> None:
    path = run.source
    seen_filters: dict[Any, set[str]] = {}
    for line, sample in iter_jsonl(path):
        where = f"line {line}"
        if not isinstance(sample, dict) or "doc_id" not in sample:
            raise ImportFileError(path, "expected a logged sample object with a doc_id", where=where)
        doc_id = sample["doc_id"]
        if not isinstance(doc_id, (int, str)) or isinstance(doc_id, bool):
            raise ImportFileError(path, "doc_id is not a number or a string", where=where)
        filt = str(sample.get("filter") or "none")
        filters = seen_filters.setdefault(doc_id, set())
        if filt in filters:
            raise ImportFileError(path, f"doc_id {doc_id!r} appears twice (filter {filt!r})", where=where)
        filters.add(filt)
        instance_id = f"doc{doc_id}" if isinstance(doc_id, int) else str(doc_id)
        try:
            requests = _arguments(sample)
        except ValueError as exc:
            raise ImportFileError(path, str(exc), where=where) from None
        if len(filters) == 1:
            run.instances.append(_instance(run, sample, instance_id, requests))
            run.requests.extend(_requests(run.method, sample, instance_id, requests, path, where))
        names = _list(sample.get("metrics"))
        for name in names:
            if name not in sample:
                raise ImportFileError(path, f"metric {name!r} is listed but has no value", where=where)
            metric = METRIC_NAMES.get(str(name), str(name))
            if filt != "none":
                metric = f"{metric}@{filt}"
            value = finite(sample[name], path, f"{where}: {name}")
            run.per_instance.append(per_instance_row(instance_id, metric, value))


def _target_index(target: Any, n: int) -> set[int]:
    values = target if isinstance(target, list) else [target]
    out = set()
    for v in values:
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n:
            out.add(v)
        elif isinstance(v, str) and v.strip().isdigit() and 0 <= int(v) < n:
            out.add(int(v))
    return out


def _instance(
    run: ImportedRun, sample: Mapping[str, Any], instance_id: str, requests: list[tuple[Any, ...]]
) -> dict[str, Any]:
    context = str(requests[0][0]) if requests and requests[0] else ""
    target = sample.get("target")
    if run.method == "multiple_choice_separate_original":
        choices = [str(r[1]) if len(r) > 1 else "" for r in requests]
        delimiter = str((run.origin.get("task_config") or {}).get("target_delimiter", " "))
        texts = [c[len(delimiter) :] if delimiter and c.startswith(delimiter) else c for c in choices]
        correct = _target_index(target, len(texts))
        refs = [(t, k in correct) for k, t in enumerate(texts)]
    else:
        targets = target if isinstance(target, list) else [target]
        refs = [(str(t), True) for t in targets if t is not None]
    meta = {k: sample[k] for k in ("doc_hash", "prompt_hash", "target_hash") if k in sample}
    return instance_row(instance_id, context, refs, meta, raw={"doc": sample.get("doc"), "target": target})


def _requests(
    method: str, sample: Mapping[str, Any], instance_id: str, requests: list[tuple[Any, ...]], path: Path, where: str
) -> list[dict[str, Any]]:
    resps = _list(sample.get("resps"))
    filtered = _list(sample.get("filtered_resps"))
    rows = []
    for k, args in enumerate(requests):
        context = str(args[0]) if args else ""
        resp = resps[k] if k < len(resps) else None
        first = resp[0] if isinstance(resp, list) and resp else resp
        kept = {"filtered_resp": filtered[k] if k < len(filtered) else None}
        if method == "multiple_choice_separate_original" or (len(args) > 1 and isinstance(args[1], str)):
            loglik, greedy = (first[0], first[1]) if isinstance(first, list) and len(first) >= 2 else (None, None)
            logprob = _loglik(loglik, path, f"{where}: resps[{k}]")
            greedy = greedy is True or str(greedy) == "True"
            rows.append(
                request_defaults(
                    instance_id=instance_id,
                    split="test",
                    request_index=k,
                    reference_index=k if method == "multiple_choice_separate_original" else None,
                    kind="loglikelihood",
                    prompt=context,
                    continuation=str(args[1]) if len(args) > 1 else "",
                    success=logprob is not None,
                    error=None if logprob is not None else "no response logged",
                    completion="",
                    logprob=logprob,
                    completions=[]
                    if logprob is None
                    else [
                        {
                            "text": "",
                            "logprob": logprob,
                            "finish_reason": None,
                            "is_greedy": bool(greedy),
                            "num_tokens": 0,
                        }
                    ],
                    has_logprobs=logprob is not None,
                    engine="lm-evaluation-harness",
                    raw=_raw(kept),
                )
            )
        else:
            settings = args[1] if len(args) > 1 and isinstance(args[1], dict) else {}
            text = first if isinstance(first, str) else None
            until = settings.get("until")
            rows.append(
                request_defaults(
                    instance_id=instance_id,
                    split="test",
                    request_index=k,
                    kind="generate",
                    prompt=context,
                    max_tokens=int(settings.get("max_gen_toks") or 0),
                    temperature=float(settings.get("temperature") or 0.0) if settings.get("do_sample") else 0.0,
                    stop=[str(s) for s in until] if isinstance(until, list) else [],
                    success=text is not None,
                    error=None if text is not None else "no response logged",
                    completion=text,
                    logprob=None if text is None else 0.0,
                    completions=[]
                    if text is None
                    else [{"text": text, "logprob": 0.0, "finish_reason": None, "is_greedy": None, "num_tokens": 0}],
                    post_processed=[str(kept["filtered_resp"])] if kept["filtered_resp"] is not None else None,
                    engine="lm-evaluation-harness",
                    raw=_raw({"generation_kwargs": settings, **kept}),
                )
            )
    return rows


def _loglik(value: Any, path: Path, where: str) -> float | None:
    """A logged log-likelihood (lm-eval 0.4 writes it as a string, earlier versions as a number)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ImportFileError(path, f"log-likelihood {value[:40]!r} is not a number", where=where) from None
    return finite(value, path, where)


def _raw(value: Mapping[str, Any]) -> str:
    from holistic.core.hashing import canonical_json

    return canonical_json(dict(value))
