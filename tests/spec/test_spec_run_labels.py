"""A run entry's own ``name:``: checked at its line, filled per run, suffixed when the entry makes
several runs, unique in the suite, kept in run_spec.json and never part of the run id."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from holistic.core.errors import SpecError
from holistic.core.types import RunSpec
from holistic.spec import compile_spec
from tests.cli.helm_run_helpers import capped


def _compile(tmp_path: Path, runs: str, models: str = "[simple/echo]") -> tuple[RunSpec, ...]:
    path = tmp_path / "spec.yaml"
    path.write_text(f"suite: named\nmodels: {models}\nruns:\n{runs}", encoding="utf-8")
    return compile_spec(path).runs


def _error(tmp_path: Path, runs: str, models: str = "[simple/echo]") -> SpecError:
    with pytest.raises(SpecError) as info:
        _compile(tmp_path, runs, models)
    return info.value


def test_a_single_run_is_shown_by_its_name_and_its_id_ignores_the_label(tmp_path: Path) -> None:
    (run,) = _compile(tmp_path, "  - scenario: arithmetic\n    name: sums (one digit)\n    args: {digits: 1}\n")
    assert run.label == "sums (one digit)"
    assert run.canonical()["label"] == "sums (one digit)"
    assert run.name.startswith("sums (one digit):digits=1,")
    assert dataclasses.replace(run, label=None).run_id == run.run_id  # identity is what runs, not its label


def test_a_runs_naming_facts_are_the_same_from_the_run_as_from_its_run_spec_json(tmp_path: Path) -> None:
    import json

    from holistic.core.naming import RunFacts, display_names

    runs = _compile(
        tmp_path,
        "  - scenario: arithmetic\n    args: {digits: [1, 2]}\n    adaptation: {max_train_instances: [0, 2]}\n"
        "  - scenario: arithmetic\n    name: 'mine {digits}'\n    args: {digits: 3}\n",
    )
    from_runs = display_names([RunFacts.of_run(r) for r in runs])
    from_files = display_names([RunFacts.of(json.loads(json.dumps(r.canonical())), r.run_id) for r in runs])
    assert from_runs == from_files and "mine 3" in from_runs.values()


def test_an_unnamed_run_has_no_label_in_its_spec(tmp_path: Path) -> None:
    (run,) = _compile(tmp_path, "  - scenario: arithmetic\n    args: {digits: 1}\n")
    assert run.label is None and "label" not in run.canonical()


def test_an_entry_of_several_runs_suffixes_what_tells_them_apart(tmp_path: Path) -> None:
    runs = _compile(
        tmp_path,
        "  - scenario: arithmetic\n    name: sums\n    args: {digits: [1, 2]}\n"
        "    adaptation: {max_train_instances: [0, 2]}\n",
        models="[simple/echo, simple/no-logprobs]",
    )
    labels = [r.label for r in runs]
    assert len(set(labels)) == len(runs) == 8
    assert "sums (digits=1) · simple/echo [max_train_instances=0]" in labels
    assert "sums (digits=2) · simple/no-logprobs [max_train_instances=2]" in labels


def test_a_template_names_each_run_and_what_it_names_is_not_repeated(tmp_path: Path) -> None:
    runs = _compile(
        tmp_path,
        "  - scenario: arithmetic\n    name: '{digits}-digit sums by {model}'\n    args: {digits: [1, 2]}\n",
        models="[simple/echo, simple/no-logprobs]",
    )
    assert [r.label for r in runs] == [
        "1-digit sums by simple/echo",
        "1-digit sums by simple/no-logprobs",
        "2-digit sums by simple/echo",
        "2-digit sums by simple/no-logprobs",
    ]
    assert runs[0].name.startswith("1-digit sums by simple/echo:digits=1,")


def test_a_placeholder_may_name_an_adaptation_field(tmp_path: Path) -> None:
    runs = _compile(
        tmp_path,
        "  - scenario: arithmetic\n    name: 'sums {max_train_instances}-shot'\n"
        "    adaptation: {max_train_instances: [0, 3]}\n",
    )
    assert [r.label for r in runs] == ["sums 0-shot", "sums 3-shot"]


def test_an_unknown_placeholder_is_an_error_at_the_name(tmp_path: Path) -> None:
    err = _error(tmp_path, "  - scenario: arithmetic\n    args: {digits: 1}\n    name: 'sums {digts}'\n")
    assert (err.line, err.path) == (6, "runs[0].name")
    assert "{digts} is neither an argument of the scenario" in str(err) and "digits" in str(err)
    assert str(err).startswith(str(tmp_path / "spec.yaml"))


def test_a_stray_brace_is_an_error_at_the_name(tmp_path: Path) -> None:
    err = _error(tmp_path, "  - scenario: arithmetic\n    name: 'sums {digits'\n")
    assert (err.line, err.path) == (5, "runs[0].name")
    assert "brace" in str(err)


def test_unsafe_characters_are_a_schema_error_at_the_name(tmp_path: Path) -> None:
    err = _error(tmp_path, "  - scenario: arithmetic\n    name: 'sums; rm -rf *'\n")
    assert (err.line, err.path) == (5, "runs[0].name")
    err = _error(tmp_path, '  - scenario: arithmetic\n    name: "two\\nlines"\n')
    assert (err.line, err.path) == (5, "runs[0].name")


def test_a_name_over_80_characters_is_refused_at_its_line_within_the_caps(tmp_path: Path) -> None:
    """The limit on a name's length, under the hostile-input caps: a 100,000-character name stops
    helm-run at the name, saying the limit, before anything is written."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"suite: named\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n    name: {'a' * 100_000}\n",
        encoding="utf-8",
    )
    done = capped("holistic.cli.run", [str(spec), "--output-dir", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "spec.yaml:5:11: at runs[0].name:" in done.stderr
    assert "of at most 80 characters" in done.stderr
    assert len(done.stderr) < 2_000  # the name is not echoed whole
    assert not (tmp_path / "out").exists()


def test_two_entries_with_one_name_is_an_error_at_the_second(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        "  - scenario: arithmetic\n    name: sums\n    args: {digits: 1}\n"
        "  - scenario: arithmetic\n    name: sums\n    args: {digits: 2}\n",
    )
    assert (err.line, err.path) == (8, "runs[1].name")
    assert "run name 'sums' is also the name of a run of runs[0]" in str(err)


def test_a_name_may_not_take_an_unnamed_runs_name(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        "  - scenario: arithmetic\n    args: {digits: 1}\n"
        "  - scenario: arithmetic\n    name: arithmetic (digits=1) · simple/echo\n    args: {digits: 2}\n",
    )
    assert err.path == "runs[1].name" and err.line == 7


def test_two_entries_differing_only_in_perturbations_need_names_that_differ(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        "  - scenario: arithmetic\n    name: sums\n    perturbations: [typos]\n    metrics: [accuracy, robustness]\n"
        "  - scenario: arithmetic\n    name: sums\n    metrics: [accuracy]\n",
    )
    assert err.path == "runs[1].name"
