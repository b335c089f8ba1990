"""Data imputation (Mei et al., 2021), HELM's ``entity_data_imputation``: fill in a missing cell.

An instance is one table row with one column left out, written as HELM writes it:
``col: value`` for the other columns joined by ``. ``, then ``. <column>?``; the
answer is the cell as pandas prints it (see :mod:`holistic.scenarios.loading.tabular`).

- ``Buy`` (the Buy side of Abt-Buy, ``Buy.csv``: ``id``, ``name``, ``description``,
  ``manufacturer``, ``price``): the ``id`` is dropped, so are rows without a
  description, and ``manufacturer`` is imputed. As in HELM, rows whose manufacturer
  is missing are kept (their answer is ``nan``).
- ``Restaurant`` (Fodors-Zagat, ``fz.arff``: ``@attribute`` lines name the columns,
  the comma-separated rows follow ``@data``): the ``class`` column is dropped,
  double quotes are removed and cells stripped, rows with a missing cell are
  dropped, and ``city`` is imputed.

Splits as HELM makes them: 10% of the rows are the test set and 20% of the rest the
validation set, each drawn with NumPy's legacy generator seeded with ``seed`` (HELM's
1234) exactly as pandas' ``sample(frac=..., random_state=seed)`` draws them (test
and validation rows in drawn order; the training rows keep the file order).

HELM's protocol: instructions ``What is the missing value?``, ``Answer:``, five
in-context examples, greedy decoding of up to 5 tokens, stopping at a newline;
exact-match family, ``quasi_exact_match`` main.

Data: ``entity_data_imputation/Buy.csv`` and ``entity_data_imputation/fz.arff``,
fetched from the archives HELM downloads (``Abt-Buy.zip``, ``restaurant.tar.gz`` in
HELM's public storage; not pinned, as the host could not be reached to take sha256
sums).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import OPEN_QA
from holistic.scenarios.loading.common import FileScenario, check_choice
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import open_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData
from holistic.scenarios.loading.tabular import NAN_TEXT, Table, read_table, serialise, table_from_rows

_STORAGE = "https://storage.googleapis.com/crfm-helm-public/source_datasets/scenarios/entity_data_imputation"
HELM_SEED = 1234
TEST_FRACTION = 0.1
VALID_FRACTION = 0.2


DATASETS: dict[str, tuple[str, str]] = {"Buy": ("Buy.csv", "manufacturer"), "Restaurant": ("fz.arff", "city")}
"""HELM's dataset -> (file, column imputed)."""
_DOWNLOADS: dict[str, tuple[Download, ...]] = {
    "Buy": (
        Download(f"{_STORAGE}/Abt-Buy.zip", member="Buy.csv"),
        Download(f"{_STORAGE}/Abt-Buy.zip", member="Abt-Buy/Buy.csv"),
    ),
    "Restaurant": (
        Download(f"{_STORAGE}/restaurant.tar.gz", member="fz.arff"),
        Download(f"{_STORAGE}/restaurant.tar.gz", member="restaurant/fz.arff"),
    ),
}


def read_buy(path: Path) -> Table:
    """``Buy.csv`` without its ``id`` column and without rows lacking a description."""
    table = read_table(path)
    keep = [i for i, c in enumerate(table.columns) if c != "id"]
    table.column("id")
    description = table.column("description")
    pairs = [(line, row) for line, row in zip(table.lines, table.rows, strict=True) if row[description] != NAN_TEXT]
    return Table(
        path,
        tuple(table.columns[i] for i in keep),
        tuple(tuple(row[i] for i in keep) for _, row in pairs),
        tuple(line for line, _ in pairs),
    )


