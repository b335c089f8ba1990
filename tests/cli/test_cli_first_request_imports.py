"""What helm-run imports: by its first request nothing that only the readers of many runs
need (``pyarrow.dataset``, which imports pandas), no ``jsonschema`` (a valid spec and registry
are accepted by the quick check, :mod:`holistic.core.schema_check`), and the model registry
read once; by its
end, after the results and the run's browser bundle are written, still no pandas (pyarrow's
first list conversion would import it to look for pandas objects) and no ``pyarrow.dataset``
(the bundle reads the run's Parquet files back one file at a time), while pyarrow's own
pandas conversions still work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, sys
import holistic.models.registry as registry
from holistic.models.simple import SimpleClient

seen = {}
reads = []
real_read, real_process = registry.read_registry_file, SimpleClient.process

def reading(*args, **kwargs):
    reads.append(str(args[0]))
    return real_read(*args, **kwargs)

def process(self, requests):
    seen.setdefault("heavy", sorted(m for m in ("pandas", "pyarrow.dataset", "jsonschema") if m in sys.modules))
    seen.setdefault("reads", len(reads))
    return real_process(self, requests)

registry.read_registry_file, SimpleClient.process = reading, process
from holistic.cli.run import main
code = main([sys.argv[1], "--output-dir", sys.argv[2], "--no-cache", "--quiet", "--models-file", sys.argv[3]])
seen["pandas_at_end"] = "pandas" in sys.modules
seen["dataset_at_end"] = sorted(m for m in ("pyarrow.dataset", "pyarrow.compute", "jsonschema") if m in sys.modules)
seen["bundle"] = sorted(p.name for p in __import__("pathlib").Path(sys.argv[2]).rglob("browser/manifest.json"))
import pyarrow as pa
seen["to_pandas"] = pa.table({"x": [1, 2]}).to_pandas()["x"].tolist()
print(json.dumps({"code": code, **seen}))
"""


def test_no_pandas_in_a_run_and_one_registry_read_before_the_first_request(tmp_path: Path) -> None:
    spec = tmp_path / "one.yaml"
    spec.write_text(
        "suite: one\nmodels: [mine/echo]\nruns:\n  - scenario: arithmetic\n    args: {num_train: 3, num_test: 1}\n"
        "    adaptation: {max_train_instances: 0, max_eval_instances: 1, max_tokens: 4}\n    metrics: [accuracy]\n",
        encoding="utf-8",
    )
    models = tmp_path / "models.yaml"  # a user's registry file, validated as the spec is
    models.write_text(
        "models:\n  - name: mine/echo\n    provider: simple\n    model_id: echo\n"
        "    capabilities: {completions: true, logprobs: true}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(spec), str(tmp_path / "out"), str(models)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    assert facts["code"] == 0
    assert facts["heavy"] == []
    assert facts["reads"] == 2  # the built-in registry and the user's, each parsed and validated once
    assert facts["pandas_at_end"] is False  # the results were written without importing pandas
    assert facts["bundle"] == ["manifest.json"]  # the run's browser bundle was built from its Parquet files
    assert facts["dataset_at_end"] == []  # which were read back without pyarrow's dataset machinery (nor jsonschema)
    assert facts["to_pandas"] == [1, 2]  # and pyarrow still converts to pandas when asked
