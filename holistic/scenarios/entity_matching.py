"""Entity matching (Magellan / DeepMatcher benchmark datasets), HELM's ``entity_matching``.

Two relations A and B describe the same kind of entity (products, beers, songs,
papers...); the benchmark pairs rows of A with candidate rows of B (already
blocked) and labels each pair a match or not. An instance is one pair written as
``Product A is <row A>. Product B is <row B>. Are A and B the same?`` (each row
``column: value`` joined by ``. ``, without the ``id``; values as pandas prints
them, see :mod:`holistic.scenarios.loading.tabular`), answered ``Yes`` or ``No``.

HELM's protocol: instructions ``Are Product A and Product B the same? Yes or No?``,
``Answer:``, five in-context examples, greedy decoding of up to 5 tokens, stopping at
a newline; exact-match family, ``quasi_exact_match`` main. The training pairs are
balanced as in HELM: all matches and as many non-matches (a fixed seeded subset;
HELM draws its subset from NumPy's global state, so its pool of examples differs).

Data: a dataset's ``exp_data`` files in the DeepMatcher release: ``tableA.csv`` and
``tableB.csv`` (``id`` then the attributes; the same columns in both) and
``train.csv``, ``valid.csv``, ``test.csv`` (``ltable_id``, ``rtable_id``,
``label`` 0/1), under ``entity_matching/<dataset>/``; fetched from the zip HELM
downloads (the University of Wisconsin host; not pinned, as the host could not be
reached to take sha256 sums).
"""

from __future__ import annotations

from dataclasses import dataclass

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import FileScenario, check_choice, hold_out
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData
from holistic.scenarios.loading.tabular import Table, read_table, serialise

_HOST = "http://pages.cs.wisc.edu/~anhai/data1/deepmatcher_data"
DATASETS: dict[str, str] = {
    "Beer": "Structured/Beer",
    "iTunes_Amazon": "Structured/iTunes-Amazon",
    "Fodors_Zagats": "Structured/Fodors-Zagats",
    "DBLP_ACM": "Structured/DBLP-ACM",
    "DBLP_GoogleScholar": "Structured/DBLP-GoogleScholar",
    "Amazon_Google": "Structured/Amazon-Google",
    "Walmart_Amazon": "Structured/Walmart-Amazon",
    "Abt_Buy": "Textual/Abt-Buy",
    "Company": "Textual/Company",
    "Dirty_iTunes_Amazon": "Dirty/iTunes-Amazon",
    "Dirty_DBLP_ACM": "Dirty/DBLP-ACM",
    "Dirty_DBLP_GoogleScholar": "Dirty/DBLP-GoogleScholar",
    "Dirty_Walmart_Amazon": "Dirty/Walmart-Amazon",
}
"""HELM's dataset names -> their folder in the DeepMatcher release."""
HELM_DATASETS = ("Beer", "Abt_Buy", "Dirty_iTunes_Amazon")
"""One structured, one textual and one dirty dataset, as HELM runs them."""
FILES = ("tableA.csv", "tableB.csv", "train.csv", "valid.csv", "test.csv")
SPLITS = (("train.csv", TRAIN_SPLIT), ("valid.csv", VALID_SPLIT), ("test.csv", TEST_SPLIT))


def _by_id(table: Table) -> dict[str, dict[str, str]]:
    table.column("id")
    out: dict[str, dict[str, str]] = {}
    for line, record in table.records():
        key = record["id"]
        if key in out:
            raise DataSourceError(f"{table.path}:{line}: id {key!r} appears twice")
        out[key] = record
    return out


def read_pairs(labels: Table, table_a: Table, table_b: Table, split: str, dataset: str) -> list[tuple[Instance, bool]]:
    """(instance, is a match) for every labelled pair of one split file, in file order."""
    rows_a, rows_b = _by_id(table_a), _by_id(table_b)
    columns_a = [c for c in table_a.columns if c != "id"]
    columns_b = [c for c in table_b.columns if c != "id"]
    for name in ("ltable_id", "rtable_id", "label"):
        labels.column(name)
    out = []
    for line, record in labels.records():
        where = f"{labels.path}:{line}"
        a, b = rows_a.get(record["ltable_id"]), rows_b.get(record["rtable_id"])
        if a is None or b is None:
            side, table = ("ltable_id", table_a) if a is None else ("rtable_id", table_b)
            raise DataSourceError(f"{where}: {side} {record[side]!r} is not an id of {table.path.name}")
        if record["label"] not in ("0", "1"):
            raise DataSourceError(f"{where}: label must be 0 or 1, got {record['label']!r}")
        match = record["label"] == "1"
        text = f"Product A is {serialise(a, columns_a)}. Product B is {serialise(b, columns_b)}. Are A and B the same?"
        out.append(
            (
                Instance(
                    id=f"{dataset}-{split}-{line}",
                    input=text,
                    references=(Reference("Yes" if match else "No", (CORRECT_TAG,)),),
                    split=split,
                    metadata={"dataset": dataset},
                ),
                match,
            )
        )
    return out


def balanced(pairs: list[tuple[Instance, bool]], purpose: str) -> list[Instance]:
    """Every match and a seeded subset of as many non-matches, in file order (HELM's training pool)."""
    matches = [i for i, m in pairs if m]
    others = [i.id for i, m in pairs if not m]
    if len(matches) >= len(others):
        return [i for i, _ in pairs]
    kept = hold_out(others, len(matches), purpose)
    return [i for i, m in pairs if m or i.id in kept]


@dataclass(frozen=True, kw_only=True)
class EntityMatchingScenario(FileScenario):
    """Do two table rows describe the same entity? (Yes / No)"""

    notes_missing_files = True
    info = ScenarioInfo(
        name="entity_matching",
        description="Entity matching (Magellan/DeepMatcher): are two product rows the same entity? Yes or No.",
        task="classification",
        default_adapter=prompt_format(
            instructions="Are Product A and Product B the same? Yes or No?",
            output_prefix="Answer: ",
            max_tokens=5,
        ),
        main_metric="quasi_exact_match",
        **CLASSIFICATION,
        tags=("structured_data", "reasoning", "targeted:reasoning"),
    )

    dataset: str = arg(enum=tuple(DATASETS))

    def __post_init__(self) -> None:
        check_choice(self.dataset, list(DATASETS), "entity matching dataset")

    def data_needs(self) -> DataNeeds:
        folder = DATASETS[self.dataset]
        url = f"{_HOST}/{folder}/{self.dataset.lower()}_exp_data.zip"
        files = tuple(
            DataFile(
                f"{self.dataset}/{name}",
                downloads=(Download(url, member=f"exp_data/{name}"), Download(url, member=name)),
            )
            for name in FILES
        )
        return DataNeeds("entity_matching", layouts=(files,), hint=f"{_HOST}/{folder}/exp_data/ ({', '.join(FILES)})")

    def load(self, data: ResolvedData) -> list[Instance]:
        table_a = read_table(data[f"{self.dataset}/tableA.csv"])
        table_b = read_table(data[f"{self.dataset}/tableB.csv"])
        out: list[Instance] = []
        for name, split in SPLITS:
            pairs = read_pairs(read_table(data[f"{self.dataset}/{name}"]), table_a, table_b, split, self.dataset)
            if split == TRAIN_SPLIT:
                out.extend(balanced(pairs, f"entity_matching-{self.dataset}-train"))
            else:
                out.extend(i for i, _ in pairs)
        return out
