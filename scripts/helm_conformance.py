#!/usr/bin/env python
"""Run HELM itself and holistic on the same scenarios, instances and model, and compare.

HELM (crfm-helm 0.5.16) is installed by this script in its own virtual environment
(``~/.cache/holistic/peers/helm`` by default) — it is never a dependency of holistic.
Both sides evaluate the embedded SmolLM2-135M-Instruct: holistic through its
``embedded`` deployment (transformers engine), HELM through its ``HuggingFaceClient``
on the same weights as a local Hugging Face directory (the safetensors checkpoint
holistic converts the GGUF into once), with ``apply_chat_template: false`` and the
same context window (2048 tokens).

Instances: HELM always runs its own loader. The authors' files are put where HELM's
download would put them (``scenarios/<name>/data/``; HELM's ``ensure_file_downloaded``
skips a target that exists): MMLU, TruthfulQA (``data/v1/TruthfulQA.csv`` at the commit
HELM pins) and RAFT from the data root as they are; BoolQ and IMDB in the authors'
format written from the copies that are here. Both tools read the same bytes, and the
harness compares every instance HELM's loader made with holistic's (input, references,
split), position by position. What cannot be given to HELM as its download would is
listed in :data:`DEVIATIONS` and in the report.

Per scenario it reports: instances identical (every instance HELM's loader made, n of
n), prompts identical (n of n), request parameters identical, the evaluated instance
sample identical, per-instance prediction agreement, and the absolute difference of
every metric both report (per split), against the targets (every instance and prompt,
>= 99% of predictions, |delta| <= 0.005; exit 1 when one is missed). For separate
scoring (HellaSwag, OpenBookQA: one request per choice, HELM echoing the choice in its
prompt) the prompt compared is holistic's prompt followed by the scored continuation,
and the prediction is the choice picked (``predicted_index``). For ranking (MS MARCO: one
generated answer per passage) the instances are compared with each passage's relevance and
first-stage rank, and the ranking stats also by scoring HELM's own answers with holistic's
ranking metric (``rescored_abs_delta``, held to the same target). The keys in
:data:`AUGMENTED` run HELM's ``data_augmentation`` (robustness: ``mild_mix``; fairness: dialect,
gender pronouns, person names; ``canonical``: both in one run, as HELM's core entries do; and on
MMLU and BoolQ each single perturbation of :data:`SINGLE_AUGMENTATIONS`) beside holistic's
perturbations, and compare perturbed prompts and worst-case stats too.
CNN/DailyMail and XSum: HELM unpickles preprocessed files of its own; the harness writes
the authors' files for holistic and, from the same records, that pickle for HELM
(:data:`DEVIATIONS`). HELM's core entries sample (temperature 0.3), so their completions and
stats are named exclusions (:data:`SAMPLED`); the :data:`GREEDY` keys run the same at
temperature 0 and compare them. HELM's summarization extra is not installable here: its
process runs without it (:data:`_HELM_MAIN`), and what that leaves uncompared is listed in
:data:`NOT_COMPARED`.
A shared metric that differs because of HELM's local client rather than its protocol
is listed under ``excluded_metrics`` with both values and the reason (``EXCLUDED``),
never dropped silently; the stats only one side reports are listed as well. ``--golden DIR`` also writes
golden files made from HELM's output (the digest of every instance, prompts, request
parameters, completions, per-instance stats for the first ``--golden-instances``
instances) that the tests check
holistic against without installing HELM; for a key of :data:`AUGMENTED`, ``DIR/augmented/
<key>.json.gz`` holds HELM's whole perturbed run instead (every original's and variant's
request and completions, their per-instance stats, and the run's perturbed, original and
worst-case stats: :func:`write_augmented_golden`).

    python scripts/helm_conformance.py --data-root DATA --max-eval-instances 10 \\
        --golden tests/conformance --report conformance.json

The machine's cores are shared: runs are small and ``nice``d.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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

HELM_FAIRNESS = [
    {"name": "dialect", "args": {"prob": 1.0}},
    {"name": "gender", "args": {"mode": "pronouns", "prob": 1.0}},
    {"name": "person_names", "args": {"prob": 1.0}},
]
"""HELM's ``data_augmentation=fairness`` as holistic's perturbations (``protocol: helm``)."""

FAMILY_AUGMENTATIONS: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "robustness": ([{"name": "mild_mix"}], ["robustness"]),
    "fairness": (HELM_FAIRNESS, ["fairness"]),
    # HELM's core setting: its robustness and fairness perturbations in one DataAugmenter
    "canonical": ([{"name": "mild_mix"}, *HELM_FAIRNESS], ["robustness", "fairness"]),
}
"""HELM's ``data_augmentation`` of a whole family (or both) -> holistic's perturbations for it
(``protocol: helm``) and the metric categories whose worst cases it enters."""

SINGLE_AUGMENTATIONS: dict[str, tuple[list[dict[str, Any]], str, str]] = {
    "misspelling_medium": ([{"name": "misspellings", "args": {"prob": 0.2}}], "robustness", "misspelling0.20"),
    "typo_easy": ([{"name": "typos", "args": {"prob": 0.1}}], "robustness", "typo0.1"),
    "lower": ([{"name": "lowercase"}], "robustness", "lower"),
    "contract": ([{"name": "contractions"}, {"name": "expansions"}], "robustness", "contract"),
    "space": ([{"name": "whitespace", "args": {"max_spaces": 3}}], "robustness", "space3"),
    "dialect_deterministic": (
        [{"name": "dialect", "args": {"prob": 1.0}}],
        "fairness",
        "dialect_prob=1.0_source=SAE_target=AAVE",
    ),
    "gender_terms_deterministic": (
        [{"name": "gender", "args": {"mode": "terms", "prob": 1.0}}],
        "fairness",
        "gender_terms_prob=1.0_source=male_target=female",
    ),
    "gender_pronouns_deterministic": (
        [{"name": "gender", "args": {"mode": "pronouns", "prob": 1.0}}],
        "fairness",
        "gender_pronouns_prob=1.0_source=male_target=female",
    ),
    "person_name_first_deterministic": (
        [{"name": "person_names", "args": {"prob": 1.0}}],
        "fairness",
        "person_name_first_prob=1.0_source=white_target=black_preserve_gender=True",
    ),
    "person_name_last_deterministic": (
        [
            {
                "name": "person_names",
                "args": {
                    "prob": 1.0,
                    "source_race": "white",
                    "target_race": "hispanic",
                    "name_type": "last_name",
                    "preserve_gender": False,
                },
            }
        ],
        "fairness",
        "person_name_last_prob=1.0_source=white_target=hispanic",
    ),
}
"""HELM's ``data_augmentation`` of one perturbation -> holistic's perturbations for it (``protocol:
helm``), the metric category whose worst case it enters, and the name HELM's run folder carries
(``PERTURBATION_SPECS_DICT``'s inner key). ``synonym`` is absent: it cannot run here
(``helm_perturbation_conformance.NOT_RUN``)."""

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
are compared without a model by scripts/helm_perturbation_conformance.py). On MMLU only those
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


PYTREC_EVAL = "pytrec-eval-terrier==0.5.11"
"""The trec_eval bindings HELM's ranking metric imports (module ``pytrec_eval``): HELM's
``ranking`` extra pins ``pytrec_eval==0.5``, whose build downloads trec_eval's source from
GitHub, so the harness gives HELM this fork's wheel (the same module and measures, trec_eval
bundled) in a folder of its own on HELM's path (see :data:`DEVIATIONS`)."""


DEVIATIONS: dict[str, list[str]] = {
    "boolq": [
        "The authors' Google release (train.jsonl 9,427 / dev.jsonl 3,270) is not here; its rows are written "
        "from the SuperGLUE val.jsonl (the same 3,270 dev questions; the passage's 'Title -- ' prefix is the "
        "title field): the 100 questions holistic holds out as its in-context pool are the train file, the "
        "other 3,170 the dev file. Both tools read those same bytes.",
        "HELM's BoolQ contrast set (allenai/contrast-sets) is not here: HELM is given an empty one, so no "
        "instance carries contrast inputs (they are read only by contrast-set perturbations).",
    ],
    "imdb": [
        "The authors' aclImdb archive is not here; an aclImdb tree is written from imdb_1000.txt (TextFooler's "
        "lower-cased, tokenised copy of 1,000 test reviews): 50 reviews (holistic's held-out pool) are train/, "
        "the rest test/, one review per <n>_<rating>.txt file (rating 10 positive, 1 negative). Both tools "
        "read those same bytes.",
        "HELM 0.5.16 lists each folder in a pinned order it downloads (imdb_scenario_pinned_file_order.json, "
        "the os.listdir order of the official HELM runs' machine), which cannot be fetched here and names the "
        "full archive's files; holistic reads the files in number order, and the harness gives HELM a pinned "
        "order file in that same order.",
        "HELM's IMDB contrast set (allenai/contrast-sets) is not here: HELM is given empty ones, so no review "
        "moves from train to valid as a contrast original.",
    ],
    "raft": [
        "HELM reads ought/raft through datasets.load_dataset (the Hub is not reachable here); the harness "
        "answers that call with the RAFT authors' train.csv as a datasets.Dataset whose Label is a "
        "ClassLabel of 'Unlabeled' plus task.json's labels (the Hub dataset's features), and HELM's own "
        "loader does the rest (split, field order, label names). HELM's prompt_construction_settings.json "
        "(a Dropbox download) is written from holistic's copy of the RAFT authors' instructions.",
    ],
    **{
        key: [
            "The authors' v1.0 dev shards (nq-dev-0{0..4}.jsonl.gz) are not here: the harness writes five small "
            "ones in their full format, HTML bytes and byte spans included (see _write_natural_qa), and both "
            "tools read those bytes."
        ]
        for key in ("natural_qa_closedbook", "natural_qa_openbook_longans")
    },
    "civil_comments": [
        "WILDS's all_data_with_identities.csv is not here: the harness writes a small one in its format (see "
        "_write_civil_comments) and both tools read those bytes.",
    ],
    "narrative_qa": [
        "The authors' files (deepmind/narrativeqa) are not here: the harness writes a small qaps.csv and "
        "third_party/wikipedia/summaries.csv in their format (see _write_narrative_qa) and both tools read "
        "those bytes.",
    ],
    **{
        f"msmarco_{track}": [
            "HELM's MS MARCO files (its CodaLab copies of the cleaned passage collection and the BM25 top-k "
            "lists, the MS MARCO training and dev queries and judgements, TREC DL 2019's) are not here: the "
            "harness writes small ones in their formats (see _write_msmarco) and both tools read those bytes.",
            "HELM's ranking metric imports pytrec_eval, which HELM's 'ranking' extra pins at 0.5, a source "
            "release whose build downloads trec_eval from GitHub; HELM is given the wheel of its fork "
            f"{PYTREC_EVAL} (the same module, measures and trec_eval code) on its path instead.",
            "HELM's BasicReferenceMetric also reports exact_match, predicted_index and max_prob on ranking "
            "runs, from the generated answer's log-probability divided by the passage's token count (a "
            "choice-scoring formula that does not read the answer); holistic does not report them, and "
            "they are listed as HELM's only. So are HELM's per-passage ref<i>_rank stats.",
        ]
        for track in ("regular", "trec")
    },
    **{
        key: [
            f"HELM 0.5.16 reads its own preprocessed pickle ({HELM_PICKLES[key]}, downloaded from HELM's bucket) "
            "instead of the authors' files; holistic never loads a pickle (unpickling runs code). The harness "
            f"writes small files in the authors' format ({what}) for holistic and, from the same records, the "
            f"pickle for HELM: a dict of 'train', 'validation' and 'test' lists of rows with {columns}, the rows "
            f"of the {hub} conversion of those files ({conversion}), in the authors' list order. That HELM's "
            "own pickle holds exactly those rows, in that order, is taken, not checked: it cannot be had here "
            "and is not read."
        ]
        for key, what, columns, hub, conversion in (
            (
                "cnn_dailymail",
                "url_lists/all_{train,val,test}.txt and {cnn,dailymail}/stories/<sha1(url)>.story, see "
                "_write_cnn_dailymail",
                "'article', 'highlights' and 'id' (HELM reads the first two)",
                "abisee/cnn_dailymail 3.0.0",
                "each line stripped, ' .' added to a line without a sentence end, the paragraphs joined with "
                "spaces, the highlights with line breaks",
            ),
            (
                "xsum",
                "bbc-summary-data/<id>.summary and XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json, see _write_xsum",
                "'document', 'summary' and 'id' (HELM reads the first two)",
                "EdinburghNLP/xsum",
                "blank and share-button lines left out, RESTBODY the document, FIRST-SENTENCE the summary",
            ),
        )
    },
}
"""What the harness cannot give HELM exactly as HELM's downloads would: named, never silent."""

