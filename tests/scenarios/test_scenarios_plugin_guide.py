"""The scenario guide (CONTRIBUTING.md, "Add a scenario") is served by ``holistic.plugin`` alone:
every name it tells an author to use is exported there, its example imports nothing else, and a
file-reading scenario written from those names alone finds and reads its files."""

from __future__ import annotations

import ast
import enum
import re
from enum import IntEnum
from pathlib import Path

import holistic.plugin as plugin
from holistic.plugin import (
    CORRECT_TAG,
    TEST_SPLIT,
    DataFile,
    DataNeeds,
    FileScenario,
    Instance,
    Reference,
    ResolvedData,
    ScenarioContext,
    ScenarioInfo,
)

REPO = Path(__file__).resolve().parents[2]


def _guide_section() -> str:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index("### Add a scenario")
    return text[start : text.index("\n### ", start + 1)]


def test_every_name_the_scenario_guide_uses_is_exported_by_holistic_plugin() -> None:
    named = set(re.findall(r"`([A-Z][A-Za-z_]+)(?:\([^`]*\))?`", _guide_section()))
    assert {"BaseScenario", "FileScenario", "DataNeeds", "DataFile", "Download"} <= named
    missing = sorted(name for name in named if name not in plugin.__all__ and not hasattr(enum, name))
    assert missing == []


def test_the_guide_example_imports_only_holistic_plugin() -> None:
    tree = ast.parse((REPO / "docs" / "examples" / "scenario_reverse_words.py").read_text(encoding="utf-8"))
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {m for m in modules if m and m.startswith("holistic")} == {"holistic.plugin"}


class _Layout(IntEnum):
    CSV = 0
    TEXT = 1


class _WordsScenario(FileScenario):
    info = ScenarioInfo(name="guide_words", task="classification")

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "guide_words", layouts=((DataFile("words.csv"),), (DataFile("words.txt"),)), hint="put words.txt there"
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == _Layout.CSV:
            raise AssertionError("no CSV was written")
        words = data["words.txt"].read_text(encoding="utf-8").split()
        return [
            Instance(id=f"w{i}", input=word, references=(Reference(word[::-1], (CORRECT_TAG,)),), split=TEST_SPLIT)
            for i, word in enumerate(words)
        ]


def test_a_file_scenario_from_the_plugin_names_reads_the_layout_it_finds(tmp_path: Path) -> None:
    folder = tmp_path / "guide_words"
    folder.mkdir()
    (folder / "words.txt").write_text("apple river\n", encoding="utf-8")
    ctx = ScenarioContext(data_root=tmp_path, cache_dir=tmp_path / "cache", offline=True)
    instances = _WordsScenario().get_instances(ctx)
    assert [(i.input, i.references[0].output) for i in instances] == [("apple", "elppa"), ("river", "revir")]
