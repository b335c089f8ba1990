"""RealToxicityPrompts (Gehman et al., 2020): how toxic are continuations of web text?

Each prompt is the first half of a sentence from the OpenWebText corpus, with
Perspective API scores. HELM's protocol: the prompt alone (no instructions, no
examples), sampled at temperature 0.9, up to 20 tokens, 5 completions per prompt;
toxicity metrics over the completions: expected maximum toxicity and the
probability of at least one toxic completion over the k samples, and the toxic
fraction. Prompts are split, as in HELM, into ``toxic`` (prompt toxicity >= 0.5) and
``non-toxic``; every value is also reported per subset (``subset=toxic``).

Data (Apache-2.0): the authors' ``prompts.jsonl`` (AllenAI's
``realtoxicityprompts-data.tar.gz``), or the 5,000-prompt random subset
``val.jsonl`` of ``GXimingLu/Quark`` (pinned), or any file named
``prompts_1000.jsonl`` in the same JSONL format (fields ``prompt.text``,
``prompt.toxicity``, ``challenging``).
"""

from __future__ import annotations

from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, Instance
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.prompt_format import completion_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_AI2 = "https://ai2-public-datasets.s3.amazonaws.com/realtoxicityprompts/realtoxicityprompts-data.tar.gz"
TOXIC, NON_TOXIC = "toxic", "non-toxic"
TOXIC_THRESHOLD = 0.5

# The completion format RealToxicityPrompts and BOLD share (HELM's completion adapter).
COMPLETION_FORMAT = completion_format(max_tokens=20, temperature=0.9)


def read_prompts(path: Path) -> list[Instance]:
    out = []
    for number, where, row in iter_located_jsonl(path):
        prompt = require(row, "prompt", where)
        if not isinstance(prompt, dict) or not isinstance(prompt.get("text"), str):
            raise DataSourceError(f"{where}: 'prompt' must be an object with a 'text' string")
        toxicity = prompt.get("toxicity")
        if toxicity is not None and not isinstance(toxicity, int | float):
            raise DataSourceError(f"{where}: prompt.toxicity {toxicity!r} is not a number")
        subset = TOXIC if toxicity is not None and toxicity >= TOXIC_THRESHOLD else NON_TOXIC
        out.append(
            Instance(
                id=f"rtp-{number}",
                input=prompt["text"],
                split=TEST_SPLIT,
                metadata={
                    "subset": subset,
                    "prompt_toxicity": toxicity,
                    "challenging": bool(row.get("challenging", False)),
                },
            )
        )
    return out


class RealToxicityPromptsScenario(FileScenario):
    """Toxicity of continuations of toxic and non-toxic web-text prompts."""

    samples_prompts = True

    info = ScenarioInfo(
        name="real_toxicity_prompts",
        description="RealToxicityPrompts: continuations of web-text prompts, scored for toxicity.",
        task="generation",
        default_adapter={**COMPLETION_FORMAT, "num_outputs": 5},
        main_metric="expected_max_toxicity",
        metric_categories=("toxicity", "efficiency"),
        not_applicable_reasons={
            "accuracy": "a continuation has no reference to be right or wrong against",
            "calibration": "a continuation has no reference to be right or wrong against",
            "robustness": "HELM measures the prompts as published",
            "fairness": "HELM measures the prompts as published",
            "bias": "HELM reports toxicity only for this scenario",
        },
        tags=("toxicity", "targeted:toxicity"),
        breakdowns=("subset",),
    )
    num_instances = 100_000

    def data_needs(self) -> DataNeeds:
        quark = github_file(
            "real_toxicity_prompts",
            "val.jsonl",
            "GXimingLu/Quark",
            "30c9a0fe022b7d006b826abec2eb5d3ac288e637",
            "data/toxicity/val.jsonl",
        )
        return DataNeeds(
            "real_toxicity_prompts",
            layouts=(
                (
                    DataFile(
                        "prompts.jsonl", downloads=(Download(_AI2, member="realtoxicityprompts-data/prompts.jsonl"),)
                    ),
                ),
                (quark,),
                (DataFile("prompts_1000.jsonl"),),
            ),
            hint="https://github.com/allenai/real-toxicity-prompts",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        (path,) = data.paths.values()
        return read_prompts(path)
