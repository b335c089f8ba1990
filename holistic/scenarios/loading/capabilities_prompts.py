"""HELM Capabilities' zero-shot chain-of-thought prompt for multiple choice (GPQA, MMLU-Pro).

HELM 0.5.16 (``helm/benchmark/run_specs/capabilities_run_specs.py``, ``get_gpqa_spec`` and
``get_mmlu_pro_spec`` with ``use_chain_of_thought=true, use_few_shot=false``) asks::

    What is the correct answer to this question: <question>
    Choices:
    (A) <choice>            <- "A. <choice>" for MMLU-Pro
    ...
    Let’s think step by step. Based on your reasoning, what is the single, most likely
    answer choice? Format your response as follows: "The correct answer is (insert answer here)".

(the last paragraph is one line, with HELM's typographic apostrophe), with no
in-context examples, up to 4096 generated tokens, no stop sequence, and HELM's default
temperature of 1 (its run spec does not set one). The texts below are HELM's, byte for
byte (checked against HELM's own prompts by
``tests/conformance/test_conformance_capabilities.py``); the answer is read by
``chain_of_thought_correctness``.
"""

from __future__ import annotations

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterDefaults

INPUT_PREFIX = "What is the correct answer to this question: "
INPUT_SUFFIX = "\nChoices:\n"
GLOBAL_SUFFIX = (
    "Let\u2019s think step by step. Based on your reasoning, what is the single, "
    "most likely answer choice? Format your response as follows: "
    '"The correct answer is (insert answer here)".'
)
MAX_TOKENS = 4096
HELM_TEMPERATURE = 1.0
"""HELM's ``AdapterSpec`` default, which these run specs keep."""


def chain_of_thought_adapter(reference_prefix: str) -> AdapterDefaults:
    """Adapter defaults of HELM's zero-shot chain-of-thought multiple-choice run specs."""
    return {
        "method": "multiple_choice_joint",
        "instructions": "",
        "input_prefix": INPUT_PREFIX,
        "input_suffix": INPUT_SUFFIX,
        "reference_prefix": reference_prefix,
        "reference_suffix": "\n",
        "output_prefix": "",
        "output_suffix": "\n",
        "global_suffix": GLOBAL_SUFFIX,
        "max_train_instances": 0,
        "temperature": HELM_TEMPERATURE,
        "max_tokens": MAX_TOKENS,
        "stop_sequences": (),
    }


def chain_of_thought_info(
    name: str,
    description: str,
    reference_prefix: str,
    breakdown: str,
) -> ScenarioInfo:
    """The facts of a HELM Capabilities chain-of-thought multiple-choice scenario."""
    unperturbed = f"HELM evaluates {name} unperturbed"
    return ScenarioInfo(
        name=name,
        description=description,
        task="multiple_choice",
        default_adapter=chain_of_thought_adapter(reference_prefix),
        main_metric="chain_of_thought_correctness",
        metric_categories=("accuracy", "efficiency"),
        not_applicable_reasons={
            "calibration": "a reasoned answer has no single answer probability",
            "robustness": unperturbed,
            "fairness": unperturbed,
            "bias": "HELM Capabilities measures no bias here (its run spec has the basic metrics only)",
            "toxicity": "HELM Capabilities measures no toxicity here (its run spec has the basic metrics only)",
        },
        tags=("capabilities", "chain_of_thought_mc", "knowledge", "reasoning"),
        breakdowns=(breakdown,),
    )
