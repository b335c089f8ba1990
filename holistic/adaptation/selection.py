"""Choosing in-context examples from the training instances.

- ``helm`` (HELM's procedure): per trial, a generator seeded from the run seed, the
  spec seed and the trial index picks ``max_train_instances`` examples that are then
  used for every evaluated instance of that trial. Labels (the correct letter for joint
  multiple choice, the first correct reference otherwise) are ordered by frequency,
  most frequent first (ties in a seeded random order), and one example of each label
  is taken in that order, so the most frequent classes are covered first; remaining
  slots are filled at random from the rest.
- ``fixed``: the first ``max_train_instances`` training instances, in order.
- ``mmr`` (LLMeBench's): per evaluated instance, maximal marginal relevance over
  sentence embeddings of the inputs, trading relevance to the evaluated input against
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

from holistic.adaptation.blocks import example_answer
from holistic.adaptation.embedding import Embedder, default_embedder
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
    """HELM's class-covering seeded draw for one trial."""
    k = min(spec.max_train_instances, len(train))
    if k == 0:
        return ()
    rng = random.Random(stable_seed("in-context-examples", seed, spec.seed, trial))
    by_label: dict[str, list[int]] = {}
    for i, inst in enumerate(train):
        label = example_answer(inst, spec.method) if inst.references else ""
        if label:
            by_label.setdefault(label, []).append(i)
    labels = list(by_label)
    rng.shuffle(labels)
    labels.sort(key=lambda label: -len(by_label[label]))  # stable: equal counts keep the seeded order
    chosen: list[int] = []
    for label in labels[:k]:
        chosen.append(rng.choice(by_label[label]))
    taken = set(chosen)
    rest = [i for i in range(len(train)) if i not in taken]
    chosen += rng.sample(rest, k - len(chosen))
    return tuple(train[i] for i in chosen)


def mmr_examples(
    train: Sequence[Instance], eval_instances: Sequence[Instance], spec: AdapterSpec, embedder: Embedder,
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
        return ExampleSelection(per_instance=mmr_examples(train, eval_instances, spec, embedder or default_embedder()))
    if spec.selection == "fixed":
        fixed = tuple(train[: spec.max_train_instances])
        return ExampleSelection(per_trial={t: fixed for t in range(trials)})
    return ExampleSelection(per_trial={t: helm_examples(train, spec, seed=seed, trial=t) for t in range(trials)})
