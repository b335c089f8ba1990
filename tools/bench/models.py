"""Benchmark the embedded model (SmolLM2-135M-Instruct) on this machine, both engines.

Measures, for ``transformers`` and ``llama_cpp``:

- cold start (first start ever: a fresh cache dir, so transformers converts the GGUF)
  and warm start (a later start), each in a fresh Python process, to the first answer;
- raw forward throughput in tokens/s (the engine alone, no harness);
- loglikelihood requests/s, batched (one ``process`` call) vs unbatched (one call each);
- generation tokens/s (greedy, no stop sequence);
- a 5-shot multiple-choice workload: 50 requests sharing a ~300-token prefix, each
  with its own question, answered with one token (as HELM's multiple_choice_joint
  does). The harness's time is compared with the ideal time: the unique tokens that
  must be computed (the prefix once + every suffix) divided by the raw tokens/s.

Every timing is the median of ``--repeats`` runs. Results are printed and written as JSON.

    python -m tools.bench.models --out bench_models.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from holistic.core.types import ModelDeployment, Request
from holistic.models.prefix_plan import common_prefix_len
from holistic.models.registry import ModelRegistry, create_client
from tools.bench.docs import add_docs_option, write_results

MODEL = "embedded/smollm2-135m-instruct"
ENGINES = ("transformers", "llama_cpp")
_WORDS = (
    "cell",
    "tissue",
    "organ",
    "muscle",
    "bone",
    "nerve",
    "blood",
    "heart",
    "lung",
    "liver",
    "kidney",
    "brain",
    "skin",
    "artery",
    "vein",
    "membrane",
    "protein",
    "enzyme",
    "hormone",
    "vessel",
    "joint",
    "tendon",
    "ligament",
    "cartilage",
    "nucleus",
    "structure",
    "function",
    "system",
    "layer",
    "region",
    "surface",
    "upper",
    "lower",
    "inner",
    "outer",
    "anterior",
    "posterior",
    "lateral",
)


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired_medians(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median time of each function, run in turn within every repeat.

    Interleaving keeps a comparison fair on a shared machine whose load changes
    during the benchmark.
    """
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def deployment(engine: str, **extra: Any) -> ModelDeployment:
    dep = ModelRegistry().get(MODEL)
    return replace(dep, args={**dep.args, "engine": engine, **extra})


# -- workloads ---------------------------------------------------------------------------------


def _question(rng: random.Random, n_words: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(n_words))
    choices = "\n".join(f"{letter}. {' '.join(rng.choice(_WORDS) for _ in range(3))}" for letter in "ABCD")
    return f"Question: Which {words}?\n{choices}\nAnswer:"


def five_shot_prompts(n: int, seed: int = 0) -> list[str]:
    """``n`` MMLU-like prompts: shared instructions + 5 solved examples, then a new question."""
    rng = random.Random(seed)
    head = "The following are multiple choice questions (with answers) about anatomy.\n\n"
    shots = "".join(f"{_question(rng, 18)} {rng.choice('ABCD')}\n\n" for _ in range(5))
    return [head + shots + _question(rng, 18) for _ in range(n)]


def scoring_requests(n: int, seed: int = 1) -> list[Request]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        context = " ".join(rng.choice(_WORDS) for _ in range(40))
        out.append(Request(model=MODEL, kind="loglikelihood", prompt=context, continuation=" " + rng.choice(_WORDS)))
    return out


# -- measurements ------------------------------------------------------------------------------


