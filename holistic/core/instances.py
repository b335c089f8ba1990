"""Scenario data: instances, their references and the splits they belong to.

Frozen dataclasses, values only (see :mod:`holistic.core.types`, which re-exports every
name here). Mappings inside are stored as plain ``dict``; treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

CORRECT_TAG = "correct"

TRAIN_SPLIT = "train"
VALID_SPLIT = "valid"
TEST_SPLIT = "test"
EVAL_SPLITS = (VALID_SPLIT, TEST_SPLIT)

SAMPLE_UNIT_KEY = "sample_unit"
"""Instance metadata key: instances sharing a value are down-sampled together (kept or
dropped as one unit, e.g. a needle record and its zero-needle twin)."""
SAMPLE_STRATUM_KEY = "sample_stratum"
"""Instance metadata key: down-sampling takes units from every stratum in turn, so cells
(e.g. task x length) stay balanced."""
CHAT_HISTORY_KEY = "chat_history"
"""Instance metadata key: the turns of a conversation before the instance's input (its last
user turn), as ``[{"role", "content"}, ...]``. Chat requests send them as messages before
it (HELM's chat adaptation); a plain prompt shows them as ``USER: ...`` / ``ASSISTANT: ...``
paragraphs, then ``USER: `` and the input."""


@dataclass(frozen=True)
class Reference:
    """One reference output of an instance (a gold answer, or a choice)."""

    output: str
    """The reference text (an answer, or the text of one choice)."""

    tags: tuple[str, ...] = ()
    """Tags such as ``"correct"``; a reference is correct when it carries ``"correct"``."""

    relevance: int | None = None
    """Ranking: the graded relevance judgement of this passage (e.g. 0-3 on TREC); ``None``
    when the data has no grades (then a ``correct`` passage counts as grade 1, others 0)."""

    first_stage_rank: int | None = None
    """Ranking: this passage's rank (1 = top) in the first-stage retriever's list; ``None``
    for a passage that list did not retrieve (added only because it is judged)."""

    @property
    def is_correct(self) -> bool:
        return CORRECT_TAG in self.tags


@dataclass(frozen=True)
class PerturbationDescription:
    """Which perturbation produced an instance (``None`` on an original)."""

    name: str
    """Registered perturbation name, e.g. ``"typos"`` or ``"dialect"``."""

    robustness: bool = False
    """Counts toward the robustness category (worst case over variants)."""

    fairness: bool = False
    """Counts toward the fairness category (worst case over variants)."""

    args: tuple[tuple[str, Any], ...] = ()
    """The perturbation's arguments, sorted by name, for display and hashing."""


@dataclass(frozen=True)
class Instance:
    """One example of a scenario: an input and its references."""

    id: str
    """Stable identifier, unique within the scenario (perturbed variants share it)."""

    input: str
    """The input text (question, passage, document...)."""

    references: tuple[Reference, ...] = ()
    """Gold answers and/or choices; for multiple choice, the choices in order."""

    split: str = TEST_SPLIT
    """``train``, ``valid`` or ``test``."""

    sub_split: str | None = None
    """A finer partition (e.g. a CivilComments identity group)."""

    perturbation: PerturbationDescription | None = None
    """Set on perturbed variants; ``None`` on the original."""

    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form per-instance facts (subject, gender, needle positions...)."""

    continuation: str | None = None
    """Partial scoring (WinoGrande): the text scored after each choice, where each
    reference is that choice's own context; ``None`` for ordinary instances."""

    @property
    def correct_references(self) -> tuple[Reference, ...]:
        return tuple(r for r in self.references if r.is_correct)

    @property
    def first_correct(self) -> Reference | None:
        refs = self.correct_references
        return refs[0] if refs else None

    def with_input(self, text: str, perturbation: PerturbationDescription) -> Instance:
        return replace(self, input=text, perturbation=perturbation)
