"""IFEval's checkers: the verdicts a user reads in the scores."""

from __future__ import annotations

from typing import Any

import pytest

from holistic.core.errors import UnknownNameError
from holistic.core.ifeval import INSTRUCTION_ARGS, IFEvalArgumentError, instruction_args
from holistic.metrics.ifeval_checks import CHECKERS, follows, follows_loosely, loose_variants


def verdict(instruction: str, response: str, **args: object) -> bool:
    return follows(instruction, response, instruction_args(instruction, args))


def test_every_published_instruction_has_a_checker() -> None:
    assert set(CHECKERS) == set(INSTRUCTION_ARGS) and len(CHECKERS) == 25


@pytest.mark.parametrize(
    ("instruction", "response", "args", "expected"),
    [
        ("punctuation:no_comma", "No commas here.", {}, True),
        ("punctuation:no_comma", "One, two.", {}, False),
        ("length_constraints:number_words", "one two three", {"relation": "less than", "num_words": 4}, True),
        ("length_constraints:number_words", "one two three four", {"relation": "less than", "num_words": 4}, False),
        (
            "length_constraints:number_sentences",
            "Mr. Smith came. He sat.",
            {"relation": "at least", "num_sentences": 2},
            True,
        ),
        ("length_constraints:number_sentences", "Mr. Smith came.", {"relation": "at least", "num_sentences": 2}, False),
        ("startend:quotation", ' "wrapped" ', {}, True),
        ("detectable_format:title", "<<Joy>>\ntext", {}, True),
        ("detectable_format:title", "<<  >>\ntext", {}, False),
        ("detectable_format:json_format", '```json\n{"a": 1}\n```', {}, True),
        ("detectable_format:number_bullet_lists", "* a\n- b\n**bold** c", {"num_bullets": 2}, True),
        ("detectable_format:number_highlighted_sections", "*one* and **two**", {"num_highlights": 2}, True),
        ("detectable_format:number_highlighted_sections", "*one* and **two**", {"num_highlights": 3}, False),
        ("combination:two_responses", "first\n******\nsecond", {}, True),
        ("combination:two_responses", "same\n******\nsame", {}, False),
        ("keywords:letter_frequency", "banana", {"letter": "a", "let_frequency": 3, "let_relation": "at least"}, True),
        (
            "keywords:letter_frequency",
            "# one # two",
            {"letter": "#", "let_frequency": 2, "let_relation": "at least"},
            True,
        ),
        ("keywords:forbidden_words", "A catalogue.", {"forbidden_words": ["cat"]}, True),
        ("keywords:forbidden_words", "A Cat.", {"forbidden_words": ["cat"]}, False),
        ("keywords:existence", "a+b is not a regex here", {"keywords": ["a+b"]}, True),
        ("change_case:english_lowercase", "all lowercase english words here, as asked", {}, True),
        ("change_case:english_capital", "THIS IS ALL CAPITALS IN ENGLISH", {}, True),
        (
            "language:response_language",
            "Ceci est une réponse écrite entièrement en français.",
            {"language": "fr"},
            True,
        ),
        ("language:response_language", "This answer is written in plain English.", {"language": "fr"}, False),
        ("detectable_content:postscript", "Body.\n\nP.S. more", {"postscript_marker": "P.S."}, True),
        ("detectable_content:postscript", "Body.\n\np. p. s tail", {"postscript_marker": "P.P.S"}, True),
        (
            "length_constraints:nth_paragraph_first_word",
            'Intro.\n\n"Second, paragraph.',
            {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "second"},
            True,
        ),
        ("startend:end_checker", 'Done. Peace!"', {"end_phrase": "Peace!"}, True),
        ("combination:repeat_prompt", "  WRITE a poem. Here it is", {"prompt_to_repeat": "Write a poem."}, True),
    ],
)
def test_checker_verdicts(instruction: str, response: str, args: dict[str, Any], expected: bool) -> None:
    assert verdict(instruction, response, **args) is expected


def test_an_empty_response_follows_nothing() -> None:
    assert not verdict("punctuation:no_comma", "  \n")
    assert not verdict("keywords:forbidden_words", "", forbidden_words=["x"])


def test_loose_reading_drops_a_chatty_first_line_and_markdown_stars() -> None:
    response = "Sure! Here you go, friend:\n*no commas in the answer itself*"
    args = instruction_args("punctuation:no_comma", {})
    assert not follows("punctuation:no_comma", response, args)
    assert follows_loosely("punctuation:no_comma", response, args)
    assert len(loose_variants(response)) == 8
    quoted = '**"All of it quoted"**'
    assert not follows("startend:quotation", quoted, {}) and follows_loosely("startend:quotation", quoted, {})


def test_language_detection_is_the_same_every_time() -> None:
    text = "Ok si bueno"  # short and ambiguous: an unseeded detector can answer differently per call
    answers = {verdict("language:response_language", text, language="es") for _ in range(20)}
    assert len(answers) == 1


@pytest.mark.parametrize(
    ("instruction", "args", "message"),
    [
        ("length_constraints:number_words", {"relation": "at most", "num_words": 3}, "'less than', 'at least'"),
        ("length_constraints:number_words", {"relation": "less than"}, "missing argument 'num_words'"),
        ("detectable_format:number_bullet_lists", {"num_bullets": -1}, "non-negative integer"),
        ("punctuation:no_comma", {"strict": True}, "unexpected argument(s) ['strict']"),
        (
            "keywords:letter_frequency",
            {"letter": "ab", "let_frequency": 1, "let_relation": "at least"},
            "one character",
        ),
        (
            "length_constraints:nth_paragraph_first_word",
            {"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "so"},
            "between 1 and num_paragraphs",
        ),
    ],
)
def test_bad_arguments_are_errors_not_random_values(instruction: str, args: dict[str, Any], message: str) -> None:
    with pytest.raises(IFEvalArgumentError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        instruction_args(instruction, args)


def test_unknown_instruction_suggests_the_nearest() -> None:
    with pytest.raises(UnknownNameError, match="punctuation:no_comma"):
        instruction_args("punctuation:no_commas", {})


def test_none_arguments_of_the_hugging_face_copy_are_ignored() -> None:
    assert instruction_args("punctuation:no_comma", {"num_words": None, "relation": None}) == {}
