"""Data of the per-instance browser: an index plus chunks loaded on demand.

Pages opened from ``file://`` cannot ``fetch()`` local files, so data travels in
JavaScript files loaded through ``<script>`` elements:

- ``index.js`` calls ``HOLISTIC_INDEX({...})`` with one compact row per instance
  (chunk number, correctness of the original, split, which perturbations exist),
  so filters and paging work without loading every chunk.
- ``chunk_NNNN.js`` calls ``HOLISTIC_CHUNK(n, {...})`` with up to
  :data:`CHUNK_SIZE` full records. Prompts of one trial usually share their
  instructions and in-context examples: each chunk stores that common prefix
  once per trial and each record only the rest, which the page joins back into
  the exact prompt.

Every string is written as JSON with ``<``, ``>`` and ``&`` escaped, and the page
inserts text with ``textContent`` only, so data can never become markup.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from holistic.core.specs import MAX_ANSWER_PATTERN_CHARS
from holistic.metrics.choices import read_answer
from holistic.results import RunReader, references_from_rows
from holistic.results.atomic import writing
from holistic.results.schemas import INSTANCES_TABLE, PER_INSTANCE_STATS_TABLE, REQUESTS_TABLE

CHUNK_SIZE = 250
MAX_FIELD_CHARS = 100_000
"""Characters of one text field (an input, a prompt, a completion) shown in the browser. A longer
one is cut there, in Arrow before it becomes a Python string, and ends with where its full text
is (the run's Parquet file and column): one 200 MB line no longer makes a chunk Chromium cannot
load, so every instance of the run stays reachable."""


_CUT = " \u2026 [truncated here: "


def _cut_text(array: pa.Array, limit: int, where: str) -> pa.Array:
    """``array`` with every string longer than ``limit`` cut and pointed to ``where``, inside lists,
    structs and maps too (chat messages, completions, output mappings), all in Arrow: the long
    value never becomes a Python string, and every string a chunk record holds has passed here.
    ``array`` itself when nothing is too long."""
    kind = array.type
    if array.nbytes <= limit:
        return array  # no string in it can be longer than all of its bytes
    import pyarrow.compute as pc  # only where a value may be too long: a small run's bundle does without

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        lengths = pc.utf8_length(array)
        longest = pc.max(lengths).as_py()
        if longest is None or longest <= limit:
            return array
        note = pc.binary_join_element_wise(
            pc.cast(lengths, kind), pa.scalar(f" characters in all; the full text is in {where}]", kind), ""
        )
        cut = pc.binary_join_element_wise(pc.utf8_slice_codeunits(array, 0, limit), note, pa.scalar(_CUT, kind))
        return pc.if_else(pc.greater(lengths, limit), cut, array)
    if pa.types.is_map(kind):
        old_keys, old_items = array.keys, array.items  # each access makes a new wrapper: compare these
        keys, items = _cut_text(old_keys, limit, where), _cut_text(old_items, limit, where)
        if keys is old_keys and items is old_items:
            return array
        if array.offset:  # a slice: its offsets index the whole child arrays, its mask would not line up
            return _cut_text(pa.concat_arrays([array]), limit, where)
        mask = array.is_null() if array.null_count else None
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=kind, mask=mask)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        old_values = array.values
        values = _cut_text(old_values, limit, where)
        if values is old_values:
            return array
        if array.offset:  # a slice: its offsets index the whole child array, its mask would not line up
            return _cut_text(pa.concat_arrays([array]), limit, where)
        lists = pa.ListArray if pa.types.is_list(kind) else pa.LargeListArray
        return lists.from_arrays(array.offsets, values, type=kind, mask=array.is_null() if array.null_count else None)
    if pa.types.is_struct(kind):
        fields = [array.field(i) for i in range(kind.num_fields)]
        cut_fields = [_cut_text(f, limit, where) for f in fields]
        if all(a is b for a, b in zip(fields, cut_fields, strict=True)):
            return array
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(cut_fields, fields=list(kind), mask=mask)
    return array


def _truncated(run: RunReader, name: str, table: pa.Table, limit: int = MAX_FIELD_CHARS) -> pa.Table:
    """``table`` with every string longer than ``limit`` cut, and a pointer to the full text appended."""
    for i, column_name in enumerate(table.column_names):
        where = f"the column {column_name!r} of {run.run_id}/{run.table_path(name).name}"
        chunks = table.column(i).chunks
        cut = [_cut_text(chunk, limit, where) for chunk in chunks]
        if any(a is not b for a, b in zip(chunks, cut, strict=True)):
            table = table.set_column(i, column_name, pa.chunked_array(cut, type=table.column(i).type))
    return table


def js_json(value: Any) -> str:
    """JSON safe to embed in a script: no ``</script>``, no HTML-significant characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


WHOLE_COLUMN_BYTES = 64 << 20
"""A column whose largest row group is at most this many bytes decoded is read whole (one pass,
cut once); a larger one, where a huge value may be, a few rows at a time."""


def _column_sizes(parquet: pq.ParquetFile) -> dict[str, int]:
    """Each top-level column's largest decoded size in one row group, from the file's metadata."""
    meta = parquet.metadata
    sizes: dict[str, int] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        per_group: dict[str, int] = defaultdict(int)
        for k in range(group.num_columns):
            chunk = group.column(k)
            per_group[chunk.path_in_schema.split(".", 1)[0]] += chunk.total_uncompressed_size
        for column, size in per_group.items():
            sizes[column] = max(sizes.get(column, 0), size)
    return sizes


def _read(run: RunReader, name: str, columns: list[str], limit: int = MAX_FIELD_CHARS) -> dict[str, list[Any]]:
    if not run.has_table(name):
        return {c: [] for c in columns}
    path = run.table_path(name)
    if isinstance(path, Path):  # one column, a few rows at a time: one huge value is cut before the next is read
        # one thread and no read-ahead buffer: a page of one huge value is decoded once, not beside copies
        parquet = pq.ParquetFile(path, pre_buffer=False)
        present = [c for c in columns if c in parquet.schema_arrow.names]
        table = parquet.schema_arrow.empty_table().select(present)
        if parquet.metadata.num_rows:
            sizes = _column_sizes(parquet)
            table = pa.table(
                {
                    c: (
                        _truncated(run, name, parquet.read(columns=[c], use_threads=False), limit)
                        if sizes.get(c, 0) <= WHOLE_COLUMN_BYTES
                        else pa.concat_tables(
                            _truncated(run, name, pa.Table.from_batches([b]), limit)
                            for b in parquet.iter_batches(8, columns=[c], use_threads=False)
                        )
                    ).column(0)
                    for c in present
                }
            )
    else:
        table = _truncated(run, name, run.table(name, columns), limit)
    data: dict[str, list[Any]] = table.to_pydict()
    for c in columns:
        data.setdefault(c, [None] * table.num_rows)
    return data


@dataclass(frozen=True)
class BrowserData:
    count: int
    chunks: int
    perturbations: tuple[str, ...]
    splits: tuple[str, ...]
    predictions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Instance id -> the original's input, references, first-trial prediction, main
    metric and correctness (what the compare-models view shows)."""
    page: dict[str, Any] = field(default_factory=dict)
    """The run page's own facts (:func:`holistic.site.run_facts.page_facts`), when asked for."""


def _common_prefix(texts: Iterable[str]) -> str:
    texts = list(texts)
    if len(texts) < 2:
        return ""
    # The common prefix of all strings is that of the lexicographic min and max.
    lo, hi = min(texts), max(texts)
    n = 0
    while n < len(lo) and lo[n] == hi[n]:
        n += 1
    prefix = lo[:n]
    # Cut at a line boundary so the stored suffix starts on its own line.
    cut = prefix.rfind("\n")
    return prefix[: cut + 1] if cut > 0 else ""


INSTANCE_COLUMNS = ["instance_id", "role", "split", "sub_split", "perturbation", "input", "references", "metadata"]
REQUEST_COLUMNS = [
    "instance_id",
    "perturbation",
    "trial",
    "request_index",
    "reference_index",
    "role",
    "kind",
    "prompt",
    "messages",
    "continuation",
    "completion",
    "completions",
    "logprob",
    "post_processed",
    "train_ids",
    "num_train_instances",
    "prompt_truncated",
    "output_mapping",
    "error",
    "parse_error",
    "cached",
    "latency_s",
    "reasoning",
    "reasoning_unfinished",
    "reasoning_tokens",
]
STAT_COLUMNS = ["instance_id", "trial", "perturbation", "metric", "value", "details"]

Variants = dict[str, dict[str | None, dict[str, Any]]]
"""Instance id -> perturbation (``None``: the original) -> the variant's record."""


def build_browser(
    run_dir: Path | RunReader, out_dir: Path, main_metric: str | None, *, max_field_chars: int = MAX_FIELD_CHARS
) -> BrowserData:
    """Write ``index.js`` and ``chunk_*.js`` for one run into ``out_dir`` (text fields cut at ``max_field_chars``).

    Each eval instance's variants (the original and each perturbation) get their trials'
    requests and metrics, then each trial what it predicted; the records go into chunks of
    :data:`CHUNK_SIZE` in instance order, with one index row per instance.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    run = RunReader.at(run_dir)
    order, variants = _variants(_read(run, INSTANCES_TABLE, INSTANCE_COLUMNS, max_field_chars))
    _add_requests(variants, _read(run, REQUESTS_TABLE, REQUEST_COLUMNS, max_field_chars))
    _add_metrics(variants, _read(run, PER_INSTANCE_STATS_TABLE, STAT_COLUMNS, max_field_chars))
    normalization = HEADLINE_NORMALIZATION.get(main_metric or "", "none")
    pattern = _answer_pattern(run)
    for vs in variants.values():
        for v in vs.values():
            for t in v["trials"].values():
                t["prediction"] = prediction(t["requests"], t.get("details"), normalization, pattern)

    perturbations = sorted({p for vs in variants.values() for p in vs if p is not None})
    splits = sorted({v["split"] for vs in variants.values() for v in vs.values() if v["split"]})
    rows: list[list[Any]] = []
    predictions: dict[str, dict[str, Any]] = {}
    chunk_records: list[list[dict[str, Any]]] = []
    for n, iid in enumerate(order):
        chunk = n // CHUNK_SIZE
        if chunk == len(chunk_records):
            chunk_records.append([])
        vs = variants[iid]
        original = vs.get(None) or next(iter(vs.values()))
        correct = _correct(original, main_metric)
        mask = sum(1 << perturbations.index(p) for p in vs if p is not None)
        rows.append([chunk, correct, splits.index(original["split"]) if original["split"] in splits else -1, mask])
        predictions[iid] = _compared_prediction(original, correct, main_metric)
        chunk_records[-1].append({"id": iid, "variants": _record_variants(vs, perturbations)})

    for c, records in enumerate(chunk_records):
        payload = _factor_prefixes(records)
        with writing(out_dir / f"chunk_{c:04d}.js") as target:
            target.write_text(f"HOLISTIC_CHUNK({c},{js_json(payload)});\n", encoding="utf-8")
    index = {
        "count": len(order),
        "chunk_size": CHUNK_SIZE,
        "chunks": len(chunk_records),
        "main_metric": main_metric,
        "normalization": normalization,
        "perturbations": perturbations,
        "splits": splits,
        "rows": rows,
    }
    with writing(out_dir / "index.js") as target:
        target.write_text(f"HOLISTIC_INDEX({js_json(index)});\n", encoding="utf-8")
    return BrowserData(
        count=len(order),
        chunks=len(chunk_records),
        perturbations=tuple(perturbations),
        splits=tuple(splits),
        predictions=predictions,
    )


def _variants(inst: dict[str, list[Any]]) -> tuple[list[str], Variants]:
    """The eval instances in order of first appearance, and each one's variants (no trials yet)."""
    order: list[str] = []
    variants: Variants = defaultdict(dict)
    for i in range(len(inst["instance_id"])):
        if inst["role"][i] not in (None, "eval"):
            continue
        iid, pert = inst["instance_id"][i], inst["perturbation"][i]
        if iid not in variants:
            order.append(iid)
        variants[iid][pert] = {
            "perturbation": pert,
            "split": inst["split"][i],
            "sub_split": inst["sub_split"][i],
            "input": inst["input"][i],
            "references": [
                {"output": r.output, "correct": r.is_correct} for r in references_from_rows(inst["references"][i])
            ],
            "metadata": _metadata(inst["metadata"][i]),
            "trials": {},
        }
    return order, variants


def _trial(variant: dict[str, Any], trial: Any) -> dict[str, Any]:
    """The variant's record of ``trial`` (made on first use)."""
    trials: dict[Any, dict[str, Any]] = variant["trials"]
    return trials.setdefault(trial, {"trial": trial, "requests": [], "metrics": {}})


def _add_requests(variants: Variants, req: dict[str, list[Any]]) -> None:
    """Each request, as the browser shows it, into its variant's trial."""
    for i in range(len(req["instance_id"])):
        v = variants.get(req["instance_id"][i], {}).get(req["perturbation"][i])
        if v is None:
            continue
        completions = [c["text"] for c in (req["completions"][i] or [])]
        _trial(v, req["trial"][i])["requests"].append(
            {
                "index": req["request_index"][i],
                "role": req["role"][i],
                "kind": req["kind"][i],
                "prompt": req["prompt"][i] or "",
                "messages": [{"role": m["role"], "content": m["content"]} for m in (req["messages"][i] or [])] or None,
                "continuation": req["continuation"][i] or "",
                "completions": completions,
                "logprob": req["logprob"][i],
                "reference_index": req["reference_index"][i],
                "post_processed": req["post_processed"][i],
                "train_ids": req["train_ids"][i] or [],
                "num_train_instances": req["num_train_instances"][i],
                "prompt_truncated": req["prompt_truncated"][i],
                "output_mapping": dict(req["output_mapping"][i]) if req["output_mapping"][i] else None,
                "error": req["error"][i],
                "parse_error": req["parse_error"][i],
                "cached": req["cached"][i],
                "latency_s": req["latency_s"][i],
                **_reasoning(req, i),
            }
        )


def _reasoning(req: dict[str, list[Any]], i: int) -> dict[str, Any]:
    """The request's thought, whether it finished and its tokens (absent from runs written before them)."""

    def at(column: str, default: Any) -> Any:
        values = req.get(column) or []
        return values[i] if i < len(values) and values[i] is not None else default

    thought, unfinished = at("reasoning", None), bool(at("reasoning_unfinished", False))
    if thought is None and not unfinished:
        return {}
    return {
        "reasoning": thought or "",
        "reasoning_unfinished": unfinished,
        "reasoning_tokens": at("reasoning_tokens", 0),
    }


def _add_metrics(variants: Variants, pis: dict[str, list[Any]]) -> None:
    """Each per-instance value into its variant's trial (and the stored details of separate multiple choice)."""
    for i in range(len(pis["instance_id"])):
        pert = pis["perturbation"][i]
        if pert in ("robustness", "fairness"):
            continue  # worst-case values are shown on the run page, not per variant
        v = variants.get(pis["instance_id"][i], {}).get(pert)
        if v is None:
            continue
        trial = _trial(v, pis["trial"][i])
        trial["metrics"][pis["metric"][i]] = pis["value"][i]
        if pis["details"][i]:  # separate multiple choice: each choice's scores and the pick per normalisation
            trial["details"] = json.loads(pis["details"][i])


def _compared_prediction(original: dict[str, Any], correct: int, main_metric: str | None) -> dict[str, Any]:
    """What the compare-systems view shows of an instance: the original's first trial."""
    first = original["trials"][min(original["trials"])] if original["trials"] else None
    return {
        "input": original["input"],
        "references": original["references"],
        "correct": correct,
        "prediction": first["prediction"] if first else None,
        "value": first["metrics"].get(main_metric) if first and main_metric else None,
    }


def _record_variants(vs: dict[str | None, dict[str, Any]], perturbations: list[str]) -> list[dict[str, Any]]:
    """An instance's variants for its chunk record: the original first, trials and requests in order."""
    record_variants = []
    for pert in [None, *perturbations]:
        if pert not in vs:
            continue
        v = dict(vs[pert])
        v["trials"] = [v["trials"][k] for k in sorted(v["trials"])]
        for t in v["trials"]:
            t["requests"].sort(key=lambda r: (r["index"] if r["index"] is not None else 0, r["role"] or ""))
        record_variants.append(v)
    return record_variants


HEADLINE_NORMALIZATION = {
    "exact_match_per_char": "char",
    "exact_match_per_token": "token",
    "exact_match_per_byte": "byte",
}
"""Separate multiple choice: the length normalisation a run's headline stat names
(``exact_match`` is the raw sum, ``none``)."""


def _answer_pattern(run: RunReader) -> str | None:
    """The run's ``answer_pattern`` (joint multiple choice), when its run spec holds a plausible one."""
    adapter = run.spec.get("adapter")
    pattern = adapter.get("answer_pattern") if isinstance(adapter, dict) else None
    return pattern if isinstance(pattern, str) and 0 < len(pattern) <= MAX_ANSWER_PATTERN_CHARS else None


def prediction(
    requests: list[dict[str, Any]],
    details: dict[str, Any] | None = None,
    normalization: str = "none",
    pattern: str | None = None,
) -> dict[str, Any] | None:
    """What a trial answered: the first generated completion (with the choice it names
    in joint multiple choice, read through the run's ``answer_pattern`` as the metrics read it),
    or, when choices are scored apart, the choice picked under the run's headline normalisation
    (from the stored ``details``; without them the highest summed log-probability)."""
    for r in sorted(requests, key=lambda r: r["index"] if r["index"] is not None else 0):
        if r["kind"] != "generate":
            continue
        if r["error"]:
            return {"text": None, "error": r["error"]}
        text = r["completions"][0] if r["completions"] else ""
        parsed = (r["post_processed"] or [None])[0]
        mapping = r["output_mapping"] or {}
        answer = mapping.get(read_answer(parsed or text, pattern)) if mapping else None
        return {
            "text": text,
            "parsed": parsed if parsed not in (None, text, text.strip()) else None,
            "choice_text": answer,
        }
    scored = [r for r in requests if r["reference_index"] is not None and r["logprob"] is not None]
    if not scored:
        return None
    role = scored[0]["role"]
    candidates = [r for r in scored if r["role"] == role]
    best = max(candidates, key=lambda r: (r["logprob"], -r["reference_index"]))
    picks = (details or {}).get("chosen_index") or {}
    picked = picks.get(normalization, picks.get("none"))
    if isinstance(picked, int):
        best = next((r for r in candidates if r["reference_index"] == picked), best)
    return {
        "text": f"{chr(ord('A') + best['reference_index'])}. {best['continuation']}",
        "choice": best["reference_index"],
    }


def _metadata(text: str | None) -> dict[str, Any] | None:
    """Per-instance metadata (needle positions, gold ids, identity group...) for display."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return {"metadata": text}
    return value if isinstance(value, dict) and value else None


def _correct(variant: dict[str, Any], main_metric: str | None) -> int:
    """1 correct, 0 wrong, -1 unknown: the main metric averaged over trials, >= 0.5."""
    values = [
        t["metrics"][main_metric]
        for t in variant["trials"].values()
        if main_metric and t["metrics"].get(main_metric) is not None
    ]
    if not values:
        return -1
    return 1 if sum(values) / len(values) >= 0.5 else 0


def _factor_prefixes(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Move the longest common line-aligned prompt prefix per (trial, role) into the chunk header."""
    groups: dict[str, list[str]] = defaultdict(list)
    for rec in records:
        for v in rec["variants"]:
            for t in v["trials"]:
                for r in t["requests"]:
                    groups[f"{t['trial']}|{r['role']}"].append(r["prompt"])
    prefixes = {k: _common_prefix(texts) for k, texts in groups.items()}
    prefixes = {k: p for k, p in prefixes.items() if len(p) > 40}
    for rec in records:
        for v in rec["variants"]:
            for t in v["trials"]:
                for r in t["requests"]:
                    key = f"{t['trial']}|{r['role']}"
                    if key in prefixes:
                        r["prefix"] = key
                        r["prompt"] = r["prompt"][len(prefixes[key]) :]
    return {"prefixes": prefixes, "records": records}
