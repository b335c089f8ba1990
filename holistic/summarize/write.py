"""Write a summary: JSON for the site, Parquet for analysis, CSV/Markdown/LaTeX exports."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from holistic.results.atomic import build_folder, writing
from holistic.results.layout import CELLS_FILE, SUMMARY_FILE, WIN_RATES_FILE
from holistic.summarize.summary import Summary
from holistic.summarize.tables import to_csv, to_latex, to_markdown


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _write(path: Path, data: bytes) -> None:
    """One file of the summary, in the fresh folder :func:`write_summary` swaps in whole (so a file
    needs no swap of its own)."""
    with writing(path):
        path.write_bytes(data)


def summary_json(summary: Summary) -> dict[str, Any]:
    out: dict[str, Any] = _clean(
        {
            "suite": summary.suite,
            "models": summary.models,
            "system_model": summary.system_model,
            "baselines": summary.baselines,
            "columns": summary.columns,
            "column_runs": summary.column_runs,
            "unfinished_runs": summary.unfinished,
            "runs": [
                {
                    "run_id": r.run_id,
                    "name": r.name,
                    "scenario": r.scenario,
                    "scenario_args": r.scenario_args,
                    "model": r.model,
                    "system": summary.system_of_run.get(r.run_id, r.model),
                    "method": r.method,
                    "groups": list(r.groups),
                    "main_metric": r.main_metric,
                    "requests": r.requests,
                    "failed_requests": r.failed_requests,
                    "error_rate": r.error_rate,
                    "ranked": r.rankable,
                }
                for r in summary.runs
            ],
            "leaderboards": {name: asdict(res) for name, res in sorted(summary.leaderboards.items())},
            "cells": summary.cells,
            "coverage": summary.coverage,
            "judge_flags": dict(sorted(summary.judges.flags.items())),
            "tables": [t.to_json() for t in summary.tables],
        }
    )
    return out


def write_summary(summary: Summary, out_dir: Path) -> list[Path]:
    """Write everything under ``out_dir`` (``<suite>/summary``); returns the files written.

    The folder is built whole beside the old one and swapped in (as the site is), so a kill at
    any point leaves the old summary or the new one, never ``summary.json`` of one and
    ``tables/`` of the other."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    written = build_folder(out_dir, lambda folder: _write_into(summary, folder), what="summary")
    return [out_dir / p for p in written]


def _write_into(summary: Summary, out_dir: Path) -> list[Path]:
    """Write the summary's files into the fresh folder ``out_dir``; returns them relative to it."""
    tables_dir = out_dir / "tables"
    tables_dir.mkdir(exist_ok=True)
    written: list[Path] = []

    doc = summary_json(summary)
    path = out_dir / SUMMARY_FILE
    _write(path, json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False).encode("utf-8"))
    written.append(path)

    cells = pa.Table.from_pylist(
        [_clean(c) for c in summary.cells],
        schema=pa.schema(
            [
                ("group", pa.string()),
                ("model", pa.string()),
                ("column", pa.string()),
                ("value", pa.float64()),
                ("ci_low", pa.float64()),
                ("ci_high", pa.float64()),
                ("lower_is_better", pa.bool_()),
                ("metric", pa.string()),
                ("sub_runs", pa.int64()),
                ("perturbation", pa.string()),
            ]
        ),
    )
    written.append(_write_parquet(cells, out_dir / CELLS_FILE))
    wr_rows = []
    for group, res in sorted(summary.leaderboards.items()):
        for i, model in enumerate(res.models):
            wr_rows.append(
                {
                    "group": group,
                    "model": model,
                    "win_rate": _clean(res.win_rate[i]),
                    "ci_low": _clean(res.ci_low[i]),
                    "ci_high": _clean(res.ci_high[i]),
                    "rank": res.rank[i],
                    "rank_low": res.rank_low[i],
                    "rank_high": res.rank_high[i],
                    "separable_from_next": res.separable_from_next[i],
                }
            )
    wr = pa.Table.from_pylist(
        wr_rows,
        schema=pa.schema(
            [
                ("group", pa.string()),
                ("model", pa.string()),
                ("win_rate", pa.float64()),
                ("ci_low", pa.float64()),
                ("ci_high", pa.float64()),
                ("rank", pa.int64()),
                ("rank_low", pa.int64()),
                ("rank_high", pa.int64()),
                ("separable_from_next", pa.bool_()),
            ]
        ),
    )
    written.append(_write_parquet(wr, out_dir / WIN_RATES_FILE))

    for table in summary.tables:
        for ext, render in (("csv", to_csv), ("md", to_markdown), ("tex", to_latex)):
            p = tables_dir / f"{table.id}.{ext}"
            _write(p, render(table).encode("utf-8"))
            written.append(p)
    return [p.relative_to(out_dir) for p in written]


def _write_parquet(table: pa.Table, path: Path) -> Path:
    tmp = path.with_name(f".{path.name}.tmp")
    with writing(path):
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    return path
