"""The results package: run manifests, typed readers, suite names and the suite lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from holistic.core.errors import StoreError
from holistic.results import COMPLETE_MARKER, PARTIAL_MARKER, SCHEMA_VERSION, DamagedRunError, SuiteReader
from holistic.results.layout import check_suite_name, suite_name_problem
from holistic.results.lock import SuiteLock, SuiteLockedError
from holistic.results.manifest import verify
from tests.support.fake_suite import FakeRun, write_fake_suite

REPO = Path(__file__).resolve().parents[2]


def _suite(tmp_path: Path, **kw: object) -> Path:
    runs = [
        FakeRun("mmlu", "m/a", skill=0.7, num_instances=20, with_requests=True, **kw),  # type: ignore[arg-type]
        FakeRun("boolq", "m/a", skill=0.6, num_instances=20),
    ]
    return write_fake_suite(tmp_path, "s", runs)


def test_manifest_lists_every_file_with_size_and_hash(tmp_path: Path) -> None:
    suite_dir = _suite(tmp_path)
    run_dir = sorted((suite_dir / "runs").iterdir())[0]
    manifest = json.loads((run_dir / COMPLETE_MARKER).read_text())
    assert manifest["status"] == "complete" and manifest["schema_version"] == SCHEMA_VERSION
    names = {f["name"] for f in manifest["files"]}
    assert names == {p.name for p in run_dir.iterdir()} - {COMPLETE_MARKER}
    for entry in manifest["files"]:
        assert entry["size"] == (run_dir / entry["name"]).stat().st_size and len(entry["sha256"]) == 64
    reader = SuiteReader(suite_dir)
    assert len(reader.runs) == 2 and all(r.status == "complete" for r in reader.runs)


@pytest.mark.parametrize("damage", ["delete", "truncate", "flip", "marker"])
def test_a_damaged_run_is_an_error_naming_the_run_and_the_file(tmp_path: Path, damage: str) -> None:
    suite_dir = _suite(tmp_path)
    run_dir = sorted((suite_dir / "runs").iterdir())[0]
    target = run_dir / ("stats.parquet" if damage != "marker" else COMPLETE_MARKER)
    if damage == "delete":
        target.unlink()
    elif damage == "truncate":
        target.write_bytes(target.read_bytes()[:-10])
    elif damage == "flip":
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0xFF
        target.write_bytes(bytes(data))
    else:
        target.write_text("{not json")
    with pytest.raises(DamagedRunError) as info:
        _ = SuiteReader(suite_dir).runs
    message = str(info.value)
    assert run_dir.name in message and target.name in message
    assert info.value.exit_code == 2


def test_a_newer_schema_version_is_refused_clearly(tmp_path: Path) -> None:
    suite_dir = _suite(tmp_path)
    meta = json.loads((suite_dir / "suite.json").read_text())
    meta["schema_version"] = 99
    (suite_dir / "suite.json").write_text(json.dumps(meta))
    with pytest.raises(StoreError, match=r"schema_version 99.*newer.*upgrade holistic") as info:
        SuiteReader(suite_dir)
    assert info.value.exit_code == 2


def test_helm_summarize_refuses_a_newer_suite_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from holistic.cli.summarize import main as summarize_main

    suite_dir = _suite(tmp_path)
    meta = json.loads((suite_dir / "suite.json").read_text())
    meta["schema_version"] = SCHEMA_VERSION + 1
    (suite_dir / "suite.json").write_text(json.dumps(meta))
    assert summarize_main(["--suite", "s", "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"schema_version {SCHEMA_VERSION + 1}" in err and "upgrade holistic" in err
    assert not (suite_dir / "summary").exists()


def test_a_run_with_failed_requests_is_partial_and_says_its_error_rate(tmp_path: Path) -> None:
    suite_dir = write_fake_suite(tmp_path, "s", [FakeRun("mmlu", "m/a", num_instances=10, failed_requests=4)])
    run_dir = next((suite_dir / "runs").iterdir())
    assert (run_dir / PARTIAL_MARKER).exists() and not (run_dir / COMPLETE_MARKER).exists()
    run = SuiteReader(suite_dir).runs[0]
    assert run.status == "partial" and run.error_rate == pytest.approx(0.4)
    assert verify(run_dir).failed_requests == 4


@pytest.mark.parametrize("name", ["abc\n", "a b", "\u202eevil", ".hidden", "cache", "../x", "a/b", "x" * 300, "", "é"])
def test_bad_suite_names_are_refused(name: str) -> None:
    assert suite_name_problem(name) is not None
    with pytest.raises(StoreError, match="invalid suite name"):
        check_suite_name(name, where="--suite")


@pytest.mark.parametrize("name", ["core", "quickstart", "my-suite_2.1", "A"])
def test_good_suite_names_pass(name: str) -> None:
    assert suite_name_problem(name) is None


HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from holistic.results.lock import SuiteLock\n"
    "with SuiteLock(Path(sys.argv[1])):\n"
    "    print('ready', flush=True)\n"
    "    time.sleep(120)\n"
)


def test_the_suite_lock_names_its_holder_and_is_released_when_the_holder_dies(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(SuiteLockedError, match=rf"being written by pid {holder.pid}") as info:
            SuiteLock(tmp_path, wait=False).acquire()
        assert info.value.exit_code == 2
        # A waiting process says whom it waits for, then gets the lock once the holder is gone.
        messages: list[str] = []
        waiter = SuiteLock(tmp_path, poll_s=0.05, on_wait=messages.append)
        thread = threading.Thread(target=waiter.acquire)
        thread.start()
        while not messages:
            time.sleep(0.02)
        assert f"pid {holder.pid}" in messages[0]
        holder.kill()  # killed, not released: the operating system drops the lock
        holder.wait(30)
        thread.join(30)
        assert not thread.is_alive()
        assert json.loads((tmp_path / ".lock").read_text())["pid"] == os.getpid()
        waiter.release()
    finally:
        holder.kill()
        holder.wait(30)


def test_a_stale_lock_file_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    (tmp_path / ".lock").write_text(json.dumps({"pid": 999999, "host": "gone", "started": "yesterday"}))
    with SuiteLock(tmp_path, wait=False):
        assert json.loads((tmp_path / ".lock").read_text())["pid"] == os.getpid()
