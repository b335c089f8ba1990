"""IMDB movie-review sentiment (Maas et al., 2011).

The test reviews are HELM's ``valid`` split (HELM evaluates on it under that name).
Two formats are read:

- the official ``aclImdb/`` tree: ``{train,test}/{pos,neg}/<id>_<rating>.txt``, one
  review per file, read as HELM reads it (stripped, ``<br />`` tags kept; per split the
  positive reviews, then the negative ones, each in file-number order, where HELM takes
  the file system's listing order);
- labelled-lines files, one review per line as ``<0|1> <review>`` (1 = positive):
  ``train.txt`` + ``test.txt``, or a single test file ``imdb_1000.txt``. With a
  single file, a fixed seeded set of 50 reviews becomes the in-context example pool;
- the Hugging Face copy ``stanfordnlp/imdb``:
  ``hf/plain_text/{train,test}-00000-of-00001.parquet`` with columns ``text`` (raw,
  with ``<br />``) and ``label`` (1 = positive). The copy keeps neither the file
  ids nor the star ratings, so ids are ``<split>-<neg|pos>-r<row>`` (row number in
  the Parquet file) and there is no ``rating`` metadata; inputs, references and
  splits are as from the ``aclImdb/`` tree. The ``hf_revision`` arg (default
  ``main``, not pinned) should be pinned to a commit of that repo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import CLASSIFICATION_F1
from holistic.scenarios.loading.common import with_train_pool
from holistic.scenarios.loading.hf_copy import HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import open_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_ARCHIVE = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
_ARCHIVE_SHA256 = "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe"
"""The archive's sha256 (84,125,825 bytes) as TensorFlow Datasets records it for ``imdb_reviews``."""
_POOL_FROM_TEST = 50
_FILE_RE = re.compile(r"^(\d+)_(\d+)\.txt$")
_HUB = HubCopy("stanfordnlp/imdb")
_HF_FILES = (
    (TRAIN_SPLIT, "plain_text/train-00000-of-00001.parquet"),
    (VALID_SPLIT, "plain_text/test-00000-of-00001.parquet"),
)


def _review_text(raw: str) -> str:
    return raw.strip()


def _references(positive: bool) -> tuple[Reference, ...]:
    return (
        Reference("Positive", (CORRECT_TAG,) if positive else ()),
        Reference("Negative", () if positive else (CORRECT_TAG,)),
    )


def _read_tree(folder: Path, split: str) -> list[Instance]:
    out = []
    for polarity in ("pos", "neg"):  # HELM's order
        sub = folder / polarity
        if not sub.is_dir():
            raise DataSourceError(f"{sub}: missing (the aclImdb layout has {folder.name}/pos and {folder.name}/neg)")
        files = []
        for path in sub.iterdir():
            match = _FILE_RE.match(path.name)
            if match:
                files.append((int(match.group(1)), int(match.group(2)), path))
        for file_id, rating, path in sorted(files):
            text = _review_text(path.read_text(encoding="utf-8"))
            out.append(
                Instance(
                    id=f"{split}-{polarity}-{file_id}",
                    input=text,
                    references=_references(polarity == "pos"),
                    split=split,
                    metadata={"rating": rating},
                )
            )
    return out


def _read_lines(path: Path, split: str) -> list[Instance]:
    out = []
    with open_text(path) as fh:
        for number, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            label, _, text = line.partition(" ")
            if label not in ("0", "1") or not text.strip():
                raise DataSourceError(f"{path}:{number}: expected '<0|1> <review>', got {line[:40]!r}")
            out.append(
                Instance(
                    id=f"{path.stem}-{number:05d}",
                    input=text.strip(),
                    references=_references(label == "1"),
                    split=split,
                )
            )
    return out


def _read_hf(path: Path, split: str) -> list[Instance]:
    out = []
    for index, row in enumerate(read_parquet_rows(path, ("text", "label"))):
        label = row["label"]
        if label not in (0, 1):
            raise DataSourceError(f"{row_where(path, index)}: label {label!r} is neither 1 (positive) nor 0 (negative)")
        polarity = "pos" if label == 1 else "neg"
        out.append(
            Instance(
                id=f"{split}-{polarity}-r{index}",
                input=_review_text(str(row["text"])),
                references=_references(label == 1),
                split=split,
            )
        )
    return out


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    ACL_IMDB = 0
    """The authors' ``aclImdb/`` tree."""
    TEXT_SPLITS = 1
    """One-review-per-line ``train.txt`` / ``test.txt``."""
    SAMPLE_1000 = 2
    """HELM's 1,000-review sample ``imdb_1000.txt``."""
    HUB_COPY = 3
    """The Hugging Face Parquet copy."""


@dataclass(frozen=True, kw_only=True)
class IMDBScenario(HubFallbackScenario):
    """Binary sentiment of movie reviews."""

    samples_prompts = True

    info = ScenarioInfo(
        name="imdb",
        description="IMDB: is a movie review positive or negative (sentiment analysis).",
        default_adapter=prompt_format(
            input_prefix="Passage: ",
            output_prefix="Sentiment: ",
            max_tokens=5,
        ),
        main_metric="quasi_exact_match",
        **CLASSIFICATION_F1,
        tags=("sentiment_analysis", "classification", "core"),
    )
    num_instances = 25000
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "imdb",
            layouts=(
                (
                    DataFile(
                        "aclImdb/train",
                        downloads=(Download(_ARCHIVE, sha256=_ARCHIVE_SHA256, member="aclImdb/train/"),),
                        is_dir=True,
                    ),
                    DataFile(
                        "aclImdb/test",
                        downloads=(Download(_ARCHIVE, sha256=_ARCHIVE_SHA256, member="aclImdb/test/"),),
                        is_dir=True,
                    ),
                ),
                (DataFile("train.txt"), DataFile("test.txt")),
                (DataFile("imdb_1000.txt"),),
                _HUB.layout(self.hf_revision, [p for _, p in _HF_FILES]),
            ),
            hint=f"{_ARCHIVE}; {_HUB.hint}",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == _Layout.ACL_IMDB:
            return _read_tree(data["aclImdb/train"], TRAIN_SPLIT) + _read_tree(data["aclImdb/test"], VALID_SPLIT)
        if data.layout == _Layout.HUB_COPY:
            return [inst for split, p in _HF_FILES for inst in _read_hf(data[f"hf/{p}"], split)]
        if data.layout == _Layout.TEXT_SPLITS:
            return _read_lines(data["train.txt"], TRAIN_SPLIT) + _read_lines(data["test.txt"], VALID_SPLIT)
        test = _read_lines(data["imdb_1000.txt"], VALID_SPLIT)
        return with_train_pool(test, _POOL_FROM_TEST, "imdb-train-pool")
