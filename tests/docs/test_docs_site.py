"""The README stays a short front door to the docs site, and the site's pages and examples hold.

``make docs`` (part of ``make test``) builds the site with ``mkdocs build --strict``, which
fails on a broken link or anchor; these tests check what a build does not: the README's size
and its two set-up commands, that every page is reachable from the navigation, and that the
run specs the README and the pages show compile.
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
from collections.abc import Collection
from pathlib import Path

import pytest
import yaml

from holistic.spec import compile_spec

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README = REPO / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks(text: str, *languages: str) -> list[str]:
    return [body for lang, body in FENCE.findall(text) if lang in languages]


def _commands(block: str) -> list[str]:
    """The commands of a shell block, comments and blank lines left out."""
    lines = (line.split("#", 1)[0].strip() for line in block.splitlines())
    return [line for line in lines if line]


def test_readme_is_short_and_opens_with_exactly_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, "the README is a front door: move detail into docs/"
    shell = _blocks(text, "sh", "bash", "shell", "console")
    assert shell, "the README shows its set-up commands in a shell block"
    assert _commands(shell[0]) == ["make demo", "make test"]
    assert [c for block in shell for c in _commands(block)] == ["make demo", "make test"]
    # no dated measurement logs: those live on the benchmarks pages
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text)


def test_make_test_builds_the_docs_strictly() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    rules = dict(re.findall(r"^([\w-]+):([^\n=]*)$", makefile, re.M))
    assert "docs" in rules["test"].split(), "make test must build the docs"
    recipe = makefile.split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert "mkdocs build --strict" in recipe


def test_readme_links_lead_to_files_that_exist() -> None:
    text = README.read_text(encoding="utf-8")
    targets = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert targets
    missing = [t for t in targets if t and not (REPO / t).exists()]
    assert not missing


def _nav_pages(entry: object) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, dict):
        return [page for value in entry.values() for page in _nav_pages(value)]
    if isinstance(entry, list):
        return [page for value in entry for page in _nav_pages(value)]
    return []


def test_every_docs_page_is_in_the_navigation_and_every_entry_is_a_page() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    assert len(nav) == len(set(nav)), "a page is listed twice"
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert set(nav) == pages


def test_the_extending_page_includes_contributing_instead_of_copying_it() -> None:
    page = (DOCS / "extending.md").read_text(encoding="utf-8")
    assert '--8<-- "CONTRIBUTING.md"' in page
    lines = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8").splitlines()
    copied = [h for h in lines if h.startswith("#") and h in page.splitlines()]
    assert not copied, f"CONTRIBUTING.md's text is copied into docs/extending.md: {copied}"


def _without_comments(block: str) -> str:
    return "\n".join(line.split(" #", 1)[0] for line in block.splitlines())


def _complete_specs() -> list[tuple[str, str]]:
    """Every YAML block of the README and the pages that is a whole run spec (no placeholders)."""
    found = []
    for path in [README, *sorted(DOCS.rglob("*.md"))]:
        for block in _blocks(path.read_text(encoding="utf-8"), "yaml"):
            if block.startswith("suite:") and "..." not in _without_comments(block):
                found.append((path.relative_to(REPO).as_posix(), block))
    return found


SPECS = _complete_specs()


def test_the_readme_and_the_pages_show_whole_run_specs() -> None:
    sources = {source for source, _ in SPECS}
    assert {"README.md", "docs/run-specs.md"} <= sources


@pytest.mark.parametrize(("source", "block"), SPECS, ids=[source for source, _ in SPECS])
def test_every_whole_run_spec_shown_in_the_docs_compiles(tmp_path: Path, source: str, block: str) -> None:
    # the README's own-data example reads a file shipped beside runspecs/my_dataset.yaml
    shutil.copytree(REPO / "runspecs" / "data", tmp_path / "data")
    spec = tmp_path / "spec.yaml"
    spec.write_text(block, encoding="utf-8")
    suite = compile_spec(spec)
    assert suite.runs, source


def _python_blocks() -> list[tuple[str, str]]:
    return [
        (path.relative_to(REPO).as_posix(), block)
        for path in [README, *sorted(DOCS.rglob("*.md"))]
        for block in _blocks(path.read_text(encoding="utf-8"), "python")
    ]


def _names_used(tree: ast.AST, modules: Collection[str]) -> list[tuple[str, str]]:
    """(module, name) for every ``module.name`` and ``from module import name`` in ``tree``."""
    used = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            used.append((node.value.id, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "holistic":
            used += [(node.module, alias.name) for alias in node.names]
    return used


def test_the_python_the_readme_and_the_pages_show_names_what_the_api_has() -> None:
    aliases = {"holistic": "holistic", "api": "holistic.api"}  # `from holistic import api`, as the pages write it
    blocks = _python_blocks()
    assert {"README.md", "docs/python-api.md"} <= {source for source, _ in blocks}
    missing = []
    for source, block in blocks:
        tree = ast.parse(block, filename=source)  # a syntax error fails here, naming the page
        for module, name in _names_used(tree, aliases):
            if not hasattr(importlib.import_module(aliases.get(module, module)), name):
                missing.append(f"{source}: {module}.{name}")
    assert not missing
