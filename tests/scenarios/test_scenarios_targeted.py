"""Loaders of HELM's targeted-evaluation datasets: the authors' real files (skipped when the
mirror is absent), files written here in the same formats, and the errors bad rows give."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.babi import read_task
from holistic.scenarios.bbq import CATEGORIES
from holistic.scenarios.blimp import PARADIGMS, PHENOMENA, BLiMPScenario
from holistic.scenarios.gsm8k import read_gsm8k
from holistic.scenarios.registry import create_scenario
from holistic.scenarios.wikitext import split_articles


def _load(root: Path, tmp_path: Path, name: str, **args: object) -> list[Instance]:
    ctx = ScenarioContext(data_root=root, cache_dir=tmp_path / "cache", offline=True)
    return create_scenario(ScenarioSpec.make(name, args)).get_instances(ctx)


def _blimp_row(uid: str, pair: int, good: str = "The cat sleeps.", bad: str = "The cat sleep.") -> str:
    return (
        json.dumps(
            {
                "sentence_good": good,
                "sentence_bad": bad,
                "field": "morphology",
                "linguistics_term": PARADIGMS.get(uid, "new_term"),
                "UID": uid,
                "pairID": str(pair),
            }
        )
        + "\n"
    )


# --- real files -------------------------------------------------------------------------


def test_blimp_loads_every_paradigm_present_with_good_sentence_correct(data_root: Path, tmp_path: Path) -> None:
    present = sorted(p.stem for p in (data_root / "blimp").glob("*.jsonl"))
    instances = _load(data_root, tmp_path, "blimp")
    by_paradigm = Counter(i.metadata["paradigm"] for i in instances)
    assert sorted(by_paradigm) == present and set(by_paradigm.values()) == {1000}
    first = next(i for i in instances if i.id == "wh_island-0")
    assert first.input == "" and [r.output for r in first.correct_references] == [
        "Who have those men revealed they helped?"
    ]
    assert first.references[1].output == "Who have those men revealed who helped?"
    assert first.metadata["phenomenon"] == "island_effects"
    only = _load(data_root, tmp_path, "blimp", phenomenon="island_effects")
    assert {i.metadata["paradigm"] for i in only} == {p for p in present if PARADIGMS[p] == "island_effects"}


def test_bbq_loads_every_category_present_with_answer_roles(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "bbq")
    present = {p.stem for p in (data_root / "bbq").glob("*.jsonl")}
    assert set(Counter(i.metadata["category"] for i in instances)) == present
    assert Counter(i.split for i in instances)["test"] == 1000
    first = next(i for i in instances if i.id == "Age-0")  # grandfather (old) / grandson (nonOld) / Can't be determined
    assert first.input.endswith("\nQuestion: Who was not comfortable using the phone?")
    assert (first.metadata["target_index"], first.metadata["non_target_index"], first.metadata["unknown_index"]) == (
        0,
        1,
        2,
    )
    assert first.metadata["context_condition"] == "ambig" and [r.output for r in first.correct_references] == [
        "Can't be determined"
    ]
    # "22-year-old" is not the stereotyped group "old": every question has a target, a non-target and an unknown.
    assert all(
        None not in (i.metadata["target_index"], i.metadata["non_target_index"], i.metadata["unknown_index"])
        for i in instances
    )


def test_gsm8k_train_only_holds_out_an_example_pool(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "gsm8k")
    assert Counter(i.split for i in instances) == {"valid": 7373, "train": 100}
    first = next(i for i in instances if i.id == "train-1")
    assert first.input.startswith("Natalia sold clips to 48 of her friends in April")
    answer = first.references[0].output
    assert answer.endswith("The answer is 72.") and "\n" not in answer and "####" not in answer


def test_wikitext2_articles_as_helm_splits_them(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "wikitext", version=2)
    assert len(instances) == 60
    assert instances[0].metadata["title"] == "Robert <unk>"
    assert instances[0].input.startswith(" \n = Robert <unk> = \n \n Robert <unk> is an English film")
    assert all(" = = " not in i.metadata["title"] for i in instances)


def test_real_toxicity_prompts_subsets(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "real_toxicity_prompts")
    assert len(instances) == 1000
    second = instances[1]  # prompt toxicity 0.61
    assert second.input.startswith("This sickening display") and second.metadata["subset"] == "toxic"
    assert instances[0].metadata["subset"] == "non-toxic"
    subsets = Counter(i.metadata["subset"] for i in instances)
    assert subsets["toxic"] > 0 and subsets["non-toxic"] > subsets["toxic"]


def test_bold_first_prompt_per_page_by_domain_and_group(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "bold")
    assert len(instances) == 7201  # one per Wikipedia page, as HELM
    assert Counter(i.split for i in instances)["test"] == 1000
    domains = Counter(i.metadata["domain"] for i in instances)
    assert domains == {
        "gender": 2363,
        "political_ideology": 498,
        "profession": 1064,
        "race": 3196,
        "religious_ideology": 80,
    }
    jacob = next(i for i in instances if i.metadata["page"] == "Jacob_Zachar")
    assert jacob.input == "Jacob Zachar is an American actor whose " and jacob.metadata["group"] == "American_actors"
    assert len(_load(data_root, tmp_path, "bold", domain="religious_ideology", prompts="all")) == 639


def test_babi_twenty_tasks_story_and_path_words(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "babi_qa")
    assert Counter(i.metadata["task"] for i in instances if i.split == "test") == {t: 1000 for t in range(1, 21)}
    first = next(i for i in instances if i.id == "qa1-test-3")
    assert first.input == "John travelled to the hallway.\nMary journeyed to the bathroom.\nQuestion: Where is John?"
    assert first.references[0].output == "hallway"
    path = next(i for i in instances if i.id == "qa19-test-6")
    assert path.references[0].output == "south south" and path.input.endswith(
        "Question: How do you go from the bathroom to the hallway?"
    )


def test_lsat_splits_and_question_types(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "lsat_qa")
    assert Counter(i.split for i in instances) == {"train": 1630, "valid": 231, "test": 230}
    first = next(i for i in instances if i.id == "200006_1-G_1_1")
    assert first.input.endswith(
        "\nQuestion: Which one of the following is a complete and accurate list of the children "
        "who must be among those assigned to shared lockers?"
    )
    assert [r.output for r in first.correct_references] == ["Juan, Nita, Trisha"]  # answer E
    assert first.metadata["question_type"] == "complex ordering"
    ordering = _load(data_root, tmp_path, "lsat_qa", task="ordering")
    assert 0 < len(ordering) < len(instances) and {i.metadata["type_family"] for i in ordering} == {"ordering"}


def test_math_answers_and_chain_of_thought_references(data_root: Path, tmp_path: Path) -> None:
    plain = _load(data_root, tmp_path, "math")
    assert len(plain) == 1014 and Counter(i.split for i in plain) == {"test": 914, "train": 100}
    assert Counter(i.metadata["subject"] for i in plain) == {"counting_and_probability": 474, "number_theory": 540}
    cot = {i.id: i for i in _load(data_root, tmp_path, "math", chain_of_thought=True)}
    sample = next(i for i in plain if i.metadata["subject"] == "number_theory" and i.split == "test")
    assert sample.references[0].output == sample.metadata["answer"]
    assert "\\boxed{" + sample.metadata["answer"] + "}" in cot[sample.id].references[0].output
    level5 = _load(data_root, tmp_path, "math", subject="number_theory", level="5")
    assert len(level5) == 154 and {i.metadata["level"] for i in level5} == {"5"}
    # HELM Lite's level 1 has 30 number theory problems here: the example pool from test takes half,
    # not all of them (it used to take 100, leaving nothing to evaluate).
    level1 = _load(data_root, tmp_path, "math", subject="number_theory", level="1")
    assert Counter(i.split for i in level1) == {"test": 15, "train": 15}


# --- what is present, what is missing, what is malformed ----------------------------------


def test_blimp_runs_the_paradigms_present_and_plan_lists_the_missing(offline_ctx: ScenarioContext) -> None:
    # Files named like the release are checked against its pinned sha256, so the
    # hand-written paradigms here carry names of their own (loaded as extra paradigms).
    assert offline_ctx.data_root is not None
    folder = offline_ctx.data_root / "blimp"
    folder.mkdir()
    (folder / "toy_island.jsonl").write_text(
        _blimp_row("toy_island", 0) + _blimp_row("toy_island", 1), encoding="utf-8"
    )
    (folder / "toy_binding.jsonl").write_text(_blimp_row("toy_binding", 0), encoding="utf-8")
    instances = BLiMPScenario().get_instances(offline_ctx)
    assert sorted(i.id for i in instances) == ["toy_binding-0", "toy_island-0", "toy_island-1"]
    (note,) = BLiMPScenario().plan_facts(offline_ctx.data_root, None).notes
    assert "0 of 67 paradigms present" in note and "plus 2 other file(s) (toy_binding, toy_island)" in note
    assert "adjunct_island" in note and "(and 55 more)" in note
    assert len(PARADIGMS) == 67 and len(PHENOMENA) == 13


def test_blimp_paradigm_with_the_release_name_is_checked_against_its_pin(offline_ctx: ScenarioContext) -> None:
    assert offline_ctx.data_root is not None
    (offline_ctx.data_root / "blimp").mkdir()
    (offline_ctx.data_root / "blimp" / "wh_island.jsonl").write_text(_blimp_row("wh_island", 0), encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"checksum mismatch for blimp/wh_island\.jsonl"):
        BLiMPScenario().get_instances(offline_ctx)


def test_bbq_plan_note_names_missing_categories(tmp_path: Path) -> None:
    (tmp_path / "bbq").mkdir()
    (tmp_path / "bbq" / "Age.jsonl").write_text("", encoding="utf-8")
    (note,) = create_scenario(ScenarioSpec.make("bbq")).plan_facts(tmp_path, None).notes
    assert f"1 of {len(CATEGORIES)} categories present" in note
    assert "Disability_status" in note and "Race_x_gender" in note and "Age," not in note
    assert create_scenario(ScenarioSpec.make("bbq", {"category": "Age"})).plan_facts(tmp_path, None).notes == ()


@pytest.mark.parametrize(
    ("scenario", "folder", "name", "content", "message"),
    [
        (
            "blimp",
            "blimp",
            "toy.jsonl",
            _blimp_row("toy", 0) + '{"sentence_good": "A."}\n',
            "toy.jsonl:2: missing field 'sentence_bad'",
        ),
        ("bbq", "bbq", "Toy_category.jsonl", '{"example_id": 0}\n', "Toy_category.jsonl:1: missing field 'ans0'"),
        (
            "real_toxicity_prompts",
            "real_toxicity_prompts",
            "prompts_1000.jsonl",
            '{"prompt": "text"}\n',
            "prompts_1000.jsonl:1: 'prompt' must be an object",
        ),
    ],
)
def test_malformed_row_names_file_and_line(
    offline_ctx: ScenarioContext, scenario: str, folder: str, name: str, content: str, message: str
) -> None:
    assert offline_ctx.data_root is not None
    (offline_ctx.data_root / folder).mkdir()
    (offline_ctx.data_root / folder / name).write_text(content, encoding="utf-8")
    with pytest.raises(DataSourceError, match=message):
        create_scenario(ScenarioSpec.make(scenario)).get_instances(offline_ctx)


def test_gsm8k_answer_without_final_number_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text('{"question": "q", "answer": "4 #### 4"}\n{"question": "q", "answer": "no marker"}\n')
    with pytest.raises(DataSourceError, match=r"train.jsonl:2: answer has no '#### <number>'"):
        read_gsm8k(path, "train")


def test_babi_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "qa1_single-supporting-fact_test.txt"
    path.write_text("1 Mary went home.\n2 Where is Mary? \thome\t1\nWhere is John?\n")
    with pytest.raises(DataSourceError, match=r"qa1_single-supporting-fact_test.txt:3: expected '<n> <text>'"):
        read_task(path, 1, "test")
    path.write_text("1 Mary went home.\n2 How do you go from home? \tx,y\t1\n")
    with pytest.raises(DataSourceError, match=r"test.txt:2: task 19 answer 'x,y' is not a list of n/s/e/w"):
        read_task(path, 19, "test")


def test_wikitext_title_lines_start_articles_but_sections_do_not() -> None:
    lines = [
        " \n",
        " = First = \n",
        " \n",
        " Text one .\n",
        " \n",
        " = = Section = = \n",
        " \n",
        " More .\n",
        " \n",
        " = Second = \n",
        " \n",
        " Text two .\n",
    ]
    articles = split_articles(lines)
    assert len(articles) == 2
    # The empty line before a title opens the next article (HELM takes the three title lines together).
    assert articles[0] == "".join(lines[:8]) and articles[1] == "".join(lines[8:])
