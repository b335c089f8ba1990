"""holistic against lm-evaluation-harness and HELM on identical work, on this machine.

Three workloads, each run as alternating pairs (peer, holistic, peer, holistic, ...)
with cold caches (fresh output and cache folders every run), same weights
(SmolLM2-135M-Instruct: the embedded model's GGUF converted once to a transformers
folder, which both peers load as a local model):

- ``separate`` vs lm-evaluation-harness 0.4.13: 0-shot, 300 MMLU test questions, each
  choice scored as a continuation by log-likelihood (1,200 requests). The questions
  are written once to a JSONL file that both tools read: holistic through its ``file``
  scenario, lm-eval through a task YAML whose ``dataset_kwargs`` point at that file.
  Prompts are ``Question: ...\\nAnswer:`` and each choice is `` <choice>`` in both.
- ``joint`` vs HELM (crfm-helm 0.5.16): MMLU anatomy 5-shot multiple choice joint,
  50 eval instances. Both build their prompts from the same MMLU CSV files (placed where
  HELM's scenario would download them; holistic's ``--data-root``): HELM from its run
  entry, holistic from its natural ``mmlu`` scenario under ``protocol: helm`` (one trial,
  as HELM's run entry). The prompts are matched byte for byte and so are the answers.
- ``gsm8k`` vs lm-evaluation-harness 0.4.13: GSM8K 5-shot chain of thought, greedy
  generation up to ``--max-tokens`` (256), ``--questions-gsm8k`` (20) questions, lm-eval's
  own ``gsm8k_cot`` task against holistic's ``selection: first`` on the same exemplars;
  prompts checked byte-identical before timing (``tools.bench.peers_gsm8k``).

Per run: wall time, peak resident memory of the process tree's largest process,
forward passes and padded positions through the model (counted for the peers by
wrapping the model's ``forward`` in their process; holistic reports its own), and
predictions, which must agree across tools. Per workload: medians and the ratio
holistic ÷ peer. For holistic also its *efficiency against the floor*: its scoring
phase (the summed engine time of its requests) against the unique tokens of the work
(the nodes of the token trie of every prompt and continuation) divided by the
model's forward rate measured here.

Peers are installed (once) in their own virtual environments under
``<cache>/peers/bench/`` (``--cache``, default ``~/.cache/holistic``); they are never
holistic dependencies. A file lock keeps two concurrent installs apart.

    python -m tools.bench.peers --pairs 3 --out bench_peers.json
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.bench import peers_gsm8k
from tools.bench.docs import add_docs_option, figures, write_results
from tools.common import REPO
from tools.peers import (
    COUNTER_SHIM,
    HELM_MODEL,
    LM_EVAL,
    MODEL,
    TORCH,
    add_common_args,
    data_root,
    first_context,
    install_helm,
    install_peer,
    json_task,
    lm_eval_run,
    measure,
    model_dir,
    peer_env,
    run_holistic,
)

SUBJECTS = ("abstract_algebra", "anatomy", "astronomy")
"""The separate workload's 300 questions: the first test questions of these subjects, in order."""


# -- set-up --------------------------------------------------------------------------------


# -- measuring a run ---------------------------------------------------------------------------


# -- workload 1: 0-shot choice by choice, against lm-eval ---------------------------------------


def write_separate_data(root: Path, work: Path, n: int) -> Path:
    rows: list[dict[str, Any]] = []
    for subject in SUBJECTS:
        with (root / "mmlu" / "test" / f"{subject}_test.csv").open(newline="", encoding="utf-8") as fh:
            for k, rec in enumerate(csv.reader(fh)):
                rows.append(
                    {
                        "id": f"{subject}-{k}",
                        "subject": subject,
                        "question": rec[0],
                        "choices": rec[1:5],
                        "answer": "ABCD".index(rec[5].strip()),
                    }
                )
    path = work / "mmlu_separate.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[:n]), encoding="utf-8")
    return path


