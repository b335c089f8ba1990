"""HELM Lite's LegalBench, MedQA and WMT14 made by HELM's own code (crfm-helm 0.5.16) on the data root's files.

HELM's scenario classes, HELM Lite's run-spec functions and adapters build every evaluation
prompt of ``legalbench:subset={abercrombie,corporate_lobbying,proa}``, ``med_qa`` and
``wmt_14:language_pair={cs,de,fr,hi,ru}-en`` (``tools/conformance/helm/peer/helm_lite_requests.py``,
in HELM's interpreter) on the same bytes holistic reads:

- LegalBench: the authors' prompt settings file, placed where HELM's download would put it, and
  HELM's ``datasets.load_dataset("nguha/legalbench", ...)`` answered with the rows of the train file
  and of the pre-release test file (``label`` renamed ``answer``, ``index`` added: the release's schema),
  read by pandas as text;
- MedQA: the authors' test file in HELM's layout, split as holistic splits it when the train file
  is missing: the 100 questions holistic holds out as its in-context pool are HELM's train file,
  the rest its test file (dev empty);
- WMT14: HELM's ``load_dataset("wmt14", ...)`` answered with the newstest2014 SGML files parsed by the
  Hugging Face builder's own pattern (one ``<seg>`` a line, raw), the 100 pairs holistic holds out as
  its pool as the train split (staged so HELM's ``shuffle(seed=42)`` restores holistic's order).

Beside the prompts (sha256 of every one, the first three whole) and request parameters, HELM's
``compute_reference_metrics`` scores the embedded model's answers to the first two prompts of
each run (generated here by holistic's engine), and HELM's ``bleu_1``/``bleu_4`` score fixed pairs,
HELM's own BLEU test case among them. ``tests/conformance/test_conformance_lite.py`` checks holistic
against the file without HELM.

    python -m tools.conformance.helm.lite --data-root DATA --out tests/conformance/lite/helm_requests.json.gz
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tools.common import REPO
from tools.conformance.helm.capabilities import helm_parser, write_gz

PEER_PROGRAM = Path(__file__).with_name("peer") / "helm_lite_requests.py"
LITE_SPEC = REPO / "runspecs" / "lite.yaml"
LEGALBENCH_SUBSETS = ("abercrombie", "corporate_lobbying", "proa")
WMT_PAIRS = ("cs-en", "de-en", "fr-en", "hi-en", "ru-en")
ANSWERED = 2
"""Prompts per run the embedded model answers (HELM scores those answers)."""
BLEU_PAIRS = [
    # HELM's own test case (test_evaluate_reference_metrics.py: test_bleu_1)
    ["the quick brown fox jumped over the lazy dog", "the fox jumped over the dog"],
    ["A black box in your car?", "A black box in your car?"],
    ["Gutach: Increased safety for pedestrians", "Gutach: More safety for pedestrians"],
    ["In Kineshma and environs two men have committed suicide", "Two men in Kineshma committed suicide."],
    ["Spectacular Wingsuit Jump Over Bogota", 'Spectacular jump in "wingsuit" over Bogota'],
    ["He didn't go to Washington D.C. yesterday.", "He did not go to Washington D.C. today."],
    ["short", "a much longer prediction than the short reference"],
    ["", "nothing to compare"],
]


def run_key(scenario: str, args: dict[str, Any]) -> str | None:
    """The golden file's key of a lite run (``legalbench:abercrombie``, ``med_qa``, ``wmt_14:de-en``)."""
    if scenario == "legalbench" and args.get("subset") in LEGALBENCH_SUBSETS:
        return f"legalbench:{args['subset']}"
    if scenario == "med_qa":
        return "med_qa"
    if scenario == "wmt_14" and args.get("language_pair") in WMT_PAIRS:
        return f"wmt_14:{args['language_pair']}"
    return None


def instance_key(text: str, references: list[tuple[str, bool]]) -> str:
    """The digest of an instance's input and references (text, correct), as the peer computes it."""
    payload = json.dumps([text, [[t, c] for t, c in references]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def holistic_side(data_root: Path) -> dict[str, Any]:
    """The pools holistic holds out and the embedded model's answers to each run's first prompts."""
    from holistic.adaptation import adapt
    from holistic.core.interfaces import ScenarioContext
    from holistic.core.types import TRAIN_SPLIT
    from holistic.models.registry import ModelRegistry, create_client
    from holistic.scenarios.registry import create_scenario
    from holistic.spec import compile_spec

    ctx = ScenarioContext(data_root=data_root, offline=True)
    out: dict[str, Any] = {"completions": {}, "wmt_pools": {}}
    clients: dict[str, Any] = {}  # one engine per model: its weights load once
    for run in compile_spec(LITE_SPEC).runs:
        key = run_key(run.scenario.name, dict(run.scenario.args_dict))
        if key is None:
            continue
        instances = create_scenario(run.scenario).get_instances(ctx)
        train = [i for i in instances if i.split == TRAIN_SPLIT]
        evaluation = [i for i in instances if i.split != TRAIN_SPLIT][:ANSWERED]
        held = sorted(int(i.id.rsplit("-", 1)[1]) for i in train)
        if key == "med_qa":
            out["med_qa_pool_lines"] = held
        elif key.startswith("wmt_14"):
            out["wmt_pools"][key.split(":")[1]] = held
        deployment = ModelRegistry().get(run.model)
        client = clients.setdefault(run.model, create_client(deployment))
        states = adapt(train, evaluation, run.adapter, deployment, client.tokenizer(), seed=run.adapter.seed)
        results = client.process([s.request for s in states])
        out["completions"][key] = {
            instance_key(s.instance.input, [(r.output, r.is_correct) for r in s.instance.references]): r.completions[
                0
            ].text
            for s, r in zip(states, results, strict=True)
        }
        print(f"{key}: {len(states)} answers", file=sys.stderr, flush=True)
    for client in clients.values():
        client.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = helm_parser("tools.conformance.helm.lite", __doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO / "tests" / "conformance" / "lite" / "helm_requests.json.gz"))
    parser.add_argument("--answers", help="a JSON file keeping the model's answers: read when it exists, else written")
    args = parser.parse_args(argv)
    data = Path(args.data_root)
    kept = Path(args.answers) if args.answers else None
    side = json.loads(kept.read_text(encoding="utf-8")) if kept and kept.is_file() else holistic_side(data)
    if kept and not kept.is_file():
        kept.write_text(json.dumps(side, ensure_ascii=False), encoding="utf-8")
    payload = {
        "data_root": str(data),
        "legalbench_subsets": list(LEGALBENCH_SUBSETS),
        "wmt_pairs": list(WMT_PAIRS),
        "bleu_pairs": BLEU_PAIRS,
        **side,
    }
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "payload.json").write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
        done = subprocess.run(
            [args.helm_python, str(PEER_PROGRAM), str(Path(tmp) / "payload.json")],
            capture_output=True,
            text=True,
            cwd=tmp,
            env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
        )
    if done.returncode != 0:
        sys.exit(f"tools.conformance.helm.lite: HELM failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["helm_version"] = "0.5.16"
    result["pools"] = {"med_qa": payload["med_qa_pool_lines"], **payload["wmt_pools"]}
    for scenario in ("legalbench", "med_qa", "wmt_14"):  # each scenario's runs under its name
        result[scenario] = sorted(k for k in result["runs"] if k.split(":")[0] == scenario)
    write_gz(Path(args.out), json.dumps(result, indent=0, ensure_ascii=False) + "\n")
    print({k: len(v["eval"]) for k, v in result["runs"].items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