def read_arff(path: Path) -> Table:
    """A text ARFF file as HELM reads ``fz.arff``: without ``class``, quotes removed, complete rows only."""
    columns: list[str] = []
    data: list[tuple[int, str]] = []
    in_data = False
    with open_text(path) as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if in_data:
                data.append((number, line.strip()))
            elif line.startswith("@attribute"):
                parts = line.split(maxsplit=2)
                if len(parts) < 3:
                    raise DataSourceError(f"{path}:{number}: expected '@attribute <name> <type>'")
                columns.append(parts[1])
            elif line.startswith("@data"):
                in_data = True
    if not in_data or not columns:
        raise DataSourceError(f"{path}: expected '@attribute' lines and an '@data' section")
    raw: list[tuple[int, Sequence[str]]] = []
    for number, text in data:
        try:
            cells = next(csv.reader(io.StringIO(text)))
        except (csv.Error, StopIteration) as exc:
            raise DataSourceError(f"{path}:{number}: cannot read the row as CSV: {exc}") from None
        raw.append((number, cells))
    table = table_from_rows(path, columns, raw)
    keep = [i for i, c in enumerate(columns) if c != "class"]
    rows: list[tuple[int, tuple[str, ...]]] = []
    for row_line, row in zip(table.lines, table.rows, strict=True):
        kept = tuple(row[i] if row[i] == NAN_TEXT else row[i].replace('"', "").strip() for i in keep)
        if NAN_TEXT not in kept:
            rows.append((row_line, kept))
    return Table(path, tuple(columns[i] for i in keep), tuple(r for _, r in rows), tuple(n for n, _ in rows))


def pandas_sample(count: int, fraction: float, seed: int) -> list[int]:
    """Positions pandas' ``sample(frac=fraction, random_state=seed)`` picks from ``count`` rows, in drawn order."""
    size = round(fraction * count)
    return [int(i) for i in np.random.RandomState(seed).permutation(count)[:size]]


def helm_splits(table: Table, seed: int) -> list[tuple[str, list[int]]]:
    """Row positions of HELM's train, valid and test sets."""
    test = pandas_sample(len(table.rows), TEST_FRACTION, seed)
    taken = set(test)
    remaining = [i for i in range(len(table.rows)) if i not in taken]
    valid = [remaining[i] for i in pandas_sample(len(remaining), VALID_FRACTION, seed)]
    chosen = set(valid)
    train = [i for i in remaining if i not in chosen]
    return [(TRAIN_SPLIT, train), (VALID_SPLIT, valid), (TEST_SPLIT, test)]


def imputation_instances(table: Table, column: str, dataset: str, seed: int) -> list[Instance]:
    target = table.column(column)
    others = [c for c in table.columns if c != column]
    out = []
    for split, positions in helm_splits(table, seed):
        for position in positions:
            record = dict(zip(table.columns, table.rows[position], strict=True))
            out.append(
                Instance(
                    id=f"{dataset}-{table.lines[position]}",
                    input=f"{serialise(record, others)}. {column}?",
                    references=(Reference(table.rows[position][target], (CORRECT_TAG,)),),
                    split=split,
                    metadata={"dataset": dataset},
                )
            )
    return out


@dataclass(frozen=True, kw_only=True)
class EntityDataImputationScenario(FileScenario):
    """Impute a missing cell of a table row (Buy manufacturer, Restaurant city)."""

    notes_missing_files = True
    info = ScenarioInfo(
        name="entity_data_imputation",
        description="Data imputation: generate the missing cell of a table row (Buy manufacturer, Restaurant city).",
        task="generation",
        default_adapter=prompt_format(
            instructions="What is the missing value?", output_prefix="Answer: ", max_tokens=5
        ),
        main_metric="quasi_exact_match",
        **OPEN_QA,
        tags=("structured_data", "reasoning", "targeted:reasoning"),
    )

    dataset: str = arg(enum=tuple(DATASETS))
    seed: int = HELM_SEED

    def __post_init__(self) -> None:
        check_choice(self.dataset, list(DATASETS), "data imputation dataset")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")

    def data_needs(self) -> DataNeeds:
        name = DATASETS[self.dataset][0]
        return DataNeeds(
            "entity_data_imputation",
            layouts=((DataFile(name, downloads=_DOWNLOADS[self.dataset]),),),
            hint=f"HELM's archives under {_STORAGE}/ ({name})",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        name, column = DATASETS[self.dataset]
        table = read_buy(data[name]) if self.dataset == "Buy" else read_arff(data[name])
        return imputation_instances(table, column, self.dataset, self.seed)
