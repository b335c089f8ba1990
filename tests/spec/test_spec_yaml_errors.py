"""YAML syntax errors and file-level problems name the file, line and column (exit code 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.core.errors import SpecError
from holistic.spec import compile_spec


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "suite: demo\n"
        "models: [simple/echo]\n"
        "runs:\n"
        "  - scenario: arithmetic\n"
        "    args: {digits: 1\n"
        "  - scenario: arithmetic\n",
    )
    with pytest.raises(SpecError) as info:
        compile_spec(path)
    err = info.value
    assert err.exit_code == 2
    assert err.file == str(path)
    assert err.line == 6 and err.column is not None
    assert "YAML syntax error" in str(err)
    assert str(err).startswith(f"{path}:6:")
    # the unclosed mapping is pointed at too
    assert "line 5" in str(err)


def test_tab_indentation_is_a_located_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, "suite: demo\nruns:\n\t- scenario: arithmetic\n")
    with pytest.raises(SpecError) as info:
        compile_spec(path)
    assert info.value.line == 3
    assert info.value.column == 1


def test_duplicate_key_is_reported_at_the_second_occurrence(tmp_path: Path) -> None:
    path = write(tmp_path, "suite: demo\nsuite: other\nruns:\n  - scenario: arithmetic\n")
    with pytest.raises(SpecError) as info:
        compile_spec(path)
    assert info.value.line == 2
    assert "duplicate key 'suite'" in str(info.value)


def test_missing_file_and_non_mapping_document(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        compile_spec(tmp_path / "absent.yaml")
    path = write(tmp_path, "- just\n- a list\n")
    with pytest.raises(SpecError, match="must be a mapping") as info:
        compile_spec(path)
    assert info.value.line == 1
    empty = write(tmp_path, "# nothing\n", "empty.yaml")
    with pytest.raises(SpecError, match="empty"):
        compile_spec(empty)


def test_unquoted_date_is_rejected_with_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "suite: demo\nruns:\n  - scenario: arithmetic\n    args: {since: 2024-01-31}\n")
    with pytest.raises(SpecError, match="as a date; put it in quotes") as info:
        compile_spec(path)
    assert (info.value.line, info.value.column) == (4, 19)
    assert info.value.path == "runs[0].args.since"
