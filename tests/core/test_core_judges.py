"""Verdict rules: what a judge's answer becomes, and what is refused."""

from __future__ import annotations

import pytest

from holistic.core.judges import VerdictError, VerdictRule, template_field_problem

SCHEMA = {"type": "object", "required": ["score"], "properties": {"score": {"type": "number"}}}


def test_a_json_verdict_is_read_from_the_outermost_object_and_checked_against_the_schema() -> None:
    rule = VerdictRule.from_mapping({"json_schema": SCHEMA, "score": "score"})
    assert rule.problem() is None
    fields, score = rule.read('Sure. {"reasoning": "fine", "score": 0.5} Hope that helps.')
    assert score == 0.5 and fields["reasoning"] == "fine"
    with pytest.raises(VerdictError, match="does not fit the schema"):
        rule.read('{"score": "high"}')
    with pytest.raises(VerdictError, match="no JSON object"):
        rule.read("I would give it a 1.")


def test_regex_patterns_all_match_and_values_map_words_to_scores() -> None:
    rule = VerdictRule.from_mapping(
        {
            "regex": [r"(?is)<reasoning>(?P<reasoning>.*?)</reasoning>", r"(?i)<score>\s*(?P<score>\w+)"],
            "score": "score",
            "values": {"yes": 1, "no": 0},
        }
    )
    assert rule.problem() is None
    fields, score = rule.read("<SCORE> Yes </score><reasoning>it complied</reasoning>")
    assert score == 1.0 and fields["reasoning"] == "it complied"
    with pytest.raises(VerdictError, match="does not match"):
        rule.read("<score>yes</score>")  # no reasoning: never half-read
    with pytest.raises(VerdictError, match="none of"):
        rule.read("<reasoning>x</reasoning><score>maybe</score>")


def test_a_score_outside_the_declared_range_is_unparseable_not_clipped() -> None:
    rule = VerdictRule.from_mapping({"regex": r"(?P<score>-?\d+)", "minimum": 0, "maximum": 1})
    assert rule.read("1")[1] == 1.0
    with pytest.raises(VerdictError, match="outside"):
        rule.read("7")


def test_the_rule_hash_changes_with_the_rule() -> None:
    a = VerdictRule.from_mapping({"regex": r"(?P<score>\d)"})
    b = VerdictRule.from_mapping({"regex": r"(?P<score>\d)", "values": {"1": 1}})
    assert a.rule_hash != b.rule_hash
    assert a.rule_hash == VerdictRule.from_mapping({"regex": [r"(?P<score>\d)"]}).rule_hash


def test_a_template_may_use_only_what_a_judge_is_given() -> None:
    assert template_field_problem("{{ prompt }} {{ completion }} {{ metadata.label }}", ["label"]) is None
    problem = template_field_problem("{{ metadata['labl'] }}", ["label"])
    assert problem is not None and "did you mean 'label'" in problem
    problem = template_field_problem("{{ completon }}", None)
    assert problem is not None and "did you mean 'completion'" in problem
