"""The structure of the package and of the tools: design/contracts.md's layering is the import
graph's, and no circle (package facades included), no module over 600 lines, no function over 100
and no branch on a provider's name comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import structure


def test_the_contracts_doc_shows_the_package_graph_of_the_code() -> None:
    report = structure.check()
    assert structure.documented_block() == structure.graph_block(report), (
        "design/contracts.md is out of date: run python -m tools.structure --update-doc"
    )


def test_the_layers_put_every_package_above_the_packages_it_imports() -> None:
    deps = {"holistic.a": set(), "holistic.b": {"holistic.a"}, "holistic.c": {"holistic.a", "holistic.b"}}
    assert structure.package_layers(deps).splitlines() == [
        "0  holistic.a  -> -",
        "1  holistic.b  -> a",
        "2  holistic.c  -> a, b",
    ]


def test_no_import_circles() -> None:
    report = structure.check()
    assert report.module_circles == [], report.module_circles
    assert report.package_circles == [], report.package_edges


def test_no_module_over_600_lines_and_no_function_over_100() -> None:
    report = structure.check()
    assert report.large_modules == [], report.large_modules
    assert report.long_functions == [], report.long_functions


def test_no_branch_on_a_provider_name_outside_the_providers() -> None:
    assert structure.check().provider_branches == []


def test_the_checker_finds_a_circle_a_long_function_and_a_provider_branch(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for folder in (package, package / "a", package / "b"):
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").write_text("")
    (package / "a" / "x.py").write_text("def f():\n    from pkg.b import y\n")
    body = "".join(f"    v{i} = {i}\n" for i in range(101))
    (package / "b" / "y.py").write_text("from pkg.a.x import f\n\ndef g():\n" + body + 'k = p == "huggingface"\n')
    report = structure.check(package)
    assert report.module_circles == [["pkg.a.x", "pkg.b.y"]]
    assert report.package_circles == [["pkg.a", "pkg.b"]]
    assert report.long_functions == [(102, "pkg.b.y.g")]
    assert report.provider_branches == ["pkg.b.y:105 compares with 'huggingface'"]


@pytest.mark.parametrize("root", [structure.TOOLS, structure.TESTS], ids=["tools", "tests"])
def test_the_tools_and_tests_have_no_circle_no_long_module_and_no_long_function(root: Path) -> None:
    report = structure.check(root, providers=False)
    assert not report.broken, (
        report.module_circles,
        report.package_circles,
        report.large_modules,
        report.long_functions,
    )


def test_a_submodule_importing_from_its_own_facade_is_a_circle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "a").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a" / "__init__.py").write_text("from pkg.a.x import f\nfrom pkg.a.y import g\n")
    (package / "a" / "x.py").write_text("from pkg.a import y\n\ndef f():\n    return y.g()\n")
    (package / "a" / "y.py").write_text("def g():\n    return 1\n")
    assert structure.check(package).module_circles == [["pkg.a", "pkg.a.x"]]
    # a sibling imported by its own name does not go through the facade
    (package / "a" / "x.py").write_text("import pkg.a.y as y\n\ndef f():\n    return y.g()\n")
    assert structure.check(package).module_circles == []
