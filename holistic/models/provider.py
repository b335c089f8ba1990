"""The contract of a model provider: one base class for built-in and plugin providers alike.

A provider is what a models file's ``provider:`` names. Its class declares the facts the
rest of holistic needs about its models (so no central code names a provider) and builds
their clients. The registry (:data:`holistic.models.registry.PROVIDERS`) holds subclasses of
:class:`Provider` only, whether built in (:mod:`holistic.models.providers`), registered with
``@register_provider("name")`` (:mod:`holistic.plugin`), or installed as an entry point in the
``holistic.models`` group (``name = "package.module:MyProvider"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from holistic.core.interfaces import Client
from holistic.core.registry import load_object
from holistic.core.types import ModelDeployment
from holistic.models.tokens import API_TOKENS, TokenCounting

ClientFactory = Callable[[ModelDeployment], Client]
"""A function ``(ModelDeployment) -> Client``: what :meth:`Provider.create_client` is."""


class Provider:
    """One provider's facts and its client factory. Subclass it, override the facts that
    differ from these defaults (a remote API counted in estimated tokens), and implement
    :meth:`create_client`. A provider holds no state: it is instantiated for each question."""

    in_process: ClassVar[bool] = False
    """The model runs in this process: requests are batched on one thread, never sent from
    several (and a Ray task reserves a CPU or GPU for it). ``False``: a remote API, where
    ``-j`` threads send requests concurrently."""
    needs_torch: ClassVar[bool] = False
    """Its models may run on torch: a Ray worker gives torch the thread count a local run
    would have, so the log-probabilities agree bit for bit."""
    tokens: ClassVar[TokenCounting] = API_TOKENS
    """How its models count tokens (token counts for scenarios and ``--plan``)."""
    needs_extra: ClassVar[str | None] = None
    """The extra of ``pip install 'holistic[...]'`` its clients need (an SDK, torch), checked
    before a run writes anything (:mod:`holistic.core.extras`); ``None``: the core suffices."""

    def extras(self, deployment: ModelDeployment) -> tuple[str, ...]:
        """The extras ``deployment`` needs: :attr:`needs_extra`, and ``local`` when the registry entry
        names a transformers tokenizer for a model counted by its ``tokenizer`` field."""
        needed: tuple[str, ...] = (self.needs_extra,) if self.needs_extra else ()
        if deployment.tokenizer and self.tokens.own(deployment) is None and self.tokens.gguf(deployment) is None:
            needed += ("local",)
        return needed

    def create_client(self, deployment: ModelDeployment) -> Client:
        """The client serving ``deployment``'s requests."""
        raise NotImplementedError(f"{type(self).__qualname__} does not implement create_client")

    def resolve(self, deployment: ModelDeployment) -> ModelDeployment:
        """A pattern match (``provider/{model_id}``) filled in with what its target says
        about itself, e.g. a local folder's context window; by default, as it is."""
        return deployment

    def check_obtainable(self, deployment: ModelDeployment) -> None:
        """Raise :class:`~holistic.core.errors.ModelError` when the deployment's weights
        cannot be had now; cheap, loads nothing. By default, nothing to check."""
        return None


def declared_provider(
    name: str,
    factory: ClientFactory | str,
    *,
    in_process: bool = False,
    needs_torch: bool = False,
    tokens: TokenCounting = API_TOKENS,
    needs_extra: str | None = None,
) -> type[Provider]:
    """A :class:`Provider` subclass that is nothing but these facts and a client factory: a
    function, or its ``"module:function"`` (imported when the first client is created, so
    an SDK, torch or llama.cpp is imported only then)."""

    def create_client(self: Provider, deployment: ModelDeployment) -> Client:
        create: ClientFactory = load_object(factory) if isinstance(factory, str) else factory
        return create(deployment)

    facts = {"in_process": in_process, "needs_torch": needs_torch, "tokens": tokens, "needs_extra": needs_extra}
    module = __name__ if isinstance(factory, str) else factory.__module__
    return type(
        f"{name}_provider",
        (Provider,),
        {**facts, "create_client": create_client, "__module__": module, "__doc__": f"The {name!r} provider."},
    )
