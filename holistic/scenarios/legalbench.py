"""LegalBench (Guha et al., 2023): HELM Lite's five legal-reasoning subsets, as HELM 0.5.16 runs them.

HELM's protocol (``legalbench:subset=<subset>``): the prompt settings the LegalBench authors
publish for HELM (``helm_prompt_settings.jsonl``, five JSON lines: field ordering, instructions,
label key, output noun, shot counts) give each subset's instructions, output noun (``Type``,
``Label``, ``Answer``, ``Function``) and the fields of the input, written one per line as
``<field name>: <value>``; the reference is the row's ``answer``. Generation with five
in-context examples from the training file (HELM's ``max_train_instances=5`` for every
subset), greedy, at most 30 tokens, stopping at a newline; scored by quasi exact match.

Data (under the data root's ``legalbench/``):

- ``helm_prompt_settings.jsonl`` and ``<subset>/train.tsv`` from ``HazyResearch/legalbench``
  at a pinned commit (fetched when absent);
- ``<subset>/test.tsv``: the released test split (the Hugging Face ``nguha/legalbench`` copy HELM
  reads, one TSV per task, header ``index``, the task's columns, ``answer``), or else
  ``<subset>/test_prerelease_2d7f2ca.tsv``, the test file as the authors' repository held it
  before the release (no ``index`` column; the label column is called ``label``), read as the
  same rows. The Hub is not fetched from: a test file must be under the data root.

The files are tab-separated with CSV quoting: a quoted field may hold tabs, doubled quotes and
newlines (``corporate_lobbying``'s bill summaries do). A row with more or fewer fields than the
header, an unterminated quote, or an empty label is an error naming the file and line.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, AdapterDefaults, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import FileScenario, check_choice, github_raw
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import open_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData, default_data_root

_REPO = "HazyResearch/legalbench"
_COMMIT = "ce482446b8eac4403b6db2c17223af4514bb24e3"
SETTINGS = "helm_prompt_settings.jsonl"
PRERELEASE_TEST = "test_prerelease_2d7f2ca.tsv"

# HELM Lite's subsets, with the (train, test) sizes of the release.
SUBSET_SIZES: dict[str, tuple[int, int]] = {
    "abercrombie": (5, 95),
    "corporate_lobbying": (10, 490),
    "function_of_decision_section": (7, 367),
    "international_citizenship_questions": (4, 9306),
    "proa": (5, 95),
}
SUBSETS: tuple[str, ...] = tuple(SUBSET_SIZES)


class _Layout(IntEnum):
    RELEASED = 0
    PRERELEASE = 1


@dataclass(frozen=True)
class PromptSettings:
    """One subset's entry of ``helm_prompt_settings.jsonl``."""

    fields: tuple[tuple[str, str], ...]
    """(name shown in the prompt, column) in prompt order."""
    instructions: str
    label_key: str
    output_noun: str


@cache
def helm_prompt_settings(subset: str) -> PromptSettings:
    """``subset``'s entry of the authors' settings as holistic ships them (``data/legalbench_prompt_settings.json``,
    with its provenance): the run's adapter is known before any data is read."""
    text = resources.files("holistic.scenarios").joinpath("data/legalbench_prompt_settings.json").read_text("utf-8")
    data = json.loads(text)
    return PromptSettings(
        tuple((name, column) for name, column in data["field_ordering"][subset]),
        data["instructions"][subset],
        data["label_keys"][subset],
        data["output_nouns"][subset],
    )


def read_prompt_settings(path: Path, subset: str) -> PromptSettings:
    """``subset``'s settings, read as HELM reads the file: its five non-empty lines are JSON objects
    (field ordering, instructions, label keys, output nouns, shot counts)."""
    with open_text(path) as fh:
        lines = fh.read().strip().split("\n")
    if len(lines) != 5:
        raise DataSourceError(f"{path}: expected 5 JSON lines (fields, instructions, label keys, nouns, shots)")
    parsed: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataSourceError(f"{path}:{number}: invalid JSON: {exc.msg}") from None
        if not isinstance(value, dict) or subset not in value:
            raise DataSourceError(f"{path}:{number}: no entry for subset {subset!r}")
        parsed.append(value)
    fields, instructions, label_key, noun = (p[subset] for p in parsed[:4])
    if not isinstance(fields, list) or not all(
        isinstance(f, list) and len(f) == 2 and all(isinstance(s, str) for s in f) for f in fields
    ):
        raise DataSourceError(f"{path}:1: {subset}: field ordering must be a list of [name, column] pairs")
    for number, value in ((2, instructions), (3, label_key), (4, noun)):
        if not isinstance(value, str):
            raise DataSourceError(f"{path}:{number}: {subset}: expected a string, got {value!r}")
    return PromptSettings(tuple((f[0], f[1]) for f in fields), instructions, label_key, noun)


def read_tsv_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    """(first line of the row, row) of a TSV with a header and CSV quoting; a quoted field may span
    lines. A row whose field count differs from the header's is an error naming its line."""
    out: list[tuple[int, dict[str, str]]] = []
    try:
        with open_text(path) as fh:
            reader = csv.reader(fh, delimiter="\t", strict=True)
            header = next(reader, None)
            if not header:
                raise DataSourceError(f"{path}:1: empty file (expected a header line)")
            start = reader.line_num + 1
            for row in reader:
                if row and len(row) != len(header):
                    raise DataSourceError(
                        f"{path}:{start}: row has {len(row)} fields, the header has {len(header)} "
                        f"({', '.join(header)}); a stray tab or quote shifts the row"
                    )
                if row:
                    out.append((start, dict(zip(header, row, strict=True))))
                start = reader.line_num + 1
    except csv.Error as exc:
        raise DataSourceError(f"{path}:{start}: cannot read as TSV: {exc} (an unterminated quoted field?)") from None
    except UnicodeDecodeError as exc:
        raise DataSourceError(f"{path}: not UTF-8: {exc}") from None
    return out


