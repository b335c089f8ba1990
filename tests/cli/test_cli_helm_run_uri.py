"""helm-run and helm-summarize with --output-dir given as a URI (file:// and in-process memory://)."""

from __future__ import annotations

import io
import re
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from holistic.cli.summarize import main as summarize_main
from holistic.results import DamagedRunError, SuiteReader
from tests.cli.helm_run_helpers import call_count, run_dirs, write_spec

TIMING = re.compile(r"runtime|per_second|latency")
TABLES = ("instances", "requests", "per_instance_stats", "stats")


@pytest.fixture
def call_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "calls.log"
    monkeypatch.setenv("HOLISTIC_SIMPLE_CALL_LOG", str(log))
    return log


@pytest.fixture
def bucket() -> Iterator[str]:
    """A fresh prefix of the in-process memory filesystem, removed afterwards."""
    name = f"bucket-{uuid.uuid4().hex[:8]}"
    yield name
    fs = fsspec.filesystem("memory")
    if fs.exists(f"/{name}"):
        fs.rm(f"/{name}", recursive=True)


def _without_timing(table: pa.Table) -> pa.Table:
    keep = [c for c in table.column_names if not TIMING.search(c)]
    table = table.select(keep)
    if "metric" in keep:
        table = table.filter(pa.array([not TIMING.search(m) for m in table.column("metric").to_pylist()]))
    return table


def _local_tables(suite_dir: Path) -> dict[tuple[str, str], pa.Table]:
    return {
        (d.name, t): _without_timing(pq.read_table(d / f"{t}.parquet")) for d in run_dirs(suite_dir) for t in TABLES
    }


def _memory_tables(prefix: str) -> dict[tuple[str, str], pa.Table]:
    fs = fsspec.filesystem("memory")
    out = {}
    for path in fs.glob(f"{prefix}/runs/*/*.parquet"):
        run_id, name = path.split("/")[-2:]
        out[(run_id, name.removesuffix(".parquet"))] = _without_timing(pq.read_table(io.BytesIO(fs.cat_file(path))))
    return out


def _assert_equal(a: dict[tuple[str, str], pa.Table], b: dict[tuple[str, str], pa.Table]) -> None:
    assert sorted(a) == sorted(b) and a
    for key in a:
        assert a[key].equals(b[key]), key


def test_file_uri_writes_what_a_plain_path_writes(tmp_path: Path, call_log: Path) -> None:
    spec = write_spec(tmp_path)
    assert main([str(spec), "--output-dir", str(tmp_path / "plain"), "--quiet", "--no-cache"]) == 0
    uri = (tmp_path / "via uri").as_uri()  # file:///.../via%20uri
    assert main([str(spec), "--output-dir", uri, "--quiet", "--no-cache"]) == 0
    _assert_equal(_local_tables(tmp_path / "plain" / "tiny"), _local_tables(tmp_path / "via uri" / "tiny"))


