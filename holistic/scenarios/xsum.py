"""XSum extreme summarization (Narayan et al., 2018): one-sentence BBC summaries.

Authors' format: ``bbc-summary-data/<id>.summary`` files with ``[SN]URL[SN]``,
``[SN]TITLE[SN]``, ``[SN]FIRST-SENTENCE[SN]`` (the summary) and ``[SN]RESTBODY[SN]``
(the article) sections, and the split file ``XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json``
(``{"train": [ids], "validation": [...], "test": [...]}``). The test split is
evaluated; a fixed seeded set of 200 training articles is the in-context pool.
"""

from __future__ import annotations

import re

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, Instance, Reference
from holistic.scenarios.categories import SUMMARIZATION_CATEGORIES, SUMMARIZATION_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario, hold_out
from holistic.scenarios.prompt_format import news_summary_format
from holistic.scenarios.readers import read_json
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_SPLIT_FILE = "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json"
_SPLIT_URL = "https://raw.githubusercontent.com/EdinburghNLP/XSum/master/XSum-Dataset/" + _SPLIT_FILE
_DATA_URL = "http://bollin.inf.ed.ac.uk/public/direct/XSUM-EMNLP18-Summary-Data-Original.tar.gz"
_TRAIN_POOL = 200
_SECTION = re.compile(r"^\[SN\](URL|TITLE|FIRST-SENTENCE|RESTBODY)\[SN\]\s*$", re.M)


def parse_summary_file(text: str) -> dict[str, str]:
    """The sections of a ``.summary`` file, by name."""
    parts = _SECTION.split(text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


@SCENARIOS.register("xsum")
class XSumScenario(FileScenario):
    """Single-sentence news summarization."""

    info = ScenarioInfo(
        name="xsum",
        description="XSum: summarize a BBC article in one sentence.",
        task="summarization",
        default_adapter=news_summary_format(sentences=1, max_tokens=64),
        main_metric="rouge_2",
        metric_categories=SUMMARIZATION_CATEGORIES,
        not_applicable_reasons=SUMMARIZATION_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("summarization", "core"),
    )
    num_instances = 11334

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "xsum",
            layouts=(
                (
                    DataFile(_SPLIT_FILE, downloads=(Download(_SPLIT_URL),)),
                    DataFile("bbc-summary-data", downloads=(Download(_DATA_URL, member="bbc-summary-data/"),), is_dir=True),
                ),
            ),
            hint="https://github.com/EdinburghNLP/XSum",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        split_path = data[_SPLIT_FILE]
        splits = read_json(split_path)
        if not isinstance(splits, dict) or not all(k in splits for k in ("train", "test")):
            raise DataSourceError(f"{split_path}: expected an object with 'train', 'validation' and 'test' id lists")
        folder = data["bbc-summary-data"]
        train_ids = [str(i) for i in splits["train"]]
        wanted = [(TRAIN_SPLIT, i) for i in sorted(hold_out(train_ids, min(_TRAIN_POOL, len(train_ids)), "xsum-train-pool"))]
        wanted += [(TEST_SPLIT, str(i)) for i in splits["test"]]
        instances = []
        for split, doc_id in wanted:
            path = folder / f"{doc_id}.summary"
            if not path.is_file():
                continue  # the split file lists a few ids whose article could not be downloaded
            sections = parse_summary_file(path.read_text(encoding="utf-8"))
            summary, body = sections.get("FIRST-SENTENCE", ""), sections.get("RESTBODY", "")
            if not summary or not body:
                continue
            instances.append(
                Instance(
                    id=doc_id,
                    input=body,
                    references=(Reference(summary, (CORRECT_TAG,)),),
                    split=split,
                    metadata={"title": sections.get("TITLE", ""), "url": sections.get("URL", "")},
                )
            )
        return instances
