"""The scenario keys the HELM conformance harness runs: each key's holistic scenario and HELM run
entry, the perturbed (``AUGMENTED``) and greedy keys, and HELM's names of them."""

from __future__ import annotations

from typing import Any

from holistic.helm.entry_table import FAMILY_AUGMENTATIONS as FAMILY_AUGMENTATIONS
from holistic.helm.entry_table import SINGLE_AUGMENTATIONS as SINGLE_AUGMENTATIONS

HELM_VERSION = "0.5.16"
HELM_MODEL = "holistic/smollm2-135m-instruct"
MODEL = "embedded/smollm2-135m-instruct"
CONTEXT_WINDOW = 2048

# (holistic scenario, args, HELM run entry without the model)
SCENARIOS: dict[str, tuple[str, dict[str, Any], str]] = {
    "mmlu": ("mmlu", {"subject": "anatomy"}, "mmlu:subject=anatomy,method=multiple_choice_joint"),
    "truthful_qa": ("truthful_qa", {}, "truthful_qa:task=mc_single,method=multiple_choice_joint"),
    "boolq": ("boolq", {}, "boolq"),
    "imdb": ("imdb", {}, "imdb"),
    "raft": ("raft", {"subset": "ade_corpus_v2"}, "raft:subset=ade_corpus_v2"),
    "narrative_qa": ("narrative_qa", {}, "narrative_qa"),
    "quac": ("quac", {}, "quac"),
    "hellaswag": ("hellaswag", {}, "commonsense:dataset=hellaswag,method=multiple_choice_separate_original"),
    "openbookqa": ("openbookqa", {}, "commonsense:dataset=openbookqa,method=multiple_choice_separate_calibrated"),
    "civil_comments": ("civil_comments", {"demographic": "all"}, "civil_comments:demographic=all"),
    "natural_qa_closedbook": ("natural_qa", {"mode": "closedbook"}, "natural_qa:mode=closedbook"),
    "natural_qa_openbook_longans": ("natural_qa", {"mode": "openbook_longans"}, "natural_qa:mode=openbook_longans"),
    **{
        f"msmarco_{track}": ("msmarco", {"track": track, "num_candidates": 30}, f"msmarco:track={track},valid_topk=30")
        for track in ("regular", "trec")
    },
    # HELM's core summarization runs (its official entries: temperature 0.3, device cpu), and
    # the same at temperature 0 (HELM's temperature run expander), whose predictions compare
    "cnn_dailymail": ("cnn_dailymail", {}, "summarization_cnndm:temperature=0.3,device=cpu"),
    "xsum": ("xsum", {}, "summarization_xsum:temperature=0.3,device=cpu"),
    "cnn_dailymail_greedy": ("cnn_dailymail", {}, "summarization_cnndm:temperature=0,device=cpu"),
    "xsum_greedy": ("xsum", {}, "summarization_xsum:temperature=0,device=cpu"),
}

HELM_PERTURBATION_NAMES = {
    "mild_mix": "mild_mix",
    "misspellings": "misspellings",
    "typos": "typos",
    "lowercase": "lowercase",
    "contraction": "contractions",
    "expansion": "expansions",
    "space": "whitespace",
    "dialect": "dialect",
    "gender": "gender",
    "person_name": "person_names",
}
"""HELM's perturbation names (its ``PerturbationDescription.name``) -> holistic's."""

HELM_RUN_NAMES = {name: run for name, (_, _, run) in SINGLE_AUGMENTATIONS.items() if run != name}
"""HELM's ``data_augmentation`` -> its run folder's name of it, where the two differ."""

AUGMENTED: dict[str, tuple[str, list[dict[str, Any]], list[str]]] = {}
"""Keys run with HELM's ``data_augmentation``: the unperturbed key whose files they read, holistic's
perturbations (``protocol: helm``) for HELM's, and the metric categories that add their stats."""

_ROBUSTNESS_SINGLES = ("misspelling_medium", "typo_easy", "lower", "space")
SINGLES_ON: dict[str, tuple[str, ...]] = {
    "mmlu": (*_ROBUSTNESS_SINGLES, "dialect_deterministic"),
    "boolq": (
        *_ROBUSTNESS_SINGLES,
        "contract",
        *(f"{p}_deterministic" for p in ("dialect", "gender_terms", "gender_pronouns")),
    ),
}
"""The keys run on the model with HELM's single perturbations (a joint multiple-choice and a
generation scenario, on the authors' files; every core scenario's variants and prompts of each
are compared without a model by tools.conformance.helm.perturbations). On MMLU only those
that change most inputs of HELM's sample: ``contract`` changed 4 of 40 questions there and the
gender perturbations none, so 5 instances would have no variant; BoolQ keeps every variant,
changed or not (HELM's ``PassageQuestionInput``). The person-name runs are not among them:
holistic's names are a named deviation (HELM's list is not public), whose variants count toward
no worst case and whose stats carry the deviation's tag, so HELM's stats of them have nothing of
holistic's to be compared with; their variants are compared (HELM given holistic's names in its
file format), and the fairness runs include them."""

