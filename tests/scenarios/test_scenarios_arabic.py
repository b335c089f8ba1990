"""Arabic EXAMS, EXAMS multilingual and LLMeBench's Arabic datasets read from files in the
authors' formats (written here), bad rows rejected with file, line and reason; English-only
perturbations refused on Arabic runs, and the real files read when the data mirror is here."""

from __future__ import annotations

import io
import json
import logging
import tarfile
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError, SpecError
from holistic.core.types import ScenarioSpec
from holistic.scenarios.exams import ArabicEXAMSScenario, EXAMSMultilingualScenario, iter_tar_jsonl
from holistic.scenarios.llmebench import ArabicQAScenario, SarcasmScenario, StanceScenario
from holistic.scenarios.loading.sources import ResolvedData
from holistic.scenarios.registry import create_scenario
from holistic.spec.compiler import CompiledSuite, compile_spec

TWEET_1 = "ههههه والله احسن قرار؟!"
TWEET_2 = "الجو اليوم جميل (٢٠٢٤)"


def _sarcasm_v2(folder: Path, test_eol: str) -> None:
    header = "tweet,sarcasm,sentiment,dialect"
    rows = [f'"""{TWEET_1}""",TRUE,NEG,egypt', f'"{TWEET_2}, جدا",FALSE,POS,msa']
    (folder / "ArSarcasm2").mkdir(parents=True)
    (folder / "ArSarcasm2" / "training_data.csv").write_bytes(("\n".join([header, *rows]) + "\n").encode())
    (folder / "ArSarcasm2" / "testing_data.csv").write_bytes((test_eol.join([header, *rows]) + test_eol).encode())


def _load(scenario: object, root: Path) -> list:  # type: ignore[type-arg]
    needs = scenario.data_needs()  # type: ignore[attr-defined]
    paths = {f.path: root / f.path for f in needs.layouts[0]}
    return scenario.load(ResolvedData(needs.scenario, 0, paths))  # type: ignore[attr-defined,no-any-return]


def test_a_crlf_test_file_beside_an_lf_training_file_reads_the_same_rows(tmp_path: Path) -> None:
    _sarcasm_v2(tmp_path, "\r\n")
    rows = _load(SarcasmScenario(dataset="ArSarcasm-v2"), tmp_path)
    train = [i for i in rows if i.split == "train"]
    test = [i for i in rows if i.split == "test"]
    assert [i.input for i in train] == [i.input for i in test] == [f'"{TWEET_1}"', f"{TWEET_2}, جدا"]
    assert [i.first_correct.output for i in test] == ["yes", "no"]  # no "\r" left on a label
    assert all("\r" not in i.input for i in rows)


def test_a_row_with_a_missing_field_is_rejected_with_its_line(tmp_path: Path) -> None:
    _sarcasm_v2(tmp_path, "\r\n")
    path = tmp_path / "ArSarcasm2" / "testing_data.csv"
    path.write_bytes(path.read_bytes() + f"{TWEET_1},FALSE\r\n".encode())
    with pytest.raises(DataSourceError, match=r"testing_data\.csv:4: row has 2 fields, the header .* has 4"):
        _load(SarcasmScenario(dataset="ArSarcasm-v2"), tmp_path)


def test_a_label_outside_the_labels_is_rejected_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "ANSStance").mkdir()
    body = "s1,s2,stance\nجملة,ادعاء,agree\nجملة,ادعاء,unrelated\n"
    for name in ("train", "dev", "test"):
        (tmp_path / "ANSStance" / f"{name}.csv").write_text(body, encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"train\.csv:3: stance 'unrelated' is not one of agree, disagree, other"):
        _load(StanceScenario(), tmp_path)


