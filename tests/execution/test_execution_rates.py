"""Which measured speed a run's estimate reads: the kind of work its requests do."""

from __future__ import annotations

import pytest

from holistic.core.specs import AdapterSpec
from holistic.execution.rates import GENERATION, SCORING, work_kind
from holistic.spec.protocol import resolve_protocol


@pytest.mark.parametrize(
    ("method", "protocol", "kind"),
    [
        ("generation", "holistic", GENERATION),
        ("multiple_choice_joint", "helm", SCORING),  # one generated token
        ("multiple_choice_separate_original", "helm", SCORING),
        ("multiple_choice_separate_calibrated", "holistic", SCORING),
        ("language_modeling", "holistic", SCORING),
        ("ranking_binary", "holistic", SCORING),  # ` Yes` / ` No` scored by log-likelihood
        ("ranking_binary", "helm", GENERATION),  # HELM's generated yes/no answer per passage
    ],
)
def test_a_run_is_estimated_by_the_work_its_requests_do(method: str, protocol: str, kind: str) -> None:
    adapter = resolve_protocol(AdapterSpec(method=method, protocol=protocol), "msmarco", {})  # type: ignore[arg-type]
    assert work_kind(adapter) == kind
    assert adapter.scores_loglikelihood == (kind == SCORING and method != "multiple_choice_joint")
