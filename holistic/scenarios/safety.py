"""HELM Safety's model-graded scenarios: HarmBench, SimpleSafetyTests, XSTest, Anthropic red team.

Each sends its prompts as they are (HELM's adaptation: generation, no instructions,
prefixes or in-context examples, at most 512 tokens at temperature 0) and is graded by a
judge with HELM 0.5.16's annotator prompt and parsing: the judge answers
``<reasoning>...</reasoning><score>...</score>`` (tags matched case-insensitively, in
any order; an end tag may lack its ``/``), and the score is the number in the score tag
(HELM's ``score_with_reasoning``). The statistic is HELM's ``safety_score``: per judge
(sub-split ``judge=<name>``) and the mean over the run's judges, with HELM's per-annotator
``safety_<judge>_score`` and ``safety_<judge>_annotator_success`` (see
:mod:`holistic.metrics.judged`). Under the ``helm`` protocol the candidate's requests and
the evaluated sample are HELM's, proved by ``tests/conformance/test_conformance_safety.py``
against HELM's own scenarios, safety run specs and runner on the same files (HarmBench's
fully; XSTest's and SimpleSafetyTests' on the authors' CSV rows, where HELM reads Hub
copies that could not be had; the red team's on a small file in the published format). HELM asks one API
judge (GPT-4o, 2024-05-13); a run names its own (``judges:``; the embedded model
offline).

The judge prompts are HELM's, loaded from ``data/helm_judge_prompts.json`` (made from
HELM's annotator modules by ``tools/conformance/helm/peer/helm_judge_goldens.py``): the template is
stripped and its question and answer placeholders become the candidate's prompt and
answer. XSTest's prompt depends on the prompt's label (safe prompts: did the model
comply; unsafe ones: did it refuse).

Data (the authors' files, pinned by sha256): ``xstest/xstest_prompts.csv``
(paul-rottger/exaggerated-safety), ``simple_safety_tests/SimpleSafetyTests - test
cases.csv`` (bertiev/SimpleSafetyTests), ``harmbench/harmbench_behaviors_text_all.csv``
(centerforaisafety/HarmBench, HELM's pinned commit; contextual behaviours are
``context + "\\n\\n---\\n\\n" + behaviour``, HELM's direct-request form), and the red-team
attempts of ``Anthropic/hh-rlhf`` (``red_team_attempts.jsonl.gz``: a JSON array, or JSON
Lines, of attempts whose ``transcript`` is ``\\n\\nHuman: ...\\n\\nAssistant: ...``; the
prompt is the transcript's first utterance, as HELM takes it).
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.jsonl import numbered_json_objects
from holistic.core.judges import JudgeDefault, VerdictRule
from holistic.core.resources import project_path
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, AdapterDefaults, Instance, Reference
from holistic.scenarios.loading.common import SplitFilesScenario, github_raw
from holistic.scenarios.loading.readers import read_csv_dicts, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download

PROMPTS_FILE = ("holistic", "scenarios", "data", "helm_judge_prompts.json")

HELM_VERDICT_RULE = VerdictRule.from_mapping(
    {
        "regex": [
            r"(?is)<\s*reasoning\s*>(?P<reasoning>.*?)</?\s*reasoning\s*>",
            r"(?is)<\s*score\s*>(?P<score>.*?)</?\s*score\s*>",
        ],
        "score": "score",
        "minimum": 0,
        "maximum": 1,
    }
)
"""HELM's ``score_with_reasoning``: both tags must be there; the score tag holds a number. HELM's
prompts ask for 0, 0.5 or 1; a score outside [0, 1] (HELM itself would take ``1e308``) is
unparseable here."""

SAFETY_STAT = "safety_score"
JUDGE_MAX_TOKENS = 256
"""HELM's judge requests: at most 256 tokens, temperature 0."""

HELM_SAFETY_ADAPTER: AdapterDefaults = {
    "method": "generation",
    "instructions": "",
    "global_prefix": "",
    "global_suffix": "",
    "input_prefix": "",
    "input_suffix": "",
    "output_prefix": "",
    "output_suffix": "",
    "instance_prefix": "",
    "max_train_instances": 0,
    "num_outputs": 1,
    "max_tokens": 512,
    "temperature": 0.0,
    "stop_sequences": (),
}
"""HELM 0.5.16's ``safety_run_specs``: the candidate sees the prompt alone."""

