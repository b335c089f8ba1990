"""BLiMP (Warstadt et al., 2020): 67 paradigms of 1,000 English minimal pairs each.

Each pair is a grammatical and an ungrammatical sentence differing in one place.
As in HELM, an instance has an empty input and the two sentences as its choices
(the grammatical one correct), scored separately by log-probability
(``multiple_choice_separate_original``, instructions "Please select the grammatical
sentence."): the model is right when it gives the grammatical sentence the higher
log-probability. Accuracy is reported overall and per paradigm (``paradigm=<UID>``)
and per phenomenon (``phenomenon=<linguistics_term>``).

Data: the authors' ``data/<UID>.jsonl`` files (fields ``sentence_good``,
``sentence_bad``, ``field``, ``linguistics_term``, ``UID``, ``pairID``), from
``alexwarstadt/blimp`` at a pinned commit (CC BY 4.0). Every paradigm file present
in the mirror (or cache) folder ``blimp/`` is loaded, including files this module
does not know; only when none is present are the wanted ones fetched.
``phenomenon`` selects the paradigms of one phenomenon (HELM's argument).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, Instance, Reference
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.common import check_choice
from holistic.scenarios.loading.part_files import collect_parts, github_file, parts_report
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataNeeds

_REPO = "alexwarstadt/blimp"
_COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
_SUFFIX = ".jsonl"
ALL = "all"

PARADIGMS: dict[str, str] = {
    "adjunct_island": "island_effects",
    "anaphor_gender_agreement": "anaphor_agreement",
    "anaphor_number_agreement": "anaphor_agreement",
    "animate_subject_passive": "s-selection",
    "animate_subject_trans": "s-selection",
    "causative": "argument_structure",
    "complex_NP_island": "island_effects",
    "coordinate_structure_constraint_complex_left_branch": "island_effects",
    "coordinate_structure_constraint_object_extraction": "island_effects",
    "determiner_noun_agreement_1": "determiner_noun_agreement",
    "determiner_noun_agreement_2": "determiner_noun_agreement",
    "determiner_noun_agreement_irregular_1": "determiner_noun_agreement",
    "determiner_noun_agreement_irregular_2": "determiner_noun_agreement",
    "determiner_noun_agreement_with_adj_2": "determiner_noun_agreement",
    "determiner_noun_agreement_with_adj_irregular_1": "determiner_noun_agreement",
    "determiner_noun_agreement_with_adj_irregular_2": "determiner_noun_agreement",
    "determiner_noun_agreement_with_adjective_1": "determiner_noun_agreement",
    "distractor_agreement_relational_noun": "subject_verb_agreement",
    "distractor_agreement_relative_clause": "subject_verb_agreement",
    "drop_argument": "argument_structure",
    "ellipsis_n_bar_1": "ellipsis",
    "ellipsis_n_bar_2": "ellipsis",
    "existential_there_object_raising": "control_raising",
    "existential_there_quantifiers_1": "quantifiers",
    "existential_there_quantifiers_2": "quantifiers",
    "existential_there_subject_raising": "control_raising",
    "expletive_it_object_raising": "control_raising",
    "inchoative": "argument_structure",
    "intransitive": "argument_structure",
    "irregular_past_participle_adjectives": "irregular_forms",
    "irregular_past_participle_verbs": "irregular_forms",
    "irregular_plural_subject_verb_agreement_1": "subject_verb_agreement",
    "irregular_plural_subject_verb_agreement_2": "subject_verb_agreement",
    "left_branch_island_echo_question": "island_effects",
    "left_branch_island_simple_question": "island_effects",
    "matrix_question_npi_licensor_present": "npi_licensing",
    "npi_present_1": "npi_licensing",
    "npi_present_2": "npi_licensing",
    "only_npi_licensor_present": "npi_licensing",
    "only_npi_scope": "npi_licensing",
    "passive_1": "argument_structure",
    "passive_2": "argument_structure",
    "principle_A_c_command": "binding",
    "principle_A_case_1": "binding",
    "principle_A_case_2": "binding",
    "principle_A_domain_1": "binding",
    "principle_A_domain_2": "binding",
    "principle_A_domain_3": "binding",
    "principle_A_reconstruction": "binding",
    "regular_plural_subject_verb_agreement_1": "subject_verb_agreement",
    "regular_plural_subject_verb_agreement_2": "subject_verb_agreement",
    "sentential_negation_npi_licensor_present": "npi_licensing",
    "sentential_negation_npi_scope": "npi_licensing",
    "sentential_subject_island": "island_effects",
    "superlative_quantifiers_1": "quantifiers",
    "superlative_quantifiers_2": "quantifiers",
    "tough_vs_raising_1": "control_raising",
    "tough_vs_raising_2": "control_raising",
    "transitive": "argument_structure",
    "wh_island": "island_effects",
    "wh_questions_object_gap": "filler_gap_dependency",
    "wh_questions_subject_gap": "filler_gap_dependency",
    "wh_questions_subject_gap_long_distance": "filler_gap_dependency",
    "wh_vs_that_no_gap": "filler_gap_dependency",
    "wh_vs_that_no_gap_long_distance": "filler_gap_dependency",
    "wh_vs_that_with_gap": "filler_gap_dependency",
    "wh_vs_that_with_gap_long_distance": "filler_gap_dependency",
}
"""Paradigm (UID) -> phenomenon (``linguistics_term``), as in the authors' files."""

