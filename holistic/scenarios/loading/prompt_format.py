"""The house prompt format that scenarios recommend in ``ScenarioInfo.default_adapter``.

Most scenarios follow the same HELM-style layout: each field on its own line
(``input_suffix`` and ``output_suffix`` are newlines), five in-context examples,
greedy decoding that stops at the end of the answer line. :func:`prompt_format`
writes that layout once; a scenario names only what it does differently.
"""

from __future__ import annotations

from typing import Any, cast

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdaptationMethod, AdapterDefaults
from holistic.scenarios.loading.categories import CLASSIFICATION, SUMMARIZATION, SUMMARIZATION_UNPERTURBED


def prompt_format(
    *,
    max_tokens: int,
    method: AdaptationMethod = "generation",
    instructions: str = "",
    input_prefix: str = "",
    input_suffix: str = "\n",
    reference_prefix: str | None = None,
    reference_suffix: str | None = None,
    output_prefix: str = "",
    output_suffix: str = "\n",
    instance_prefix: str | None = None,
    max_train_instances: int = 5,
    temperature: float = 0.0,
    stop_sequences: tuple[str, ...] | None = ("\n",),
    post_processing: tuple[str, ...] | None = None,
) -> AdapterDefaults:
    """Adapter defaults in the house layout; an optional field set to ``None`` is left out.

    Keys come in a fixed order (method, instructions, input, references, output,
    instance prefix, shots, decoding), so two scenarios that differ only in values
    print the same way.
    """
    fields: dict[str, Any] = {
        "method": method,
        "instructions": instructions,
        "input_prefix": input_prefix,
        "input_suffix": input_suffix,
        "reference_prefix": reference_prefix,
        "reference_suffix": reference_suffix,
        "output_prefix": output_prefix,
        "output_suffix": output_suffix,
        "instance_prefix": instance_prefix,
        "max_train_instances": max_train_instances,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stop_sequences": stop_sequences,
        "post_processing": post_processing,
    }
    # The parameters are typed as AdapterSpec's fields are: the dict is an AdapterDefaults.
    return cast(AdapterDefaults, {key: value for key, value in fields.items() if value is not None})


def multiple_choice_joint_format(instructions: str = "") -> AdapterDefaults:
    """All choices in one prompt, lettered ``A.``, ``B.``...; the answer is one letter.

    HELM's request for it: one token (``max_tokens=1``), no stop sequences, the top 5
    alternatives of that token (HELM's ``num_outputs=5`` becomes ``top_k_per_token``).
    """
    return {
        **prompt_format(
            method="multiple_choice_joint",
            instructions=instructions,
            input_prefix="Question: ",
            reference_prefix="A. ",
            reference_suffix="\n",
            output_prefix="Answer: ",
            max_tokens=1,
            stop_sequences=(),
        ),
        "top_k_logprobs": 5,
    }


def multiple_choice_separate_format(method: AdaptationMethod) -> AdapterDefaults:
    """Each choice scored on its own after the input (``method`` says how), zero-shot, nothing generated.

    ``multiple_choice_separate_original`` headlines the per-token normalised pick, as HELM scores it."""
    fields = prompt_format(method=method, input_suffix=" ", max_train_instances=0, max_tokens=0, stop_sequences=None)
    if method == "multiple_choice_separate_original":
        fields["length_normalization"] = "token"
    return fields


def commonsense_info(name: str, description: str, *, method: AdaptationMethod) -> ScenarioInfo:
    """The facts of one of HELM's commonsense multiple-choice scenarios (the core suite): each
    choice scored on its own by ``method``, exact match headlined."""
    return ScenarioInfo(
        name=name,
        description=description,
        task="multiple_choice",
        default_adapter=multiple_choice_separate_format(method),
        main_metric="exact_match",
        **CLASSIFICATION,
        tags=("knowledge", "commonsense", "multiple_choice", "core"),
    )


def news_summary_format(sentences: int, max_tokens: int) -> AdapterDefaults:
    """HELM's news summarization prompt: ``###``-separated articles, a summary of ``sentences``."""
    plural = "sentence" if sentences == 1 else "sentences"
    return prompt_format(
        input_prefix="###\nArticle: ",
        input_suffix="\n\n",
        output_prefix=f"Summarize the above article in {sentences} {plural}.\n",
        max_tokens=max_tokens,
        temperature=0.3,
        stop_sequences=("###",),
    )


def news_summarization_info(
    name: str,
    description: str,
    *,
    sentences: int,
    max_tokens: int,
) -> ScenarioInfo:
    """The facts of one of HELM's news summarization scenarios (ROUGE-2 headline, the core suite)."""
    return ScenarioInfo(
        name=name,
        description=description,
        task="summarization",
        default_adapter=news_summary_format(sentences=sentences, max_tokens=max_tokens),
        main_metric="rouge_2",
        **SUMMARIZATION,
        unperturbed_by_default=SUMMARIZATION_UNPERTURBED,
        tags=("summarization", "core"),
    )


def completion_format(*, max_tokens: int, temperature: float, stop_sequences: tuple[str, ...] = ()) -> AdapterDefaults:
    """HELM's completion adapter: the input alone, no prefixes or suffixes, no in-context examples."""
    return prompt_format(
        input_prefix="",
        input_suffix="",
        output_prefix="",
        output_suffix="",
        instance_prefix="",
        max_train_instances=0,
        max_tokens=max_tokens,
        temperature=temperature,
        stop_sequences=stop_sequences,
    )
