"""The anthropic provider at the protocol level, with recorded Messages API bodies and no network."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from holistic.core.types import Capabilities, Message, ModelDeployment, Request
from holistic.models.anthropic_client import AnthropicClient
from holistic.models.reliability import RetryPolicy

httpx: Any = __import__("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

MESSAGE_BODY = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-3-5-haiku-20241022",
    "content": [{"type": "text", "text": "The capital of France is Paris.\nIt is also"}],
    "stop_reason": "max_tokens",
    "stop_sequence": None,
    "usage": {"input_tokens": 21, "output_tokens": 12},
}

DEPLOYMENT = ModelDeployment(
    name="anthropic/claude-3-5-haiku-20241022",
    provider="anthropic",
    model_id="claude-3-5-haiku-20241022",
    capabilities=Capabilities(chat=True),
    price_input_per_million=0.80,
    price_output_per_million=4.00,
    api_key_env="TEST_ANTHROPIC_KEY",
    max_output_tokens=8192,
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> tuple[AnthropicClient, list[tuple[str, dict[str, Any], Any]]]:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test-0123456789abcdef")
    calls: list[tuple[str, dict[str, Any], Any]] = []

    def handler(request: Any) -> Any:
        calls.append((request.url.path, json.loads(request.content), request.headers))
        return httpx.Response(200, json=MESSAGE_BODY)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    client = AnthropicClient(DEPLOYMENT, http_client=http, policy=RetryPolicy(jitter=0.0), sleep=lambda s: None)
    return client, calls


def test_messages_request_and_response(server: tuple[AnthropicClient, list[Any]]) -> None:
    client, calls = server
    request = Request(
        model=DEPLOYMENT.name,
        messages=(
            Message("system", "Answer in one line."),
            Message("user", "Capital of France?"),
            Message("assistant", "The capital is "),
        ),
        max_tokens=20,
        temperature=0.0,
        stop=("\n", "###"),
    )
    [result] = client.process([request])
    assert result.success, result.error
    path, body, headers = calls[0]
    assert path == "/v1/messages"
    # The key from the named environment variable authenticates the call (header name varies by SDK version).
    assert "sk-ant-test-0123456789abcdef" in (headers.get("x-api-key") or headers.get("authorization") or "")
    assert body["model"] == "claude-3-5-haiku-20241022"
    assert body["system"] == "Answer in one line."
    # A prefill may not end in whitespace; whitespace-only stops are refused by the API.
    assert body["messages"] == [
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "The capital is"},
    ]
    assert body["stop_sequences"] == ["###"]
    assert body["max_tokens"] == 20 and body["temperature"] == 0.0
    completion = result.completions[0]
    assert completion.text == "The capital of France is Paris."  # cut at "\n" here
    assert completion.finish_reason == "stop" and completion.tokens == ()
    assert not result.has_logprobs
    assert (result.prompt_tokens, result.completion_tokens) == (21, 12)
    assert result.cost_usd == pytest.approx((21 * 0.80 + 12 * 4.00) / 1e6)
    assert result.engine == "anthropic-api" and result.attempts == 1


def test_plain_prompt_and_several_samples(server: tuple[AnthropicClient, list[Any]]) -> None:
    client, calls = server
    [result] = client.process([Request(model="m", prompt="Capital of France?", num_completions=2, temperature=1.0)])
    assert len(calls) == 2 and len(result.completions) == 2
    assert calls[0][1]["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert "system" not in calls[0][1] and "stop_sequences" not in calls[0][1]
    assert result.completions[0].finish_reason == "length"
    assert result.completion_tokens == 24


def test_loglikelihood_is_recorded_as_not_supported_without_a_call(server: tuple[AnthropicClient, list[Any]]) -> None:
    client, calls = server
    results = client.process(
        [
            Request(model="m", kind="loglikelihood", prompt="The capital of France is", continuation=" Paris"),
            Request(model="m", prompt="Capital of France?"),
        ]
    )
    assert not results[0].success and results[0].error_kind == "unsupported"
    assert "not supported" in (results[0].error or "")
    assert results[1].success
    assert len(calls) == 1


def test_a_server_that_reports_no_usage_gets_its_tokens_estimated(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Messages-compatible proxy may omit usage: the efficiency metrics then count the
    # tokens with the deployment's tokenizer, as the openai provider does, instead of 0.
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test-0123456789abcdef")
    body = {k: v for k, v in MESSAGE_BODY.items() if k != "usage"}
    http = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, json=body)))
    client = AnthropicClient(DEPLOYMENT, http_client=http, policy=RetryPolicy(jitter=0.0), sleep=lambda s: None)
    request = Request(model="m", prompt="What is the capital of France? Answer in one line.")
    [result] = client.process([request])
    assert result.success, result.error
    tokenizer = client.tokenizer()
    assert result.prompt_tokens == tokenizer.count(request.text) > 0
    assert result.completion_tokens == tokenizer.count(result.completions[0].text) > 0
    assert result.cost_usd > 0
