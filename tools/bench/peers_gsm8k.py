"""The ``gsm8k`` workload of ``python -m tools.bench.peers``: GSM8K, 5-shot chain of thought,
greedy generation, against lm-evaluation-harness 0.4.13 on byte-identical prompts.

lm-eval runs its own ``gsm8k_cot`` task (``lm_eval/tasks/gsm8k/gsm8k-cot.yaml`` of the
installed package, included by a task file that only points it at local questions and
sets ``max_gen_toks``): ``Q: <question>\\nA:`` prompts, the eight chain-of-thought
exemplars of that file as the pool, ``first_n`` (the first five, in the file's order),
stopping at ``Q:``, ``</s>`` or ``<|im_end|>``. holistic runs the same through its
``file`` scenario: the pool is those exemplars, read from the same installed file at run
time and written in that order, ``selection: first``, and the prefixes and stops of the
lm-eval task (the adaptation recorded beside lm-eval's own prompt in
``tests/conformance/lm_eval/gsm8k_cot.json``). The evaluated questions are the first
``--questions-gsm8k`` of GSM8K's ``train.jsonl`` (the data root holds that file; the
exemplars come from elsewhere).

Before anything is timed the script checks that every prompt holistic sends is the
prompt lm-eval logs, byte for byte, and says so; a difference stops the benchmark.
Per pair: wall time, peak memory, generated tokens (the completions' tokens, counted
with the model's tokenizer the same way for both), tokens per second, and whether
the completions are identical. Target: holistic ≤ 0.30× lm-eval's wall time with
identical greedy completions.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from tools import peers as bp
from tools.common import REPO

TARGET_RATIO = 0.30
CONFORMANCE = REPO / "tests" / "conformance" / "lm_eval" / "gsm8k_cot.json"
LAYOUT = json.loads(CONFORMANCE.read_text(encoding="utf-8"))
"""holistic's adaptation for lm-eval's gsm8k_cot layout, recorded with the prompt lm-eval
logged for it (``tests/conformance/test_conformance_lm_eval_gsm8k.py`` checks the two agree)."""
SHOTS = int(LAYOUT["holistic_adaptation"]["max_train_instances"])


def cot_task_file(python: Path) -> Path:
    """lm-eval's own ``gsm8k-cot.yaml`` in the peer's installation."""
    site = next(python.parent.parent.glob("lib/python3*/site-packages"))
    path = site / "lm_eval" / "tasks" / "gsm8k" / "gsm8k-cot.yaml"
    if not path.is_file():
        raise SystemExit(f"bench_peers: {path} not found (is lm_eval 0.4.13 installed in {python.parent.parent}?)")
    return path


def cot_settings(task_file: Path) -> dict[str, Any]:
    """The exemplars, prompt parts and stop sequences of lm-eval's ``gsm8k_cot`` task."""
    import yaml

    task = yaml.safe_load(task_file.read_text(encoding="utf-8"))
    samples = task["fewshot_config"]["samples"]
    if task["fewshot_config"].get("sampler") != "first_n" or len(samples) < SHOTS:
        raise SystemExit(f"bench_peers: {task_file} is not the gsm8k_cot task this workload reproduces")
    if task["doc_to_text"] != "Q: {{question}}\nA:":
        raise SystemExit(f"bench_peers: {task_file}: unexpected doc_to_text {task['doc_to_text']!r}")
    return {"samples": samples, "until": list(task["generation_kwargs"]["until"])}


def write_data(root: Path, work: Path, n: int, samples: list[dict[str, str]]) -> tuple[Path, Path]:
    questions = []
    with (root / "gsm8k" / "train.jsonl").open(encoding="utf-8") as fh:
        for k, line in enumerate(fh):
            if k >= n:
                break
            row = json.loads(line)
            questions.append({"id": f"gsm8k-{k}", "question": row["question"], "answer": row["answer"]})
    eval_file, pool_file = work / "gsm8k_questions.jsonl", work / "gsm8k_cot_pool.jsonl"
    eval_file.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    pool = [{"id": f"cot-{k}", "question": s["question"], "answer": s["target"]} for k, s in enumerate(samples)]
    pool_file.write_text("".join(json.dumps(p) + "\n" for p in pool), encoding="utf-8")
    return eval_file, pool_file


def holistic_spec(eval_file: Path, pool_file: Path, work: Path, n: int, until: list[str], max_tokens: int) -> Path:
    run = {
        "scenario": "file",
        "args": {
            "path": {"train": str(pool_file), "test": str(eval_file)},
            "fields": {"input": "question", "output": "answer", "id": "id"},
        },
        "adaptation": {
            **LAYOUT["holistic_adaptation"],
            "max_eval_instances": n,
            "eval_instances": "first",
            "max_tokens": max_tokens,
            "stop_sequences": until,
        },
        "metrics": ["accuracy"],
    }
    spec = work / "bench_gsm8k.yaml"
    spec.write_text(json.dumps({"suite": "bench_gsm8k", "models": [bp.MODEL], "runs": [run]}), encoding="utf-8")
    return spec


def lm_eval_tasks(task_file: Path, eval_file: Path, work: Path, until: list[str], max_tokens: int) -> Path:
    stops = "".join(f"    - {json.dumps(u)}\n" for u in until)
    return bp.json_task(
        work / "lm_eval_gsm8k_tasks",
        "bench_gsm8k_cot",
        eval_file,
        f"include: {task_file}\n"
        "tag: []\n"
        "dataset_name: null\n"
        f"num_fewshot: {SHOTS}\n"
        f"generation_kwargs:\n  do_sample: false\n  max_gen_toks: {max_tokens}\n  until:\n{stops}",
    )


