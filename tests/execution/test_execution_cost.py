"""Cost before, during and after a run: ``--plan``'s forecast in dollars, ``--max-cost``'s refusal and
budget, and the prices recorded per request, per run and per suite.

The model is an OpenAI-compatible loopback server driven through the real ``openai`` SDK."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import tests.support.rate_limited_server as loopback
from holistic.cli.run import main
from holistic.core.errors import SpecError
from holistic.core.types import ModelDeployment
from holistic.models.pricing import Spending, request_price
from holistic.models.registry import ModelRegistry
from tests.support.rate_limited_server import RateLimitedServer

PRICE = "price: {input_per_million: 1000, output_per_million: 4000}"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@pytest.fixture
def server() -> Iterator[RateLimitedServer]:
    with RateLimitedServer(limit=4, latency_s=0.0, max_requests=500, deadline_s=240) as running:
        yield running


def write_suite(tmp_path: Path, url: str, *, price: str = PRICE, extra_model: str = "") -> list[str]:
    """A models file with a priced loopback deployment, a spec of two runs of 8 requests; the argv."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  - name: loopback/tiny\n    provider: openai\n    model_id: tiny\n    context_window: 4096\n"
        f"    max_output_tokens: 64\n    args: {{base_url: '{url}', timeout_s: 10, max_attempts: 2}}\n"
        f"    capabilities: {{logprobs: true, completions: true, chat: false}}\n    {price}\n{extra_model}",
        encoding="utf-8",
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: priced\nseed: 0\nmodels: [loopback/tiny]\ndefaults:\n  max_eval_instances: 8\n"
        "  adaptation: {max_train_instances: 2, max_tokens: 5}\n  metrics: [accuracy, efficiency]\n"
        "runs:\n  - scenario: arithmetic\n    args: {digits: [1, 2], num_train: 10, num_test: 8}\n",
        encoding="utf-8",
    )
    return [str(spec), "--models-file", str(models), "--output-dir", str(tmp_path / "out")]


def dollars(text: str, label: str) -> list[float]:
    """The dollar figures on the line of the cost table that starts with ``label``."""
    line = next(x for x in text.splitlines() if x.strip().startswith(label) and "$" in x)
    return [float(part.strip("$,")) for part in line.split() if part.startswith("$")]