def test_memory_uri_run_equals_a_plain_path_run_and_summarizes_from_the_uri(
    tmp_path: Path, call_log: Path, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    uri = f"memory://{bucket}/results"
    assert main([str(spec), "--output-dir", str(tmp_path / "plain"), "--quiet", "--no-cache"]) == 0
    assert main([str(spec), "--output-dir", uri, "--cache-dir", str(tmp_path / "cache"), "--quiet"]) == 0
    _assert_equal(_local_tables(tmp_path / "plain" / "tiny"), _memory_tables(f"/{bucket}/results/tiny"))
    fs = fsspec.filesystem("memory")
    assert not fs.exists(f"/{bucket}/results/tiny/.lock")  # released
    assert not fs.exists(f"/{bucket}/results/cache")  # the request cache stays on the local disk
    assert (tmp_path / "cache" / "requests.sqlite").is_file()

    # A rerun reads the manifests from the URI and skips both runs.
    calls = call_count(call_log)
    capsys.readouterr()
    assert main([str(spec), "--output-dir", uri, "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "0 runs written, 2 already complete" in capsys.readouterr().out
    assert call_count(call_log) == calls

    # helm-summarize reads the suite from the URI and writes summary and site locally.
    args = ["--suite", "tiny", "--num-bootstrap", "20"]
    assert summarize_main([*args, "--output-dir", uri, "--local-dir", str(tmp_path / "site-of-uri")]) == 0
    assert summarize_main([*args, "--output-dir", str(tmp_path / "plain")]) == 0
    from_uri = tmp_path / "site-of-uri" / "tiny"
    assert (from_uri / "site" / "index.html").is_file()
    plain_tables = tmp_path / "plain" / "tiny" / "summary" / "tables"
    tables = sorted(p.name for p in plain_tables.glob("*.csv") if "accuracy" in p.name or p.name == "coverage.csv")
    assert "group_accuracy.csv" in tables and "coverage.csv" in tables
    for name in tables:
        assert (from_uri / "summary" / "tables" / name).read_text() == (plain_tables / name).read_text(), name
    assert not fs.exists(f"/{bucket}/results/tiny/summary")


def test_half_written_run_on_a_uri_is_not_trusted_and_is_redone(
    tmp_path: Path, call_log: Path, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    uri = f"memory://{bucket}/r"
    common = [str(spec), "--output-dir", uri, "--cache-dir", str(tmp_path / "cache")]
    assert main([*common, "--quiet"]) == 0
    fs = fsspec.filesystem("memory")
    first, second = sorted(fs.ls(f"/{bucket}/r/tiny/runs", detail=False))
    # A writer killed after its files but before its manifest: files without _COMPLETE.
    fs.rm_file(f"{second}/_COMPLETE")
    assert [r.run_id for r in SuiteReader.open(uri, "tiny").runs] == [first.rsplit("/", 1)[-1]]  # left out
    # Another run whose file was changed after its manifest was written.
    fs.pipe_file(f"{first}/stats.parquet", fs.cat_file(f"{first}/stats.parquet")[:-9] + b"\0" * 9)
    with pytest.raises(DamagedRunError, match=r"stats\.parquet: content differs"):
        _ = SuiteReader.open(uri, "tiny").runs
    capsys.readouterr()
    calls = call_count(call_log)
    assert main(common) == 0
    out = capsys.readouterr().out
    assert "damaged (stats.parquet: content differs" in out
    assert "2 runs written, 0 already complete" in out
    assert call_count(call_log) == calls  # every answer came back from the local request cache
    assert fs.exists(f"{second}/_COMPLETE")
    assert len(SuiteReader.open(uri, "tiny").runs) == 2  # both verify again


def test_bad_uris_are_exit_2_before_anything_runs(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)

    assert main([str(spec), "--output-dir", "nosuchfs://bucket/x"]) == 2
    err = capsys.readouterr().err
    assert "unknown URI scheme 'nosuchfs'" in err and "Traceback" not in err

    pytest.importorskip("fsspec.implementations.ftp")
    with socket.socket() as holder:  # a bound, non-listening loopback port: nothing answers there
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        assert main([str(spec), "--output-dir", f"ftp://alice:hunter2secret@127.0.0.1:{port}/results"]) == 2
    captured = capsys.readouterr()
    assert f"ftp://***@127.0.0.1:{port}/results" in captured.err
    assert "hunter2secret" not in captured.err + captured.out

    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--cache-dir", "memory://b/cache"]) == 2
    assert "must be a local folder" in capsys.readouterr().err
    assert call_count(call_log) == 0


def test_missing_filesystem_package_names_it_and_hides_credentials(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        import s3fs  # noqa: F401

        pytest.skip("s3fs is installed here")
    except ImportError:
        pass
    spec = write_spec(tmp_path)
    assert main([str(spec), "--output-dir", "s3://AKIAEXAMPLEKEY:wJalrXUtnFEMIsecret@bucket/results"]) == 2
    captured = capsys.readouterr()
    assert "s3:// scheme needs a package that is not installed (pip install s3fs)" in captured.err
    assert "wJalrXUtnFEMIsecret" not in captured.err + captured.out
    assert "AKIAEXAMPLEKEY" not in captured.err + captured.out


def test_memory_uri_with_ray_is_refused(tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path)
    assert main([str(spec), "--output-dir", "memory://x/y", "--executor", "ray"]) == 2
    assert "Ray workers cannot share it" in capsys.readouterr().err
