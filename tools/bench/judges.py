"""Benchmark: judges that overlap their candidates — a judged run against its two phases alone.

Two loopback OpenAI-compatible servers (127.0.0.1 only, bounded, they stop by themselves:
:mod:`tests.support.rate_limited_server`), each in a process of its own so that only the client is
measured, answer every request after the same fixed latency: one serves the candidate model, one
the judge. A ``file`` run of ``--rows`` questions is run three
ways, each by ``helm-run`` in this process (imports warm, so start-up is left out alike), into a
fresh output folder:

- **candidates only**: the run without its judge, from an empty request cache;
- **judge only**: the judged run from a cache that already holds every candidate answer, so only
  the judge's requests go out;
- **judged**: the judged run from an empty cache: candidates and judge together, the judge asked
  as each answer arrives (:mod:`holistic.execution.judging`).

Also, for comparison, **judged, sequential**: the same with the judge asked only after the last
candidate answer (as before the overlap). The rounds alternate; each figure is the median. The
ratio is judged / max(candidates only, judge only). Target: ≤ 1.15.

    python -m tools.bench.judges                 # 5 rounds of 1,000 questions, 100 ms per request
    python -m tools.bench.judges --write-docs    # also into docs/benchmarks/judges.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

from tools.bench.docs import add_docs_option, finish

TARGET_RATIO = 1.15


DIGIT_RULE = "{regex: '(?P<score>[0-9])', score: score}"
"""A verdict rule that reads the loopback answers (hex words: nearly always a digit among them)."""


def write_suite(
    folder: Path, rows: int, candidate_url: str, judge_url: str, rule: str = DIGIT_RULE
) -> tuple[Path, Path, Path]:
    """A ``file`` run of ``rows`` questions on a loopback candidate, judged by a loopback judge
    with verdict ``rule``: the models file, and the spec without and with its judge."""
    data = folder / "questions.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "q": f"Question {i}?", "a": "x"}) + "\n" for i in range(rows)))
    models = folder / "models.yaml"
    models.write_text(
        "models:\n"
        "  - name: loop/candidate\n    provider: openai\n    model_id: candidate\n"
        f"    args: {{base_url: '{candidate_url}', timeout_s: 30}}\n    capabilities: {{completions: true}}\n"
        "  - name: loop/judge\n    provider: openai\n    model_id: judge\n"
        f"    args: {{base_url: '{judge_url}', timeout_s: 30}}\n    capabilities: {{chat: true}}\n",
        encoding="utf-8",
    )
    head = (
        "suite: judged\nseed: 0\nmodels: [loop/candidate]\nruns:\n  - scenario: file\n    args:\n"
        f"      path: {data}\n      fields: {{input: q, output: a, id: id}}\n"
        "    adaptation: {method: generation, max_train_instances: 0, max_tokens: 4, prompt_format: plain}\n"
        "    metrics: [accuracy]\n"
    )
    judge = f'    judges: [{{model: loop/judge, template: "Grade: {{{{ completion }}}}", parse: {rule}}}]\n'
    plain, judged = folder / "plain.yaml", folder / "judged.yaml"
    plain.write_text(head, encoding="utf-8")
    judged.write_text(head + judge, encoding="utf-8")
    return models, plain, judged


def _timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (this process: the client) of one ``helm-run``."""
    from holistic.cli.run import main

    cpu = time.process_time()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    seconds = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"helm-run {' '.join(argv)} exited {code}")
    return seconds, time.process_time() - cpu


@contextlib.contextmanager
def _sequential() -> Iterator[None]:
    """Judges asked after the last candidate answer (the overlap turned off)."""
    with mock.patch("holistic.execution.pipeline.can_overlap", lambda *_: False):
        yield


def _serve(latency_s: float) -> None:
    """A server's own process: print its URL, serve until stdin closes (or its deadline)."""
    from tests.support.rate_limited_server import RateLimitedServer

    with RateLimitedServer(limit=1_000, latency_s=latency_s, max_requests=1_000_000, deadline_s=3_000) as server:
        print(server.url, flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def loopback_server(latency_s: float) -> Iterator[str]:
    """An OpenAI-compatible loopback server answering after ``latency_s``, in a process of its own; its base URL."""
    import subprocess

    command = [sys.executable, "-m", "tools.bench.judges", "--serve", str(latency_s)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            yield proc.stdout.readline().strip()
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=30)


def run(rows: int, rounds: int, latency_s: float) -> dict[str, object]:
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")
    phases = ("candidates_only", "judge_only", "judged", "judged_sequential")
    times: dict[str, list[float]] = {name: [] for name in phases}
    cpu: dict[str, list[float]] = {name: [] for name in phases}

    def timed(name: str, argv: list[str]) -> None:
        wall, used = _timed(argv)
        times[name].append(wall)
        cpu[name].append(used)

    with (
        tempfile.TemporaryDirectory(prefix="bench-judges-") as tmp,
        loopback_server(latency_s) as candidate_url,
        loopback_server(latency_s) as judge_url,
    ):
        folder = Path(tmp)
        models, plain, judged = write_suite(folder, rows, candidate_url, judge_url)
        for r in range(rounds):
            out = folder / f"round{r}"
            common = ["--models-file", str(models), "--quiet"]

            def fresh(name: str, out: Path = out) -> list[str]:
                return ["--output-dir", str(out / name), "--cache-dir", str(out / f"{name}-cache")]

            timed("candidates_only", [str(plain), *common, *fresh("candidates")])
            shutil.copytree(out / "candidates-cache", out / "judge-cache")  # every candidate answer cached
            timed("judge_only", [str(judged), *common, *fresh("judge")])
            steps: list[tuple[str, Callable[[], contextlib.AbstractContextManager[None]]]] = [
                ("judged", contextlib.nullcontext),
                ("judged_sequential", _sequential),
            ]
            for name, context in steps if r % 2 == 0 else reversed(steps):
                with context():
                    timed(name, [str(judged), *common, *fresh(name)])
    medians = {name: statistics.median(values) for name, values in times.items()}
    longer = max(medians["candidates_only"], medians["judge_only"])
    ratio = medians["judged"] / longer
    return {
        "rows": rows,
        "rounds": rounds,
        "latency_s": latency_s,
        "median_s": {name: round(value, 3) for name, value in medians.items()},
        "runs_s": {name: " ".join(f"{v:.2f}" for v in values) for name, values in times.items()},
        "client_cpu_median_s": {name: round(statistics.median(values), 3) for name, values in cpu.items()},
        "ratio_judged_to_longer_phase": round(ratio, 3),
        "ratio_sequential_to_longer_phase": round(medians["judged_sequential"] / longer, 3),
        "target_ratio": TARGET_RATIO,
        "met": ratio <= TARGET_RATIO,
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.judges", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000, help="questions in the run (default 1,000)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds each server takes per request (0.1)")
    parser.add_argument("--serve", type=float, metavar="LATENCY", help=argparse.SUPPRESS)
    add_docs_option(parser)
    args = parser.parse_args(argv)
    if args.serve is not None:
        _serve(args.serve)
        return 0
    report = run(args.rows, args.rounds, args.latency)
    return finish("judges", report, args.write_docs)


if __name__ == "__main__":
    sys.exit(main())
