"""What a run's page shows that only the run's own files decide (its statistics, in-context examples,
reasoning facts, whether it has haystack heatmaps): computed once into its browser bundle
(:mod:`holistic.site.bundle`), as plain JSON data."""

from __future__ import annotations

from typing import Any

from holistic.results import RunReader, references_from_rows
from holistic.results.schemas import INSTANCES_TABLE, STATS_TABLE
from holistic.site.haystack import load_artifact
from holistic.site.reasoning import run_reasoning
from holistic.site.writer import clean
from holistic.summarize.tables import Cell, Column, Table


def page_facts(reader: RunReader) -> dict[str, Any]:
    """The run page's own facts: ``stats_table`` (a table's JSON), ``examples``, ``reasoning``
    (``tables`` and ``flags``) and ``haystack`` (whether the run has heatmaps to draw)."""
    tables, flags = run_reasoning(reader)
    return {
        "stats_table": stats_table(reader).to_json(),
        "examples": train_examples(reader),
        "reasoning": {"tables": tables, "flags": flags},
        "haystack": load_artifact(reader) is not None,
    }


def sound_page_facts(value: object) -> bool:
    """``value`` has the shape :func:`page_facts` gives (read from a bundle: checked before use)."""
    if not isinstance(value, dict):
        return False
    reasoning = value.get("reasoning")
    return (
        isinstance(value.get("stats_table"), dict)
        and isinstance(value.get("examples"), list)
        and all(isinstance(e, dict) for e in value["examples"])
        and isinstance(reasoning, dict)
        and isinstance(reasoning.get("tables"), list)
        and isinstance(reasoning.get("flags"), list)
        and isinstance(value.get("haystack"), bool)
    )


_STATS_COLUMNS = (
    Column("Metric"),
    Column("Split"),
    Column("Sub-split"),
    Column("Perturbation"),
    Column("Mean [95% CI]", numeric=True),
    Column("Std. dev.", numeric=True),
    Column("Count", numeric=True, digits=0),
)


def stats_table(reader: RunReader) -> Table:
    """Every statistic of the run, by metric, split, sub-split and perturbation."""
    stats = reader.table(STATS_TABLE).to_pylist()
    rows = []
    for s in sorted(
        stats, key=lambda s: (s["metric"], s["split"] or "", s.get("sub_split") or "", s.get("perturbation") or "")
    ):
        rows.append(
            (
                Cell(s["metric"]),
                Cell(s["split"]),
                Cell(s.get("sub_split") or ""),
                Cell(s.get("perturbation") or ""),
                Cell(clean(s["mean"]), clean(s.get("ci_low")), clean(s.get("ci_high"))),
                Cell(clean(s.get("stddev"))),
                Cell(float(s["count"]) if s.get("count") is not None else None),
            )
        )
    return Table(id="stats", title="Every statistic", columns=_STATS_COLUMNS, rows=tuple(rows))


def train_examples(reader: RunReader) -> list[dict[str, Any]]:
    """The run's in-context (train) instances with their correct answer."""
    examples = []
    # the inputs are read only when there are train instances: an eval input may be huge
    if reader.has_table(INSTANCES_TABLE) and "train" in reader.table(INSTANCES_TABLE, ["role"]).column(0).to_pylist():
        t = reader.table(INSTANCES_TABLE, ["instance_id", "role", "input", "references"])
        for r in t.to_pylist():
            if r["role"] == "train":
                answer = next((ref.output for ref in references_from_rows(r["references"]) if ref.is_correct), "")
                examples.append({"id": r["instance_id"], "input": r["input"], "answer": answer})
    return examples
