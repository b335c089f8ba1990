"""HELM's perturbation resources: found in the data root, or downloaded, converted and pinned by sha256."""

from __future__ import annotations

import io
import json
import pickle
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import DataSourceError
from holistic.helm.perturbations import resources as hr
from tests.support.data import find_data_root, skip_without_data

HERE = Path(__file__).resolve().parent


def _shared() -> Path:
    root = find_data_root()
    if root is None or not (root / hr.FOLDER).is_dir():
        skip_without_data(f"HELM's perturbation resources ({hr.FOLDER}/)")
    return root


class _Response(io.BytesIO):
    def __enter__(self) -> _Response:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _serve(monkeypatch: pytest.MonkeyPatch, served: dict[str, bytes]) -> list[str]:
    asked: list[str] = []

    def urlopen(url: str, timeout: float) -> _Response:
        asked.append(url)
        if url not in served:
            raise OSError("unreachable")
        return _Response(served[url])

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return asked


@pytest.mark.needs_data
def test_the_data_roots_copies_are_found_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _shared()
    monkeypatch.setenv(hr.CACHE_ENV, str(tmp_path / "cache"))
    table = hr.dialect_mapping(root, offline=True)
    assert len(table) == 1050 and table["about"] == ["abt", "bou", "bout"]
    pronouns = hr.gender_mappings("pronouns", root, offline=True)
    assert pronouns[0] == ("they", "she", "he") and len(hr.gender_mappings("terms", root, offline=True)) == 32
    bad = tmp_path / "bad"
    (bad / hr.FOLDER / "dialect").mkdir(parents=True)
    (bad / hr.FOLDER / hr.DIALECT.path).write_text("{}", encoding="utf-8")
    with pytest.raises(DataSourceError, match="checksum mismatch"):
        hr.resource_path(hr.DIALECT, bad, offline=True)


def test_missing_and_offline_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hr.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(hr.DATA_ROOT_ENV, raising=False)
    with pytest.raises(DataSourceError, match=r"not found .* offline: not downloaded"):
        hr.resource_path(hr.GENDER, tmp_path / "empty", offline=True)


@pytest.mark.needs_data
def test_the_dictionary_is_downloaded_from_the_authors_pickle_and_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The authors' pickle (a dict of sets) becomes the pinned JSON; its sha256 is checked first."""
    root = _shared()
    table = json.loads((root / hr.FOLDER / hr.DIALECT.path).read_text(encoding="utf-8"))
    original = pickle.dumps({k: set(v) for k, v in table.items()}, protocol=4)
    monkeypatch.setenv(hr.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(hr.DATA_ROOT_ENV, raising=False)
    assert hr._sha256(hr.dialect_json_from_pickle(original)) == hr.DIALECT.sha256
    # a pickle that is not the authors' bytes is refused by the source pin
    _serve(monkeypatch, {hr.DIALECT.source_url: original})
    with pytest.raises(DataSourceError, match=r"checksum mismatch for https://raw\.githubusercontent\.com/GT-SALT"):
        hr.resource_path(hr.DIALECT, tmp_path / "empty")
    pinned = replace(hr.DIALECT, source_sha256=hr._sha256(original))  # as if this were the authors' pickle
    path = hr.resource_path(pinned, tmp_path / "empty")
    assert (
        path == tmp_path / "cache" / hr.FOLDER / hr.DIALECT.path and hr._sha256(path.read_bytes()) == hr.DIALECT.sha256
    )


def test_a_pickle_naming_any_class_is_refused() -> None:
    class_ref = pickle.dumps({"about": {"bout"}, "x": io.BytesIO})  # a GLOBAL opcode
    with pytest.raises(DataSourceError, match="only dicts, sets and strings"):
        hr.dialect_json_from_pickle(class_ref)


@pytest.mark.needs_data
def test_the_gender_lists_are_read_from_helms_source_without_running_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _shared()
    raw = json.loads((root / hr.FOLDER / hr.GENDER.path).read_text(encoding="utf-8"))
    # HELM's module, as far as the two lists go (each at the lines HELM has it), and a
    # statement that would fail if the file were executed.
    lines = ["raise SystemExit('executed')"] + [""] * 11
    for key in ("GENDER_TERM_MAPPINGS", "GENDER_PRONOUN_MAPPINGS"):
        first, last = raw[key]["lines"]
        lines += [""] * (first - 1 - len(lines))
        rows = [f"    {tuple(row)!r}," for row in raw[key]["mappings"]]
        lines += [f"{key}: List[Tuple[str, ...]] = [", *rows]
        lines += [""] * (last - 1 - len(lines)) + ["]"]
    source = ("\n".join(lines) + "\n").encode("utf-8")
    assert hr._sha256(hr.gender_json_from_source(source)) == hr.GENDER.sha256
    monkeypatch.setenv(hr.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(hr.DATA_ROOT_ENV, raising=False)
    asked = _serve(monkeypatch, {hr.GENDER.source_url: source})
    assert hr.gender_mappings("pronouns", tmp_path / "empty")[1] == ("them", "her", "him")
    assert asked == [hr.GENDER.source_url]
    with pytest.raises(DataSourceError, match="does not define"):
        hr.gender_json_from_source(b"GENDER_TERM_MAPPINGS: list = []\n")
