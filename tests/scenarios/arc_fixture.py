"""The ARC-Easy fixture (the authors' JSONL, first lines) and a run spec that reads it with
nested fields, each choice scored apart: shared by the scenario and the site tests."""

from __future__ import annotations

from pathlib import Path

ARC = Path(__file__).resolve().parent / "data" / "arc_easy_train_head.jsonl"
ARC_SPEC = f"""\
suite: arc
models: [simple/echo]
runs:
  - scenario: file
    args:
      path: {ARC}
      fields:
        id: id
        input: question.stem
        choices: "question.choices[*].text"
        choice_labels: "question.choices[*].label"
        label: answerKey
    adaptation: {{method: multiple_choice_separate_original, max_train_instances: 0, length_normalization: char}}
    metrics: [accuracy]
"""
