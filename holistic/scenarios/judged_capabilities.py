"""HELM Capabilities' judged scenarios: WildBench (checklist judge) and Omni-MATH (equivalence judge).

Both are graded by a judge with HELM 0.5.16's annotator prompt and parsing (the template
files HELM ships, stored in ``data/helm_judge_prompts.json`` by
``tools/conformance/helm/peer/helm_judge_goldens.py``):

- **Omni-MATH** (Gao et al., 2024): the judge compares the answer with the reference
  and reports ``## Equivalence Judgement`` TRUE or FALSE (the last such section counts,
  as in HELM's report parser); ``omni_math_accuracy`` is 1 for TRUE. An empty answer is
  FALSE without asking the judge, as in HELM. The candidate is asked with HELM's
  instructions ("Answer the question, giving your reasoning beforehand. Wrap the final
  answer with the \\boxed{} command."), then a newline, the problem and a newline: HELM's
  prompt byte for byte on rows in the release's format (the golden of
  ``tests/conformance/test_conformance_capabilities.py``; the real file is claimed). HELM
  fills its template by replacing the placeholders one after the other, so a problem that
  itself contains the text ``{{Solution}}`` gets the answer pasted in there too; here it
  stays as written. Data: the authors' ``test.jsonl`` (one problem per line: ``problem``,
  ``answer``, ``domain``, ``difficulty``, ``source``) in ``omni_math/``.
- **WildBench** (Lin et al., 2024): the judge scores the answer 1-10 against the task's
  checklist and the conversation, answering JSON ``{"strengths", "weaknesses", "score"}``
  (read with HELM's pattern); ``wildbench_score`` and ``wildbench_score_rescaled``
  (``(score - 1) / 9``). An empty answer scores 1.0 without asking, as in HELM. Data:
  the release's rows (JSON Lines, a JSON array, or Parquet, in ``wildbench/``) with
  ``session_id``, ``conversation_input`` (``[{role, content}]``) and ``checklist``. The
  candidate gets the conversation as chat messages, each turn's role and content as
  written, as HELM's ``ChatAdapter`` sends it (the scenario asks for ``prompt_format:
  chat``; the last turn must be the user's). HELM's requests on rows in the release's
  format are the golden of ``tests/conformance/test_conformance_capabilities.py``. A run
  that asks for ``prompt_format: plain`` gets one prompt instead: the earlier turns as
  ``USER: ...`` / ``ASSISTANT: ...`` paragraphs (HELM's judge-side rendering), then
  ``USER: `` and the last user message; HELM has no such request. The judge's prompt is
  HELM's either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.judges import VerdictRule
from holistic.core.types import CHAT_HISTORY_KEY, CORRECT_TAG, TEST_SPLIT, Instance, PromptFormat, Reference
from holistic.scenarios.loading.common import SplitFilesScenario
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData
from holistic.scenarios.safety import HELM_SAFETY_ADAPTER, fill_placeholders, helm_judge, judged_info

OMNI_MATH_RULE = VerdictRule.from_mapping(
    {
        "regex": r"(?s)^.*## Equivalence Judgement[ \t]*\n(?P<judgement>[^\n]*)",
        "score": "judgement",
        "values": {"true": 1, "false": 0},
    }
)
"""HELM's report parser: the line after the last ``## Equivalence Judgement`` title, TRUE or FALSE."""

WILDBENCH_RULE = VerdictRule.from_mapping(
    {
        "regex": r'(?s)"strengths"\s*:\s*"(?P<strengths>.*?)"\s*,\s*"weaknesses"\s*:\s*"(?P<weaknesses>.*?)"\s*,'
        r'\s*"score"\s*:\s*(?P<quote>")?(?P<score>(?(quote).*?|\d+))(?(quote)")',
        "score": "score",
        "minimum": 1,
        "maximum": 10,
    }
)
"""HELM's WildBench pattern: strengths, weaknesses, then a score (quoted or a bare integer). HELM's
prompt asks for 1 to 10; a score outside [1, 10] is unparseable here."""


def omni_math_template() -> str:
    """HELM's Omni-MATH judge template (not stripped, as HELM uses it) over judge variables."""
    placeholders = {"{{Problem}}": "{{ input }}", "{{Reference Answer}}": "{{ references[0] }}"}
    return fill_placeholders("omni_math", {**placeholders, "{{Solution}}": "{{ completion }}"}, strip=False)


def wildbench_template() -> str:
    """HELM's WildBench score template over the instance's history, query and checklist."""
    placeholders = {"{$history}": "{{ metadata.history }}", "{$user_query}": "{{ metadata.user_query }}"}
    extra = {"{$model_output}": "{{ completion }}", "{$checklist}": "{{ metadata.checklist }}"}
    return fill_placeholders("wildbench", {**placeholders, **extra}, strip=False)


class _JudgedTestSet(SplitFilesScenario):
    """A judged capabilities set: one test file, which only a data root supplies (``--plan`` says
    when it is missing)."""

    split_files = (("test.jsonl", TEST_SPLIT),)
    notes_missing_files = True


