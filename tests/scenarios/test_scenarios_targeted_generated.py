"""HELM's generated targeted scenarios: synthetic reasoning in natural language and Dyck
languages. The same spec always gives the same problems, and each problem is right by
construction (checked here by re-deriving its answer from its text)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.dyck import PAIRS, DyckGenerator
from holistic.scenarios.dyck import generate as generate_dyck
from holistic.scenarios.registry import create_scenario
from holistic.scenarios.synthetic_reasoning_natural import ATTRIBUTES, Rule, statement
from holistic.scenarios.synthetic_reasoning_natural import generate as generate_srn

_RULE = re.compile(r"^If (?:an? )?(\w+) is (.+), then (?:the )?(\w+) is (\w+)\.$")
_SYNONYM = {word: attribute for attribute, words in ATTRIBUTES.items() for word in words}


def _derive(question: str, hard: bool) -> str:
    """The answer of a problem worked out from its text alone."""
    lines = question.split("\n")
    fact_at = lines.index("Fact:")
    subject_words = lines[fact_at + 1].removesuffix(".").split(" is ")
    stated = subject_words[1].split(" and ")
    attributes = [_SYNONYM[w] for w in stated] if hard else stated
    consequents = []
    for line in lines[:fact_at]:
        match = _RULE.match(line)
        assert match is not None, line
        joiner = " and " if " and " in match.group(2) else " or "
        condition = match.group(2).split(joiner)
        consequent = match.group(4)
        if consequent in attributes:
            continue
        holds = set(condition) <= set(attributes) if joiner == " and " else bool(set(condition) & set(attributes))
        if holds:
            consequents.append(consequent)
    about = question.rsplit("about ", 1)[1].removesuffix(":")
    if not consequents:
        return "Nothing."
    return f"{about[0].upper() + about[1:]} is {' and '.join(consequents)}."


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_srn_problems_follow_from_their_rules(difficulty: str) -> None:
    instances = generate_srn(difficulty)
    assert Counter(i.split for i in instances) == {"train": 1000, "valid": 5000, "test": 5000}
    for inst in instances[:400] + instances[-400:]:
        assert inst.references[0].output == _derive(inst.input, difficulty == "hard"), inst.input
    nothing = sum(i.references[0].output == "Nothing." for i in instances) / len(instances)
    assert 0.05 < nothing < 0.3  # a fact with no consequence survives one redraw in ten


def test_srn_difficulty_levels_differ_as_helm_defines_them() -> None:
    easy, medium, hard = (generate_srn(d)[:300] for d in ("easy", "medium", "hard"))
    # easy: rules always name the subject itself; medium/hard: sometimes its category.
    categories = ("If an animal is", "If a plant is", "If person is")
    assert not any(c in i.input for i in easy for c in categories)
    assert any(c in i.input for i in medium for c in categories)
    # hard states the fact with synonyms of the attributes; medium never does.

    def facts(xs: list[Instance]) -> list[str]:
        return [i.input.split("Fact:\n")[1].split("\n")[0] for i in xs]

    generic = set(ATTRIBUTES)
    assert all(set(f.removesuffix(".").split(" is ")[1].split(" and ")) <= generic for f in facts(medium))
    assert any(not set(f.removesuffix(".").split(" is ")[1].split(" and ")) <= generic for f in facts(hard))


def test_srn_first_problem_is_helm_seed_42_text() -> None:
    first = generate_srn("medium")[5000 + 1000]  # the first test problem
    assert first.split == "test" and first.id == "srn-medium-6000"
    assert first.input == (
        "If Dan is young, then Dan is sad.\n"
        "If Dan is scary, then Dan is hot.\n"
        "If person is purple or small, then person is beautiful.\n"
        "If Dan is clean, then Dan is green.\n"
        "If Dan is bad, then Dan is soft.\n"
        "Fact:\n"
        "Dan is small and cold.\n"
        "The following can be determined about Dan:"
    )
    assert first.references[0].output == "Dan is beautiful."


def test_srn_sentences() -> None:
    assert str(Rule("animal", "animal", ("old", "cold"), "or", "good")) == (
        "If an animal is old or cold, then the animal is good."
    )
    assert str(Rule("cow", "animal", ("hot",), "and", "purple")) == "If a cow is hot, then the cow is purple."
    assert statement("Carol", "person", ("red",)) == "Carol is red."
    assert statement("cow", "animal", ()) == "Nothing."


def test_srn_spec_is_reproducible_and_seeded(tmp_path: object) -> None:
    ctx = ScenarioContext()
    spec = ScenarioSpec.make("synthetic_reasoning_natural", {"difficulty": "hard"})
    a = create_scenario(spec).get_instances(ctx)
    b = create_scenario(spec).get_instances(ctx)
    c = create_scenario(
        ScenarioSpec.make("synthetic_reasoning_natural", {"difficulty": "hard", "seed": 7})
    ).get_instances(ctx)
    assert [i.input for i in a[:50]] == [i.input for i in b[:50]]
    assert [i.input for i in a[:50]] != [i.input for i in c[:50]]
    with pytest.raises(ValueError, match=r"unknown synthetic_reasoning_natural difficulty 'hrad'; did you mean 'hard'"):
        create_scenario(ScenarioSpec.make("synthetic_reasoning_natural", {"difficulty": "hrad"}))


def _closes(prefix: str, answer: str, pairs: int) -> bool:
    """``prefix + answer`` is a well-nested word over the first ``pairs`` bracket pairs."""
    opening = {o: c for o, c in PAIRS[:pairs]}
    stack: list[str] = []
    for symbol in (prefix + " " + answer).split():
        if symbol in opening:
            stack.append(opening[symbol])
        elif not stack or stack.pop() != symbol:
            return False
    return not stack


@pytest.mark.parametrize("pairs", [2, 3, 4])
def test_dyck_instances_as_helm_generates_them(pairs: int) -> None:
    instances = generate_dyck(pairs)
    train = [i for i in instances if i.split == "train"]
    test = [i for i in instances if i.split == "test"]
    assert (len(train), len(test)) == (3, 500)
    assert len({i.input for i in instances}) == 503  # no input twice, none shared by train and test
    allowed = {s for pair in PAIRS[:pairs] for s in pair}
    for inst in instances:
        answer = inst.references[0].output
        assert answer.startswith(" ") and 1 <= len(answer.split()) <= 3
        assert set(inst.input.split()) <= allowed
        assert _closes(inst.input, answer, pairs)
        assert not _closes(inst.input, "", pairs)
    # Prefix + closing is at most the generated word (train words 4..50, test words 52..100).

    def size(i: Instance) -> int:
        return len(i.input.split()) + len(i.references[0].output.split())

    assert all(size(i) <= 50 for i in train) and all(size(i) <= 100 for i in test)
    assert sum(size(i) for i in test) / len(test) > 40


def test_dyck_prefix_and_closing() -> None:
    generator = DyckGenerator(3, 0)
    word = ["(", "[", "{", "}", "]", ")", "{", "}"]
    assert generator.prefix_leaving_open(word, 1) == ["(", "[", "{", "}", "]", ")", "{"]
    assert generator.prefix_leaving_open(word, 2) == ["(", "[", "{", "}"]
    assert generator.prefix_leaving_open(word, 3) == ["(", "[", "{"]
    assert generator.closing_of(["(", "[", "{"]) == ["}", "]", ")"]
    assert generate_dyck(2, 1, 5, seed=3) == generate_dyck(2, 1, 5, seed=3)
    with pytest.raises(ValueError, match=r"num_parenthesis_pairs must be 1\.\.4"):
        create_scenario(ScenarioSpec.make("dyck_language", {"num_parenthesis_pairs": 5}))


def _recursive_word(generator: DyckGenerator, depth: int = 0, limit: int = 100) -> list[str]:
    """HELM's recursive formulation of the grammar, written out here to check the stack-based one."""
    if depth > 100:
        return []
    draw = generator.rng.random()
    if draw < 0.5:
        pair = int(generator.pair_rng.randint(generator.num_pairs))
        out = [generator.opening[pair], *_recursive_word(generator, depth + 1), generator.closing[pair]]
    elif draw < 0.75:
        out = _recursive_word(generator, depth) + _recursive_word(generator, depth)
    else:
        out = []
    return out if len(out) <= limit else []


@pytest.mark.parametrize(("pairs", "limit"), [(2, 50), (4, 100)])
def test_dyck_words_match_the_recursive_grammar_draw_for_draw(pairs: int, limit: int) -> None:
    stacked, recursive = DyckGenerator(pairs, 42), DyckGenerator(pairs, 42)
    for _ in range(300):
        assert stacked.word(limit) == _recursive_word(recursive, 0, limit)


def test_dyck_first_test_word_with_helm_seed() -> None:
    first = generate_dyck(3)[3]
    assert first.split == "test" and first.input.startswith("( [ ( ) ( { { ( ( { { } } ) ) } { [ ( { } ( [ ] )")
    assert first.references[0].output == " ) ] )"
