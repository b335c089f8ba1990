"""holistic's prompt for lm-evaluation-harness's ``gsm8k_cot`` layout is lm-eval's, byte for byte.

``lm_eval/gsm8k_cot.json`` holds what lm-eval 0.4.13 logged for one question with
``--num_fewshot 5`` (its source is named in the file), the task's exemplars and the
adaptation ``python -m tools.bench.peers --only gsm8k`` gives holistic for the same work.
"""

from __future__ import annotations

import json
from pathlib import Path

from holistic.adaptation import adapt
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, AdapterSpec, Instance, Reference
from tests.adaptation.adaptation_fixtures import PLAIN_MODEL

RECORD = json.loads((Path(__file__).parent / "lm_eval" / "gsm8k_cot.json").read_text(encoding="utf-8"))


def test_five_shot_chain_of_thought_prompt_is_lm_evals() -> None:
    pool = [
        Instance(
            id=f"cot-{k}", input=e["question"], references=(Reference(e["target"], (CORRECT_TAG,)),), split=TRAIN_SPLIT
        )
        for k, e in enumerate(RECORD["exemplars"])
    ]
    question = Instance(id="own-0", input=RECORD["question"], references=(Reference("18", (CORRECT_TAG,)),))
    spec = AdapterSpec(**RECORD["holistic_adaptation"], stop_sequences=tuple(RECORD["until"]), max_tokens=16)
    [state] = adapt(pool, [question], spec, PLAIN_MODEL, None, seed=0)
    assert state.request.text == RECORD["prompt"]
    assert state.train_ids == tuple(f"cot-{k}" for k in range(5))  # the first five, in the file's order
    assert state.request.stop == tuple(RECORD["until"])