def start_time(engine: str, cache_dir: str) -> float:
    """Seconds from a fresh interpreter to the first answer."""
    code = (
        "import sys, time; t0 = time.perf_counter(); "
        "from dataclasses import replace;"
        "from holistic.core.types import Request;"
        "from holistic.models.registry import ModelRegistry, create_client;"
        "d = ModelRegistry().get(sys.argv[1]); d = replace(d, args={**d.args, 'engine': sys.argv[2]});"
        "c = create_client(d); r = c.process([Request(model=d.name, prompt='Hi', max_tokens=1)]);"
        "assert r[0].success, r[0].error; print(time.perf_counter() - t0)"
    )
    env = {**os.environ, "HOLISTIC_CACHE_DIR": cache_dir}
    out = subprocess.run(
        [sys.executable, "-c", code, MODEL, engine], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def raw_throughput(client: Any, n_tokens: int, repeats: int) -> float:
    """Tokens/s of one forward pass over ``n_tokens`` tokens, no harness involved."""
    ids = (client.tokenizer().encode(five_shot_prompts(1)[0]) * 4)[:n_tokens]
    engine = client.engine
    if engine.name == "transformers":
        import torch

        tensor = torch.tensor([ids])

        def run() -> None:
            with torch.inference_mode():
                engine.model(input_ids=tensor, logits_to_keep=1)
    else:
        llm = engine.llm

        def run() -> None:
            llm.reset()
            llm.eval(ids)

    run()
    return n_tokens / median_time(run, repeats)


def bench_engine(engine: str, repeats: int, cache_dir: str) -> dict[str, Any]:
    res: dict[str, Any] = {"engine": engine}
    cold_dir = tempfile.mkdtemp(prefix="holistic-bench-cold-")
    res["cold_start_s"] = start_time(engine, cold_dir)
    res["warm_start_s"] = statistics.median(start_time(engine, cache_dir) for _ in range(repeats))
    client = create_client(deployment(engine))
    res["identity"] = client.identity()
    res["raw_forward_tokens_per_s"] = {str(n): raw_throughput(client, n, repeats) for n in (64, 350)}

    scoring = scoring_requests(40)
    client.process(scoring[:2])
    t = paired_medians(
        {"batched": lambda: client.process(scoring), "unbatched": lambda: [client.process([r]) for r in scoring]},
        repeats,
    )
    res["loglikelihood_requests_per_s"] = {k: len(scoring) / v for k, v in t.items()}

    gen = [
        Request(model=MODEL, prompt=p, max_tokens=48)
        for p in ("Once upon a time", "The history of Rome", "Photosynthesis is", "My favourite recipe is")
    ]
    produced: dict[str, int] = {}

    def generate(batch: bool) -> None:
        results = client.process(gen) if batch else [r for q in gen for r in client.process([q])]
        produced["batched" if batch else "unbatched"] = sum(r.completion_tokens for r in results)

    t = paired_medians({"batched": lambda: generate(True), "unbatched": lambda: generate(False)}, repeats)
    res["generation_tokens_per_s"] = {k: produced[k] / v for k, v in t.items()}

    res["five_shot"] = five_shot(client, repeats)
    client.close()
    return res


def five_shot(client: Any, repeats: int, n: int = 50) -> dict[str, Any]:
    prompts = five_shot_prompts(n)
    tok = client.tokenizer()
    ids = [tok.encode(p) for p in prompts]
    shared = min(common_prefix_len(ids[0], x) for x in ids[1:])
    unique = shared + sum(len(x) - shared for x in ids)
    total = sum(len(x) for x in ids)
    requests = [Request(model=MODEL, prompt=p, max_tokens=1, trial_tag=str(i)) for i, p in enumerate(prompts)]
    tps = raw_throughput(client, 350, repeats)
    harness = median_time(lambda: client.process(requests), repeats)
    out: dict[str, Any] = {
        "requests": n,
        "prompt_tokens_mean": total / n,
        "shared_prefix_tokens": shared,
        "unique_tokens": unique,
        "total_tokens": total,
        "harness_s": harness,
    }
    out["raw_tokens_per_s_350"] = tps
    out["ideal_s"] = unique / tps
    out["ratio_harness_to_ideal"] = harness / out["ideal_s"]
    if client.engine.name == "transformers":
        opts = client.engine.options
        # without prefix reuse (one run each: these are slow)
        client.engine.options = replace(opts, prefix_cache=False)
        out["harness_no_prefix_cache_s"] = median_time(lambda: client.process(requests), 1)
        client.engine.options = replace(opts, prefix_cache=False, batch_size=1)
        out["harness_no_prefix_cache_unbatched_s"] = median_time(lambda: client.process(requests), 1)
        client.engine.options = opts
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.models", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench_models.json"), help="JSON results file")
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing (median reported)")
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    add_docs_option(parser)
    args = parser.parse_args(argv)
    cache_dir = os.environ.get("HOLISTIC_CACHE_DIR", str(Path.home() / ".cache" / "holistic"))
    report: dict[str, Any] = {
        "model": MODEL,
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_1m_at_start": os.getloadavg()[0],
        },
        "repeats": args.repeats,
        "engines": {},
    }
    for engine in args.engines:
        print(f"== {engine}", flush=True)
        res = bench_engine(engine, args.repeats, cache_dir)
        report["engines"][engine] = res
        print(json.dumps({k: v for k, v in res.items() if k != "identity"}, indent=2), flush=True)
    report["machine"]["load_avg_1m_at_end"] = os.getloadavg()[0]
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")
    if args.write_docs:
        print(
            f"wrote {write_results('models', [{'engine': e, **{k: v for k, v in r.items() if isinstance(v, int | float)}} for e, r in report['engines'].items()])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