def test_plan_shows_dollars_online_and_in_batch_mode_per_run_and_in_total(
    tmp_path: Path, server: RateLimitedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = write_suite(tmp_path, server.url)
    assert main([*argv, "--plan"]) == 0
    out = capsys.readouterr().out
    assert "Cost forecast" in out
    online_expected, online_upper, batch_expected, batch_upper = dollars(out, "total")
    assert 0 < online_expected <= online_upper
    # batch mode is half the price for openai (its default batch_discount)
    assert batch_upper == pytest.approx(online_upper / 2, abs=0.01)
    assert batch_expected == pytest.approx(online_expected / 2, abs=0.01)
    # the upper bound: 16 requests of at most 5 tokens at $4000/M, plus the prompts at $1000/M
    prompt_tokens = int(
        next(x for x in out.splitlines() if x.startswith("Totals:")).split("~")[1].split()[0].replace(",", "")
    )
    assert online_upper == pytest.approx((prompt_tokens * 1000 + 16 * 5 * 4000) / 1e6, abs=0.01)
    per_run = [dollars(out, "arithmetic (digits=1)"), dollars(out, "arithmetic (digits=2)")]
    assert sum(run[1] for run in per_run) == pytest.approx(online_upper, abs=0.011)
    assert server.stats().served == 0  # a plan sends nothing


def test_plan_names_a_deployment_it_cannot_price(
    tmp_path: Path, server: RateLimitedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = write_suite(tmp_path, server.url, price="description: no price")
    assert main([*argv, "--plan"]) == 0
    out = capsys.readouterr().out
    assert "not priced (no price in the models file" in out and "loopback/tiny" in out.split("not priced")[1]
    assert main([*argv, "--max-cost", "100"]) == 2  # no budget can hold for a model without a price
    assert "loopback/tiny has no price" in capsys.readouterr().err
    assert server.stats().served == 0


def test_max_cost_below_the_forecast_refuses_before_the_first_request(
    tmp_path: Path, server: RateLimitedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = write_suite(tmp_path, server.url)
    assert main([*argv, "--max-cost", "0.10"]) == 2
    err = capsys.readouterr().err
    assert "--max-cost $0.10: refused before sending anything" in err and "online" in err and "batch" in err
    assert server.stats().served == 0
    assert not (tmp_path / "out" / "priced").exists()


def test_a_budget_reached_mid_run_leaves_a_partial_suite_that_a_higher_budget_completes(
    tmp_path: Path, server: RateLimitedServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The provider counts far more prompt tokens than the forecast's approximation (a real risk: the plan
    # approximates API tokenizers), so the budget that admitted the suite runs out half-way.
    answer = loopback.answer

    def costly(path: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = answer(path, body)
        reply["usage"]["prompt_tokens"] *= 10
        return reply

    monkeypatch.setattr(loopback, "answer", costly)
    argv = write_suite(tmp_path, server.url)
    capsys.readouterr()
    assert main([*argv, "--max-cost", "1.5", "-j", "1"]) == 3  # partial: some requests were not sent
    out = capsys.readouterr().out
    assert "REACHED" in out and "rerun with a higher --max-cost" in out
    sent = server.stats().served
    assert 0 < sent < 16
    suite = json.loads((tmp_path / "out" / "priced" / "suite.json").read_text())
    assert {r["status"] for r in suite["runs"]} != {"complete"}
    assert suite["cost_usd"] > 0
    spent = suite["cost_usd"]
    assert spent >= 1.5 and spent < 1.5 + 2 * max_request_usd(tmp_path)  # stops within the requests in flight

    assert main([*argv, "--max-cost", "10", "-j", "1"]) == 0
    out = capsys.readouterr().out
    assert server.stats().served == 16  # only the requests not sent before were sent now
    suite = json.loads((tmp_path / "out" / "priced" / "suite.json").read_text())
    assert {r["status"] for r in suite["runs"]} == {"complete"}
    total = 0.0
    for folder in (tmp_path / "out" / "priced" / "runs").iterdir():
        rows = pq.read_table(folder / "requests.parquet").to_pylist()
        assert all(r["cost_usd"] > 0 for r in rows)
        execution = json.loads((folder / "artifacts.json").read_text())["execution"]
        assert execution["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows))
        total += execution["cost_usd"]
    assert suite["cost_usd"] == pytest.approx(total)
    assert f"cost: ${total:,.2f}" in out
    assert_site_shows_costs(tmp_path / "out", total)


def assert_site_shows_costs(out: Path, total: float) -> None:
    """The run pages show each run's cost and the models page the model's."""
    from holistic.cli.summarize import main as summarize

    assert summarize(["--suite", "priced", "--output-dir", str(out)]) == 0
    site = out / "priced" / "site"
    shown = 0.0
    for run in (out / "priced" / "runs").iterdir():
        cost = json.loads((run / "artifacts.json").read_text())["execution"]["cost_usd"]
        page = (site / "runs" / f"{run.name}.html").read_text()
        assert f'<th scope="row">Cost</th><td class="cost">${cost:.4f}' in page
        shown += cost
    assert shown == pytest.approx(total)
    models = (site / "models.html").read_text()
    assert "Cost (USD)" in models and f">{total:.4f}</td>" in models  # the model's requests, summed


def max_request_usd(tmp_path: Path) -> float:
    """The most one request of the suite can cost (a prompt of 4,000 characters, 5 tokens)."""
    deployment = ModelRegistry(tmp_path / "models.yaml").get("loopback/tiny")
    return request_price(deployment, 10 * 4000 / 4, 5)


def test_price_records_batch_discount_and_cached_input(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n  - name: a/b\n    provider: openai\n    args: {base_url: 'http://127.0.0.1:9/v1'}\n"
        "    price: {input_per_million: 2, output_per_million: 8, cached_input_per_million: 0.5, "
        "batch_discount: 0.4}\n",
        encoding="utf-8",
    )
    deployment = ModelRegistry(path).get("a/b")
    assert request_price(deployment, 1_000_000, 1_000_000) == pytest.approx(10.0)
    assert request_price(deployment, 1_000_000, 1_000_000, batch=True) == pytest.approx(6.0)
    assert request_price(deployment, 1_000_000, 0, cached_tokens=500_000) == pytest.approx(1.25)
    default = ModelDeployment(name="x/y", provider="anthropic", model_id="y", price_input_per_million=2.0, priced=True)
    assert request_price(default, 1_000_000, 0, batch=True) == pytest.approx(1.0)  # the provider's 0.5


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("-1", "minimum"),
        (".nan", "finite"),
        (".inf", "finite"),
        ("'cheap'", "not of type 'number'"),
        ("1.5", "maximum"),
    ],
)
def test_a_bad_price_is_an_error_at_its_line(tmp_path: Path, value: str, words: str) -> None:
    field = "batch_discount" if value == "1.5" else "input_per_million"
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n  - name: a/b\n    provider: openai\n    price:\n      output_per_million: 1\n"
        f"      {field}: {value}\n",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as info:
        ModelRegistry(path)
    assert info.value.line == 6 and words in str(info.value), str(info.value)


def test_spending_refuses_once_reached_and_counts_refusals() -> None:
    spending = Spending(1.0)
    assert spending.allows()
    spending.add(0.6)
    spending.add(math.nan)  # a nonsense price is not spending
    assert spending.allows()
    spending.add(0.6)
    assert not spending.allows() and not spending.allows()
    assert spending.refused == 2 and spending.reached
    assert "--max-cost $1.00 was reached" in spending.refusal()


def test_the_python_api_holds_the_same_budget(tmp_path: Path, server: RateLimitedServer) -> None:
    import holistic
    from holistic.core.errors import LimitError
    from holistic.execution.options import RunOptions

    argv = write_suite(tmp_path, server.url)
    options = RunOptions(models_file=Path(argv[2]), max_cost_usd=0.10)
    with pytest.raises(LimitError, match=r"--max-cost \$0.10: refused before sending anything"):
        holistic.run(argv[0], output_dir=tmp_path / "out", options=options)
    assert server.stats().served == 0


def test_plan_prices_the_judges_at_their_deployments_prices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.execution.judge_fixture import MODELS, judge_entry
    from tests.execution.judge_fixture import write_suite as write_judged

    spec = write_judged(tmp_path, [judge_entry("loopback/judge")])
    (tmp_path / "models.yaml").write_text(
        MODELS + "  - name: loopback/judge\n    provider: openai\n    model_id: judge\n    max_output_tokens: 64\n"
        "    args: {base_url: 'http://127.0.0.1:9/v1'}\n    price: {input_per_million: 1000, output_per_million: 2000}\n",
        encoding="utf-8",
    )
    assert main([str(spec), "--models-file", str(tmp_path / "models.yaml"), "--plan"]) == 0
    out = capsys.readouterr().out
    online_expected, online_upper, _, batch_upper = dollars(out, "total")
    judges = float(out.split("(judges included: up to $")[1].split()[0])
    assert judges == pytest.approx(online_upper, abs=0.01) and online_upper > 0  # the candidate is free
    # four verdicts of at most 64 tokens (the judge's max_output_tokens) at $2000/M, and four prompts of the
    # template, the question and the answer at $1000/M
    assert 4 * 64 * 2000 / 1e6 < online_upper < 4 * (64 * 2000 + 300 * 1000) / 1e6
    assert batch_upper == pytest.approx(online_upper / 2, abs=0.01) and online_expected <= online_upper


def test_max_cost_holds_a_batch_deployment_to_the_batch_forecast(
    tmp_path: Path, server: RateLimitedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = write_suite(tmp_path, server.url)
    assert main([*argv, "--plan"]) == 0
    _, online_upper, _, batch_upper = dollars(capsys.readouterr().out, "total")
    between = f"{(online_upper + batch_upper) / 2:.4f}"
    assert main([*argv, "--max-cost", between]) == 2  # online, the suite may cost more than the budget
    assert "refused before sending anything" in capsys.readouterr().err
    # by batch it cannot: the pre-run check passes (this server has no batch API, so nothing is answered)
    main([*argv, "--max-cost", between, "--batch", "--no-wait"])
    assert "refused before sending anything" not in capsys.readouterr().err
    assert server.stats().served == 0


def test_each_judge_request_is_priced_in_annotations_parquet(tmp_path: Path, server: RateLimitedServer) -> None:
    from tests.execution.judge_fixture import MODELS, judge_entry
    from tests.execution.judge_fixture import write_suite as write_judged

    spec = write_judged(tmp_path, [judge_entry("loopback/judge")])
    (tmp_path / "models.yaml").write_text(
        MODELS + "  - name: loopback/judge\n    provider: openai\n    model_id: judge\n    max_output_tokens: 64\n"
        f"    args: {{base_url: '{server.url}', timeout_s: 10, max_attempts: 2}}\n"
        "    capabilities: {chat: true}\n    price: {input_per_million: 1000, output_per_million: 2000}\n",
        encoding="utf-8",
    )
    main([str(spec), "--models-file", str(tmp_path / "models.yaml"), "--output-dir", str(tmp_path / "out")])
    tables = list((tmp_path / "out").rglob("annotations.parquet"))
    assert len(tables) == 1
    rows = pq.read_table(tables[0]).to_pylist()
    assert len(rows) == 4 and server.stats().served >= 4
    for row in rows:  # each verdict's own price: its prompt and answer at the judge's prices, online
        assert 0 < row["cost_usd"] < row["attempts"] * (300 * 1000 + 64 * 2000) / 1e6 and row["batch"] is False
