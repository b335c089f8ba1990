"""IFEval's instruction ids and the arguments each takes, checked (shared by the
``ifeval`` scenario, which validates its data, and the metric, which scores it).

The checkers themselves are in :mod:`holistic.metrics.ifeval_checks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holistic.core.errors import UnknownNameError

LESS_THAN = "less than"
AT_LEAST = "at least"
RELATIONS = (LESS_THAN, AT_LEAST)

INSTRUCTION_ARGS: dict[str, tuple[str, ...]] = {
    "change_case:capital_word_frequency": ("capital_frequency", "capital_relation"),
    "change_case:english_capital": (),
    "change_case:english_lowercase": (),
    "combination:repeat_prompt": ("prompt_to_repeat",),
    "combination:two_responses": (),
    "detectable_content:number_placeholders": ("num_placeholders",),
    "detectable_content:postscript": ("postscript_marker",),
    "detectable_format:constrained_response": (),
    "detectable_format:json_format": (),
    "detectable_format:multiple_sections": ("section_spliter", "num_sections"),
    "detectable_format:number_bullet_lists": ("num_bullets",),
    "detectable_format:number_highlighted_sections": ("num_highlights",),
    "detectable_format:title": (),
    "keywords:existence": ("keywords",),
    "keywords:forbidden_words": ("forbidden_words",),
    "keywords:frequency": ("keyword", "frequency", "relation"),
    "keywords:letter_frequency": ("letter", "let_frequency", "let_relation"),
    "language:response_language": ("language",),
    "length_constraints:nth_paragraph_first_word": ("num_paragraphs", "nth_paragraph", "first_word"),
    "length_constraints:number_paragraphs": ("num_paragraphs",),
    "length_constraints:number_sentences": ("num_sentences", "relation"),
    "length_constraints:number_words": ("num_words", "relation"),
    "punctuation:no_comma": (),
    "startend:end_checker": ("end_phrase",),
    "startend:quotation": (),
}
"""The 25 instruction ids of the published data -> the arguments the data must give
(in the data's own names, ``section_spliter`` included)."""


class IFEvalArgumentError(ValueError):
    """An instruction's arguments are missing, unexpected, of the wrong type or out of range."""


_INTEGER_ARGS = frozenset(
    {
        "capital_frequency",
        "num_placeholders",
        "num_sections",
        "num_bullets",
        "num_highlights",
        "frequency",
        "let_frequency",
        "num_paragraphs",
        "nth_paragraph",
        "num_sentences",
        "num_words",
    }
)
_RELATION_ARGS = frozenset({"relation", "let_relation", "capital_relation"})
_LIST_ARGS = frozenset({"keywords", "forbidden_words"})


def _check_arg(instruction_id: str, name: str, value: Any) -> None:
    where = f"{instruction_id}: argument {name!r}"
    if name in _INTEGER_ARGS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise IFEvalArgumentError(f"{where} must be a non-negative integer, not {value!r}")
    elif name in _RELATION_ARGS:
        if value not in RELATIONS:
            raise IFEvalArgumentError(f"{where} must be one of {list(RELATIONS)}, not {value!r}")
    elif name in _LIST_ARGS:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise IFEvalArgumentError(f"{where} must be a non-empty list of words, not {value!r}")
    elif not isinstance(value, str) or not value.strip():
        raise IFEvalArgumentError(f"{where} must be a non-empty string, not {value!r}")


def instruction_args(instruction_id: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of one instruction, checked: ``None`` values dropped (the Hugging Face
    copy pads every row with every argument name), required ones present, types right."""
    if instruction_id not in INSTRUCTION_ARGS:
        raise UnknownNameError("IFEval instruction", instruction_id, INSTRUCTION_ARGS)
    wanted = INSTRUCTION_ARGS[instruction_id]
    args = {k: v for k, v in given.items() if v is not None}
    for name in wanted:
        if name not in args:
            raise IFEvalArgumentError(f"{instruction_id}: missing argument {name!r}")
        _check_arg(instruction_id, name, args[name])
    unknown = sorted(set(args) - set(wanted))
    if unknown:
        raise IFEvalArgumentError(f"{instruction_id}: unexpected argument(s) {unknown}; it takes {list(wanted)}")
    if instruction_id == "length_constraints:nth_paragraph_first_word" and not (
        1 <= args["nth_paragraph"] <= args["num_paragraphs"]
    ):
        raise IFEvalArgumentError(f"{instruction_id}: nth_paragraph must be between 1 and num_paragraphs")
    if instruction_id == "keywords:letter_frequency" and len(args["letter"].strip()) != 1:
        raise IFEvalArgumentError(f"{instruction_id}: letter must be one character, not {args['letter']!r}")
    return args
