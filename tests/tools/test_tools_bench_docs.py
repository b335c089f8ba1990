"""The benchmarks' ``--write-docs``: their figures, dated, between the markers of their docs page."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest

from tools.bench.docs import figures, markers, table, write_results

DAY = dt.date(2026, 12, 3)


def test_a_new_page_gets_a_title_the_markers_and_the_dated_table(tmp_path: Path) -> None:
    page = write_results(
        "models", [{"engine": "llama_cpp", "warm_start_s": 1.23456}], docs=tmp_path, when=DAY, command="x"
    )
    text = page.read_text(encoding="utf-8")
    start, end = markers("models")
    assert page == tmp_path / "models.md" and text.startswith("# Benchmark: models\n")
    block = text.split(start)[1].split(end)[0]
    assert "Measured 2026-12-03 on " in block and "with `x`" in block
    assert "| engine | warm_start_s |\n|---|---|\n| llama_cpp | 1.235 |" in block


def test_the_figures_replace_only_what_stands_between_the_markers(tmp_path: Path) -> None:
    start, end = markers("summarize")
    page = tmp_path / "summarize.md"
    page.write_text(f"# Summarize\n\nProse before.\n\n{start}\nold figures\n{end}\n\nProse after.\n", encoding="utf-8")
    write_results("summarize", figures({"wall_s": 80.5, "site": {"pages": 12, "ok": True}}), docs=tmp_path, when=DAY)
    text = page.read_text(encoding="utf-8")
    assert "old figures" not in text and text.count(start) == text.count(end) == 1
    assert text.startswith("# Summarize\n\nProse before.\n\n") and text.endswith(f"{end}\n\nProse after.\n")
    assert "| wall_s | 80.5 |" in text and "| site.pages | 12 |" in text and "| site.ok | yes |" in text


def test_a_page_without_markers_gets_them_at_its_end(tmp_path: Path) -> None:
    page = tmp_path / "api.md"
    page.write_text("# API\n\nHow it was measured.\n", encoding="utf-8")
    write_results("api", [{"figure": "a|b", "value": None}], docs=tmp_path, when=DAY)
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# API\n\nHow it was measured.\n\n<!-- results: api -->\n")
    assert "| a\\|b | - |" in table([{"figure": "a|b", "value": None}]) and text.endswith(
        "<!-- end of results: api -->\n"
    )


def test_a_benchmark_writes_its_figures_beside_another_ones_on_that_page(tmp_path: Path) -> None:
    page = tmp_path / "summarize.md"
    first, last = markers("summarize")
    page.write_text(f"# Summarize\n\n{first}\nours\n{last}\n", encoding="utf-8")
    written = write_results("helm_summarize", [{"figure": "x", "value": 1}], docs=tmp_path, when=DAY, page="summarize")
    text = written.read_text(encoding="utf-8")
    start, end = markers("helm_summarize")
    assert written == page and not (tmp_path / "helm_summarize.md").exists()
    assert f"{first}\nours\n{last}\n" in text and text.index(last) < text.index(start) < text.index(end)


def test_the_command_on_the_page_names_no_path_of_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "out.json").write_text("{}", encoding="utf-8")
    argv = ["bench.py", "--work", str(tmp_path), f"--out={tmp_path / 'out.json'}", "--repeat", "3", "~/nowhere.json"]
    monkeypatch.setattr(sys, "argv", argv)
    page = write_results("demo", [{"figure": "runs", "value": 5}], docs=tmp_path, when=dt.date(2026, 12, 7))
    text = page.read_text(encoding="utf-8")
    assert "--work DIR --out=FILE --repeat 3 FILE" in text
    assert str(tmp_path) not in text
