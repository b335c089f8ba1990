"""HELM Lite's LegalBench, MedQA and WMT14 loaders: the authors' formats, the splits that are not in the
data mirror (written here in their published formats), and bad input named by file, line and reason."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT
from holistic.scenarios.legalbench import PRERELEASE_TEST, LegalBenchScenario, helm_prompt_settings
from holistic.scenarios.med_qa import MedQAScenario, split_path
from holistic.scenarios.wmt_14 import WMT14Scenario


def _ctx(root: Path) -> ScenarioContext:
    return ScenarioContext(data_root=root, offline=True, cache_dir=root / "cache")


# --- LegalBench ------------------------------------------------------------------------------


def _write_legalbench(root: Path, subset: str, train: str, test: str, test_name: str = "test.tsv") -> None:
    """The authors' prompt settings (the shipped entry of ``subset``) and TSV files."""
    s = helm_prompt_settings(subset)
    folder = root / "legalbench"
    (folder / subset).mkdir(parents=True)
    lines = [
        {subset: [list(f) for f in s.fields]},
        {subset: s.instructions},
        {subset: s.label_key},
        {subset: s.output_noun},
        {subset: 5},
    ]
    (folder / "helm_prompt_settings.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n", encoding="utf-8")
    (folder / subset / "train.tsv").write_text(train, encoding="utf-8")
    (folder / subset / test_name).write_text(test, encoding="utf-8")


_LOBBY_HEADER = "index\tbill_title\tbill_summary\tcompany_name\tcompany_description\tanswer\n"


def test_legalbench_released_test_file_with_quoted_newlines_is_read_row_for_row(tmp_path: Path) -> None:
    """A quoted bill summary spanning lines (and holding a tab and doubled quotes) stays one field;
    the next row is not shifted."""
    train = _LOBBY_HEADER + '0\tA bill\t"Line one\n\nLine ""two""\tafter a tab"\tAcme\tMakes things\tNo\n'
    test = _LOBBY_HEADER + '0\tB bill\t"Summary\nsecond line"\tBeta\tSells\tYes\n1\tC bill\tOne line\tGamma\tBuys\tNo\n'
    _write_legalbench(tmp_path, "corporate_lobbying", train, test)
    got = LegalBenchScenario(subset="corporate_lobbying").get_instances(_ctx(tmp_path))
    assert [(i.split, i.references[0].output) for i in got] == [
        (TRAIN_SPLIT, "No"),
        (TEST_SPLIT, "Yes"),
        (TEST_SPLIT, "No"),
    ]
    assert got[0].input.split("\n")[1:4] == ["Official summary of bill: Line one", "", 'Line "two"\tafter a tab']
    assert got[1].input == (
        "Official title of bill: B bill\nOfficial summary of bill: Summary\nsecond line\n"
        "Company name: Beta\nCompany business description: Sells"
    )
    assert got[2].input.startswith("Official title of bill: C bill\n")


def test_legalbench_stray_quote_or_tab_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    train = "index\tanswer\ttext\n0\tYes\tok\n"
    _write_legalbench(tmp_path, "proa", train, "index\tanswer\ttext\n0\tNo\tfine\n1\tYes\textra\tfield\n")
    with pytest.raises(DataSourceError, match=r"proa/test\.tsv:3: row has 4 fields, the header has 3"):
        LegalBenchScenario(subset="proa").get_instances(_ctx(tmp_path))
    shutil.rmtree(tmp_path / "legalbench")
    _write_legalbench(tmp_path, "proa", train, 'index\tanswer\ttext\n0\tNo\t"never closed\n1\tYes\tx\n')
    with pytest.raises(DataSourceError, match=r"proa/test\.tsv:2: cannot read as TSV"):
        LegalBenchScenario(subset="proa").get_instances(_ctx(tmp_path))


def test_legalbench_prerelease_layout_reads_label_column(tmp_path: Path) -> None:
    _write_legalbench(
        tmp_path,
        "abercrombie",
        "index\tanswer\ttext\n0\tgeneric\tSalt\n",
        "label\ttext\nfanciful\tKodak\n",
        PRERELEASE_TEST,
    )
    (_, got_test) = LegalBenchScenario(subset="abercrombie").get_instances(_ctx(tmp_path))
    assert got_test.input == "Description: Kodak" and got_test.references[0].output == "fanciful"


def test_legalbench_missing_test_files_are_named_in_plan_and_on_load(tmp_path: Path) -> None:
    """function_of_decision_section's test set is not in the mirror: --plan says so, loading fails naming it."""
    folder = tmp_path / "legalbench" / "function_of_decision_section"
    folder.mkdir(parents=True)
    scenario = LegalBenchScenario(subset="function_of_decision_section")
    notes = " ".join(scenario.plan_facts(tmp_path, None).notes)
    assert "test data missing: function_of_decision_section/test.tsv" in notes
    with pytest.raises(Exception, match=r"function_of_decision_section/test\.tsv"):
        scenario.get_instances(_ctx(tmp_path))


