"""Passage ranking from yes/no relevance answers (HELM's MS MARCO setting).

With the ``ranking_binary`` method every (query, passage) pair gets a prompt
asking whether the passage answers the query (``reference_index`` = the passage's
position among the instance's references).

From a generated answer (role ``main``, HELM's setting) passages are ordered as HELM
orders them (``RankingMetric.object_to_score_binary_ranking`` in crfm-helm 0.5.16):
first by the answer's class — "Yes" (stripped, case-insensitive) before "No" before
anything else (a failed request counts as anything else, with log-probability 0) —
then, among "Yes" answers, by the answer's log-probability (more confident first),
and among the others by its negation (less confident "No" first); remaining ties keep
the references' order.

From the two log-likelihood states holistic's own adaptation makes (roles ``yes`` and
``no``, scoring the continuations " Yes" and " No"), a passage's score is
``P(yes) / (P(yes) + P(no)) = sigmoid(logprob_yes - logprob_no)``; passages are
ranked by it, ties going to the better first-stage rank, then to the lower reference
index. A passage whose requests failed scores 0.

Relevance judgements come from the references: ``Reference.relevance`` for graded
judgements (MS MARCO TREC, 0-3), else 1 for a ``correct`` passage and 0 otherwise.
``Reference.first_stage_rank`` is the rank of a passage retrieved by the first stage
(e.g. BM25's top 30); passages without one were added only because they are judged.

- **vanilla**: only first-stage passages are reranked (all passages when none is
  marked) — a recall-limited lower bound;
- **boosted** (``_boosted``): every judged passage is added to the first-stage list
  and the whole set is reranked — HELM's intuitive upper bound. Equal to vanilla
  when the scenario marks no passage as first-stage-only.

Values per query: ``rr@10`` (reciprocal rank of the first relevant — ``correct`` —
passage within the top 10, else 0) and ``ndcg@10`` (linear gains
``grade / log2(rank + 1)``, normalised by the ideal ordering of all judged passages of
the query, as trec_eval's ``ndcg_cut``). A query with no relevant passage gets no RR
values; one with no positive grade gets no NDCG values.

HELM's own measures (its ``RankingMetric`` with trec_eval's definitions, under HELM's
names), per query: ``Success@k`` and ``Recall@k`` (k = 1, 2, 3, 5, 10, 20), ``RR@k``
(k = 5, 10, 20) and, where the judgements are graded (metadata ``graded``: TREC),
``NDCG@k`` (k = 5, 10, 20), over every passage of the query; and the same over the
first-stage passages only, named ``<measure> (topk=N)`` with the first-stage depth N
(metadata ``first_stage_topk``). A relevant passage is a ``correct`` one (on TREC HELM
binarises grade 1 to 0, the threshold the scenario's tag already applies); recall divides
by the relevant passages among all the query's references, and NDCG's gains are the grades.
A query without a relevant passage (HELM evaluates none) gets none of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.specs import RANKING
from holistic.core.types import AdapterSpec, ModelDeployment, Reference, RequestRole, RequestState
from holistic.metrics.base import EVERY_TASK, BaseMetric, info, scoring_problem
from holistic.metrics.states import Unit, group_units, succeeded

CUTOFF = 10
HELM_BINARY_CUTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("Success", (1, 2, 3, 5, 10, 20)),
    ("Recall", (1, 2, 3, 5, 10, 20)),
    ("RR", (5, 10, 20)),
)
HELM_NDCG_CUTS = (5, 10, 20)
HELM_TOPK = 30
"""The first-stage depth of HELM's MS MARCO runs (``valid_topk=30``), whose stats are declared."""
YES_ROLE = "yes"
NO_ROLE = "no"


@dataclass(frozen=True)
class Candidate:
    """One passage of a query with its model score and judgement."""

    index: int
    score: float
    grade: float
    first_stage_rank: int | None
    relevant: bool = False
    """Tagged ``correct`` (the scenario's relevance threshold, e.g. grade >= 2 on TREC)."""
    answer_class: int = 0
    """HELM's class of a generated answer: 2 "Yes", 1 "No", 0 anything else (0 for scored passages)."""
    generated: bool = False
    """Ordered as HELM orders generated answers (class, signed log-probability, reference order)."""


def grade_of(reference: Reference) -> float:
    if reference.relevance is not None:
        return float(reference.relevance)
    return 1.0 if reference.is_correct else 0.0


def scored_yes_probability(yes: RequestState, no: RequestState) -> float | None:
    """sigmoid(logprob(" Yes") - logprob(" No")) from two log-likelihood states (``None`` if one failed)."""
    if not (succeeded(yes) and succeeded(no)):
        return None
    assert yes.result is not None and no.result is not None
    if not (yes.result.completions and no.result.completions):
        return None
    margin = yes.result.completions[0].logprob - no.result.completions[0].logprob
    if margin >= 0:
        return 1.0 / (1.0 + math.exp(-margin))
    return math.exp(margin) / (1.0 + math.exp(margin))


def helm_answer_key(state: RequestState | None) -> tuple[int, float]:
    """HELM's sort key of a generated yes/no answer: (class, signed log-probability)."""
    text, logprob = "missing", 0.0
    if state is not None and state.result is not None and state.result.completions:
        completion = state.result.completions[0]
        text = completion.text
        logprob = sum(t.logprob for t in completion.tokens) if completion.tokens else completion.logprob
    answer = text.strip().lower()
    if answer == "yes":
        return 2, logprob
    if answer == "no":
        return 1, -logprob
    return 0, -logprob


