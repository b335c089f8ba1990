"""API keys: a missing one fails before any request, naming the variable; a present one never
reaches identities, cache keys or recorded errors."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from holistic.core.errors import ModelError
from holistic.core.hashing import canonical_json
from holistic.core.types import Capabilities, ModelDeployment, Request
from holistic.models.cache import cache_key
from holistic.models.keys import check_keys
from holistic.models.openai_client import OpenAIClient
from holistic.models.registry import ModelRegistry, create_client
from holistic.models.reliability import RetryPolicy

httpx: Any = __import__("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

SECRET = "sk-proj-THISISNOTAREALKEY0123456789abcdef"


def test_missing_keys_are_reported_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    registry = ModelRegistry()
    deployments = [
        registry.get("openai/gpt-4o-mini"),
        registry.get("anthropic/claude-3-5-haiku-20241022"),
        registry.get("simple/echo"),
    ]
    with pytest.raises(ModelError) as info:
        check_keys(deployments)
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "ANTHROPIC_API_KEY" in message
    assert "openai/gpt-4o-mini" in message
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        create_client(registry.get("openai/gpt-4o-mini"))


def test_a_local_server_needs_no_key_and_a_named_variable_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = ModelDeployment(name="local/x", provider="openai", model_id="x", args={"base_url": "http://127.0.0.1:9/v1"})
    check_keys([local])  # no error
    own = ModelDeployment(
        name="vendor/x",
        provider="openai",
        model_id="x",
        args={"base_url": "https://api.example.invalid/v1"},
        api_key_env="VENDOR_KEY",
    )
    monkeypatch.delenv("VENDOR_KEY", raising=False)
    with pytest.raises(ModelError, match="VENDOR_KEY"):
        check_keys([local, own])
    monkeypatch.setenv("VENDOR_KEY", SECRET)
    check_keys([local, own])


def test_the_key_never_reaches_identity_cache_key_or_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    sent_auth: list[str] = []

    def handler(request: Any) -> Any:
        sent_auth.append(request.headers.get("authorization", ""))
        # Some servers echo the rejected key back in their error message.
        return httpx.Response(
            401, json={"error": {"message": f"Incorrect API key provided: {SECRET}.", "type": "auth"}}
        )

    deployment = ModelRegistry().get("openai/gpt-4o-mini")
    client = OpenAIClient(
        deployment,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        policy=RetryPolicy(),
        sleep=lambda s: None,
    )
    request = Request(model=deployment.name, prompt="hi")
    [result] = client.process([request])
    assert sent_auth == [f"Bearer {SECRET}"]  # the key is used...
    assert not result.success and result.error_kind == "auth" and result.attempts == 1
    assert SECRET not in (result.error or "") and "Incorrect API key" in (result.error or "")
    assert SECRET not in json.dumps(result.__dict__, default=str)
    identity = client.identity()
    assert SECRET not in canonical_json(identity) and SECRET not in canonical_json(deployment.identity())
    key = cache_key(identity, request)
    # ...but rotating it keeps the cache: the key is not part of the cache key.
    monkeypatch.setenv("OPENAI_API_KEY", SECRET[::-1])
    rotated = OpenAIClient(deployment, policy=RetryPolicy(), sleep=lambda s: None)
    assert cache_key(rotated.identity(), request) == key


def test_deployments_differ_in_identity_by_endpoint_and_model() -> None:
    def ident(**kw: Any) -> dict[str, Any]:
        fields = {
            "name": "n",
            "provider": "openai",
            "model_id": "m",
            "args": {"base_url": "http://127.0.0.1:1/v1"},
            "capabilities": Capabilities(chat=True),
            **kw,
        }
        return OpenAIClient(ModelDeployment(**fields), sleep=lambda s: None).identity()

    assert ident() != ident(model_id="m2")
    assert ident() != ident(args={"base_url": "http://127.0.0.1:2/v1"})
    assert ident() == ident(name="renamed")  # renaming an entry keeps its answers
