"""``helm-summarize --schema`` with HELM's own ``schema_*.yaml``: its run groups group the leaderboards."""

from __future__ import annotations

from pathlib import Path

import yaml

from holistic import api
from holistic.helm.schema import is_helm_schema, translate
from holistic.summarize.schema import BUILTIN_SCHEMA
from tests.support.fake_suite import FakeRun, write_fake_suite

# The shape of HELM 0.5.16's schema_classic.yaml (its core tree, abridged), metric groups and all
HELM_SCHEMA = """
metrics:
  - name: exact_match
    display_name: Exact match
metric_groups:
  - name: accuracy
    display_name: Accuracy
    metrics:
      - name: ${main_name}
        split: ${main_split}
run_groups:
  - name: core_scenarios
    display_name: Core scenarios
    description: The scenarios where we evaluate all the models.
    category: All scenarios
    subgroups: [question_answering, summarization]
  - name: question_answering
    display_name: Question answering
    category: Core scenarios
    subgroups: [mmlu, boolq, natural_qa_closedbook, natural_qa_openbook_longans, commonsenseqa]
  - name: summarization
    display_name: Summarization
    subgroups: [summarization_cnndm, summarization_xsum]
  - name: mmlu
    display_name: MMLU
    metric_groups: [accuracy]
    environment: {main_name: exact_match, main_split: test}
  - name: loop
    subgroups: [loop, boolq]
"""


def test_helms_run_groups_become_holistics(tmp_path: Path) -> None:
    data = yaml.safe_load(HELM_SCHEMA)
    assert is_helm_schema(data) and not is_helm_schema(yaml.safe_load(BUILTIN_SCHEMA.read_text()))
    groups = {g["name"]: g for g in translate(data, yaml.safe_load(BUILTIN_SCHEMA.read_text()))["run_groups"]}
    assert groups["core_scenarios"]["scenarios"] == ["mmlu", "boolq", "natural_qa", "cnn_dailymail", "xsum"]
    assert "commonsenseqa: no holistic scenario" in groups["question_answering"]["description"]
    assert groups["mmlu"]["scenarios"] == ["mmlu"]
    assert groups["loop"]["scenarios"] == ["boolq"]  # a cycle is cut


def test_helm_summarize_groups_the_leaderboards_as_helms_site(tmp_path: Path) -> None:
    runs = [FakeRun(s, m) for s in ("mmlu", "boolq", "xsum", "imdb") for m in ("acme/a", "acme/b")]
    write_fake_suite(tmp_path, "s", runs)
    schema = tmp_path / "schema_classic.yaml"
    schema.write_text(HELM_SCHEMA, encoding="utf-8")
    result = api.summarize("s", output_dir=tmp_path, site=False, options=api.SummarizeOptions(schema=schema))
    titles = {t.title: t for t in result.summary.tables if t.id.startswith("rungroup_")}
    core = next(t for name, t in titles.items() if name.startswith("core_scenarios:"))
    assert sorted(c.name for c in core.columns[1:]) == ["boolq", "mmlu", "xsum"]  # imdb is in no HELM group given
    assert not any(name.startswith("all:") for name in titles)  # HELM's groups replace the built-in ones