GREEDY = {"cnn_dailymail_greedy": "cnn_dailymail", "xsum_greedy": "xsum"}
"""Keys run at temperature 0 on both sides (HELM's ``temperature=0`` run expander, holistic's
``temperature: 0``) beside their key at HELM's sampling temperature: the key they share files with.
HELM's expander keeps the run's name, so HELM runs them in a suite of their own. Their perturbed
keys (``<key>_robustness``, ``<key>_fairness``) are added below."""

SAMPLED = {"cnn_dailymail": 0.3, "xsum": 0.3}
"""Keys whose requests sample (temperature > 0): each tool draws its own completions, so their
prediction agreement and the stats of the completions are named exclusions (``SAMPLED_REASON``);
instances, prompts, request parameters and prompt token counts are compared."""


def _augment(key: str, augmentation: str, perturbations: list[dict[str, Any]], categories: list[str]) -> None:
    """Add ``<key>_<augmentation>``: ``key``'s run entry with HELM's ``data_augmentation`` beside
    holistic's ``perturbations``, reading ``key``'s files."""
    name, args, entry = SCENARIOS[key]
    SCENARIOS[f"{key}_{augmentation}"] = (
        name,
        args,
        f"{entry}{',' if ':' in entry else ':'}data_augmentation={augmentation}",
    )
    AUGMENTED[f"{key}_{augmentation}"] = (GREEDY.get(key, key), perturbations, categories)
    if key in GREEDY:  # at temperature 0 as well, on the files of the key it shares them with
        GREEDY[f"{key}_{augmentation}"] = GREEDY[key]


# HELM's robustness run (data_augmentation=robustness: its mild_mix), its fairness run (dialect with
# its SAE->AAVE dictionary, gender pronouns, person names: HELM given holistic's names in its file
# format, HELM's list is not public) and its core entries' setting, both in one run
# (data_augmentation=canonical), on every core scenario the harness runs; summarization at
# temperature 0 (HELM's core entries of it carry no data_augmentation, and sample)
for _key in [k for k in SCENARIOS if k not in SAMPLED]:
    for _augmentation, (_perturbations, _categories) in FAMILY_AUGMENTATIONS.items():
        if _augmentation != "canonical" or _key not in GREEDY:
            _augment(_key, _augmentation, _perturbations, _categories)
for _key, _singles in SINGLES_ON.items():
    for _augmentation in _singles:
        _perturbations, _category, _ = SINGLE_AUGMENTATIONS[_augmentation]
        _augment(_key, _augmentation, _perturbations, [_category])


AUGMENTED_GOLDENS = "augmented"
"""The folder (under ``--golden``) of the :data:`AUGMENTED` keys' golden files."""


def base_key(key: str) -> str:
    """The unperturbed scenario key whose files, patches and deviations ``key`` shares."""
    if key in GREEDY:
        return GREEDY[key]
    return AUGMENTED[key][0] if key in AUGMENTED else key


HELM_NAMES = {"narrative_qa": "narrativeqa", "cnn_dailymail": "summarization", "xsum": "summarization"}
"""HELM's ``Scenario.name`` where it is not holistic's (its data and instance-cache folders use it)."""

HELM_PICKLES = {"cnn_dailymail": "cnndm.pk", "xsum": "xsum.pk"}
"""HELM's preprocessed summarization files, which the harness writes for HELM from its records."""


def helm_suite(key: str) -> str:
    """HELM's suite (``runs/<suite>``) of ``key``'s run."""
    return "conformance-greedy" if key in GREEDY else "conformance"


HELM_SCENARIO_ARGS: dict[str, dict[str, Any]] = {
    **{f"msmarco_{track}": {"track": track, "valid_topk": 30} for track in ("regular", "trec")},
    # HELM's one summarization scenario, told apart by its dataset
    "cnn_dailymail": {"dataset_name": "cnn-dm"},
    "xsum": {"dataset_name": "xsum"},
}
"""HELM's scenario arguments where they are not holistic's (its instance-cache folder names them)."""


def helm_name(key: str) -> str:
    """HELM's name of the scenario of ``key``."""
    name = SCENARIOS[key][0]
    return HELM_NAMES.get(name, name)