def separate_spec(data: Path, work: Path, n: int) -> Path:
    spec = work / "bench_separate.yaml"
    spec.write_text(
        json.dumps(
            {
                "suite": "bench_separate",
                "models": [MODEL],
                "runs": [
                    {
                        "scenario": "file",
                        "args": {
                            "path": str(data),
                            "fields": {"input": "question", "choices": "choices", "label": "answer", "id": "id"},
                            "label_format": "index0",
                        },
                        "adaptation": {
                            "method": "multiple_choice_separate_original",
                            "max_train_instances": 0,
                            "max_eval_instances": n,
                            "input_prefix": "Question: ",
                            "output_prefix": "Answer: ",
                        },
                        "metrics": ["accuracy"],
                    }
                ],
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    return spec


def lm_eval_task(data: Path, work: Path) -> Path:
    return json_task(
        work / "lm_eval_tasks",
        "bench_mmlu_separate",
        data,
        "output_type: multiple_choice\n"
        'doc_to_text: "Question: {{question}}\\nAnswer:"\n'
        'doc_to_choice: "{{choices}}"\n'
        "doc_to_target: answer\n"
        'target_delimiter: " "\n'
        "metric_list:\n  - metric: acc\n",
    )


def run_lm_eval(python: Path, tasks: Path, model: Path, work: Path, tag: str) -> dict[str, Any]:
    run = lm_eval_run(python, tasks, "bench_mmlu_separate", model, work, tag)
    samples = run.pop("samples")
    preds = {
        s["doc"]["id"]: max(range(len(s["filtered_resps"])), key=lambda k: float(s["filtered_resps"][k][0]))
        for s in samples
    }
    prompts = {s["doc"]["id"]: first_context(s["arguments"]) for s in samples}
    return {**run, "preds": preds, "prompts": prompts}


def holistic_separate_preds(run: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    best: dict[str, tuple[float, int]] = {}
    prompts: dict[str, str] = {}
    for r in run["requests"]:
        iid, j = r["instance_id"], r["reference_index"]
        prompts[iid] = r["prompt"]
        if iid not in best or r["logprob"] > best[iid][0]:
            best[iid] = (r["logprob"], j)
    return {k: v[1] for k, v in best.items()}, prompts


# -- workload 2: 5-shot joint, against HELM -------------------------------------------------------


def helm_env_files(prod_env: Path, model: Path) -> None:
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_deployments.yaml").write_text(
        "model_deployments:\n"
        f"  - name: {HELM_MODEL}\n"
        f"    model_name: {HELM_MODEL}\n"
        f"    tokenizer_name: {HELM_MODEL}\n"
        "    max_sequence_length: 2048\n"
        "    client_spec:\n"
        "      class_name: helm.clients.huggingface_client.HuggingFaceClient\n"
        "      args:\n"
        f"        pretrained_model_name_or_path: {model}\n"
        "        apply_chat_template: false\n"
        "        torch_dtype: torch.float32\n",
        encoding="utf-8",
    )
    (prod_env / "tokenizer_configs.yaml").write_text(
        "tokenizer_configs:\n"
        f"  - name: {HELM_MODEL}\n"
        "    tokenizer_spec:\n"
        "      class_name: helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer\n"
        "      args:\n"
        f"        pretrained_model_name_or_path: {model}\n"
        '    end_of_text_token: "<|im_end|>"\n'
        '    prefix_token: ""\n',
        encoding="utf-8",
    )
    (prod_env / "model_metadata.yaml").write_text(
        "models:\n"
        f"  - name: {HELM_MODEL}\n"
        "    display_name: SmolLM2 135M Instruct (local)\n"
        "    description: SmolLM2-135M-Instruct from a local folder\n"
        "    creator_organization_name: HuggingFace\n"
        "    access: open\n"
        "    release_date: 2024-11-01\n"
        "    num_parameters: 135000000\n"
        "    tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG]\n",
        encoding="utf-8",
    )


def run_helm(python: Path, root: Path, model: Path, work: Path, tag: str, n: int) -> dict[str, Any]:
    base = work / f"out-{tag}"
    shutil.rmtree(base, ignore_errors=True)
    prod_env = base / "prod_env"
    helm_env_files(prod_env, model)
    # HELM's mmlu scenario skips its download when the data folder is already there.
    scen = base / "benchmark_output" / "scenarios" / "mmlu"
    scen.mkdir(parents=True)
    (scen / "data").symlink_to(root / "mmlu", target_is_directory=True)
    counts = work / f"{tag}.counts.json"
    entry = f"mmlu:subject=anatomy,method=multiple_choice_joint,model={HELM_MODEL}"
    cmd = [
        str(python),
        str(COUNTER_SHIM),
        "helm.benchmark.run",
        "--run-entries",
        entry,
        "--suite",
        "bench",
        "--max-eval-instances",
        str(n),
        "--local-path",
        str(prod_env),
        "--output-path",
        str(base / "benchmark_output"),
        "--disable-cache" if False else "--skip-completed-runs",
    ]
    wall, peak = measure(cmd, cwd=base, env=peer_env(BENCH_COUNTS=str(counts)), log=work / f"{tag}.log")
    state_file = next((base / "benchmark_output" / "runs" / "bench").glob("mmlu*/scenario_state.json"))
    states = json.loads(state_file.read_text())["request_states"]
    items = []
    for s in states:
        refs = s["instance"]["references"]
        answer = next(i for i, r in enumerate(refs) if "correct" in r["tags"])
        req = s["request"]
        items.append(
            {
                "id": s["instance"]["id"],
                "prompt": req["prompt"],
                "answer": "ABCDE"[answer],
                "max_tokens": req["max_tokens"],
                "stop": req["stop_sequences"],
                "completion": s["result"]["completions"][0]["text"],
            }
        )
    return {"wall_s": wall, "peak_mb": peak, "items": items, **json.loads(counts.read_text())}


def joint_spec(work: Path, n: int) -> Path:
    """holistic's own ``mmlu`` scenario (anatomy) under ``protocol: helm``: HELM's adaptation,
    one trial of its 5 in-context examples, ``n`` evaluation instances, read from the same
    CSV files (``--data-root``); its prompts are checked against HELM's, byte for byte."""
    spec = work / "bench_joint.yaml"
    run = {
        "scenario": "mmlu",
        "args": {"subject": "anatomy"},
        "max_eval_instances": n,
        "num_train_trials": 1,
        "metrics": ["accuracy"],
    }
    spec.write_text(
        json.dumps({"suite": "bench_joint", "protocol": "helm", "seed": 0, "models": [MODEL], "runs": [run]}, indent=1),
        encoding="utf-8",
    )
    return spec


# -- the floor ---------------------------------------------------------------------------------


def unique_tokens(sequences: Sequence[Sequence[int]]) -> int:
    """Nodes of the token trie of ``sequences``: each shared prefix counted once."""
    trie: dict[Any, Any] = {}
    count = 0
    for seq in sequences:
        node = trie
        for t in seq:
            if t not in node:
                node[t] = {}
                count += 1
            node = node[t]
    return count


def forward_rate(model: Path, seconds: float = 8.0) -> float:
    """Tokens/s of plain forward passes of 4 x 256 tokens (best of a few) in this process."""
    import torch
    from transformers import AutoModelForCausalLM

    lm: Any = AutoModelForCausalLM.from_pretrained(str(model), dtype=torch.float32)
    lm.eval()
    ids = torch.randint(100, 20000, (4, 256))
    best = 0.0
    end = time.perf_counter() + seconds
    with torch.inference_mode():
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            lm.model(input_ids=ids)
            best = max(best, ids.numel() / (time.perf_counter() - t0))
    return best


def work_tokens(requests: list[dict[str, Any]], model: Path) -> int:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model))
    seqs = []
    for r in requests:
        ctx = r["prompt"]
        cont = r["continuation"] or ""
        stripped = ctx.rstrip(" ")
        cont = ctx[len(stripped) :] + cont
        ids = tok(stripped, add_special_tokens=False)["input_ids"]
        seqs.append(ids + tok(cont, add_special_tokens=False)["input_ids"] if cont else ids)
    return unique_tokens(seqs)


# -- report -----------------------------------------------------------------------------------


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(r.get(key, 0)) for r in runs)


