"""In-context example selection: HELM's seeded class-covering draw, first, MMR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from holistic.core.types import AdapterSpec, Instance, PerturbationDescription, Reference, RequestState
from tests.adaptation.adaptation_fixtures import PLAIN_MODEL, BagOfWordsEmbedder, labelled

REPO = Path(__file__).resolve().parents[2]
SPEC = AdapterSpec(
    method="generation", max_train_instances=4, num_train_trials=3, input_prefix="Text: ", output_prefix="Label: "
)
TRAIN = labelled({"pos": 12, "neg": 8, "neutral": 4, "rare": 1})
EVAL = [Instance(id=f"e{i}", input=f"eval text {i}", references=(Reference("pos", ("correct",)),)) for i in range(3)]


def _run(spec: AdapterSpec = SPEC, seed: int = 0, eval_instances: list[Instance] = EVAL) -> list[RequestState]:
    from holistic.adaptation import adapt

    return adapt(TRAIN, eval_instances, spec, PLAIN_MODEL, None, seed=seed)


def test_same_examples_for_every_instance_within_a_trial_and_other_examples_in_another_trial() -> None:
    states = _run()
    by_trial: dict[int, set[tuple[str, ...]]] = {}
    for s in states:
        by_trial.setdefault(s.trial, set()).add(s.train_ids)
    assert sorted(by_trial) == [0, 1, 2]
    assert all(len(ids) == 1 for ids in by_trial.values())
    draws = [next(iter(by_trial[t])) for t in range(3)]
    assert len(set(draws)) == 3
    assert [s.trial for s in states] == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_class_coverage_follows_label_frequency() -> None:
    for state in _run():
        labels = [iid.rstrip("0123456789") for iid in state.train_ids]
        # one example of each of the four labels, the most frequent first
        assert labels == ["pos", "neg", "neutral", "rare"]
    three = _run(SPEC.replace(max_train_instances=3))
    for state in three:
        assert Counter(iid.rstrip("0123456789") for iid in state.train_ids) == Counter(["pos", "neg", "neutral"])
    six = _run(SPEC.replace(max_train_instances=6))
    for state in six:
        label_set = {iid.rstrip("0123456789") for iid in state.train_ids}
        assert label_set == {"pos", "neg", "neutral", "rare"} and len(set(state.train_ids)) == 6


def test_seed_changes_the_draw_and_first_takes_the_first_k() -> None:
    assert [s.train_ids for s in _run(seed=1)] != [s.train_ids for s in _run(seed=0)]
    fixed = _run(SPEC.replace(selection="first"))
    # identical prompts in every trial at temperature 0: only one trial is built
    assert [s.train_ids for s in fixed] == [("pos0", "pos1", "pos2", "pos3")] * 3
    assert {s.trial for s in fixed} == {0}


def test_first_keeps_the_pools_order_as_lm_evals_first_n() -> None:
    from holistic.adaptation import adapt

    pool = list(reversed(TRAIN))  # not sorted by id or label: the pool's own order counts
    spec = SPEC.replace(selection="first", max_train_instances=5)
    states = adapt(pool, EVAL, spec, PLAIN_MODEL, None, seed=0)
    assert [s.train_ids for s in states] == [tuple(t.id for t in pool[:5])] * len(EVAL)
    # the prompt lists them in that order too
    text = states[0].request.text
    positions = [text.index(f"Text: {t.input}\n") for t in pool[:5]]
    assert positions == sorted(positions)


def test_perturbed_variants_get_their_originals_examples() -> None:
    variant = Instance(
        id="e1",
        input="EVAL TEXT 1",
        references=EVAL[1].references,
        perturbation=PerturbationDescription("lowercase", robustness=True),
    )
    states = _run(eval_instances=[*EVAL, variant])
    for trial in range(3):
        rows = [s for s in states if s.trial == trial and s.instance.id == "e1"]
        assert len(rows) == 2 and rows[0].train_ids == rows[1].train_ids
    assert [s.instance.perturbation is not None for s in states[:4]] == [False, False, False, True]


def test_sampled_requests_repeating_an_earlier_trial_get_a_trial_tag() -> None:
    zero_shot = _run(SPEC.replace(max_train_instances=0, temperature=0.7))
    assert [s.request.trial_tag for s in zero_shot] == [""] * 3 + ["trial=1"] * 3 + ["trial=2"] * 3
    greedy = _run(SPEC.replace(max_train_instances=0))
    assert len(greedy) == 3 and all(s.request.trial_tag == "" for s in greedy)
    varied = _run(SPEC.replace(temperature=0.7))
    assert all(s.request.trial_tag == "" for s in varied)  # prompts already differ per trial


_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_adaptation_selection import _run
print(json.dumps([[s.trial, s.train_ids, s.request.prompt] for s in _run()]))
"""


def test_same_prompts_in_another_process_with_another_hash_seed() -> None:
    here = [[s.trial, list(s.train_ids), s.request.prompt] for s in _run()]
    outputs = []
    for hash_seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(Path(__file__).parent)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(json.loads(proc.stdout))
    assert outputs[0] == here and outputs[1] == here


MMR_TRAIN = [
    Instance(id="cat1", input="the cat is a pet that will purr", references=(Reference("animal", ("correct",)),)),
    Instance(id="cat1-dup", input="the cat is a pet that will purr", references=(Reference("animal", ("correct",)),)),
    Instance(id="cat2", input="a kitten and cats purr", references=(Reference("animal", ("correct",)),)),
    Instance(id="dog", input="dogs bark and a dog is a pet", references=(Reference("animal", ("correct",)),)),
    Instance(id="stock", input="the stock market price of shares", references=(Reference("finance", ("correct",)),)),
    Instance(id="rain", input="rain and cloud weather", references=(Reference("weather", ("correct",)),)),
]


def test_mmr_picks_relevant_examples_without_near_duplicates() -> None:
    from holistic.adaptation import adapt

    query = Instance(
        id="q",
        input="what do cats do when a pet cat is happy: purr",
        split="test",
        references=(Reference("animal", ("correct",)),),
    )
    variant = Instance(
        id="q",
        input="stock market",
        split="test",
        references=query.references,
        perturbation=PerturbationDescription("swap"),
    )
    embedder = BagOfWordsEmbedder()
    spec = SPEC.replace(selection="mmr", max_train_instances=3, mmr_lambda=0.5)
    states = adapt(MMR_TRAIN, [query, variant], spec, PLAIN_MODEL, None, seed=0, embedder=embedder)
    assert embedder.calls == [len(MMR_TRAIN), 1]  # one batch for train, one for the eval originals
    chosen = states[0].train_ids
    assert chosen[0] in {"cat1", "cat1-dup"}
    assert not {"cat1", "cat1-dup"} <= set(chosen)
    assert "stock" not in chosen and "rain" not in chosen[:2]
    assert states[1].train_ids == chosen  # the variant gets its original's examples
    relevance_only = adapt(
        MMR_TRAIN, [query], spec.replace(mmr_lambda=1.0), PLAIN_MODEL, None, seed=0, embedder=BagOfWordsEmbedder()
    )
    assert {"cat1", "cat1-dup"} <= set(relevance_only[0].train_ids)
