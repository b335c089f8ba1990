"""Each perturbation on fixed sentences: golden outputs, the same in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from holistic.core.types import Instance, PerturbationSpec, Reference
from holistic.perturbations import apply_perturbations

S1 = "The quick brown fox is not able to jump because his brother cannot see. I am sure Greg will help the old man."
S2 = "I'm sure they don't know. It's fine, isn't it? DON'T worry."
SEED = 7

GOLDEN = [
    (
        "s1",
        "typos",
        {},
        "The aiick brown fox is nof able to jump because his brother cannot see. I am sure Greg will help thd old man.",
    ),
    (
        "s1",
        "misspellings",
        {"prob": 1.0},
        "Teh quick brown fox is nto able to jump becasue his brother cannnot see. I am sure Greg wille halp teh old man.",
    ),
    (
        "s1",
        "lowercase",
        {},
        "the quick brown fox is not able to jump because his brother cannot see. i am sure greg will help the old man.",
    ),
    (
        "s1",
        "contractions",
        {},
        "The quick brown fox isn't able to jump because his brother can't see. I'm sure Greg will help the old man.",
    ),
    (
        "s1",
        "whitespace",
        {},
        "The quick  brown   fox   is  not able  to  jump  because  his brother  cannot  see.  I   am sure Greg will  help the old   man.",
    ),
    (
        "s1",
        "synonyms",
        {},
        "The quick brown fox is not able to jump because his brother cannot observe. I am sure Greg will aid the elderly man.",
    ),
    (
        "s1",
        "mild_mix",
        {},
        "the quick   brown fox   isn't  able to  jump  because his brother  can't  see. i'm   sure greg will  help   the old   man.",
    ),
    (
        "s1",
        "dialect",
        {},
        "Da quick brown fox ain't able to jump cuz his brotha cannot see. I am sho Greg will help da old man.",
    ),
    (
        "s1",
        "gender",
        {},
        "The quick brown fox is not able to jump because her brother cannot see. I am sure Greg will help the old man.",
    ),
    (
        "s1",
        "gender",
        {"mode": "terms"},
        "The quick brown fox is not able to jump because his sister cannot see. I am sure Greg will help the old woman.",
    ),
    (
        "s1",
        "person_names",
        {},
        "The quick brown fox is not able to jump because his brother cannot see. I am sure DeShawn will help the old man.",
    ),
    ("s2", "expansions", {}, "I am sure they do not know. It is fine, isn't it? DO NOT worry."),
    ("s2", "contractions", {}, S2),
    ("s2", "lowercase", {}, "i'm sure they don't know. it's fine, isn't it? don't worry."),
    ("s2", "dialect", {}, "I'm sho dey dunno. It's fine, ain't it? DON'T worry."),
    ("s2", "whitespace", {}, "I'm  sure   they don't  know. It's fine,  isn't   it?   DON'T worry."),
]


def _instances() -> dict[str, Instance]:
    return {
        "s1": Instance("s1", S1, (Reference("his brother", ("correct",)),)),
        "s2": Instance("s2", S2),
    }


def _run(name: str, args: dict[str, Any], instance_id: str) -> Instance:
    out = apply_perturbations([_instances()[instance_id]], [PerturbationSpec.make(name, args)], seed=SEED)
    assert len(out) == 2
    return out[1]


@pytest.mark.parametrize(("instance_id", "name", "args", "expected"), GOLDEN)
def test_golden_output(instance_id: str, name: str, args: dict[str, Any], expected: str) -> None:
    variant = _run(name, args, instance_id)
    assert variant.input == expected
    assert variant.perturbation is not None and variant.perturbation.name == name


def test_golden_outputs_identical_in_a_fresh_process_with_another_hash_seed() -> None:
    script = (
        "import json, sys\n"
        "from holistic.core.types import Instance, PerturbationSpec\n"
        "from holistic.perturbations import apply_perturbations\n"
        "cases = json.loads(sys.stdin.read())\n"
        "out = []\n"
        "for iid, text, name, args in cases:\n"
        "    v = apply_perturbations([Instance(iid, text)], [PerturbationSpec.make(name, args)], seed=7)[1]\n"
        "    out.append(v.input)\n"
        "print(json.dumps(out))\n"
    )
    texts = {"s1": S1, "s2": S2}
    cases = [[iid, texts[iid], name, args] for iid, name, args, _ in GOLDEN]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(cases), capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(proc.stdout) == [expected for *_, expected in GOLDEN]


def test_a_different_seed_gives_different_random_choices() -> None:
    inst = _instances()["s1"]
    specs = [PerturbationSpec.make("typos", {"prob": 0.3})]
    a = apply_perturbations([inst], specs, seed=1)[1].input
    b = apply_perturbations([inst], specs, seed=2)[1].input
    assert a != b


def test_fairness_perturbations_rewrite_references_consistently() -> None:
    inst = Instance("q", "Greg lost his keys. Who lost them?", (Reference("Greg, his keys", ("correct",)),))
    names = apply_perturbations([inst], [PerturbationSpec.make("person_names")], seed=3)[1]
    new_name = names.input.split()[0]
    assert new_name != "Greg"
    assert names.references[0].output.startswith(new_name + ",")
    assert names.references[0].tags == ("correct",)
    gender = apply_perturbations([inst], [PerturbationSpec.make("gender")], seed=3)[1]
    assert gender.references[0].output == "Greg, her keys"
    typos = apply_perturbations([inst], [PerturbationSpec.make("typos", {"prob": 1.0})], seed=3)[1]
    assert typos.references == inst.references  # robustness never touches the answer


def test_person_names_can_swap_gender_lists_and_female_to_male_pronouns() -> None:
    inst = Instance("q", "Emily said she would call her sister.")
    out = apply_perturbations(
        [inst],
        [
            PerturbationSpec.make("person_names", {"target_race": "hispanic", "target_gender": "male"}),
            PerturbationSpec.make("gender", {"source": "female", "target": "male"}),
        ],
        seed=0,
    )
    from holistic.perturbations.person_names import names_by_group

    assert out[1].input.split()[0] in names_by_group()[("hispanic", "male")]
    assert out[2].input == "Emily said he would call his sister."


def test_mild_mix_composes_lowercase_contractions_and_spacing() -> None:
    text = "We are sure that it is NOT broken."
    out = apply_perturbations([Instance("m", text)], [PerturbationSpec.make("mild_mix", {"misspelling_prob": 0.0})], 0)[
        1
    ]
    assert " ".join(out.input.split()) == "we're sure that it's not broken."
    assert out.perturbation is not None and out.perturbation.robustness and not out.perturbation.fairness


def test_last_names_swap_across_races_consistently() -> None:
    from holistic.perturbations.person_names import last_names_by_race

    inst = Instance("q", "Ms. Schmidt called Mr. Schmidt.", (Reference("Schmidt", ("correct",)),))
    spec = PerturbationSpec.make("person_names", {"name_type": "last_name", "target_race": "hispanic"})
    out = apply_perturbations([inst], [spec], seed=1)[1]
    first, second = out.input.split()[1].rstrip("."), out.input.split()[-1].rstrip(".")
    assert first == second == out.references[0].output
    assert first in last_names_by_race()["hispanic"]