def _exams_archive(folder: Path, split: str, rows: list[dict[str, object]]) -> None:
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    with tarfile.open(folder / f"{split}.jsonl.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo(f"{split}.jsonl")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def _exams_row(n: int, key: str, choices: int, language: str = "Arabic") -> dict[str, object]:
    return {
        "id": f"q{n}",
        "question": {
            "stem": f"سؤال {n}؟",
            "choices": [{"text": f"خيار {c}", "label": "ABCDE"[c]} for c in range(choices)],
        },
        "answerKey": key,
        "info": {"grade": 12, "subject": "Science", "language": language},
    }


def test_exams_keys_e_and_at_are_read_or_skipped_with_file_and_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _exams_archive(tmp_path, "train", [_exams_row(1, "B", 4, "German")])
    _exams_archive(tmp_path, "dev", [])
    _exams_archive(tmp_path, "test", [_exams_row(2, "E", 5), _exams_row(3, "@", 3), _exams_row(4, "C", 3)])
    with caplog.at_level(logging.WARNING):
        rows = _load(EXAMSMultilingualScenario(language="Arabic", subject="all"), tmp_path)
    assert [i.id for i in rows] == ["q2", "q4"]  # "@" skipped as HELM skips it, nothing shifted
    assert [r.output for r in rows[0].references if r.is_correct] == ["خيار 4"]  # E: the fifth choice
    assert [r.output for r in rows[1].references if r.is_correct] == ["خيار 2"]
    assert "test.jsonl.tar.gz:test.jsonl:2: answerKey '@' is not one of A-E" in caplog.text


def test_an_exams_key_naming_no_choice_of_its_row_is_an_error(tmp_path: Path) -> None:
    _exams_archive(tmp_path, "train", [])
    _exams_archive(tmp_path, "dev", [])
    _exams_archive(tmp_path, "test", [_exams_row(1, "A", 4), _exams_row(2, "E", 4)])
    with pytest.raises(DataSourceError, match=r"test\.jsonl:2: answerKey 'E' names no choice: the row has 4 choices"):
        _load(EXAMSMultilingualScenario(language="all", subject="all"), tmp_path)


def test_a_member_missing_from_the_archive_is_named(tmp_path: Path) -> None:
    _exams_archive(tmp_path, "dev", [])
    with pytest.raises(DataSourceError, match=r"no member .test\.jsonl. in the archive"):
        list(iter_tar_jsonl(tmp_path / "dev.jsonl.tar.gz", "test.jsonl"))


def test_arabic_exams_skips_an_answer_outside_a_to_d_and_filters_by_subject(tmp_path: Path) -> None:
    def row(i: str, answer: str) -> str:
        return json.dumps({"id": i, "question": "س", "A": "أ", "B": "ب", "C": "ج", "D": "د", "answer": answer}) + "\n"

    (tmp_path / "exam_dev.jsonl").write_text(row("Islamic Studies-0", "A"), encoding="utf-8")
    (tmp_path / "exam_test.jsonl").write_text(
        row("Islamic Studies-1", "D") + row("Islamic Studies-2", "E") + row("Physics-0", "B"), encoding="utf-8"
    )
    rows = _load(ArabicEXAMSScenario(subject="Islamic_Studies"), tmp_path)
    assert [(i.id, i.split) for i in rows] == [("Islamic Studies-0", "train"), ("Islamic Studies-1", "test")]
    assert rows[1].first_correct.output == "د"


def test_squad_json_gives_every_answer_and_names_a_question_without_one(tmp_path: Path) -> None:
    article = {"paragraphs": [{"context": "نص", "qas": [{"id": "1", "question": "من؟", "answers": [{"text": "هو"}, {"text": "هو"}, {"text": "هي"}]}]}]}  # fmt: skip
    (tmp_path / "ARCD").mkdir()
    for name in ("train", "test"):
        (tmp_path / "ARCD" / f"arcd-{name}.json").write_text(json.dumps({"data": [article]}), encoding="utf-8")
    rows = _load(ArabicQAScenario(dataset="ARCD"), tmp_path)
    assert [r.output for r in rows[0].references] == ["هو", "هي"]
    assert rows[0].input == "نص\nالسؤال: من؟"
    article["paragraphs"][0]["qas"][0]["answers"] = []  # type: ignore[index]
    (tmp_path / "ARCD" / "arcd-test.json").write_text(json.dumps({"data": [article]}), encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"arcd-test\.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]: 'answers'"):
        _load(ArabicQAScenario(dataset="ARCD"), tmp_path)


def compile_spec_text(text: str, folder: Path) -> CompiledSuite:
    path = folder / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return compile_spec(path)


def test_an_english_only_perturbation_on_an_arabic_run_is_a_spec_error_saying_why(tmp_path: Path) -> None:
    text = "suite: s\nruns:\n  - scenario: llmebench_stance\n    perturbations: [typos]\n"
    with pytest.raises(SpecError, match=r"perturbation .typos. only makes sense for English text.*.ar.*QWERTY"):
        compile_spec_text(text, tmp_path)
    ok = compile_spec_text(
        "suite: s\nruns:\n  - scenario: llmebench_stance\n    perturbations: [{name: whitespace, args: {max_spaces: 2}}]\n",
        tmp_path,
    )
    assert [p.name for p in ok.runs[0].perturbations] == ["whitespace"]


def test_arabic_runs_get_no_default_perturbations_and_say_why(tmp_path: Path) -> None:
    spec = compile_spec_text(
        "suite: s\nruns:\n  - scenario: arabic_exams\n    metrics: [accuracy, robustness, fairness]\n", tmp_path
    )
    assert spec.runs[0].perturbations == ()
    info = create_scenario(ScenarioSpec.make("arabic_exams")).info
    assert "not English (ar)" in info.unperturbed_by_default["robustness"]


@pytest.mark.needs_data
def test_the_real_files_give_the_published_row_counts(data_root: Path) -> None:
    counts = {
        ("arabic_exams", ()): {"train": 25, "test": 537},
        ("exams_multilingual", (("language", "Arabic"), ("subject", "all"))): {"test": 562},
        ("llmebench_sarcasm", (("dataset", "ArSarcasm-v2"),)): {"train": 12548, "test": 3000},
        ("llmebench_stance", ()): {"train": 2652, "valid": 755, "test": 379},
        ("llmebench_qa", (("dataset", "XQuAD"),)): {"train": 693, "test": 1190},
    }
    for (name, args), expected in counts.items():
        scenario = create_scenario(ScenarioSpec.make(name, dict(args)))
        needs = scenario.data_needs()
        assert needs is not None
        rows = _load(scenario, data_root / needs.scenario)
        got: dict[str, int] = {}
        for i in rows:
            got[i.split] = got.get(i.split, 0) + 1
        assert got == expected, name
    v2 = _load(SarcasmScenario(dataset="ArSarcasm-v2"), data_root / "llmebench")
    assert sum(1 for i in v2 if i.split == "test" and i.first_correct.output == "yes") == 821
