"""Bad input for helm-import --from lm-eval | inspect | every-eval-ever: each is a clear error
naming the file and what is wrong (exit 2) or a run marked partial; never a crash, never a write
outside the output folder."""

from __future__ import annotations

import io
import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from holistic.cli import helm_import, summarize
from holistic.importing import safe
from tests.importing.test_importing_harnesses import INSPECT, LM_EVAL

ARC_SAMPLES = "samples_arc_easy_local_2026-12-03T19-32-38.715753.jsonl"


def _lm_eval_copy(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(LM_EVAL, src)
    return next(src.glob("*")) / ARC_SAMPLES


def _fails(source: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    out.parent.mkdir(parents=True, exist_ok=True)
    before = sorted(p.name for p in out.parent.iterdir())
    code = helm_import.main([str(source), "--suite", "s", "--output-dir", str(out), "--quiet", *extra])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert sorted(p.name for p in out.parent.iterdir()) == before  # nothing written beside the output folder
    assert not list(out.glob("s/runs/*/manifest.json"))  # no run looks complete
    return err


def _rewrite_line(path: Path, k: int, change: object) -> None:
    lines = path.read_text().splitlines()
    doc = json.loads(lines[k])
    change(doc)  # type: ignore[operator]
    lines[k] = json.dumps(doc)
    path.write_text("\n".join(lines) + "\n")


def test_a_truncated_samples_file_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = _lm_eval_copy(tmp_path)
    samples.write_bytes(samples.read_bytes()[:-200])
    err = _fails(tmp_path / "src", tmp_path / "out", capsys)
    assert ARC_SAMPLES in err and "line 10" in err and "truncated" in err


def test_non_utf8_bytes_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = _lm_eval_copy(tmp_path)
    data = samples.read_bytes()
    samples.write_bytes(data[:100] + b"\xff\xfe" + data[102:])
    err = _fails(tmp_path / "src", tmp_path / "out", capsys)
    assert ARC_SAMPLES in err and "line 1" in err and "not UTF-8" in err


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinite_metrics_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], constant: str
) -> None:
    samples = _lm_eval_copy(tmp_path)
    text = samples.read_text().splitlines()
    text[3] = text[3].replace('"acc": 0.0', f'"acc": {constant}').replace('"acc": 1.0', f'"acc": {constant}')
    samples.write_text("\n".join(text) + "\n")
    err = _fails(tmp_path / "src", tmp_path / "out", capsys)
    assert ARC_SAMPLES in err and "line 4" in err and constant.lstrip("-") in err


def test_a_metric_that_is_not_a_number_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = _lm_eval_copy(tmp_path)
    _rewrite_line(samples, 2, lambda d: d.update(acc_norm="high"))
    err = _fails(tmp_path / "src", tmp_path / "out", capsys)
    assert "line 3: acc_norm" in err and "expected a number" in err


def test_duplicate_documents_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = _lm_eval_copy(tmp_path)
    _rewrite_line(samples, 5, lambda d: d.update(doc_id=4))
    err = _fails(tmp_path / "src", tmp_path / "out", capsys)
    assert "line 6" in err and "doc_id 4 appears twice" in err


def test_hostile_json_nesting_and_huge_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = _lm_eval_copy(tmp_path)
    samples.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    err = _fails(tmp_path / "src", tmp_path / "out", capsys)
    assert "nested deeper than" in err
    samples.write_text(json.dumps({"doc_id": 0, "doc": "x" * 5000}) + "\n")
    monkeypatch.setattr(safe, "MAX_LINE_BYTES", 1000)
    err = _fails(tmp_path / "src", tmp_path / "out", capsys)
    assert "line 1" in err and "1000-byte limit" in err


def test_a_results_file_that_is_not_lm_evals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = _lm_eval_copy(tmp_path)
    results = next(samples.parent.glob("results_*.json"))
    results.write_text('["not", "results"]')
    err = _fails(tmp_path / "src", tmp_path / "out", capsys, "--from", "lm-eval")
    assert results.name in err and "no 'results' object" in err


def _eval_copy(tmp_path: Path) -> Path:
    pytest.importorskip("inspect_ai")
    src = tmp_path / "src"
    src.mkdir()
    return Path(shutil.copy(next(INSPECT.glob("*.eval")), src))


