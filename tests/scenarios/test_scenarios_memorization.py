"""The copyright (memorization) scenario reads the user's own texts in its three layouts.

Every text here is written for the test (nothing copyrighted ships); the JSON file
follows HELM's processed layout ``{"data": {prefix: prefix_to_end}, "metadata": ...}``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.registry import create_scenario

PASSAGE = "The old lighthouse stood alone. Its keeper wrote every night in a green book."


def _load(ctx: ScenarioContext, **args: object) -> list[Instance]:
    return create_scenario(ScenarioSpec.make("copyright", args)).get_instances(ctx)


def _root(ctx: ScenarioContext) -> Path:
    assert ctx.data_root is not None
    folder = ctx.data_root / "copyright"
    folder.mkdir(exist_ok=True)
    return folder


def test_jsonl_passages_prompt_with_their_first_tokens(offline_ctx: ScenarioContext) -> None:
    rows = [{"id": "lighthouse", "text": PASSAGE, "title": "Keeper"}, {"text": "A b c d e f g h."}]
    (_root(offline_ctx) / "texts.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    first, second = _load(offline_ctx, prefix_tokens=5)
    assert first.id == "copyright/lighthouse" and first.input == "The old lighthouse stood alone."
    assert [r.output for r in first.correct_references] == [PASSAGE]
    assert first.metadata["title"] == "Keeper" and first.metadata["normalize_by_prefix_length"] is True
    assert second.id == "copyright/2" and second.input == "A b c d e"


def test_text_folder_one_passage_per_file(offline_ctx: ScenarioContext) -> None:
    folder = _root(offline_ctx) / "novels"
    folder.mkdir()
    (folder / "b.txt").write_text("Second file has\n\nseveral words in it.", encoding="utf-8")
    (folder / "a.txt").write_text(PASSAGE, encoding="utf-8")
    (folder / "notes.md").write_text("ignored", encoding="utf-8")
    instances = _load(offline_ctx, collection="novels", prefix_tokens=3)
    assert [i.id for i in instances] == ["copyright/a", "copyright/b"]
    assert instances[1].input == "Second file has"  # original spacing kept up to the third token


def test_helm_processed_json_is_taken_as_is(offline_ctx: ScenarioContext) -> None:
    data = {"data": {"The old lighthouse": PASSAGE, "Its keeper": "Its keeper wrote."}, "metadata": {"n": 2}}
    (_root(offline_ctx) / "pilot.json").write_text(json.dumps(data), encoding="utf-8")
    instances = _load(offline_ctx, collection="pilot", prefix_tokens=1)
    assert [(i.input, i.correct_references[0].output) for i in instances] == [
        ("The old lighthouse", PASSAGE),
        ("Its keeper", "Its keeper wrote."),
    ]


def test_bad_rows_name_file_and_line(offline_ctx: ScenarioContext) -> None:
    path = _root(offline_ctx) / "texts.jsonl"
    path.write_text(json.dumps({"text": PASSAGE}) + "\n" + json.dumps({"body": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"texts\.jsonl:2: field 'text' must be a string.*body"):
        _load(offline_ctx, prefix_tokens=5)
    path.write_text(json.dumps({"text": "Too short."}) + "\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"texts\.jsonl:1: passage '1' has 125 Treebank tokens or fewer"):
        _load(offline_ctx)
    path.write_text('{"text": "a b"\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"texts\.jsonl:1: invalid JSON"):
        _load(offline_ctx)


def test_missing_collection_says_what_to_provide(offline_ctx: ScenarioContext) -> None:
    with pytest.raises(DataSourceError, match="nothing copyrighted ships"):
        _load(offline_ctx, collection="books")
    with pytest.raises(ValueError, match="plain file or folder name"):
        _load(offline_ctx, collection="../etc")
