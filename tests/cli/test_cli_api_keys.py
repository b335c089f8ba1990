"""A missing API key stops helm-run before anything is written or sent; --plan says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.cli.run import main

SPEC = """
suite: keys
models: [openai/gpt-4o-mini]
runs:
  - scenario: arithmetic
    args: {digits: 1, num_train: 5, num_test: 5}
"""


def test_missing_key_fails_before_any_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = tmp_path / "keys.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"
    assert main([str(spec), "--output-dir", str(out)]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert not out.exists()

    assert main([str(spec), "--plan"]) == 0
    printed = capsys.readouterr().out
    assert "Not runnable yet" in printed and "OPENAI_API_KEY" in printed