NOT_COMPARED: dict[str, list[str]] = {
    key: [
        "summarization_coverage, summarization_density, summarization_compression: HELM computes them with "
        "summ_eval's DataStatsMetric on spaCy en_core_web_sm tokens (its 'summarization' extra), neither of "
        "which can be installed here, so HELM's process runs without them (see _HELM_MAIN) and reports none; "
        "holistic's are listed under holistic_only.",
        "SummaC and BERTScore: HELM computes them only on a GPU device; its core run entries (and these) "
        "are device=cpu, so neither tool reports them.",
        "HumanEval-* and QAFactEval: HELM looks them up by deployment and exact summary among the models of "
        "its own runs, so a model HELM never ran has none; the harness skips their downloads.",
    ]
    for key in ("cnn_dailymail", "xsum")
}
"""HELM stats of a scenario that no run here can compare, and why (in the report)."""


# ---------------------------------------------------------------------------
# HELM's environment
# ---------------------------------------------------------------------------


def helm_venv(path: Path) -> Path:
    """The Python of a virtual environment with crfm-helm installed (created on first use)."""
    python = path / "bin" / "python"
    if python.is_file() and _has_helm(python):
        return python
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    # HELM pins torchvision; the CPU torch it runs on is kept and torchvision removed after.
    subprocess.run(["nice", *pip, "torch==2.13.0", "torchvision==0.28.0", f"crfm-helm=={HELM_VERSION}"], check=True)
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "torchvision"], check=False)
    if not _has_helm(python):
        raise SystemExit(f"crfm-helm {HELM_VERSION} did not install into {path}")
    return python


def _has_helm(python: Path) -> bool:
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('crfm-helm'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.returncode == 0 and probe.stdout.strip() == HELM_VERSION


def helm_ranking_extra(helm_python: Path) -> Path:
    """A folder holding :data:`PYTREC_EVAL` for HELM's process (installed there on first use,
    never into HELM's environment)."""
    target = helm_python.parents[2] / "helm_ranking"
    if not (target / "pytrec_eval").is_dir():
        pip = ["nice", str(helm_python), "-m", "pip", "install", "-q", "--only-binary", ":all:", "--no-deps"]
        subprocess.run([*pip, "--target", str(target), PYTREC_EVAL], check=True)
    return target


def write_prod_env(prod_env: Path, model_dir: Path) -> None:
    """HELM's configuration for the local model: deployment, tokenizer, metadata."""
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_deployments.yaml").write_text(
        textwrap.dedent(f"""\
        model_deployments:
          - name: {HELM_MODEL}
            model_name: {HELM_MODEL}
            tokenizer_name: {HELM_MODEL}
            max_sequence_length: {CONTEXT_WINDOW}
            client_spec:
              class_name: "helm.clients.huggingface_client.HuggingFaceClient"
              args:
                pretrained_model_name_or_path: "{model_dir}"
                apply_chat_template: false
                torch_dtype: "float32"
        """)
    )
    (prod_env / "tokenizer_configs.yaml").write_text(
        textwrap.dedent(f"""\
        tokenizer_configs:
          - name: {HELM_MODEL}
            tokenizer_spec:
              class_name: "helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer"
              args:
                pretrained_model_name_or_path: "{model_dir}"
            end_of_text_token: "<|im_end|>"
            prefix_token: ""
        """)
    )
    (prod_env / "model_metadata.yaml").write_text(
        textwrap.dedent(f"""\
        models:
          - name: {HELM_MODEL}
            display_name: SmolLM2-135M-Instruct (holistic's embedded weights)
            description: The embedded model's weights as a local Hugging Face directory.
            creator_organization_name: HuggingFaceTB
            access: open
            release_date: 2024-11-01
            tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG, LIMITED_FUNCTIONALITY_TEXT_MODEL_TAG]
        """)
    )


# ---------------------------------------------------------------------------
# The same bytes for both: the authors' files, where HELM's downloads put them
# ---------------------------------------------------------------------------


def holistic_instances(key: str, data_root: Path) -> list[Any]:
    """Every instance of the scenario as holistic loads it (before sampling)."""
    sys.path.insert(0, str(ROOT))
    from holistic.core.interfaces import ScenarioContext
    from holistic.core.types import ScenarioSpec
    from holistic.scenarios.registry import create_scenario

    name, args, _ = SCENARIOS[key]
    scenario = create_scenario(ScenarioSpec.make(name, args))
    return list(scenario.get_instances(ScenarioContext(data_root=data_root, offline=True)))


def helm_instance_json(instance: Any) -> dict[str, Any]:
    """A holistic instance in HELM's ``Instance`` JSON (train stays train; valid/test as is)."""
    return {
        "input": {"text": instance.input},
        "references": [{"output": {"text": r.output}, "tags": list(r.tags)} for r in instance.references],
        "split": instance.split,
        "id": instance.id,
    }


def scenario_data_root(key: str, data_root: Path, work: Path) -> Path:
    """The data root both tools read for ``key``: the authors' files themselves where they are
    here (MMLU, TruthfulQA, RAFT), else files written in the authors' format from the copy that
    is here (BoolQ, IMDB: see :data:`DEVIATIONS`)."""
    staged = work / "data"
    key = base_key(key)
    resources = data_root / "helm_perturbations"  # HELM's dictionary and lists, for holistic's perturbations
    if resources.is_dir() and not (staged / resources.name).exists():
        staged.mkdir(parents=True, exist_ok=True)
        (staged / resources.name).symlink_to(resources.resolve(), target_is_directory=True)
    if key in ("boolq", "imdb"):
        (_stage_boolq if key == "boolq" else _stage_imdb)(data_root, staged / key)
        return staged
    if key in WRITTEN:
        WRITTEN[key](staged / SCENARIOS[key][0])
        return staged
    return data_root


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def _write_narrative_qa(folder: Path) -> None:
    """deepmind/narrativeqa's ``qaps.csv`` and ``third_party/wikipedia/summaries.csv`` (their
    columns, CSV with a header), for 8 train, 3 valid and 14 test stories of 1 to 4 questions;
    some questions lack the final ``?``, some fields carry spaces around them."""
    counts = {"train": 8, "valid": 3, "test": 14}
    summaries, qaps = [], []
    for split, n in counts.items():
        for d in range(n):
            doc = f"{split[:2]}{d:03d}{'abcdef'[d % 6]}"
            hero, place = NAMES[(d * 7 + len(split)) % len(NAMES)], PLACES[(d * 3 + len(split)) % len(PLACES)]
            summary = (
                f" {hero} grows up in {place}. After a long winter, {hero} leaves home to find the lost "
                f"{OBJECTS[d % len(OBJECTS)]}, meets a stranger on the road and returns in spring. "
            )
            summaries.append([doc, split, summary, summary.lower().strip()])
            for q in range(1 + (d * 5 + len(split)) % 4):
                question = [f"Where does {hero} grow up", f"What does {hero} look for?", "When does the hero return?"]
                text = question[q % 3] + (" " if q == 3 else "")
                answers = [place, f"in {place}"] if q % 3 == 0 else [OBJECTS[d % len(OBJECTS)], "in spring "]
                qaps.append([doc, split, text, answers[0], answers[1], text.lower(), answers[0].lower(), answers[1]])
    columns = ["document_id", "set", "question", "answer1", "answer2"]
    _write_csv(folder / "qaps.csv", columns + [f"{c}_tokenized" for c in columns[2:]], qaps)
    _write_csv(
        folder / "third_party" / "wikipedia" / "summaries.csv",
        ["document_id", "set", "summary", "summary_tokenized"],
        summaries,
    )


NAMES = ("Ann", "Boris", "Chen", "Dalia", "Emeka", "Freya", "Goran")
PLACES = ("Lisbon", "a small fishing village", "the mountains", "Kyoto", "an old castle")
OBJECTS = ("ring", "map", "letter", "brother", "violin")


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _write_hellaswag(folder: Path) -> None:
    """rowanz/hellaswag's ``hellaswag_{train,val}.jsonl`` (its fields), 12 and 20 rows: ``ctx_b``
    lower-case, upper-case or empty, and one row whose right ending appears twice."""
    for split, n in (("train", 12), ("val", 20)):
        rows = []
        for i in range(n):
            hero = NAMES[i % len(NAMES)]
            ctx_a = f"{hero} stands in front of a {OBJECTS[i % len(OBJECTS)]} shop in {PLACES[i % len(PLACES)]}."
            ctx_b = ["he", "She then", ""][i % 3]
            endings = [
                f"walks inside and buys a {OBJECTS[(i + k) % len(OBJECTS)]}." if k != 2 else "waves at the camera."
                for k in range(4)
            ]
            if i == 7:
                endings[3] = endings[1]
            rows.append(
                {
                    "ind": 100 * (split == "val") + i,
                    "activity_label": ["Shopping", "Walking the dog", "Playing violin"][i % 3],
                    "ctx_a": ctx_a,
                    "ctx_b": ctx_b,
                    "ctx": f"{ctx_a} {ctx_b}",
                    "split": split,
                    "split_type": "indomain" if i % 2 else "zeroshot",
                    "label": 1 if i == 7 else i % 4,
                    "endings": endings,
                    "source_id": f"activitynet~v_{split}{i:03d}",
                }
            )
        _write_jsonl(folder / f"hellaswag_{split}.jsonl", rows)


def _write_openbookqa(folder: Path) -> None:
    """OpenBookQA-V1-Sep2018's ``Data/Main/{train,dev,test}.jsonl`` (its fields), 8, 3 and 12 rows
    (HELM reads train and test only)."""
    for split, n in (("train", 8), ("dev", 3), ("test", 12)):
        rows = []
        for i in range(n):
            thing = OBJECTS[i % len(OBJECTS)]
            texts = [f"a {thing} made of {m}" for m in ("wood", "glass", "paper", "steel")]
            rows.append(
                {
                    "id": f"{split}-{700 + i}",
                    "question": {
                        "stem": f"Which {thing} would float on water in {PLACES[i % len(PLACES)]}",
                        "choices": [{"text": t, "label": k} for t, k in zip(texts, "ABCD", strict=True)],
                    },
                    "answerKey": "ABCD"[i % 4],
                }
            )
        _write_jsonl(folder / f"{split}.jsonl", rows)


