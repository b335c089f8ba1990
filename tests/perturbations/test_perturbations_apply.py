"""apply_perturbations: originals kept, ids shared, variants tagged; specs validated; defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.core.errors import SpecError, UnknownNameError
from holistic.core.registry import RegistrationError
from holistic.core.types import Instance, PerturbationSpec, Reference
from holistic.perturbations import PERTURBATIONS, apply_perturbations, create_perturbation, default_perturbations
from holistic.perturbations.base import BasePerturbation
from holistic.perturbations.contrast import ContrastSetError

INSTANCES = [
    Instance("a", "He is not here.", (Reference("no", ("correct",)),)),
    Instance("b", "Greg cannot swim.", (Reference("yes", ("correct",)),), split="valid"),
    Instance("t", "A training example.", split="train"),
]


def test_originals_first_then_one_tagged_variant_per_instance_and_spec() -> None:
    specs = [PerturbationSpec.make("lowercase"), PerturbationSpec.make("gender")]
    out = apply_perturbations(INSTANCES, specs, seed=0)
    assert out[:3] == INSTANCES
    variants = out[3:]
    assert [(v.id, v.perturbation.name) for v in variants if v.perturbation] == [
        ("a", "lowercase"),
        ("a", "gender"),
        ("b", "lowercase"),
        ("b", "gender"),
    ]
    assert len(variants) == 4  # the training instance is never perturbed
    lower = variants[0]
    assert lower.perturbation is not None
    assert lower.perturbation.robustness and not lower.perturbation.fairness
    assert variants[1].perturbation is not None and variants[1].perturbation.fairness
    assert variants[1].perturbation.args == (
        ("mode", "pronouns"),
        ("prob", 1.0),
        ("source", "male"),
        ("target", "female"),
    )
    assert variants[2].split == "valid" and variants[2].references == INSTANCES[1].references


def test_same_inputs_give_identical_results() -> None:
    specs = [PerturbationSpec.make("mild_mix"), PerturbationSpec.make("typos", {"prob": 0.2})]
    assert apply_perturbations(INSTANCES, specs, 5) == apply_perturbations(INSTANCES, specs, 5)


def test_already_perturbed_input_is_rejected() -> None:
    once = apply_perturbations(INSTANCES[:1], [PerturbationSpec.make("lowercase")], 0)
    with pytest.raises(ValueError, match="already a perturbed variant"):
        apply_perturbations(once, [PerturbationSpec.make("lowercase")], 0)


def test_unknown_perturbation_and_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'typos'"):
        create_perturbation(PerturbationSpec.make("typo"))
    with pytest.raises(SpecError, match="no argument 'probb'; did you mean 'prob'"):
        create_perturbation(PerturbationSpec.make("typos", {"probb": 0.1}))
    with pytest.raises(SpecError, match="prob must be a number between 0 and 1"):
        create_perturbation(PerturbationSpec.make("misspellings", {"prob": 3}))
    with pytest.raises(SpecError, match="source_race must be one of"):
        create_perturbation(PerturbationSpec.make("person_names", {"source_race": "martian"}))
    with pytest.raises(SpecError, match="mode must be one of"):
        create_perturbation(PerturbationSpec.make("gender", {"mode": "both"}))


def test_registry_lists_every_builtin() -> None:
    assert {
        "typos", "misspellings", "lowercase", "contractions", "expansions", "whitespace",
        "synonyms", "mild_mix", "contrast_set", "dialect", "gender", "person_names",
    } <= set(PERTURBATIONS.names())  # fmt: skip


def test_default_perturbations_follow_helm() -> None:
    names = [s.name for s in default_perturbations(["accuracy", "robustness", "fairness", "robustness"])]
    assert names == ["mild_mix", "dialect", "gender", "person_names"]
    assert default_perturbations(["accuracy"]) == []
    for spec in default_perturbations(["robustness", "fairness"]):
        create_perturbation(spec)  # every default is valid


def test_contrast_sets_become_robustness_variants_with_their_own_references() -> None:
    with_contrast = Instance(
        "r1",
        "A wonderful film.",
        (Reference("positive", ("correct",)), Reference("negative")),
        metadata={"contrast_inputs": [{"input": "A dreadful film.", "references": [
            {"output": "positive"}, {"output": "negative", "tags": ["correct"]}]}]},
    )  # fmt: skip
    without = Instance("r2", "Fine.")
    out = apply_perturbations([with_contrast, without], [PerturbationSpec.make("contrast_set")], seed=0)
    assert len(out) == 3
    variant = out[2]
    assert variant.id == "r1" and variant.input == "A dreadful film."
    assert variant.perturbation is not None and variant.perturbation.robustness
    assert [r.output for r in variant.correct_references] == ["negative"]
    bad = Instance("r3", "x", metadata={"contrast_inputs": [{"text": "oops"}]})
    with pytest.raises(ContrastSetError, match=r"r3.*needs a string 'input'"):
        apply_perturbations([bad], [PerturbationSpec.make("contrast_set")], 0)


def test_word_lists_ship_with_sources() -> None:
    from importlib import resources

    data = resources.files("holistic.perturbations.data")
    tsvs = [p for p in data.iterdir() if p.name.endswith(".tsv")]
    assert len(tsvs) >= 7
    for path in tsvs:
        assert "# source:" in path.read_text(encoding="utf-8").splitlines()[0]
    assert "Ziems" in data.joinpath("README.md").read_text(encoding="utf-8")


def test_a_third_party_perturbation_with_only_apply_is_supported() -> None:
    from dataclasses import replace

    from holistic.core.types import PerturbationDescription

    class Shout(BasePerturbation):
        name = "shout_for_test"
        category = "robustness"

        def __init__(self, marks: int = 1) -> None:
            self.marks = marks

        def apply(self, instance: Instance, seed: int) -> Instance:
            desc = PerturbationDescription(self.name, robustness=True, args=(("marks", self.marks),))
            return replace(instance, input=instance.input.upper() + "!" * self.marks, perturbation=desc)

    PERTURBATIONS.add("shout_for_test", Shout)
    out = apply_perturbations(INSTANCES[:1], [PerturbationSpec.make("shout_for_test", {"marks": 2})], seed=0)
    assert [o.input for o in out] == ["He is not here.", "HE IS NOT HERE.!!"]
    with pytest.raises(SpecError, match="shout_for_test"):
        create_perturbation(PerturbationSpec.make("shout_for_test", {"volume": 3}))


def test_a_perturbation_that_does_not_subclass_the_base_is_refused_by_name() -> None:
    class Loose:
        name = "loose_for_test"
        category = "robustness"

        def apply(self, instance: Instance, seed: int) -> Instance:
            return instance

    with pytest.raises(RegistrationError, match=r"perturbation 'loose_for_test'.*BasePerturbation"):
        PERTURBATIONS.add("loose_for_test", Loose)  # type: ignore[arg-type]
    assert "loose_for_test" not in PERTURBATIONS


def test_contrast_apply_without_items_is_an_error() -> None:
    from holistic.perturbations.contrast import ContrastSet

    with pytest.raises(ContrastSetError, match="has no contrast_inputs"):
        ContrastSet().apply(INSTANCES[0], 0)


def test_malformed_word_list_names_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from holistic.perturbations.wordlists import WordListError, read_rows

    package = tmp_path / "fake_lists_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bad.tsv").write_text("# source: test\ngood\tpair\nonly-one-column\n", encoding="utf-8")
    (package / "nosource.tsv").write_text("a\tb\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(WordListError, match=r"fake_lists_pkg/bad.tsv:3: expected 2"):
        read_rows("fake_lists_pkg", "bad.tsv", 2)
    with pytest.raises(WordListError, match="missing the '# source:' header"):
        read_rows("fake_lists_pkg", "nosource.tsv", 2)