def build_instances(
    path: Path, subset: str, split: str, settings: PromptSettings, *, label_column: str
) -> list[Instance]:
    """One instance per row, in file order: HELM's ``"\\n".join(f"{name}: {row[column]}")`` input and
    the ``label_column`` value as the one correct reference."""
    out = []
    for index, (line, row) in enumerate(read_tsv_rows(path)):
        where = f"{path}:{line}"
        missing = [c for _, c in settings.fields if c not in row] + ([label_column] if label_column not in row else [])
        if missing:
            raise DataSourceError(f"{where}: missing column(s) {', '.join(missing)}; columns: {', '.join(row)}")
        label = row[label_column]
        if not label.strip():
            raise DataSourceError(f"{where}: empty {label_column!r}")
        out.append(
            Instance(
                id=f"{subset}-{split}-{index:05d}",
                input="\n".join(f"{name}: {row[column]}" for name, column in settings.fields),
                references=(Reference(label, (CORRECT_TAG,)),),
                split=split,
                metadata={"subset": subset},
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class LegalBenchScenario(FileScenario):
    """One of HELM Lite's five LegalBench tasks."""

    info = ScenarioInfo(
        name="legalbench",
        description="LegalBench: legal-reasoning classification tasks (HELM Lite's five subsets).",
        task="classification",
        default_adapter=prompt_format(max_tokens=30),
        main_metric="quasi_exact_match",
        **CLASSIFICATION,
        tags=("legal", "classification", "lite"),
    )
    samples_prompts = True
    subset: str = arg(enum=SUBSETS)

    def __post_init__(self) -> None:
        check_choice(self.subset, SUBSETS, "LegalBench subset")

    def adapter_defaults(self) -> AdapterDefaults:
        """HELM's adapter for the subset: its instructions, no input noun, ``<output noun>: `` before the answer."""
        settings = helm_prompt_settings(self.subset)
        return {
            **self.info.default_adapter,
            "instructions": settings.instructions,
            "output_prefix": f"{settings.output_noun}: ",
        }

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return PlanFacts(
            num_instances=sum(SUBSET_SIZES[self.subset]), notes=self._missing(data_root), samples_prompts=True
        )

    def _missing(self, data_root: Path | None) -> tuple[str, ...]:
        """``--plan`` notes on what is not under the data root: the test file (no download) and the
        files fetched from GitHub, and which test layout is read."""
        root = data_root if data_root is not None else default_data_root()
        if root is None:
            return ()
        base = Path(root) / "legalbench"
        notes = []
        fetched = [p for p in (SETTINGS, f"{self.subset}/train.tsv") if not (base / p).is_file()]
        if fetched:
            notes.append(
                f"legalbench: {', '.join(fetched)} not under {base}: fetched from GitHub, or the run fails offline"
            )
        if (base / self.subset / "test.tsv").is_file():
            return tuple(notes)
        if (base / self.subset / PRERELEASE_TEST).is_file():
            notes.append(
                f"legalbench ({self.subset}): the test rows are read from the pre-release file {PRERELEASE_TEST} "
                "(label column 'label', no index), not the released test.tsv HELM reads"
            )
        else:
            notes.append(
                f"legalbench ({self.subset}): test data missing: {self.subset}/test.tsv (the nguha/legalbench release) "
                f"is not under {base} and is never downloaded; the run fails"
            )
        return tuple(notes)

    def data_needs(self) -> DataNeeds:
        # Not pinned by sha256: the settings entries are checked against holistic's copy when read.
        settings = DataFile(SETTINGS, downloads=(Download(github_raw(_REPO, _COMMIT, SETTINGS)),))
        train_path = f"{self.subset}/train.tsv"
        train = DataFile(train_path, downloads=(Download(github_raw(_REPO, _COMMIT, f"tasks/{train_path}")),))
        return DataNeeds(
            "legalbench",
            layouts=(
                (settings, train, DataFile(f"{self.subset}/test.tsv")),
                (settings, train, DataFile(f"{self.subset}/{PRERELEASE_TEST}")),
            ),
            hint="https://github.com/HazyResearch/legalbench (prompt settings, train files); the test files are the "
            "Hugging Face nguha/legalbench release (put <subset>/test.tsv under the data root)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        settings = read_prompt_settings(data[SETTINGS], self.subset)
        if settings != helm_prompt_settings(self.subset):
            raise DataSourceError(
                f"{data[SETTINGS]}: the {self.subset!r} entry differs from the authors' file at {_COMMIT[:8]}, whose "
                "instructions and output noun the run's prompt uses"
            )
        train = build_instances(
            data[f"{self.subset}/train.tsv"], self.subset, TRAIN_SPLIT, settings, label_column=settings.label_key
        )
        if data.layout == _Layout.RELEASED:
            test_path, label = data[f"{self.subset}/test.tsv"], settings.label_key
        else:
            test_path, label = data[f"{self.subset}/{PRERELEASE_TEST}"], "label"
        return train + build_instances(test_path, self.subset, TEST_SPLIT, settings, label_column=label)
