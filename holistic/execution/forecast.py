"""What a suite will cost, before it runs: ``--plan``'s dollars and ``--max-cost``'s check.

Per run, the forecast prices the run's requests at its deployment's prices (the models file's
``price``, :mod:`holistic.models.pricing`), online and in batch mode (the provider's
``batch_discount`` off), and its judges' requests at the judges' deployments' prices:

- prompt tokens as ``--plan`` counts them (:mod:`holistic.execution.prompt_sizes`);
- output tokens twice: the **upper bound**, every request generating ``max_tokens`` (the run's,
  capped by the deployment's ``max_output_tokens``, times ``num_outputs``), and the **expected**
  figure, from this machine's recorded completions of the same model on the same scenario
  (``output_lengths.json`` beside the request cache, added to by every run), else from the
  scenario's reference answers, else the upper bound; log-likelihood scoring generates nothing;
- a judge request's prompt is the judge's template plus the candidate's prompt and answer; its output
  is bounded by the judge's ``max_tokens``. Retries of unparseable verdicts are not counted.

A deployment without a price (an API model whose models-file entry has no ``price``) cannot be
priced: the forecast names it, and ``--max-cost`` refuses a suite that needs it. Answers already in
the request cache cost nothing again, but the forecast counts every request: it is a bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from holistic.core.types import ModelDeployment, RunSpec
from holistic.execution.costs import OutputLengths
from holistic.models.pricing import batch_discount, format_usd, is_priced, request_price
from holistic.models.registry import runs_in_process


@dataclass(frozen=True)
class CostForecast:
    """One run's (or a suite's) forecast in US dollars."""

    online_expected: float = 0.0
    online_upper: float = 0.0
    batch_expected: float = 0.0
    batch_upper: float = 0.0
    judges_upper: float = 0.0
    """The judges' part of ``online_upper``."""
    expected_from: str = ""
    """How the expected output length was had: ``recorded``, ``references`` or ``upper bound``."""
    unpriced: tuple[str, ...] = ()
    """Deployments the run needs that have no price (their requests are not in the figures)."""
    unsized: bool = False
    """The run's requests or prompt tokens are unknown (the figures leave it out)."""

    def __add__(self, other: CostForecast) -> CostForecast:
        return CostForecast(
            self.online_expected + other.online_expected,
            self.online_upper + other.online_upper,
            self.batch_expected + other.batch_expected,
            self.batch_upper + other.batch_upper,
            self.judges_upper + other.judges_upper,
            "",
            tuple(dict.fromkeys((*self.unpriced, *other.unpriced))),
            self.unsized or other.unsized,
        )


FREE = CostForecast(expected_from="free")


def forecast_run(
    run: RunSpec,
    deployment: ModelDeployment,
    *,
    requests: int | None,
    prompt_tokens: int | None,
    reference_tokens: int | None,
    judge_deployment: Callable[[str], ModelDeployment],
    recorded: OutputLengths | None,
) -> CostForecast:
    """The run's forecast (see the module docstring)."""
    if not run.judges and runs_in_process(deployment.provider):
        return FREE  # a model on this machine, unjudged: nothing to price (a plan of 50,000 runs stays prompt)
    names = [deployment.name, *(j.model for j in run.judges)]
    deployments = {deployment.name: deployment, **{j.model: judge_deployment(j.model) for j in run.judges}}
    unpriced = tuple(dict.fromkeys(n for n in names if not is_priced(deployments[n])))
    if requests is None or prompt_tokens is None:
        return CostForecast(unpriced=unpriced, unsized=True)
    adapter = run.adapter
    generates = not adapter.scores_loglikelihood
    upper_out = min(adapter.max_tokens, deployment.max_output_tokens) * adapter.num_outputs if generates else 0
    mean, source = float(upper_out), "upper bound"
    seen = recorded.mean(run.model, run.scenario.name) if recorded is not None and generates else None
    if seen is not None:
        mean, source = min(seen, upper_out), "recorded"
    elif reference_tokens is not None and generates and requests:
        mean, source = min(reference_tokens / requests * adapter.num_outputs, upper_out), "references"
    per_prompt = prompt_tokens / requests if requests else 0.0
    sums = [0.0, 0.0, 0.0, 0.0, 0.0]  # online expected, online upper, batch expected, batch upper, judges upper
    if deployment.name not in unpriced:
        _add(sums, deployment, requests, per_prompt, mean, upper_out)
    for judge in run.judges:
        judged = deployments[judge.model]
        if judge.model in unpriced:
            continue
        from holistic.execution.prompt_sizes import approx_text_tokens

        template = approx_text_tokens(judge.template)
        judge_upper = min(judge.max_tokens, judged.max_output_tokens)
        before = sums[1]
        _add(
            sums,
            judged,
            requests,
            template + per_prompt + mean,
            judge_upper,
            judge_upper,
            prompt_upper=upper_out - mean,
        )
        sums[4] += sums[1] - before
    online_expected, online_upper, batch_expected, batch_upper, judges_upper = sums
    return CostForecast(
        online_expected, online_upper, batch_expected, batch_upper, judges_upper, source, unpriced=unpriced
    )


