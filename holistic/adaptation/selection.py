"""Choosing in-context examples from the training instances.

- ``helm`` (HELM's ``InContextLearningAdapter.sample_examples``, step for step): per
  trial one draw used for every evaluated instance of that trial, from Python's
  ``random`` seeded with the trial number (with run and spec seed 0; other seeds are
  mixed in). Each training instance is labelled by the *text* of its first correct
  reference (the choice text for joint multiple choice, not its letter); labels are
  sorted by name, grouped by count, the groups taken from the largest count down with
  each group shuffled, and the labels are then *cycled*, one randomly drawn example per
  label per turn, until ``max_train_instances`` are taken. Instances without a correct
  reference only fill what the labelled ones cannot. A 120 Yes / 80 No pool therefore
  always gives 3 Yes and 2 No for five shots.
- ``first`` (lm-evaluation-harness's ``first_n``): the
  first ``max_train_instances`` instances of the pool, in the pool's order, the same
  for every evaluated instance.
- ``mmr`` (LLMeBench's): per evaluated instance, maximal marginal relevance over
  embeddings of the inputs (all-MiniLM-L6-v2 for mostly Latin-script pools, character
  trigram TF-IDF for any other script: :func:`~holistic.adaptation.embedding.choose_embedder`), trading relevance to the evaluated input against
  redundancy with examples already chosen (``AdapterSpec.mmr_lambda``). All inputs are
  embedded once, in two batches, and every selection is made before any request is
  built. A training instance with the evaluated instance's id is never its example.

Perturbed variants share the id of their original and get the original's examples
(for ``mmr``, the selection is computed from the original's unperturbed input).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from holistic.adaptation.embedding import Embedder, choose_embedder
from holistic.adaptation.mmr import mmr_select
from holistic.core.hashing import stable_seed
from holistic.core.types import AdapterSpec, Instance


class ExampleSelection:
    """The in-context examples of every (trial, evaluated instance id), computed up front."""

    def __init__(
        self,
        per_trial: dict[int, tuple[Instance, ...]] | None = None,
        per_instance: dict[str, tuple[Instance, ...]] | None = None,
    ) -> None:
        self._per_trial = per_trial or {}
        self._per_instance = per_instance or {}

    def examples(self, trial: int, instance: Instance) -> tuple[Instance, ...]:
        if instance.id in self._per_instance:
            return self._per_instance[instance.id]
        return self._per_trial.get(trial, ())


def helm_examples(train: Sequence[Instance], spec: AdapterSpec, *, seed: int, trial: int) -> tuple[Instance, ...]:
    """HELM's label-cycling seeded draw for one trial."""
    rng = random.Random(
        trial if seed == 0 and spec.seed == 0 else stable_seed("in-context-examples", seed, spec.seed, trial)
    )
    wanted = min(spec.max_train_instances, len(train))
    by_label: dict[str, list[Instance]] = {}
    unlabelled: list[Instance] = []
    for inst in train:
        correct = inst.first_correct
        if correct is None:
            unlabelled.append(inst)
        else:
            by_label.setdefault(correct.output, []).append(inst)
    by_count: dict[int, list[str]] = {}
    for label in sorted(by_label):
        by_count.setdefault(len(by_label[label]), []).append(label)
    order: list[str] = []
    for count in sorted(by_count, reverse=True):
        rng.shuffle(by_count[count])
        order.extend(by_count[count])
    chosen: list[Instance] = []
    turn = 0
    # An empty label ends the cycle, as in HELM (its loop stops on a falsy label).
    while len(chosen) < wanted and order and order[turn % len(order)]:
        pool = by_label[order[turn % len(order)]]
        turn += 1
        if pool:
            chosen.append(pool.pop(rng.randrange(len(pool))))
        elif not any(by_label[label] for label in order):
            break
    chosen += rng.sample(unlabelled, min(wanted - len(chosen), len(unlabelled)))
    return tuple(chosen)


def mmr_examples(
    train: Sequence[Instance],
    eval_instances: Sequence[Instance],
    spec: AdapterSpec,
    embedder: Embedder,
) -> dict[str, tuple[Instance, ...]]:
    """MMR examples per evaluated instance id (originals' inputs)."""
    originals: dict[str, Instance] = {}
    for inst in eval_instances:
        if inst.id not in originals or (inst.perturbation is None and originals[inst.id].perturbation is not None):
            originals[inst.id] = inst
    if spec.max_train_instances == 0 or not train or not originals:
        return {iid: () for iid in originals}
    train_vectors = np.asarray(embedder.encode([t.input for t in train]), dtype=np.float64)
    ids = list(originals)
    eval_vectors = np.asarray(embedder.encode([originals[i].input for i in ids]), dtype=np.float64)
    out: dict[str, tuple[Instance, ...]] = {}
    for row, iid in enumerate(ids):
        exclude = [j for j, t in enumerate(train) if t.id == iid]
        picks = mmr_select(eval_vectors[row], train_vectors, spec.max_train_instances, spec.mmr_lambda, exclude)
        out[iid] = tuple(train[j] for j in picks)
    return out


def select_examples(
    train: Sequence[Instance],
    eval_instances: Sequence[Instance],
    spec: AdapterSpec,
    *,
    seed: int,
    trials: int,
    embedder: Embedder | None = None,
) -> ExampleSelection:
    """Every selection of a run (all trials, all evaluated instances)."""
    if spec.selection == "mmr":
        if embedder is None:
            embedder, _ = choose_embedder([t.input for t in train])
        return ExampleSelection(per_instance=mmr_examples(train, eval_instances, spec, embedder))
    if spec.selection == "first":
        fixed = tuple(train[: spec.max_train_instances])
        return ExampleSelection(per_trial={t: fixed for t in range(trials)})
    return ExampleSelection(per_trial={t: helm_examples(train, spec, seed=seed, trial=t) for t in range(trials)})
