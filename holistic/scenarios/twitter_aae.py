"""TwitterAAE (Blodgett et al., 2016): language modelling of tweets by dialect group.

As HELM's ``twitter_aae``: the tweets most strongly aligned with African-American
English (``aa``) or with white-aligned English (``white``), 50,000 of each, one
instance per tweet, scored for bits per byte (``language_modeling``). HELM compares
the two groups' bits per byte; ``demographic: all`` scores both in one run and reports
every value per group too (``demographic=aa``, ``demographic=white``), pooled within
the group like the overall value.

Data (the user's copy; tweets are under Twitter's terms and are not redistributed):
HELM's files ``twitter_aae/aa_tweets.csv`` and ``twitter_aae/white_tweets.csv``, CSV
without a header, the tweet text in the first column (quoted when it holds commas,
quotes or newlines).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, Instance
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import bits_per_byte
from holistic.scenarios.loading.common import FileScenario, check_choice
from holistic.scenarios.loading.part_files import user_copy_note
from holistic.scenarios.loading.readers import open_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, ResolvedData

FOLDER = "twitter_aae"
DEMOGRAPHICS: tuple[str, ...] = ("aa", "white")
ALL = "all"


def file_name(demographic: str) -> str:
    return f"{demographic}_tweets.csv"


def read_tweets(path: Path, demographic: str) -> list[Instance]:
    """One instance per CSV row (the first column); an empty or unreadable row names its line."""
    import csv

    out: list[Instance] = []
    try:
        with open_text(path) as fh:
            reader = csv.reader(fh)
            for row in reader:
                line = reader.line_num
                if not row or not row[0].strip():
                    raise DataSourceError(f"{path}:{line}: empty row (expected the tweet in the first column)")
                out.append(
                    Instance(
                        id=f"{demographic}-{len(out)}",
                        input=row[0],
                        split=TEST_SPLIT,
                        metadata={"demographic": demographic},
                    )
                )
    except (csv.Error, UnicodeDecodeError) as exc:
        raise DataSourceError(f"{path}: cannot read as CSV: {exc}") from None
    return out


@dataclass(frozen=True, kw_only=True)
class TwitterAAEScenario(FileScenario):
    """Bits per byte on African-American-aligned and white-aligned tweets."""

    info = ScenarioInfo(
        name="twitter_aae",
        description="TwitterAAE: how well the model predicts tweets of each dialect group (bits per byte).",
        **bits_per_byte(
            robustness="HELM scores the tweets unperturbed",
            fairness="the comparison between dialect groups is the measurement itself (see the per-group rows)",
        ),
        tags=("language_modeling", "dialect", "targeted:language"),
        breakdowns=("demographic",),
    )

    demographic: str = arg(ALL, enum=(*DEMOGRAPHICS, ALL))

    def __post_init__(self) -> None:
        check_choice(self.demographic, [*DEMOGRAPHICS, ALL], "TwitterAAE demographic")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        groups = self._groups()
        missing = [
            file_name(d) for d in groups if user_copy_note(data_root, FOLDER, (file_name(d),), "tweets") is not None
        ]
        note = user_copy_note(data_root, FOLDER, tuple(missing), "your copy of HELM's tweets") if missing else None
        return PlanFacts(num_instances=50_000 * len(groups), notes=(note,) if note else ())

    def _groups(self) -> list[str]:
        return list(DEMOGRAPHICS) if self.demographic == ALL else [self.demographic]

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            FOLDER,
            layouts=(tuple(DataFile(file_name(d)) for d in self._groups()),),
            hint="your copy of HELM's TwitterAAE test files (aa_tweets.csv, white_tweets.csv); "
            "corpus: http://slanglab.cs.umass.edu/TwitterAAE/",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        return [inst for d in self._groups() for inst in read_tweets(data[file_name(d)], d)]
