"""Joint multiple choice with ``choice_labels`` and ``answer_pattern`` (HELM's
``reference_prefix_characters`` and ``output_mapping_pattern``): the prompt, the output mapping,
the answer read by every metric that picks a choice, the checks, and the run ids they leave alone."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from holistic.adaptation import adapt, validate_adapter_spec
from holistic.core.errors import SpecError
from holistic.core.types import AdapterSpec, RunSpec
from holistic.metrics.accuracy import MultipleChoiceAccuracy
from holistic.metrics.calibration import CalibrationMetric
from holistic.metrics.choices import read_answer, resolve
from holistic.metrics.states import group_units
from holistic.site.browser import prediction
from holistic.spec import compile_spec
from holistic.spec.protocol import HOLISTIC_BEHAVIOUR
from tests.adaptation.adaptation_fixtures import EVAL, PLAIN_MODEL, TRAIN
from tests.metrics.metrics_testkit import ctx, gen_state, instance, tokens

ARABIC = ("أ", "ب", "ج", "د", "هـ")
PATTERN = "(أ|ب|ج|د|هـ)"
JOINT = AdapterSpec(
    method="multiple_choice_joint",
    input_prefix="Question: ",
    output_prefix="Answer: ",
    max_train_instances=1,
    selection="first",
    protocol="holistic",
    behaviour=HOLISTIC_BEHAVIOUR,
)


def test_the_labels_letter_the_choices_the_examples_and_the_mapping() -> None:
    spec = JOINT.replace(choice_labels=ARABIC, answer_pattern=PATTERN)
    [state] = adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)
    assert state.request.prompt == (
        "Question: Colour of grass?\nأ. red\nب. green\nج. blue\nAnswer: ب\n\n"
        "Question: Colour of the sky?\nأ. red\nب. green\nج. blue\nAnswer:"
    )
    assert state.output_mapping == {"أ": "red", "ب": "green", "ج": "blue"}
    [plain] = adapt(TRAIN, EVAL, JOINT, PLAIN_MODEL, None, seed=0)
    assert plain.output_mapping == {"A": "red", "B": "green", "C": "blue"}


def test_more_choices_than_labels_is_an_adaptation_error() -> None:
    with pytest.raises(Exception, match=r"supports at most 2 choices, got 3"):
        adapt(TRAIN, EVAL, JOINT.replace(choice_labels=("x", "y")), PLAIN_MODEL, None, seed=0)


@pytest.mark.parametrize(
    ("completion", "pattern", "read"),
    [
        ("ب", PATTERN, "ب"),
        ("  (ج) أزرق", PATTERN, "ج"),  # HELM: the first match anywhere, its first group
        ("الإجابة: ب", PATTERN, "ج"),  # ... even inside a word: HELM reads this as ج (الإجابة holds one)
        ("هـ", PATTERN, "هـ"),
        ("لا أعرف", PATTERN, "أ"),  # HELM's pattern finds the letter inside a word, as HELM reads it
        ("B", PATTERN, ""),  # no match: no choice
        ("answer B.", r"[A-D]", "B"),  # no group: the whole match
        ("answer x", r"answer ([A-D])?x", ""),  # a group that did not take part: nothing
        (" B ", None, "B"),  # without a pattern: the stripped completion
    ],
)
def test_the_answer_is_read_as_helms_output_mapping_pattern(completion: str, pattern: str | None, read: str) -> None:
    assert read_answer(completion, pattern) == read


def test_a_pattern_that_backtracks_for_ever_stops_and_picks_nothing() -> None:
    start = time.monotonic()
    assert read_answer("a" * 40 + "!", r"(a|aa)+$") == ""
    assert time.monotonic() - start < 30  # the search is cut at one second
    again = time.monotonic()
    for _ in range(100):  # ... and that pattern is not searched again: 100 answers cost nothing more
        assert read_answer("a" * 40 + "!", r"(a|aa)+$") == ""
    assert time.monotonic() - again < 5


def test_the_instance_browser_names_the_choice_the_pattern_reads() -> None:
    row = {
        "index": 0,
        "kind": "generate",
        "error": None,
        "completions": ["(ب) أخضر"],
        "post_processed": None,
        "output_mapping": {"أ": "red", "ب": "green"},
    }
    assert prediction([row], None, "none", PATTERN) == {"text": "(ب) أخضر", "parsed": None, "choice_text": "green"}
    assert prediction([row])["choice_text"] is None  # type: ignore[index]  # without it: not a bare label


def test_every_choice_metric_reads_through_the_pattern() -> None:
    q = instance("q1", ["red", "green", "blue"], correct=[1])
    mapping = {"أ": "red", "ب": "green", "ج": "blue"}
    state = gen_state(q, "(ب) أخضر", mapping=mapping, logprob_tokens=tokens(("ب", -0.1)))
    [unit] = group_units([state])
    assert resolve(unit, "multiple_choice_joint").predicted is None  # not the bare label
    assert resolve(unit, "multiple_choice_joint", answer_pattern=PATTERN).predicted == 1
    assert resolve(unit, "multiple_choice_joint", "none", "lenient", PATTERN).predicted == 1
    spec = JOINT.replace(choice_labels=ARABIC, answer_pattern=PATTERN)
    accuracy = MultipleChoiceAccuracy.configure(ctx().scenario_info, spec, ctx().deployment)
    stats = {s.name.name: s.value for s in accuracy.evaluate([state], ctx()).per_instance}
    assert stats["exact_match"] == 1.0 and stats["invalid_answer"] == 0.0
    assert "answer_pattern" in repr(accuracy)
    calibration = CalibrationMetric.configure(ctx().scenario_info, spec, ctx().deployment)
    pair = calibration._pair(unit)
    assert pair is not None and pair[1] == 1.0 and pair[0] == pytest.approx(0.904837, abs=1e-5)


def test_runs_without_the_options_keep_their_ids_and_metric_reprs() -> None:
    assert "choice_labels" not in JOINT.as_dict() and "answer_pattern" not in JOINT.as_dict()
    labelled = JOINT.replace(choice_labels=ARABIC, answer_pattern=PATTERN).as_dict()
    assert labelled["choice_labels"] == ARABIC and labelled["answer_pattern"] == PATTERN
    accuracy = MultipleChoiceAccuracy.configure(ctx().scenario_info, JOINT, ctx().deployment)
    assert repr(accuracy) == "MultipleChoiceAccuracy('multiple_choice_joint', 'none', 'helm', False)"


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        ({"choice_labels": ("A", "A")}, "adaptation.choice_labels", r"given more than once: \['A'\]"),
        ({"choice_labels": ("A", " ")}, "adaptation.choice_labels[1]", "non-blank"),
        ({"choice_labels": ("A", "B\nC")}, "adaptation.choice_labels[1]", "on one line"),
        ({"choice_labels": ("x" * 17,)}, "adaptation.choice_labels[0]", "at most 16"),
        ({"answer_pattern": "(أ|ب"}, "adaptation.answer_pattern", "is not a regular expression"),
        ({"answer_pattern": "x" * 1001}, "adaptation.answer_pattern", "1 to 1000 characters"),
    ],
)
def test_bad_labels_and_patterns_are_errors_naming_the_field(
    change: dict[str, object], path: str, message: str
) -> None:
    with pytest.raises(SpecError, match=message) as raised:
        validate_adapter_spec(JOINT.replace(**change))
    assert raised.value.path == path


def _compile(tmp_path: Path, text: str) -> list[RunSpec]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    return list(compile_spec(spec).runs)


def test_arabic_exams_takes_helms_labels_and_a_spec_may_write_its_own(tmp_path: Path) -> None:
    [run] = _compile(tmp_path, "suite: s\nruns:\n  - scenario: arabic_exams\n")
    assert run.adapter.choice_labels == ARABIC and run.adapter.answer_pattern == PATTERN
    [latin] = _compile(
        tmp_path,
        "suite: s\nruns:\n  - scenario: arabic_exams\n"
        "    adaptation: {choice_labels: [A, B, C, D, E], answer_pattern: '([A-E])'}\n",
    )  # a list of labels is one value: one run
    assert latin.adapter.choice_labels == ("A", "B", "C", "D", "E") and latin.run_id != run.run_id
    with pytest.raises(SpecError, match="not a regular expression") as raised:
        _compile(tmp_path, "suite: s\nruns:\n  - scenario: arabic_exams\n    adaptation: {answer_pattern: '(a'}\n")
    assert "spec.yaml" in str(raised.value)
