"""The peers' fixture maker keeps no path of the machine that ran it, inside .eval archives too."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tools.conformance.harness_fixtures import copy_neutral


def test_paths_are_rewritten_and_a_path_left_stops_the_tool(tmp_path: Path) -> None:
    model = tmp_path / "cache" / "models" / "abc123"
    src = tmp_path / "src"
    (src / str(model).replace("/", "__")).mkdir(parents=True)
    results = src / str(model).replace("/", "__") / "results_1.json"
    results.write_text(f'{{"model_args": "pretrained={model}", "data": "{tmp_path}/peer-run/a.jsonl"}}')
    with zipfile.ZipFile(src / "log.eval", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", f'{{"task_file": "{tmp_path}/peer-run/tasks.py"}}')
    replacements = [
        (str(model), "models/m"),
        (str(model).replace("/", "__"), "models__m"),
        (f"{tmp_path}/peer-run", "data"),
    ]
    out = tmp_path / "out"
    copy_neutral(src, out, replacements)
    assert (
        out / "models__m" / "results_1.json"
    ).read_text() == '{"model_args": "pretrained=models/m", "data": "data/a.jsonl"}'
    with zipfile.ZipFile(out / "log.eval") as z:
        assert z.read("header.json") == b'{"task_file": "data/tasks.py"}'
    (src / "left.json").write_text('{"path": "/home/someone/x"}')
    with pytest.raises(SystemExit, match=r"left\.json still names a path of this machine: /home/someone/x"):
        copy_neutral(src, tmp_path / "out2", replacements)
