"""Tables of imported human ratings (disinformation): means per run and inter-rater agreement.

- ``targeted_disinformation_ratings``: one row per run column and model; per question,
  the mean over instances of each instance's mean rating (over its raters and
  samples), with the number of rated instances.
- ``targeted_disinformation_agreement``: per question, how many raters, rated items
  (generations) and ratings there are, and Krippendorff's alpha (interval) over the
  items rated by at least two raters.

Both read ``<suite>/ratings/`` through :class:`~holistic.results.SuiteReader`; they are
empty (left out) until ratings are imported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from holistic.ratings.agreement import krippendorff_alpha_interval
from holistic.ratings.questions import QUESTIONS
from holistic.results.reader import SuiteReader
from holistic.summarize.load import RunInfo
from holistic.summarize.tables import Cell, Column, Table


def ratings_tables(reader: SuiteReader, runs: Sequence[RunInfo], column_of: Callable[[RunInfo], str]) -> list[Table]:
    per_instance = reader.ratings(per_instance=True).to_pylist()
    raw = reader.ratings().to_pylist()
    if not per_instance or not raw:
        return []
    by_run = {r.run_id: r for r in runs}
    questions = [q for q in QUESTIONS if any(row["metric"] == q.name for row in per_instance)]
    cells: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in per_instance:
        run = by_run.get(row["run_id"])
        if run is None:
            continue  # ratings of a run no longer in the suite
        cells[(column_of(run), run.model)][row["metric"]].append(row["value"])
    rows = []
    for (column, model), values in sorted(cells.items()):
        row = [Cell(column), Cell(model)]
        for q in questions:
            found = values.get(q.name, [])
            row.append(Cell(sum(found) / len(found), note=f"n={len(found)}") if found else Cell(None))
        rows.append(tuple(row))
    means = Table(
        id="targeted_disinformation_ratings",
        title="Targeted evaluations — Disinformation, human ratings",
        description="Mean rating per instance (over raters and samples), averaged over the run's rated instances. "
        + " ".join(f"{q.name}: {q.text}" for q in questions),
        columns=(
            Column("Run"),
            Column("Model"),
            *(Column(q.name, lower_is_better=False, numeric=True, description=q.text) for q in questions),
        ),
        rows=tuple(rows),
    )
    agreement_rows = []
    for q in questions:
        units: dict[str, list[float]] = defaultdict(list)
        raters = set()
        for row in raw:
            if row["metric"] == q.name:
                units[row["item_id"]].append(row["value"])
                raters.add(row["rater"])
        alpha = krippendorff_alpha_interval(units.values())
        agreement_rows.append(
            (
                Cell(q.name),
                Cell(float(len(raters))),
                Cell(float(len(units))),
                Cell(float(sum(len(v) for v in units.values()))),
                Cell(alpha, note="" if alpha is not None else "needs items rated twice, with some variation"),
            )
        )
    agreement = Table(
        id="targeted_disinformation_agreement",
        title="Targeted evaluations — Disinformation, inter-rater agreement",
        description="Krippendorff's alpha (interval) over the generations rated by at least two raters: "
        "1 = perfect agreement, 0 = chance level.",
        columns=(
            Column("Question"),
            Column("Raters", numeric=True, digits=0),
            Column("Items", numeric=True, digits=0),
            Column("Ratings", numeric=True, digits=0),
            Column("Krippendorff's alpha", lower_is_better=False),
        ),
        rows=tuple(agreement_rows),
    )
    return [means, agreement]
