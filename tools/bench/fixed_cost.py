"""Benchmark: the fixed cost of the smallest runs, each in a new process, end to end.

Three workloads, timed in alternating rounds (one of each per round), each with its target:

- ``embedded``: ``helm-run`` on a spec of one evaluation instance (a ``file`` scenario of one
  question, zero-shot, one generated token, accuracy only) on the embedded model, into a fresh
  output folder with an empty request cache (the weights converted once, as after an install):
  interpreter start, imports (torch among them), reading the spec and the model registry,
  loading the weights, the one forward pass, writing the Parquet results. Target ≤ 2.0 s.
- ``loopback``: the same one-question spec against an OpenAI-compatible server on 127.0.0.1
  (running in a process of its own, answering at once), through the OpenAI SDK, with a models
  file of its own. Target ≤ 0.8 s. With ``--light-venv DIR`` it is also timed in a virtual
  environment holding only ``holistic[openai]`` (made there once from this checkout), as a user
  evaluating API models installs it: the project's test environment holds more packages than
  that (s3fs brings aiohttp, which the OpenAI SDK imports when it is present, though not when
  holistic imports it: :mod:`holistic.models.sdk_import`; the floor ``import openai`` still does).
- ``plan``: ``helm-run runspecs/quickstart.yaml --plan`` (the run matrix, prompt sizes counted
  with the model's own tokenizer, time and cost estimates). Target ≤ 1.5 s.

Beside them, the same way, the floors: the bare interpreter, the interpreter importing torch, and
importing the OpenAI SDK (in each environment timed). Bytecode is written (``PYTHONDONTWRITEBYTECODE``
is dropped for the children) and a warm-up round precedes the timed ones, so every figure is of
a machine where holistic has run before. Medians are reported.

    python -m tools.bench.fixed_cost                # 7 alternating rounds
    python -m tools.bench.fixed_cost --rounds 9 --light-venv ~/.cache/holistic/bench/light
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tools.bench.docs import add_docs_option, figures, write_results
from tools.bench.judges import loopback_server
from tools.common import REPO

TARGETS = {"embedded": 2.0, "loopback": 0.8, "loopback_light": 0.8, "plan": 1.5}
"""Seconds of wall time, median, per workload."""

MODEL = "embedded/smollm2-135m-instruct"

SPEC = """\
suite: fixed_cost
seed: 0
models: [{model}]
defaults:
  metrics: [accuracy]
  adaptation: {{max_train_instances: 0, max_tokens: 1, prompt_format: plain}}
runs:
  - scenario: file
    args:
      path: one.jsonl
      fields: {{input: question, output: answer, id: id}}
"""
ONE_QUESTION = {"id": "q1", "question": "What is the capital of France?", "answer": "Paris"}
LOOPBACK_MODEL = "loopback/one"


def write_specs(folder: Path, url: str) -> dict[str, list[str]]:
    """The spec files of the one-request workloads, as ``helm-run`` arguments (relative to ``folder``)."""
    (folder / "one.jsonl").write_text(json.dumps(ONE_QUESTION) + "\n", encoding="utf-8")
    (folder / "embedded.yaml").write_text(SPEC.format(model=MODEL), encoding="utf-8")
    (folder / "loopback.yaml").write_text(SPEC.format(model=LOOPBACK_MODEL), encoding="utf-8")
    (folder / "models.yaml").write_text(
        f"models:\n  - name: {LOOPBACK_MODEL}\n    provider: openai\n    model_id: one\n"
        f"    args: {{base_url: '{url}', timeout_s: 30}}\n    capabilities: {{completions: true}}\n",
        encoding="utf-8",
    )
    return {"embedded": ["embedded.yaml"], "loopback": ["loopback.yaml", "--models-file", "models.yaml"]}


def child_env() -> dict[str, str]:
    """The children's environment: bytecode written and read, a key for the loopback server."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["OPENAI_API_KEY"] = "sk-loopback"
    return env


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=child_env(), cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"bench_fixed_cost: {' '.join(cmd[:4])} ... failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    return elapsed


def one_request(python: str, args: list[str], work: Path, tag: str) -> float:
    """One ``helm-run`` of a one-request spec into a fresh output folder and request cache."""
    out, cache = work / f"out-{tag}", work / f"cache-{tag}"
    return timed(
        [python, "-m", "holistic.cli.run", *args, "--output-dir", str(out), "--cache-dir", str(cache), "--quiet"], work
    )


def light_python(folder: Path) -> str:
    """The interpreter of a venv holding only ``holistic[openai]`` from this checkout (made once)."""
    python = folder / "bin" / "python"
    marker = folder / "bench-light.txt"
    if not marker.is_file():
        print(f"making {folder}: holistic[openai] only (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, f"{REPO}[openai]"], check=True)
        marker.write_text("holistic[openai]\n", encoding="utf-8")
    return str(python)


def workloads(work: Path, url: str, light: str | None) -> dict[str, Callable[[str], float]]:
    """Each timed workload and floor: a function of the round's tag returning its wall seconds."""
    specs = write_specs(work, url)
    py = sys.executable
    jobs: dict[str, Callable[[str], float]] = {
        "embedded": lambda tag: one_request(py, specs["embedded"], work, "e" + tag),
        "loopback": lambda tag: one_request(py, specs["loopback"], work, "l" + tag),
        "plan": lambda tag: timed([py, "-m", "holistic.cli.run", "runspecs/quickstart.yaml", "--plan"], REPO),
        "floor_interpreter": lambda tag: timed([py, "-c", "pass"], work),
        "floor_import_torch": lambda tag: timed([py, "-c", "import torch"], work),
        "floor_import_openai": lambda tag: timed([py, "-c", "import openai"], work),
    }
    if light is not None:
        jobs["loopback_light"] = lambda tag: one_request(light, specs["loopback"], work, "x" + tag)
        jobs["floor_import_openai_light"] = lambda tag: timed([light, "-c", "import openai"], work)
    return jobs


def measure(rounds: int, light_venv: Path | None) -> dict[str, object]:
    light = light_python(light_venv) if light_venv is not None else None
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_fixed_cost-") as tmp, loopback_server(0.0) as url:
        jobs = workloads(Path(tmp), url, light)
        for job in jobs.values():  # warm-up: weights converted, bytecode written, files in the OS cache
            job("warm")
        for k in range(rounds):
            for name, job in jobs.items():
                times.setdefault(name, []).append(job(str(k)))
            line = ", ".join(f"{n} {v[-1]:.2f} s" for n, v in times.items() if not n.startswith("floor"))
            print(f"round {k + 1}: {line}", flush=True)
    medians = {name: round(statistics.median(v), 3) for name, v in times.items()}
    met = {name: medians[name] <= target for name, target in TARGETS.items() if name in medians}
    return {
        "rounds": rounds,
        "median_s": medians,
        "runs_s": {name: " ".join(f"{x:.2f}" for x in v) for name, v in times.items()},
        "targets_s": {name: TARGETS[name] for name in met},
        "met_each": {name: "yes" if ok else "no" for name, ok in met.items()},
        "met": all(met.values()),
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench.fixed_cost",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--rounds", type=int, default=7, help="alternating rounds (default 7); medians are reported")
    ap.add_argument("--light-venv", type=Path, help="also time the loopback run in a holistic[openai]-only venv here")
    add_docs_option(ap)
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    report = measure(args.rounds, args.light_venv.expanduser().resolve() if args.light_venv else None)
    print(json.dumps(report, indent=2))
    if args.write_docs:  # beside the other local-model figures
        print(f"wrote {write_results('fixed_cost', figures(report), page='models')}")
    return 0 if report["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
