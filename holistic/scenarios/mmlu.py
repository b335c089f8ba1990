"""MMLU (Hendrycks et al., 2021): 57 subjects of four-choice questions.

Authors' format: header-less CSV rows ``question,A,B,C,D,answer`` in
``dev/<subject>_dev.csv`` (5 per subject; HELM's in-context examples, our ``train``),
``val/<subject>_val.csv`` (``valid``) and ``test/<subject>_test.csv`` (``test``).

Hugging Face copy (used when the authors' files are absent): ``cais/mmlu``,
``hf/<subject>/{dev,validation,test}-00000-of-00001.parquet`` with columns
``question``, ``subject``, ``choices`` (four strings) and ``answer`` (0-3). Rows
keep the CSV order, so instance ids (``<subject>-<dev|val|test>-<row>``), inputs,
references and splits are the same as from the authors' files. The ``hf_revision``
arg (default ``main``, not pinned) should be pinned to a commit of that repo.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, AdapterDefaults, Instance
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import check_choice, choice_references, github_raw, pinned_sha256
from holistic.scenarios.loading.hf_copy import AuthorsOrHub, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import multiple_choice_joint_format
from holistic.scenarios.loading.readers import read_csv_rows
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_REPO = "hendrycks/test"
_COMMIT = "785eba57b455b9f9be12a0d3c1106d67274fea0e"
_TARBALL = "https://people.eecs.berkeley.edu/~hendrycks/data.tar"

# (valid, test) sizes per subject, for --plan without reading data.
SUBJECT_SIZES: dict[str, tuple[int, int]] = {
    "abstract_algebra": (11, 100),
    "anatomy": (14, 135),
    "astronomy": (16, 152),
    "business_ethics": (11, 100),
    "clinical_knowledge": (29, 265),
    "college_biology": (16, 144),
    "college_chemistry": (11, 100),
    "college_computer_science": (11, 100),
    "college_mathematics": (11, 100),
    "college_medicine": (22, 173),
    "college_physics": (11, 102),
    "computer_security": (11, 100),
    "conceptual_physics": (26, 235),
    "econometrics": (12, 114),
    "electrical_engineering": (16, 145),
    "elementary_mathematics": (41, 378),
    "formal_logic": (14, 126),
    "global_facts": (10, 100),
    "high_school_biology": (34, 310),
    "high_school_chemistry": (22, 204),
    "high_school_computer_science": (11, 100),
    "high_school_european_history": (18, 165),
    "high_school_geography": (22, 202),
    "high_school_government_and_politics": (21, 193),
    "high_school_macroeconomics": (43, 391),
    "high_school_mathematics": (29, 270),
    "high_school_microeconomics": (26, 238),
    "high_school_physics": (17, 154),
    "high_school_psychology": (60, 545),
    "high_school_statistics": (23, 216),
    "high_school_us_history": (22, 204),
    "high_school_world_history": (26, 237),
    "human_aging": (23, 223),
    "human_sexuality": (15, 134),
    "international_law": (13, 121),
    "jurisprudence": (11, 108),
    "logical_fallacies": (18, 163),
    "machine_learning": (11, 105),
    "management": (11, 103),
    "marketing": (25, 234),
    "medical_genetics": (11, 100),
    "miscellaneous": (87, 791),
    "moral_disputes": (38, 346),
    "moral_scenarios": (100, 895),
    "nutrition": (33, 306),
    "philosophy": (34, 311),
    "prehistory": (35, 324),
    "professional_accounting": (31, 282),
    "professional_law": (170, 1534),
    "professional_medicine": (31, 282),
    "professional_psychology": (69, 624),
    "public_relations": (12, 112),
    "security_studies": (27, 245),
    "sociology": (22, 201),
    "us_foreign_policy": (11, 100),
    "virology": (18, 166),
    "world_religions": (19, 171),
}
SUBJECTS: tuple[str, ...] = tuple(sorted(SUBJECT_SIZES))

_SPLITS = (("dev", TRAIN_SPLIT), ("val", VALID_SPLIT), ("test", TEST_SPLIT))
_HUB = HubCopy("cais/mmlu")
_HF_SPLITS = {"dev": "dev", "val": "validation", "test": "test"}
"""Authors' folder -> Hugging Face split name."""


