"""Golden file of HELM's Arabic EXAMS and EXAMS multilingual requests, made by HELM's own code
(crfm-helm 0.5.16) on the same bytes holistic reads.

HELM's scenario classes (``ArabicEXAMSScenario``, ``EXAMSMultilingualScenario``), run-spec
functions (``get_arabic_exams_spec`` with its run entries' ``output_format_instructions=arabic_mcqa``
and ``max_train_instances=0``; ``get_exams_multilingual_spec``) and its joint multiple-choice
adapter build the requests of every test instance. HELM's ``datasets.load_dataset`` call is
answered with the rows of the files in the data root (``arabic_exams/exam_{dev,test}.jsonl``, the
AceGPT files ``OALL/Arabic_EXAMS`` mirrors; ``exams_multilingual/{train,dev,test}.jsonl.tar.gz``,
the archives the Hub's loading script downloads, with its transposition of the choices), so the
Hub itself is not needed. For each run the file records HELM's split counts and, per test
instance, the id and the prompt's sha256, the request parameters (the same for every request of a
run), and the first prompts in full with HELM's output mapping. ``tests/conformance/test_conformance_arabic.py`` checks holistic against it
without HELM.

    HOLISTIC_DATA_ROOT=/path/to/data python -m tools.conformance.helm.arabic \\
        --out tests/conformance/arabic/helm_requests.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tools.common import REPO
from tools.conformance.helm.capabilities import helm_parser

PEER_PROGRAM = Path(__file__).with_name("peer") / "helm_arabic_requests.py"
ARABIC_SUBJECTS = ("Biology", "Science", "Social", "Physics", "Islamic_Studies")
"""HELM's Arabic run entries' subjects (``run_entries_arabic.conf``)."""
EXAMS_RUNS = (("Arabic", "all"), ("Bulgarian", "Biology"))
"""EXAMS multilingual runs: the Arabic questions, and one language with five-choice rows and a training split."""


def main(argv: list[str] | None = None) -> int:
    parser = helm_parser("tools.conformance.helm.arabic", __doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO / "tests" / "conformance" / "arabic" / "helm_requests.json"))
    args = parser.parse_args(argv)
    data = Path(args.data_root)
    with tempfile.TemporaryDirectory() as tmp:
        payload = {
            "arabic_dev": str(data / "arabic_exams" / "exam_dev.jsonl"),
            "arabic_test": str(data / "arabic_exams" / "exam_test.jsonl"),
            "arabic_subjects": list(ARABIC_SUBJECTS),
            "exams": {m: str(data / "exams_multilingual" / f"{m}.jsonl.tar.gz") for m in ("train", "dev", "test")},
            "exams_runs": [list(r) for r in EXAMS_RUNS],
            "keep_prompts": 2,
            "tmp": tmp,
        }
        done = subprocess.run(
            [args.helm_python, str(PEER_PROGRAM), json.dumps(payload)], capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        sys.exit(f"tools.conformance.helm.arabic: HELM failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    grouped: dict[str, dict[str, Any]] = {}
    for key, run in result.items():  # one section per scenario, its runs by HELM's run entry
        grouped.setdefault(key.split(":")[0], {})[key] = run
    result = {"helm_version": "0.5.16", **grouped}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print({k: len(v["requests"]) for runs in grouped.values() for k, v in runs.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
