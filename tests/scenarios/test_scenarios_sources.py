"""Data resolution: mirror, cache, verified download, clear errors."""

from __future__ import annotations

import gzip
import hashlib
import tarfile
import zipfile
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.base import BaseScenario
from holistic.scenarios.fetching import fetch_for_runs
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, resolve
from holistic.scenarios.registry import SCENARIOS


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _ctx(tmp_path: Path, offline: bool = False, mirror: bool = True) -> ScenarioContext:
    return ScenarioContext(
        data_root=tmp_path / "mirror" if mirror else None, cache_dir=tmp_path / "cache", offline=offline
    )


@pytest.fixture(autouse=True)
def _no_env_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)


def test_mirror_is_used_first(tmp_path: Path) -> None:
    (tmp_path / "mirror" / "demo" / "test").mkdir(parents=True)
    (tmp_path / "mirror" / "demo" / "test" / "a.csv").write_text("x", encoding="utf-8")
    (tmp_path / "cache" / "demo" / "test").mkdir(parents=True)
    (tmp_path / "cache" / "demo" / "test" / "a.csv").write_text("y", encoding="utf-8")
    needs = DataNeeds("demo", ((DataFile("test/a.csv"),),))
    resolved = resolve(needs, _ctx(tmp_path, offline=True))
    assert resolved["test/a.csv"] == tmp_path / "mirror" / "demo" / "test" / "a.csv"
    assert resolved.origins == {"test/a.csv": "mirror"}


def test_download_is_verified_and_cached(tmp_path: Path) -> None:
    payload = "question,answer\nمرحبا,1\n".encode()
    source = tmp_path / "remote" / "a.csv"
    source.parent.mkdir()
    source.write_bytes(payload)
    needs = DataNeeds("demo", ((DataFile("a.csv", (Download(source.as_uri(), sha256=_sha(payload)),)),),))
    resolved = resolve(needs, _ctx(tmp_path))
    assert resolved.origins == {"a.csv": "download"}
    assert resolved["a.csv"].read_bytes() == payload
    source.unlink()  # now only the cache has it
    again = resolve(needs, _ctx(tmp_path, offline=True))
    assert again.origins == {"a.csv": "cache"}


def test_checksum_mismatch_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "remote.csv"
    source.write_bytes(b"tampered")
    needs = DataNeeds("demo", ((DataFile("a.csv", (Download(source.as_uri(), sha256=_sha(b"original")),)),),))
    with pytest.raises(DataSourceError, match=r"checksum mismatch .*remote\.csv.*expected " + _sha(b"original")):
        resolve(needs, _ctx(tmp_path))
    assert not (tmp_path / "cache" / "demo" / "a.csv").exists()


def test_mirror_file_with_a_wrong_checksum_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mirror" / "demo").mkdir(parents=True)
    (tmp_path / "mirror" / "demo" / "a.csv").write_bytes(b"other version")
    needs = DataNeeds("demo", ((DataFile("a.csv", sha256=_sha(b"pinned")),),))
    with pytest.raises(DataSourceError, match=r"checksum mismatch for demo/a\.csv"):
        resolve(needs, _ctx(tmp_path, offline=True))


def test_missing_offline_names_scenario_files_and_places(tmp_path: Path) -> None:
    needs = DataNeeds(
        "demo",
        ((DataFile("test/anatomy_test.csv", (Download("https://example.invalid/x.csv"),)),),),
        hint="https://example.org/demo",
    )
    with pytest.raises(DataSourceError) as err:
        resolve(needs, _ctx(tmp_path, offline=True))
    message = str(err.value)
    assert "scenario 'demo'" in message
    assert "test/anatomy_test.csv" in message
    assert str(tmp_path / "mirror" / "demo") in message
    assert str(tmp_path / "cache" / "demo") in message
    assert "offline" in message
    assert "https://example.org/demo" in message


def test_network_failure_is_reported_with_the_url(tmp_path: Path) -> None:
    url = (tmp_path / "nowhere" / "x.csv").as_uri()
    needs = DataNeeds("demo", ((DataFile("x.csv", (Download(url),)),),))
    with pytest.raises(DataSourceError, match=r"download failed: x\.csv: " + url):
        resolve(needs, _ctx(tmp_path))


