"""Golden files for the capabilities suite, made by HELM's own code (crfm-helm 0.5.16).

HELM's scenario classes, run-spec functions and adapters build the requests of its
Capabilities run specs (``gpqa:subset=gpqa_main,use_chain_of_thought=true,use_few_shot=false``,
``mmlu_pro:subset=all,...``, ``ifeval``) on the same bytes holistic reads:

- GPQA: the authors' ``dataset.zip`` from the data root, decrypted in memory and parsed
  by pandas as the Hugging Face CSV loader HELM calls does (``datasets.load_dataset`` is
  replaced by that in-memory table; nothing is extracted to disk);
- IFEval: the authors' ``input_data.jsonl`` from the data root, with every row's
  ``kwargs`` padded with ``None`` for the argument names it lacks, as in the Hub copy;
- MMLU-Pro (no data here): a small table in the release's schema written by this script;
- WildBench (no data here): rows in the release's schema (:data:`WILDBENCH_ROWS`), answered to
  HELM's ``datasets.load_dataset("allenai/WildBench", "v2", ...)``; HELM's ``ChatAdapter``
  sends each conversation as messages, recorded whole;
- Omni-MATH (no data here): rows in the release's schema (:data:`OMNI_MATH_ROWS`), answered to
  HELM's ``datasets.load_dataset("KbsdJames/Omni-MATH", ...)``; prompts recorded whole.

For every evaluated instance it records the instance id, the sha256 of HELM's prompt
(GPQA's and IFEval's texts stay out of the repository: GPQA's authors ask that the
questions are not published in plain text), the request parameters, and for MMLU-Pro
the prompt itself. It also records HELM's ``chain_of_thought_correctness`` answer
parsing on a set of responses, and HELM's ``IFEvalMetric`` value
(``ifeval_strict_accuracy``) on each response of :mod:`tests.support.ifeval_responses`
(``helm_ifeval_strict.jsonl.gz``; langdetect seeded with 0 and holistic's Punkt model,
as holistic runs them). ``tests/conformance/test_conformance_capabilities.py``
checks holistic against the file without HELM.

HELM runs in its own virtual environment (``~/.cache/holistic/peers/helm``, made by
``python -m tools.conformance.helm``; ``--helm-python`` to point elsewhere). Its IFEval
checkers need two packages of HELM's optional extras that its base install lacks
(langdetect, immutabledict): they are installed once with ``pip install --target`` into
``<cache>/peers/helm_ifeval_extras`` and put on that process's ``PYTHONPATH``, leaving
HELM's venv unchanged.

    HOLISTIC_DATA_ROOT=/path/to/data python -m tools.conformance.helm.capabilities \
        --out tests/conformance/capabilities/helm_requests.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.common import PEERS_CACHE, REPO, default_data_root

MMLU_PRO_ROWS = [
    {
        "question_id": 70,
        "question": "Typical advertising regulatory bodies suggest, for example that adverts must not: encourage _________, cause unnecessary ________ or _____, and must not cause _______ offence.",
        "options": [
            "Safe practices, Fear, Jealousy, Trivial",
            "Unsafe practices, Distress, Joy, Trivial",
            "Safe practices, Wants, Jealousy, Trivial",
            "Safe practices, Distress, Fear, Trivial",
            "Unsafe practices, Wants, Jealousy, Serious",
            "Safe practices, Distress, Jealousy, Serious",
            "Safe practices, Wants, Fear, Serious",
            "Unsafe practices, Wants, Fear, Trivial",
            "Unsafe practices, Distress, Fear, Serious",
        ],
        "answer": "I",
        "answer_index": 8,
        "cot_content": "",
        "category": "business",
        "src": "ori_mmlu-business_ethics",
    },
    {
        "question_id": 71,
        "question": "What is the value of $x$ if $2x + 3 = 11$?",
        "options": ["2", "3", "4", "5", "6", "7", "8", "9", "10", "4"],
        "answer": "C",
        "answer_index": 2,
        "cot_content": "",
        "category": "math",
        "src": "written for the golden file",
    },
    {
        "question_id": 1,
        "question": "Which organelle makes ATP?\nPick one.",
        "options": ["Ribosome", "Mitochondrion", "Golgi apparatus", "Lysosome"],
        "answer": "B",
        "answer_index": 1,
        "cot_content": "A: Let's think step by step. The mitochondrion. The answer is (B).",
        "category": "biology",
        "src": "written for the golden file",
    },
]
"""MMLU-Pro rows in the release's schema (the first is shaped like the release's; question 1 is validation)."""

WILDBENCH_ROWS = [
    {
        "session_id": "wb-1",
        "conversation_input": [
            {"content": "Write a haiku about rain.", "language": "English", "role": "user", "toxic": False},
            {"content": "Soft rain on the roof.", "language": "English", "role": "assistant", "toxic": False},
            {"content": "Now one about snow.  \n", "language": "English", "role": "user", "toxic": False},
        ],
        "checklist": ["Is it a haiku?", "Is it about snow?"],
        "primary_tag": "Creative Writing",
    },
    {
        "session_id": "wb-2",
        "conversation_input": [
            {"content": "  What is 2+2?", "language": "English", "role": "user", "toxic": False},
        ],
        "checklist": ["Says 4?"],
        "primary_tag": "Math",
    },
]
OMNI_MATH_ROWS = [
    {
        "domain": ["Mathematics -> Algebra -> Other"],
        "difficulty": 2.5,
        "problem": "Find all real $x$ with $x^2 = 4$. ",
        "solution": "$x = \\pm 2$.",
        "answer": "$\\pm 2$",
        "source": "written for the golden file",
    },
    {
        "domain": ["Mathematics -> Number Theory -> Other"],
        "difficulty": 6.0,
        "problem": "\nLet $n$ be a positive integer.\nShow that $n^2 + n$ is even; what is its parity?",
        "solution": "$n(n+1)$ is a product of consecutive integers.",
        "answer": "even",
        "source": "written for the golden file",
    },
]
"""Omni-MATH test rows in the release's schema (written for the golden file)."""

