"""Each run's browser bundle: written by helm-run, linked (not rebuilt) by helm-summarize, rebuilt
when stale, damaged or tampered with, never followed out of its run folder; the site is the same
file for file whichever way its data came."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from holistic.api.summarizing import SummarizeOptions, summarize
from holistic.cli.run import main as helm_run
from holistic.results import SuiteReader
from holistic.results.layout import BROWSER_DIR
from holistic.results.output_cache import attestation, user_secret
from holistic.site import bundle
from holistic.site.bundle import bundle_is_current, write_bundle
from tests.support.calls import record_calls
from tests.support.fake_suite import FakeRun, rewrite_run, write_fake_suite

RUNS = [
    FakeRun("sc", f"model/{i}", skill=0.3 + 0.2 * i, num_instances=300, perturbations=("typos",), with_requests=True)
    for i in range(2)
] + [FakeRun("solo", "model/0", num_instances=20, with_requests=True)]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _summarize(suite: Path, max_field_chars: int = 100_000, jobs: int = 1) -> Path:
    result = summarize(suite, options=SummarizeOptions(num_bootstrap=10, jobs=jobs, max_field_chars=max_field_chars))
    assert result.site_index is not None
    return result.site_index.parent


def _fresh_site(suite: Path, tmp_path: Path) -> dict[str, bytes]:
    """The site a from-scratch summarize of the same results makes (no bundle, no earlier site)."""
    copy = tmp_path / "fresh" / suite.name
    shutil.copytree(suite, copy, ignore=shutil.ignore_patterns(BROWSER_DIR, "site", "summary"))
    return _tree(_summarize(copy))


def suite_with_bundles(tmp_path: Path, runs: list[FakeRun]) -> Path:
    """A fake suite of ``runs`` in ``tmp_path/out``, each run's bundle written as helm-run writes it."""
    suite = write_fake_suite(tmp_path / "out", "s", runs)
    for reader in SuiteReader(suite).runs:
        write_bundle(reader)
    return suite


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return suite_with_bundles(tmp_path, RUNS)


def _bundle(suite: Path, run: FakeRun) -> Path:
    return suite / "runs" / run.run_id / BROWSER_DIR


def _no_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an instance browser was built although its bundle is current")

    monkeypatch.setattr(bundle, "build_browser", refuse)
    monkeypatch.setattr(bundle, "page_facts", refuse)


SPEC = """\
suite: tiny
models: [simple/echo]
defaults:
  max_eval_instances: 4
  adaptation: {max_train_instances: 2}
  metrics: [accuracy, efficiency]
runs:
  - scenario: arithmetic
    args: {digits: [1, 2], num_train: 10, num_test: 20}
"""


