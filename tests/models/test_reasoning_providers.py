"""Reasoning models through the real ``openai`` and ``anthropic`` SDKs against a loopback server
(:mod:`tests.support.reasoning_server`) that answers in each provider's reasoning shape: the
setting arrives in the provider's parameters, the thought lands in ``reasoning``, the answer alone
in the completion, and a thought cut by ``max_tokens`` is unfinished (no answer)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from holistic.core.types import Capabilities, Message, ModelDeployment, ReasoningSupport, Request, RequestResult
from holistic.models.anthropic_client import AnthropicClient
from holistic.models.openai_client import OpenAIClient
from holistic.models.reasoning import MAX_REASONING_CHARS, read_answer
from holistic.models.reliability import RetryPolicy
from tests.support.reasoning_server import EFFORT_WORDS, ReasoningServer

THINK = ReasoningSupport(style="chat_template_kwargs", think_tags=("<think>", "</think>"))
QUESTION = (Message("system", "Add."), Message("user", "What is 5+4?"))


def deployment(url: str, provider: str, support: ReasoningSupport, **args: Any) -> ModelDeployment:
    return ModelDeployment(
        name=f"loop/{provider}",
        provider=provider,
        model_id="thinker",
        args={"base_url": url, "max_attempts": 1, **args},
        capabilities=Capabilities(chat=True, completions=False),
        max_output_tokens=4096,
        reasoning=support,
    )


def ask(client: Any, max_tokens: int = 200, **setting: Any) -> RequestResult:
    request = Request(model="loop", messages=QUESTION, max_tokens=max_tokens, **setting)
    [result] = client.process([request])
    assert isinstance(result, RequestResult) and result.success, result.error
    return result


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ReasoningServer]:
    with ReasoningServer(getattr(request, "param", "effort"), deadline_s=120) as s:
        yield s


def openai_client(server: ReasoningServer, support: ReasoningSupport, **args: Any) -> OpenAIClient:
    return OpenAIClient(deployment(server.url, "openai", support, **args), policy=RetryPolicy(max_attempts=1))


def test_openai_effort_goes_as_reasoning_effort_and_the_reasoning_tokens_are_counted(server: ReasoningServer) -> None:
    client = openai_client(server, ReasoningSupport(style="openai_effort"))
    result = ask(client, reasoning_effort="high")
    path, body = server.bodies[-1]
    assert path == "/v1/chat/completions" and body["reasoning_effort"] == "high"
    first = result.completions[0]
    assert first.text == "9" and first.reasoning is None and not first.reasoning_unfinished
    assert result.reasoning_tokens == EFFORT_WORDS["high"] and result.completion_tokens == EFFORT_WORDS["high"] + 1
    # no setting: nothing is sent
    ask(client)
    assert "reasoning_effort" not in server.bodies[-1][1]


@pytest.mark.parametrize("server", ["reasoning_content"], indirect=True)
def test_reasoning_content_field_is_the_thought_and_chat_template_kwargs_carry_the_effort(
    server: ReasoningServer,
) -> None:
    client = openai_client(server, ReasoningSupport(style="chat_template_kwargs", field="reasoning_content"))
    result = ask(client, reasoning_effort="medium")
    body = server.bodies[-1][1]
    assert body["chat_template_kwargs"] == {"enable_thinking": True, "reasoning_effort": "medium"}
    first = result.completions[0]
    assert first.text == "9"
    assert first.reasoning is not None and first.reasoning.endswith("maybe 16")  # the decoy stays in the thought
    assert result.reasoning_tokens > 0  # estimated from the thought's text (the server counts none)


@pytest.mark.parametrize("server", ["think_tags"], indirect=True)
def test_think_tags_are_split_from_the_answer(server: ReasoningServer) -> None:
    client = openai_client(server, THINK)
    result = ask(client, reasoning_effort="low")
    first = result.completions[0]
    assert first.text == "9" and "<think>" not in (first.reasoning or "x") and "maybe 16" in (first.reasoning or "")
    off = ask(client, reasoning_effort="none")
    assert server.bodies[-1][1]["chat_template_kwargs"]["enable_thinking"] is False
    assert off.completions[0].reasoning == ""  # an empty thought block


@pytest.mark.parametrize("shape", ["effort", "reasoning_content", "think_tags"])
def test_a_thought_cut_by_max_tokens_is_unfinished_with_no_answer(shape: str) -> None:
    support = {
        "effort": ReasoningSupport(style="openai_effort"),
        "reasoning_content": ReasoningSupport(style="chat_template_kwargs", field="reasoning_content"),
        "think_tags": THINK,
    }[shape]
    with ReasoningServer(shape, deadline_s=60) as server:
        result = ask(openai_client(server, support), max_tokens=10, reasoning_effort="high")
    first = result.completions[0]
    assert first.reasoning_unfinished and first.text == "" and first.finish_reason == "length"


def test_responses_api_sends_reasoning_effort_and_keeps_the_summary(server: ReasoningServer) -> None:
    client = openai_client(server, ReasoningSupport(style="openai_effort"), api="responses")
    result = ask(client, reasoning_effort="low")
    path, body = server.bodies[-1]
    assert path == "/v1/responses"
    assert body["reasoning"] == {"effort": "low", "summary": "auto"} and "temperature" not in body
    assert body["instructions"] == "Add." and body["max_output_tokens"] == 200
    first = result.completions[0]
    assert first.text == "9" and "maybe 16" in (first.reasoning or "")
    assert result.reasoning_tokens == EFFORT_WORDS["low"] and result.reasoning_reported == "effort=low"
    cut = ask(client, max_tokens=5, reasoning_effort="high")
    assert cut.completions[0].reasoning_unfinished and cut.completions[0].text == ""


def test_responses_api_records_the_effort_a_provider_applied_instead() -> None:
    with ReasoningServer(ignore=True, deadline_s=60) as server:
        client = openai_client(server, ReasoningSupport(style="openai_effort"), api="responses")
        result = ask(client, reasoning_effort="high")
    assert result.reasoning_reported == "effort=medium"


def test_anthropic_thinking_budget_is_sent_and_the_thinking_blocks_are_the_thought(
    server: ReasoningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOP_ANTHROPIC_KEY", "sk-ant-loopback")
    dep = replace(
        deployment(server.base, "anthropic", ReasoningSupport(style="anthropic_thinking")),
        api_key_env="LOOP_ANTHROPIC_KEY",
    )
    client = AnthropicClient(dep, policy=RetryPolicy(max_attempts=1))
    result = ask(client, reasoning_budget=32)
    path, body = server.bodies[-1]
    assert path == "/v1/messages"
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 32} and "temperature" not in body
    first = result.completions[0]
    assert first.text == "9" and (first.reasoning or "").endswith("maybe 16")
    cut = ask(client, max_tokens=8, reasoning_budget=32)
    assert cut.completions[0].reasoning_unfinished and cut.completions[0].text == ""


def hostile(content: Any, thought: Any = None) -> Any:
    def override(path: str, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if thought is not None:
            message["reasoning_content"] = thought
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}

    return override


@pytest.mark.parametrize(
    ("content", "answer", "thought", "unfinished", "note"),
    [
        ("<think>a long thought that never ends", "", "a long thought that never ends", True, "never closed"),
        (
            "the thought began in the prompt</think> 42",
            "42",
            "the thought began in the prompt",
            False,
            "without an opening",
        ),
        ("<think>a<think>b</think>c</think> 7", "7", "abc", False, "nested"),
        ("no tags at all: 5", "no tags at all: 5", None, False, None),
    ],
)
def test_hostile_think_tags_follow_the_stated_rule(
    content: str, answer: str, thought: str | None, unfinished: bool, note: str | None
) -> None:
    with ReasoningServer(override=hostile(content), deadline_s=60) as server:
        result = ask(openai_client(server, THINK), reasoning_effort="low")
    first = result.completions[0]
    assert (first.text, first.reasoning, first.reasoning_unfinished) == (answer, thought, unfinished)
    assert (note is None and first.reasoning_note is None) or (note or "") in (first.reasoning_note or "")


def test_a_thought_field_that_is_not_a_string_is_kept_as_json_with_a_note() -> None:
    support = ReasoningSupport(style="chat_template_kwargs", field="reasoning_content")
    with ReasoningServer(override=hostile("8", {"steps": [1, 2]}), deadline_s=60) as server:
        result = ask(openai_client(server, support), reasoning_effort="low")
    first = result.completions[0]
    assert first.text == "8" and json.loads(first.reasoning or "") == {"steps": [1, 2]}
    assert "not a string" in (first.reasoning_note or "")


def test_fifty_megabytes_of_thought_are_cut_in_bounded_time() -> None:
    huge = "<think>" + "x" * (50 * 1024 * 1024) + "</think> 3"
    start = time.perf_counter()
    answer = read_answer(huge, None, "stop", THINK)
    assert time.perf_counter() - start < 5.0
    assert answer.text == "3" and len(answer.reasoning or "") == MAX_REASONING_CHARS
    assert "the first 1,000,000 are kept" in (answer.note or "")
    unclosed = read_answer("<think>" + "y" * (50 * 1024 * 1024), None, "length", THINK)
    assert unclosed.unfinished and unclosed.text == "" and len(unclosed.reasoning or "") == MAX_REASONING_CHARS
