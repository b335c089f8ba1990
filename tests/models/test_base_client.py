"""``BaseClient``: a client that implements ``process`` alone has every other member of the
``Client`` protocol, with defaults a run can rely on."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from holistic.core.interfaces import Client
from holistic.core.types import ModelDeployment, Request, RequestResult
from holistic.plugin import BaseClient

DEPLOYMENT = ModelDeployment(name="test/echo", provider="test", model_id="echo")


class _Echo(BaseClient):
    engine_name = "echo-1"

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        return [RequestResult.failure("nothing to say", "fatal") for _ in requests]


def test_process_alone_makes_a_client() -> None:
    client = _Echo(DEPLOYMENT)
    assert isinstance(client, Client)
    assert client.deployment is DEPLOYMENT and client.request_batch_size == 32
    assert client.identity() == {**DEPLOYMENT.identity(), "engine": "echo-1"}  # the cache key names the engine
    assert client.tokenizer().count("four words of text") > 0 and client.tokenizer() is client.tokenizer()
    client.begin_run()
    assert client.usage() == {}
    client.close()


def test_process_is_the_one_member_without_a_default() -> None:
    class _Silent(BaseClient):
        pass

    with pytest.raises(TypeError, match="process"):
        _Silent(DEPLOYMENT)  # type: ignore[abstract]


def test_built_in_clients_are_base_clients() -> None:
    from holistic.models.api_client import ApiClient
    from holistic.models.local_client import LocalClient
    from holistic.models.simple import SimpleClient

    assert all(issubclass(cls, BaseClient) for cls in (ApiClient, LocalClient, SimpleClient))
    assert SimpleClient(DEPLOYMENT).identity()["engine"] == "simple-1"
