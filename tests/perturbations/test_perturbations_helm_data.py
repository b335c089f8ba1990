"""HELM's misspelling table and the default robustness set."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from holistic.core.types import Instance, PerturbationSpec
from holistic.perturbations import apply_perturbations, default_perturbations
from holistic.perturbations.apply import NoVariantsError
from holistic.perturbations.base import PerturbRandom
from holistic.perturbations.misspellings import Misspellings, misspellable_words, misspelling_table

TABLE_SHA256 = "2f8e118895e52426bacd0cd32dfd0c14708e845c910d129f2d03571fe9f75c8b"


def test_misspelling_table_is_helms_full_table() -> None:
    raw = resources.files("holistic.perturbations.data").joinpath("correct_to_misspelling.json").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == TABLE_SHA256
    table = misspelling_table()
    assert len(table) == 6523
    assert sum(len(v) for v in table.values()) == 9053
    assert table["abandoned"] == ("abondoned", "abandonned")


def test_matching_is_case_sensitive_whole_word_as_helm() -> None:
    words = misspellable_words("Already the new product is not available; a lot of them abandoned it.")
    assert words == ["Already", "the", "not", "available", "a lot", "abandoned"]
    assert misspellable_words("ALREADY") == []  # keys are matched as listed


def test_every_listed_word_is_misspelt_at_probability_one_keeping_case() -> None:
    text = "Already, the new product is not available."
    out = Misspellings(prob=1.0).perturb(text, PerturbRandom(1, "misspellings", "x"))
    first, rest = out.split(",", 1)
    assert first in {"Aready", "Alreayd", "Allready"}
    assert "available" not in rest and " the " not in rest and rest.endswith(".")


def test_contrast_sets_are_not_a_silent_default() -> None:
    assert "contrast_set" not in {spec.name for spec in default_perturbations(["robustness"])}
    with pytest.raises(NoVariantsError, match=r"contrast_set.*contrast_inputs"):
        apply_perturbations([Instance("a", "text")], [PerturbationSpec.make("contrast_set")], seed=1)


def test_helms_passage_question_scenarios_keep_unchanged_variants() -> None:
    """HELM's DataAugmenter compares a plain Input with a PassageQuestionInput, so on those
    scenarios (BoolQ, NarrativeQA, NaturalQuestions with a passage, CivilComments) it keeps
    a variant whose text did not change; elsewhere it drops it."""
    from holistic.helm.proofs import keeps_unchanged_variants
    from holistic.perturbations.helm_base import with_helm_ids

    (original,) = with_helm_ids([Instance("a", "no pronoun here", split="valid")])
    specs = [PerturbationSpec.make("lowercase")]  # the text is lower-case already
    dropped = apply_perturbations([original], specs, seed=0, protocol="helm", offline=True)
    assert [i.perturbation for i in dropped] == [None]
    kept = apply_perturbations([original], specs, seed=0, protocol="helm", offline=True, keep_unchanged=True)
    assert [i.input for i in kept] == ["no pronoun here", "no pronoun here"]
    assert kept[1].perturbation is not None and kept[1].perturbation.name == "lowercase"
    flags = {
        (name, mode): keeps_unchanged_variants(name, {"mode": mode} if mode else {})
        for name, mode in [
            ("boolq", None),
            ("civil_comments", None),
            ("narrative_qa", None),
            ("natural_qa", "openbook_longans"),
            ("natural_qa", "closedbook"),
            ("truthful_qa", None),
            ("quac", None),
        ]
    }
    assert [k for k, v in flags.items() if v] == [
        ("boolq", None),
        ("civil_comments", None),
        ("narrative_qa", None),
        ("natural_qa", "openbook_longans"),
    ]
