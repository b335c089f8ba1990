"""The Pile (Gao et al., 2020): language modelling by bits per byte, one run per subset.

As HELM's ``the_pile``: the documents of the Pile's test set whose
``meta.pile_set_name`` is the chosen subset, in file order, then — for every subset
but Ubuntu IRC, BookCorpus2 and PhilPapers — only those at the indices of
EleutherAI's ``lm_perplexity`` subsample (``test_subsample_indices/<short>/group0.json``,
a JSON list of positions in the subset's document list). Each document is one
instance scored in rolling windows (``language_modeling``); ``bits_per_byte`` is the
main metric.

Data (the user's copy; the Pile's licence terms vary by component and it is no longer
distributed by its authors): ``the_pile/test.jsonl`` (or ``test.jsonl.gz``), the
released test file decompressed from ``test.jsonl.zst``, one object per line
``{"text": "...", "meta": {"pile_set_name": "ArXiv"}}``. The subsample indices are
read from ``the_pile/test_subsample_indices/<short>/group0.json`` when present, else
downloaded from ``EleutherAI/lm_perplexity`` at a pinned commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import TEST_SPLIT, Instance
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import bits_per_byte
from holistic.scenarios.loading.common import FileScenario, check_choice, github_raw
from holistic.scenarios.loading.part_files import user_copy_note
from holistic.scenarios.loading.readers import iter_numbered_jsonl, read_json
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, resolve

FOLDER = "the_pile"
_LM_PERPLEXITY = ("EleutherAI/lm_perplexity", "297996d2d041e5b6d3a3770b88b7d02ab3e37cf9")

# Subset name (``meta.pile_set_name``) -> the short name of its lm_perplexity subsample folder.
SUBSETS: dict[str, str] = {
    "ArXiv": "arxiv",
    "BookCorpus2": "bookcorpus",
    "Books3": "bibliotik",
    "DM Mathematics": "dm-mathematics",
    "Enron Emails": "enron",
    "EuroParl": "europarl",
    "FreeLaw": "freelaw",
    "Github": "github",
    "Gutenberg (PG-19)": "gutenberg",
    "HackerNews": "hackernews",
    "NIH ExPorter": "nih-exporter",
    "OpenSubtitles": "opensubtitles",
    "OpenWebText2": "openwebtext2",
    "PhilPapers": "philpapers",
    "Pile-CC": "commoncrawl",
    "PubMed Abstracts": "pubmed-abstracts",
    "PubMed Central": "pubmed-central",
    "StackExchange": "stackexchange",
    "USPTO Backgrounds": "uspto",
    "Ubuntu IRC": "ubuntu-irc",
    "Wikipedia (en)": "wikipedia",
    "YoutubeSubtitles": "youtubesubtitles",
}
UNSPLIT = frozenset({"ubuntu-irc", "bookcorpus", "philpapers"})
"""Subsets too small for lm_perplexity to subsample: every test document is used."""


def read_subset(path: Path, subset: str) -> list[tuple[int, str]]:
    """(line number, text) of every document of ``subset`` in the Pile file, in order."""
    out = []
    for number, row in iter_numbered_jsonl(path):
        meta = row.get("meta")
        text = row.get("text")
        if not isinstance(meta, dict) or not isinstance(meta.get("pile_set_name"), str) or not isinstance(text, str):
            raise DataSourceError(
                f"{path}:{number}: expected {{'text': str, 'meta': {{'pile_set_name': str}}}}; "
                f"fields present: {', '.join(sorted(row))}"
            )
        if meta["pile_set_name"] == subset:
            out.append((number, text))
    return out


def read_indices(path: Path, count: int) -> list[int]:
    """The sorted, distinct subsample positions in ``path``, each checked against ``count`` documents."""
    data = read_json(path)
    if not isinstance(data, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in data):
        raise DataSourceError(f"{path}: expected a JSON list of document positions")
    indices = sorted(set(data))
    bad = [i for i in indices if not 0 <= i < count]
    if bad:
        raise DataSourceError(f"{path}: position {bad[0]} is outside the subset's {count} documents")
    return indices


@dataclass(frozen=True, kw_only=True)
class ThePileScenario(FileScenario):
    """Bits per byte on one subset of the Pile's test set (HELM's subsample)."""

    info = ScenarioInfo(
        name="the_pile",
        description="The Pile: how well the model predicts documents of one of its 22 domains (bits per byte).",
        **bits_per_byte(robustness="HELM scores the documents unperturbed"),
        tags=("language_modeling", "targeted:language"),
        breakdowns=("subset",),
    )

    subset: str = arg(enum=tuple(sorted(SUBSETS)))

    def __post_init__(self) -> None:
        check_choice(self.subset, sorted(SUBSETS), "Pile subset")

    @property
    def short(self) -> str:
        return SUBSETS[self.subset]

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        note = user_copy_note(data_root, FOLDER, ("test.jsonl", "test.jsonl.gz"), "your copy of the Pile's test set")
        return PlanFacts(num_instances=1000, notes=(note,) if note else ())

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            FOLDER,
            layouts=((DataFile("test.jsonl"),), (DataFile("test.jsonl.gz"),)),
            hint="your copy of the Pile's test set, decompressed: zstd -d test.jsonl.zst (https://pile.eleuther.ai)",
        )

    def indices_needs(self) -> DataNeeds:
        path = f"test_subsample_indices/{self.short}/group0.json"
        repo, commit = _LM_PERPLEXITY
        url = github_raw(repo, commit, f"assets/{path}")
        return DataNeeds(FOLDER, layouts=((DataFile(path, downloads=(Download(url),)),),), hint=url)

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        data = resolve(self.data_needs(), ctx)
        (path,) = data.paths.values()
        documents = read_subset(path, self.subset)
        if not documents:
            raise DataSourceError(f"{path}: no document of subset {self.subset!r} (meta.pile_set_name)")
        if self.short not in UNSPLIT:
            (indices_path,) = resolve(self.indices_needs(), ctx).paths.values()
            documents = [documents[i] for i in read_indices(indices_path, len(documents))]
        return [
            Instance(
                id=f"{self.short}-{number}",
                input=text,
                split=TEST_SPLIT,
                metadata={"subset": self.subset, "line": number},
            )
            for number, text in documents
        ]