_PLACEHOLDERS = {"{{QUESTION}}": "{{ prompt }}", "{{question}}": "{{ prompt }}"}
_ANSWERS = {"{{ANSWER}}": "{{ completion }}", "{{answer}}": "{{ completion }}"}


@lru_cache(maxsize=1)
def helm_prompts() -> dict[str, str]:
    """HELM's annotator prompt templates by name (as HELM's modules write them)."""
    data = json.loads(project_path(*PROMPTS_FILE).read_text(encoding="utf-8"))
    return {name: str(entry["text"]) for name, entry in data["prompts"].items()}


def judge_template(name: str) -> str:
    """HELM's safety template ``name`` as a judge template: stripped (as HELM's annotators do),
    the question and answer placeholders as judge variables."""
    return fill_placeholders(name, {**_PLACEHOLDERS, **_ANSWERS}, strip=True)


def helm_judge(
    annotator: str,
    template: str | None = None,
    *,
    rule: VerdictRule = HELM_VERDICT_RULE,
    stat: str = SAFETY_STAT,
    max_tokens: int = JUDGE_MAX_TOKENS,
    empty_score: float | None = None,
    rescaled: tuple[str, float, float] | None = None,
) -> JudgeDefault:
    """The judge of HELM 0.5.16's ``<annotator>_annotator``: its prompt (default: HELM's template
    ``annotator``, see :func:`judge_template`), verdict rule, statistic and token budget (default:
    the safety annotators')."""
    return JudgeDefault(
        template=judge_template(annotator) if template is None else template,
        rule=rule,
        stat=stat,
        max_tokens=max_tokens,
        origin=f"HELM 0.5.16 {annotator}_annotator",
        empty_score=empty_score,
        rescaled=rescaled,
    )


def xstest_template() -> str:
    """XSTest's prompt by the instance's label, as HELM's annotator picks it."""
    unsafe, safe = judge_template("xstest_unsafe"), judge_template("xstest_safe")
    return f"{{% if correct_references[0] == 'unsafe' %}}{unsafe}{{% else %}}{safe}{{% endif %}}"


def judged_info(
    name: str,
    description: str,
    judge: JudgeDefault,
    *,
    fields: tuple[str, ...],
    adapter: AdapterDefaults | None = None,
    tags: tuple[str, ...] = ("safety",),
) -> ScenarioInfo:
    """The facts of a scenario HELM grades with a judge: no references to score against,
    measured unperturbed, its judge's statistic as the main metric."""
    return ScenarioInfo(
        name=name,
        description=description,
        task="generation",
        default_adapter=HELM_SAFETY_ADAPTER if adapter is None else adapter,
        main_metric=judge.stat,
        metric_categories=("efficiency",),
        not_applicable_reasons={
            "accuracy": "graded by judges (judges: in the run spec), not against references",
            "calibration": "graded by judges; no reference answer to be calibrated on",
            "robustness": "HELM measures this scenario unperturbed",
            "fairness": "HELM measures this scenario unperturbed",
            "bias": "HELM grades this scenario with judges only; no demographic word lists are scored",
            "toxicity": "HELM grades this scenario with judges only; its answers are not sent to a toxicity classifier",
        },
        tags=tags,
        judge=judge,
        judge_fields=fields,
    )


def fill_placeholders(name: str, placeholders: dict[str, str], *, strip: bool) -> str:
    """HELM's prompt template ``name`` with its placeholders turned into judge variables."""
    text = helm_prompts()[name]
    text = text.strip() if strip else text
    for old, new in placeholders.items():
        text = text.replace(old, new)
    return text


@dataclass(frozen=True)
class PinnedFile:
    """The authors' file: where it goes under the data root, and where it comes from (pinned)."""

    folder: str
    repo: str
    commit: str
    path: str
    """Path in the repository (the file keeps its name under the data root)."""
    sha256: str

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name


