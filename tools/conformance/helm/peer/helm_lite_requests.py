"""HELM Lite's LegalBench, MedQA and WMT14 requests and reference stats, made by HELM's own code; runs in
HELM's interpreter (``tools.conformance.helm.lite`` runs it, with the working directory a scratch folder)::

    <helm venv>/bin/python helm_lite_requests.py PAYLOAD_JSON_FILE

HELM's scenario classes, HELM Lite's run-spec functions (``lite_run_specs``) and HELM's adapters (every
eval instance, HELM's in-context example draw of trial 0) on the bytes the payload names; HELM's
``compute_reference_metrics`` (the metric names of each run spec) on the completions the payload gives.
Prints one JSON object (the golden file's body) on its last line.
"""

import dataclasses
import hashlib
import json
import os
import re
import sys
from pathlib import Path

# NLTK's Punkt model from holistic's shipped copy (HELM's BLEU tokenizes with it): nothing is downloaded.
os.environ.setdefault("NLTK_DATA", str(Path(__file__).resolve().parents[4] / "holistic" / "metrics" / "nltk_data"))

import datasets
import helm.benchmark.adaptation.adapters.adapter as adapter_module
import helm.benchmark.scenarios.legalbench_scenario as legalbench_module
import helm.benchmark.scenarios.wmt_14_scenario as wmt_module
import numpy as np
import pandas as pd
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.metrics.evaluate_reference_metrics import bleu_1, bleu_4, compute_reference_metrics
from helm.benchmark.run_specs.lite_run_specs import get_legalbench_spec, get_med_qa_spec, get_wmt_14_spec
from helm.benchmark.scenarios.legalbench_scenario import LegalBenchScenario
from helm.benchmark.scenarios.med_qa_scenario import MedQAScenario
from helm.benchmark.scenarios.scenario import CORRECT_TAG, EVAL_SPLITS, with_instance_ids
from helm.benchmark.scenarios.wmt_14_scenario import WMT14Scenario
from helm.common.request import GeneratedOutput, RequestResult
from roomy_window import install_roomy_window  # beside this file

args = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
install_roomy_window(adapter_module)
KEEP_PROMPTS = 3


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def instance_key(instance):
    """The digest of an instance's input and references (text, correct) that both tools compute."""
    refs = [[r.output.text, CORRECT_TAG in r.tags] for r in instance.references]
    return sha(json.dumps([instance.input.text, refs], ensure_ascii=False))[:16]


def record(run_spec, instances, completions):
    """HELM's adapter on every eval instance; the reference stats on the given completions."""
    adapter = AdapterFactory.get_adapter(run_spec.adapter_spec, None)
    instances = with_instance_ids(instances)
    states = adapter.adapt(instances, parallelism=1)
    spec = run_spec.adapter_spec
    names = [n for m in run_spec.metric_specs for n in m.args.get("names", [])]
    out = {
        "run_spec": run_spec.name,
        "adapter_spec": {
            "method": spec.method,
            "instructions": spec.instructions,
            "input_prefix": spec.input_prefix,
            "input_suffix": spec.input_suffix,
            "output_prefix": spec.output_prefix,
            "output_suffix": spec.output_suffix,
            "max_train_instances": spec.max_train_instances,
            "max_tokens": spec.max_tokens,
            "stop_sequences": list(spec.stop_sequences),
            "temperature": spec.temperature,
        },
        "metric_names": names,
        "num_train": sum(1 for i in instances if i.split == "train"),
        "eval": [],
        "stats": {},
    }
    first = states[0].request
    out["request"] = {
        "temperature": first.temperature,
        "max_tokens": first.max_tokens,
        "stop_sequences": list(first.stop_sequences),
        "num_completions": first.num_completions,
    }
    for index, state in enumerate(states):
        assert state.instance.split in EVAL_SPLITS
        key = instance_key(state.instance)
        out["eval"].append([key, state.instance.split, sha(state.request.prompt)[:16]])
        if index < KEEP_PROMPTS:
            out.setdefault("prompts", []).append(state.request.prompt)
        if key in completions:
            state = dataclasses.replace(
                state,
                result=RequestResult(
                    success=True,
                    embedding=[],
                    completions=[GeneratedOutput(text=completions[key], logprob=0.0, tokens=[])],
                    cached=False,
                ),
            )
            stats = compute_reference_metrics(names, spec, state, None)
            out["stats"][key] = {"completion": completions[key], **{s.name.name: s.mean for s in stats}}
    return out


def read_tsv(path):
    """A LegalBench TSV as text (no type guessing, no NA conversion)."""
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def legalbench_tables(subset):
    folder = Path(args["data_root"]) / "legalbench" / subset
    train = read_tsv(folder / "train.tsv")
    test = read_tsv(folder / "test_prerelease_2d7f2ca.tsv").rename(columns={"label": "answer"})
    test.insert(0, "index", [str(i) for i in range(len(test))])
    return {"train": train, "test": test}


