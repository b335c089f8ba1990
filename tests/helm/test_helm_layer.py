"""HELM compatibility is one layer: ``protocol: helm`` is resolved once, by the spec compiler, into
named behaviours; the rest of the library reads those and never the protocol's name, and does not
import the HELM package."""

from __future__ import annotations

import ast
from dataclasses import fields, replace
from pathlib import Path

import pytest

from holistic.core.errors import SpecError
from holistic.core.specs import AdapterSpec, ProtocolBehaviour
from holistic.helm.proofs import records
from holistic.spec import compile_spec
from holistic.spec.protocol import HOLISTIC_BEHAVIOUR

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "holistic"
HELM_LAYER = PACKAGE / "helm"
DOORS = (PACKAGE / "spec", PACKAGE / "cli", PACKAGE / "api")
"""The spec compiler resolves the protocol and reads the proofs; ``helm-import`` is a command, and
:func:`holistic.api.import_helm` the call it maps onto."""


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))]


def _inside(path: Path, *folders: Path) -> bool:
    return any(folder in path.parents for folder in folders)


def test_only_the_spec_compiler_the_api_and_the_cli_import_the_helm_package() -> None:
    found = []
    for path, tree in _modules():
        if _inside(path, HELM_LAYER, *DOORS):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            found += [
                f"{path.relative_to(REPO)}:{node.lineno}" for n in names if n.split(".")[:2] == ["holistic", "helm"]
            ]
    assert found == []


def _compares_with_helm(node: ast.Compare) -> bool:
    def helm(value: ast.expr) -> bool:
        if isinstance(value, ast.Constant):
            return value.value == "helm"
        if isinstance(value, ast.Tuple | ast.List | ast.Set):
            return any(helm(v) for v in value.elts)
        return False

    return any(helm(v) for v in (node.left, *node.comparators))


def test_no_branch_on_the_protocols_name_outside_the_helm_layer_and_the_compiler() -> None:
    found = [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for path, tree in _modules()
        if not _inside(path, HELM_LAYER, PACKAGE / "spec")
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and _compares_with_helm(node)
    ]
    assert found == []
    # and the check sees one
    assert _compares_with_helm(ast.parse('p in ("helm", "x")', mode="eval").body)  # type: ignore[arg-type]


def _runs(tmp_path: Path, protocol: str, scenario: str, args: str = "{}") -> list[AdapterSpec]:
    path = tmp_path / "spec.yaml"
    path.write_text(
        f"suite: s\nprotocol: {protocol}\nmodels: [simple/echo]\nruns:\n  - scenario: {scenario}\n    args: {args}\n",
        encoding="utf-8",
    )
    return [run.adapter for run in compile_spec(path).runs]


def test_the_compiler_resolves_each_protocol_into_its_behaviours(tmp_path: Path) -> None:
    (helm,) = _runs(tmp_path, "helm", "boolq")
    (own,) = _runs(tmp_path, "holistic", "boolq")
    assert helm.behaviour == ProtocolBehaviour(keep_unchanged_variants=True)  # HELM's passage input
    assert own.behaviour == HOLISTIC_BEHAVIOUR
    # every behaviour differs between the two protocols but the scenario's own
    differ = {
        f.name for f in fields(ProtocolBehaviour) if getattr(helm.behaviour, f.name) != getattr(own.behaviour, f.name)
    }
    assert differ == {f.name for f in fields(ProtocolBehaviour)}


@pytest.mark.parametrize(("mode", "kept"), [("closedbook", False), ("openbook_longans", True)])
def test_unchanged_variants_are_kept_where_helms_loader_gives_a_passage(tmp_path: Path, mode: str, kept: bool) -> None:
    (adapter,) = _runs(tmp_path, "helm", "natural_qa", f"{{mode: {mode}}}")
    assert adapter.behaviour.keep_unchanged_variants is kept


def test_the_behaviours_are_not_spec_options_and_leave_the_run_id_alone(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("suite: s\nmodels: [simple/echo]\nruns:\n  - scenario: boolq\n", encoding="utf-8")
    (run,) = compile_spec(path).runs
    assert "behaviour" not in run.canonical()["adapter"]
    plain = replace(run, adapter=AdapterSpec(**run.adapter.as_dict()))
    assert (
        plain.adapter.behaviour != run.adapter.behaviour and plain.run_id == run.run_id
    )  # the id hashes the options; the behaviours follow from them
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "suite: s\nmodels: [simple/echo]\nruns:\n  - scenario: boolq\n    adaptation: {behaviour: {}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SpecError, match="behaviour"):
        compile_spec(bad)


def test_every_behaviour_is_documented_with_its_helm_reason() -> None:
    page = (REPO / "docs" / "helm-layer.md").read_text(encoding="utf-8")
    for field in fields(ProtocolBehaviour):
        assert f"`{field.name}`" in page, field.name


def test_the_proofs_name_no_path_of_the_source_tree() -> None:
    for name, record in records().items():
        if record.proof is not None:
            assert not record.proof.test.startswith("tests/"), name
            assert record.proof.golden is None or not record.proof.golden.startswith("tests/"), name
