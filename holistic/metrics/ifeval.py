"""IFEval's scores (Zhou et al., 2023): did the response follow each verifiable instruction?

Values, under the names their authors gave them:

- ``ifeval_strict_accuracy`` (HELM's): per prompt, the fraction of its instructions the
  response follows, checked on the response stripped of surrounding whitespace, as
  HELM 0.5.16 does; the run value is the mean over prompts (equal to HELM's own
  ``IFEvalMetric`` on ~6,800 responses: ``tests/conformance/test_conformance_capabilities.py``).
- ``prompt_level_strict_acc`` / ``prompt_level_loose_acc`` (the authors' and
  lm-evaluation-harness's): 1 when the response follows every instruction of its
  prompt, strictly / loosely (some variant of the response with its first and/or last
  line dropped, and/or ``*`` removed, follows it).
- ``inst_level_strict_acc`` / ``inst_level_loose_acc``: the fraction of all
  instructions of the run that are followed (pooled over instructions, not averaged
  over prompts: a run value, count = number of instructions).

The authors' and lm-evaluation-harness's verdicts are on the response as generated
(no stripping); they equal lm-evaluation-harness 0.4.13's on the instructions of all 541
prompts but the two whose letter the peer replaces at random (see
:mod:`holistic.metrics.ifeval_checks`; ``tools/conformance/ifeval.py``,
``tests/metrics/test_metrics_ifeval_golden.py``).
Each prompt-level row keeps every instruction's verdicts in its
``details`` (shown in the instance browser).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, MetricName, ModelDeployment, RequestState, Stat
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import first_main, group_units, metric_name, outputs

HELM_STRICT = "ifeval_strict_accuracy"
PROMPT_STRICT = "prompt_level_strict_acc"
PROMPT_LOOSE = "prompt_level_loose_acc"
INST_STRICT = "inst_level_strict_acc"
INST_LOOSE = "inst_level_loose_acc"


def _info(name: str, description: str) -> Any:
    return info(name, "accuracy", description, needs_references=False, needs_generation=True)


class IFEvalMetric(BaseMetric):
    """IFEval: strict and loose instruction following, per prompt and per instruction."""

    name = "ifeval"
    category = "accuracy"
    INFOS = (
        _info(HELM_STRICT, "Fraction of the prompt's instructions followed by the stripped response (HELM)."),
        _info(PROMPT_STRICT, "The response follows every instruction of its prompt (strict)."),
        _info(PROMPT_LOOSE, "Some loose variant of the response follows every instruction of its prompt."),
        _info(INST_STRICT, "Fraction of all instructions followed (strict; pooled over instructions)."),
        _info(INST_LOOSE, "Fraction of all instructions followed by some loose variant (pooled over instructions)."),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if "ifeval" not in info.tags:
            return "IFEval's checkers apply to scenarios with IFEval instructions (tag ifeval)"
        if adapter.method != "generation":
            return f"instruction following needs the generation method, not {adapter.method}"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        # The checkers (and the tokenizer data they load) only when IFEval is scored: every
        # run's metric selection imports this module to ask whether it applies.
        from holistic.metrics.ifeval_checks import loose_verdicts, strict_verdicts

        result = MetricResult()
        pooled: dict[tuple[MetricName, str], list[float]] = {}
        for unit in group_units(states):
            state = first_main(unit)
            if state is None:
                continue
            ids = list(unit.instance.metadata["instruction_ids"])
            args = list(unit.instance.metadata["instruction_kwargs"])
            response = outputs(state)[0]
            strict, loose = strict_verdicts(ids, args, response), loose_verdicts(ids, args, response)
            helm = strict_verdicts(ids, args, response.strip())
            details = {"instruction_ids": ids, "strict": list(strict), "loose": list(loose), "helm_strict": list(helm)}
            result.per_instance.append(unit.stat(HELM_STRICT, sum(helm) / len(helm)))
            result.per_instance.append(replace(unit.stat(PROMPT_STRICT, all(strict)), details=details))
            result.per_instance.append(unit.stat(PROMPT_LOOSE, all(loose)))
            base = metric_name(unit.instance, INST_STRICT)
            pooled.setdefault((base, INST_STRICT), []).extend(map(float, strict))
            pooled.setdefault((base, INST_LOOSE), []).extend(map(float, loose))
        for (base, name), values in sorted(pooled.items(), key=lambda item: (_order(item[0][0]), item[0][1])):
            result.run_stats.append(Stat.of(replace(base, name=name), values))
        return result


def _order(name: MetricName) -> tuple[str, str, str]:
    return (name.split, name.sub_split or "", name.perturbation or "")