def test_legalbench_adapter_is_helms() -> None:
    adapter = LegalBenchScenario(subset="proa").adapter_defaults()
    assert adapter["output_prefix"] == "Answer: " and adapter["input_prefix"] == ""
    assert adapter["max_tokens"] == 30 and adapter["stop_sequences"] == ("\n",) and adapter["max_train_instances"] == 5
    assert adapter["instructions"].endswith("Does the clause specify a private right of action? Answer Yes or No.")


@pytest.mark.needs_data
def test_legalbench_real_files(data_root: Path) -> None:
    got = LegalBenchScenario(subset="corporate_lobbying").get_instances(_ctx(data_root))
    test = [i for i in got if i.split == TEST_SPLIT]
    assert len(test) == 490 and Counter(i.references[0].output for i in test) == {"No": 345, "Yes": 145}
    assert sum("\n\n" in i.input for i in test) > 100  # the quoted multi-line summaries


# --- MedQA -----------------------------------------------------------------------------------


def _medqa_row(question: str, answer_idx: str, options: dict[str, str]) -> str:
    return json.dumps(
        {
            "question": question,
            "answer": options.get(answer_idx, ""),
            "options": options,
            "meta_info": "step1",
            "answer_idx": answer_idx,
        }
    )


def _write_medqa(root: Path, parts: dict[str, list[str]]) -> None:
    for part, rows in parts.items():
        path = root / "med_qa" / split_path(part)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")


_OPTS = {"A": "Aspirin", "B": 'Pulmonary embolism\n"', "C": "Heparin ", "D": "Warfarin"}


def test_med_qa_all_splits_in_published_format(tmp_path: Path) -> None:
    """train/dev/test as the authors ship them: dev is HELM's valid split; HELM's option clean-up."""
    _write_medqa(
        tmp_path,
        {
            "train": [_medqa_row("Q1", "A", _OPTS)],
            "dev": [_medqa_row("Q2", "B", _OPTS)],
            "test": [_medqa_row("Q3", "C", _OPTS)],
        },
    )
    got = MedQAScenario().get_instances(_ctx(tmp_path))
    assert [i.split for i in got] == [TRAIN_SPLIT, VALID_SPLIT, TEST_SPLIT]
    assert [r.output for r in got[1].references] == ["Aspirin", "Pulmonary embolism", "Heparin", "Warfarin"]
    assert [r.is_correct for r in got[1].references] == [False, True, False, False]


def test_med_qa_answer_outside_the_options_is_an_error(tmp_path: Path) -> None:
    _write_medqa(tmp_path, {"test": [_medqa_row("Q1", "A", _OPTS), _medqa_row("Q2", "E", _OPTS)]})
    with pytest.raises(DataSourceError, match=r"phrases_no_exclude_test\.jsonl:2: answer_idx 'E' is not one of"):
        MedQAScenario().get_instances(_ctx(tmp_path))


def test_med_qa_test_only_holds_out_a_pool_and_plan_says_so(tmp_path: Path) -> None:
    _write_medqa(tmp_path, {"test": [_medqa_row(f"Q{n}", "A", _OPTS) for n in range(150)]})
    got = MedQAScenario().get_instances(_ctx(tmp_path))
    assert Counter(i.split for i in got) == {TRAIN_SPLIT: 100, TEST_SPLIT: 50}
    assert "zero-shot" not in " ".join(MedQAScenario().plan_facts(tmp_path, None).notes)
    assert "100 test questions are the example pool" in " ".join(MedQAScenario().plan_facts(tmp_path, None).notes)


# --- WMT14 -----------------------------------------------------------------------------------


def _sgm(kind: str, lang: str, docs: dict[str, list[tuple[int, str]]]) -> str:
    """WMT's NIST SGML: one ``<seg>`` a line inside ``<doc>`` elements."""
    tag = "srcset" if kind == "src" else "refset"
    out = [f'<{tag} setid="newstest2014" srclang="any" trglang="{lang}">']
    for doc, segs in docs.items():
        out.append(f'<doc docid="{doc}" genre="news" origlang="de">')
        out += [f'<seg id="{n}">{text}</seg>' for n, text in segs]
        out.append("</doc>")
    return "\n".join([*out, f"</{tag}>", ""])


_TEST = "test-full/newstest2014-deen"
_VALID = "dev/newstest2013"