def test_archive_members_are_extracted(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("Bundle/val.jsonl", '{"q": "שלום"}\n')
        zf.writestr("Bundle/train.jsonl", '{"q": "hi"}\n')
    tar = tmp_path / "tree.tar.gz"
    tree = tmp_path / "src" / "corpus" / "test"
    (tree / "pos").mkdir(parents=True)
    (tree / "pos" / "1_9.txt").write_text("great", encoding="utf-8")
    with tarfile.open(tar, "w:gz") as tf:
        tf.add(tmp_path / "src" / "corpus", arcname="corpus")
    needs = DataNeeds(
        "demo",
        (
            (
                DataFile("val.jsonl", (Download(archive.as_uri(), member="Bundle/val.jsonl"),)),
                DataFile("corpus/test", (Download(tar.as_uri(), member="corpus/test/"),), is_dir=True),
            ),
        ),
    )
    resolved = resolve(needs, _ctx(tmp_path))
    assert resolved["val.jsonl"].read_text(encoding="utf-8") == '{"q": "שלום"}\n'
    assert (resolved["corpus/test"] / "pos" / "1_9.txt").read_text(encoding="utf-8") == "great"


def test_gzip_download_is_decompressed(tmp_path: Path) -> None:
    source = tmp_path / "queries.tsv.gz"
    source.write_bytes(gzip.compress(b"1\tquery\n"))
    needs = DataNeeds("demo", ((DataFile("queries.tsv", (Download(source.as_uri()),)),),))
    assert resolve(needs, _ctx(tmp_path))["queries.tsv"].read_text(encoding="utf-8") == "1\tquery\n"


def test_unpinned_download_is_trusted_once_then_checked(tmp_path: Path) -> None:
    source = tmp_path / "remote.csv"
    source.write_bytes(b"v1")
    needs = DataNeeds("demo", ((DataFile("a.csv", (Download(source.as_uri()),)),),))
    resolve(needs, _ctx(tmp_path))
    sums = (tmp_path / "cache" / "SHA256SUMS").read_text(encoding="utf-8")
    assert f"{_sha(b'v1')}  {source.as_uri()}" in sums
    # The upstream file changes: a fresh download (cache emptied) is refused.
    source.write_bytes(b"v2")
    (tmp_path / "cache" / "demo" / "a.csv").unlink()
    for part in (tmp_path / "cache" / "_downloads").rglob("remote.csv"):
        part.unlink()
    with pytest.raises(DataSourceError, match="checksum mismatch"):
        resolve(needs, _ctx(tmp_path))


def test_first_complete_layout_wins(tmp_path: Path) -> None:
    (tmp_path / "mirror" / "demo").mkdir(parents=True)
    (tmp_path / "mirror" / "demo" / "single.txt").write_text("1 good\n", encoding="utf-8")
    (tmp_path / "mirror" / "demo" / "train.txt").write_text("1 good\n", encoding="utf-8")
    needs = DataNeeds("demo", ((DataFile("train.txt"), DataFile("test.txt")), (DataFile("single.txt"),)))
    assert resolve(needs, _ctx(tmp_path, offline=True)).layout == 1


class _FetchDemo(BaseScenario):
    info = ScenarioInfo(name="test_fetch_demo")

    def __init__(self, url: str) -> None:
        self.url = url

    def data_needs(self) -> DataNeeds:
        return DataNeeds("test_fetch_demo", ((DataFile("data/a.csv", (Download(self.url),)),),))

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        return []


def test_fetch_for_runs_fills_the_mirror(tmp_path: Path) -> None:
    from holistic.core.types import AdapterSpec, RunSpec

    if "test_fetch_demo" not in SCENARIOS:
        SCENARIOS.add("test_fetch_demo", _FetchDemo)
    source = tmp_path / "remote.csv"
    source.write_text("id,text\n1,ok\n", encoding="utf-8")
    run = RunSpec(
        name="demo",
        scenario=ScenarioSpec.make("test_fetch_demo", {"url": source.as_uri()}),
        adapter=AdapterSpec(),
        model="simple/model",
    )
    reports = fetch_for_runs([run, run], _ctx(tmp_path))
    assert [(r.scenario, r.files, r.origins) for r in reports] == [("test_fetch_demo", ("data/a.csv",), ("download",))]
    assert (tmp_path / "mirror" / "test_fetch_demo" / "data" / "a.csv").read_text(encoding="utf-8") == "id,text\n1,ok\n"
    # Later, offline, the mirror alone serves it.
    again = fetch_for_runs([run], _ctx(tmp_path, offline=True))
    assert again[0].origins == ("mirror",)