def _add(
    sums: list[float],
    deployment: ModelDeployment,
    requests: int,
    prompt: float,
    expected_out: float,
    upper_out: float,
    *,
    prompt_upper: float = 0.0,
) -> None:
    """Add ``requests`` requests of ``prompt`` tokens (``prompt_upper`` more at the upper bound) to ``sums``."""
    for i, batch in ((0, False), (2, True)):
        sums[i] += requests * request_price(deployment, prompt, expected_out, batch=batch)
        sums[i + 1] += requests * request_price(deployment, prompt + prompt_upper, upper_out, batch=batch)


def budget_upper(
    forecast: CostForecast,
    candidate: ModelDeployment,
    judges: Sequence[ModelDeployment],
    by_batch: Callable[[ModelDeployment], bool],
) -> float:
    """The upper bound ``--max-cost`` holds a run to: the candidate's requests at the batch price when its
    deployment goes by batch (``by_batch``), the judges' at theirs when every judge does (else online)."""
    own = forecast.online_upper - forecast.judges_upper
    if by_batch(candidate):
        own *= 1.0 - batch_discount(candidate)
    graded = forecast.judges_upper
    if judges and all(by_batch(j) for j in judges):
        graded *= 1.0 - min(batch_discount(j) for j in judges)
    return own + graded


def total(forecasts: Sequence[CostForecast | None]) -> CostForecast:
    """The suite's forecast: the sum of its runs'."""
    out = CostForecast()
    for forecast in forecasts:
        if forecast is not None:
            out = out + forecast
    return out


def cost_lines(runs: Sequence[tuple[str, CostForecast | None]]) -> list[str]:
    """``--plan``'s cost section: per run and in total, online and in batch mode, expected and upper bound."""
    shown = [(name, f) for name, f in runs if f is not None]
    if not shown:
        return []
    suite = total([f for _, f in shown])
    if suite.online_upper == 0 and not suite.unpriced:
        return ["Cost: $0.00 (every model runs on this machine or is free)"]
    lines = ["Cost forecast (US dollars; expected / upper bound, the upper bound with every answer max_tokens long):"]
    table = [("run", "online", "batch", "expected output from")]
    for name, f in shown:
        table.append((name, _pair(f.online_expected, f.online_upper), _pair(f.batch_expected, f.batch_upper), _how(f)))
    table.append(
        ("total", _pair(suite.online_expected, suite.online_upper), _pair(suite.batch_expected, suite.batch_upper), "")
    )
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    for row in table:
        cells = [row[0].ljust(widths[0]), row[1].rjust(widths[1]), row[2].rjust(widths[2]), row[3]]
        lines.append("  " + "  ".join(cells).rstrip())
    if suite.judges_upper:
        lines.append(f"  (judges included: up to {format_usd(suite.judges_upper)} online)")
    if suite.unpriced:
        lines.append(
            f"  not priced (no price in the models file; their requests are left out): {', '.join(suite.unpriced)}"
        )
    unsized = sum(1 for _, f in shown if f.unsized)
    if unsized:
        lines.append(f"  {unsized} run(s) not priced: their size is unknown")
    return lines


def _pair(expected: float, upper: float) -> str:
    return f"{format_usd(expected)} / {format_usd(upper)}"


def _how(forecast: CostForecast) -> str:
    if forecast.unsized:
        return "size unknown"
    return forecast.expected_from + (f"; not priced: {', '.join(forecast.unpriced)}" if forecast.unpriced else "")
