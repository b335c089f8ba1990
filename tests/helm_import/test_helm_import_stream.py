"""The streaming reader of HELM's JSON files: exact values, exact digests, bounded memory."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from holistic.helm.imports.stream import HelmFileError, JsonStream, iter_array

DOC: dict[str, Any] = {
    "adapter_spec": {"method": "generation", "stop": ["\n", "\u00e9\u4e2d"], "temperature": 1e-07},
    "request_states": [
        {
            "id": f"id{i}",
            "text": "é中" * (i % 37) + '\\"quoted"',
            "n": 1234567890123456789 + i,  # 19 digits: the longest a 64-bit integer has
            "f": -1.25e-7 * i,
            "ok": i % 2 == 0,
            "none": None,
        }
        for i in range(300)
    ],
    "annotator_specs": [],
}


def _read_all(path: Path, block: int) -> tuple[dict[str, Any], str]:
    with JsonStream(path, block=block) as stream:
        assert stream.begin() == "{"
        out: dict[str, Any] = {}
        for key, value in stream.members(streamed="request_states"):
            out[key] = list(stream.elements(key)) if key == "request_states" else value
        stream.finish()
        return out, stream.sha256


@pytest.mark.parametrize("block", [1, 3, 64, 1 << 20])
def test_values_and_digest_are_exact_at_any_block_size(tmp_path: Path, block: int) -> None:
    path = tmp_path / "scenario_state.json"
    path.write_text(json.dumps(DOC, indent=2, ensure_ascii=False), encoding="utf-8")
    found, digest = _read_all(path, block)
    assert found == DOC
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("fraction", [0.001, 0.3, 0.5, 0.999])
def test_a_truncated_file_is_reported_as_truncated(tmp_path: Path, fraction: float) -> None:
    data = json.dumps(DOC, indent=2).encode()
    path = tmp_path / "scenario_state.json"
    path.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(HelmFileError, match=r"scenario_state\.json: truncated"):
        _read_all(path, 64)


def test_a_top_level_array_is_read_element_by_element(tmp_path: Path) -> None:
    path = tmp_path / "stats.json"
    path.write_text('[\n 1, {"a": [2, 3]},\n "x" ]\n')
    assert list(iter_array(path, "stats")) == [1, {"a": [2, 3]}, "x"]
    path.write_text('{"a": 1}')
    with pytest.raises(HelmFileError, match="expected a JSON array of stats"):
        list(iter_array(path, "stats"))
    path.write_text("[1, 2] 3")
    with pytest.raises(HelmFileError, match="extra data"):
        list(iter_array(path, "stats"))


def test_memory_stays_near_one_element_however_large_the_file(tmp_path: Path) -> None:
    """A 40 MB file of 2 KB elements is read holding well under 2 MB at once."""
    path = tmp_path / "scenario_state.json"
    element = json.dumps({"prompt": "x" * 2000, "tokens": [{"text": "y", "logprob": -0.5}] * 5})
    with path.open("w") as fh:
        fh.write('{"adapter_spec": {}, "request_states": [')
        fh.write(",".join([element] * 20_000))
        fh.write("]}")
    assert path.stat().st_size > 40_000_000
    tracemalloc.start()
    try:
        with JsonStream(path, block=1 << 18) as stream:
            stream.begin()
            count = 0
            for key, _ in stream.members(streamed="request_states"):
                if key == "request_states":
                    count = sum(1 for _ in stream.elements(key))
            stream.finish()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000
    assert peak < 2_000_000, f"peak {peak} bytes"
