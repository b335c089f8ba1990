"""NLTK's word_tokenize, offline, from the Punkt data shipped with holistic."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import NoReturn

import pytest

from holistic.metrics.tokenize import PUNKT_DIR, sent_tokenize, word_tokenize
from tests.support.data import find_data_root

REPO = Path(__file__).resolve().parents[2]
DIGESTS = {
    "abbrev_types.txt": "92a3e070f43d9b4c5534758ca40ad7343b04e7e29bfe0c2eb658a39445a4f779",
    "collocations.tab": "8e2da1225e4dd2cc9dba261ee231ccb134859e21b46006e7f472c5ee269af0cf",
    "ortho_context.tab": "4bbcca25ed3d3f06c02402abf8419b9f033b8adc06e7b482eca4e45f81a5dc4c",
    "sent_starters.txt": "f3f8535483e1dba487241b764945168123bca3209a9645e59acd1225dc76edac",
}


def _punkt_folder() -> Path:
    return Path(str(resources.files("holistic.metrics").joinpath(*PUNKT_DIR)))


def test_shipped_punkt_files_are_the_recorded_ones() -> None:
    for name, digest in DIGESTS.items():
        assert hashlib.sha256((_punkt_folder() / name).read_bytes()).hexdigest() == digest, name


def test_word_tokenize_splits_clitics_and_sentence_final_periods_without_network(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import nltk

    def no_download(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("tokenizing must not download anything")

    monkeypatch.setattr(nltk, "download", no_download)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # no user NLTK data either
    assert word_tokenize("She's here. He isn't, Dr. Smith said.") == [
        "She",
        "'s",
        "here",
        ".",
        "He",
        "is",
        "n't",
        ",",
        "Dr.",
        "Smith",
        "said",
        ".",
    ]
    assert sent_tokenize("Mr. Brown left. It rained.") == ["Mr. Brown left.", "It rained."]


def _real_texts() -> list[str]:
    manual = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "design").glob("*.md"))]
    texts = [p.read_text(encoding="utf-8") for p in manual]
    root = find_data_root()
    files = (
        [
            p
            for p in sorted(root.rglob("*"))
            if p.suffix in (".txt", ".md", ".csv", ".tsv", ".jsonl", ".json") and p.is_file()
        ]
        if root is not None
        else []
    )
    for path in files[:80]:  # a sample of every benchmark's own text, kept small enough to run in seconds
        with path.open(encoding="utf-8", errors="replace") as handle:
            texts.append(handle.read(8_000))
    return texts


@pytest.mark.needs_data
def test_identical_to_nltk_word_tokenize_on_real_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """NLTK's own word_tokenize, pointed at the shipped data, gives the same tokens."""
    import nltk

    data_root = Path(str(resources.files("holistic.metrics").joinpath("nltk_data")))
    monkeypatch.setattr(nltk.data, "path", [str(data_root)])
    texts = _real_texts()
    total = 0
    for text in texts:
        for chunk in text.split("\n\n"):
            expected = nltk.word_tokenize(chunk)
            assert word_tokenize(chunk) == expected, chunk[:200]
            total += len(expected)
    if total < 10_000:
        pytest.skip(f"only {total} tokens of real text found")
