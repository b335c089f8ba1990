"""BOLD (Dhamala et al., 2021): open-ended generation from Wikipedia sentence beginnings.

Prompts come in five domains (gender, political ideology, profession, race,
religious ideology), each split into groups (``American_actresses``,
``left-wing``...). HELM's protocol is RealToxicityPrompts' (the prompt alone,
temperature 0.9, up to 20 tokens) with toxicity and bias metrics on the
continuations. Every value is reported overall, per domain (``domain=race``) and
per group (``group=Asian_Americans``).

HELM keeps only the first prompt of each Wikipedia page (``prompts: first``, the
default); ``prompts: all`` uses every prompt (23,679). As in HELM, a fixed seeded
set of 1,000 prompts of the chosen domains is evaluated. The prompts are used as
published (almost all already end with a space; HELM adds another).

Data: the authors' ``prompts/<domain>_prompt.json`` from ``amazon-science/bold``
at a pinned commit (CC BY-SA 4.0): ``{group: {page: [prompt, ...]}}``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, Instance
from holistic.scenarios.loading.common import FileScenario, check_choice, hold_out
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.readers import read_json
from holistic.scenarios.loading.sources import DataNeeds, ResolvedData
from holistic.scenarios.real_toxicity_prompts import COMPLETION_FORMAT

_REPO = "amazon-science/bold"
_COMMIT = "3ad652c773f5d1e30d5f6f61657ed934d768ecad"
ALL = "all"
DOMAINS: tuple[str, ...] = ("gender", "political_ideology", "profession", "race", "religious_ideology")
TEST_SIZE = 1000


def _path(domain: str) -> str:
    return f"prompts/{domain}_prompt.json"


def read_domain(path: Path, domain: str, first_only: bool) -> list[Instance]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataSourceError(f"{path}: expected one JSON object {{group: {{page: [prompts]}}}}")
    out = []
    for group, pages in data.items():
        if not isinstance(pages, dict):
            raise DataSourceError(f"{path}: group {group!r} must map page names to prompt lists")
        for page, prompts in pages.items():
            if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts) or not prompts:
                raise DataSourceError(f"{path}: {group}/{page}: expected a non-empty list of prompt strings")
            for index, prompt in enumerate(prompts[:1] if first_only else prompts):
                out.append(
                    Instance(
                        id=f"{domain}/{group}/{page}/{index}",
                        input=prompt,
                        split=TEST_SPLIT,
                        metadata={"domain": domain, "group": group, "page": page},
                    )
                )
    return out


@dataclass(frozen=True, kw_only=True)
class BOLDScenario(FileScenario):
    """Toxicity and bias of continuations of prompts about demographic groups."""

    samples_prompts = True

    info = ScenarioInfo(
        name="bold",
        description="BOLD: continuations of Wikipedia sentence beginnings about groups, scored for toxicity and bias.",
        task="generation",
        default_adapter={**COMPLETION_FORMAT},
        main_metric="expected_max_toxicity",
        metric_categories=("toxicity", "bias", "efficiency"),
        not_applicable_reasons={
            "accuracy": "a continuation has no reference to be right or wrong against",
            "calibration": "a continuation has no reference to be right or wrong against",
            "robustness": "HELM measures the prompts as published",
            "fairness": "HELM measures the prompts as published",
        },
        tags=("toxicity", "bias", "targeted:toxicity"),
        breakdowns=("domain", "group"),
    )

    num_instances = TEST_SIZE
    domain: str = arg(ALL, enum=(ALL, *DOMAINS))
    prompts: Literal["first", "all"] = "first"

    def __post_init__(self) -> None:
        check_choice(self.domain, [ALL, *DOMAINS], "BOLD domain")
        check_choice(self.prompts, ["first", "all"], "BOLD prompts")

    def _domains(self) -> list[str]:
        return list(DOMAINS) if self.domain == ALL else [self.domain]

    def data_needs(self) -> DataNeeds:
        files = tuple(github_file("bold", _path(d), _REPO, _COMMIT, _path(d)) for d in self._domains())
        return DataNeeds("bold", layouts=(files,), hint=f"https://github.com/{_REPO} (prompts/)")

    def load(self, data: ResolvedData) -> list[Instance]:
        instances = [inst for d in self._domains() for inst in read_domain(data[_path(d)], d, self.prompts == "first")]
        test = hold_out([i.id for i in instances], TEST_SIZE, "bold-test")
        return [i if i.id in test else replace(i, split=TRAIN_SPLIT) for i in instances]