def test_helm_run_writes_each_runs_bundle(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    assert helm_run([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    readers = SuiteReader(tmp_path / "out" / "tiny").runs
    assert len(readers) == 2
    for reader in readers:
        assert isinstance(reader.folder, Path)
        assert bundle_is_current(reader)
        assert (reader.folder / BROWSER_DIR / "index.js").is_file()


def test_a_current_bundle_is_linked_not_rebuilt(suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = _fresh_site(suite, tmp_path)
    _no_building(monkeypatch)
    site = _summarize(suite)
    assert _tree(site) == fresh
    for run in RUNS:
        linked = site / "data" / run.run_id / "chunk_0000.js"
        assert linked.stat().st_ino == (_bundle(suite, run) / "chunk_0000.js").stat().st_ino


def test_a_stale_bundle_is_rebuilt(suite: Path, tmp_path: Path) -> None:
    run = RUNS[0]
    old = tmp_path / "old-bundle"
    shutil.copytree(_bundle(suite, run), old)
    rewrite_run(tmp_path / "out", "s", run, seed=7)  # a rerun: new results (its bundle removed)
    shutil.copytree(old, _bundle(suite, run))  # and the old bundle put back beside them
    site = _summarize(suite)
    assert _tree(site) == _fresh_site(suite, tmp_path)
    assert (_bundle(suite, run) / "manifest.json").read_bytes() != (old / "manifest.json").read_bytes()
    assert bundle_is_current(SuiteReader(suite).run(run.run_id))


def test_another_field_limit_rebuilds_the_bundle(suite: Path) -> None:
    site = _summarize(suite, max_field_chars=20)
    index = (site / "data" / RUNS[0].run_id / "chunk_0000.js").read_text(encoding="utf-8")
    assert "truncated here" in index
    assert not bundle_is_current(SuiteReader(suite).run(RUNS[0].run_id))  # kept for the last limit asked


def _rewrite(folder: Path, name: str, data: bytes) -> None:
    """Replace a bundle file and make its manifest agree (what a deliberate tamperer would do)."""
    (folder / name).write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["files"]:
        if entry["name"] == name:
            entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _tamper_script(folder: Path) -> None:
    text = (folder / "chunk_0000.js").read_text(encoding="utf-8")
    _rewrite(folder, "chunk_0000.js", ("window.stolen=document.cookie;" + text).encode("utf-8"))


def _tamper_call(folder: Path) -> None:
    text = (folder / "chunk_0000.js").read_text(encoding="utf-8")
    _rewrite(folder, "chunk_0000.js", text.replace("HOLISTIC_CHUNK(0,", "HOLISTIC_CHUNK(0,alert(1),").encode())


def _nested_too_deep(folder: Path) -> None:
    _rewrite(folder, "chunk_0000.js", b"HOLISTIC_CHUNK(0," + b"[" * 200_000 + b"]" * 200_000 + b");\n")


def _truncate(folder: Path) -> None:
    (folder / "chunk_0001.js").write_bytes((folder / "chunk_0001.js").read_bytes()[:1000])


def _bad_manifest(folder: Path) -> None:
    (folder / "manifest.json").write_text("{not json", encoding="utf-8")


def _escaping_name(folder: Path) -> None:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"][0]["name"] = "../../../../outside.js"
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _lying_predictions(folder: Path) -> None:
    _rewrite(folder, "predictions.json", b'{"id000000": "not a record"}')


def _lying_page(folder: Path) -> None:
    _rewrite(folder, "page.json", b'{"stats_table": [], "examples": "<script>", "haystack": 1}')


@pytest.mark.parametrize(
    "damage",
    [
        _tamper_script,
        _tamper_call,
        _nested_too_deep,
        _truncate,
        _bad_manifest,
        _escaping_name,
        _lying_predictions,
        _lying_page,
    ],
)
def test_a_damaged_or_tampered_bundle_is_rebuilt_not_trusted(suite: Path, tmp_path: Path, damage: object) -> None:
    assert callable(damage)
    damage(_bundle(suite, RUNS[0]))
    site = _summarize(suite)
    assert _tree(site) == _fresh_site(suite, tmp_path)
    assert "stolen" not in (site / "data" / RUNS[0].run_id / "chunk_0000.js").read_text(encoding="utf-8")
    assert bundle_is_current(SuiteReader(suite).run(RUNS[0].run_id))


def test_links_out_of_the_run_folder_are_never_followed(suite: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(_bundle(suite, RUNS[0]), outside)  # a bundle that would pass every check
    secret = tmp_path / "secret.js"
    secret.write_text("HOLISTIC_CHUNK(0,{});\n", encoding="utf-8")
    shutil.rmtree(_bundle(suite, RUNS[0]))
    _bundle(suite, RUNS[0]).symlink_to(outside, target_is_directory=True)
    chunk = _bundle(suite, RUNS[1]) / "chunk_0000.js"
    chunk.unlink()
    chunk.symlink_to(secret)
    before = _tree(tmp_path / "outside"), secret.read_bytes()

    site = _summarize(suite)
    assert _tree(site) == _fresh_site(suite, tmp_path)
    assert (_tree(outside), secret.read_bytes()) == before  # nothing outside was written
    for run in RUNS[:2]:
        assert not _bundle(suite, run).is_symlink() and not (_bundle(suite, run) / "chunk_0000.js").is_symlink()
        assert not (site / "data" / run.run_id / "chunk_0000.js").is_symlink()


def test_resummarize_after_a_rerun_makes_the_same_site_as_a_fresh_one(suite: Path, tmp_path: Path) -> None:
    _summarize(suite)
    rewrite_run(tmp_path / "out", "s", RUNS[1], seed=3)
    write_bundle(SuiteReader(suite).run(RUNS[1].run_id))  # as helm-run does when the rerun completes
    site = _summarize(suite)
    assert _tree(site) == _fresh_site(suite, tmp_path)


def test_a_bundle_this_user_built_is_checked_by_hash_without_parsing(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = record_calls(monkeypatch, bundle, "_parses")
    site = _summarize(suite)
    assert parsed == []  # every bundle was attested by the holistic that wrote it
    folder = _bundle(suite, RUNS[0])
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest[bundle.ATTEST]) == 64
    del manifest[bundle.ATTEST]  # a bundle from before attestations, or from a tool that wrote none
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.rmtree(suite / ".summarize-cache")
    assert _tree(_summarize(suite)) == _tree(site) == _fresh_site(suite, tmp_path)
    assert sorted(set(parsed)) == ["chunk_0000.js", "chunk_0001.js", "index.js"]


def test_a_bundle_attested_under_another_secret_is_parsed_and_its_script_refused(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holistic.results.output_cache import KEY_FILE_ENV

    folder = _bundle(suite, RUNS[0])
    monkeypatch.setenv(KEY_FILE_ENV, str(tmp_path / "elsewhere.key"))  # another user's holistic ...
    shutil.rmtree(folder)
    write_bundle(SuiteReader(suite).run(RUNS[0].run_id))
    _tamper_script(folder)  # ... whose bundle, tampered with, carries an attestation valid for its secret
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    scripts = bundle._scripts(manifest["files"])
    secret = user_secret()
    assert secret is not None
    text = bundle._scripts_text(manifest["fingerprint"], scripts)
    manifest[bundle.ATTEST] = attestation(secret, bundle.ATTEST, text)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.undo()

    parsed = record_calls(monkeypatch, bundle, "_parses")
    site = _summarize(suite)
    assert "chunk_0000.js" in parsed
    assert "stolen" not in (site / "data" / RUNS[0].run_id / "chunk_0000.js").read_text(encoding="utf-8")
    assert _tree(site) == _fresh_site(suite, tmp_path)


def test_the_models_page_adds_up_the_request_totals_the_bundles_hold(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holistic.site import render

    fresh = _fresh_site(suite, tmp_path)  # the requests read from each run's file

    def refuse(*args: object) -> None:
        raise AssertionError("a run's requests file was read although its bundle holds its totals")

    monkeypatch.setattr(render, "request_totals", refuse)
    site = _summarize(suite)
    assert _tree(site) == fresh
    assert "Prompt tokens" in (site / "models.html").read_text(encoding="utf-8")
