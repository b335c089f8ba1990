"""XSTest end to end on a few instances, the embedded model as both candidate and judge (slow).

A real model and a weak judge: the test checks what must hold whatever it answers — every
judged generation has exactly one recorded verdict, with HELM's prompt and the judge's
identity; a verdict the rule cannot read is recorded as unparseable (never scored); the
scores that were read are what safety_score averages; rerunning asks nobody anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as run_main
from holistic.scenarios.safety import judge_template

pytestmark = [pytest.mark.real_model, pytest.mark.needs_data]

EMBEDDED = "embedded/smollm2-135m-instruct"


def test_xstest_with_the_embedded_model_as_candidate_and_judge(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOLISTIC_DATA_ROOT", str(data_root))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: xstest_e2e\n"
        f"models: [{EMBEDDED}]\n"
        "runs:\n"
        "  - scenario: xstest\n"
        "    max_eval_instances: 3\n"
        "    adaptation: {max_tokens: 32}\n"
        f"    judges: [{{model: {EMBEDDED}, max_tokens: 48}}]\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = [str(spec), "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache"), "--quiet"]
    code = run_main(args)
    assert code in (0, 3)  # 3: the tiny judge could read no verdict at all, so the run is partial
    (run_dir,) = [p for p in (out / "xstest_e2e" / "runs").iterdir() if p.is_dir()]
    rows = pq.read_table(run_dir / "annotations.parquet").to_pylist()
    requests = pq.read_table(run_dir / "requests.parquet").to_pylist()
    assert len(rows) == len(requests) == 3
    assert {r["judge_model"] for r in rows} == {EMBEDDED}
    for row, request in zip(
        sorted(rows, key=lambda r: r["instance_id"]), sorted(requests, key=lambda r: r["instance_id"]), strict=True
    ):
        assert row["status"] in (("failed",) if code == 3 else ("ok", "unparseable"))
        assert row["verdict"] is not None  # the judge answered; what it said is kept
        assert row["prompt"].startswith("Score the model's response based on whether it complies with the user's")
        assert request["completion"] in row["prompt"]
        assert (row["score"] is None) == (row["status"] != "ok")
    assert (
        judge_template("xstest_safe").split("{{ prompt }}")[0] in rows[0]["prompt"]
        or judge_template("xstest_unsafe").split("{{ prompt }}")[0] in rows[0]["prompt"]
    )
    scores = [r["score"] for r in rows if r["status"] == "ok"]
    stats = pq.read_table(run_dir / "stats.parquet").to_pylist()
    safety = [
        s for s in stats if s["metric"] == "safety_score" and s["sub_split"] is None and s["perturbation"] is None
    ]
    if scores:
        assert safety[0]["count"] == len(scores)
        assert safety[0]["mean"] == pytest.approx(sum(scores) / len(scores))
    else:
        assert not safety
    facts = json.loads((run_dir / "artifacts.json").read_text(encoding="utf-8"))["execution"]
    assert facts["judge_requests"] == 3
    if code == 3:
        assert facts["judge_unreadable"] == [EMBEDDED] and facts["judge_failed"] == 3
        return  # a rerun asks the judge again (tested with a loopback judge in tests/execution)
    assert facts["judge_unparseable"] == 3 - len(scores)

    capsys.readouterr()
    assert run_main([*args]) == 0  # complete: skipped, nothing asked again
    assert "0 runs written, 1 already complete" in capsys.readouterr().out
