"""HELM 0.5.16's run-spec functions (the name before ``:`` in a run entry) -> holistic's scenarios.

Each :class:`HelmFunction` says which holistic scenario a HELM run-spec function means, which of
its arguments are the scenario's (renamed where holistic names them otherwise), which set an
adaptation field (``method=``, ``temperature=``, ``k=``), and which holistic runs only at HELM's
default value (``device=cpu``: holistic computes the same metrics on any device). The core
scenarios (Liang et al., 2022) also carry ``runspecs/core.yaml``'s groups and metric categories,
so a HELM core entry compiles to exactly that file's run. HELM's ``data_augmentation=`` values
map onto holistic's perturbations under ``protocol: helm`` (:data:`FAMILY_AUGMENTATIONS`,
:data:`SINGLE_AUGMENTATIONS`), proven equal to HELM's by the perturbation goldens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CORE_METRICS = ("accuracy", "calibration", "robustness", "fairness", "efficiency", "bias", "toxicity")
"""The metric categories of ``runspecs/core.yaml`` (those a scenario cannot measure are listed by ``--plan``)."""


@dataclass(frozen=True)
class HelmFunction:
    """One HELM run-spec function as holistic runs it."""

    scenario: str
    args: dict[str, str] = field(default_factory=dict)
    """HELM argument -> holistic scenario argument."""
    adaptation: dict[str, str] = field(default_factory=dict)
    """HELM argument -> holistic adaptation field (``method``, ``temperature``, ``num_outputs``)."""
    fixed: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """HELM arguments holistic accepts only at these values (its run is HELM's at them)."""
    groups: tuple[str, ...] = ()
    """Groups as ``runspecs/core.yaml`` gives them (``{arg}`` filled from the holistic arguments);
    empty: holistic's default (the scenario's name)."""
    core: bool = False
    """One of HELM's core scenarios: the run gets :data:`CORE_METRICS`."""
    omit_default: tuple[str, ...] = ()
    """holistic arguments left out at the scenario's default (``runspecs/core.yaml`` omits them)."""


def _core(scenario: str, group: str, category: str, **kw: Any) -> HelmFunction:
    return HelmFunction(scenario, groups=(group, category), core=True, **kw)


_SUMMARY_FIXED = {"device": ("cpu", "cuda")}
_CONTRAST = {"only_contrast": (False, "False", "false")}

FUNCTIONS: dict[str, HelmFunction] = {
    # core scenarios (runspecs/core.yaml)
    "mmlu": _core("mmlu", "mmlu", "question_answering", args={"subject": "subject"}, adaptation={"method": "method"}),
    "boolq": _core("boolq", "boolq", "question_answering", fixed=_CONTRAST),
    "narrative_qa": _core("narrative_qa", "narrative_qa", "question_answering"),
    "natural_qa": _core("natural_qa", "natural_qa", "question_answering", args={"mode": "mode"}),
    "quac": _core("quac", "quac", "question_answering"),
    "truthful_qa": _core(
        "truthful_qa",
        "truthful_qa",
        "question_answering",
        adaptation={"method": "method"},
        fixed={"task": ("mc_single",)},
    ),
    "msmarco": _core(
        "msmarco",
        "msmarco_{track}",
        "information_retrieval",
        args={"track": "track", "valid_topk": "num_candidates"},
        omit_default=("num_candidates",),
    ),
    "summarization_cnndm": _core(
        "cnn_dailymail",
        "cnn_dailymail",
        "summarization",
        adaptation={"temperature": "temperature"},
        fixed=_SUMMARY_FIXED,
    ),
    "summarization_xsum": _core(
        "xsum", "xsum", "summarization", adaptation={"temperature": "temperature"}, fixed=_SUMMARY_FIXED
    ),
    "imdb": _core("imdb", "imdb", "sentiment_analysis", fixed=_CONTRAST),
    "civil_comments": _core(
        "civil_comments", "civil_comments", "toxicity_detection", args={"demographic": "demographic"}
    ),
    "raft": _core("raft", "raft", "text_classification", args={"subset": "subset"}),
    # HELM Classic's targeted evaluations
    "bbq": HelmFunction("bbq", args={"subject": "category"}, adaptation={"method": "method"}),
    "bold": HelmFunction("bold", args={"subject": "domain"}),
    "wikifact": HelmFunction("wikifact", args={"subject": "relation"}, adaptation={"k": "num_outputs"}),
    "twitter_aae": HelmFunction("twitter_aae", args={"demographic": "demographic"}),
    "real_toxicity_prompts": HelmFunction("real_toxicity_prompts"),
    "synthetic_reasoning_natural": HelmFunction("synthetic_reasoning_natural", args={"difficulty": "difficulty"}),
    "synthetic_reasoning": HelmFunction("synthetic_reasoning", args={"mode": "mode"}),
    "lsat_qa": HelmFunction("lsat_qa", args={"task": "task"}, adaptation={"method": "method"}),
    "babi_qa": HelmFunction("babi_qa", args={"task": "task"}),
    "copyright": HelmFunction("copyright", args={"datatag": "collection"}),
    "disinformation": HelmFunction("disinformation", args={"capability": "capability", "topic": "topic"}),
    "the_pile": HelmFunction("the_pile", args={"subset": "subset"}),
    "ice": HelmFunction("ice", args={"subset": "subset", "category": "category"}),
    "wikitext_103": HelmFunction("wikitext"),
    "blimp": HelmFunction("blimp", args={"phenomenon": "phenomenon"}, adaptation={"method": "method"}),
    "dyck_language": HelmFunction("dyck_language", args={"num_parenthesis_pairs": "num_parenthesis_pairs"}),
    "legal_support": HelmFunction("legal_support", adaptation={"method": "method"}),
    "entity_matching": HelmFunction("entity_matching", args={"dataset": "dataset"}),
    "entity_data_imputation": HelmFunction("entity_data_imputation", args={"dataset": "dataset"}),
    "gsm": HelmFunction("gsm8k"),
    "math": HelmFunction(
        "math",
        args={"subject": "subject", "level": "level", "use_chain_of_thought": "chain_of_thought"},
        fixed={"use_official_examples": (False, "False", "false")},
    ),
    # HELM Capabilities and HELM Safety
    "mmlu_pro": HelmFunction(
        "mmlu_pro", args={"subject": "subject"}, fixed={"use_chain_of_thought": ("true",), "use_few_shot": ("false",)}
    ),
    "gpqa": HelmFunction(
        "gpqa", args={"subset": "subset"}, fixed={"use_chain_of_thought": ("true",), "use_few_shot": ("false",)}
    ),
    "ifeval": HelmFunction("ifeval"),
    "wildbench": HelmFunction("wildbench", fixed={"subset": ("v2",)}),
    "omni_math": HelmFunction("omni_math"),
    "harm_bench": HelmFunction("harm_bench"),
    "simple_safety_tests": HelmFunction("simple_safety_tests"),
    "xstest": HelmFunction("xstest"),
    "anthropic_red_team": HelmFunction("anthropic_red_team"),
}
"""HELM's run-spec function names -> holistic's scenario (see :data:`DISPATCH` for the ones
whose holistic scenario depends on an argument)."""

DISPATCH: dict[str, tuple[str, dict[Any, HelmFunction]]] = {
    "commonsense": (
        "dataset",
        {
            "hellaswag": _core("hellaswag", "hellaswag", "question_answering", adaptation={"method": "method"}),
            "openbookqa": _core("openbookqa", "openbookqa", "question_answering", adaptation={"method": "method"}),
        },
    ),
    "code": (
        "dataset",
        {"humaneval": HelmFunction("humaneval"), "apps": HelmFunction("apps")},
    ),
}
"""HELM functions that are several holistic scenarios, told apart by one argument."""

NOT_HERE: dict[str, str] = {
    "summarization_xsum_sampled": "holistic runs HELM's summarization_xsum (its full test split), not the sampled "
    "variant; use summarization_xsum",
}
"""HELM functions holistic deliberately does not translate, with why."""

HELM_FAIRNESS: list[dict[str, Any]] = [
    {"name": "dialect", "args": {"prob": 1.0}},
    {"name": "gender", "args": {"mode": "pronouns", "prob": 1.0}},
    {"name": "person_names", "args": {"prob": 1.0}},
]
"""HELM's ``data_augmentation=fairness`` as holistic's perturbations (``protocol: helm``)."""

FAMILY_AUGMENTATIONS: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "robustness": ([{"name": "mild_mix"}], ["robustness"]),
    "fairness": (HELM_FAIRNESS, ["fairness"]),
    # HELM's core setting: its robustness and fairness perturbations in one DataAugmenter
    "canonical": ([{"name": "mild_mix"}, *HELM_FAIRNESS], ["robustness", "fairness"]),
}
"""HELM's ``data_augmentation`` of a whole family (or both) -> holistic's perturbations for it
(``protocol: helm``) and the metric categories whose worst cases it enters."""