def _hf_path(subject: str, folder: str) -> str:
    return f"{subject}/{_HF_SPLITS[folder]}-00000-of-00001.parquet"


_LETTERS = ("A", "B", "C", "D")


def _data_file(folder: str, subject: str) -> DataFile:
    path = f"{folder}/{subject}_{folder}.csv"
    return DataFile(
        path,
        downloads=(Download(github_raw(_REPO, _COMMIT, f"data/{path}")), Download(_TARBALL, member=f"data/{path}")),
        sha256=pinned_sha256("mmlu", path),
    )


@dataclass(frozen=True, kw_only=True)
class MMLUScenario(HubFallbackScenario):
    """Massive Multitask Language Understanding, one subject per run."""

    info = ScenarioInfo(
        name="mmlu",
        description="MMLU: four-choice exam questions in 57 subjects (knowledge).",
        task="multiple_choice",
        default_adapter=multiple_choice_joint_format("The following are multiple choice questions (with answers)."),
        main_metric="exact_match",
        **CLASSIFICATION,
        tags=("knowledge", "multiple_choice", "core"),
    )
    hub = _HUB
    samples_prompts = True
    subject: str = arg(enum=SUBJECTS)
    hf_revision: str = _HUB.revision_arg()

    def __post_init__(self) -> None:
        check_choice(self.subject, SUBJECTS, "MMLU subject")
        super().__post_init__()

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return replace(
            super().plan_facts(data_root, max_eval_instances), num_instances=sum(SUBJECT_SIZES[self.subject])
        )

    def adapter_defaults(self) -> AdapterDefaults:
        """Adapter defaults naming the subject in the instructions, as HELM's prompt does."""
        topic = self.subject.replace("_", " ")
        return {
            **self.info.default_adapter,
            "instructions": f"The following are multiple choice questions (with answers) about {topic}.",
        }

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "mmlu",
            layouts=(
                tuple(_data_file(folder, self.subject) for folder, _ in _SPLITS),
                _HUB.layout(self.hf_revision, [_hf_path(self.subject, folder) for folder, _ in _SPLITS]),
            ),
            hint="https://github.com/hendrycks/test (data/ folder) or https://people.eecs.berkeley.edu/~hendrycks/data.tar; "
            + _HUB.hint,
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == AuthorsOrHub.HUB_COPY:
            return self._load_hf(data)
        instances: list[Instance] = []
        for folder, split in _SPLITS:
            path = data[f"{folder}/{self.subject}_{folder}.csv"]
            for index, row in enumerate(read_csv_rows(path)):
                if len(row) != 6:
                    raise DataSourceError(
                        f"{path}: row {index + 1} has {len(row)} fields, expected 6 (question,A,B,C,D,answer)"
                    )
                answer = row[5].strip()
                if answer not in _LETTERS:
                    raise DataSourceError(f"{path}: row {index + 1}: answer {answer!r} is not one of A, B, C, D")
                instances.append(
                    Instance(
                        id=f"{self.subject}-{folder}-{index:04d}",
                        input=row[0],
                        references=choice_references(row[1:5], _LETTERS.index(answer)),
                        split=split,
                        metadata={"subject": self.subject},
                    )
                )
        return instances

    def _load_hf(self, data: ResolvedData) -> list[Instance]:
        instances: list[Instance] = []
        for folder, split in _SPLITS:
            path = data[f"hf/{_hf_path(self.subject, folder)}"]
            for index, row in enumerate(read_parquet_rows(path, ("question", "choices", "answer"))):
                choices, answer = row["choices"], row["answer"]
                if not isinstance(choices, list) or len(choices) != 4:
                    raise DataSourceError(f"{row_where(path, index)}: 'choices' must hold 4 strings, got {choices!r}")
                if not isinstance(answer, int) or not 0 <= answer < 4:
                    raise DataSourceError(f"{row_where(path, index)}: 'answer' {answer!r} is not an index 0-3")
                instances.append(
                    Instance(
                        id=f"{self.subject}-{folder}-{index:04d}",
                        input=str(row["question"]),
                        references=choice_references([str(c) for c in choices], answer),
                        split=split,
                        metadata={"subject": self.subject},
                    )
                )
        return instances