def stage_legalbench_settings():
    source = Path(args["data_root"]) / "legalbench" / "helm_prompt_settings.jsonl"
    cache = Path("benchmark_output") / "scenarios" / "legalbench"
    for folder in (cache, cache / "data"):  # the run spec's and the scenario's cache
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "prompt_construction_settings.json").write_bytes(source.read_bytes())
    return cache


result = {"made_by": "crfm-helm " + __import__("importlib.metadata").metadata.version("crfm-helm"), "runs": {}}
cache = stage_legalbench_settings()
for subset in args["legalbench_subsets"]:
    tables = legalbench_tables(subset)
    legalbench_module.datasets.load_dataset = lambda *a, split, t=tables, **k: datasets.Dataset.from_pandas(t[split])
    run_spec = get_legalbench_spec(subset)
    instances = LegalBenchScenario(subset).get_instances(str(cache))
    result["runs"][f"legalbench:{subset}"] = record(
        run_spec, instances, args["completions"].get(f"legalbench:{subset}", {})
    )

# MedQA: HELM's files in its layout; the train file holds the test rows holistic holds out as its
# example pool (the real train and dev files are not here), dev is empty.
med = Path("benchmark_output") / "scenarios" / "med_qa"
folder = med / "data" / "data_clean" / "questions" / "US" / "4_options"
folder.mkdir(parents=True, exist_ok=True)
source = Path(args["data_root"]) / "med_qa" / "data_clean" / "questions" / "US" / "4_options"
lines = (source / "phrases_no_exclude_test.jsonl").read_bytes().splitlines(keepends=True)
pool = set(args["med_qa_pool_lines"])
(folder / "phrases_no_exclude_train.jsonl").write_bytes(b"".join(line for n, line in enumerate(lines, 1) if n in pool))
(folder / "phrases_no_exclude_dev.jsonl").write_bytes(b"")
(folder / "phrases_no_exclude_test.jsonl").write_bytes(
    b"".join(line for n, line in enumerate(lines, 1) if n not in pool)
)
result["runs"]["med_qa"] = record(
    get_med_qa_spec(), MedQAScenario().get_instances(str(med)), args["completions"]["med_qa"]
)

SEG = re.compile(r"<seg id=\"\d+\">(.*)</seg>")


def hf_sgm(path):
    """The Hugging Face wmt14 builder's SGML parse (wmt_utils._parse_sgm): one regex match a line, raw."""
    with open(path, encoding="utf-8") as fh:
        return [m.groups()[0] for m in (re.match(SEG, line) for line in fh) if m]


for pair in args["wmt_pairs"]:
    x = pair.split("-")[0]
    base = Path(args["data_root"]) / "wmt_14" / "test-full"
    src, ref = hf_sgm(base / f"newstest2014-{x}en-src.{x}.sgm"), hf_sgm(base / f"newstest2014-{x}en-ref.en.sgm")
    assert len(src) == len(ref)
    rows = [
        {x: s, "en": r} for s, r in zip(src, ref, strict=True) if s and r
    ]  # the builder drops pairs with an empty side
    held = args["wmt_pools"][pair]
    pool = [rows[i] for i in held]
    rest = [r for i, r in enumerate(rows) if i not in set(held)]
    # Staged so that HELM's shuffle(seed=42) puts the pool back in holistic's order.
    permutation = np.random.default_rng(42).permutation(len(pool))
    staged = [None] * len(pool)
    for i, p in enumerate(permutation):
        staged[p] = pool[i]
    dd = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict({"translation": staged}),
            "validation": datasets.Dataset.from_dict({"translation": []}),
            "test": datasets.Dataset.from_dict({"translation": rest}),
        }
    )
    assert dd["train"].shuffle(seed=42)["translation"] == pool, "HF's shuffle is not the permutation staged for"
    wmt_module.load_dataset = lambda *a, d=dd, **k: d
    run_spec = get_wmt_14_spec(pair)
    instances = WMT14Scenario(x, "en").get_instances(os.getcwd())
    result["runs"][f"wmt_14:{pair}"] = record(run_spec, instances, args["completions"].get(f"wmt_14:{pair}", {}))

# HELM's own BLEU test case (helm/benchmark/metrics/test_evaluate_reference_metrics.py) and more pairs.
result["bleu"] = [{"gold": g, "pred": p, "bleu_1": bleu_1(g, p), "bleu_4": bleu_4(g, p)} for g, p in args["bleu_pairs"]]
print(json.dumps(result, ensure_ascii=False))
