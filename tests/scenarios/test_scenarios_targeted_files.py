"""Loaders of HELM's targeted datasets without a shared mirror copy: WikiFact, LegalSupport,
entity matching and data imputation, on fixtures written in the authors' formats
(``data/targeted_root``, provenance in ``data/README.md``), and the errors bad rows give."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.entity_data_imputation import pandas_sample
from holistic.scenarios.entity_matching import EntityMatchingScenario
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.tabular import read_table
from holistic.scenarios.registry import create_scenario
from holistic.scenarios.wikifact import WikiFactScenario

FIXTURES = Path(__file__).parent / "data" / "targeted_root"


def _load(root: Path, tmp_path: Path, name: str, **args: object) -> list[Instance]:
    ctx = ScenarioContext(data_root=root, cache_dir=tmp_path / "cache", offline=True)
    return create_scenario(ScenarioSpec.make(name, args)).get_instances(ctx)


def _copy(tmp_path: Path, folder: str) -> Path:
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / folder, root / folder)
    return root


# --- WikiFact -------------------------------------------------------------------------


def test_wikifact_one_relation_with_every_object_name(tmp_path: Path) -> None:
    instances = _load(FIXTURES, tmp_path, "wikifact", relation="instance_of")
    assert [(i.id, i.split) for i in instances] == [("train-1", "train"), ("train-3", "train"), ("test-1", "test")]
    hill = instances[-1]
    assert hill.input == "Hollin Fell is an instance of"
    # result_names is flattened and stripped; a name given twice is one reference.
    assert [r.output for r in hill.correct_references] == ["mountain", "hill"]
    assert hill.metadata["relation"] == "instance_of"
    # The Wikidata id names the same relation.
    assert [i.id for i in _load(FIXTURES, tmp_path, "wikifact", relation="P31")] == [i.id for i in instances]


def test_wikifact_all_relations_and_splits(tmp_path: Path) -> None:
    instances = _load(FIXTURES, tmp_path, "wikifact")
    assert Counter(i.split for i in instances) == {"train": 3, "valid": 1, "test": 3}
    assert Counter(i.metadata["relation"] for i in instances) == {
        "instance_of": 3,
        "author": 2,
        "currency": 1,
        "place_of_birth": 1,
    }


def test_wikifact_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown WikiFact relation 'autor'; did you mean 'author'"):
        create_scenario(ScenarioSpec.make("wikifact", {"relation": "autor"}))
    root = _copy(tmp_path, "wikifact")
    with (root / "wikifact" / "test.jsonl").open("a") as fh:
        fh.write('{"property": "P31", "template": "X is an instance of", "result_names": ["city"]}\n')
    with pytest.raises(DataSourceError, match=r"test\.jsonl:4: 'result_names' must be a list of lists"):
        _load(root, tmp_path, "wikifact")


# --- LegalSupport ------------------------------------------------------------------------


def test_legal_support_two_choices_in_citation_order(tmp_path: Path) -> None:
    instances = _load(FIXTURES, tmp_path, "legal_support")
    assert Counter(i.split for i in instances) == {"train": 2, "valid": 1, "test": 2}
    search = next(i for i in instances if i.id == "test-1")
    assert search.input.startswith("A search incident to arrest")
    assert [r.output for r in search.references] == [
        "holding that officers could not search a locked trunk after the arrestee was secured",
        "upholding the search of a bag within the arrestee's reach at the time of arrest",
    ]
    assert [r.is_correct for r in search.references] == [False, True]  # label "b"
    # As in HELM, a choice with the same text as the correct one is correct too.
    twin = next(i for i in instances if i.id == "test-2")
    assert [r.is_correct for r in twin.references] == [True, True]


def test_legal_support_bad_label_names_file_and_line(tmp_path: Path) -> None:
    root = _copy(tmp_path, "legal_support")
    path = root / "legal_support" / "legal_support" / "dev.jsonl"
    path.write_text(
        path.read_text()
        + '{"context": "c", "citation_a": {"parenthetical": "x"}, "citation_b": {"parenthetical": "y"}, "label": "c"}\n'
    )
    with pytest.raises(DataSourceError, match=r"dev\.jsonl:2: 'label' must be 'a' or 'b', got 'c'"):
        _load(root, tmp_path, "legal_support")


# --- Entity matching -----------------------------------------------------------------------


def test_entity_matching_pairs_as_helm_writes_them(tmp_path: Path) -> None:
    instances = _load(FIXTURES, tmp_path, "entity_matching", dataset="Beer")
    test = [i for i in instances if i.split == "test"]
    assert [i.references[0].output for i in test] == ["Yes", "No", "Yes"]
    # Row 3 of table A has no ABV: pandas reads it as missing and prints nan; B's values are as written.
    assert test[0].input == (
        "Product A is Beer_Name: Blue Fen Lager. Brew_Factory_Name: Fenmoor Brewing. "
        "Style: Munich Helles Lager. ABV: nan. "
        "Product B is Beer_Name: Fen Lager. Brew_Factory_Name: Fenmoor Brewing. Style: Helles. ABV: 4.8 %. "
        "Are A and B the same?"
    )
    # A quoted cell with a comma stays one value.
    assert "Beer_Name: Kettle & Crow, Winter Reserve. " in test[1].input
    # Training pairs are balanced: both matches and two of the four non-matches.
    train = [i for i in instances if i.split == "train"]
    assert Counter(i.references[0].output for i in train) == {"Yes": 2, "No": 2}
    assert train == [i for i in _load(FIXTURES, tmp_path, "entity_matching", dataset="Beer") if i.split == "train"]


def test_entity_matching_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown entity matching dataset 'beer'; did you mean 'Beer'"):
        create_scenario(ScenarioSpec.make("entity_matching", {"dataset": "beer"}))
    root = _copy(tmp_path, "entity_matching")
    labels = root / "entity_matching" / "Beer" / "valid.csv"
    labels.write_text(labels.read_text() + "9,1,0\n")
    with pytest.raises(DataSourceError, match=r"valid\.csv:4: ltable_id '9' is not an id of tableA\.csv"):
        _load(root, tmp_path, "entity_matching", dataset="Beer")
    labels.write_text("ltable_id,rtable_id,label\n0,0,yes\n")
    with pytest.raises(DataSourceError, match=r"valid\.csv:2: label must be 0 or 1, got 'yes'"):
        _load(root, tmp_path, "entity_matching", dataset="Beer")
    table = root / "entity_matching" / "Beer" / "tableB.csv"
    table.write_text(table.read_text() + "5,Extra,Brewery\n")
    with pytest.raises(DataSourceError, match=r"tableB\.csv:7: 3 fields, the header has 5"):
        _load(root, tmp_path, "entity_matching", dataset="Beer")


# --- Data imputation -----------------------------------------------------------------------


def test_pandas_sample_positions() -> None:
    # pandas' sample(frac=0.1, random_state=1234) on 20 rows takes round(2.0) = 2 rows: the first two
    # positions of NumPy's RandomState(1234).permutation(20) = [3, 13, 2, 16, ...].
    assert pandas_sample(20, 0.1, 1234) == [3, 13]
    assert pandas_sample(18, 0.2, 1234) == pandas_sample(18, 0.2, 1234) and len(pandas_sample(18, 0.2, 1234)) == 4


def test_imputation_buy_manufacturer(tmp_path: Path) -> None:
    instances = _load(FIXTURES, tmp_path, "entity_data_imputation", dataset="Buy")
    # 14 rows, one without a description is dropped: 13 -> test round(1.3) = 1, valid round(2.4) = 2, train 10.
    assert Counter(i.split for i in instances) == {"train": 10, "valid": 2, "test": 1}
    assert all("Brightline 24" not in i.input for i in instances)
    by_line = {i.id: i for i in instances}
    # The price column has a missing cell, so pandas prints every price as a float.
    assert by_line["Buy-2"].input == (
        "name: Pellworth 16GB USB Flash Drive. description: Compact USB 2.0 drive with key ring. "
        "price: 19.0. manufacturer?"
    )
    assert by_line["Buy-5"].input.endswith("price: nan. manufacturer?")
    # A missing manufacturer is kept, as in HELM: its answer is pandas' "nan".
    assert by_line["Buy-6"].references[0].output == "nan"


def test_imputation_restaurant_city(tmp_path: Path) -> None:
    instances = _load(FIXTURES, tmp_path, "entity_data_imputation", dataset="Restaurant")
    # 21 rows, one without a city dropped: 20 -> test 2, valid round(3.6) = 4, train 14.
    assert Counter(i.split for i in instances) == {"train": 14, "valid": 4, "test": 2}
    test = [i for i in instances if i.split == "test"]
    # Test rows are positions 3 and 13 of the complete rows (see test_pandas_sample_positions).
    assert [i.references[0].output for i in test] == ["san francisco", "los angeles"]
    assert test[0].input == "name: golden lotus. addr: 1500 grant ave.. phone: 415/555-0104. type: chinese. city?"


def test_imputation_bad_input(tmp_path: Path) -> None:
    root = _copy(tmp_path, "entity_data_imputation")
    arff = root / "entity_data_imputation" / "fz.arff"
    arff.write_text(arff.read_text() + '"one","two"\n')
    with pytest.raises(DataSourceError, match=r"fz\.arff:33: 2 fields, the header has 6"):
        _load(root, tmp_path, "entity_data_imputation", dataset="Restaurant")
    buy = root / "entity_data_imputation" / "Buy.csv"
    buy.write_text("id,name,manufacturer,price\n1,x,y,2\n")
    with pytest.raises(DataSourceError, match=r"Buy\.csv: no column 'description'"):
        _load(root, tmp_path, "entity_data_imputation", dataset="Buy")


def test_read_table_types_columns_like_pandas(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,count,ratio,flag,text\n1,3,0.5,True,a\n2,,2,False,NA\n3,7,1e3,true,\n")
    records = [r for _, r in read_table(path).records()]
    assert [r["count"] for r in records] == ["3.0", "nan", "7.0"]  # a missing cell makes the column float
    assert [r["ratio"] for r in records] == ["0.5", "2.0", "1000.0"]
    assert [r["flag"] for r in records] == ["True", "False", "True"]
    assert [r["text"] for r in records] == ["a", "nan", "nan"]
    assert [r["id"] for r in records] == ["1", "2", "3"]


def test_plan_notes_name_missing_unpinned_files(tmp_path: Path) -> None:
    assert WikiFactScenario(relation="author").plan_facts(FIXTURES, None).notes == ()
    assert EntityMatchingScenario(dataset="Beer").plan_facts(FIXTURES, None).notes == ()
    (note,) = EntityMatchingScenario(dataset="Abt_Buy").plan_facts(FIXTURES, None).notes
    assert note.startswith("entity_matching: Abt_Buy/tableA.csv, Abt_Buy/tableB.csv")
    assert "fetched from pages.cs.wisc.edu (not pinned by sha256), or the run fails offline" in note
    (note,) = WikiFactScenario().plan_facts(tmp_path, None).notes
    assert "wikifact: train.jsonl, dev.jsonl, test.jsonl not under" in note and "worksheets.codalab.org" in note


@pytest.mark.parametrize("name", ["entity_matching", "entity_data_imputation", "legal_support", "wikifact"])
def test_unpinned_file_scenarios_share_one_missing_files_note(name: str, tmp_path: Path) -> None:
    scenario = create_scenario(ScenarioSpec.make(name, _ARGS.get(name)))
    cls = type(scenario)
    assert isinstance(scenario, FileScenario) and scenario.notes_missing_files
    # One implementation on the base, switched on by the class attribute; no copies.
    assert "plan_facts" not in vars(cls)
    (note,) = scenario.plan_facts(tmp_path, None).notes
    assert f"{name}: " in note and "not under" in note


def test_file_scenarios_say_nothing_about_files_unless_asked() -> None:
    assert not FileScenario.notes_missing_files
    assert FileScenario().plan_facts(Path("/nonexistent"), None).notes == ()


_ARGS = {"entity_matching": {"dataset": "Beer"}, "entity_data_imputation": {"dataset": "Buy"}}
