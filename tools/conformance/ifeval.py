"""holistic's IFEval checkers against lm-evaluation-harness's, verdict by verdict.

Both implementations get the same responses to all 541 IFEval prompts: the
deterministic set of :mod:`tests.support.ifeval_responses` (the prompt itself,
transformations of it, a response built to follow every instruction, and that response
broken one instruction at a time, ~8,000 responses), optionally plus responses of a
real model read from a JSONL file (``--responses FILE``, lines ``{"key", "response"}``).
Every instruction's strict and loose verdict is compared (lm-evaluation-harness's
``test_instruction_following_strict`` / ``_loose``, the functions behind its
``prompt_level_*`` and ``inst_level_*`` metrics).

lm-evaluation-harness 0.4.13 is installed once in its own virtual environment under
``<cache>/peers/ifeval/`` (``--cache``, default ``~/.cache/holistic``) with the
checkers' own dependencies (langdetect, nltk, immutabledict, packaging) and without
the rest of its dependency tree (torch, datasets...), which the checkers do not use; its
checker modules are imported directly. The peer gets holistic's copy of NLTK's Punkt
model (NLTK_DATA) and langdetect seeded with 0, as holistic runs them.

The one known difference is reported apart: two instructions (one prompt each)
ask for the frequency of ``#`` and ``!``, which the peer replaces by a random letter
(the authors' current code counts the character asked for, as holistic does); their
verdicts are counted as ``excused_*``, every other verdict must be equal.

    HOLISTIC_DATA_ROOT=/path/to/data python -m tools.conformance.ifeval \
        --golden tests/metrics/data/ifeval_peer_verdicts.jsonl.gz

``--golden`` writes the peer's verdicts for the generated responses (keyed by prompt key
and variant, no prompt text), which ``tests/metrics/test_metrics_ifeval_golden.py`` checks
holistic against without the peer.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tools.common import REPO, default_data_root
from tools.peers import install_peer

LM_EVAL = "lm_eval==0.4.13"
PEER_PACKAGES = ("langdetect==1.0.9", "nltk>=3.9.1", "immutabledict", "packaging")

PEER_CHECKS = Path(__file__).with_name("peer") / "lm_eval_ifeval_checks.py"
"""lm-evaluation-harness's checkers on every (row, response): a program run by the peer's interpreter."""


def data_file(given: str | None) -> Path:
    for candidate in (given, str(default_data_root())):
        if candidate and (Path(candidate) / "ifeval" / "input_data.jsonl").is_file():
            return Path(candidate).resolve() / "ifeval" / "input_data.jsonl"
    sys.exit("tools.conformance.ifeval: ifeval/input_data.jsonl not found; pass --data-root or set HOLISTIC_DATA_ROOT")


def read_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def holistic_verdicts(rows: list[dict[str, Any]], items: list[dict[str, Any]]) -> list[dict[str, list[bool]]]:
    from holistic.core.ifeval import instruction_args
    from holistic.metrics.ifeval_checks import loose_verdicts, strict_verdicts

    by_key = {row["key"]: row for row in rows}
    out = []
    for item in items:
        row = by_key[item["key"]]
        ids = row["instruction_id_list"]
        args = [instruction_args(i, a) for i, a in zip(ids, row["kwargs"], strict=True)]
        out.append(
            {
                "strict": list(strict_verdicts(ids, args, item["response"])),
                "loose": list(loose_verdicts(ids, args, item["response"])),
            }
        )
    return out


def peer_verdicts(python: Path, data: Path, items: list[dict[str, Any]], work: Path) -> list[dict[str, list[bool]]]:
    responses, verdicts = work / "responses.jsonl", work / "peer_verdicts.jsonl"
    with responses.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps({"key": item["key"], "response": item["response"]}) + "\n")
    env = {**os.environ, "NLTK_DATA": str(REPO / "holistic" / "metrics" / "nltk_data")}
    subprocess.run([str(python), str(PEER_CHECKS), str(data), str(responses), str(verdicts)], check=True, env=env)
    with verdicts.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def compare(
    items: list[dict[str, Any]],
    ours: list[dict[str, list[bool]]],
    peer: list[dict[str, list[bool]]],
    excused: set[tuple[int, int]],
) -> dict[str, Any]:
    """Verdict-by-verdict agreement; the ``excused`` instruction slots are counted apart."""
    report: dict[str, Any] = {"responses": len(items), "prompts": len({i["key"] for i in items})}
    for mode in ("strict", "loose"):
        counts = dict.fromkeys(("equal", "total", "responses_equal", "peer_followed", "excused", "excused_differ"), 0)
        differences = []
        for item, a, b in zip(items, ours, peer, strict=True):
            same = True
            for index, (x, y) in enumerate(zip(a[mode], b[mode], strict=True)):
                if (item["key"], index) in excused:
                    counts["excused"] += 1
                    counts["excused_differ"] += x != y
                    continue
                counts["total"] += 1
                counts["equal"] += x == y
                counts["peer_followed"] += y
                same = same and x == y
            counts["responses_equal"] += same
            if not same:
                differences.append(
                    {"key": item["key"], "variant": item["variant"], "holistic": a[mode], "peer": b[mode]}
                )
        report[mode] = {
            "instruction_verdicts": counts["total"],
            "instruction_verdicts_equal": counts["equal"],
            "instruction_verdicts_followed_by_peer": counts["peer_followed"],
            "responses_all_verdicts_equal": counts["responses_equal"],
            "excused_random_letter_verdicts": counts["excused"],
            "excused_random_letter_differences": counts["excused_differ"],
            "differences": differences[:50],
        }
    return report


def write_golden(path: Path, items: list[dict[str, Any]], peer: list[dict[str, list[bool]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"key": item["key"], "variant": item["variant"], **verdicts}, separators=(",", ":"))
        for item, verdicts in zip(items, peer, strict=True)
        if item["variant"] != "model"
    ]
    # no name, mtime=0: the same verdicts give the same bytes wherever they are written
    with path.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(("\n".join(lines) + "\n").encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.conformance.ifeval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", help="folder holding ifeval/input_data.jsonl (default $HOLISTIC_DATA_ROOT)")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "holistic"), help="peers are installed here")
    parser.add_argument("--responses", help="JSONL of extra responses (a model's), lines {key, response}")
    parser.add_argument("--golden", help="write the peer's verdicts on the generated responses to this .jsonl.gz")
    parser.add_argument("--out", help="write the full report (JSON) here")
    args = parser.parse_args(argv)

    from tests.support.ifeval_responses import all_responses, random_letter_slots

    data = data_file(args.data_root)
    rows = read_rows(data)
    items = [{"key": key, "variant": name, "response": text} for key, name, text in all_responses(rows)]
    if args.responses:
        with open(args.responses, encoding="utf-8") as fh:
            items += [{"key": r["key"], "variant": "model", "response": r["response"]} for r in map(json.loads, fh)]
    python = install_peer(
        Path(args.cache) / "peers" / "ifeval", ["--no-deps", LM_EVAL], post=("install", "-q", *PEER_PACKAGES)
    )
    with tempfile.TemporaryDirectory() as tmp:
        peer = peer_verdicts(python, data, items, Path(tmp))
    ours = holistic_verdicts(rows, items)
    report = compare(items, ours, peer, random_letter_slots(rows))
    if args.golden:
        write_golden(Path(args.golden), items, peer)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    summary = {mode: {k: v for k, v in report[mode].items() if k != "differences"} for mode in ("strict", "loose")}
    print(json.dumps({"responses": report["responses"], "prompts": report["prompts"], **summary}, indent=2))
    for mode in ("strict", "loose"):
        for diff in report[mode]["differences"][:10]:
            print(f"{mode} differs: {diff}")
    differ = any(
        report[m]["instruction_verdicts_equal"] != report[m]["instruction_verdicts"] for m in ("strict", "loose")
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
