"""API concurrency at the rate limit: holistic, lm-evaluation-harness and HELM on one endpoint.

A loopback OpenAI-compatible server (127.0.0.1 only; bounded in requests and time, it
stops by itself: :mod:`tests.support.rate_limited_server`) answers each completion
after a fixed latency and refuses a request that arrives while ``--limit`` others are
being served with 429, ``Retry-After`` and ``retry-after-ms``. The same ``--requests``
prompts (4 tokens each) are sent, one tool after the other, by:

- holistic: ``helm-run`` with an ``openai`` deployment on that server and **default
  settings** (adaptive concurrency, no ``-j``, no ``max_concurrency``): it must find the
  limit itself;
- lm-evaluation-harness 0.4.13: ``lm_eval --model local-completions`` with
  ``num_concurrent=--peer-concurrency`` (a generate_until task over the same prompts);
- HELM 0.5.16: its ``OpenAILegacyCompletionsClient`` behind HELM's request retry
  (``retry_request``, as its ``AutoClient`` calls it), on ``--peer-concurrency``
  threads through HELM's ``parallel_map`` (what ``helm-run -n`` does).

- a floor: the simplest client there is, ``http.client`` on ``--limit`` threads, each sending
  its share of the requests one after the other (no SDK, no retries, nothing recorded): the
  best any client reaches against this server on this machine, so the others' shortfall from
  the bound can be split into what the setup costs and what the tool costs.

The peers get the limit as their fixed concurrency (``--peer-concurrency``, default
``--limit``: a user who knows the limit and tunes for it); pass more to see how they
meet 429s. Per tool: the process's wall time, the serving span (first arrival to last
answer, at the server: start-up excluded alike for all), the bound (requests × latency
÷ limit), the span as % of the bound, and the 429s. Targets (holistic): ≥ 90 % of the
bound, and no sustained 429 storm (≤ 5 % of the requests refused).

Peers are installed once in their own virtual environments under ``<cache>/peers/bench/``:
lm-eval with its ``api`` extra; for HELM, the openai SDK HELM asks for (``crfm-helm[openai]``)
in a small venv that reads the installed HELM (``--helm-venv``) from a ``.pth`` file, so
HELM itself is neither installed again nor changed.

    python -m tools.bench.api                                  # 2,000 requests, 200 ms, limit 8
    python -m tools.bench.api --requests 100 --latency 0.05 --limit 4   # a quick check
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.rate_limited_server import RateLimitedServer
from tools.bench.docs import add_docs_option, figures, write_results
from tools.common import REPO
from tools.peers import LM_EVAL, PEER, TORCH, add_common_args, install_peer, json_task, peer_env

HELM_OPENAI = ("openai~=2.8", "tiktoken~=0.7")
"""What ``crfm-helm[openai]`` 0.5.16 requires beyond HELM itself."""
TARGET_PCT = 90.0
TARGET_429_SHARE = 0.05
MAX_TOKENS = 4


def helm_python(cache: Path, helm_venv: Path) -> Path:
    """A venv with the openai SDK that HELM needs, reading the installed HELM through a ``.pth``."""
    site = next((helm_venv / "lib").glob("python3*/site-packages"), None)
    if site is None or not (site / "helm").is_dir():
        sys.exit(f"bench_api: no HELM in {helm_venv} (pass --helm-venv, the venv crfm-helm 0.5.16 is installed in)")
    folder = cache / "peers" / "bench" / "helm_openai"
    python = install_peer(folder, list(HELM_OPENAI))
    own = next((folder / "lib").glob("python3*/site-packages"))
    (own / "zz_installed_helm.pth").write_text(str(site) + "\n", encoding="utf-8")
    return python


def write_prompts(work: Path, n: int) -> Path:
    path = work / "prompts.jsonl"
    rows = [
        {"id": f"q{i}", "prompt": f"Question {i}: what comes after {i}?\nAnswer:", "answer": str(i + 1)}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run_holistic(url: str, prompts: Path, work: Path, n: int) -> dict[str, Any]:
    models = work / "models.yaml"
    models.write_text(
        "models:\n"
        "  - name: bench/limited\n"
        "    provider: openai\n"
        "    model_id: bench\n"
        f"    args: {{base_url: '{url}'}}\n"
        "    context_window: 4096\n"
        "    capabilities: {chat: false, completions: true, logprobs: false, prompt_logprobs: false}\n",
        encoding="utf-8",
    )
    run = {
        "scenario": "file",
        "args": {"path": str(prompts), "fields": {"input": "prompt", "output": "answer", "id": "id"}},
        "adaptation": {
            "method": "generation",
            "max_train_instances": 0,
            "max_eval_instances": n,
            "template": "{{ input }}",
            "prompt_format": "plain",
            "max_tokens": MAX_TOKENS,
            "stop_sequences": ["\n"],
            "temperature": 0.0,
        },
        "metrics": ["accuracy"],
    }
    spec = work / "bench_api.yaml"
    spec.write_text(json.dumps({"suite": "bench_api", "models": ["bench/limited"], "runs": [run]}), encoding="utf-8")
    out = work / "out-holistic"
    shutil.rmtree(out, ignore_errors=True)
    helm_run = Path(sys.executable).with_name("helm-run")
    cmd = [str(helm_run), str(spec), "--models-file", str(models), "--output-dir", str(out), "--no-cache", "--quiet"]
    return _timed(cmd, work, "holistic", peer_env(PYTHONPATH=str(REPO), OPENAI_API_KEY="bench"))


def run_lm_eval(python: Path, url: str, prompts: Path, work: Path, concurrency: int) -> dict[str, Any]:
    tasks = json_task(
        work / "lm_eval_tasks",
        "bench_api",
        prompts,
        "output_type: generate_until\n"
        'doc_to_text: "{{prompt}}"\n'
        "doc_to_target: answer\n"
        f'generation_kwargs:\n  until: ["\\n"]\n  max_gen_toks: {MAX_TOKENS}\n  do_sample: false\n'
        "metric_list:\n  - metric: exact_match\n",
    )
    model_args = (
        f"model=bench,base_url={url}/completions,num_concurrent={concurrency},"
        "tokenizer_backend=None,tokenized_requests=False"
    )
    cmd = [
        str(python),
        "-m",
        "lm_eval",
        "--model",
        "local-completions",
        "--model_args",
        model_args,
        "--tasks",
        "bench_api",
        "--include_path",
        str(tasks),
        "--output_path",
        str(work / "out-lm_eval"),
    ]
    return _timed(cmd, work, "lm_eval", peer_env(HF_DATASETS_CACHE=str(work / "ds-lm_eval"), OPENAI_API_KEY="bench"))


def run_floor(url: str, prompts: Path, work: Path, concurrency: int) -> dict[str, Any]:
    cmd = [sys.executable, str(PEER / "floor_driver.py"), url, str(concurrency), str(prompts), str(MAX_TOKENS)]
    return _timed(cmd, work, "floor", peer_env())


def run_helm(python: Path, url: str, prompts: Path, work: Path, concurrency: int) -> dict[str, Any]:
    cmd = [str(python), str(PEER / "helm_api_driver.py"), url, str(concurrency), str(prompts), str(MAX_TOKENS)]
    return _timed(cmd, work, "helm", peer_env())


def _timed(cmd: list[str], work: Path, tag: str, env: dict[str, str]) -> dict[str, Any]:
    log = work / f"{tag}.log"
    start = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(cmd, cwd=work, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=3600)
    wall = time.perf_counter() - start
    tail = log.read_text(errors="replace").splitlines()[-15:]
    return {"wall_s": wall, "exit": proc.returncode, "log_tail": tail}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bench.api", description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000, help="requests per tool (default 2000)")
    ap.add_argument("--latency", type=float, default=0.2, help="server latency per request in seconds (0.2)")
    ap.add_argument("--limit", type=int, default=8, help="requests the server serves at once; more get 429 (8)")
    ap.add_argument("--retry-after", type=float, help="the wait a 429 asks for, seconds (default: the latency)")
    ap.add_argument("--peer-concurrency", type=int, help="the peers' fixed concurrency (default: --limit)")
    ap.add_argument(
        "--tools",
        default="holistic,lm-eval,helm,floor",
        help="comma-separated subset (default: the three tools and the floor)",
    )
    ap.add_argument("--helm-venv", help="the venv HELM 0.5.16 is installed in (default: <cache>/peers/helm)")
    add_common_args(ap)
    add_docs_option(ap)
    args = ap.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = sorted(set(tools) - {"holistic", "lm-eval", "helm", "floor"})
    if unknown:
        ap.error(f"unknown tool {unknown[0]!r} (valid: holistic, lm-eval, helm, floor)")
    cache = Path(args.cache).expanduser()
    peer_n = args.peer_concurrency or args.limit
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_api-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    prompts = write_prompts(work, args.requests)
    bound = args.requests * args.latency / args.limit
    pythons = {}
    if "lm-eval" in tools:
        pythons["lm-eval"] = install_peer(cache / "peers" / "bench" / "lm_eval", [TORCH, LM_EVAL])
    if "helm" in tools:
        pythons["helm"] = helm_python(cache, Path(args.helm_venv or cache / "peers" / "helm"))

    # Enough time for the slowest tool many times over, then the server stops itself.
    deadline = 600.0 + 20 * bound * len(tools)
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "requests": args.requests,
        "latency_s": args.latency,
        "limit": args.limit,
        "peer_concurrency": peer_n,
        "bound_s": bound,
        "tools": {},
    }
    print(
        f"bench_api: {args.requests} requests, {args.latency * 1000:.0f} ms each, limit {args.limit} in flight "
        f"-> bound {bound:.1f} s; peers at a fixed {peer_n}; work folder {work}",
        flush=True,
    )
    with RateLimitedServer(
        limit=args.limit,
        latency_s=args.latency,
        retry_after_s=args.retry_after,
        max_requests=50 * args.requests * len(tools),
        deadline_s=deadline,
    ) as server:
        for tool in tools:
            server.reset()
            if tool == "holistic":
                run = run_holistic(server.url, prompts, work, args.requests)
            elif tool == "lm-eval":
                run = run_lm_eval(pythons[tool], server.url, prompts, work, peer_n)
            elif tool == "floor":
                run = run_floor(server.url, prompts, work, args.limit)
            else:
                run = run_helm(pythons[tool], server.url, prompts, work, peer_n)
            stats = server.stats()
            run.update(
                served=stats.served,
                rate_limited=stats.rate_limited,
                peak_in_flight=stats.peak_in_flight,
                span_s=stats.span_s,
                pct_of_bound=100.0 * bound / stats.span_s if stats.span_s else 0.0,
            )
            results["tools"][tool] = run
            if run["exit"] not in (0, 3):
                print(f"  {tool} exited {run['exit']}; log tail:\n    " + "\n    ".join(run["log_tail"]))
    report(results)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.write_docs:
        print(f"wrote {write_results('api', figures(results))}")
    return 0


def report(results: dict[str, Any]) -> None:
    n = results["requests"]
    print(f"\n{'tool':<9} {'wall s':>7} {'span s':>7} {'% bound':>8} {'429s':>6} {'peak':>5} {'served':>7}")
    for tool, r in results["tools"].items():
        print(
            f"{tool:<9} {r['wall_s']:7.1f} {r['span_s']:7.1f} {r['pct_of_bound']:7.0f}% {r['rate_limited']:6d} "
            f"{r['peak_in_flight']:5d} {r['served']:7d}"
        )
    ours = results["tools"].get("holistic")
    if ours:
        pct, share = ours["pct_of_bound"], ours["rate_limited"] / max(n, 1)
        print(
            f"holistic: {pct:.0f}% of the bound (target >= {TARGET_PCT:.0f}%: {'met' if pct >= TARGET_PCT else 'MISSED'}); "
            f"429s {ours['rate_limited']} = {100 * share:.1f}% of the requests (target <= {100 * TARGET_429_SHARE:.0f}%: "
            f"{'met' if share <= TARGET_429_SHARE else 'MISSED'}); served {ours['served']} of {n}"
        )


if __name__ == "__main__":
    sys.exit(main())
