"""The compare-systems views' data written by worker processes (which read the runs' predictions from
their browser bundles) is the data written in one process, byte for byte; a bundle's predictions file
that is not the one its manifest lists is never used; and the rows of a comparison."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from holistic.api.summarizing import SummarizeOptions, summarize
from holistic.results import SuiteReader
from holistic.results.layout import BROWSER_DIR
from holistic.site.browser import MAX_FIELD_CHARS, build_browser
from holistic.site.bundle import MANIFEST_FILE, PREDICTIONS_FILE, write_bundle
from holistic.site.compare import Comparison, comparisons, write_comparison
from holistic.site.compare_data import CompareJob, compare_into
from holistic.summarize.load import load_suite
from tests.support.fake_suite import FakeRun, write_fake_suite

MODELS = ("model/a", "model/b", "model/c")
RUNS = [FakeRun(sc, m, skill=0.4, num_instances=30, with_requests=True) for sc in ("x", "y", "z") for m in MODELS]


def _suite(out: Path) -> Path:
    """The suite as helm-run leaves it: each run with its browser bundle."""
    suite = write_fake_suite(out, "s", RUNS)
    assert all(write_bundle(reader) is not None for reader in SuiteReader(suite).runs)
    return suite


def _compare_files(suite: Path, derived: Path, jobs: int) -> dict[str, bytes]:
    """The compare-systems data and pages of the site a summarize with ``jobs`` processes writes."""
    summarize(suite, local_dir=derived, options=SummarizeOptions(num_bootstrap=10, jobs=jobs))
    site = derived / "s" / "site"
    return {
        str(p.relative_to(site)): p.read_bytes()
        for folder in ("data/compare", "compare")
        for p in sorted((site / folder).rglob("*"))
        if p.is_file()
    }


def test_workers_write_the_compare_data_one_process_writes(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    alone = _compare_files(suite, tmp_path / "one", jobs=1)
    assert sum(name.endswith("/index.js") for name in alone) == 3  # one comparison per scenario
    assert sum(name.endswith("/chunk_0000.js") for name in alone) == 3
    assert _compare_files(suite, tmp_path / "two", jobs=2) == alone
    assert _compare_files(suite, tmp_path / "two", jobs=2) == alone  # again, from the output cache


def _tamper(suite: Path) -> str:
    """One run's bundled predictions changed (its manifest left as it was); returns the text put in."""
    reader = SuiteReader(suite).runs[0]
    assert isinstance(reader.folder, Path)
    path = reader.folder / BROWSER_DIR / PREDICTIONS_FILE
    predictions = json.loads(path.read_text(encoding="utf-8"))
    for record in predictions.values():
        record["prediction"] = {"text": "planted answer", "parsed": None, "choice_text": None}
        record["correct"] = 1
    path.write_text(json.dumps(predictions), encoding="utf-8")
    return "planted answer"


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_tampered_predictions_file_is_not_used(tmp_path: Path, jobs: int) -> None:
    clean = _compare_files(_suite(tmp_path / "clean"), tmp_path / "clean_out", jobs=1)
    suite = _suite(tmp_path / "suite")
    planted = _tamper(suite)
    found = _compare_files(suite, tmp_path / "out", jobs=jobs)
    assert not any(planted.encode("utf-8") in data for data in found.values())
    assert found == clean
    for reader in SuiteReader(suite).runs:  # the damaged bundle was built again
        assert isinstance(reader.folder, Path)
        manifest = json.loads((reader.folder / BROWSER_DIR / MANIFEST_FILE).read_text(encoding="utf-8"))
        entry = next(e for e in manifest["files"] if e["name"] == PREDICTIONS_FILE)
        assert (reader.folder / BROWSER_DIR / PREDICTIONS_FILE).stat().st_size == entry["size"]


def _answer(text: str | None, correct: int, *, choice: str | None = None, parsed: str | None = None) -> dict[str, Any]:
    prediction = {"text": text, "parsed": parsed, "choice_text": choice}
    return {"input": "q", "references": [], "correct": correct, "prediction": prediction, "value": float(correct)}


def _index(out: Path) -> dict[str, Any]:
    text = (out / "index.js").read_text(encoding="utf-8")
    found = re.fullmatch(r"HOLISTIC_COMPARE_INDEX\((.*)\);\n", text, re.DOTALL)
    assert found is not None
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_a_comparison_counts_right_answers_and_tells_differing_ones(tmp_path: Path) -> None:
    comparison = Comparison("c", "sc", {}, ("a", "b", "c"), ("ra", "rb", "rc"), "exact_match")
    predictions = {
        "ra": {"same": _answer(" Paris ", 1), "case": _answer("Yes", 1), "only_a": _answer("x", 0)},
        "rb": {"same": _answer("paris", 1), "case": _answer("no", 0), "choice": _answer("junk", 1, choice="B")},
        "rc": {"same": _answer("PARIS\n", 0), "case": _answer("YES", 1), "choice": _answer("b", 0, parsed="b")},
    }
    assert write_comparison(tmp_path, comparison, predictions) == 4
    index = _index(tmp_path)
    # instances in the order the runs first hold them; [chunk, how many right, whether the answers differ]
    assert index["rows"] == [[0, 2, 0], [0, 2, 1], [0, 0, 0], [0, 1, 0]]
    chunk = (tmp_path / "chunk_0000.js").read_text(encoding="utf-8")
    records = json.loads(chunk[len("HOLISTIC_COMPARE_CHUNK(0,") : -len(");\n")])["records"]
    assert [r["id"] for r in records] == ["same", "case", "only_a", "choice"]
    assert records[2]["answers"][1:] == [None, None]
    assert records[3]["answers"][0] is None
    assert records[3]["answers"][1] == {
        "correct": 1,
        "prediction": predictions["rb"]["choice"]["prediction"],
        "value": 1.0,
    }


def test_predictions_handed_over_give_the_data_read_from_bundles(tmp_path: Path) -> None:
    """A run without a usable bundle hands its predictions (built from its files) to the comparison's
    job; the others are read from their bundles: the same files as when every run's are read."""
    suite = SuiteReader(_suite(tmp_path / "suite"))
    infos = load_suite(suite).runs
    comparison = comparisons(infos, {r.run_id: r.model for r in infos})[0]
    runs = tuple((suite.run(r), "exact_match") for r in comparison.run_ids)
    first, metric = runs[0]
    built = build_browser(first, tmp_path / "built", metric).predictions
    written = {}
    for name, given in (("read", {}), ("given", {comparison.run_ids[0]: built})):
        job = CompareJob(tmp_path / name, comparison, runs, MAX_FIELD_CHARS, None, None, given)
        assert compare_into(job) == 30
        written[name] = {p.name: p.read_bytes() for p in sorted((tmp_path / name).iterdir())}
    assert written["given"] == written["read"]
    assert set(written["read"]) == {"index.js", "chunk_0000.js"}
