"""What a run's page shows that only the run's own files decide (its statistics, in-context examples,
reasoning facts, whether it has haystack heatmaps): computed once into its browser bundle
(:mod:`holistic.site.bundle`), as plain JSON data."""

from __future__ import annotations

from typing import Any

from holistic.results import RunReader, references_from_rows
from holistic.results.schemas import INSTANCES_TABLE, REQUESTS_TABLE, STATS_TABLE
from holistic.site.haystack import load_artifact
from holistic.site.reasoning import run_reasoning
from holistic.site.writer import clean
from holistic.summarize.tables import Cell, Column, Table


def page_facts(reader: RunReader) -> dict[str, Any]:
    """The run page's own facts: ``stats_table`` (a table's JSON), ``examples``, ``reasoning``
    (``tables`` and ``flags``), ``haystack`` (whether the run has heatmaps to draw) and ``requests``
    (:func:`request_totals`, for the suite's models page)."""
    tables, flags = run_reasoning(reader)
    return {
        "stats_table": stats_table(reader).to_json(),
        "examples": train_examples(reader),
        "reasoning": {"tables": tables, "flags": flags},
        "haystack": load_artifact(reader) is not None,
        "requests": request_totals(reader),
    }


REQUEST_TOTALS = ("requests", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s")


def request_totals(reader: RunReader) -> dict[str, float] | None:
    """The run's requests and what they consumed (``None``: the run has no requests table); the
    suite's models page adds them up per model."""
    if not reader.has_table(REQUESTS_TABLE):
        return None
    table = reader.table(REQUESTS_TABLE, ["prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "cached"])
    t = table.to_pydict()
    sums: dict[str, float] = {"requests": table.num_rows if table.num_columns else 0}
    for c in REQUEST_TOTALS[1:]:
        sums[c] = sum(v or 0 for v in t.get(c, []))
    return sums


def _sound_totals(value: object) -> bool:
    """``value`` is what :func:`request_totals` gives: ``None``, or a number for each total."""
    if value is None:
        return True
    return (
        isinstance(value, dict)
        and set(value) == set(REQUEST_TOTALS)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value.values())
    )


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
        and "requests" in value
        and _sound_totals(value["requests"])
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
