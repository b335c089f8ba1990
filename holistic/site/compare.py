"""Data of the compare-systems view: every system's answer to one instance, side by side.

Runs that share a scenario, its arguments and the adaptation method evaluate the
same instances; when two or more systems ran them, the site gets one comparison
page for them. Like the instance browser, data travels in script files (pages
opened from ``file://`` cannot fetch): ``index.js`` calls
``HOLISTIC_COMPARE_INDEX({...})`` with one row per instance (chunk, how many
systems were right, whether their answers differ) and ``chunk_NNNN.js`` calls
``HOLISTIC_COMPARE_CHUNK(n, {...})`` with the records: input, references and, per
system, the prediction, the main metric and its correctness.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from holistic.site.browser import CHUNK_SIZE, js_json
from holistic.summarize.load import RunInfo


@dataclass(frozen=True)
class Comparison:
    """One set of runs on the same instances, one per system."""

    id: str
    """File-name-safe identifier."""
    scenario: str
    scenario_args: dict[str, Any]
    systems: tuple[str, ...]
    run_ids: tuple[str, ...]
    main_metric: str | None


def comparisons(runs: list[RunInfo], system_of_run: Mapping[str, str]) -> list[Comparison]:
    """Groups of runs with identical instances and at least two systems, in a stable order."""
    groups: dict[str, list[RunInfo]] = defaultdict(list)
    for run in runs:
        key = json.dumps([run.scenario, run.scenario_args, run.method, list(run.groups)], sort_keys=True, default=str)
        groups[key].append(run)
    out = []
    for key in sorted(groups):
        members: dict[str, RunInfo] = {}
        for run in sorted(groups[key], key=lambda r: (system_of_run.get(r.run_id, r.model), r.run_id)):
            members.setdefault(system_of_run.get(run.run_id, run.model), run)
        if len(members) < 2:
            continue
        first = next(iter(members.values()))
        out.append(
            Comparison(
                id=hashlib.sha256(key.encode("utf-8")).hexdigest()[:10],
                scenario=first.scenario,
                scenario_args=dict(first.scenario_args),
                systems=tuple(members),
                run_ids=tuple(r.run_id for r in members.values()),
                main_metric=first.main_metric,
            )
        )
    return out


def _answer_key(text: object) -> str:
    """What an answer says, as the view compares answers (of its choice, else its parsed or raw text):
    lower case, runs of white space as one space."""
    return " ".join(str(text).lower().split())


def _column(
    run: Mapping[str, dict[str, Any]], order: list[str]
) -> tuple[list[dict[str, Any] | None], list[dict[str, Any] | None], list[str | None], list[int]]:
    """One run's answers to the instances of ``order`` (``None``: not in the run): each as it was,
    as the view's record holds it, its key (:func:`_answer_key`; ``None`` when absent) and whether
    it is correct (1 or 0), each computed once per answer."""
    answers = [run.get(iid) for iid in order]
    shown: list[dict[str, Any] | None] = []
    keys: list[str | None] = []
    right: list[int] = []
    known: dict[str, str] = {}
    for a in answers:
        if a is None:
            shown.append(None)
            keys.append(None)
            right.append(0)
            continue
        shown.append({"prediction": a["prediction"], "correct": a["correct"], "value": a["value"]})
        right.append(1 if a["correct"] == 1 else 0)
        pred = a.get("prediction") or {}
        text = pred.get("choice_text") or pred.get("parsed") or pred.get("text") or ""
        if isinstance(text, str):
            key = known.get(text)
            if key is None:
                key = known[text] = _answer_key(text)
        else:
            key = _answer_key(text)
        keys.append(key)
    return answers, shown, keys, right


def write_comparison(
    out_dir: Path, comparison: Comparison, predictions: Mapping[str, Mapping[str, dict[str, Any]]]
) -> int:
    """Write ``index.js`` and ``chunk_*.js`` under ``out_dir``; returns the number of instances."""
    out_dir.mkdir(parents=True, exist_ok=True)
    count, files = comparison_files(comparison, predictions)
    for name, data in files.items():
        (out_dir / name).write_bytes(data)
    return count


def comparison_files(
    comparison: Comparison, predictions: Mapping[str, Mapping[str, dict[str, Any]]]
) -> tuple[int, dict[str, bytes]]:
    """The number of instances and the files of the comparison's data (name -> bytes, in order of name).

    Each run's answers are read once, in one pass per run (:func:`_column`); each instance then
    takes its row and record from the runs' columns side by side."""
    runs = [predictions.get(run_id, {}) for run_id in comparison.run_ids]
    order = list(dict.fromkeys(chain.from_iterable(runs)))
    columns = [_column(run, order) for run in runs]
    answers = zip(*(c[0] for c in columns), strict=True)
    shown = zip(*(c[1] for c in columns), strict=True)
    keys = zip(*(c[2] for c in columns), strict=True)
    n_correct = [sum(r) for r in zip(*(c[3] for c in columns), strict=True)]
    rows: list[list[int]] = []
    chunks: list[list[dict[str, Any]]] = []
    for n, (iid, these, record_answers, these_keys, right) in enumerate(
        zip(order, answers, shown, keys, n_correct, strict=True)
    ):
        if n % CHUNK_SIZE == 0:
            chunks.append([])
        source = next(a for a in these if a is not None)
        distinct = set(these_keys)
        distinct.discard(None)
        rows.append([n // CHUNK_SIZE, right, int(len(distinct) > 1)])
        chunks[-1].append(
            {"id": iid, "input": source["input"], "references": source["references"], "answers": list(record_answers)}
        )
    files = {
        f"chunk_{c:04d}.js": f"HOLISTIC_COMPARE_CHUNK({c},{js_json({'records': records})});\n".encode()
        for c, records in enumerate(chunks)
    }
    index = {
        "count": len(order),
        "chunk_size": CHUNK_SIZE,
        "chunks": len(chunks),
        "main_metric": comparison.main_metric,
        "systems": list(comparison.systems),
        "run_ids": list(comparison.run_ids),
        "rows": rows,
    }
    files["index.js"] = f"HOLISTIC_COMPARE_INDEX({js_json(index)});\n".encode()
    return len(order), files
