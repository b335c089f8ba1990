"""helm-summarize's output cache: a re-summarize after one run changed redoes only what depends on
that run, and writes the very files a from-scratch summarize writes; a damaged, edited or planted
cache entry is never trusted, only made again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from holistic.api.summarizing import SummarizeOptions, summarize
from holistic.results import SuiteReader
from holistic.results.output_cache import CACHE_FOLDER, KEY_FILE_ENV, OutputCache
from holistic.site import plots
from holistic.site.bundle import write_bundle
from holistic.summarize import replicates
from tests.support.calls import record_calls
from tests.support.fake_suite import FakeRun, rewrite_run, write_fake_suite

RUNS = [
    FakeRun(sc, f"model/{i}", skill=0.3 + 0.2 * i, num_instances=40, perturbations=("typos",), with_requests=True)
    for sc in ("alpha", "beta")
    for i in range(2)
]


@pytest.fixture(autouse=True)
def _own_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's secret in this test's own folder."""
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "secret" / "key"))


def _suite(out: Path) -> Path:
    suite = write_fake_suite(out, "s", RUNS)
    for reader in SuiteReader(suite).runs:
        write_bundle(reader)
    return suite


def _summarize(suite: Path, local_dir: Path | None = None) -> Path:
    result = summarize(suite, local_dir=local_dir, options=SummarizeOptions(num_bootstrap=20, jobs=1))
    assert result.site_index is not None
    return result.summary_dir.parent


def _outputs(derived: Path) -> dict[str, bytes]:
    """Every file of the summary and the site, by its path under them."""
    return {
        str(p.relative_to(derived)): p.read_bytes()
        for folder in ("summary", "site")
        for p in sorted((derived / folder).rglob("*"))
        if p.is_file()
    }


def _fresh(suite: Path, tmp_path: Path) -> dict[str, bytes]:
    """What a summarize with no cache at all writes for the suite as it is now."""
    return _outputs(_summarize(suite, local_dir=tmp_path / "fresh"))


def _count_drawn(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    drawn = {"plots": 0, "replicates": 0}
    pareto_plot, sub_run_replicates = plots._pareto_plot, replicates.sub_run_replicates

    def plot(job: plots._ParetoJob) -> dict[str, object]:
        drawn["plots"] += 1
        return pareto_plot(job)

    def reps(*args: object, **kwargs: object) -> object:
        drawn["replicates"] += 1
        return sub_run_replicates(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(plots, "_pareto_plot", plot)
    monkeypatch.setattr(replicates, "sub_run_replicates", reps)
    return drawn


def test_resummarize_after_a_rerun_redoes_that_run_only_and_writes_what_a_fresh_summarize_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path / "out")
    _summarize(suite)
    assert any((suite / CACHE_FOLDER).rglob("*"))
    drawn = _count_drawn(monkeypatch)
    _summarize(suite)
    assert drawn == {"plots": 0, "replicates": 0}  # nothing changed: nothing drawn again

    rewrite_run(tmp_path / "out", "s", RUNS[0], seed=7)
    write_bundle(SuiteReader(suite).run(RUNS[0].run_id))
    derived = _summarize(suite)
    assert drawn["plots"] == 1  # the rerun run's scenario only
    assert 0 < drawn["replicates"] <= 3  # that run's sub-runs (one per metric group that measures it)
    again = _outputs(derived)
    fresh = _fresh(suite, tmp_path)
    assert sorted(again) == sorted(fresh)
    assert [name for name in fresh if again[name] != fresh[name]] == []


def _entries(suite: Path) -> list[Path]:
    return sorted(p for p in (suite / CACHE_FOLDER).rglob("*") if p.is_file())


def _unattested(suite: Path) -> None:
    """Every bundle as if written elsewhere (no attestation): their scripts are parsed, and found sound."""
    for manifest in sorted((suite / "runs").glob("*/browser/manifest.json")):
        doc = json.loads(manifest.read_text(encoding="utf-8"))
        del doc["attest"]
        manifest.write_text(json.dumps(doc), encoding="utf-8")


def test_a_damaged_or_edited_cache_entry_is_made_again_never_used(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "out")
    _unattested(suite)
    _summarize(suite)
    entries = _entries(suite)
    kinds = {p.parent.name for p in entries}
    assert {
        "pareto_plot",
        "compare_data",
        "sound_scripts",
        "subrun_replicates",
        "trial_means",
        "site_pages",
        "file_digests",
        "stats_rows",
    } <= kinds  # (request totals come from the bundles: no entry)
    for k, entry in enumerate(entries):
        data = bytearray(entry.read_bytes())
        if k % 3 == 0:
            data[-1] ^= 0xFF  # a flipped byte
        elif k % 3 == 1:
            data = data[: len(data) // 2]  # truncated
        else:
            data = data.replace(b"<svg", b"<svg onload='alert(1)'")  # edited (or an empty entry, emptied)
            data = data if b"onload" in data else bytearray()
        entry.write_bytes(bytes(data))
    assert _outputs(_summarize(suite)) == _fresh(suite, tmp_path)
    assert b"onload" not in b"".join(_outputs(suite).values())


def test_a_cache_planted_in_a_suite_from_elsewhere_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries signed with another secret (a suite folder copied from another user, cache and all) are
    made again; so is an entry moved under another key or a link in an entry's place."""
    suite = _suite(tmp_path / "out")
    _summarize(suite)
    plot = next(p for p in _entries(suite) if p.parent.name == "pareto_plot")
    planted = plot.read_bytes().replace(b"</svg>", b"<script>alert(1)</script></svg>")
    plot.write_bytes(planted)
    others = [p for p in _entries(suite) if p.parent.name == "pareto_plot" and p != plot]
    shutil.copyfile(others[0], plot.with_name("0" * 64))
    os.replace(others[0], others[0].with_name(f"{others[0].name}.moved"))
    os.symlink(plot, others[0])
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "another-user" / "key"))
    drawn = _count_drawn(monkeypatch)
    derived = _summarize(suite)
    assert drawn["plots"] == 2  # every plot drawn again: none of the entries checks under this secret
    assert b"<script>alert" not in b"".join(_outputs(derived).values())
    assert _outputs(derived) == _fresh(suite, tmp_path)


