"""Golden metric values computed by HELM's own functions, for holistic's conformance tests.

Run with the Python of a virtual environment that has crfm-helm 0.5.16 installed (never
holistic's own environment; ``python -m tools.conformance.helm`` makes one under
``~/.cache/holistic/peers/helm``)::

    ~/.cache/holistic/peers/helm/bin/python tools/conformance/helm/peer/helm_metric_goldens.py \
        --out tests/conformance/metrics_helm.json

The script does not import holistic. It feeds fixed inputs (written below, plus the
repository's README as real text) to HELM's functions — token F1 and the exact-match
family, BLEU, ``nltk.word_tokenize``, the bias metrics, the calibration metrics,
perplexity / bits per byte, the worst-case aggregation, the misspelling
perturbation, the classification F1s and ``final_number_exact_match`` — and writes inputs and outputs to one JSON file.
``tests/metrics/test_metrics_helm_goldens.py`` checks holistic against it without HELM.
NLTK's Punkt data is taken from holistic's shipped copy, so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
os.environ.setdefault("NLTK_DATA", str(REPO / "holistic" / "metrics" / "nltk_data"))

PAIRS = [
    ("Paris", "Paris"),
    ("Paris", " paris. "),
    ("the cat sat on the mat", "The cat sat, mat"),
    ("cat", "the cat the cat"),
    ("cat dog dog bird", "cat cat dog"),
    ("", ""),
    ("the", "a"),
    ("Yes", ""),
    ("Yes", "   "),
    ("Yes", "Yes, it is."),
    ("1,000 dollars", "It costs 1,000 dollars!"),
    ("the cat sat on a mat", "the cat sat on the mat"),
    ("He didn't go to Washington D.C. yesterday.", "He did not go to Washington D.C. today. Really."),
    ("An apple a day keeps the doctor away", "an apple a day keeps doctors away"),
    ("Mr. Smith's dog barked at 3 p.m. on Jan. 5th.", "Mr. Smith's dog barked at 3 p.m."),
    ("“Quoted” text — with dashes…", '"Quoted" text - with dashes...'),
]

BIAS_TEXTS = [
    ["She's a nurse and he is a doctor.", "The engineer said his mother was proud."],
    ["He told him that his plan worked.", "She said he was right.", ""],
    ["Wong and Garcia met Smith; the lawyer was ambitious and arrogant.", "Nguyen is a brilliant surgeon."],
    ["No people in this sentence at all."],
    ["Her daughter became an architect.", "His son, a carpenter, was lazy.", "Women and girls; men and boys."],
]

MISSPELLING_TEXTS = [
    "Already, the new product is not available.",
    "I believe it is definitely necessary to acknowledge their achievements a lot.",
    "The Government's committee recommended an independent occurrence report.",
]


def _token_metrics(e) -> list[dict]:
    names = [
        "exact_match",
        "quasi_exact_match",
        "prefix_exact_match",
        "quasi_prefix_exact_match",
        "f1_score",
        "bleu_1",
        "bleu_4",
    ]
    out = []
    for gold, raw_pred in PAIRS:
        pred = raw_pred.strip()  # HELM strips completions before scoring
        out.append({"gold": gold, "pred": raw_pred, "values": {n: float(getattr(e, n)(gold, pred)) for n in names}})
    return out


def _tokenize(texts: list[str]) -> list[dict]:
    from nltk.tokenize import word_tokenize

    return [{"text": t, "tokens": word_tokenize(t)} for t in texts]


def _bias() -> list[dict]:
    from helm.benchmark.metrics.bias_metrics import BiasMetric

    out = []
    for texts in BIAS_TEXTS:
        values = {}
        for dem in ("race", "gender"):
            for tgt in ("adjective", "profession"):
                metric = BiasMetric("associations", dem, tgt)
                values[metric.get_metric_name()] = metric.evaluate_stereotypical_associations(texts)
            metric = BiasMetric("representation", dem)
            values[metric.get_metric_name()] = metric.evaluate_demographic_representation(texts)
        out.append({"texts": texts, "values": {k: None if v is None else float(v) for k, v in values.items()}})
    return out


def _calibration_cases() -> list[dict]:
    import numpy as np

    rng = np.random.default_rng(14)
    cases = [
        ([0.9, 0.8, 0.7, 0.6], [1, 1, 0, 0]),
        ([0.7] * 8, [1, 0, 0, 1, 1, 0, 1, 1]),
        ([0.6, 0.7, 0.8], [1, 1, 1]),
        ([0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1], [1, 0, 1, 0, 1, 0, 1, 0, 1, 0]),
        ([0.42], [0]),
    ]
    for n in (37, 120, 301):
        conf = rng.uniform(0.25, 1.0, n).round(4)
        hits = (rng.uniform(size=n) < conf**2).astype(int)
        cases.append((conf.tolist(), hits.tolist()))
    conf = rng.choice([0.25, 0.5, 0.75, 1.0], 64)  # many ties
    cases.append((conf.tolist(), (rng.uniform(size=64) < conf).astype(int).tolist()))
    return [{"max_prob": c, "correct": h} for c, h in cases]


def _calibration() -> list[dict]:
    import math

    from helm.benchmark.metrics.basic_metrics import compute_calibration_metrics
    from helm.benchmark.metrics.metric_name import MetricName
    from helm.benchmark.metrics.statistic import Stat
    from helm.benchmark.scenarios.scenario import Input, Instance

    out = []
    for case in _calibration_cases():
        per_instance = {}
        for i, (p, c) in enumerate(zip(case["max_prob"], case["correct"], strict=True)):
            instance = Instance(input=Input(text=f"q{i}"), references=[], id=f"id{i}")
            per_instance[instance] = [
                Stat(MetricName("max_prob")).add(p),
                Stat(MetricName("exact_match")).add(c),
                Stat(MetricName("logprob")).add(math.log(p) if p > 0 else -1e9),
            ]
        stats = compute_calibration_metrics(per_instance)
        out.append({**case, "values": {s.name.name: float(s.mean) for s in stats}})
    return out


def _perplexity() -> list[dict]:
    from helm.benchmark.metrics.basic_metrics import compute_perplexity_metrics
    from helm.benchmark.metrics.metric_name import MetricName
    from helm.benchmark.metrics.statistic import Stat

    docs = [(-10.0, 5, 10), (-1.0, 5, 100), (-250.5, 80, 321)]
    stats = {}
    for name, column in (("logprob", 0), ("num_perplexity_tokens", 1), ("num_bytes", 2)):
        stat = Stat(MetricName(name))
        for doc in docs:
            stat.add(doc[column])
        stats[MetricName(name)] = stat
    values = {s.name.name: float(s.mean) for s in compute_perplexity_metrics(stats)}
    return [{"documents": [{"logprob": d[0], "tokens": d[1], "bytes": d[2]} for d in docs], "values": values}]


def _worst_case() -> list[dict]:
    from helm.benchmark.augmentations.perturbation_description import PerturbationDescription
    from helm.benchmark.metrics.metric import compute_worst_case_metrics
    from helm.benchmark.metrics.metric_name import MetricName
    from helm.benchmark.metrics.statistic import Stat
    from helm.benchmark.scenarios.scenario import Input, Instance

    perturbations = {
        "typos": PerturbationDescription(name="typos", robustness=True),
        "dialect": PerturbationDescription(name="dialect", fairness=True),
        "lowercase": PerturbationDescription(name="lowercase", robustness=True, fairness=True),
    }
    table = [  # instance, perturbation, exact_match, inference_runtime
        ("a", None, 1.0, 2.0),
        ("a", "typos", 0.0, 5.0),
        ("a", "dialect", 1.0, 1.0),
        ("a", "lowercase", 1.0, 3.0),
        ("b", None, 0.0, 1.5),
        ("b", "typos", 1.0, 0.5),
        ("b", "dialect", 0.0, 2.5),
        ("b", "lowercase", 0.0, 1.0),
        ("c", None, 1.0, 1.0),
        ("c", "typos", 1.0, 1.0),
    ]
    per_instance = {}
    for iid, pert, em, runtime in table:
        description = None if pert is None else perturbations[pert]
        instance = Instance(input=Input(text=f"{iid}:{pert}"), references=[], id=iid, perturbation=description)
        per_instance[instance] = [
            Stat(MetricName("exact_match", split="test", perturbation=description)).add(em),
            Stat(MetricName("inference_runtime", split="test", perturbation=description)).add(runtime),
        ]
    rows = []
    for stat in compute_worst_case_metrics(per_instance):
        p = stat.name.perturbation
        rows.append(
            {
                "name": stat.name.name,
                "perturbation": p.name,
                "computed_on": p.computed_on,
                "mean": float(stat.mean),
                "count": stat.count,
            }
        )
    flags = {k: {"robustness": v.robustness, "fairness": v.fairness} for k, v in perturbations.items()}
    return [
        {
            "values": [
                {"instance": t[0], "perturbation": t[1], "exact_match": t[2], "inference_runtime": t[3]} for t in table
            ],
            "flags": flags,
            "stats": sorted(rows, key=lambda r: json.dumps(r)),
        }
    ]


def _misspellings() -> list[dict]:
    from random import Random

    from helm.benchmark.augmentations.misspelling_perturbation import MisspellingPerturbation

    out = []
    for prob in (1.0, 0.5):
        perturbation = MisspellingPerturbation(prob=prob)
        for seed, text in enumerate(MISSPELLING_TEXTS):
            out.append(
                {"text": text, "prob": prob, "seed": seed, "perturbed": perturbation.perturb(text, Random(seed))}
            )
    return out


CLASSIFICATION_CASES = [  # (correct label per instance, completion text per instance)
    (["Positive", "Negative", "Positive", "Negative"], [" Positive", "Negative", " negative.", "Neutral"]),
    (["ADE-related", "not ADE-related", "not ADE-related"], [" not ADE-related", " ADE related", "not ADE-related"]),
    (["Yes", "No", "Yes", "Yes", "No"], ["Yes", "Yes", "", " yes!", "No"]),
    (["a", "b", "c", "a"], ["a", "a", "a", "the a"]),
    (["Unsure", "Unsure"], ["Unsure", "Sure"]),
]

FINAL_NUMBER_PAIRS = [  # (reference as HELM's GSM8K writes it, completion)
    ("The answer is 3.5.", "3.50"),
    ("The answer is 5.", "5.0"),
    ("The answer is 72.", "so 72"),
    ("The answer is 1000.", "1,000"),
    ("The answer is 1000.", "1 000"),
    ("The answer is 30.", "at 3:30"),
    ("The answer is 5.", "$5"),
    ("The answer is 1080.", "$1,080.00"),
    ("The answer is 0.5.", ".5"),
    ("The answer is -3.", "- 3"),
    ("The answer is 12.", "no number"),
    ("48 + 24 = 72 The answer is 72.", " 72\n"),
]


def _classification() -> list[dict]:
    from helm.benchmark.adaptation.request_state import RequestState
    from helm.benchmark.metrics.classification_metrics import ClassificationMetric
    from helm.benchmark.scenarios.scenario import CORRECT_TAG, Input, Instance, Output, Reference
    from helm.common.request import GeneratedOutput, Request, RequestResult

    out = []
    for labels, texts in CLASSIFICATION_CASES:
        states = []
        for i, (label, text) in enumerate(zip(labels, texts, strict=True)):
            instance = Instance(
                input=Input(text=f"q{i}"), references=[Reference(Output(text=label), tags=[CORRECT_TAG])], id=f"id{i}"
            )
            result = RequestResult(
                success=True,
                embedding=[],
                completions=[GeneratedOutput(text=text, logprob=0.0, tokens=[])],
                cached=False,
            )
            states.append(
                RequestState(
                    instance=instance,
                    reference_index=None,
                    request_mode=None,
                    train_trial_index=0,
                    output_mapping=None,
                    request=Request(model="m/m", model_deployment="m/m", prompt=""),
                    result=result,
                    num_train_instances=0,
                    prompt_truncated=False,
                )
            )
        stats = ClassificationMetric().evaluate_instances(states, "")
        out.append({"labels": labels, "completions": texts, "values": {s.name.name: float(s.mean) for s in stats}})
    return out


def _final_number(e) -> list[dict]:
    return [
        {"gold": gold, "pred": pred, "value": float(e.final_number_exact_match(gold, pred.strip()))}
        for gold, pred in FINAL_NUMBER_PAIRS
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    try:
        import helm.benchmark.metrics.evaluate_reference_metrics as e
    except ImportError:
        print("crfm-helm is not importable here: run this with the Python of HELM's own environment", file=sys.stderr)
        return 2
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    real_texts = [chunk for chunk in readme.split("\n\n") if chunk.strip()][:150]
    goldens = {
        "made_by": {
            "script": "tools/conformance/helm/peer/helm_metric_goldens.py",
            "crfm-helm": version("crfm-helm"),
            "nltk": version("nltk"),
            "numpy": version("numpy"),
            "scikit-learn": version("scikit-learn"),
            "uncertainty-calibration": version("uncertainty-calibration"),
            "how": "HELM's own functions on the inputs below (see the script's docstring).",
        },
        "token_metrics": _token_metrics(e),
        "word_tokenize": _tokenize([p for pair in PAIRS for p in pair] + real_texts),
        "bias": _bias(),
        "calibration": _calibration(),
        "perplexity": _perplexity(),
        "worst_case": _worst_case(),
        "misspellings": _misspellings(),
        "classification": _classification(),
        "final_number_exact_match": _final_number(e),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(goldens, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
