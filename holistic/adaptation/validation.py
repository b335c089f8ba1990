"""Checking an :class:`AdapterSpec` before any prompt is built.

Every enumerated field is checked against its valid values; a wrong value raises a
:class:`~holistic.core.errors.SpecError` that names the field (as ``adaptation.<field>``)
and suggests the nearest valid value, so a typo in a run spec is caught before a model
is loaded.
"""

from __future__ import annotations

from holistic.core.errors import HolisticError, SpecError, did_you_mean
from holistic.core.specs import (
    ADAPTATION_METHODS,
    ANSWER_PARSINGS,
    CHAT_EXAMPLES,
    EVAL_INSTANCE_MODES,
    EVAL_SAMPLINGS,
    INSTRUCTION_PLACEMENTS,
    JOINT,
    LANGUAGE_MODELING,
    LENGTH_NORMALIZATIONS,
    MAX_ANSWER_PATTERN_CHARS,
    MAX_CHOICE_LABEL_CHARS,
    PROMPT_FORMATS,
    PROTOCOLS,
    SELECTIONS,
    TRUNCATION_SIDES,
    AdapterSpec,
    PromptFormat,
)


class AdaptationError(HolisticError):
    """An instance cannot be adapted as the spec asks (e.g. multiple choice without choices)."""


def _check_choice(field: str, value: str, valid: tuple[str, ...]) -> None:
    if value not in valid:
        hint = did_you_mean(value, valid)
        suggestion = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
        raise SpecError(
            f"{value!r} is not a valid value (valid: {', '.join(valid)}){suggestion}",
            path=f"adaptation.{field}",
        )


def validate_adapter_spec(spec: AdapterSpec) -> None:
    """Raise :class:`SpecError` naming the first invalid field of ``spec``."""
    from holistic.adaptation.postprocessors import POST_PROCESSORS

    _check_choice("method", spec.method, ADAPTATION_METHODS)
    _check_choice("instruction_placement", spec.instruction_placement, INSTRUCTION_PLACEMENTS)
    _check_choice("prompt_format", spec.prompt_format, PROMPT_FORMATS)
    _check_choice("chat_examples", spec.chat_examples, CHAT_EXAMPLES)
    _check_choice("selection", spec.selection, SELECTIONS)
    _check_choice("protocol", spec.protocol, PROTOCOLS)
    _check_choice("eval_sampling", spec.eval_sampling, EVAL_SAMPLINGS)
    _check_choice("answer_parsing", spec.answer_parsing, ANSWER_PARSINGS)
    _check_choice("length_normalization", spec.length_normalization, LENGTH_NORMALIZATIONS)
    _check_choice("truncation_side", spec.truncation_side, TRUNCATION_SIDES)
    _check_choice("eval_instances", spec.eval_instances, EVAL_INSTANCE_MODES)
    for name in spec.post_processing:
        if name not in POST_PROCESSORS:
            _check_choice("post_processing", name, tuple(POST_PROCESSORS.names()))
    if spec.max_train_instances < 0:
        raise SpecError("must be >= 0", path="adaptation.max_train_instances")
    if spec.num_train_trials < 1:
        raise SpecError("must be >= 1", path="adaptation.num_train_trials")
    if spec.max_tokens < 0:
        raise SpecError("must be >= 0", path="adaptation.max_tokens")
    if spec.num_outputs < 1:
        raise SpecError("must be >= 1", path="adaptation.num_outputs")
    if not 0.0 <= spec.mmr_lambda <= 1.0:
        raise SpecError(f"must be between 0 and 1, got {spec.mmr_lambda}", path="adaptation.mmr_lambda")
    if spec.prompt_format == PromptFormat.CHAT and spec.scores_loglikelihood:
        raise SpecError(
            f"method {spec.method!r} scores text by log-likelihood and always uses plain prompts; "
            "use prompt_format 'auto' or 'plain'",
            path="adaptation.prompt_format",
        )
    if spec.method == LANGUAGE_MODELING and not 0 <= spec.language_modeling_context < spec.language_modeling_window:
        raise SpecError(
            f"language_modeling_context ({spec.language_modeling_context}) must be >= 0 and smaller than "
            f"language_modeling_window ({spec.language_modeling_window})",
            path="adaptation.language_modeling_context",
        )
    _check_choice_labels(spec)
    if spec.method == JOINT and spec.template is None and "A" not in spec.reference_prefix:
        raise SpecError(
            f"reference_prefix {spec.reference_prefix!r} must contain the letter 'A' (counted up per choice)",
            path="adaptation.reference_prefix",
        )


def _check_choice_labels(spec: AdapterSpec) -> None:
    """``choice_labels``: distinct, non-blank, short, without line breaks; ``answer_pattern``: a
    regular expression (of the ``regex`` module, searched with a time limit) of bounded length."""
    labels = spec.choice_labels
    for i, label in enumerate(labels):
        if not isinstance(label, str) or not label.strip() or len(label) > MAX_CHOICE_LABEL_CHARS or "\n" in label:
            raise SpecError(
                f"choice label {label!r} must be a non-blank string of at most {MAX_CHOICE_LABEL_CHARS} characters "
                "on one line",
                path=f"adaptation.choice_labels[{i}]",
            )
    if len(set(labels)) != len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        raise SpecError(f"choice labels must differ; given more than once: {twice}", path="adaptation.choice_labels")
    pattern = spec.answer_pattern
    if pattern is None:
        return
    if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_ANSWER_PATTERN_CHARS:
        raise SpecError(
            f"must be a regular expression of 1 to {MAX_ANSWER_PATTERN_CHARS} characters",
            path="adaptation.answer_pattern",
        )
    import regex

    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise SpecError(f"{pattern!r} is not a regular expression: {exc}", path="adaptation.answer_pattern") from None