class _CsvSafetyScenario(SplitFilesScenario):
    """One pinned CSV file of prompts, all in the test split."""

    samples_prompts = True
    source: ClassVar[PinnedFile]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.split_files = ((cls.source.name, TEST_SPLIT),)
        cls.hint = f"https://github.com/{cls.source.repo} ({cls.source.path})"

    def data_needs(self) -> DataNeeds:
        src = self.source
        url = github_raw(src.repo, src.commit, src.path.replace(" ", "%20"))
        item = DataFile(src.name, downloads=(Download(url, sha256=src.sha256),), sha256=src.sha256)
        return DataNeeds(src.folder, layouts=((item,),), hint=self.hint)

    def read(self, path: Path, split: str) -> list[Instance]:
        out = []
        for number, row in enumerate(read_csv_dicts(path), start=1):
            instance_id, text, refs, metadata = self.parse_row(row, f"{path}: row {number}")
            out.append(Instance(id=instance_id, input=text, references=refs, split=split, metadata=metadata))
        return out

    def parse_row(self, row: dict[str, str], where: str) -> tuple[str, str, tuple[Reference, ...], dict[str, Any]]:
        """``(id, input, references, metadata)`` of one CSV row."""
        raise NotImplementedError


class XSTestScenario(_CsvSafetyScenario):
    """XSTest (Röttger et al., 2024): safe prompts a model should answer, unsafe ones it should refuse."""

    info = judged_info(
        "xstest",
        "XSTest: 250 safe prompts that sound unsafe and 200 unsafe contrasts; judged for compliance or refusal.",
        helm_judge("xstest", xstest_template()),
        fields=("label", "type", "focus", "note"),
    )
    source = PinnedFile(
        "xstest",
        "paul-rottger/exaggerated-safety",
        "d7bb5bd738c1fcbc36edd83d5e7d1b71a3e2d84d",
        "xstest_prompts.csv",
        "11783fb294ed017473ee53c207d71f2161c7672c8d0b037501e78387f801cb5a",
    )
    num_instances = 450

    def parse_row(self, row: dict[str, str], where: str) -> tuple[str, str, tuple[Reference, ...], dict[str, Any]]:
        label = str(require(row, "label", where))
        if label not in ("safe", "unsafe"):
            raise DataSourceError(f"{where}: label {label!r} is neither 'safe' nor 'unsafe'")
        # HELM's references: focus, type and note (when not empty), then the label (correct).
        refs = [Reference(str(row[c])) for c in ("focus", "type", "note") if row.get(c)]
        metadata: dict[str, Any] = {c: str(row.get(c) or "") for c in ("label", "type", "focus", "note")}
        text = str(require(row, "prompt", where))
        return str(require(row, "id", where)), text, (*refs, Reference(label, tags=(CORRECT_TAG,))), metadata


class SimpleSafetyTestsScenario(_CsvSafetyScenario):
    """SimpleSafetyTests (Vidgen et al., 2023): 100 clearly harmful prompts in five harm areas."""

    info = judged_info(
        "simple_safety_tests",
        "SimpleSafetyTests: 100 prompts in five harm areas; judged for the safety of the response.",
        helm_judge("simple_safety_tests"),
        fields=("harm_area", "category"),
    )
    source = PinnedFile(
        "simple_safety_tests",
        "bertiev/SimpleSafetyTests",
        "d7aee9a9422a5a5488f478fd79c2479c891c0f3b",
        "SimpleSafetyTests - test cases.csv",
        "6d95a1301e0d0f3a3c4cf5392f4afff11ad6e3066f95d23aaa138d44aedf986c",
    )
    num_instances = 100

    def parse_row(self, row: dict[str, str], where: str) -> tuple[str, str, tuple[Reference, ...], dict[str, Any]]:
        # The GitHub file calls the prompt column prompts_final; the Hub copy HELM reads calls it prompt.
        prompt = row.get("prompts_final", row.get("prompt"))
        if prompt is None:
            raise DataSourceError(f"{where}: no 'prompts_final' (or 'prompt') column")
        category, area = str(require(row, "category", where)), str(require(row, "harm_area", where))
        refs = (Reference(category), Reference(area))
        return str(require(row, "id", where)), str(prompt), refs, {"harm_area": area, "category": category}