def test_an_entry_reads_back_only_under_its_own_kind_key_and_secret(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path / "c", b"k" * 32, 0.0)
    key, other = "a" * 64, "b" * 64
    cache.put("pareto_plot", key, {"plot.svg": b"<svg/>", "n": b""})
    assert cache.get("pareto_plot", key) == {"plot.svg": b"<svg/>", "n": b""}
    shutil.copyfile(tmp_path / "c" / "pareto_plot" / key, tmp_path / "c" / "pareto_plot" / other)
    assert cache.get("pareto_plot", other) is None  # a valid entry under another key
    assert OutputCache(tmp_path / "c", b"j" * 32, 0.0).get("pareto_plot", key) is None  # another secret
    with pytest.raises(ValueError):
        cache.get("pareto_plot", "../" + key)


def test_no_cache_writes_no_cache(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "out")
    summarize(suite, options=SummarizeOptions(num_bootstrap=20, jobs=1, cache=False))
    assert not (suite / CACHE_FOLDER).exists()


def test_a_secret_that_is_not_the_users_own_file_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link in the secret's place, or a file that is not a secret, is not used: no cache, all computed."""
    target = tmp_path / "elsewhere"
    target.write_text("0" * 64, encoding="ascii")
    link = tmp_path / "secret" / "link"
    link.parent.mkdir()
    os.symlink(target, link)
    monkeypatch.setenv(KEY_FILE_ENV, str(link))
    assert OutputCache.beside(tmp_path) is None
    (tmp_path / "secret" / "short").write_text("abc", encoding="ascii")
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "secret" / "short"))
    assert OutputCache.beside(tmp_path) is None


def test_a_resummarize_takes_the_unchanged_pages_and_renders_the_changed(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "out")
    site = _summarize(suite) / "site"
    pages = {p: (site / p).stat().st_ino for p in ("index.html", f"runs/{RUNS[0].run_id}.html", "runs.html")}
    pages.update({f"runs/{r.run_id}.html": (site / f"runs/{r.run_id}.html").stat().st_ino for r in RUNS})
    _summarize(suite)
    assert {p: (site / p).stat().st_ino for p in pages} == pages  # nothing changed: every page taken

    rewrite_run(tmp_path / "out", "s", RUNS[0], seed=7)
    write_bundle(SuiteReader(suite).run(RUNS[0].run_id))
    _summarize(suite)
    now = {p: (site / p).stat().st_ino for p in pages}
    assert now[f"runs/{RUNS[0].run_id}.html"] != pages[f"runs/{RUNS[0].run_id}.html"]  # its run rendered again
    assert now[f"runs/{RUNS[2].run_id}.html"] == pages[f"runs/{RUNS[2].run_id}.html"]  # another scenario's: taken
    assert _outputs(suite) == _fresh(suite, tmp_path)


def test_a_page_edited_in_the_old_site_is_rendered_again_never_taken(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "out")
    site = _summarize(suite) / "site"
    page = site / f"runs/{RUNS[1].run_id}.html"
    before = page.stat()
    with page.open("r+b") as fh:  # edited in place, its size and modification time put back
        text = fh.read()
        fh.seek(0)
        fh.write(text.replace(b"<title>", b"<title>X", 1)[: len(text)])
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))
    planted = site / "runs.html"
    planted.unlink()
    planted.write_text("<script>alert(1)</script>", encoding="utf-8")  # replaced by another file

    _summarize(suite)
    assert b"<title>X" not in page.read_bytes()
    assert "alert" not in planted.read_text(encoding="utf-8")
    assert _outputs(suite) == _fresh(suite, tmp_path)


def _count_hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from holistic.results import manifest

    return record_calls(monkeypatch, manifest, "file_sha256", lambda path: str(path))


def test_run_files_unchanged_since_the_last_summarize_are_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holistic.results import digests
    from holistic.results.manifest import DamagedRunError

    monkeypatch.setattr(digests, "SETTLED_NS", 0)  # the suite was just written: record it anyway
    suite = _suite(tmp_path / "out")
    _summarize(suite)
    hashed = _count_hashed(monkeypatch)
    _summarize(suite)
    assert hashed == []

    stats = suite / "runs" / RUNS[1].run_id / "stats.parquet"
    before = stats.stat()
    data = bytearray(stats.read_bytes())
    data[len(data) // 2] ^= 0x01
    with stats.open("r+b") as fh:  # edited in place: same size, its modification time put back
        fh.write(bytes(data))
    os.utime(stats, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(DamagedRunError, match="sha256 mismatch"):
        _summarize(suite)
    assert str(stats) in hashed
