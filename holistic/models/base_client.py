"""The base class of model clients: :class:`BaseClient`.

A client serves one deployment's requests (the :class:`~holistic.core.interfaces.Client`
protocol). :class:`BaseClient` gives every member of that protocol a default except
:meth:`~BaseClient.process`, so a client states only what differs: its requests, and where it
has them its engine name, tokenizer, batch size, per-run state or resources to release.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from holistic.core.interfaces import Tokenizer
from holistic.core.types import ModelDeployment, Request, RequestResult
from holistic.models.approx_tokenizer import ApproxTokenizer


class BaseClient(ABC):
    """A :class:`~holistic.core.interfaces.Client` with a default for every member but
    :meth:`process`."""

    engine_name: ClassVar[str] = ""
    """What serves the requests (``openai-api``, ``simple-1``...): part of :meth:`identity`, so
    answers cached from another engine are not reused. Change it when the answers change."""
    request_batch_size: int = 32
    """Requests per :meth:`process` call unless ``--batch-size`` says otherwise."""

    def __init__(self, deployment: ModelDeployment) -> None:
        self.deployment = deployment
        self._approx: Tokenizer | None = None

    @abstractmethod
    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        """Serve a batch; one result per request, in order. Never raises for one bad request:
        failures come back as ``RequestResult.failure(error, kind)``."""

    def identity(self) -> dict[str, Any]:
        """The deployment's identity and :attr:`engine_name` (the request cache's key)."""
        identity = self.deployment.identity()
        return {**identity, "engine": self.engine_name} if self.engine_name else identity

    def tokenizer(self) -> Tokenizer:
        """A conservative character-based estimate (:class:`ApproxTokenizer`); override with
        the model's own tokenizer when there is one."""
        if self._approx is None:
            self._approx = ApproxTokenizer()
        return self._approx

    def begin_run(self) -> None:
        """Nothing kept between runs."""
        return None

    def close(self) -> None:
        """Nothing to release."""
        return None

    def usage(self) -> dict[str, int]:
        """Nothing counted (no in-process engine)."""
        return {}