"""WildBench v2 test rows in the release's schema (written for the golden file; the second turn's
whitespace is kept by HELM's chat adapter)."""

COT_RESPONSES = [
    "The correct answer is (B).",
    "Reasoning... so the answer is C",
    "[aA]nswer: (D)",
    "Answer: (A)",
    "The correct answer is: **A**",
    "the correct answer is option e, i.e. E",
    "I think it is B. The correct answer is (J)",
    "No letter here.",
    "answer is (K) but the correct answer is (A)",
    "",
]
"""Responses whose answer letter HELM's chain-of-thought metric parses."""


PEER_PROGRAM = Path(__file__).with_name("peer") / "helm_capabilities_requests.py"
"""The program HELM's interpreter runs: HELM's own code on the given data."""


def write_mmlu_pro(folder: Path) -> tuple[Path, Path]:
    """The MMLU-Pro rows as the release's two Parquet files (question 1 is validation)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = folder / "test-00000-of-00001.parquet", folder / "validation-00000-of-00001.parquet"
    test = [r for r in MMLU_PRO_ROWS if r["question_id"] != 1]
    valid = [r for r in MMLU_PRO_ROWS if r["question_id"] == 1]
    for path, rows in zip(paths, (test, valid), strict=True):
        pq.write_table(pa.Table.from_pylist(rows), path)
    return paths


IFEVAL_EXTRAS = ("langdetect==1.0.9", "immutabledict==4.3.1")


def ifeval_extras(helm_python: str, folder: Path) -> Path:
    """HELM's IFEval dependencies, installed once beside (not into) HELM's venv."""
    marker = folder / "installed.txt"
    if not marker.is_file() or marker.read_text() != " ".join(IFEVAL_EXTRAS):
        folder.mkdir(parents=True, exist_ok=True)
        pip = [helm_python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(folder)]
        subprocess.run([*pip, *IFEVAL_EXTRAS], check=True)
        marker.write_text(" ".join(IFEVAL_EXTRAS))
    return folder


def write_gz(path: Path, text: str) -> None:
    """``text`` gzipped with no name and no timestamp (the same values give the same bytes)."""
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(text.encode("utf-8"))


def helm_parser(module: str, description: str) -> argparse.ArgumentParser:
    """The options of a script that runs HELM on the data mirror: ``--data-root`` and ``--helm-python``
    (``module``: the script's module, as ``python -m`` runs it)."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    parser.add_argument("--data-root", default=str(default_data_root()))
    parser.add_argument("--helm-python", default=str(PEERS_CACHE / "helm" / "bin" / "python"))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = helm_parser("tools.conformance.helm.capabilities", __doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO / "tests" / "conformance" / "capabilities" / "helm_requests.json"))
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "holistic"), help="peer extras go here")
    parser.add_argument(
        "--ifeval-out", default=str(REPO / "tests" / "conformance" / "capabilities" / "helm_ifeval_strict.jsonl.gz")
    )
    args = parser.parse_args(argv)

    from holistic.scenarios.gpqa import PASSWORD
    from tests.support.ifeval_responses import all_responses

    data = Path(args.data_root)
    with tempfile.TemporaryDirectory() as tmp:
        test, valid = write_mmlu_pro(Path(tmp))
        responses, values = Path(tmp) / "ifeval_responses.jsonl", Path(tmp) / "ifeval_values.jsonl"
        with (data / "ifeval" / "input_data.jsonl").open(encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        with responses.open("w", encoding="utf-8") as fh:
            for key, variant, text in all_responses(rows):
                fh.write(json.dumps({"key": key, "variant": variant, "response": text}) + "\n")
        payload = {
            "gpqa_zip": str(data / "gpqa" / "dataset.zip"),
            "gpqa_password": PASSWORD.decode(),
            "ifeval": str(data / "ifeval" / "input_data.jsonl"),
            "mmlu_pro_test": str(test),
            "mmlu_pro_validation": str(valid),
            "tmp": tmp,
            "keep_text": "mmlu_pro",
            "wildbench_rows": WILDBENCH_ROWS,
            "omni_math_rows": OMNI_MATH_ROWS,
            "responses": COT_RESPONSES,
            "ifeval_responses": str(responses),
            "ifeval_values": str(values),
        }
        extras = ifeval_extras(args.helm_python, Path(args.cache) / "peers" / "helm_ifeval_extras")
        env = {**os.environ, "NLTK_DATA": str(REPO / "holistic" / "metrics" / "nltk_data"), "PYTHONPATH": str(extras)}
        done = subprocess.run(
            [args.helm_python, str(PEER_PROGRAM), json.dumps(payload)], capture_output=True, text=True, env=env
        )
        if done.returncode != 0:
            sys.exit(f"tools.conformance.helm.capabilities: HELM failed:\n{done.stderr[-4000:]}")
        write_gz(Path(args.ifeval_out), values.read_text(encoding="utf-8"))
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["mmlu_pro_rows"] = MMLU_PRO_ROWS
    result["wildbench_rows"] = WILDBENCH_ROWS
    result["omni_math_rows"] = OMNI_MATH_ROWS
    result["helm_version"] = "0.5.16"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print({k: len(v["requests"]) for k, v in result.items() if isinstance(v, dict)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