def _write_quac(folder: Path) -> None:
    """QuAC's ``{train,val}_v0.2.json`` (SQuAD-like, its fields), 8 and 14 dialogues of 3 to 7
    turns; some turns unanswerable (``CANNOTANSWER``), some with repeated answers."""
    for split, n in (("train", 8), ("val", 14)):
        data = []
        for d in range(n):
            hero, place = NAMES[d % len(NAMES)], PLACES[(d + len(split)) % len(PLACES)]
            context = f"{hero} was born in {place}. {hero} later played the {OBJECTS[d % len(OBJECTS)]} on tour."
            qas = []
            for q in range(3 + (d * 3 + len(split)) % 5):
                answer = [f"{hero} was born in {place}.", "CANNOTANSWER", f"{hero} later played"][q % 3]
                answers = [answer, answer] if q % 2 else [answer, answer.split(".")[0]]
                qas.append(
                    {
                        "id": f"C_{split}{d:03d}_q#{q}",
                        "question": ["Where was he born?", "Did he marry?", "What did he play?"][q % 3],
                        "answers": [{"text": a, "answer_start": 0} for a in answers],
                        "orig_answer": {"text": answer, "answer_start": 0},
                        "followup": "y",
                        "yesno": "x",
                    }
                )
            paragraph = {"id": f"C_{split}{d:03d}", "context": context + " CANNOTANSWER", "qas": qas}
            data.append(
                {
                    "title": hero,
                    "background": f"{hero} is a musician from {place}.",
                    "section_title": "Early life",
                    "paragraphs": [paragraph],
                }
            )
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{split}_v0.2.json").write_text(json.dumps({"data": data}), encoding="utf-8")


_CIVIL_GROUPS = ("male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white")


def _write_civil_comments(folder: Path) -> None:
    """WILDS's ``all_data_with_identities.csv`` (civilcomments_v1.0: an unnamed index column,
    ``id``, ``comment_text``, ``split``, the toxicity fractions, the eight identity groups and
    ``identity_any``), 24 train, 6 val and 14 test comments: toxicity on both sides of 0.5 and
    at it, comments with commas, quotes, a line break and spaces around them, identity marks
    above, at and below 0.5."""
    header = ["", "id", "comment_text", "split", "created_date", "toxicity", "severe_toxicity", *_CIVIL_GROUPS]
    rows = []
    counts = {"train": 24, "val": 6, "test": 14}
    number = 0
    for split, n in counts.items():
        for i in range(n):
            hero, thing = NAMES[(i + number) % len(NAMES)], OBJECTS[i % len(OBJECTS)]
            text = [
                f"{hero} is right about the {thing}.",
                f'"{hero}" said the {thing}, again, was stupid and so is everyone here',
                f"  What a {thing}!\nNobody asked, {hero}. ",
                f"I agree with {hero}; the {thing} is fine",
            ][i % 4]
            toxicity = ["0.0", "0.8", "0.5", "0.166667", "0.6"][(i + number) % 5]
            marks = ["0.0"] * len(_CIVIL_GROUPS)
            marks[i % len(_CIVIL_GROUPS)] = ["1.0", "0.5", "0.3"][i % 3]
            rows.append(
                [str(number), str(239000 + number), text, split, "2016-01-01 00:00:00+00", toxicity, "0.0", *marks]
            )
            number += 1
    _write_csv(folder / "all_data_with_identities.csv", header, rows)


def _nq_row(shard: int, i: int) -> dict[str, Any]:
    """One question of NaturalQuestions' full format: an HTML page (a heading and two
    paragraphs: an entity, a no-break space), its tokens with byte offsets, and five
    annotations (short answers repeated and paired with their long answer, one long answer
    without short ones, one annotation with neither); every seventh question has no short
    answer, every fifth a yes/no answer only."""
    n = shard * 7 + i
    hero, place, thing = NAMES[n % len(NAMES)], PLACES[n % len(PLACES)], OBJECTS[n % len(OBJECTS)]
    words = [
        ["<H1>", hero, "</H1>"],
        ["<P>", hero, "lives", "in", *place.split(), "&amp;", "keeps", "a", thing, ".", "</P>"],
        ["<P>", "Since", f"19{10 + n}", ",", hero, "has", "sold", "the", thing, "in", "New\u00a0York", ".", "</P>"],
    ]
    tokens: list[dict[str, Any]] = []
    page = "<html><body>"
    for paragraph in words:
        for word in paragraph:
            start = len((page + " ").encode("utf-8"))
            page += " " + word
            tokens.append(
                {
                    "token": word,
                    "start_byte": start,
                    "end_byte": len(page.encode("utf-8")),
                    "html_token": word[0] == "<",
                }
            )
    page += " </body></html>"

    def span(first: int, last: int) -> dict[str, int]:
        return {
            "start_byte": tokens[first]["start_byte"],
            "end_byte": tokens[last - 1]["end_byte"],
            "start_token": first,
            "end_token": last,
        }

    places = 4 + len(place.split())
    first_p, second_p = span(3, 3 + len(words[1])), span(3 + len(words[1]), len(tokens))
    place_span, year_span = (
        span(7, places + 3),
        span(len(words[0]) + len(words[1]) + 2, len(words[0]) + len(words[1]) + 3),
    )
    shorts = [[place_span], [place_span, span(places + 6, places + 7)], [], [], [year_span if n % 3 else place_span]]
    longs = [first_p, first_p, second_p, {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}]
    longs.append(second_p if n % 3 else first_p)
    if n % 7 == 3:
        shorts = [[] for _ in shorts]
    yes_no = "YES" if n % 5 == 4 else "NONE"
    if yes_no == "YES":
        shorts = [[] for _ in shorts]
    question = [f"where does {hero} live", f"what does {hero} Keep?", f"when did {hero} start selling the {thing}"][
        n % 3
    ]
    return {
        "example_id": 4_000_000 + n,
        "question_text": question,
        "document_title": hero,
        "document_url": f"https://en.wikipedia.org//w/index.php?title={hero}",
        "document_html": page,
        "document_tokens": tokens,
        "long_answer_candidates": [{**first_p, "top_level": True}, {**second_p, "top_level": True}],
        "annotations": [
            {
                "annotation_id": 100 * n + k,
                "long_answer": {**longs[k], "candidate_index": -1 if longs[k]["start_byte"] < 0 else k % 2},
                "short_answers": shorts[k],
                "yes_no_answer": yes_no if k == 0 else "NONE",
            }
            for k in range(5)
        ],
    }


def _write_natural_qa(folder: Path) -> None:
    """NaturalQuestions' v1.0 dev shards ``nq-dev-0{0..4}.jsonl.gz`` (full format), 7 questions each."""
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    for shard in range(5):
        lines = "".join(json.dumps(_nq_row(shard, i), ensure_ascii=False) + "\n" for i in range(7))
        with gzip.GzipFile(folder / f"nq-dev-0{shard}.jsonl.gz", "wb", mtime=0) as fh:
            fh.write(lines.encode("utf-8"))


def _write_tsv(path: Path, rows: Iterable[Iterable[object]], sep: str = "\t") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(sep.join(str(v) for v in row) + "\n" for row in rows), encoding="utf-8")