def _add_member(archive: Path, name: str, data: bytes) -> None:
    with zipfile.ZipFile(archive, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr(name, data)


def test_a_zip_bomb_in_an_eval_archive_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = _eval_copy(tmp_path)
    _add_member(archive, "samples/bomb_epoch_1.json", b"0" * (20 << 20))  # 20 MB of zeros: ~1000 times smaller
    err = _fails(tmp_path / "src", tmp_path / "out", capsys, "--from", "inspect")
    assert archive.name in err and "samples/bomb_epoch_1.json" in err and "zip bomb" in err


def test_an_eval_members_declared_size_is_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _eval_copy(tmp_path)
    monkeypatch.setattr(safe, "MAX_JSON_BYTES", 5000)
    err = _fails(tmp_path / "src", tmp_path / "out", capsys, "--from", "inspect")
    assert archive.name in err and "declares" in err and "5000-byte limit" in err


def test_an_eval_member_whose_real_size_exceeds_its_declared_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = _eval_copy(tmp_path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("header.json", b'{"a": 1}' + b" " * 100)
    data = bytearray(buf.getvalue())
    # lie in both headers: 8 bytes declared, 108 stored
    local = data.index(b"PK\x03\x04")
    data[local + 22 : local + 26] = (8).to_bytes(4, "little")
    central = data.index(b"PK\x01\x02")
    data[central + 24 : central + 28] = (8).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    err = _fails(tmp_path / "src", tmp_path / "out", capsys, "--from", "inspect")
    assert archive.name in err


def test_an_eval_member_leaving_the_archive_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = _eval_copy(tmp_path)
    _add_member(archive, "../../escaped.json", b"{}")
    err = _fails(tmp_path / "src", tmp_path / "out", capsys, "--from", "inspect")
    assert "leaves the archive" in err and not (tmp_path / "escaped.json").exists()


def test_inspect_without_its_extra_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    err = _fails(INSPECT, tmp_path / "out", capsys, "--from", "inspect")
    assert "holistic[inspect]" in err


def test_a_sample_in_error_imports_the_run_partial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("inspect_ai")
    src = tmp_path / "src"
    src.mkdir()
    log = next(INSPECT.glob("*.json"))
    doc = json.loads(log.read_text())
    doc["status"] = "error"
    doc["error"] = {"message": "the model server stopped", "traceback": "", "traceback_ansi": ""}
    doc["samples"][1]["error"] = {"message": "connection refused", "traceback": "", "traceback_ansi": ""}
    (src / log.name).write_text(json.dumps(doc))
    out = tmp_path / "out"
    assert helm_import.main([str(src), "--suite", "s", "--output-dir", str(out), "--quiet"]) == 0
    entry = json.loads((out / "s" / "suite.json").read_text())["runs"][0]
    assert entry["status"] == "partial" and "model server stopped" in entry["error"]


def test_an_eee_file_path_leaving_the_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert helm_import.main([str(LM_EVAL), "--suite", "lm", "--output-dir", str(out), "--quiet"]) == 0
    export = tmp_path / "export" / "eee"
    assert (
        summarize.main(
            ["--suite", "lm", "--output-dir", str(out), "--no-site", "--export", "every-eval-ever", str(export)]
        )
        == 0
    )
    outside = tmp_path / "export" / "outside_samples.jsonl"
    aggregate = next(export.rglob("*.json"))
    samples = next(export.rglob("*_samples.jsonl"))
    shutil.move(samples, outside)
    doc = json.loads(aggregate.read_text())
    name = Path(doc["detailed_evaluation_results"]["file_path"]).name  # the schema's pattern holds: data/x/y/z/<uuid>
    doc["detailed_evaluation_results"]["file_path"] = f"data/../../../{name}"
    shutil.move(outside, tmp_path / name)
    aggregate.write_text(json.dumps(doc))
    err = _fails(export, tmp_path / "again" / "out", capsys, "--from", "every-eval-ever")
    assert aggregate.name in err and "leaves the folder imported" in err


def test_duplicate_eee_lines_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert helm_import.main([str(LM_EVAL), "--suite", "lm", "--output-dir", str(out), "--quiet"]) == 0
    export = tmp_path / "eee"
    assert (
        summarize.main(
            ["--suite", "lm", "--output-dir", str(out), "--no-site", "--export", "every-eval-ever", str(export)]
        )
        == 0
    )
    samples = max(export.rglob("*_samples.jsonl"), key=lambda p: p.stat().st_size)
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join([*lines, lines[0]]) + "\n")
    err = _fails(export, tmp_path / "again" / "out", capsys)
    assert "given twice" in err