def _pair_line(k: int, peer: str, p: dict[str, Any], h: dict[str, Any]) -> None:
    print(
        f"pair {k + 1}: {peer} {p['wall_s']:.1f} s, {p['peak_mb']:.0f} MB, {p['forward_calls']} forward calls, "
        f"{p['padded_positions']} positions | holistic {h['wall_s']:.1f} s, {h['peak_mb']:.0f} MB, "
        f"{h['forward_calls']} forward calls, {h['padded_positions']} positions "
        f"({h['forward_tokens']} tokens), scoring {h['scoring_s']:.1f} s | ratio {h['wall_s'] / p['wall_s']:.2f}",
        flush=True,
    )


TARGETS = {"separate": 0.28, "joint": 0.18}
"""holistic's wall time ÷ the peer's, at most (medians of the pairs), with identical predictions. The
``separate`` workload stands for the issue's ARC-Easy one (0-shot, choice by choice, 300 questions):
ARC is not among the local data, MMLU's test questions are, in the same shape."""


def report(
    name: str, peer: str, peers: list[dict[str, Any]], ours: list[dict[str, Any]], agree: str, target: float
) -> dict[str, Any]:
    print(f"\n== {name}: {peer} vs holistic ({len(ours)} alternating pairs; predictions {agree})")
    print(
        f"{'pair':>4}  {'tool':<10} {'wall s':>7} {'peak MB':>8} {'forward calls':>13} {'positions':>10} {'ratio':>6}"
    )
    for k, (p, h) in enumerate(zip(peers, ours, strict=True), 1):
        print(
            f"{k:>4}  {peer:<10} {p['wall_s']:7.1f} {p['peak_mb']:8.0f} {p['forward_calls']:13d} "
            f"{p['padded_positions']:10d}"
        )
        print(
            f"{'':>4}  {'holistic':<10} {h['wall_s']:7.1f} {h['peak_mb']:8.0f} {h['forward_calls']:13d} "
            f"{h['padded_positions']:10d} {h['wall_s'] / p['wall_s']:6.2f}"
        )
    summary: dict[str, Any] = {
        "peer": peer,
        "peer_wall_s": _median(peers, "wall_s"),
        "holistic_wall_s": _median(ours, "wall_s"),
        "peer_peak_mb": _median(peers, "peak_mb"),
        "holistic_peak_mb": _median(ours, "peak_mb"),
        "peer_forward_calls": _median(peers, "forward_calls"),
        "holistic_forward_calls": _median(ours, "forward_calls"),
        "peer_positions": _median(peers, "padded_positions"),
        "holistic_positions": _median(ours, "padded_positions"),
        "holistic_tokens": _median(ours, "forward_tokens"),
        "holistic_scoring_s": _median(ours, "scoring_s"),
        "predictions": agree,
    }
    summary["ratio"] = summary["holistic_wall_s"] / summary["peer_wall_s"]
    summary["target_ratio"] = target
    summary["met"] = "yes" if summary["ratio"] <= target else "no"
    print(f"median  {peer:<10} {summary['peer_wall_s']:7.1f} {summary['peer_peak_mb']:8.0f}")
    print(
        f"median  {'holistic':<10} {summary['holistic_wall_s']:7.1f} {summary['holistic_peak_mb']:8.0f}   "
        f"ratio {summary['ratio']:.2f} ({1 / summary['ratio']:.1f}x faster; target <= {target}: "
        f"{'met' if summary['met'] == 'yes' else 'MISSED'}; predictions {agree})"
    )
    return summary


