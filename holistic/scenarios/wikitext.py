"""WikiText (Merity et al., 2016): language modelling on Wikipedia articles, by bits per byte.

HELM's ``wikitext_103`` reads the test file of the tokenised release and makes one
instance per article: an article starts at a title line ``= Title =`` (one ``=`` on
each side) between two empty lines, and runs to the next one. The model scores each
article in rolling windows (``language_modeling``); ``bits_per_byte`` is the main
metric (also perplexity and logprob per token, in the model's own tokens).

``version`` picks WikiText-103 (HELM's; ``wikitext103/wiki.test.tokens``) or
WikiText-2 (``wikitext2/wiki.test.tokens``, or ``wikitext2/test.txt`` as in
``pytorch/examples``). Both share the same test articles' format, with ``<unk>`` and
`` @-@ `` kept as released (CC BY-SA 3.0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, Instance
from holistic.scenarios.loading.categories import bits_per_byte
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.readers import open_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_TITLE = re.compile(r"^ = [^=].*[^=] = $")
_ZIP_103 = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip"
_ZIP_2 = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-2-v1.zip"
_PYTORCH_EXAMPLES = ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8")


def split_articles(lines: list[str]) -> list[str]:
    """The articles of a WikiText test file, each with its title block (HELM's rule)."""
    articles: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(lines):
        if (
            i + 2 < len(lines)
            and lines[i].strip() == ""
            and lines[i + 2].strip() == ""
            and _TITLE.match(lines[i + 1].rstrip("\n"))
        ):
            if current:
                articles.append("".join(current))
            current = lines[i : i + 3]
            i += 3
        else:
            current.append(lines[i])
            i += 1
    if current:
        articles.append("".join(current))
    return [a for a in articles if a.strip()]


def read_articles(path: Path, prefix: str) -> list[Instance]:
    with open_text(path) as fh:
        lines = fh.readlines()
    out = []
    for index, text in enumerate(split_articles(lines)):
        title = next((ln.strip().strip("= ").strip() for ln in text.splitlines() if ln.strip()), "")
        out.append(Instance(id=f"{prefix}-{index:03d}", input=text, split=TEST_SPLIT, metadata={"title": title}))
    return out


@dataclass(frozen=True, kw_only=True)
class WikiTextScenario(FileScenario):
    """Bits per byte on Wikipedia articles (WikiText-103 or WikiText-2 test set)."""

    info = ScenarioInfo(
        name="wikitext",
        description="WikiText: how well the model predicts Wikipedia articles (bits per byte).",
        **bits_per_byte(robustness="HELM scores the released text unperturbed"),
        tags=("language_modeling", "targeted:language"),
    )
    num_instances = 60

    version: Literal[103, 2] = 103

    def __post_init__(self) -> None:
        if self.version not in (103, 2):
            raise ValueError(f"WikiText version must be 103 or 2, not {self.version!r}")

    @property
    def folder(self) -> str:
        return f"wikitext{self.version}"

    def data_needs(self) -> DataNeeds:
        zip_url, member = (
            (_ZIP_103, "wikitext-103/wiki.test.tokens")
            if self.version == 103
            else (_ZIP_2, "wikitext-2/wiki.test.tokens")
        )
        layouts: list[tuple[DataFile, ...]] = [
            (DataFile("wiki.test.tokens", downloads=(Download(zip_url, member=member),)),)
        ]
        if self.version == 2:
            repo, commit = _PYTORCH_EXAMPLES
            copy = github_file(
                "wikitext", "wikitext-2/test.txt", repo, commit, "word_language_model/data/wikitext-2/test.txt"
            )
            layouts.insert(0, (DataFile("test.txt", downloads=copy.downloads, sha256=copy.sha256),))
        return DataNeeds(
            self.folder,
            layouts=tuple(layouts),
            hint="https://blog.salesforceresearch.com/the-wikitext-long-term-dependency-language-modeling-dataset/",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        (path,) = data.paths.values()
        return read_articles(path, self.folder)