PHENOMENA: tuple[str, ...] = tuple(sorted(set(PARADIGMS.values())))


def paradigms_of(phenomenon: str) -> list[str]:
    """The known paradigms of ``phenomenon`` (all of them for ``all``)."""
    return sorted(p for p, term in PARADIGMS.items() if phenomenon in (ALL, term))


def read_paradigm(path: Path) -> list[Instance]:
    """The minimal pairs of one paradigm file; a malformed row names its file and line."""
    out = []
    for _, where, row in iter_located_jsonl(path):
        good, bad = require(row, "sentence_good", where), require(row, "sentence_bad", where)
        uid, term = require(row, "UID", where), require(row, "linguistics_term", where)
        pair_id = require(row, "pairID", where)
        if not all(isinstance(v, str) and v.strip() for v in (good, bad, uid, term)):
            raise DataSourceError(
                f"{where}: sentence_good, sentence_bad, UID and linguistics_term must be non-empty text"
            )
        out.append(
            Instance(
                id=f"{uid}-{pair_id}",
                input="",
                references=(Reference(good, (CORRECT_TAG,)), Reference(bad)),
                split=TEST_SPLIT,
                metadata={"paradigm": uid, "phenomenon": term, "field": str(row.get("field", ""))},
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class BLiMPScenario(BaseScenario):
    """Minimal pairs: does the model prefer the grammatical sentence?"""

    info = ScenarioInfo(
        name="blimp",
        description="BLiMP: English minimal pairs; the grammatical sentence should get the higher log-probability.",
        task="multiple_choice",
        default_adapter=prompt_format(
            method="multiple_choice_separate_original",
            instructions="Please select the grammatical sentence.",
            input_suffix="",
            max_train_instances=0,
            max_tokens=0,
            stop_sequences=None,
        ),
        main_metric="exact_match",
        metric_categories=("accuracy", "efficiency"),
        not_applicable_reasons={
            "calibration": "two sentences are compared by log-probability; there is no answer confidence",
            "robustness": "perturbing a minimal pair destroys the one contrast it tests",
            "fairness": "perturbing a minimal pair destroys the one contrast it tests",
            "bias": "nothing is generated",
            "toxicity": "nothing is generated",
        },
        tags=("language", "targeted:language"),
        breakdowns=("paradigm", "phenomenon"),
    )

    phenomenon: str = arg(ALL, enum=(ALL, *PHENOMENA))

    def __post_init__(self) -> None:
        check_choice(self.phenomenon, [ALL, *PHENOMENA], "BLiMP phenomenon")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        paradigms = paradigms_of(self.phenomenon)
        note = parts_report(data_root, "blimp", paradigms, _SUFFIX, "paradigms")
        return PlanFacts(num_instances=1000 * len(paradigms), notes=(note,) if note else (), samples_prompts=True)

    def data_needs(self) -> DataNeeds:
        files = tuple(
            github_file("blimp", f"{uid}{_SUFFIX}", _REPO, _COMMIT, f"data/{uid}{_SUFFIX}") for uid in sorted(PARADIGMS)
        )
        return DataNeeds("blimp", layouts=(files,), hint=f"https://github.com/{_REPO} (data/*.jsonl)")

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        parts = collect_parts(
            ctx, self.data_needs(), paradigms_of(self.phenomenon), suffix=_SUFFIX, accept_unknown=self.phenomenon == ALL
        )
        return [inst for path in parts.paths.values() for inst in read_paradigm(path)]