def run_lm_eval(python: Path, tasks: Path, model: Path, work: Path, tag: str, batch_size: int) -> dict[str, Any]:
    run = bp.lm_eval_run(python, tasks, "bench_gsm8k_cot", model, work, tag, batch_size)
    samples = run.pop("samples")
    return {
        **run,
        "prompts": {s["doc"]["id"]: bp.first_context(s["arguments"]) for s in samples},
        "completions": {s["doc"]["id"]: str(s["resps"][0][0]) for s in samples},
    }


def holistic_outputs(run: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    prompts = {r["instance_id"]: r["prompt"] for r in run["requests"]}
    completions = {r["instance_id"]: r["completion"] or "" for r in run["requests"]}
    return prompts, completions


def check_prompts(peer: dict[str, Any], prompts: dict[str, str]) -> None:
    """Stop unless holistic's prompts are lm-eval's, byte for byte."""
    differ = [i for i, p in peer["prompts"].items() if prompts.get(i) != p]
    if differ or set(prompts) != set(peer["prompts"]):
        first = differ[0] if differ else sorted(set(prompts) ^ set(peer["prompts"]))[0]
        raise SystemExit(
            f"bench_peers: gsm8k prompts differ ({len(differ)} of {len(peer['prompts'])}); first {first}:\n"
            f"lm-eval:  {peer['prompts'].get(first)!r}\nholistic: {prompts.get(first)!r}"
        )
    print(f"gsm8k prompts: {len(prompts)}/{len(prompts)} byte-identical to lm-eval's", flush=True)


def generated_tokens(completions: dict[str, str], model: Path) -> int:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model))
    return sum(len(tok(c, add_special_tokens=False)["input_ids"]) for c in completions.values())


def run_workload(args: Any, root: Path, work: Path, peers_dir: Path, model: Path) -> dict[str, Any]:
    python = bp.install_peer(peers_dir / "lm_eval", [bp.TORCH, bp.LM_EVAL])
    task_file = cot_task_file(python)
    settings = cot_settings(task_file)
    eval_file, pool_file = write_data(root, work, args.questions_gsm8k, settings["samples"])
    spec = holistic_spec(eval_file, pool_file, work, args.questions_gsm8k, settings["until"], args.max_tokens)
    tasks = lm_eval_tasks(task_file, eval_file, work, settings["until"], args.max_tokens)
    print(f"gsm8k: lm-eval's exemplars and stops from {task_file}", flush=True)
    peers, ours = [], []
    for k in range(args.pairs):
        peers.append(run_lm_eval(python, tasks, model, work, f"lm_eval-gsm8k-{k}", args.lm_eval_batch_size))
        ours.append(bp.run_holistic(spec, work, f"holistic-gsm8k-{k}"))
        prompts, completions = holistic_outputs(ours[-1])
        if k == 0:
            check_prompts(peers[0], prompts)
        same = sum(completions.get(i) == c for i, c in peers[-1]["completions"].items())
        for run, done in ((peers[-1], peers[-1]["completions"]), (ours[-1], completions)):
            run["generated_tokens"] = generated_tokens(done, model)
            run["tokens_per_s"] = run["generated_tokens"] / run["wall_s"]
        ours[-1]["identical"] = same
        p, h = peers[-1], ours[-1]
        print(
            f"pair {k + 1}: lm-eval {p['wall_s']:.1f} s, {p['peak_mb']:.0f} MB, {p['generated_tokens']} tokens "
            f"({p['tokens_per_s']:.1f}/s) | holistic {h['wall_s']:.1f} s, {h['peak_mb']:.0f} MB, "
            f"{h['generated_tokens']} tokens ({h['tokens_per_s']:.1f}/s) | ratio {h['wall_s'] / p['wall_s']:.2f} | "
            f"completions identical {same}/{len(p['completions'])}",
            flush=True,
        )
    return report(peers, ours)


def report(peers: list[dict[str, Any]], ours: list[dict[str, Any]]) -> dict[str, Any]:
    def med(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(float(r[key]) for r in runs)

    n = len(peers[0]["completions"])
    identical = min(int(h["identical"]) for h in ours)
    summary: dict[str, Any] = {
        "peer": "lm-eval",
        "peer_wall_s": med(peers, "wall_s"),
        "holistic_wall_s": med(ours, "wall_s"),
        "peer_peak_mb": med(peers, "peak_mb"),
        "holistic_peak_mb": med(ours, "peak_mb"),
        "peer_generated_tokens": med(peers, "generated_tokens"),
        "holistic_generated_tokens": med(ours, "generated_tokens"),
        "peer_tokens_per_s": med(peers, "tokens_per_s"),
        "holistic_tokens_per_s": med(ours, "tokens_per_s"),
        "completions_identical": f"{identical}/{n}",
        "prompts_identical": f"{n}/{n}",
    }
    summary["ratio"] = summary["holistic_wall_s"] / summary["peer_wall_s"]
    met = summary["ratio"] <= TARGET_RATIO and identical == n
    print(f"\n== GSM8K 5-shot chain of thought: lm-eval vs holistic ({len(ours)} alternating pairs)")
    print(f"{'tool':<10} {'wall s':>7} {'peak MB':>8} {'tokens':>7} {'tokens/s':>9}")
    for name, who in (("lm-eval", "peer"), ("holistic", "holistic")):
        print(
            f"{name:<10} {summary[f'{who}_wall_s']:7.1f} {summary[f'{who}_peak_mb']:8.0f} "
            f"{summary[f'{who}_generated_tokens']:7.0f} {summary[f'{who}_tokens_per_s']:9.1f}"
        )
    print(
        f"ratio {summary['ratio']:.2f} (target <= {TARGET_RATIO} with identical greedy completions: "
        f"{'met' if met else 'MISSED'}); completions identical {identical}/{n}, prompts {n}/{n}"
    )
    return summary
