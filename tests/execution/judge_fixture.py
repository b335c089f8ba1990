"""A tiny judged suite: a JSONL file of requests, a candidate and deterministic judges.

The candidate (``simple/candidate``, the simple echo model under its own name so its calls
can be counted apart) answers each input's first word: ``yes`` or ``no``. The judges are
the simple models too; their template ends in ``Verdict: 1`` for a ``yes`` and ``Verdict: 0``
otherwise, which the echo model repeats, so every verdict is known in advance.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

ROWS = [
    {"id": "r1", "q": "yes please", "a": "ok", "label": "safe"},
    {"id": "r2", "q": "no thanks", "a": "ok", "label": "unsafe"},
    {"id": "r3", "q": "yes indeed", "a": "ok", "label": "safe"},
    {"id": "r4", "q": "no way", "a": "ok", "label": "unsafe"},
]
EXPECTED = {"r1": 1.0, "r2": 0.0, "r3": 1.0, "r4": 0.0}

MODELS = """\
models:
  - name: simple/candidate
    provider: simple
    model_id: echo
    description: The simple echo model under its own name (its calls are counted apart from the judges').
    context_window: 4096
    capabilities: {logprobs: true, prompt_logprobs: true, chat: true, completions: true}
"""

VERDICT_TEMPLATE = "Grade the answer to {{ input }}.\\nVerdict: {% if 'yes' in completion %}1{% else %}0{% endif %}"
REGEX_RULE = "{regex: '(?P<score>[01])', score: score}"


def judge_entry(model: str, template: str = VERDICT_TEMPLATE, rule: str = REGEX_RULE, extra: str = "") -> str:
    return f'{{model: {model}, template: "{template}", parse: {rule}{extra}}}'


def write_suite(folder: Path, judges: list[str], *, suite: str = "judged", name: str = "spec.yaml") -> Path:
    """The spec (and its data and models files) in ``folder``; ``judges`` are YAML flow items."""
    data = folder / "requests.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    (folder / "models.yaml").write_text(MODELS, encoding="utf-8")
    spec = folder / name
    spec.write_text(
        f"suite: {suite}\n"
        "models: [simple/candidate]\n"
        "runs:\n"
        "  - scenario: file\n"
        "    args:\n"
        f"      path: {data}\n"
        "      fields: {input: q, output: a, id: id, metadata: [label]}\n"
        "    adaptation: {method: generation, max_train_instances: 0, max_tokens: 5}\n"
        "    metrics: [accuracy]\n"
        "    judges:\n" + "".join(f"      - {j}\n" for j in judges),
        encoding="utf-8",
    )
    return spec


def calls_by_model(log: Path) -> Counter[str]:
    """Requests the simple models served, by deployment (the call log's fourth column)."""
    if not log.exists():
        return Counter()
    return Counter(line.split("\t")[3] for line in log.read_text(encoding="utf-8").splitlines())
