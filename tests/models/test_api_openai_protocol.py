"""The openai provider at the protocol level: what it sends, and how it reads what comes back.

No network: the SDK talks to an in-process transport that answers with recorded bodies
(the echo body below was recorded from llama-cpp-python's OpenAI-compatible server).
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Callable
from typing import Any

import pytest

from holistic.core.types import Capabilities, Message, ModelDeployment, Request
from holistic.models.openai_client import OpenAIClient
from holistic.models.reliability import RetryPolicy

# The SDK's own HTTP library (newer SDKs ship it as ``httpx2``).
httpx: Any = __import__("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

ECHO_BODY = {
    "id": "cmpl-545f94d2",
    "object": "text_completion",
    "created": 1795989401,
    "model": "smollm2",
    "choices": [
        {
            "text": "The capital of France is Paris.",
            "index": 0,
            "logprobs": {
                "text_offset": [0, 3, 11, 14, 21, 24, 30],
                "token_logprobs": [
                    None,
                    -9.599955558776855,
                    -10.462464332580566,
                    -11.225584030151367,
                    -11.794837951660156,
                    -8.452631950378418,
                    -0.5,
                ],
                "tokens": ["The", " capital", " of", " France", " is", " Paris", "."],
                "top_logprobs": [
                    None,
                    {" of": -0.41, " capital": -9.59},
                    {" the": -1.98, " of": -10.46},
                    {" is": -0.43, " France": -11.22},
                    {" Paris": -0.26, " is": -11.79},
                    {".": -0.37, " Paris": -8.45},
                    {".": -0.5},
                ],
            },
            "finish_reason": "length",
        }
    ],
    "usage": {"prompt_tokens": 6, "completion_tokens": 1, "total_tokens": 7},
}

CHAT_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1795989412,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Paris.", "refusal": None},
            "logprobs": {
                "content": [
                    {
                        "token": "Paris",
                        "logprob": -0.01,
                        "bytes": None,
                        "top_logprobs": [
                            {"token": "Paris", "logprob": -0.01, "bytes": None},
                            {"token": "The", "logprob": -4.7, "bytes": None},
                        ],
                    },
                    {
                        "token": ".",
                        "logprob": -0.2,
                        "bytes": None,
                        "top_logprobs": [
                            {"token": ".", "logprob": -0.2, "bytes": None},
                            {"token": "!", "logprob": -2.1, "bytes": None},
                        ],
                    },
                ],
                "refusal": None,
            },
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 14, "completion_tokens": 2, "total_tokens": 16},
}


def completion_body(texts: list[str], usage: tuple[int, int] = (5, 3)) -> dict[str, Any]:
    return {
        "id": "cmpl-2",
        "object": "text_completion",
        "created": 1,
        "model": "davinci-002",
        "choices": [{"text": t, "index": i, "logprobs": None, "finish_reason": "stop"} for i, t in enumerate(texts)],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


class FakeServer:
    """Records every request body and answers with ``respond(path, body)``."""

    def __init__(self, respond: Callable[[str, dict[str, Any]], Any]) -> None:
        self.respond = respond
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def handler(self, request: Any) -> Any:
        body = json.loads(request.content)
        with self._lock:
            self.calls.append((request.url.path, body))
        answer = self.respond(request.url.path, body)
        return answer if isinstance(answer, httpx.Response) else httpx.Response(200, json=answer)

    def client(self, deployment: ModelDeployment, **kwargs: Any) -> OpenAIClient:
        http = httpx.Client(transport=httpx.MockTransport(self.handler))
        return OpenAIClient(
            deployment, http_client=http, policy=RetryPolicy(max_attempts=3, jitter=0.0), sleep=lambda s: None, **kwargs
        )


def deployment(**caps: bool) -> ModelDeployment:
    return ModelDeployment(
        name="local/test",
        provider="openai",
        model_id="test-model",
        args={"base_url": "http://127.0.0.1:9/v1"},
        capabilities=Capabilities(
            **{"logprobs": True, "prompt_logprobs": True, "chat": True, "completions": True, **caps}
        ),
        price_input_per_million=2.0,
        price_output_per_million=4.0,
    )


def test_loglikelihood_uses_echo_and_picks_the_continuation_by_offset() -> None:
    server = FakeServer(lambda path, body: ECHO_BODY)
    client = server.client(deployment())
    [result] = client.process(
        [Request(model="local/test", kind="loglikelihood", prompt="The capital of France is", continuation=" Paris")]
    )
    assert result.success, result.error
    path, body = server.calls[-1]  # after the echo probe's calls
    assert path.endswith("/completions")
    assert body["prompt"] == "The capital of France is Paris"
    assert body["echo"] is True and body["logprobs"] >= 1 and body["max_tokens"] in (0, 1)
    completion = result.completions[0]
    # Only " Paris": the context's tokens and the generated "." (past the text) are left out.
    assert [t.text for t in completion.tokens] == [" Paris"]
    assert completion.logprob == pytest.approx(-8.452631950378418)
    assert completion.is_greedy is False  # "." was the argmax at that position
    assert result.has_logprobs and result.prompt_tokens == 6
    assert result.cost_usd == pytest.approx((6 * 2.0 + 1 * 4.0) / 1e6)


def test_a_token_straddling_the_boundary_counts_for_the_continuation() -> None:
    server = FakeServer(lambda path, body: ECHO_BODY)
    client = server.client(deployment())
    # Context ends inside " France": the token " France" reaches into the continuation.
    [result] = client.process(
        [Request(model="m", kind="loglikelihood", prompt="The capital of Fr", continuation="ance is Paris")]
    )
    assert [t.text for t in result.completions[0].tokens] == [" France", " is", " Paris"]


def test_rolling_loglikelihood_skips_the_unconditioned_first_token() -> None:
    server = FakeServer(lambda path, body: ECHO_BODY)
    [result] = server.client(deployment()).process(
        [Request(model="m", kind="rolling_loglikelihood", prompt="The capital of France is Paris")]
    )
    tokens = result.completions[0].tokens
    assert [t.text for t in tokens] == [" capital", " of", " France", " is", " Paris"]
    assert all(math.isfinite(t.logprob) for t in tokens)


def test_chat_generation_sends_messages_and_reads_token_logprobs() -> None:
    server = FakeServer(lambda path, body: CHAT_BODY)
    client = server.client(deployment(completions=False))
    request = Request(
        model="m",
        messages=(Message("system", "Be brief."), Message("user", "Capital of France?")),
        max_tokens=5,
        temperature=0.0,
        stop=("\n",),
        top_k_logprobs=2,
    )
    [result] = client.process([request])
    path, body = server.calls[0]
    assert path.endswith("/chat/completions")
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert body["logprobs"] is True and body["top_logprobs"] == 2 and body["stop"] == ["\n"] and body["max_tokens"] == 5
    assert "seed" not in body  # greedy decoding sends no seed
    completion = result.completions[0]
    assert completion.text == "Paris."
    assert [t.text for t in completion.tokens] == ["Paris", "."]
    assert completion.logprob == pytest.approx(-0.21)
    assert completion.tokens[0].top_logprobs == {"Paris": -0.01, "The": -4.7}
    assert (result.prompt_tokens, result.completion_tokens) == (14, 2)


def test_plain_prompt_on_a_chat_only_model_becomes_one_user_message() -> None:
    server = FakeServer(lambda path, body: CHAT_BODY)
    server.client(deployment(completions=False)).process([Request(model="m", prompt="Capital of France?")])
    body = server.calls[0][1]
    assert body["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert body["logprobs"] is True and body["top_logprobs"] == 0


def test_completions_generation_and_stops_beyond_the_server_limit() -> None:
    server = FakeServer(lambda path, body: completion_body([" Paris is big; yes"]))
    request = Request(model="m", prompt="Q: capital?\nA:", stop=("a", "b", "c", "d", ";"), logprobs=False)
    [result] = server.client(deployment()).process([request])
    path, body = server.calls[0]
    assert path.endswith("/completions") and "messages" not in body
    assert body["stop"] == ["a", "b", "c", "d"]  # OpenAI accepts four
    assert "logprobs" not in body
    assert result.completions[0].text == " Paris is big"  # the fifth stop applied afterwards
    assert result.completions[0].finish_reason == "stop"


def test_echoed_generation_splits_prompt_and_completion_tokens() -> None:
    body = json.loads(json.dumps(ECHO_BODY))
    server = FakeServer(lambda path, b: body)
    [result] = server.client(deployment()).process(
        [Request(model="m", prompt="The capital of France is Paris", echo=True, max_tokens=1)]
    )
    assert result.completions[0].text == "."
    assert [t.text for t in result.completions[0].tokens] == ["."]
    assert result.prompt_logprobs is not None and [t.text for t in result.prompt_logprobs][-1] == " Paris"


def test_samples_missing_from_a_server_that_ignores_n_are_fetched_with_new_seeds() -> None:
    server = FakeServer(lambda path, body: completion_body([f"seed{body.get('seed')}"]))
    request = Request(model="m", prompt="Say", num_completions=3, temperature=0.7, seed=10, logprobs=False)
    [result] = server.client(deployment()).process([request])
    assert [c.text for c in result.completions] == ["seed10", "seed11", "seed12"]
    assert [b.get("n") for _, b in server.calls] == [3, 2, None]


def test_no_prompt_logprobs_capability_means_no_call_and_a_recorded_reason() -> None:
    server = FakeServer(lambda path, body: ECHO_BODY)
    client = server.client(deployment(prompt_logprobs=False))
    [result] = client.process([Request(model="m", kind="loglikelihood", prompt="a", continuation=" b")])
    assert not result.success and result.error_kind == "unsupported"
    assert "not supported" in (result.error or "") and result.attempts == 0
    assert server.calls == []


def test_a_server_that_returns_no_prompt_logprobs_is_reported_with_the_fix() -> None:
    server = FakeServer(lambda path, body: completion_body(["The capital of France is Paris"]))
    [result] = server.client(deployment()).process(
        [Request(model="m", kind="loglikelihood", prompt="The capital of France is", continuation=" Paris")]
    )
    assert not result.success
    assert "prompt_logprobs: false" in (result.error or "")


def test_operational_args_do_not_change_the_identity() -> None:
    server = FakeServer(lambda path, body: CHAT_BODY)
    base = deployment()
    tuned = ModelDeployment(**{**base.__dict__, "args": {**base.args, "max_concurrency": 16, "max_attempts": 9}})
    assert server.client(base).identity() == server.client(tuned).identity()
    assert server.client(base).identity()["args"] == {"base_url": "http://127.0.0.1:9/v1"}


def test_zero_max_tokens_never_reaches_the_server_as_zero() -> None:
    # Some servers read max_tokens=0 as "no limit".
    server = FakeServer(lambda path, body: ECHO_BODY)
    client = server.client(deployment())
    nothing, prompt_only = client.process(
        [
            Request(model="m", prompt="The capital of France is Paris", max_tokens=0),
            Request(model="m", prompt="The capital of France is Paris", max_tokens=0, echo=True),
        ]
    )
    assert nothing.success and nothing.completions[0].text == ""
    assert [body["max_tokens"] for _, body in server.calls] == [1]
    assert prompt_only.completions[0].text == "" and prompt_only.completions[0].tokens == ()
    assert prompt_only.prompt_logprobs is not None
    assert [t.text for t in prompt_only.prompt_logprobs] == [" capital", " of", " France", " is", " Paris"]


def test_builtin_openai_entry_talks_to_the_vendor_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from holistic.models.registry import ModelRegistry

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    urls: list[str] = []
    server = FakeServer(lambda path, body: CHAT_BODY)

    def handler(request: Any) -> Any:
        urls.append(str(request.url))
        return server.handler(request)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    mini = ModelRegistry().get("openai/gpt-4o-mini")
    [result] = OpenAIClient(mini, http_client=http).process([Request(model=mini.name, prompt="Hi", max_tokens=7)])
    assert urls == ["https://api.openai.com/v1/chat/completions"]
    body = server.calls[0][1]
    assert body["model"] == "gpt-4o-mini" and body["max_completion_tokens"] == 7 and "max_tokens" not in body
    assert result.cost_usd == pytest.approx((14 * 0.15 + 2 * 0.60) / 1e6)
