"""XSum extreme summarization (Narayan et al., 2018): one-sentence BBC summaries.

Authors' format: ``bbc-summary-data/<id>.summary`` files with ``[SN]URL[SN]``,
``[SN]TITLE[SN]``, ``[SN]FIRST-SENTENCE[SN]`` (the summary) and ``[SN]RESTBODY[SN]``
(the article) sections, and the split file ``XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json``
(``{"train": [ids], "validation": [...], "test": [...]}``). The test split is
evaluated; a fixed seeded set of 200 training articles is the in-context pool.

Hugging Face copy (used when the authors' files are absent): ``EdinburghNLP/xsum``
in the Hub's Parquet conversion (revision ``refs/convert/parquet``),
``hf/default/{train,test}/0000.parquet`` with columns ``document`` (the article
body), ``summary`` and ``id`` (the BBC id, as in the authors' files). Ids, inputs,
references, splits and the training pool (chosen from the same ids with the same
seed) match the authors' files; the copy keeps no title or URL, so that metadata
is empty. Only the first train shard (``0000``) is read: if the conversion splits
the training set in several shards, the pool is chosen from the first. The
``hf_revision`` arg defaults to that branch, which is not pinned: pin a commit of
it for reproducible runs.
"""

from __future__ import annotations

import re

from holistic.core.errors import DataSourceError
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, Instance, Reference
from holistic.scenarios.loading.common import hold_out
from holistic.scenarios.loading.hf_copy import HF_PARQUET_BRANCH, AuthorsOrHub, HubCopy, read_parquet_rows
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import news_summarization_info
from holistic.scenarios.loading.readers import read_json
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_SPLIT_FILE = "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json"
_SPLIT_URL = "https://raw.githubusercontent.com/EdinburghNLP/XSum/master/XSum-Dataset/" + _SPLIT_FILE
_DATA_URL = "http://bollin.inf.ed.ac.uk/public/direct/XSUM-EMNLP18-Summary-Data-Original.tar.gz"
_TRAIN_POOL = 200
_HUB = HubCopy("EdinburghNLP/xsum", HF_PARQUET_BRANCH)
_HF_TRAIN = "default/train/0000.parquet"
_HF_TEST = "default/test/0000.parquet"
_SECTION = re.compile(r"^\[SN\](URL|TITLE|FIRST-SENTENCE|RESTBODY)\[SN\]\s*$", re.M)


def parse_summary_file(text: str) -> dict[str, str]:
    """The sections of a ``.summary`` file, by name."""
    parts = _SECTION.split(text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


class XSumScenario(HubFallbackScenario):
    """Single-sentence news summarization."""

    info = news_summarization_info(
        "xsum",
        "XSum: summarize a BBC article in one sentence.",
        sentences=1,
        max_tokens=64,
        args_schema=_HUB.args_schema(),
        helm_pickle="xsum.pk",
    )
    num_instances = 11334
    hub = _HUB

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "xsum",
            layouts=(
                (
                    DataFile(_SPLIT_FILE, downloads=(Download(_SPLIT_URL),)),
                    DataFile(
                        "bbc-summary-data", downloads=(Download(_DATA_URL, member="bbc-summary-data/"),), is_dir=True
                    ),
                ),
                _HUB.layout(self.hf_revision, [_HF_TRAIN, _HF_TEST]),
            ),
            hint=f"https://github.com/EdinburghNLP/XSum; {_HUB.hint}",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == AuthorsOrHub.HUB_COPY:
            return self._load_hf(data)
        split_path = data[_SPLIT_FILE]
        splits = read_json(split_path)
        if not isinstance(splits, dict) or not all(k in splits for k in ("train", "test")):
            raise DataSourceError(f"{split_path}: expected an object with 'train', 'validation' and 'test' id lists")
        folder = data["bbc-summary-data"]
        train_ids = [str(i) for i in splits["train"]]
        wanted = [
            (TRAIN_SPLIT, i) for i in sorted(hold_out(train_ids, min(_TRAIN_POOL, len(train_ids)), "xsum-train-pool"))
        ]
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

    def _load_hf(self, data: ResolvedData) -> list[Instance]:
        train_path, test_path = data[f"hf/{_HF_TRAIN}"], data[f"hf/{_HF_TEST}"]
        train_ids = [str(row["id"]) for row in read_parquet_rows(train_path, ("id",))]
        pool = hold_out(train_ids, min(_TRAIN_POOL, len(train_ids)), "xsum-train-pool")
        columns = ("id", "document", "summary")
        train_rows = sorted(read_parquet_rows(train_path, columns, only=("id", pool)), key=lambda r: str(r["id"]))
        instances = []
        for split, rows in ((TRAIN_SPLIT, train_rows), (TEST_SPLIT, read_parquet_rows(test_path, columns))):
            for row in rows:
                summary, body = str(row["summary"] or "").strip(), str(row["document"] or "").strip()
                if not summary or not body:
                    continue
                instances.append(
                    Instance(
                        id=str(row["id"]),
                        input=body,
                        references=(Reference(summary, (CORRECT_TAG,)),),
                        split=split,
                        metadata={"title": "", "url": ""},
                    )
                )
        return instances
