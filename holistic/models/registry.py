"""The model registry: deployments (built-in YAML plus a user file) and providers.

Look-up order for a name: the user file's entries, the built-in entries, then the
user file's ``patterns`` and the built-in ``patterns`` (first match wins). So
``openai/gpt-4.1`` works without an entry of its own, and a user file can point a
whole family of names at an OpenAI-compatible server::

    patterns:
      - pattern: vllm/{model_id}
        provider: openai
        args: {base_url: "http://127.0.0.1:8000/v1"}
        capabilities: {logprobs: true, prompt_logprobs: true, chat: true, completions: true}

The file format is ``schemas/models.schema.json``; see :mod:`holistic.models.registry_file`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError, UnknownNameError
from holistic.core.extras import missing_extra
from holistic.core.interfaces import Client
from holistic.core.registry import Registry
from holistic.core.secrets import conceal, is_marked_secret, reveal
from holistic.core.types import ModelDeployment
from holistic.models.provider import Provider
from holistic.models.providers import BUILTIN_PROVIDERS
from holistic.models.registry_file import Pattern, RegistryFile, read_registry_file
from holistic.models.tokens import TokenCounting

BUILTIN_MODELS_FILE = Path(__file__).with_name("models.yaml")

PROVIDERS: Registry[type[Provider]] = Registry("provider", group="holistic.models", base=Provider)
"""Every provider by name: the built-ins, those plugins register (``@register_provider``) and
the ``holistic.models`` entry points; each a :class:`Provider` subclass."""
for _name, _provider in BUILTIN_PROVIDERS.items():
    PROVIDERS.add(_name, _provider)


def provider(name: str) -> Provider:
    """The provider a models file's ``provider: name`` names (unknown: ``UnknownNameError``)."""
    return PROVIDERS.get(name)()


def _facts(name: str) -> Provider:
    """``name``'s provider, or the defaults (a remote API) for a name no provider has."""
    return provider(name) if name in PROVIDERS else Provider()


def token_counting(provider: str) -> TokenCounting:
    """How ``provider``'s models count tokens (default: the registry entry's ``tokenizer``)."""
    return _facts(provider).tokens


def runs_in_process(provider: str) -> bool:
    """Whether ``provider``'s models run in this process (see :attr:`Provider.in_process`)."""
    return _facts(provider).in_process


def needs_torch(provider: str) -> bool:
    """Whether ``provider``'s models may run on torch (see :attr:`Provider.needs_torch`)."""
    return _facts(provider).needs_torch


def known_providers() -> list[str]:
    """Built-in provider names plus those plugins register."""
    return PROVIDERS.names()


_READ: dict[tuple[str, int, int, tuple[str, ...]], RegistryFile] = {}
"""Registry files already read, by path, modification time, size and the providers known then."""


def read_models_file(path: Path) -> RegistryFile:
    """Load and validate a registry file (entries and patterns).

    A file is read and validated once per process while it is unchanged (``helm-run`` opens
    the registry for the plan, the suite and the run: the built-in file was parsed and
    schema-checked three times before each first request); a copy of its entries is returned.
    """
    providers = tuple(sorted(known_providers()))
    try:
        stat = path.stat()
    except OSError:
        return read_registry_file(path, providers)  # reports the missing file as it always did
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, providers)
    found = _READ.get(key)
    if found is None:
        if len(_READ) >= 64:
            _READ.clear()
        found = _READ[key] = read_registry_file(path, providers, shipped=path == BUILTIN_MODELS_FILE)
    return replace(found, deployments=dict(found.deployments))


def load_models_file(path: Path) -> dict[str, ModelDeployment]:
    """The named entries of a registry file (validated; patterns are not expanded)."""
    return read_models_file(path).deployments


class ModelRegistry:
    """All known deployments: built-ins, then the user's file (which may override)."""

    def __init__(self, user_file: Path | None = None) -> None:
        builtin = read_models_file(BUILTIN_MODELS_FILE)
        self.deployments: dict[str, ModelDeployment] = dict(builtin.deployments)
        self.patterns: tuple[Pattern, ...] = builtin.patterns
        if user_file is not None:
            user = read_models_file(Path(user_file))
            self.deployments.update(user.deployments)
            self.patterns = user.patterns + self.patterns

    def get(self, name: str) -> ModelDeployment:
        if name in self.deployments:
            return self.deployments[name]
        for pattern in self.patterns:
            deployment = pattern.match(name)
            if deployment is not None:
                return _concrete(deployment)
        known = [*self.deployments, *(p.pattern for p in self.patterns)]
        raise UnknownNameError("model", name, known)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.get(name)
        except UnknownNameError:
            return False
        return True

    def names(self) -> list[str]:
        """Names of the explicit entries (patterns accept more)."""
        return sorted(self.deployments)


def _concrete(deployment: ModelDeployment) -> ModelDeployment:
    """A pattern match filled in with what its target says about itself (the provider's
    :meth:`Provider.resolve`: a local Hugging Face folder's context window and chat template)."""
    return _facts(deployment.provider).resolve(deployment)


def check_obtainable(deployment: ModelDeployment) -> None:
    """Raise :class:`~holistic.core.errors.ModelError` when the deployment cannot be served
    here: an extra its provider needs is not installed (the message names the pip command), or its weights cannot be had now (a Hugging Face Hub id offline and not
    cached); cheap, loads nothing."""
    check_extras(deployment)
    _facts(deployment.provider).check_obtainable(deployment)


def check_extras(deployment: ModelDeployment) -> None:
    """Raise :class:`~holistic.core.errors.ModelError` naming the extra and its pip command when
    one that the deployment's provider needs (:meth:`Provider.extras`) is not installed."""
    for extra in dict.fromkeys(_facts(deployment.provider).extras(deployment)):
        problem = missing_extra(extra, f"the model {deployment.name}")
        if problem is not None:
            raise ModelError(problem)


def create_client(deployment: ModelDeployment) -> Client:
    """The client of ``deployment``; a missing extra is named, not a failed import."""
    check_extras(deployment)
    if not any(is_marked_secret(v) for v in _nested(deployment.args)):
        return provider(deployment.provider).create_client(deployment)
    # the client sends a marked value itself; its identity (cache keys, run_spec.json) never holds it
    client = provider(deployment.provider).create_client(replace(deployment, args=reveal(dict(deployment.args))))
    revealed_identity = client.identity

    def identity() -> dict[str, Any]:
        found = dict(revealed_identity())
        found["args"] = conceal(found.get("args") or {}, deployment.args)
        return found

    setattr(client, "identity", identity)  # noqa: B010 (an instance's own method, not the class's)
    return client


def _nested(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, Mapping) and not is_marked_secret(current):
            stack.extend(current.values())
        elif isinstance(current, list | tuple):
            stack.extend(current)
