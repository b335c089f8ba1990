"""The store on a URI: locations, the object-store suite lock, credentials never shown."""

from __future__ import annotations

import json
import pickle
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

from holistic.core.errors import StoreError
from holistic.results.fs import UriPath, local_folder, location
from holistic.results.lock import ObjectStoreLock, SuiteLock, SuiteLockedError, suite_lock


@pytest.fixture
def suite_uri() -> Iterator[UriPath]:
    name = f"locks-{uuid.uuid4().hex[:8]}"
    root = location(f"memory://{name}/out")
    assert isinstance(root, UriPath)
    yield root / "suite"
    fs = fsspec.filesystem("memory")
    if fs.exists(f"/{name}"):
        fs.rm(f"/{name}", recursive=True)


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_plain_paths_and_file_uris_stay_local_paths(tmp_path: Path) -> None:
    assert location(str(tmp_path)) == tmp_path
    assert location((tmp_path / "a b").as_uri()) == tmp_path / "a b"
    assert isinstance(suite_lock(tmp_path / "s"), SuiteLock)
    with pytest.raises(StoreError, match="not on host 'server'"):
        location("file://server/share/out")
    assert local_folder("file:///var/cache/x", where="--cache-dir") == Path("/var/cache/x")
    with pytest.raises(StoreError, match=r"--cache-dir s3://\*\*\*@b/c: must be a local folder"):
        local_folder("s3://KEY:SECRET@b/c", where="--cache-dir")


def test_a_uri_location_shows_no_credentials_and_survives_pickling() -> None:
    loc = location("memory://user:pa55word@bucket/out?token=abcdef123&region=eu")
    assert isinstance(loc, UriPath)
    shown = str(loc / "suite" / "runs")
    assert "pa55word" not in shown and "abcdef123" not in shown and "user" not in shown
    assert loc.redact("failed for user:pa55word with abcdef123") == "failed for *** with ***"
    again = pickle.loads(pickle.dumps(loc / "suite"))
    assert again == loc / "suite" and again.path == (loc / "suite").path
    with pytest.raises(ValueError):
        loc / ".."


def test_object_store_lock_is_exclusive_and_released(suite_uri: UriPath) -> None:
    lock = suite_lock(suite_uri, wait=False)
    assert isinstance(lock, ObjectStoreLock)
    with lock:
        holder = json.loads((suite_uri / ".lock").read_text())
        assert holder["host"] == socket.gethostname() and isinstance(holder["pid"], int)
        with pytest.raises(SuiteLockedError, match=rf"being written by pid {holder['pid']} on "):
            ObjectStoreLock(suite_uri, wait=False).acquire()
    assert not (suite_uri / ".lock").exists()
    with ObjectStoreLock(suite_uri, wait=False):  # free again
        pass


def test_a_lock_left_by_a_dead_local_process_is_taken_over(suite_uri: UriPath) -> None:
    (suite_uri / ".lock").write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname(), "token": "x"}))
    said: list[str] = []
    with ObjectStoreLock(suite_uri, wait=False, on_wait=said.append):
        assert json.loads((suite_uri / ".lock").read_text())["token"] != "x"
    assert said and "no longer running" in said[0]


def test_a_lock_held_on_another_host_is_never_guessed_dead(suite_uri: UriPath) -> None:
    (suite_uri / ".lock").write_text(json.dumps({"pid": _dead_pid(), "host": "worker-7", "token": "x"}))
    with pytest.raises(SuiteLockedError, match=r"on worker-7.*delete memory://locks-\w+/out/suite/\.lock"):
        ObjectStoreLock(suite_uri, wait=False).acquire()
    assert json.loads((suite_uri / ".lock").read_text())["token"] == "x"  # untouched
