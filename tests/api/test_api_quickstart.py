"""``python -c "import holistic; holistic.run('runspecs/quickstart.yaml', ...)"`` does what ``make demo`` does:
the quickstart on the embedded model into a complete suite, then its summary and site."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helm_run_helpers import REPO

DEMO = """
import json, sys
import holistic

result = holistic.run("runspecs/quickstart.yaml", output_dir=sys.argv[1], max_eval_instances=2)
site = holistic.summarize(result.suite_dir)
print(json.dumps({
    "complete": result.complete,
    "suite_dir": str(result.suite_dir),
    "runs": [[r.run_id, r.title, r.status, r.score] for r in result.runs],
    "index": str(site.site_index),
    "summary": [str(f) for f in site.files],
}))
"""


@pytest.mark.real_model
def test_the_quickstart_from_python_is_the_demo(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("HOLISTIC_DATA_ROOT", None)
    env["HOLISTIC_CACHE_DIR"] = str(tmp_path / "cache-root")
    out = tmp_path / "output"
    done = subprocess.run(
        [sys.executable, "-c", DEMO, str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["complete"] and result["suite_dir"] == str(out / "quickstart")
    assert len(result["runs"]) == 14  # the demo's 14 runs
    assert {status for _, _, status, _ in result["runs"]} == {"complete"}
    assert all(score is not None for *_, score in result["runs"])
    # Each run named as the site names it: the two prompt formats are two systems.
    titles = [title for _, title, _, _ in result["runs"]]
    assert len(set(titles)) == 14
    assert {t.rsplit(" · ", 1)[1] for t in titles} == {
        "embedded/smollm2-135m-instruct [prompt_format=chat]",
        "embedded/smollm2-135m-instruct [prompt_format=plain]",
    }
    # The site make demo renders: a leaderboard and a page per run, in the suite folder.
    index = Path(result["index"])
    assert index == out / "quickstart" / "site" / "index.html" and index.is_file()
    assert len(list((index.parent / "runs").glob("*.html"))) >= 14
    assert str(out / "quickstart" / "summary" / "summary.json") in result["summary"]
    suite = json.loads((out / "quickstart" / "suite.json").read_text(encoding="utf-8"))
    assert {r["status"] for r in suite["runs"]} == {"complete"}