def separate_workload(args: argparse.Namespace, root: Path, work: Path, peers_dir: Path, model: Path) -> dict[str, Any]:
    """The ``separate`` workload against lm-evaluation-harness, with holistic's efficiency against the floor."""
    python = install_peer(peers_dir / "lm_eval", [TORCH, LM_EVAL])
    data = write_separate_data(root, work, args.questions)
    spec, tasks = separate_spec(data, work, args.questions), lm_eval_task(data, work)
    peers, ours = [], []
    for k in range(args.pairs):
        peers.append(run_lm_eval(python, tasks, model, work, f"lm_eval-{k}"))
        ours.append(run_holistic(spec, work, f"holistic-sep-{k}"))
        _pair_line(k, "lm-eval", peers[-1], ours[-1])
    h_preds, h_prompts = holistic_separate_preds(ours[0])
    same = sum(h_preds[i] == p for i, p in peers[0]["preds"].items() if i in h_preds)
    same_prompts = sum(h_prompts.get(i) == p for i, p in peers[0]["prompts"].items())
    agree = f"{same}/{len(peers[0]['preds'])} identical, prompts {same_prompts}/{len(peers[0]['prompts'])} identical"
    summary = report("0-shot choice by choice, MMLU test", "lm-eval", peers, ours, agree, TARGETS["separate"])
    floor_tokens = work_tokens(ours[0]["requests"], model)
    rate = forward_rate(model)
    floor_s = floor_tokens / rate
    summary.update(
        unique_tokens=floor_tokens,
        forward_rate=rate,
        floor_s=floor_s,
        scoring_vs_floor=summary["holistic_scoring_s"] / floor_s,
    )
    print(
        f"holistic efficiency: {summary['holistic_tokens']:.0f} tokens through the model for {floor_tokens} "
        f"unique; scoring {summary['holistic_scoring_s']:.1f} s vs floor {floor_s:.1f} s "
        f"({floor_tokens} tokens at {rate:.0f} tokens/s): {summary['scoring_vs_floor']:.2f}x the floor"
    )
    return summary


