"""Peak memory of ``helm-import`` on a large HELM run, made from a small real one.

Takes a HELM run folder (default: the committed MMLU fixture made by HELM itself),
and writes a copy whose ``scenario_state.json`` and ``per_instance_stats.json`` repeat
its request states and per-instance entries under new instance ids until
``scenario_state.json`` reaches ``--mb`` megabytes (``stats.json`` is kept: its means
are HELM's). It then runs ``helm-import`` on it in a child process and reports the
child's wall time and peak resident memory (``ru_maxrss``), beside the file sizes.

    nice .venv/bin/python -m tools.bench.helm_import --mb 500
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.bench.docs import add_docs_option, figures, write_results
from tools.common import REPO

FIXTURE = REPO / "tests" / "helm_import" / "helm_runs" / "fixtures"


def _default_run() -> Path:
    return next(p for p in sorted(FIXTURE.iterdir()) if p.name.startswith("mmlu"))


def make_large_run(source: Path, target: Path, megabytes: int) -> int:
    """Write the enlarged copy of ``source`` into ``target``; returns the request states written."""
    target.mkdir(parents=True)
    for name in ("run_spec.json", "stats.json", "scenario.json"):
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    state = json.loads((source / "scenario_state.json").read_text(encoding="utf-8"))
    per_instance = json.loads((source / "per_instance_stats.json").read_text(encoding="utf-8"))
    states = state.pop("request_states")
    marker = "\u0000ID\u0000"
    # each element's JSON once, with a marker where its instance id goes
    state_texts = []
    for st in states:
        original = st["instance"]["id"]
        st["instance"]["id"] = marker
        state_texts.append((original, json.dumps(st, indent=2)))
    per_texts = []
    for entry in per_instance:
        per_texts.append((entry["instance_id"], json.dumps({**entry, "instance_id": marker}, indent=2)))
    marker_json = json.dumps(marker)[1:-1]
    limit = megabytes * 1_000_000
    written = 0
    copies = 0
    with (
        (target / "scenario_state.json").open("w", encoding="utf-8") as out,
        (target / "per_instance_stats.json").open("w", encoding="utf-8") as pis,
    ):
        out.write("{\n")
        for key, value in state.items():
            out.write(f"  {json.dumps(key)}: {json.dumps(value, indent=2)},\n")
        out.write('  "request_states": [\n')
        pis.write("[\n")
        size = out.tell()
        while size < limit:
            for original, text in state_texts:
                piece = ("" if written == 0 else ",\n") + text.replace(marker_json, f"{original}-copy{copies}")
                out.write(piece)
                size += len(piece.encode("utf-8"))
                written += 1
            for original, text in per_texts:
                pis.write("" if copies == 0 and original == per_texts[0][0] else ",\n")
                pis.write(text.replace(marker_json, f"{original}-copy{copies}"))
            copies += 1
        out.write("\n  ]\n}\n")
        pis.write("\n]\n")
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.bench.helm_import", description=__doc__.split("\n\n")[0])
    p.add_argument("--run", type=Path, default=None, help="a HELM run folder to enlarge (default: the MMLU fixture)")
    p.add_argument("--mb", type=int, default=500, help="size of the scenario_state.json to make, in MB")
    p.add_argument("--work-dir", type=Path, default=None)
    add_docs_option(p)
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-helm-import-", dir=args.work_dir))
    try:
        run = work / "runs" / "big" / (args.run or _default_run()).name
        t0 = time.monotonic()
        n = make_large_run(args.run or _default_run(), run, args.mb)
        made = time.monotonic() - t0
        sizes = {f.name: f.stat().st_size for f in run.iterdir()}
        t0 = time.monotonic()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "holistic.cli.helm_import",
                str(run),
                "--suite",
                "big",
                "--output-dir",
                str(work / "out"),
                "--quiet",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.monotonic() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_mb = usage.ru_maxrss / 1024
        result = {
            "request_states": n,
            "scenario_state_mb": round(sizes["scenario_state.json"] / 1e6, 1),
            "per_instance_stats_mb": round(sizes["per_instance_stats.json"] / 1e6, 1),
            "made_s": round(made, 1),
            "import_exit": proc.returncode,
            "import_wall_s": round(wall, 1),
            "import_cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "import_peak_rss_mb": round(peak_mb, 1),
            "output": proc.stdout.strip().splitlines()[-1:] or proc.stderr.strip().splitlines()[-3:],
        }
        print(json.dumps(result, indent=1))
        if args.write_docs:
            print(f"wrote {write_results('helm_import', figures(result))}")
        return proc.returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