def rank(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Best first: by answer class and score, then (scored passages only) first-stage rank, then reference index."""
    return sorted(
        candidates,
        key=lambda c: (
            -c.answer_class,
            -c.score,
            c.first_stage_rank if c.first_stage_rank is not None and not c.generated else math.inf,
            c.index,
        ),
    )


def reciprocal_rank(ranked: Sequence[Candidate], k: int = CUTOFF) -> float:
    for position, candidate in enumerate(ranked[:k], start=1):
        if candidate.relevant:
            return 1.0 / position
    return 0.0


def ndcg(ranked: Sequence[Candidate], all_grades: Sequence[float], k: int = CUTOFF) -> float:
    def dcg(grades: Sequence[float]) -> float:
        return sum(g / math.log2(position + 1) for position, g in enumerate(grades[:k], start=1))

    ideal = dcg(sorted(all_grades, reverse=True))
    return dcg([c.grade for c in ranked]) / ideal if ideal > 0 else 0.0


def _by_reference(states: Sequence[RequestState]) -> dict[int, RequestState]:
    out: dict[int, RequestState] = {}
    for state in states:
        if state.reference_index is not None:
            out.setdefault(state.reference_index, state)
    return out


def candidates(unit: Unit) -> list[Candidate]:
    """Every passage of the unit's query with its score, grade and first-stage rank."""
    yes, no = _by_reference(unit.with_role(YES_ROLE)), _by_reference(unit.with_role(NO_ROLE))
    generated = _by_reference(unit.with_role(RequestRole.MAIN))
    out = []
    for i, reference in enumerate(unit.instance.references):
        grade, stage = grade_of(reference), reference.first_stage_rank
        if i in yes and i in no:
            score = scored_yes_probability(yes[i], no[i])
            out.append(Candidate(i, score if score is not None else 0.0, grade, stage, reference.is_correct))
        else:
            answer_class, signed = helm_answer_key(generated.get(i))
            out.append(Candidate(i, signed, grade, stage, reference.is_correct, answer_class, generated=True))
    return out


class RankingMetric(BaseMetric):
    """RR@10 and NDCG@10 of the reranked passages, vanilla and boosted."""

    name = "ranking"
    category = "accuracy"
    accuracy_tasks = EVERY_TASK
    INFOS = (
        info("rr@10", "accuracy", "Reciprocal rank of the first relevant passage in the top 10 (first-stage list)."),
        info("ndcg@10", "accuracy", "NDCG@10 with graded judgements (first-stage list reranked)."),
        info("rr@10_boosted", "accuracy", "RR@10 with every judged passage added to the first-stage list."),
        info("ndcg@10_boosted", "accuracy", "NDCG@10 with every judged passage added to the first-stage list."),
        *(
            info(f"{name}{suffix}", "accuracy", f"HELM's {name} over {where} (trec_eval's definition).")
            for suffix, where in (
                ("", "every passage of the query"),
                (f" (topk={HELM_TOPK})", "the first-stage top 30"),
            )
            for name in (
                *(f"{m}@{k}" for m, cuts in HELM_BINARY_CUTS for k in cuts),
                *(f"NDCG@{k}" for k in HELM_NDCG_CUTS),
            )
        ),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        # under protocol: helm the answers are generated (HELM's yes/no), which needs no prompt logprobs
        return scoring_problem(adapter, deployment, RANKING, "ranking metrics need", "yes/no answers")

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit in group_units(states):
            passages = candidates(unit)
            grades = [c.grade for c in passages]
            first_stage = [c for c in passages if c.first_stage_rank is not None] or passages
            vanilla, boosted = rank(first_stage), rank(passages)
            if any(c.relevant for c in passages):
                result.per_instance.append(unit.stat("rr@10", reciprocal_rank(vanilla)))
                result.per_instance.append(unit.stat("rr@10_boosted", reciprocal_rank(boosted)))
            if any(g > 0 for g in grades):
                result.per_instance.append(unit.stat("ndcg@10", ndcg(vanilla, grades)))
                result.per_instance.append(unit.stat("ndcg@10_boosted", ndcg(boosted, grades)))
            if not any(c.relevant for c in passages):
                continue  # HELM evaluates only queries with a relevant passage
            metadata = unit.instance.metadata
            graded = bool(metadata.get("graded", False))
            for name, value in helm_measures(boosted, passages, graded).items():
                result.per_instance.append(unit.stat(name, value))
            depth = metadata.get("first_stage_topk")
            if depth is not None and any(c.first_stage_rank is not None for c in passages):
                for name, value in helm_measures(vanilla, passages, graded).items():
                    result.per_instance.append(unit.stat(f"{name} (topk={depth})", value))
        return result


def helm_measures(ranked: Sequence[Candidate], passages: Sequence[Candidate], graded: bool) -> dict[str, float]:
    """HELM's measures of one query's ``ranked`` list (best first), judged against all its ``passages``."""
    relevant = sum(c.relevant for c in passages)
    out: dict[str, float] = {}
    for measure, cuts in HELM_BINARY_CUTS:
        for k in cuts:
            found = sum(c.relevant for c in ranked[:k])
            if measure == "Success":
                out[f"Success@{k}"] = 1.0 if found else 0.0
            elif measure == "Recall":
                out[f"Recall@{k}"] = found / relevant if relevant else 0.0
            else:
                out[f"RR@{k}"] = reciprocal_rank(ranked, k)
    if graded:
        grades = [c.grade for c in passages]
        for k in HELM_NDCG_CUTS:
            out[f"NDCG@{k}"] = ndcg(ranked, grades, k)
    return out
