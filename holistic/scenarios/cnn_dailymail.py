"""CNN/DailyMail summarization (Hermann et al., 2015; See et al., 2017 splits).

Authors' format: one ``.story`` file per article in ``cnn/stories/`` and
``dailymail/stories/``, named by the SHA-1 hex of the article URL; the article's
paragraphs come first, then each highlight after an ``@highlight`` line. The
splits are the URL lists ``url_lists/all_{train,val,test}.txt``. The reference
summary is the highlights joined into sentences. The test split is evaluated; a
fixed seeded set of 200 training articles is the in-context pool (reading all
287k would be slow and HELM uses five).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.categories import SUMMARIZATION_CATEGORIES, SUMMARIZATION_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario, hold_out
from holistic.scenarios.prompt_format import news_summary_format
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_URL_LISTS = "https://raw.githubusercontent.com/abisee/cnn-dailymail/master/url_lists/"
_STORIES = "https://huggingface.co/datasets/abisee/cnn_dailymail/resolve/main/data/"
_SPLITS = (("train", TRAIN_SPLIT), ("val", VALID_SPLIT), ("test", TEST_SPLIT))
_TRAIN_POOL = 200
_EVAL_SPLITS = ("test",)


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


def _story_path(folders: tuple[Path, Path], url: str) -> Path | None:
    name = hashlib.sha1(url.encode("utf-8")).hexdigest() + ".story"
    for folder in folders:
        if (folder / name).is_file():
            return folder / name
    return None


@SCENARIOS.register("cnn_dailymail")
class CNNDailyMailScenario(FileScenario):
    """Multi-sentence news summarization."""

    info = ScenarioInfo(
        name="cnn_dailymail",
        description="CNN/DailyMail: summarize a news article in a few sentences.",
        task="summarization",
        default_adapter=news_summary_format(sentences=3, max_tokens=128),
        main_metric="rouge_2",
        metric_categories=SUMMARIZATION_CATEGORIES,
        not_applicable_reasons=SUMMARIZATION_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("summarization", "core"),
    )
    num_instances = 11490

    def data_needs(self) -> DataNeeds:
        lists = tuple(
            DataFile(f"url_lists/all_{name}.txt", downloads=(Download(_URL_LISTS + f"all_{name}.txt"),))
            for name, _ in _SPLITS
        )
        stories = tuple(
            DataFile(f"{source}/stories", downloads=(Download(_STORIES + f"{source}_stories.tgz", member=f"{source}/stories/"),), is_dir=True)
            for source in ("cnn", "dailymail")
        )
        return DataNeeds("cnn_dailymail", layouts=((*lists, *stories),), hint="https://github.com/abisee/cnn-dailymail")

    def load(self, data: ResolvedData) -> list[Instance]:
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
                    raise DataSourceError(f"{list_path}: no story file for {url} (expected sha1(url).story in cnn/ or dailymail/stories)")
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