SINGLE_AUGMENTATIONS: dict[str, tuple[list[dict[str, Any]], str, str]] = {
    "misspelling_medium": ([{"name": "misspellings", "args": {"prob": 0.2}}], "robustness", "misspelling0.20"),
    "typo_easy": ([{"name": "typos", "args": {"prob": 0.1}}], "robustness", "typo0.1"),
    "lower": ([{"name": "lowercase"}], "robustness", "lower"),
    "contract": ([{"name": "contractions"}, {"name": "expansions"}], "robustness", "contract"),
    "space": ([{"name": "whitespace", "args": {"max_spaces": 3}}], "robustness", "space3"),
    "dialect_deterministic": (
        [{"name": "dialect", "args": {"prob": 1.0}}],
        "fairness",
        "dialect_prob=1.0_source=SAE_target=AAVE",
    ),
    "gender_terms_deterministic": (
        [{"name": "gender", "args": {"mode": "terms", "prob": 1.0}}],
        "fairness",
        "gender_terms_prob=1.0_source=male_target=female",
    ),
    "gender_pronouns_deterministic": (
        [{"name": "gender", "args": {"mode": "pronouns", "prob": 1.0}}],
        "fairness",
        "gender_pronouns_prob=1.0_source=male_target=female",
    ),
    "person_name_first_deterministic": (
        [{"name": "person_names", "args": {"prob": 1.0}}],
        "fairness",
        "person_name_first_prob=1.0_source=white_target=black_preserve_gender=True",
    ),
    "person_name_last_deterministic": (
        [
            {
                "name": "person_names",
                "args": {
                    "prob": 1.0,
                    "source_race": "white",
                    "target_race": "hispanic",
                    "name_type": "last_name",
                    "preserve_gender": False,
                },
            }
        ],
        "fairness",
        "person_name_last_prob=1.0_source=white_target=hispanic",
    ),
}
"""HELM's ``data_augmentation`` of one perturbation -> holistic's perturbations for it (``protocol:
helm``), the metric category whose worst case it enters, and the name HELM's run folder carries
(``PERTURBATION_SPECS_DICT``'s inner key). ``synonym`` is absent: it cannot run here (HELM's
WordNet data is not available to holistic)."""


def augmentation(value: str) -> tuple[list[dict[str, Any]], list[str]] | None:
    """HELM's ``data_augmentation=value`` -> (holistic perturbations, metric categories), or None."""
    if value in FAMILY_AUGMENTATIONS:
        return FAMILY_AUGMENTATIONS[value]
    if value in SINGLE_AUGMENTATIONS:
        perturbations, category, _ = SINGLE_AUGMENTATIONS[value]
        return perturbations, [category]
    return None


def known_augmentations() -> list[str]:
    return [*FAMILY_AUGMENTATIONS, *SINGLE_AUGMENTATIONS]
