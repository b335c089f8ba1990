"""XSum extreme summarization (Narayan et al., 2018): one-sentence BBC summaries, as HELM runs it.

Authors' format: ``bbc-summary-data/<id>.summary`` files with ``[SN]URL[SN]``,
``[SN]TITLE[SN]``, ``[SN]FIRST-SENTENCE[SN]`` (the summary) and ``[SN]RESTBODY[SN]``
(the article) sections, and the split file ``XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json``
(``{"train": [ids], "validation": [...], "test": [...]}``), read in its order. Each file
becomes the row of the ``EdinburghNLP/xsum`` conversion (the rows HELM's preprocessed
file holds: :func:`~holistic.scenarios.loading.news_summaries.xsum_row`), and the rows
HELM's instances (:mod:`holistic.scenarios.loading.news_summaries`): articles cut to 512
words, the training articles of 50 to 150 words that HELM's XSum filter keeps as the
in-context pool, validation and test evaluated. A listed id without a file is skipped
(the split file lists a few articles that could not be downloaded).

Hugging Face copy (used when the authors' files are absent): ``EdinburghNLP/xsum``
in the Hub's Parquet conversion (revision ``refs/convert/parquet``),
``hf/default/{train,validation,test}/0000.parquet`` with columns ``document``,
``summary`` and ``id`` (the BBC id): those rows are read as they are, in the copy's
order; it keeps no title or URL, so that metadata is empty. Only the first shard
(``0000``) of each split is read. The ``hf_revision`` arg defaults to that branch,
which is not pinned: pin a commit of it for reproducible runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from holistic.core.errors import DataSourceError
from holistic.core.types import Instance
from holistic.scenarios.loading.hf_copy import HF_PARQUET_BRANCH, AuthorsOrHub, HubCopy, read_parquet_rows
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.news_summaries import SPLITS, SummaryRow, helm_summary_instances, xsum_row
from holistic.scenarios.loading.prompt_format import news_summarization_info
from holistic.scenarios.loading.readers import read_json
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_SPLIT_FILE = "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json"
_SPLIT_URL = "https://raw.githubusercontent.com/EdinburghNLP/XSum/master/XSum-Dataset/" + _SPLIT_FILE
_DATA_URL = "http://bollin.inf.ed.ac.uk/public/direct/XSUM-EMNLP18-Summary-Data-Original.tar.gz"
_HUB = HubCopy("EdinburghNLP/xsum", HF_PARQUET_BRANCH)
_HF_FILES = {name: f"default/{name}/0000.parquet" for name, _ in SPLITS}


@dataclass(frozen=True, kw_only=True)
class XSumScenario(HubFallbackScenario):
    """Single-sentence news summarization."""

    info = news_summarization_info(
        "xsum",
        "XSum: summarize a BBC article in one sentence.",
        sentences=1,
        max_tokens=64,
    )
    num_instances = 11332 + 11334
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()

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
                _HUB.layout(self.hf_revision, list(_HF_FILES.values())),
            ),
            hint=f"https://github.com/EdinburghNLP/XSum; {_HUB.hint}",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        rows = self._hf_rows(data) if data.layout == AuthorsOrHub.HUB_COPY else self._summary_rows(data)
        return helm_summary_instances(rows, xsum_filter=True)

    def _summary_rows(self, data: ResolvedData) -> Iterator[tuple[str, SummaryRow]]:
        split_path = data[_SPLIT_FILE]
        splits = read_json(split_path)
        if not isinstance(splits, dict) or not all(isinstance(splits.get(name), list) for name, _ in SPLITS):
            raise DataSourceError(f"{split_path}: expected an object with 'train', 'validation' and 'test' id lists")
        folder = data["bbc-summary-data"]
        for name, split in SPLITS:
            for doc_id in (str(i) for i in splits[name]):
                path = folder / f"{doc_id}.summary"
                if path.is_file():
                    yield split, xsum_row(doc_id, path.read_text(encoding="utf-8"), str(path))

    def _hf_rows(self, data: ResolvedData) -> Iterator[tuple[str, SummaryRow]]:
        for name, split in SPLITS:
            for row in read_parquet_rows(data[f"hf/{_HF_FILES[name]}"], ("id", "document", "summary")):
                document, summary = str(row["document"] or ""), str(row["summary"] or "")
                yield split, SummaryRow(str(row["id"]), document, summary, {"title": "", "url": ""})
