"""CNN/DailyMail summarization (Hermann et al., 2015; See et al., 2017 splits), as HELM runs it.

Authors' format: one ``.story`` file per article in ``cnn/stories/`` and
``dailymail/stories/``, named by the SHA-1 hex of the article URL; the article's
paragraphs come first, then each highlight after an ``@highlight`` line. The
splits are the URL lists ``url_lists/all_{train,val,test}.txt``. Each story becomes
the row of the ``abisee/cnn_dailymail`` 3.0.0 conversion (the rows HELM's preprocessed
file holds: :func:`~holistic.scenarios.loading.news_summaries.cnn_dailymail_row`), and
the rows HELM's instances (:mod:`holistic.scenarios.loading.news_summaries`): articles cut
to 512 words, the training articles of 50 to 150 words as the in-context pool (every
training story is read to find them), validation and test evaluated. Ids are the story
file names.

Hugging Face copy (used when the authors' files are absent): ``abisee/cnn_dailymail``,
configuration ``3.0.0``: ``hf/3.0.0/train-0000{0,1,2}-of-00003.parquet``,
``hf/3.0.0/validation-00000-of-00001.parquet`` and ``hf/3.0.0/test-00000-of-00001.parquet``
with columns ``article``, ``highlights`` and ``id`` (the same sha1-of-URL as the story
file name): those rows are read as they are, so the instances are the authors' files'
(the copy keeps no URLs, so there is no ``url``/``source`` metadata). The
``hf_revision`` arg (default ``main``, not pinned) should be pinned to a commit of that repo.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.types import Instance
from holistic.scenarios.loading.hf_copy import AuthorsOrHub, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.news_summaries import SPLITS, SummaryRow, cnn_dailymail_row, helm_summary_instances
from holistic.scenarios.loading.prompt_format import news_summarization_info
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_URL_LISTS = "https://raw.githubusercontent.com/abisee/cnn-dailymail/master/url_lists/"
_STORIES = "https://huggingface.co/datasets/abisee/cnn_dailymail/resolve/main/data/"
_LISTS = {"train": "train", "validation": "val", "test": "test"}
"""The rows' split -> its URL list (``url_lists/all_<name>.txt``)."""
_HUB = HubCopy("abisee/cnn_dailymail")
_HF_FILES = {
    "train": tuple(f"3.0.0/train-{i:05d}-of-00003.parquet" for i in range(3)),
    "validation": ("3.0.0/validation-00000-of-00001.parquet",),
    "test": ("3.0.0/test-00000-of-00001.parquet",),
}


def _hf_id(row: dict[str, object], path: Path, index: int) -> str:
    """The row's id (the story's sha1 name); row numbers in errors count rows as read."""
    if not row.get("id"):
        raise DataSourceError(f"{row_where(path, index)}: empty 'id'")
    return str(row["id"])


def _story_path(folders: tuple[Path, Path], url: str) -> Path | None:
    name = hashlib.sha1(url.encode("utf-8")).hexdigest() + ".story"
    for folder in folders:
        if (folder / name).is_file():
            return folder / name
    return None


@dataclass(frozen=True, kw_only=True)
class CNNDailyMailScenario(HubFallbackScenario):
    """Multi-sentence news summarization."""

    info = news_summarization_info(
        "cnn_dailymail",
        "CNN/DailyMail: summarize a news article in a few sentences.",
        sentences=3,
        max_tokens=128,
    )
    num_instances = 13368 + 11490
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()

    def data_needs(self) -> DataNeeds:
        lists = tuple(
            DataFile(f"url_lists/all_{name}.txt", downloads=(Download(_URL_LISTS + f"all_{name}.txt"),))
            for name in _LISTS.values()
        )
        stories = tuple(
            DataFile(
                f"{source}/stories",
                downloads=(Download(_STORIES + f"{source}_stories.tgz", member=f"{source}/stories/"),),
                is_dir=True,
            )
            for source in ("cnn", "dailymail")
        )
        hf_files = [p for paths in _HF_FILES.values() for p in paths]
        return DataNeeds(
            "cnn_dailymail",
            layouts=((*lists, *stories), _HUB.layout(self.hf_revision, hf_files)),
            hint=f"https://github.com/abisee/cnn-dailymail; {_HUB.hint}",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == AuthorsOrHub.HUB_COPY:
            return helm_summary_instances(self._hf_rows(data))
        return helm_summary_instances(self._story_rows(data))

    def _story_rows(self, data: ResolvedData) -> Iterator[tuple[str, SummaryRow]]:
        """The rows, one story at a time (every training story is read; few are kept)."""
        folders = (data["cnn/stories"], data["dailymail/stories"])
        for name, split in SPLITS:
            list_path = data[f"url_lists/all_{_LISTS[name]}.txt"]
            urls = [u.strip() for u in list_path.read_text(encoding="utf-8").splitlines() if u.strip()]
            for url in urls:
                path = _story_path(folders, url)
                if path is None:
                    raise DataSourceError(
                        f"{list_path}: no story file for {url} (expected sha1(url).story in cnn/ or dailymail/stories)"
                    )
                metadata = {"source": path.parent.parent.name, "url": url}
                yield split, cnn_dailymail_row(path.stem, path.read_text(encoding="utf-8"), metadata)

    def _hf_rows(self, data: ResolvedData) -> Iterator[tuple[str, SummaryRow]]:
        for name, split in SPLITS:
            for path in (data[f"hf/{p}"] for p in _HF_FILES[name]):
                for index, row in enumerate(read_parquet_rows(path, ("id", "article", "highlights"))):
                    article, highlights = str(row["article"] or ""), str(row["highlights"] or "")
                    yield split, SummaryRow(_hf_id(row, path, index), article, highlights)