class OmniMATHScenario(_JudgedTestSet):
    """Olympiad-level mathematics, graded by a judge against the reference answer."""

    info = judged_info(
        "omni_math",
        "Omni-MATH: 4,428 olympiad-level problems; a judge decides whether the answer equals the reference.",
        helm_judge(
            "omni_math",
            omni_math_template(),
            rule=OMNI_MATH_RULE,
            stat="omni_math_accuracy",
            max_tokens=4096,
            empty_score=0.0,
        ),
        adapter={
            "method": "generation",
            "instructions": "Answer the question, giving your reasoning beforehand. "
            "Wrap the final answer with the \\boxed{} command.",
            "input_prefix": "",
            "output_prefix": "",
            # HELM's instructions end without a newline: its prompt is instructions, "\n", the problem, "\n".
            "instance_prefix": "",
            "max_train_instances": 0,
            "max_tokens": 4096,
            "num_outputs": 1,
            "temperature": 0.0,
        },
        fields=("domain", "difficulty", "source"),
        tags=("capabilities",),
    )
    hint = "https://huggingface.co/datasets/KbsdJames/Omni-MATH (test.jsonl)"
    num_instances = 4428

    def download(self, name: str) -> Download:
        return Download(
            "https://huggingface.co/datasets/KbsdJames/Omni-MATH/resolve/40ba231d8f16e29ecd40e6407e2c8640145a8f62/"
            + name
        )

    def read(self, path: Path, split: str) -> list[Instance]:
        out = []
        for index, (_, where, row) in enumerate(iter_located_jsonl(path)):
            out.append(
                Instance(
                    id=f"id{index}",
                    input=str(require(row, "problem", where)),
                    references=(Reference(str(require(row, "answer", where)), tags=(CORRECT_TAG,)),),
                    split=split,
                    metadata={k: "" if row.get(k) is None else str(row[k]) for k in ("domain", "difficulty", "source")},
                )
            )
        return out


def _wildbench_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(where, row)`` of a WildBench file: Parquet, a JSON array, or JSON Lines."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return [(f"{path}: row {i + 1}", r) for i, r in enumerate(pq.read_table(path).to_pylist())]
    text = path.read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise DataSourceError(f"{path}: not a JSON array: {exc}") from None
        return [(f"{path}: row {i + 1}", r) for i, r in enumerate(rows)]
    return [(where, r) for _, where, r in iter_located_jsonl(path)]


def wildbench_instance(row: Any, where: str, split: str) -> Instance:
    if not isinstance(row, dict):
        raise DataSourceError(f"{where}: a task is an object")
    turns = require(row, "conversation_input", where)
    checklist = require(row, "checklist", where)
    if not isinstance(turns, list) or not turns or not all(isinstance(t, dict) and "content" in t for t in turns):
        raise DataSourceError(f"{where}: 'conversation_input' must be a non-empty list of {{role, content}}")
    if not isinstance(checklist, list):
        raise DataSourceError(f"{where}: 'checklist' must be a list")
    if turns[-1].get("role") != "user":
        raise DataSourceError(f"{where}: the last turn of 'conversation_input' must be the user's")
    # HELM's judge-side rendering of the earlier turns.
    history = "\n\n".join(
        ("USER: " if t.get("role") == "user" else "ASSISTANT: ") + str(t["content"]) for t in turns[:-1]
    )
    query = str(turns[-1]["content"])
    return Instance(
        id=str(row.get("session_id") or where),
        input=query,
        split=split,
        metadata={
            CHAT_HISTORY_KEY: [{"role": str(t.get("role")), "content": str(t["content"])} for t in turns[:-1]],
            "history": history,
            "user_query": query,
            "checklist": "\n".join(f"- {item}" for item in checklist),
            "category": str(row.get("primary_tag") or ""),
        },
    )


class WildBenchScenario(_JudgedTestSet):
    """Real users' tasks, each graded by a judge against its checklist."""

    info = judged_info(
        "wildbench",
        "WildBench: 1,024 real users' tasks; a judge scores each answer 1-10 against the task's checklist.",
        helm_judge(
            "wildbench",
            wildbench_template(),
            rule=WILDBENCH_RULE,
            stat="wildbench_score",
            max_tokens=2000,
            empty_score=1.0,
            rescaled=("wildbench_score_rescaled", 1.0, 10.0),
        ),
        # HELM's chat adaptation: the conversation as messages, up to 2,000 tokens at temperature 0.
        adapter={**HELM_SAFETY_ADAPTER, "max_tokens": 2000, "prompt_format": PromptFormat.CHAT},
        fields=("history", "user_query", "checklist", "category"),
        tags=("capabilities",),
    )
    hint = "https://huggingface.co/datasets/allenai/WildBench (v2 test split: test.jsonl, test.json or test.parquet)"
    num_instances = 1024

    def data_needs(self) -> DataNeeds:
        # The Hub serves Parquet through its own API only: the rows are put here by hand.
        layouts = ((DataFile("test.jsonl"),), (DataFile("test.json"),), (DataFile("test.parquet"),))
        return DataNeeds("wildbench", layouts=layouts, hint=self.hint)

    def load(self, data: ResolvedData) -> list[Instance]:
        (path,) = data.paths.values()
        return self.read(path, TEST_SPLIT)

    def read(self, path: Path, split: str) -> list[Instance]:
        return [wildbench_instance(row, where, split) for where, row in _wildbench_rows(path)]
