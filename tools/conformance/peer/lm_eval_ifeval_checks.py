"""lm-evaluation-harness's IFEval checkers on every (row, response); runs in the peer's interpreter::

    <peer venv>/bin/python lm_eval_ifeval_checks.py INPUT_DATA_JSONL RESPONSES_JSONL VERDICTS_JSONL

writes one line per response: its ``strict`` and ``loose`` verdict per instruction.
"""

import json
import random
import sys
import types
from pathlib import Path

import langdetect
import lm_eval

tasks = types.ModuleType("lm_eval.tasks")
tasks.__path__ = [str(Path(lm_eval.__file__).parent / "tasks")]
sys.modules["lm_eval.tasks"] = tasks  # skip the task manager's heavy imports
from lm_eval.tasks.ifeval import utils  # noqa: E402  (after the stub above)

langdetect.DetectorFactory.seed = 0
random.seed(0)
with open(sys.argv[1], encoding="utf-8") as fh:
    rows = {row["key"]: row for row in map(json.loads, fh)}
with open(sys.argv[2], encoding="utf-8") as src, open(sys.argv[3], "w", encoding="utf-8") as out:
    for line in src:
        item = json.loads(line)
        row = rows[item["key"]]
        inp = utils.InputExample(row["key"], row["instruction_id_list"], row["prompt"], row["kwargs"])
        strict = utils.test_instruction_following_strict(inp, item["response"]).follow_instruction_list
        loose = utils.test_instruction_following_loose(inp, item["response"]).follow_instruction_list
        out.write(json.dumps({"strict": [bool(v) for v in strict], "loose": [bool(v) for v in loose]}) + "\n")
