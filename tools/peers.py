"""The peers (lm-evaluation-harness, HELM) in virtual environments of their own, and running them and
holistic on the same work, measured: what the peer benchmarks and conformance harnesses share."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tools.common import REPO, default_data_root

LM_EVAL = "lm_eval[hf,api]==0.4.13"


HELM = "crfm-helm==0.5.16"


TORCH = "torch==2.13.0"


MODEL = "embedded/smollm2-135m-instruct"


HELM_MODEL = "local/smollm2-135m-instruct"


PEER = Path(__file__).with_name("bench") / "peer"
"""The programs run by other interpreters (a peer's, or a wrapper's)."""


COUNTER_SHIM = PEER / "counter_shim.py"


PEAK_WRAPPER = PEER / "peak_wrapper.py"


def data_root(given: str | None, needs: str = "mmlu/test") -> Path:
    """The data root holding ``needs`` (a folder or file under it)."""
    for candidate in (given, str(default_data_root())):
        if candidate and (Path(candidate) / needs).exists():
            return Path(candidate).resolve()
    sys.exit(f"bench_peers: {needs} not found; pass --data-root (a folder holding {needs}) or set HOLISTIC_DATA_ROOT")


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def install_peer(folder: Path, packages: Sequence[str], post: Sequence[str] = ()) -> Path:
    """A venv at ``folder`` with ``packages`` (installed once; a marker records what)."""
    marker = folder / "bench-installed.txt"
    wanted = " ".join(packages)
    with _lock(folder.parent / f".{folder.name}.lock"):
        if marker.is_file() and marker.read_text() == wanted:
            return folder / "bin" / "python"
        print(f"installing {wanted} into {folder} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
        pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, *packages], check=True)
        if post:
            subprocess.run([str(folder / "bin" / "python"), "-m", "pip", *post], check=True)
        marker.write_text(wanted)
    return folder / "bin" / "python"


def install_helm(peers_dir: Path) -> Path:
    """HELM (:data:`HELM`) in a venv of its own at ``peers_dir/helm`` (installed once, on CPU torch,
    torchvision removed after); returns its Python."""
    return install_peer(
        peers_dir / "helm", [TORCH, "torchvision==0.28.0", HELM], post=["uninstall", "-y", "-q", "torchvision"]
    )


def model_dir() -> Path:
    from holistic.models.weights import converted_gguf_dir, embedded_gguf_path

    return converted_gguf_dir(embedded_gguf_path())


def measure(cmd: Sequence[str], *, cwd: Path, env: dict[str, str], log: Path) -> tuple[float, float]:
    """Run ``cmd``; returns (wall seconds, peak RSS in MB). Fails loudly with the log's tail."""
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.run(
            [sys.executable, str(PEAK_WRAPPER), *cmd], cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE, text=True
        )
    wall = time.perf_counter() - start
    lines = proc.stderr.strip().splitlines()
    with log.open("a") as out:
        out.write("\n".join(lines[:-1]))
    if proc.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-30:])
        raise SystemExit(f"bench_peers: {' '.join(cmd[:3])} ... failed (exit {proc.returncode}):\n{tail}")
    return wall, int(lines[-1]) / 1024


def peer_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(extra)
    return env


def run_holistic(spec: Path, work: Path, tag: str, extra: Sequence[str] = ()) -> dict[str, Any]:
    """``helm-run spec`` (and ``extra`` arguments) into fresh folders, timed."""
    out, cache = work / f"out-{tag}", work / f"cache-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    helm_run = Path(sys.executable).with_name("helm-run")
    cmd = [str(helm_run), str(spec), "--output-dir", str(out), "--cache-dir", str(cache), "--quiet", *extra]
    wall, peak = measure(cmd, cwd=work, env=peer_env(PYTHONPATH=str(REPO)), log=work / f"{tag}.log")
    import pyarrow.parquet as pq

    run_dir = next((out / spec.stem).glob("runs/*"))
    table = pq.read_table(run_dir / "requests.parquet").to_pylist()
    facts = json.loads((run_dir / "artifacts.json").read_text())["execution"]
    return {
        "wall_s": wall,
        "peak_mb": peak,
        "requests": table,
        "forward_calls": facts.get("engine_forward_calls", 0),
        "forward_tokens": facts.get("engine_forward_tokens", 0),
        "padded_positions": facts.get("engine_padded_positions", 0),
        "scoring_s": sum(r["latency_s"] for r in table),
        "quiet_line": (work / f"{tag}.log").read_text().strip().splitlines()[-1:],
    }


def json_task(folder: Path, task: str, data: Path, settings: str) -> Path:
    """An lm-eval task ``task`` over the JSON-lines file ``data`` (its test split), with the
    task's own ``settings`` (YAML lines) after the common part; returns the folder, for
    ``--include_path``."""
    folder.mkdir(exist_ok=True)
    (folder / f"{task}.yaml").write_text(
        f"task: {task}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {data}\ntest_split: test\n"
        + settings,
        encoding="utf-8",
    )
    return folder


def lm_eval_run(
    python: Path, tasks: Path, task: str, model: Path, work: Path, tag: str, batch_size: int = 16
) -> dict[str, Any]:
    """lm-eval's ``hf`` model on ``task`` (from ``tasks``), timed: wall, peak, forward counts, logged samples."""
    out = work / f"out-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    counts = work / f"{tag}.counts.json"
    cmd = [
        str(python),
        str(COUNTER_SHIM),
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},dtype=float32",
        "--device",
        "cpu",
        "--batch_size",
        str(batch_size),
        "--tasks",
        task,
        "--include_path",
        str(tasks),
        "--log_samples",
        "--output_path",
        str(out),
    ]
    wall, peak = measure(
        cmd,
        cwd=work,
        env=peer_env(BENCH_COUNTS=str(counts), HF_DATASETS_CACHE=str(work / f"ds-{tag}")),
        log=work / f"{tag}.log",
    )
    samples = [json.loads(line) for f in sorted(out.rglob("samples_*.jsonl")) for line in f.open()]
    return {"wall_s": wall, "peak_mb": peak, "samples": samples, **json.loads(counts.read_text())}


def first_context(arguments: Any) -> str:
    """The context of a sample's first request (lm-eval logs a list or a ``gen_args_<k>`` mapping)."""
    first = arguments["gen_args_0"]["arg_0"] if isinstance(arguments, dict) else arguments[0][0]
    return str(first)


def add_common_args(ap: argparse.ArgumentParser) -> None:
    """``--cache`` (where the peers' venvs live), ``--work`` and ``--out``: every peer benchmark has them."""
    ap.add_argument(
        "--cache",
        default=os.environ.get("HOLISTIC_CACHE_DIR", str(Path.home() / ".cache" / "holistic")),
        help="where the peers' virtual environments live (under peers/bench/)",
    )
    ap.add_argument("--work", help="scratch folder (default: a new temporary folder)")
    ap.add_argument("--out", help="write the results as JSON here")