def joint_workload(args: argparse.Namespace, root: Path, work: Path, peers_dir: Path, model: Path) -> dict[str, Any]:
    """The ``joint`` workload against HELM, and a fully cached rerun of holistic's."""
    python = install_helm(peers_dir)
    peers, ours = [], []
    spec = joint_spec(work, args.instances)
    data = ["--data-root", str(root)]
    for k in range(args.pairs):
        peers.append(run_helm(python, root, model, work, f"helm-{k}", args.instances))
        ours.append(run_holistic(spec, work, f"holistic-joint-{k}", data))
        _pair_line(k, "HELM", peers[-1], ours[-1])
    assert ours, "no pair was run (--pairs 0)"
    # the two tools name instances differently: a HELM instance is matched by its prompt
    by_prompt = {r["prompt"]: r for r in ours[0]["requests"]}
    helm_items = peers[0]["items"]
    none: dict[str, Any] = {"completion": None}
    same = sum(
        (by_prompt.get(i["prompt"], none)["completion"] or "").strip() == i["completion"].strip() for i in helm_items
    )
    same_prompts = sum(i["prompt"] in by_prompt for i in helm_items)
    agree = f"{same}/{len(helm_items)} identical, prompts {same_prompts}/{len(helm_items)} identical"
    summary = report("MMLU anatomy 5-shot joint", "HELM", peers, ours, agree, TARGETS["joint"])
    cached = run_holistic(spec, work, "holistic-joint-cached-src", data)  # fills a cache ...
    rerun_out = work / "out-holistic-joint-rerun"
    shutil.rmtree(rerun_out, ignore_errors=True)
    helm_run = Path(sys.executable).with_name("helm-run")
    wall, peak = measure(
        [
            str(helm_run),
            str(spec),
            "--output-dir",
            str(rerun_out),
            "--cache-dir",
            str(work / "cache-holistic-joint-cached-src"),
            "--quiet",
            *data,
        ],
        cwd=work,
        env=peer_env(PYTHONPATH=str(REPO)),
        log=work / "rerun.log",
    )
    summary.update(cached_rerun_s=wall, cached_rerun_peak_mb=peak, cached_source_s=cached["wall_s"])
    print(f"fully cached rerun into a fresh output folder: {wall:.1f} s, peak {peak:.0f} MB")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bench.peers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3, help="alternating peer/holistic pairs per workload (default 3)")
    ap.add_argument("--only", choices=("separate", "joint", "gsm8k"), help="run one workload")
    ap.add_argument("--questions", type=int, default=300, help="questions of the separate workload (default 300)")
    ap.add_argument("--instances", type=int, default=50, help="instances of the joint workload (default 50)")
    ap.add_argument("--questions-gsm8k", type=int, default=20, help="questions of the gsm8k workload (default 20)")
    ap.add_argument("--max-tokens", type=int, default=256, help="tokens generated at most per gsm8k question (256)")
    ap.add_argument("--lm-eval-batch-size", type=int, default=16, help="lm-eval's --batch_size for gsm8k (16)")
    ap.add_argument(
        "--data-root",
        help="folder holding mmlu/ and gsm8k/ (default: $HOLISTIC_DATA_ROOT or the data mirror beside the clone)",
    )
    add_common_args(ap)
    add_docs_option(ap)
    args = ap.parse_args(argv)

    root = data_root(args.data_root, "gsm8k/train.jsonl" if args.only == "gsm8k" else "mmlu/test")
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_peers-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    peers_dir = Path(args.cache).expanduser() / "peers" / "bench"
    model = model_dir()
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}",
        "model": str(model).replace(str(Path.home()), "~", 1),
        "workloads": {},
    }
    print(f"bench_peers: work folder {work}; model {model}")

    if args.only in (None, "separate"):
        results["workloads"]["separate"] = separate_workload(args, root, work, peers_dir, model)
    if args.only in (None, "joint"):
        results["workloads"]["joint"] = joint_workload(args, root, work, peers_dir, model)
    if args.only in (None, "gsm8k"):
        results["workloads"]["gsm8k"] = peers_gsm8k.run_workload(args, root, work, peers_dir, model)

    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.write_docs:
        print(f"wrote {write_results('peers', figures(results))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