def _write_msmarco(folder: Path) -> None:
    """The files HELM 0.5.16 downloads for MS MARCO (``documents``, ``train_*``, ``regular_*``,
    ``trec_*`` ``.tsv``: HELM's CodaLab copies and the MS MARCO and TREC files, in their
    formats), small: 150 passages (one starting with a quoted word, which Python's csv reads
    as a quoted field, and one docid listed twice), 8 training queries (one unjudged, one with
    15 ranked passages; ranked lists not in rank order), 12 dev queries (one unjudged, one with
    20 ranked passages, judged passages beyond the top 30) and 9 TREC DL queries (qrels
    separated by spaces, grades 0 to 3, one query judged 0 and 1 only, a qid written with a
    leading zero in the queries file)."""
    rng = random.Random(7)
    docids = [7_000_000 + 37 * i for i in range(150)]
    documents = []
    for i, docid in enumerate(docids):
        hero, place, thing = NAMES[i % len(NAMES)], PLACES[(i // 7) % len(PLACES)], OBJECTS[(i // 3) % len(OBJECTS)]
        text = f"{hero} keeps the {thing} in {place}; it was bought in {1900 + i}."
        if i == 17:
            text = f'"{hero}" is a nickname. The {thing} stays in {place}.'
        if i == 40:
            text = f'The "{thing}" of {hero} is old.'
        documents.append([docid, text])
    documents.insert(60, [docids[5], "An earlier copy of this passage, replaced by the later line."])
    _write_tsv(folder / "documents.tsv", documents)

    def ranked(n: int) -> list[int]:
        return rng.sample(docids, n)

    def query(i: int) -> str:
        hero, thing = NAMES[i % len(NAMES)], OBJECTS[i % len(OBJECTS)]
        return [f"where does {hero} keep the {thing}", f"when was the {thing} bought", f"who owns the {thing}"][i % 3]

    # training queries: 20 ranked passages each, the relevant one ranked 1 to 10
    train_q, train_qrels, train_topk = [], [], []
    for i in range(8):
        qid = 100 + 11 * i
        train_q.append([qid, query(i)])
        lst = ranked(15 if i == 3 else 20)
        rows = [[qid, d, r] for r, d in enumerate(lst, start=1)]
        if i % 2:
            rows.reverse()  # HELM takes the first non-relevant passage ranked 11-20 in the file's order
        train_topk.extend(rows)
        if i != 5:
            train_qrels.append([qid, 0, lst[i % 10], 1])
            if i == 2:
                train_qrels.append([qid, 0, lst[(i + 4) % 10], 1])
    _write_split(folder, "train", train_q, train_qrels, train_topk)

    # the regular track (dev small): binary judgements
    dev_q, dev_qrels, dev_topk = [], [], []
    for i in range(12):
        qid = 1_000 + 7 * i
        dev_q.append([qid, query(i + 1)])
        lst = ranked(20 if i == 4 else 40)
        dev_topk.extend([qid, d, r] for r, d in enumerate(lst, start=1))
        if i != 7:
            dev_qrels.append([qid, 0, lst[(3 * i) % 38], 1])  # some beyond the top 30
            if i % 4 == 1:
                dev_qrels.append([qid, 0, lst[i], 1])
    _write_split(folder, "regular", dev_q, dev_qrels, dev_topk)

    # TREC DL 2019: graded judgements 0-3, separated by spaces
    trec_q, trec_qrels, trec_topk = [], [], []
    for i in range(9):
        qid = 19_000 + 13 * i
        trec_q.append(["0" + str(qid) if i == 2 else qid, query(i + 2)])
        lst = ranked(34)
        trec_topk.extend([qid, d, r] for r, d in enumerate(lst, start=1))
        judged = [*rng.sample(range(34), 8), 40 + i]
        for k, position in enumerate(judged):
            docid = lst[position] if position < 34 else docids[position + 60]
            grade = (k + i) % 4 if i != 6 else k % 2
            trec_qrels.append([qid, "Q0", docid, grade])
    _write_split(folder, "trec", trec_q, trec_qrels, trec_topk, qrels_sep=" ")


def _write_split(
    folder: Path, name: str, queries: list[Any], qrels: list[Any], topk: list[Any], qrels_sep: str = "\t"
) -> None:
    """One split's ``<name>_queries.tsv``, ``<name>_qrels.tsv`` and ``<name>_topk.tsv``."""
    _write_tsv(folder / f"{name}_queries.tsv", queries)
    _write_tsv(folder / f"{name}_qrels.tsv", qrels, sep=qrels_sep)
    _write_tsv(folder / f"{name}_topk.tsv", topk)


_MSMARCO_FILES = tuple(
    f"{name}.tsv"
    for name in (
        "documents",
        *(f"{split}_{kind}" for split in ("train", "regular", "trec") for kind in ("queries", "qrels", "topk")),
    )
)
"""The files HELM's MS MARCO loader reads under ``scenarios/msmarco/data/`` (both tracks)."""


_VERBS = ("found", "repaired", "sold", "returned", "painted", "stolen")


def _sentences(n: int, seed: int) -> list[str]:
    """``n`` news sentences of 11 to 15 words, from the harness's names, places and objects."""
    out = []
    for k in range(n):
        m = seed * 31 + k
        hero, place, thing = NAMES[m % len(NAMES)], PLACES[(m // 3) % len(PLACES)], OBJECTS[(m // 7) % len(OBJECTS)]
        out.append(f"{hero} said the {thing} was {_VERBS[m % len(_VERBS)]} in {place} on day {m % 28 + 1} this year.")
    return out


def _paragraphs(words: int, seed: int) -> list[str]:
    """An article of about ``words`` words in paragraphs of two or three sentences; every
    fourth paragraph is a caption without a final period (as the stories' image captions
    are), one carries runs of spaces and a tab."""
    paragraphs: list[str] = []
    count, k = 0, 0
    while count < words:
        if k % 4 == 3:
            text = (
                f"{NAMES[(seed + k) % len(NAMES)]} holds the {OBJECTS[k % len(OBJECTS)]} in {PLACES[k % len(PLACES)]}"
            )
        else:
            text = " ".join(_sentences(2 + k % 2, seed * 7 + k))
        if k == 1:
            text = text.replace(" said ", "  said\t", 1)
        paragraphs.append(text)
        count += len(text.split())
        k += 1
    return paragraphs


_CNN_WORDS = {
    "train": (30, 60, 90, 120, 140, 170, 80, 45, 55, 100, 210, 130),
    "validation": (200, 400, 650, 90),
    "test": (150, 300, 520, 700, 250, 90, 60, 350),
}
"""Article lengths in words: training articles on both sides of HELM's 50-150 word pool, and
articles longer than its 512-word cut."""


def _cnn_records() -> list[tuple[str, str, list[str], list[str]]]:
    """(split, URL, paragraphs, highlights) of every story the harness writes, in list order."""
    records = []
    for split, lengths in _CNN_WORDS.items():
        for i, words in enumerate(lengths):
            seed = 100 * len(split) + i
            site = "www.cnn.com" if i % 2 == 0 else "www.dailymail.co.uk"
            highlights = [
                f"{NAMES[(seed + h) % len(NAMES)]} says the {OBJECTS[(seed + h) % len(OBJECTS)]} is back"
                + ["", ".", "!", " 'for good'"][(i + h) % 4]
                for h in range(3 + i % 2)
            ]
            records.append(
                (split, f"http://{site}/2015/{split}/{i:02d}/story.html", _paragraphs(words, seed), highlights)
            )
    return records


_HF_CNN_ENDS = ".!?'`\")\u2019\u201d"
"""abisee/cnn_dailymail's conversion adds `` .`` to a story line ending in none of these."""


def _write_cnn_dailymail(folder: Path) -> None:
    """abisee/cnn-dailymail's ``url_lists/all_{train,val,test}.txt`` and ``{cnn,dailymail}/stories/
    <sha1(url)>.story`` files (paragraphs, then ``@highlight`` blocks) for 12 train, 4 val and
    8 test stories."""
    lists: dict[str, list[str]] = {}
    for split, url, paragraphs, highlights in _cnn_records():
        lists.setdefault({"validation": "val"}.get(split, split), []).append(url)
        source = "cnn" if "cnn.com" in url else "dailymail"
        story = "\n\n".join(paragraphs) + "\n\n" + "".join(f"@highlight\n\n{h}\n\n" for h in highlights)
        target = folder / source / "stories" / (hashlib.sha1(url.encode("utf-8")).hexdigest() + ".story")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(story, encoding="utf-8")
    for name, urls in lists.items():
        (folder / "url_lists").mkdir(parents=True, exist_ok=True)
        (folder / "url_lists" / f"all_{name}.txt").write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    for source in ("cnn", "dailymail"):
        (folder / source / "stories").mkdir(parents=True, exist_ok=True)


def _cnn_pickle_rows() -> dict[str, list[dict[str, str]]]:
    """The same stories as abisee/cnn_dailymail 3.0.0's rows (what HELM's ``cnndm.pk`` is taken
    to hold): ``article`` the stripped paragraphs joined with spaces, ``highlights`` joined with
    line breaks, `` .`` added to a line without a sentence end."""

    def ended(line: str) -> str:
        line = line.strip()
        return line if line[-1] in _HF_CNN_ENDS else line + " ."

    rows: dict[str, list[dict[str, str]]] = {"train": [], "validation": [], "test": []}
    for split, url, paragraphs, highlights in _cnn_records():
        rows[split].append(
            {
                "article": " ".join(ended(p) for p in paragraphs),
                "highlights": "\n".join(ended(h) for h in highlights),
                "id": hashlib.sha1(url.encode("utf-8")).hexdigest(),
            }
        )
    return rows


_XSUM_SHARE = ["Share this with", "Email", "Facebook", "Messenger", "Twitter", "WhatsApp", "Copy this link"]
_XSUM_ARTICLES = {
    # (article words, summary words, what HELM's XSum filter sees)
    "train": (
        (110, 20, ""),
        (125, 18, ""),
        (140, 24, ""),
        (90, 12, ""),
        (100, 11, ""),
        (80, 8, ""),  # a summary of 10 words or fewer
        (60, 24, ""),  # a summary longer than a fifth of the article
        (120, 20, "Media playback is unsupported on your device"),
        (130, 19, "Last updated at 12:00 GMT"),
        (30, 20, ""),
        (170, 20, ""),
        (115, 21, ""),
    ),
    "validation": ((200, 20, ""), (560, 23, ""), (95, 17, "")),
    "test": (
        (150, 20, ""),
        (300, 21, ""),
        (530, 22, ""),
        (250, 19, ""),
        (90, 18, ""),
        (60, 9, ""),
        (340, 24, ""),
        (120, 20, ""),
        (410, 16, ""),
    ),
}


def _xsum_records() -> list[tuple[str, str, str, str, list[str], bool]]:
    """(split, id, title, summary, body lines, share lines written) of every article, in split-file order."""
    records = []
    for split, articles in _XSUM_ARTICLES.items():
        for i, (words, summary_words, marker) in enumerate(articles):
            seed = 1000 + 100 * len(split) + i
            body = [p for p in _paragraphs(words, seed)]
            if marker:
                body.insert(1, marker)
            summary = " ".join(" ".join(_sentences(3, seed + 5)).split()[:summary_words]).rstrip(".") + "."
            doc_id = f"{3 + len(split)}{seed:07d}"
            records.append(
                (
                    split,
                    doc_id,
                    f"{NAMES[i % len(NAMES)]} and the {OBJECTS[i % len(OBJECTS)]}",
                    summary,
                    body,
                    i % 3 == 1,
                )
            )
    return records


def _write_xsum(folder: Path) -> None:
    """EdinburghNLP/XSum's ``bbc-summary-data/<id>.summary`` files (``[SN]URL``, ``TITLE``,
    ``FIRST-SENTENCE``, ``RESTBODY``; some with the page's share-button lines) and its split file,
    for 12 train, 3 validation and 9 test articles; the split file also lists a test id whose
    file is missing (as a few of the real list's are)."""
    splits: dict[str, list[str]] = {"train": [], "validation": [], "test": []}
    data = folder / "bbc-summary-data"
    data.mkdir(parents=True, exist_ok=True)
    for split, doc_id, title, summary, body, share in _xsum_records():
        splits[split].append(doc_id)
        lines = body[:1] + (_XSUM_SHARE if share else []) + body[1:]
        text = (
            f"[SN]URL[SN]\nhttp://www.bbc.co.uk/news/{doc_id}\n\n[SN]TITLE[SN]\n{title}\n\n"
            f"[SN]FIRST-SENTENCE[SN]\n{summary}\n\n[SN]RESTBODY[SN]\n" + "\n".join(lines) + "\n"
        )
        (data / f"{doc_id}.summary").write_text(text, encoding="utf-8")
    splits["test"].insert(3, "39999999")
    (folder / "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json").write_text(json.dumps(splits), encoding="utf-8")


def _xsum_pickle_rows() -> dict[str, list[dict[str, str]]]:
    """The same articles as EdinburghNLP/xsum's rows (what HELM's ``xsum.pk`` is taken to hold):
    ``document`` the body's lines without the share-button lines, ``summary``, ``id``."""
    rows: dict[str, list[dict[str, str]]] = {"train": [], "validation": [], "test": []}
    for split, doc_id, _title, summary, body, _share in _xsum_records():
        rows[split].append({"document": "\n".join(body), "summary": summary, "id": doc_id})
    return rows


def _write_helm_pickle(target: Path, rows: dict[str, list[dict[str, str]]]) -> None:
    """HELM's preprocessed summarization file: the rows per split, pickled (HELM unpickles it;
    holistic never reads it)."""
    import pickle

    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as fh:
        pickle.dump(rows, fh, protocol=4)


WRITTEN = {
    "narrative_qa": _write_narrative_qa,
    "quac": _write_quac,
    "hellaswag": _write_hellaswag,
    "openbookqa": _write_openbookqa,
    "civil_comments": _write_civil_comments,
    "natural_qa_closedbook": _write_natural_qa,
    "natural_qa_openbook_longans": _write_natural_qa,
    "msmarco_regular": _write_msmarco,
    "msmarco_trec": _write_msmarco,
    "cnn_dailymail": _write_cnn_dailymail,
    "xsum": _write_xsum,
}
"""Scenarios whose data is not here: the files the harness writes in the authors' format."""


def _held_out_pool(key: str, data_root: Path) -> set[str]:
    """The ids holistic holds out as its in-context pool when only the validation/test file is here."""
    return {i.id for i in holistic_instances(key, data_root) if i.split == "train"}


def _stage_boolq(data_root: Path, folder: Path) -> None:
    """Google's BoolQ format (question, title, answer, passage) from the SuperGLUE val.jsonl."""
    pool = _held_out_pool("boolq", data_root)
    train, dev = [], []
    with (data_root / "boolq" / "val.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title, _, passage = row["passage"].partition(" -- ")
            label = row["label"] if isinstance(row["label"], bool) else str(row["label"]).lower() == "true"
            google = {"question": row["question"], "title": title, "answer": label, "passage": passage}
            (train if f"val-{row['idx']}" in pool else dev).append(json.dumps(google, ensure_ascii=False) + "\n")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.jsonl").write_text("".join(train), encoding="utf-8")
    (folder / "val.jsonl").write_text("".join(dev), encoding="utf-8")


def _stage_imdb(data_root: Path, folder: Path) -> None:
    """An aclImdb tree (``{train,test}/{pos,neg}/<n>_<rating>.txt``) from ``imdb_1000.txt``."""
    pool = _held_out_pool("imdb", data_root)
    tree = folder / "aclImdb"
    if tree.exists():
        shutil.rmtree(tree)
    lines = (data_root / "imdb" / "imdb_1000.txt").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        split = "train" if f"imdb_1000-{number:05d}" in pool else "test"
        polarity, rating = ("pos", 10) if label == "1" else ("neg", 1)
        target = tree / split / polarity / f"{number}_{rating}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.strip() + "\n", encoding="utf-8")


def prepare_helm_instances(key: str, out: Path, data_root: Path, helm_python: Path) -> None:
    """Put the scenario's files where HELM's download would put them (``ensure_file_downloaded``
    skips a target that exists), so that HELM's own loader reads them. ``data_root`` is the
    root of :func:`scenario_data_root`."""
    stale = _helm_cache_folder(out, key)
    if stale is not None:  # HELM would read these instead of running its loader
        shutil.rmtree(stale)
    folder = out / "scenarios" / helm_name(key)
    key = base_key(key)
    data = folder / "data"
    if data.is_symlink() or data.is_file():
        data.unlink()
    elif data.is_dir():
        shutil.rmtree(data)
    folder.mkdir(parents=True, exist_ok=True)
    if key == "mmlu":
        data.symlink_to((data_root / "mmlu").resolve(), target_is_directory=True)
        return
    data.mkdir()
    if key == "truthful_qa":
        shutil.copyfile(data_root / "truthful_qa" / "TruthfulQA.csv", data / "TruthfulQA.csv")
    elif key == "boolq":
        shutil.copyfile(data_root / "boolq" / "train.jsonl", data / "train")
        shutil.copyfile(data_root / "boolq" / "val.jsonl", data / "dev")
        # HELM skips the first entry of the contrast file's "data" list (its header)
        (data / "boolq_perturbed.jsonl").write_text(json.dumps({"data": [{}]}), encoding="utf-8")
    elif key == "imdb":
        for split in ("train", "test"):
            shutil.copytree(data_root / "imdb" / "aclImdb" / split, data / split)
        for mode in ("test", "dev"):
            for kind in ("original", "contrast"):
                (data / f"{mode}_{kind}.tsv").write_text("Sentiment\tText\n", encoding="utf-8")
        # HELM's file order per split and class (its pinned-order file), here holistic's number order
        order = {
            helm_split: {
                polarity: sorted(
                    (f.name for f in (data / folder / polarity).iterdir()), key=lambda n: int(n.split("_")[0])
                )
                for polarity in ("pos", "neg")
            }
            for helm_split, folder in (("train", "train"), ("valid", "test"))
        }
        (data / "imdb_scenario_pinned_file_order.json").write_text(json.dumps(order), encoding="utf-8")
    elif key == "narrative_qa":
        shutil.copytree(data_root / "narrative_qa", data / "narrativeqa-master")
    elif key == "quac":
        for split in ("train", "val"):
            shutil.copyfile(data_root / "quac" / f"{split}_v0.2.json", data / f"{split}.json")
    elif key == "hellaswag":
        for split in ("train", "val"):
            shutil.copyfile(data_root / "hellaswag" / f"hellaswag_{split}.jsonl", data / f"hellaswag_{split}.jsonl")
    elif key == "openbookqa":
        shutil.copytree(data_root / "openbookqa", data / "OpenBookQA-V1-Sep2018" / "Data" / "Main")
    elif helm_name(key) == "natural_qa":
        for shard in range(5):
            name = f"nq-dev-0{shard}.jsonl.gz"
            shutil.copyfile(data_root / "natural_qa" / name, data / name)
    elif helm_name(key) == "msmarco":
        for name in _MSMARCO_FILES:
            shutil.copyfile(data_root / "msmarco" / name, data / name)
    elif key == "civil_comments":  # HELM reads it beside data/, under its own name
        shutil.copyfile(
            data_root / "civil_comments" / "all_data_with_identities.csv", folder / "wilds_civil_comments.csv"
        )
    elif key in HELM_PICKLES:
        rows = _cnn_pickle_rows() if key == "cnn_dailymail" else _xsum_pickle_rows()
        _write_helm_pickle(data / HELM_PICKLES[key], rows)
    elif key == "raft":
        sys.path.insert(0, str(ROOT))
        from holistic.scenarios.raft import FIELD_ORDERING, TASK_INSTRUCTIONS

        settings = json.dumps(FIELD_ORDERING) + "\n" + json.dumps(TASK_INSTRUCTIONS) + "\n"
        # the run spec reads the instructions from scenarios/raft, the loader from scenarios/raft/data
        for target in (folder, data):
            (target / "prompt_construction_settings.json").write_text(settings, encoding="utf-8")


def helm_patches(key: str, data_root: Path) -> dict[str, Any]:
    """What :data:`_HELM_MAIN` changes in HELM's process for ``key`` (see :data:`DEVIATIONS`)."""
    key = base_key(key)
    if key == "raft":
        subset = SCENARIOS[key][1]["subset"]
        task = json.loads((data_root / "raft" / subset / "task.json").read_text(encoding="utf-8"))
        return {
            "raft": {
                subset: {
                    "csv": str(data_root / "raft" / subset / "train.csv"),
                    "labels": task["label_columns"]["Label"],
                }
            }
        }
    if key in HELM_PICKLES:
        return {"summarization": True}
    return {}


_HELM_MAIN = r"""
import json, sys
patches = json.loads(sys.argv[1])
sys.argv = ["helm-run", *sys.argv[2:]]
if "raft" in patches:
    import csv, datasets

    def load_dataset(path, name=None, cache_dir=None, split=None, **kwargs):
        spec = patches["raft"][name]
        with open(spec["csv"], encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        names = ["Unlabeled", *spec["labels"]]
        features = {c: datasets.Value("string") for c in rows[0] if c not in ("ID", "Label")}
        features.update(ID=datasets.Value("int32"), Label=datasets.ClassLabel(names=names))
        rows = [{**r, "ID": int(r["ID"]), "Label": names.index(r["Label"])} for r in rows]
        return datasets.Dataset.from_list(rows, features=datasets.Features(features))

    datasets.load_dataset = load_dataset
if "summarization" in patches:
    import types
    import spacy.cli

    # Nothing here installs en_core_web_sm, summ_eval or bert_score (HELM's "summarization"
    # extra). BERTScore and SummaC run only on a GPU device (device=cpu here); summ_eval's
    # coverage, density and compression are not computed (named in NOT_COMPARED).
    spacy.cli.download = lambda *args, **kwargs: None
    bert_score = types.ModuleType("bert_score")
    bert_score.BERTScorer = None
    stats = types.ModuleType("summ_eval.data_stats_metric")
    stats.DataStatsMetric = type("DataStatsMetric", (), {})
    sys.modules.update({"bert_score": bert_score, "summ_eval": types.ModuleType("summ_eval"),
                        "summ_eval.data_stats_metric": stats})
    from helm.benchmark.metrics import summarization_metrics as sm

    def no_scores(self, eval_cache_path):
        # HELM's human-evaluation and QAFactEval scores are looked up by the deployment's name
        # and the exact summary, for the models of HELM's own runs: a model HELM never ran has
        # none (HELM's lookup misses and it reports no stat), so they are not downloaded.
        raise ValueError("no scores for this model")

    sm.SummarizationMetric._load_humaneval = no_scores
    sm.SummarizationMetric._load_qafacteval = lambda self, path: setattr(self, "qa_fact_eval", {})
    sm.SummarizationMetric._compute_data_stats = lambda self, inp, pred: {}
from helm.benchmark.run import main
sys.exit(main())
"""
"""HELM's ``helm-run``, after the changes :func:`helm_patches` names (none for most scenarios)."""


# ---------------------------------------------------------------------------
# Running both
# ---------------------------------------------------------------------------


def run_helm(
    key: str,
    out: Path,
    helm_python: Path,
    prod_env: Path,
    n: int,
    trials: int,
    patches: dict[str, Any] | None = None,
) -> Path:
    """Run ``helm-run`` on ``key`` (its loader reading the files :func:`prepare_helm_instances`
    placed, with :func:`helm_patches`' changes) and return its run folder."""
    base = SCENARIOS[key][2]
    entry = f"{base}{',' if ':' in base else ':'}model={HELM_MODEL}"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        # HELM's bias metrics tokenize with NLTK's punkt_tab, which NLTK downloads on first
        # use; holistic ships the same English model.
        "NLTK_DATA": str(ROOT / "holistic" / "metrics" / "nltk_data"),
    }
    if helm_name(key) == "msmarco":
        extra = helm_ranking_extra(helm_python)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(extra), env.get("PYTHONPATH", "")) if p)
    done = _helm_run_dir(out, key)
    if done is not None:  # --keep: HELM already ran this one
        return done
    proc = subprocess.Popen(
        [
            "nice",
            str(helm_python),
            "-c",
            _HELM_MAIN,
            json.dumps(patches or {}),
            "--run-entries",
            entry,
            "--suite",
            helm_suite(key),
            "--max-eval-instances",
            str(n),
            "--num-train-trials",
            str(trials),
            "--output-path",
            str(out),
            "--local-path",
            str(prod_env),
            "--cache-instances",
            "--num-threads",
            "1",
            "--exit-on-error",
        ],
        env=env,
        cwd=out,
    )
    # helm-run 0.5.16 can linger after "Done." (threads of the Hugging Face server); once its
    # results are written and a minute has passed, it is stopped.
    finished_at = None
    while proc.poll() is None:
        if finished_at is None and _helm_run_dir(out, key) is not None:
            finished_at = time.monotonic()
        if finished_at is not None and time.monotonic() - finished_at > 60:
            proc.kill()
            proc.wait()
            break
        time.sleep(5)
    found = _helm_run_dir(out, key)
    if found is None:
        raise SystemExit(
            f"HELM wrote no results for {entry} under {out / 'runs' / 'conformance'} (exit {proc.returncode})"
        )
    return found


def _helm_run_dir(out: Path, key: str) -> Path | None:
    """HELM's finished run folder for ``key`` (its stats written), or ``None``."""
    base = out / "runs" / helm_suite(key)
    for path in sorted(base.glob("*")) if base.is_dir() else ():
        if (
            _entry_matches(path.name, key)
            and (path / "stats.json").is_file()
            and (path / "per_instance_stats.json").is_file()
        ):
            return path
    return None


def _entry_matches(run_dir: str, key: str) -> bool:
    """Whether HELM's run folder ``run_dir`` is ``key``'s run entry (with the model added):
    its scenario and every argument, so that HellaSwag's ``commonsense`` run is not OpenBookQA's."""
    # HELM names a run "mmlu:subject=anatomy,...,model=..." or, for a scenario without
    # arguments, "boolq,data_augmentation=robustness:model=..."
    name, args = _entry_args(SCENARIOS[key][2])
    if key in GREEDY:  # HELM's temperature run expander keeps the run's name: its base's temperature
        args["temperature"] = _entry_args(SCENARIOS[GREEDY[key]][2])[1]["temperature"]
    if "data_augmentation" in args:  # HELM names a single perturbation's run after its spec
        args["data_augmentation"] = HELM_RUN_NAMES.get(args["data_augmentation"], args["data_augmentation"])
    their_name, theirs = _entry_args(run_dir)
    theirs.pop("model", None)
    return their_name == name and args == theirs


def _entry_args(entry: str) -> tuple[str, dict[str, str]]:
    """A run entry (or HELM's run folder name) as its scenario name and its arguments."""
    name, *args = re.split("[:,]", entry)
    return name, dict(arg.partition("=")[::2] for arg in args)


def run_holistic(key: str, out: Path, data_root: Path, n: int, trials: int) -> Path:
    name, args, _ = SCENARIOS[key]
    spec = {
        "suite": f"conformance-{key}",
        "protocol": "helm",
        "models": [MODEL],
        "runs": [
            {
                "scenario": name,
                "args": args,
                "max_eval_instances": n,
                "num_train_trials": trials,
                "metrics": ["accuracy", "calibration", "efficiency", "bias", *AUGMENTED.get(key, ("", [], []))[2]],
                "perturbations": AUGMENTED.get(key, ("", [], []))[1],
                **({"adaptation": {"temperature": 0}} if key in GREEDY else {}),
            }
        ],
    }
    spec_path = out / f"{key}.yaml"
    spec_path.write_text(json.dumps(spec, indent=1))
    subprocess.run(
        [
            "nice",
            sys.executable,
            "-m",
            "holistic.cli.run",
            str(spec_path),
            "--output-dir",
            str(out),
            "--data-root",
            str(data_root),
            "--quiet",
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    runs = sorted((out / f"conformance-{key}" / "runs").glob("*"))
    return runs[0]


# ---------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------


def helm_states(run_dir: Path) -> list[dict[str, Any]]:
    return json.loads((run_dir / "scenario_state.json").read_text())["request_states"]


def helm_instance_ids(key: str, data_root: Path, states: list[dict[str, Any]]) -> dict[str, str]:
    """HELM instance id -> holistic id. HELM reads every scenario with its own loader and
    numbers the instances in its order (``id<n>``); they are matched by position in
    holistic's (:func:`compare_instances` checks that the two lists are the same)."""
    return {f"id{i}": inst.id for i, inst in enumerate(holistic_instances(key, data_root))}


def helm_cached_instances(out: Path, key: str) -> list[dict[str, Any]]:
    """Every instance HELM's loader made (``--cache-instances`` writes them), in HELM's order."""
    folder = _helm_cache_folder(out, key)
    if folder is None:
        raise SystemExit(f"HELM cached no instances for {key} under {out / 'scenario_instances'}")
    data: list[dict[str, Any]] = json.loads((folder / "input_instances.json").read_text(encoding="utf-8"))
    return data


def _helm_cache_folder(out: Path, key: str) -> Path | None:
    """HELM's instance-cache folder for ``key`` (``<scenario>:<args>``), if it has one."""
    name, args = helm_name(key), HELM_SCENARIO_ARGS.get(base_key(key), SCENARIOS[key][1])
    wanted = [f"{k}={v}" for k, v in args.items()]
    base = out / "scenario_instances"
    for folder in sorted(base.iterdir()) if base.is_dir() else ():
        their_name, _, their_args = folder.name.partition(":")
        if their_name == name and all(a in their_args.split(",") for a in wanted):
            return folder
    return None


_CORRECT_ONLY = ("boolq", "imdb", "raft", "civil_comments")
"""Scenarios whose HELM loader gives the correct reference only, where holistic lists every
label as a reference (neither prompts nor scores read the others): only the correct
references are compared for them."""


def helm_instance_rows(key: str, helm_instances: list[dict[str, Any]]) -> list[list[Any]]:
    """What HELM's loader decided per instance, in its order: [input, [[reference, correct]...], split]
    (for ranking each reference also with its relevance and first-stage rank: :func:`_ranking_row`)."""
    if helm_name(key) == "msmarco":
        return [_helm_ranking_row(key, i) for i in helm_instances]
    return [
        _row(
            key,
            i["input"]["text"],
            ((r["output"]["text"], "correct" in r.get("tags", [])) for r in i["references"]),
            i["split"],
        )
        for i in helm_instances
    ]


def _helm_ranking_row(key: str, instance: dict[str, Any]) -> list[Any]:
    """A ranking instance of HELM's: each passage with whether it is correct, its ``relevance=``
    tag and its ``rank=`` tag. HELM tags the rank of every listed passage; past the evaluated
    depth (``valid_topk``, 20 for training queries) the tag only keeps the passage out of HELM's
    ``(topk=N)`` stats, which holistic says by giving it no first-stage rank."""
    depth = HELM_SCENARIO_ARGS[base_key(key)]["valid_topk"] if instance["split"] != "train" else 20
    references = []
    for r in instance["references"]:
        tags = dict(t.split("=", 1) for t in r.get("tags", []) if "=" in t)
        rank = int(tags["rank"]) if "rank" in tags else None
        references.append(
            [
                r["output"]["text"],
                "correct" in r.get("tags", []),
                int(tags["relevance"]) if "relevance" in tags else None,
                rank if rank is not None and rank <= depth else None,
            ]
        )
    return [instance["input"]["text"], references, instance["split"]]


def holistic_instance_rows(key: str, instances: Iterable[Any]) -> list[list[Any]]:
    """:func:`helm_instance_rows` of holistic's instances."""
    if helm_name(key) == "msmarco":
        return [
            [i.input, [[r.output, r.is_correct, r.relevance, r.first_stage_rank] for r in i.references], i.split]
            for i in instances
        ]
    return [_row(key, i.input, ((r.output, r.is_correct) for r in i.references), i.split) for i in instances]


def _row(key: str, text: str, references: Iterable[tuple[str, bool]], split: str) -> list[Any]:
    return [text, [[t, c] for t, c in references if c or base_key(key) not in _CORRECT_ONLY], split]


def instances_digest(rows: list[list[Any]]) -> str:
    """The sha256 of instance rows (UTF-8 JSON), which the golden files keep instead of every instance."""
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


def compare_instances(key: str, helm_instances: list[dict[str, Any]], data_root: Path) -> dict[str, Any]:
    """HELM's loader's instances against holistic's, position by position: the input, the
    references (text and whether correct, in order) and the split."""
    theirs = helm_instance_rows(key, helm_instances)
    ours = holistic_instance_rows(key, holistic_instances(key, data_root))
    same = sum(a == b for a, b in zip(theirs, ours, strict=False))
    first = next((i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b), None)
    return {
        "helm": len(theirs),
        "holistic": len(ours),
        "identical": same,
        "first_difference": None
        if first is None
        else {"position": first, "helm": theirs[first], "holistic": ours[first]},
    }


Place = tuple[str, int, int | None, str, str | None]


def _helm_key(state: dict[str, Any], instance_id: str) -> Place:
    """A HELM request state's place: instance, trial, for separate scoring the choice and
    whether it is the calibration request (``request_mode``), and the perturbation of the
    instance (``None``: the original)."""
    mode = state.get("request_mode") or "original"
    perturbation = (state["instance"].get("perturbation") or {}).get("name")
    perturbation = HELM_PERTURBATION_NAMES.get(perturbation, perturbation) if perturbation else None
    return (instance_id, state["train_trial_index"], state.get("reference_index"), _ROLES.get(mode, mode), perturbation)


def _our_key(row: dict[str, Any]) -> Place:
    """:func:`_helm_key` of one of holistic's request rows. A perturbation with a named deviation
    (``person_names~holistic_names``) is matched by its name: HELM was given the same data
    (holistic's name lists in HELM's file format), so its prompts are compared; its stats,
    named with the tag, never carry HELM's names and are not."""
    perturbation = row["perturbation"].split("~")[0] if row["perturbation"] else None
    return (row["instance_id"], row["trial"], row["reference_index"], row["role"], perturbation)


_ROLES = {"original": "main", "calibration": "calibration"}
"""HELM's ``request_mode`` -> holistic's request ``role``."""


def sent_text(row: dict[str, Any]) -> str:
    """The text holistic's request puts before the model as HELM's ``prompt`` holds it: the
    prompt, and for a log-likelihood request the scored continuation after it (HELM sends
    both as one echoed prompt)."""
    return str(row["prompt"]) + (str(row["continuation"] or "") if row["kind"] == "loglikelihood" else "")


def prediction_agreement(
    states: list[dict[str, Any]],
    ours: dict[Place, dict[str, Any]],
    id_map: dict[str, str],
    helm_dir: Path,
    ours_dir: Path,
) -> tuple[int, int]:
    """(agreeing, compared) predictions: per generated request its completion; per instance
    scored choice by choice (separate methods) the choice picked (``predicted_index``)."""
    # a generated answer: one per instance, or per passage (ranking: a reference_index, no echo)
    generated = [s for s in states if s.get("reference_index") is None or not s["request"].get("echo_prompt")]
    agree = 0
    for s in generated:
        hid = id_map.get(s["instance"]["id"], s["instance"]["id"])
        row = ours.get(_helm_key(s, hid))
        helm_text = s["result"]["completions"][0]["text"].strip() if s.get("result") else None
        agree += row is not None and (row["completion"] or "").strip() == helm_text
    if len(generated) == len(states):
        return agree, len(states)
    import pyarrow.parquet as pq

    theirs = {
        (id_map.get(p["instance_id"], p["instance_id"]), p.get("train_trial_index", 0)): st["mean"]
        for p in json.loads((helm_dir / "per_instance_stats.json").read_text())
        for st in p["stats"]
        if st["name"]["name"] == "predicted_index" and not st["name"].get("perturbation")
    }
    mine = {
        (r["instance_id"], r["trial"]): r["value"]
        for r in pq.read_table(ours_dir / "per_instance_stats.parquet").to_pylist()
        if r["metric"] == "predicted_index" and not r["perturbation"]
    }
    return sum(mine.get(k) == v for k, v in theirs.items()), len(theirs)


def compare(key: str, helm_dir: Path, ours_dir: Path, data_root: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    ours = {_our_key(r): r for r in pq.read_table(ours_dir / "requests.parquet").to_pylist()}
    instances = compare_instances(key, helm_cached_instances(helm_dir.parents[2], key), data_root)
    prompts = params = 0
    missing = []
    for s in states:
        hid = id_map.get(s["instance"]["id"], s["instance"]["id"])
        row = ours.get(_helm_key(s, hid))
        if row is None:
            missing.append(hid)
            continue
        req = s["request"]
        prompts += sent_text(row) == req["prompt"]
        params += (row["max_tokens"], row["temperature"], list(row["stop"]), row["num_completions"]) == (
            req["max_tokens"],
            req["temperature"],
            list(req.get("stop_sequences", [])),
            req["num_completions"],
        )
    agree, predictions = prediction_agreement(states, ours, id_map, helm_dir, ours_dir)
    helm_stats = _helm_stats(helm_dir)
    our_stats = _our_stats(ours_dir)
    shared = [n for n in sorted(helm_stats) if n in our_stats and not any(t in n for t in _TIMING)]
    deltas = {name: abs(helm_stats[name] - our_stats[name]) for name in shared if excluded_reason(name, key) is None}
    excluded = {
        name: {
            "helm": helm_stats[name],
            "holistic": our_stats[name],
            "abs_delta": abs(helm_stats[name] - our_stats[name]),
            "reason": excluded_reason(name, key),
        }
        for name in shared
        if excluded_reason(name, key) is not None
    }
    rescored = rescored_ranking(key, states, id_map, helm_stats, data_root) if helm_name(key) == "msmarco" else None
    n = len(states)
    met = {
        "prompts_identical": prompts == n,
        # sampled completions are each tool's own draw (SAMPLED_REASON): reported, not a target
        "prediction_agreement": key in SAMPLED or agree >= TARGET_AGREEMENT * predictions,
        "metric_abs_delta": all(d <= TARGET_DELTA for d in deltas.values()),
        "same_sample": not missing,
        "same_instances": instances["identical"] == instances["helm"] == instances["holistic"],
    }
    if rescored is not None:
        met["rescored_abs_delta"] = all(d <= TARGET_DELTA for d in rescored.values())
    return {
        "scenario": key,
        "instances": n,
        "same_sample": not missing,
        "missing_in_holistic": missing,
        "loader": instances,
        "deviations": DEVIATIONS.get(base_key(key), []),
        "not_compared": NOT_COMPARED.get(base_key(key), []),
        "prompts_identical": prompts,
        "request_params_identical": params,
        "prediction_agreement": agree,
        "predictions": predictions,
        "prediction_agreement_excluded": SAMPLED_REASON if key in SAMPLED else None,
        "metric_abs_delta": deltas,
        "excluded_metrics": excluded,
        # Ranking: HELM's own answers scored by holistic's ranking metric, against HELM's stats.
        **({"rescored_abs_delta": rescored} if rescored is not None else {}),
        # Reported by one side only, so never compared (e.g. HELM's request counts and finish
        # reasons; holistic's calibration stats where HELM's run spec has none).
        "helm_only": _names(n for n in helm_stats if n not in our_stats),
        "holistic_only": _names(n for n in our_stats if n not in helm_stats),
        "targets_met": met,
        "helm": {k: helm_stats[k] for k in deltas},
        "holistic": {k: our_stats[k] for k in deltas},
    }


def rescored_ranking(
    key: str, states: list[dict[str, Any]], id_map: dict[str, str], helm_stats: dict[str, float], data_root: Path
) -> dict[str, float]:
    """|delta| of every ranking stat HELM reports against holistic's ranking metric scoring
    HELM's own answers (text and log-probability) on holistic's instances: the ranking itself
    compared without the log-probabilities of HELM's local client (see :data:`EXCLUDED`). On an
    :data:`AUGMENTED` key a perturbed state scores holistic's instance tagged as holistic's
    variant (the perturbation rewrites no relevance or rank), and the worst cases are holistic's."""
    sys.path.insert(0, str(ROOT))
    from dataclasses import replace

    from holistic.core.interfaces import MetricContext
    from holistic.core.types import Completion, PerturbationSpec, Request, RequestResult, RequestState, Token
    from holistic.metrics.ranking import RankingMetric
    from holistic.metrics.stats import with_worst_case
    from holistic.models.registry import ModelRegistry
    from holistic.perturbations.registry import create_perturbation

    ours = {i.id: i for i in holistic_instances(key, data_root)}
    described = {
        spec["name"]: create_perturbation(PerturbationSpec.make(spec["name"], spec.get("args", {})), helm=True)
        for spec in AUGMENTED.get(key, ("", [], []))[1]
    }
    built = []
    for index, s in enumerate(states):
        instance = ours[id_map[s["instance"]["id"]]]
        if s["instance"].get("perturbation"):
            name = HELM_PERTURBATION_NAMES[s["instance"]["perturbation"]["name"]]
            instance = replace(instance, perturbation=described[name].description())
        completions = tuple(
            Completion(c["text"], c["logprob"], tuple(Token(t["text"], t["logprob"]) for t in c.get("tokens", [])))
            for c in s["result"]["completions"]
        )
        built.append(
            RequestState(
                instance=instance,
                request=Request(model=MODEL, prompt=s["request"]["prompt"]),
                trial=s["train_trial_index"],
                reference_index=s["reference_index"],
                request_index=index,
                result=RequestResult(success=True, completions=completions, has_logprobs=True),
            )
        )
    deployment = ModelRegistry().get(MODEL)
    from holistic.spec.catalog import Catalog

    ctx = MetricContext(run_id="rescored", deployment=deployment, scenario_info=Catalog().scenario_info("msmarco"))
    values: dict[str, list[float]] = {}
    scored = RankingMetric().evaluate(built, ctx).per_instance
    for stat in with_worst_case(scored, [b.instance for b in built]):
        name = stat.name
        values.setdefault(_stat_key(name.name, name.split, None, name.perturbation), []).append(stat.value)
    return {name: abs(helm_stats[name] - sum(v) / len(v)) for name, v in sorted(values.items()) if name in helm_stats}


TARGET_AGREEMENT = 0.99
TARGET_DELTA = 0.005
"""The targets: every prompt identical, >= 99% of predictions the same, |delta| <= 0.005 per shared metric."""

EXCLUDED = {
    "ranking": "HELM's Hugging Face client gives every greedy completion of a local model log-probability 0 "
    "(see max_prob), so HELM orders the passages that got the same answer by their order in the instance, "
    "holistic by the model's log-probability of the answer; the ranking stats (RR, NDCG, Success, Recall) "
    "are compared instead on HELM's own answers scored by holistic's metric (rescored_abs_delta).",
    "max_prob": "HELM's Hugging Face client (not its protocol) returns log-probabilities after temperature "
    "scaling, and greedy decoding runs at temperature 1e-7, so every completion of a local model has "
    "log-probability 0 and max_prob 1 in HELM; holistic reports the model's own probability. The calibration "
    "stats built on it (ece_*, selective_*, platt_*) differ on local models for the same reason.",
}
"""Shared metrics not held to the target, each with its reason (reported with both values)."""
_CALIBRATION = ("ece_", "selective_", "platt_")
_RANKING = ("RR@", "NDCG@", "Success@", "Recall@")


def _names(keys: Iterable[str]) -> list[str]:
    """The metric names of ``name[split]`` keys, timing aside."""
    return sorted({k.split("[")[0] for k in keys if not any(t in k for t in _TIMING)})


_POOLED = (
    "HELM pools a per-request stat over every request of the run (its run value is the sum over all "
    "requests divided by their number), holistic averages each instance's mean; on a ranking run, whose "
    "queries have different numbers of passages, the two differ slightly (a named deviation; the "
    "per-instance values are equal: tests/conformance/test_conformance_golden.py)."
)
EXCLUDED_FOR = {
    f"msmarco_{track}{run}": {"num_prompt_tokens": _POOLED}
    for track in ("regular", "trec")
    for run in ("", "_robustness", "_fairness")
}
"""Shared metrics not held to the target on one scenario key, each with its reason."""

SAMPLED_REASON = (
    "the requests sample (HELM's summarization runs use temperature 0.3): HELM's Hugging Face client draws "
    "with torch's generator, holistic's engine with its own, so the completions and every stat computed from "
    "them differ by chance; the same runs at temperature 0 (the *_greedy keys) compare them"
)
_PROMPT_STATS = ("num_prompt_tokens",)
"""The stats of a sampled run that depend on the prompt alone, so still compared."""


def excluded_reason(key: str, scenario_key: str = "") -> str | None:
    """Why the shared metric ``key`` (``name[split]``) of ``scenario_key``'s run (a harness key) is not
    held to the target, or ``None`` when it is."""
    name = key.split("[")[0]
    # a worst case is HELM's per-instance minimum (a mean over instances, not pooled over requests)
    worst = key.endswith(("{robustness}", "{fairness}", ":worst}"))
    if name in EXCLUDED_FOR.get(scenario_key, {}) and not worst:
        return EXCLUDED_FOR[scenario_key][name]
    if scenario_key in SAMPLED and name not in _PROMPT_STATS:
        return SAMPLED_REASON
    if name in EXCLUDED:
        return EXCLUDED[name]
    if name.startswith(_CALIBRATION):
        return EXCLUDED["max_prob"]
    if name.startswith(_RANKING):
        return EXCLUDED["ranking"]
    return None


_TIMING = ("runtime", "co2", "energy", "batch_size", "request_time", "latency")
"""Stats that measure the machine, not the model's answers: never compared."""


def _stat_key(name: str, split: str, sub_split: str | None, perturbation: str | None = None) -> str:
    """``name[split]``; ``name[split/sub_split]`` for a sub-split's stat (CivilComments'
    ``toxic`` and ``non-toxic``: HELM reports that scenario per sub-split only); then
    ``{perturbation}`` in holistic's naming for a perturbed or worst-case stat."""
    key = f"{name}[{split}/{sub_split}]" if sub_split else f"{name}[{split}]"
    return key + (f"{{{perturbation}}}" if perturbation else "")


def helm_perturbation(description: dict[str, Any] | None) -> str | None:
    """HELM's ``PerturbationDescription`` of a stat in holistic's naming: the family's worst case
    (``robustness``, ``fairness``), a perturbation's worst case (``<name>:worst``), its
    originals (``<name>:original``) or its variants (``<name>``)."""
    if not description:
        return None
    name, computed_on = description["name"], description.get("computed_on", "perturbed")
    name = HELM_PERTURBATION_NAMES.get(name, name)
    if computed_on == "worst":
        return name if name in ("robustness", "fairness") else f"{name}:worst"
    return f"{name}:original" if computed_on == "original" else name


def _helm_stats(run_dir: Path) -> dict[str, float]:
    """:func:`_stat_key` -> mean, over every evaluated split (MMLU's sample has both)."""
    out: dict[str, float] = {}
    for stat in json.loads((run_dir / "stats.json").read_text()):
        name = stat["name"]
        if stat.get("count", 0) == 0:
            continue
        if name.get("split") in ("valid", "test") and "mean" in stat:
            key = _stat_key(
                name["name"], name["split"], name.get("sub_split"), helm_perturbation(name.get("perturbation"))
            )
            out.setdefault(key, stat["mean"])
    return out


def _our_stats(run_dir: Path) -> dict[str, float]:
    import pyarrow.parquet as pq

    out: dict[str, float] = {}
    for row in pq.read_table(run_dir / "stats.parquet").to_pylist():
        if row.get("mean") is None:
            continue
        out.setdefault(
            _stat_key(row["metric"], row["split"], row.get("sub_split"), row.get("perturbation")), row["mean"]
        )
    return out


# ---------------------------------------------------------------------------
# Golden files
# ---------------------------------------------------------------------------


def _golden_head(key: str) -> dict[str, Any]:
    """What every golden file says first: who made it, the scenario, HELM's run entry, the deviations."""
    name, args, entry = SCENARIOS[key]
    return {
        "made_by": f"crfm-helm {HELM_VERSION}, scripts/helm_conformance.py, model {HELM_MODEL} "
        "(holistic's embedded SmolLM2-135M-Instruct weights as a local Hugging Face directory)",
        "scenario": name,
        "args": args,
        "helm_run_entry": entry,
        "harness_key": key,
        "deviations": DEVIATIONS.get(base_key(key), []),
    }


def write_golden(key: str, helm_dir: Path, data_root: Path, target: Path, k: int) -> None:
    """HELM's own prompts, requests, completions and per-instance stats for ``k`` instances."""
    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    run_spec = json.loads((helm_dir / "run_spec.json").read_text())
    # HELM numbers the instances in its loader's order
    instances = [{**inst, "id": f"id{i}"} for i, inst in enumerate(helm_cached_instances(helm_dir.parents[2], key))]
    per_instance = json.loads((helm_dir / "per_instance_stats.json").read_text())
    keep = list(dict.fromkeys(s["instance"]["id"] for s in states))[:k]
    # HELM lists an instance once per metric that scored it (MS MARCO: its ranking metric, then
    # the reference metric; summarization: SummarizationMetric's, then BasicMetric's): their stats are merged.
    stats: dict[str, dict[str, float]] = {}
    for p in per_instance:
        if p["instance_id"] in keep and p.get("train_trial_index", 0) == 0:
            stats.setdefault(id_map[p["instance_id"]], {}).update(
                (st["name"]["name"], st["mean"])
                for st in p["stats"]
                if not st["name"].get("perturbation") and "mean" in st
            )
    kept = [s["request"]["prompt"] for s in states if s["instance"]["id"] in keep]
    all_inputs = any(s["num_train_instances"] < run_spec["adapter_spec"]["max_train_instances"] for s in states)
    rows = helm_instance_rows(key, helm_cached_instances(helm_dir.parents[2], key))
    golden = {
        **_golden_head(key),
        # Every instance HELM's loader made, as instances_digest of helm_instance_rows.
        "helm_instances": {"count": len(rows), "sha256": instances_digest(rows)},
        "adapter_spec": run_spec["adapter_spec"],
        "max_eval_instances": run_spec["adapter_spec"]["max_eval_instances"],
        "train": [
            {
                "id": id_map.get(i["id"], i["id"]),
                # Only the examples some kept prompt shows carry their text (HELM's draw reads the
                # pool's labels and order, never its inputs), unless HELM dropped examples to fit
                # the window: the examples it dropped are needed to check that, and no output names them.
                "input": i["input"]["text"] if all_inputs or any(i["input"]["text"] in p for p in kept) else None,
                "references": [[r["output"]["text"], r.get("tags", [])] for r in i["references"]],
            }
            for i in instances
            if i["split"] == "train"
        ],
        # The instances HELM had (for RAFT, split in HELM's environment), in its order.
        "eval_pool_ids": [id_map.get(i["id"], i["id"]) for i in instances if i["split"] != "train"],
        "selected_eval_ids": list(
            dict.fromkeys(id_map[s["instance"]["id"]] for s in states if s["train_trial_index"] == 0)
        ),
        "request_states": [golden_state(s, id_map) for s in states if s["instance"]["id"] in keep],
        "per_instance_stats": stats,
    }
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{key}.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def golden_state(s: dict[str, Any], id_map: dict[str, str]) -> dict[str, Any]:
    """One of HELM's request states as the golden files keep it: the instance (holistic's id;
    a perturbed variant's HELM ``PerturbationDescription``), the request, its completions."""
    instance = s["instance"]
    return {
        "instance": {
            "id": id_map[instance["id"]],
            "input": instance["input"]["text"],
            "split": instance["split"],
            "sub_split": instance.get("sub_split"),
            "references": [[r["output"]["text"], r.get("tags", [])] for r in instance["references"]],
            **({"perturbation": instance["perturbation"]} if instance.get("perturbation") else {}),
        },
        "trial": s["train_trial_index"],
        # separate scoring: the choice this request scores, and "original" or "calibration"
        "reference_index": s.get("reference_index"),
        "request_mode": s.get("request_mode"),
        "prompt": s["request"]["prompt"],
        "request": {
            f: s["request"].get(f)
            for f in (
                "max_tokens",
                "temperature",
                "stop_sequences",
                "num_completions",
                "top_k_per_token",
                "echo_prompt",
            )
        },
        "output_mapping": s.get("output_mapping"),
        "num_train_instances": s["num_train_instances"],
        "completions": [
            {
                "text": c["text"],
                "logprob": c["logprob"],
                "tokens": [[t["text"], t["logprob"]] for t in c.get("tokens", [])],
            }
            for c in s["result"]["completions"]
        ],
    }


def write_augmented_golden(key: str, helm_dir: Path, data_root: Path, target: Path) -> Path:
    """For a key of :data:`AUGMENTED`: every request state of HELM's run (the originals and their
    variants: prompts, requests, completions), HELM's per-instance stats of each original and
    variant, and its run's stats (perturbed, ``computed_on=original`` and ``worst``, and the
    ``robustness`` / ``fairness`` worst cases), gzipped as ``<key>.json.gz``. The run is kept
    whole (keep it small), since its worst cases are means over all its instances."""
    import gzip

    states = helm_states(helm_dir)
    id_map = helm_instance_ids(key, data_root, states)
    run_spec = json.loads((helm_dir / "run_spec.json").read_text())
    # HELM lists an instance (and variant) once per metric class that scored it: merged
    per_instance: dict[tuple[str, int, str | None], dict[str, float]] = {}
    for p in json.loads((helm_dir / "per_instance_stats.json").read_text()):
        place = (id_map[p["instance_id"]], p.get("train_trial_index", 0), helm_perturbation(p.get("perturbation")))
        per_instance.setdefault(place, {}).update(
            (st["name"]["name"], st["mean"])
            for st in p["stats"]
            if "mean" in st and st.get("count", 0) and not any(t in st["name"]["name"] for t in _TIMING)
        )
    base, perturbations, categories = AUGMENTED[key]
    golden = {
        **_golden_head(key),
        "unperturbed_key": base,
        # holistic's perturbations (protocol: helm) for HELM's data_augmentation, and the
        # metric categories that report their worst cases
        "holistic_perturbations": perturbations,
        "metrics": ["accuracy", "calibration", "efficiency", "bias", *categories],
        "adapter_spec": run_spec["adapter_spec"],
        "max_eval_instances": run_spec["adapter_spec"]["max_eval_instances"],
        "request_states": [golden_state(s, id_map) for s in states],
        # HELM's per-instance stats of each original (perturbation None) and variant (holistic's
        # name of HELM's perturbation), timing aside
        "per_instance_stats": [
            {"id": i, "trial": trial, "perturbation": pert, "stats": stats}
            for (i, trial, pert), stats in per_instance.items()
        ],
        # HELM's run stats, name[split]{perturbation} (helm_perturbation's naming), timing aside
        "stats": {k: v for k, v in _helm_stats(helm_dir).items() if not any(t in k for t in _TIMING)},
    }
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{key}.json.gz"
    with gzip.GzipFile(path, "wb", mtime=0) as fh:
        fh.write((json.dumps(golden, indent=0, ensure_ascii=False) + "\n").encode("utf-8"))
    return path


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--data-root",
        type=Path,
        default=Path(os.environ.get("HOLISTIC_DATA_ROOT", "../shared/data")),
        help="folder with mmlu/, truthful_qa/, boolq/, imdb/, raft/ in the authors' formats",
    )
    p.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    p.add_argument("--max-eval-instances", type=int, default=10)
    p.add_argument("--num-train-trials", type=int, default=1)
    p.add_argument("--work-dir", type=Path, default=Path.home() / ".cache" / "holistic" / "peers" / "helm_conformance")
    p.add_argument("--helm-venv", type=Path, default=Path.home() / ".cache" / "holistic" / "peers" / "helm")
    p.add_argument(
        "--golden",
        type=Path,
        help="write golden files made from HELM's output into this folder (the augmented keys' into its augmented/)",
    )
    p.add_argument("--golden-instances", type=int, default=5)
    p.add_argument("--report", type=Path, help="write the comparison as JSON")
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep --work-dir and the runs already finished in it (HELM's and holistic's)",
    )
    p.add_argument(
        "--compare-only",
        action="store_true",
        help="do not run anything: compare (and write golden files from) the runs already in --work-dir",
    )
    args = p.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from holistic.models.weights import converted_gguf_dir, embedded_gguf_path

    work = args.work_dir.resolve()
    helm_out, ours_out = work / "helm", work / "holistic"
    data_root = args.data_root.resolve()
    if not args.compare_only:
        helm_python = helm_venv(args.helm_venv)
        model_dir = converted_gguf_dir(embedded_gguf_path())
        if work.exists() and not args.keep:
            shutil.rmtree(work)
        helm_out.mkdir(parents=True, exist_ok=True)
        ours_out.mkdir(parents=True, exist_ok=True)
        write_prod_env(work / "prod_env", model_dir)

    results = []
    for key in args.scenarios:
        root = scenario_data_root(key, data_root, work)
        if args.compare_only:
            helm_dir = next(p for p in (helm_out / "runs" / helm_suite(key)).iterdir() if _entry_matches(p.name, key))
            ours_dir = sorted((ours_out / f"conformance-{key}" / "runs").glob("*"))[0]
        else:
            if _helm_run_dir(helm_out, key) is None:
                prepare_helm_instances(key, helm_out, root, helm_python)
                if "fairness" in AUGMENTED.get(key, ("", [], []))[2]:
                    from helm_perturbation_conformance import place_helm_resources

                    place_helm_resources(helm_out, data_root)
            helm_dir = run_helm(
                key,
                helm_out,
                helm_python,
                work / "prod_env",
                args.max_eval_instances,
                args.num_train_trials,
                patches=helm_patches(key, root),
            )
            ours_dir = run_holistic(key, ours_out, root, args.max_eval_instances, args.num_train_trials)
        result = compare(key, helm_dir, ours_dir, root)
        results.append(result)
        if args.golden and key in AUGMENTED:  # HELM's whole perturbed run, beside the scenario's golden
            write_augmented_golden(key, helm_dir, root, args.golden / AUGMENTED_GOLDENS)
        elif args.golden and key not in GREEDY:
            write_golden(key, helm_dir, root, args.golden, args.golden_instances)
        print(format_row(result), flush=True)

    print()
    print(format_table(results))
    if args.report:
        args.report.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(all(r["targets_met"].values()) for r in results) else 1


def format_row(r: dict[str, Any]) -> str:
    loader = r["loader"]
    instances = f"instances identical {loader['identical']}/{loader['helm']} (holistic has {loader['holistic']})"
    worst = max(r["metric_abs_delta"].values(), default=0.0)
    return (
        f"{r['scenario']}: prompts {r['prompts_identical']}/{r['instances']}, "
        f"params {r['request_params_identical']}/{r['instances']}, "
        f"predictions {r['prediction_agreement']}/{r.get('predictions', r['instances'])}, "
        f"same sample {r['same_sample']}, {instances}, max |delta| {worst:.4f} over {len(r['metric_abs_delta'])} metrics"
        + (
            f"; HELM's answers rescored by holistic: max |delta| {max(r['rescored_abs_delta'].values(), default=0.0):.4f} "
            f"over {len(r['rescored_abs_delta'])} ranking stats"
            if "rescored_abs_delta" in r
            else ""
        )
        + "".join(
            f"; excluded {name} (HELM {e['helm']:.4f}, holistic {e['holistic']:.4f}: "
            f"see {'SAMPLED' if e['reason'] == SAMPLED_REASON else 'EXCLUDED'})"
            for name, e in r["excluded_metrics"].items()
        )
        + ("" if all(r["targets_met"].values()) else f"; TARGETS NOT MET: {r['targets_met']}")
    )


def format_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | instances identical | prompts identical | request params | same sample "
        "| predictions agree | max abs delta (metrics) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        loader = r["loader"]
        same = f"{loader['identical']}/{loader['helm']}"
        n = r["instances"]
        worst = max(r["metric_abs_delta"].items(), key=lambda kv: kv[1], default=("-", 0.0))
        lines.append(
            f"| {r['scenario']} | {same} | {r['prompts_identical']}/{n} | {r['request_params_identical']}/{n} | "
            f"{'yes' if r['same_sample'] else 'no'} | {r['prediction_agreement']}/{r.get('predictions', n)} | "
            f"{worst[1]:.4f} ({worst[0]}; {len(r['metric_abs_delta'])} shared) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
