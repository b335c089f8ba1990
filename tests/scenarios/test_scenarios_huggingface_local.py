"""``scenario: huggingface`` on a fresh install: a dataset folder in the Hub's layout, offline."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as helm_run


def _hub_layout(root: Path) -> Path:
    """``data/<split>-00000-of-00001.parquet`` as `datasets` pushes them, plus a dataset card."""
    folder = root / "tiny_sentiment"
    (folder / "data").mkdir(parents=True)
    rows = {
        "train": [("good food", "pos"), ("cold soup", "neg"), ("kind staff", "pos")],
        "test": [("lovely room", "pos"), ("rude waiter", "neg"), ("great view", "pos"), ("dirty floor", "neg")],
    }
    for split, items in rows.items():
        table = pa.table({"text": [t for t, _ in items], "sentiment": [lab for _, lab in items]})
        pq.write_table(table, folder / "data" / f"{split}-00000-of-00001.parquet")
    (folder / "README.md").write_text("---\nlicense: cc0-1.0\n---\n# tiny sentiment\n", encoding="utf-8")
    return folder


def test_a_local_dataset_in_the_hub_layout_runs_end_to_end_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _hub_layout(tmp_path)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    real_connect = socket.socket.connect

    def no_network(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"network access attempted: {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", no_network)
    spec = tmp_path / "hf.yaml"
    spec.write_text(
        "suite: hf_local\n"
        "models: [simple/echo]\n"
        "runs:\n"
        "  - scenario: huggingface\n"
        f"    args: {{dataset: {json.dumps(str(folder))}, revision: main,\n"
        "           fields: {input: text, label: sentiment}, labels: [pos, neg]}\n"
        "    adaptation: {max_train_instances: 2}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert helm_run([str(spec), "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache"), "--quiet"]) == 0
    run_dir = next((out / "hf_local" / "runs").iterdir())
    instances = pq.read_table(run_dir / "instances.parquet").to_pylist()
    evals = [r for r in instances if r["role"] == "eval" and not r["perturbation"]]
    assert sorted(r["input"] for r in evals) == ["dirty floor", "great view", "lovely room", "rude waiter"]
    lovely = next(r for r in evals if r["input"] == "lovely room")
    assert [(ref["output"], "correct" in ref["tags"]) for ref in lovely["references"]] == [
        ("pos", True),
        ("neg", False),
    ]
    assert (run_dir / "_COMPLETE").exists()