def _write_wmt(
    root: Path, stem: str, src: dict[str, list[tuple[int, str]]], ref: dict[str, list[tuple[int, str]]]
) -> None:
    """``<stem>-src.de.sgm`` and ``<stem>-ref.en.sgm`` under ``wmt_14/``, in WMT's SGML."""
    (root / "wmt_14" / stem).parent.mkdir(parents=True, exist_ok=True)
    (root / "wmt_14" / f"{stem}-src.de.sgm").write_text(_sgm("src", "de", src), encoding="utf-8")
    (root / "wmt_14" / f"{stem}-ref.en.sgm").write_text(_sgm("ref", "en", ref), encoding="utf-8")


def test_wmt_reads_test_valid_and_train_in_their_published_formats(tmp_path: Path) -> None:
    _write_wmt(
        tmp_path, _TEST, {"d1": [(1, "Hallo &amp; Welt"), (2, "Zwei")]}, {"d1": [(1, "Hello &amp; world"), (2, "Two")]}
    )
    _write_wmt(tmp_path, _VALID, {"v": [(1, "Drei")]}, {"v": [(1, "Three")]})
    train = tmp_path / "wmt_14" / "train"
    train.mkdir()
    (train / "europarl-v7.de-en.de").write_text("Ja\nNein\nJa bitte\n", encoding="utf-8")
    (train / "europarl-v7.de-en.en").write_text("Yes\nNo\nYes\n", encoding="utf-8")  # the duplicate target goes
    got = WMT14Scenario(language_pair="de-en").get_instances(_ctx(tmp_path))
    assert [(i.split, i.input, i.references[0].output) for i in got] == [
        (TRAIN_SPLIT, "Ja", "Yes"),
        (TRAIN_SPLIT, "Nein", "No"),
        (VALID_SPLIT, "Drei", "Three"),
        (TEST_SPLIT, "Hallo &amp; Welt", "Hello &amp; world"),  # raw, as the builder's pattern takes it
        (TEST_SPLIT, "Zwei", "Two"),
    ]
    reverse = WMT14Scenario(language_pair="en-de").get_instances(_ctx(tmp_path))
    assert reverse[-1].input == "Two" and reverse[-1].references[0].output == "Zwei"
    assert WMT14Scenario(language_pair="de-en").adapter_defaults()["instructions"] == (
        "Translate the following sentences from German to English."
    )


def test_wmt_missing_segment_is_an_error_not_a_shifted_pair(tmp_path: Path) -> None:
    _write_wmt(tmp_path, _TEST, {"d1": [(1, "Eins"), (2, "Zwei"), (3, "Drei")]}, {"d1": [(1, "One"), (3, "Three")]})
    with pytest.raises(
        DataSourceError,
        match=r"newstest2014-deen-src\.de\.sgm:4: segment 2 of document 'd1' has no "
        r"counterpart in .*newstest2014-deen-ref\.en\.sgm",
    ):
        WMT14Scenario(language_pair="de-en").get_instances(_ctx(tmp_path))


def test_wmt_broken_seg_line_and_uneven_training_files_are_errors(tmp_path: Path) -> None:
    _write_wmt(tmp_path, _TEST, {"d1": [(1, "Eins")]}, {"d1": [(1, "One")]})
    ref = tmp_path / "wmt_14" / "test-full" / "newstest2014-deen-ref.en.sgm"
    ref.write_text(ref.read_text(encoding="utf-8").replace("One</seg>", "One"), encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"newstest2014-deen-ref\.en\.sgm:3: a <seg> line that is not"):
        WMT14Scenario(language_pair="de-en").get_instances(_ctx(tmp_path))
    ref.write_text(_sgm("ref", "en", {"d1": [(1, "One")]}), encoding="utf-8")
    train = tmp_path / "wmt_14" / "train"
    train.mkdir()
    (train / "news-commentary-v9.de-en.de").write_text("a\nb\nc\n", encoding="utf-8")
    (train / "news-commentary-v9.de-en.en").write_text("A\nB\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"news-commentary-v9\.de-en\.en:3: ends before"):
        WMT14Scenario(language_pair="de-en").get_instances(_ctx(tmp_path))


@pytest.mark.needs_data
def test_wmt_real_files_pair_every_segment(data_root: Path) -> None:
    for pair, n in (("de-en", 3003), ("hi-en", 2507)):
        got = WMT14Scenario(language_pair=pair).get_instances(_ctx(data_root))
        assert len(got) == n and Counter(i.split for i in got)[TRAIN_SPLIT] == 100
    first = next(i for i in got if i.id == "test-00000")
    assert first.input == "आपकी कार में ब्लैक बॉक्स?" and first.references[0].output == "A black box in your car?"
