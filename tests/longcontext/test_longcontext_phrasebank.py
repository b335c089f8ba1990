"""financial_phrasebank: the real authors' files when present, and the format's errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.scenarios.haystack.phrasebank import TRAIN_POOL, FinancialPhraseBankScenario, read_phrasebank
from tests.support.data import find_data_root, skip_without_data

REPO = Path(__file__).resolve().parents[2]


def _data_root() -> Path:
    root = find_data_root()
    if root is None or not (root / "financial_phrasebank" / "Sentences_AllAgree.txt").is_file():
        skip_without_data("financial_phrasebank/Sentences_AllAgree.txt")
    return root


@pytest.mark.needs_data
@pytest.mark.parametrize(("agreement", "total"), [("all", 2264), ("50", 4846)])
def test_real_files_load_with_three_classes_and_a_held_out_pool(agreement: str, total: int, tmp_path: Path) -> None:
    root = _data_root()
    scenario = FinancialPhraseBankScenario(agreement=agreement)
    instances = scenario.get_instances(ScenarioContext(data_root=root, cache_dir=tmp_path, offline=True))
    assert len(instances) == total
    assert sum(i.split == "train" for i in instances) == TRAIN_POOL
    assert scenario.plan_facts(None, None).num_instances == total - TRAIN_POOL
    labels = Counter(i.first_correct.output for i in instances if i.first_correct is not None)
    assert set(labels) == {"negative", "neutral", "positive"} and labels["neutral"] > labels["negative"]
    assert all(len(i.correct_references) == 1 and len(i.references) == 3 for i in instances)
    # The authors' bytes are Latin-1: every line decodes, non-ASCII characters included.
    assert not any("\ufffd" in i.input for i in instances)
    assert any(not i.input.isascii() for i in instances)
    assert instances[0].input.startswith("According to Gran , the company has no plans")


def test_format_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "Sentences_AllAgree.txt"
    path.write_bytes("Sales rose .@positive\nL\xe4hde cut jobs .@negative\n".encode("latin-1"))
    instances = read_phrasebank(path, "t")
    assert [i.input for i in instances] == ["Sales rose .", "Lähde cut jobs ."]
    path.write_bytes(b"Sales rose .@positive\nno label here\n")
    with pytest.raises(DataSourceError, match=r"Sentences_AllAgree.txt:2: expected 'sentence@label'"):
        read_phrasebank(path, "t")
    path.write_bytes(b"Sales rose .@bullish\n")
    with pytest.raises(DataSourceError, match=r":1: label 'bullish' is not one of negative, neutral, positive"):
        read_phrasebank(path, "t")


def test_unknown_agreement_level_suggests_a_valid_one() -> None:
    with pytest.raises(ValueError, match="unknown agreement '5'"):
        FinancialPhraseBankScenario(agreement="5")
