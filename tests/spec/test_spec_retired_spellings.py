"""Spellings earlier versions accepted are errors naming the spelling that replaced them, at
the spec's line: selection ``fixed`` (now ``first``) and a user file's ``splits`` (now ``split_map``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.core.errors import SpecError
from holistic.spec import compile_spec

BASE = "suite: demo\nmodels: [simple/echo]\nruns:\n"


def _compile(tmp_path: Path, text: str) -> SpecError:
    path = tmp_path / "spec.yaml"
    path.write_text(BASE + text, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        compile_spec(path)
    return info.value


def test_selection_fixed_names_first(tmp_path: Path) -> None:
    err = _compile(tmp_path, "  - scenario: arithmetic\n    adaptation:\n      selection: fixed\n")
    assert "selection 'fixed' is no longer accepted: it is now spelled 'first'" in str(err)
    assert err.line == 6 and err.path == "runs[0].adaptation.selection"


def test_selection_fixed_in_a_multiplying_list_names_first(tmp_path: Path) -> None:
    err = _compile(tmp_path, "  - scenario: arithmetic\n    adaptation:\n      selection: [helm, fixed]\n")
    assert "it is now spelled 'first'" in str(err) and err.line == 6


def test_a_user_files_splits_names_split_map(tmp_path: Path) -> None:
    (tmp_path / "qa.jsonl").write_text('{"q": "a", "a": "b", "s": "dev"}\n', encoding="utf-8")
    err = _compile(
        tmp_path,
        "  - scenario: file\n"
        "    args:\n"
        "      path: qa.jsonl\n"
        "      fields: {input: q, output: a, split: s}\n"
        "      splits: {dev: train}\n",
    )
    assert "argument 'splits' is no longer accepted: it is now named 'split_map'" in str(err)
    assert err.line == 8 and err.path == "runs[0].args.splits"
