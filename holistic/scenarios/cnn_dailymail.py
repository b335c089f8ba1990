"""CNN/DailyMail summarization (Hermann et al., 2015; See et al., 2017 splits).

Authors' format: one ``.story`` file per article in ``cnn/stories/`` and
``dailymail/stories/``, named by the SHA-1 hex of the article URL; the article's
paragraphs come first, then each highlight after an ``@highlight`` line. The
splits are the URL lists ``url_lists/all_{train,val,test}.txt``. The reference
summary is the highlights joined into sentences. The test split is evaluated; a
fixed seeded set of 200 training articles is the in-context pool (reading all
287k would be slow and HELM uses five).

Hugging Face copy (used when the authors' files are absent): ``abisee/cnn_dailymail``,
configuration ``3.0.0``: ``hf/3.0.0/train-0000{0,1,2}-of-00003.parquet`` and
``hf/3.0.0/test-00000-of-00001.parquet`` with columns ``article``, ``highlights``
(one per line, a missing final period added as `` .``) and ``id`` (the same
sha1-of-URL as the story file name, so ids match). Differences by nature: the
copy joins an article's paragraphs with spaces (not newlines) and appends `` .``
to paragraphs without final punctuation, so inputs differ in that whitespace; the
reference is rebuilt as from the story (`` .`` becomes ``.``); the copy keeps no
URLs, so there is no ``url``/``source`` metadata and the 200-article training pool
is a seeded choice over ids rather than URLs (a different 200). The ``hf_revision``
arg (default ``main``, not pinned) should be pinned to a commit of that repo.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.common import hold_out
from holistic.scenarios.loading.hf_copy import AuthorsOrHub, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import news_summarization_info
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_URL_LISTS = "https://raw.githubusercontent.com/abisee/cnn-dailymail/master/url_lists/"
_STORIES = "https://huggingface.co/datasets/abisee/cnn_dailymail/resolve/main/data/"
_SPLITS = (("train", TRAIN_SPLIT), ("val", VALID_SPLIT), ("test", TEST_SPLIT))
_TRAIN_POOL = 200
_EVAL_SPLITS = ("test",)
_HUB = HubCopy("abisee/cnn_dailymail")
_HF_TRAIN = tuple(f"3.0.0/train-{i:05d}-of-00003.parquet" for i in range(3))
_HF_TEST = "3.0.0/test-00000-of-00001.parquet"


def parse_story(text: str) -> tuple[str, list[str]]:
    """(article, highlights) of a ``.story`` file."""
    article: list[str] = []
    highlights: list[str] = []
    next_is_highlight = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "@highlight":
            next_is_highlight = True
        elif next_is_highlight:
            highlights.append(line if line[-1] in ".!?'\"" else line + ".")
            next_is_highlight = False
        else:
            article.append(line)
    return "\n".join(article), highlights


def hf_highlights(text: str) -> str:
    """The reference summary from the copy's ``highlights`` (as :func:`parse_story` would give it)."""
    sentences = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.endswith(" ."):
            line = line[:-2].rstrip() + "."
        sentences.append(line if line[-1] in ".!?'\"" else line + ".")
    return " ".join(sentences)


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


class CNNDailyMailScenario(HubFallbackScenario):
    """Multi-sentence news summarization."""

    info = news_summarization_info(
        "cnn_dailymail",
        "CNN/DailyMail: summarize a news article in a few sentences.",
        sentences=3,
        max_tokens=128,
        args_schema=_HUB.args_schema(),
        helm_pickle="cnndm.pk",
    )
    num_instances = 11490
    hub = _HUB

    def data_needs(self) -> DataNeeds:
        lists = tuple(
            DataFile(f"url_lists/all_{name}.txt", downloads=(Download(_URL_LISTS + f"all_{name}.txt"),))
            for name, _ in _SPLITS
        )
        stories = tuple(
            DataFile(
                f"{source}/stories",
                downloads=(Download(_STORIES + f"{source}_stories.tgz", member=f"{source}/stories/"),),
                is_dir=True,
            )
            for source in ("cnn", "dailymail")
        )
        return DataNeeds(
            "cnn_dailymail",
            layouts=((*lists, *stories), _HUB.layout(self.hf_revision, [*_HF_TRAIN, _HF_TEST])),
            hint=f"https://github.com/abisee/cnn-dailymail; {_HUB.hint}",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == AuthorsOrHub.HUB_COPY:
            return self._load_hf(data)
        folders = (data["cnn/stories"], data["dailymail/stories"])
        instances: list[Instance] = []
        for name, split in _SPLITS:
            list_path = data[f"url_lists/all_{name}.txt"]
            urls = [u.strip() for u in list_path.read_text(encoding="utf-8").splitlines() if u.strip()]
            if name == "train":
                pool = hold_out(urls, min(_TRAIN_POOL, len(urls)), "cnn_dailymail-train-pool")
                urls = [u for u in urls if u in pool]
            elif name not in _EVAL_SPLITS:
                continue
            for url in urls:
                path = _story_path(folders, url)
                if path is None:
                    raise DataSourceError(
                        f"{list_path}: no story file for {url} (expected sha1(url).story in cnn/ or dailymail/stories)"
                    )
                article, highlights = parse_story(path.read_text(encoding="utf-8"))
                if not article or not highlights:
                    continue
                instances.append(
                    Instance(
                        id=path.stem,
                        input=article,
                        references=(Reference(" ".join(highlights), (CORRECT_TAG,)),),
                        split=split,
                        metadata={"source": path.parent.parent.name, "url": url},
                    )
                )
        return instances

    def _load_hf(self, data: ResolvedData) -> list[Instance]:
        train_paths = [data[f"hf/{p}"] for p in _HF_TRAIN]
        train_ids = [
            _hf_id(row, path, n) for path in train_paths for n, row in enumerate(read_parquet_rows(path, ("id",)))
        ]
        pool = hold_out(train_ids, min(_TRAIN_POOL, len(train_ids)), "cnn_dailymail-hf-train-pool")
        wanted = [(TRAIN_SPLIT, path, pool) for path in train_paths] + [(TEST_SPLIT, data[f"hf/{_HF_TEST}"], None)]
        instances: list[Instance] = []
        for split, path, only in wanted:
            columns = ("id", "article", "highlights")
            rows = (
                read_parquet_rows(path, columns)
                if only is None
                else read_parquet_rows(path, columns, only=("id", only))
            )
            for index, row in enumerate(rows):
                instance_id = _hf_id(row, path, index)
                article, highlights = str(row["article"] or "").strip(), hf_highlights(str(row["highlights"] or ""))
                if not article or not highlights:
                    continue
                instances.append(
                    Instance(
                        id=instance_id,
                        input=article,
                        references=(Reference(highlights, (CORRECT_TAG,)),),
                        split=split,
                    )
                )
        return instances