class HarmBenchScenario(_CsvSafetyScenario):
    """HarmBench (Mazeika et al., 2024): 400 harmful behaviours, as direct requests."""

    info = judged_info(
        "harm_bench",
        "HarmBench: 400 harmful behaviours (standard, contextual, copyright) asked directly; judged for refusal.",
        helm_judge("harm_bench"),
        fields=("functional_category", "semantic_category"),
    )
    source = PinnedFile(
        "harmbench",
        "centerforaisafety/HarmBench",
        "8e1604d1171fe8a48d8febecd22f600e462bdcdd",
        "data/behavior_datasets/harmbench_behaviors_text_all.csv",
        "8d81accedd38eaaf8b760618622bb888417d1fd0c86eba65c427a16f1cbb4afc",
    )
    num_instances = 400

    def parse_row(self, row: dict[str, str], where: str) -> tuple[str, str, tuple[Reference, ...], dict[str, Any]]:
        behavior = str(require(row, "Behavior", where))
        functional = str(require(row, "FunctionalCategory", where))
        semantic = str(require(row, "SemanticCategory", where))
        text = f"{row.get('ContextString') or ''}\n\n---\n\n{behavior}" if functional == "contextual" else behavior
        metadata: dict[str, Any] = {"functional_category": functional, "semantic_category": semantic}
        return str(require(row, "BehaviorID", where)), text, (Reference(semantic),), metadata


_UTTERANCE_RE = re.compile("\n\nHuman: |\n\nAssistant: ")


def first_utterance(transcript: str, where: str) -> str:
    """The first non-empty utterance of a red-team transcript (HELM's ``get_first_utterance``)."""
    for utterance in _UTTERANCE_RE.split(transcript.strip(" ")):
        if utterance.strip(" "):
            return utterance.strip(" ")
    raise DataSourceError(f"{where}: transcript has no utterance")


def read_red_team(path: Path) -> list[dict[str, Any]]:
    """The attempts of Anthropic's ``red_team_attempts.jsonl(.gz)``: a JSON array or JSON Lines."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8-sig")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            rows = json.loads(stripped)
        except ValueError as exc:
            raise DataSourceError(f"{path}: not a JSON array: {exc}") from None
        return [_attempt(r, f"{path}: attempt {i}") for i, r in enumerate(rows)]
    lines = numbered_json_objects(text.splitlines(), path, DataSourceError)
    return [_attempt(row, f"{path}:{number}") for number, row in lines]


def _attempt(row: Any, where: str) -> dict[str, Any]:
    if not isinstance(row, dict) or not isinstance(row.get("transcript"), str):
        raise DataSourceError(f"{where}: an attempt is an object with a 'transcript' string")
    return {**row, "_where": where}


class AnthropicRedTeamScenario(SplitFilesScenario):
    """Anthropic's red-team attempts (Ganguli et al., 2022): the first human turn of each attempt."""

    info = judged_info(
        "anthropic_red_team",
        "Anthropic red team: the opening request of 38,961 red-team attempts; judged for harmlessness.",
        helm_judge("anthropic_red_team"),
        fields=("rating", "task_description"),
    )
    file_name = "red_team_attempts.jsonl.gz"
    split_files = (("red_team_attempts.jsonl.gz", TEST_SPLIT),)
    hint = "https://huggingface.co/datasets/Anthropic/hh-rlhf (red-team-attempts/red_team_attempts.jsonl.gz)"
    num_instances = 38961
    notes_missing_files = True
    _URL = (
        "https://huggingface.co/datasets/Anthropic/hh-rlhf/resolve/09be8c5bbc57cb3887f3a9732ad6aa7ec602a1fa/"
        "red-team-attempts/red_team_attempts.jsonl.gz"
    )
    """HELM's pinned revision of the Hub copy (no checksum published: trusted on first use)."""

    def download(self, name: str) -> Download:
        return Download(self._URL)

    def read(self, path: Path, split: str) -> list[Instance]:
        out = []
        for index, row in enumerate(read_red_team(path)):
            where = row["_where"]
            out.append(
                Instance(
                    id=f"id{index}",
                    input=first_utterance(row["transcript"], where),
                    split=split,
                    metadata={
                        "rating": row.get("rating"),
                        "task_description": str(row.get("task_description") or ""),
                    },
                )
            )
        return out
