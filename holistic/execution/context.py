"""What every run of one execution shares: the model registry, the cache and open clients."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from holistic.core.interfaces import Client, TokenizerResolver
from holistic.core.long_lived import long_lived
from holistic.core.secrets import Redactor
from holistic.core.types import ModelDeployment, Request, RequestResult
from holistic.execution.options import RunOptions
from holistic.models.cache import RequestCache, ResultCache
from holistic.models.counting import tokenizer_resolver
from holistic.models.keys import registry_redactor
from holistic.models.registry import ModelRegistry, create_client


@dataclass
class ExecutionContext:
    """Shared state of one execution (one per process): clients are created once per
    deployment and reused by every run of that model (loading weights is slow)."""

    options: RunOptions
    registry: ModelRegistry
    cache: ResultCache | None
    redactor: Redactor = field(default_factory=Redactor)
    """Values of every API key the registry declares: scrubbed from answers before they are written."""
    on_batch_answer: Callable[[Request, RequestResult], None] | None = None
    """Called with each request and its result as batch answers are read (a spending tracker's hook)."""
    _clients: dict[str, Client] = field(default_factory=dict)
    _tokenizers: TokenizerResolver | None = None

    @property
    def tokenizers(self) -> TokenizerResolver:
        """Model name -> token counter over this execution's registry (what scenarios get)."""
        if self._tokenizers is None:
            self._tokenizers = tokenizer_resolver(self.registry)
        return self._tokenizers

    @staticmethod
    def open(options: RunOptions, cache: ResultCache | None = None) -> ExecutionContext:
        """``cache``: one opened elsewhere (the Ray executor's actor proxy); by default the
        options' request cache, or none with ``--no-cache``."""
        registry = ModelRegistry(options.models_file)
        if cache is None and options.use_cache:
            cache = RequestCache(options.cache_path())
        deployments = [*registry.deployments.values(), *(p.template for p in registry.patterns)]
        return ExecutionContext(
            options=options, registry=registry, cache=cache, redactor=registry_redactor(deployments)
        )

    def deployment(self, name: str) -> ModelDeployment:
        return self.registry.get(name)

    def client(self, deployment: ModelDeployment) -> Client:
        if deployment.name not in self._clients:
            with long_lived():  # the provider's SDK imported, its client made: kept to the end
                self._clients[deployment.name] = self._batched(create_client(deployment))
        return self._clients[deployment.name]

    def _batched(self, client: Client) -> Client:
        """``client`` itself, or its batch-mode wrapper when ``batch: true`` or ``--batch`` asks for it."""
        from holistic.models.batch_spec import wants_batch

        d = client.deployment
        if not wants_batch(d.provider, d.args, self.options.batch):
            return client
        from holistic.execution.serving import redact_result
        from holistic.models.api_client import ApiClient
        from holistic.models.batch_client import BatchClient
        from holistic.models.validate import checked

        if not isinstance(client, ApiClient):
            return client
        redactor = self.redactor
        return BatchClient(
            client,
            folder=self.options.cache_path().parent,
            cache=self.cache,
            clean=lambda result: checked(redact_result(result, redactor)),
            wait=self.options.wait_for_batches,
            on_answer=self.on_batch_answer,
        )

    def close(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            client.close()
        if self.cache is not None:
            self.cache.close()
