"""holistic's IFEval verdicts equal lm-evaluation-harness 0.4.13's on every prompt.

The golden file holds the peer's strict and loose verdicts on the deterministic
responses of ``tests.support.ifeval_responses`` to all 541 prompts (written by
``python -m tools.conformance.ifeval --golden``, which ran the peer itself); this test
rebuilds the same responses from the real data and checks every verdict, without the peer.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from holistic.core.ifeval import instruction_args
from holistic.metrics.ifeval_checks import loose_verdicts, strict_verdicts
from tests.support.data import need
from tests.support.ifeval_responses import all_responses, random_letter_slots

GOLDEN = Path(__file__).with_name("data") / "ifeval_peer_verdicts.jsonl.gz"


@pytest.fixture(scope="module")
def rows(data_root: Path) -> list[dict[str, Any]]:
    path = need(data_root / "ifeval" / "input_data.jsonl")
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.mark.needs_data
def test_every_verdict_equals_the_peers(rows: list[dict[str, Any]]) -> None:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as fh:
        golden = {(g["key"], g["variant"]): g for g in map(json.loads, fh)}
    by_key = {row["key"]: row for row in rows}
    generated = all_responses(rows)
    assert {key for key, _, _ in generated} == set(by_key) and len(by_key) == 541
    assert set(golden) == {(key, name) for key, name, _ in generated}
    excused = random_letter_slots(rows)  # the peer counts a random letter there
    assert {key for key, _ in excused} == {1122, 1129}
    compared = 0
    differences = []
    for key, name, response in generated:
        row = by_key[key]
        ids = row["instruction_id_list"]
        args = [instruction_args(i, a) for i, a in zip(ids, row["kwargs"], strict=True)]
        ours = {"strict": strict_verdicts(ids, args, response), "loose": loose_verdicts(ids, args, response)}
        for mode, verdicts in ours.items():
            for index, (mine, peer) in enumerate(zip(verdicts, golden[(key, name)][mode], strict=True)):
                if (key, index) in excused:
                    continue
                compared += 1
                if mine != peer:
                    differences.append((key, name, mode, index, mine, peer))
    assert differences == []
    assert compared > 20_000
