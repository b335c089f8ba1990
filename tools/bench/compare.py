"""Benchmark: the data of one compare-systems view (``write_comparison``), in CPU seconds.

The runs of one scenario by ``--models`` models, ``--instances`` instances each, are written
as the summary benchmark writes its suite (``tools.bench.summarize``: the same synthetic runs,
each instance in one perturbed variant), with each run's browser bundle as ``helm-run`` leaves
it; their predictions are read from the bundles (what ``helm-summarize`` compares), then
:func:`holistic.site.compare.write_comparison` writes the view's ``index.js`` and chunks
``--repeat`` times. Reported: the CPU seconds of one comparison (the fastest of the repeats) and
the sha256 of the files written (the same figure before and after a change to the code: the
files did not change).

    python -m tools.bench.compare                       # 10 runs x 1,000 instances
    python -m tools.bench.compare --instances 100 --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def suite_predictions(out: Path, models: int, instances: int) -> tuple[Any, dict[str, dict[str, dict[str, Any]]]]:
    """The comparison of the ``models`` runs of one scenario, and each run's predictions from its bundle."""
    from holistic.results import SuiteReader
    from holistic.results.layout import BROWSER_DIR
    from holistic.site.bundle import PREDICTIONS_FILE, write_bundle
    from holistic.site.compare import comparisons
    from holistic.summarize.load import load_suite
    from tests.support.fake_suite import FakeRun, write_fake_suite

    runs = [
        FakeRun(
            "scenario_0000",
            f"model/{i:02d}",
            skill=0.3 + 0.05 * i,
            num_instances=instances,
            perturbations=("typos",),
            with_requests=True,
        )
        for i in range(models)
    ]
    suite = SuiteReader(write_fake_suite(out, "bench", runs))
    predictions = {}
    for reader in suite.runs:
        write_bundle(reader)
        assert isinstance(reader.folder, Path)
        text = (reader.folder / BROWSER_DIR / PREDICTIONS_FILE).read_text(encoding="utf-8")
        predictions[reader.run_id] = json.loads(text)
    infos = load_suite(suite).runs
    (comparison,) = comparisons(infos, {r.run_id: r.model for r in infos})
    return comparison, predictions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench.compare", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", type=int, default=10, help="runs compared (default 10)")
    ap.add_argument("--instances", type=int, default=1000, help="instances per run (default 1,000)")
    ap.add_argument("--repeat", type=int, default=5, help="times the comparison is written (default 5)")
    args = ap.parse_args(argv)
    if args.models < 2 or args.instances < 1 or args.repeat < 1:
        ap.error("--models must be at least 2, --instances and --repeat at least 1")
    from holistic.site.compare import write_comparison

    with tempfile.TemporaryDirectory(prefix="bench_compare-") as tmp:
        comparison, predictions = suite_predictions(Path(tmp), args.models, args.instances)
        seconds = []
        for k in range(args.repeat):
            out = Path(tmp) / "site" / str(k)
            start = time.process_time()
            write_comparison(out, comparison, predictions)
            seconds.append(time.process_time() - start)
        digest = hashlib.sha256()
        for path in sorted(out.iterdir()):
            digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes())
    report = {
        "models": args.models,
        "instances": args.instances,
        "cpu_seconds_min": round(min(seconds), 4),
        "cpu_seconds_all": [round(s, 4) for s in seconds],
        "files_sha256": digest.hexdigest(),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
