"""Post-processors on messy model outputs; parse failures are recorded, not raised."""

from __future__ import annotations

import pytest

from holistic.adaptation import adapt, postprocess
from holistic.core.errors import SpecError, UnknownNameError
from holistic.core.types import AdapterSpec, Completion, RequestResult, RequestState
from tests.adaptation.adaptation_fixtures import EVAL, PLAIN_MODEL, TRAIN

JOINT = AdapterSpec(method="multiple_choice_joint", max_train_instances=0)


def _answer(spec: AdapterSpec, *texts: str) -> RequestState:
    [state] = adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)
    result = RequestResult(success=True, completions=tuple(Completion(t) for t in texts))
    [done] = postprocess([state.with_result(result)], spec)
    return done


@pytest.mark.parametrize(
    "output,expected",
    [
        (" B", "green"),
        ("B.", "green"),
        ("(C)", "blue"),
        ("  C) blue, because the sky", "blue"),
        ("**A**", "red"),
        ("Answer: B", "green"),
        ("I think the answer is (C).", "blue"),
        ("green, of course", "green"),
    ],
)
def test_letter_to_choice_reads_letters_in_many_shapes(output: str, expected: str) -> None:
    done = _answer(JOINT.replace(post_processing=("strip", "letter_to_choice")), output)
    assert done.post_processed == (expected,) and done.parse_error is None


def test_unreadable_letter_is_recorded_as_a_parse_error() -> None:
    done = _answer(JOINT.replace(post_processing=("letter_to_choice",)), "B", "I am not sure", "Z")
    assert done.post_processed == ("green", "", "")
    assert done.parse_error is not None and "no choice letter (A, B, C)" in done.parse_error


@pytest.mark.parametrize(
    "output,expected",
    [
        ("She has 3 apples, then 5 more.\n#### 8", "8"),
        ("Total: $1,234.50 so #### 1,234.50", "1234.5"),
        ("The answer is 42.\n\nQ: next question 7", "7"),  # no marker: the last number
        ("It costs 18.00 dollars", "18"),
        ("went down by -3 degrees", "-3"),
    ],
)
def test_gsm8k_and_last_number_extraction(output: str, expected: str) -> None:
    spec = AdapterSpec(max_train_instances=0, post_processing=("gsm8k_answer",))
    assert _answer(spec, output).post_processed == (expected,)


def test_json_extraction_tolerates_fences_and_trailing_text() -> None:
    spec = AdapterSpec(max_train_instances=0, post_processing=("json",))
    fenced = 'Sure! Here it is:\n```json\n{"label": "pos", "score": 0.9}\n```\nHope that helps {not json}'
    trailing = 'Result: [1, 2, {"a": null}] and some words'
    broken = '{"label": "pos",'
    done = _answer(spec, fenced, trailing, broken)
    assert done.post_processed == ('{"label":"pos","score":0.9}', '[1,2,{"a":null}]', "")
    assert done.parse_error is not None and "no JSON" in done.parse_error


def test_first_line_and_strip_and_failed_results() -> None:
    spec = AdapterSpec(max_train_instances=0, post_processing=("first_line", "lowercase"))
    assert _answer(spec, "\n\n  Paris Is Nice \nmore").post_processed == ("paris is nice",)
    [state] = adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)
    failed = state.with_result(RequestResult(success=False, error="timeout"))
    assert postprocess([failed], spec) == [failed]


def test_unknown_post_processor_name_suggests_the_nearest() -> None:
    spec = AdapterSpec(max_train_instances=0, post_processing=("first_lines",))
    with pytest.raises(UnknownNameError, match="did you mean 'first_line'"):
        postprocess([], spec)
    with pytest.raises(SpecError, match=r"adaptation\.post_processing.*did you mean 'first_line'"):
        adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)
