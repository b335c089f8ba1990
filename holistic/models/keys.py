"""API keys: read from the environment at the last moment, checked before any request.

Keys live only in environment variables named by the registry (``api_key_env``).
They never enter a :class:`~holistic.core.types.ModelDeployment`, so they cannot
reach cache keys, logs or result tables; :func:`redact` removes a key from any text
a provider sends back (some servers echo a rejected key in their error message).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from holistic.core.errors import ModelError
from holistic.core.secrets import REDACTED, Redactor, secret_values
from holistic.core.types import ModelDeployment

DEFAULT_KEY_ENV: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The variable a provider reads when the deployment names none and talks to the vendor's
own endpoint (no ``base_url``). A local OpenAI-compatible server needs no key."""

__all__ = ["DEFAULT_KEY_ENV", "REDACTED", "api_key", "check_keys", "key_env", "redact", "registry_redactor"]


def key_env(deployment: ModelDeployment) -> str | None:
    """The environment variable this deployment's key comes from (``None``: no key needed)."""
    if deployment.api_key_env:
        return deployment.api_key_env
    if deployment.args.get("base_url"):
        return None
    return DEFAULT_KEY_ENV.get(deployment.provider)


def _missing(deployment: ModelDeployment, environ: Mapping[str, str]) -> str | None:
    env = key_env(deployment)
    if env is None or environ.get(env, "").strip():
        return None
    return env


def api_key(deployment: ModelDeployment, environ: Mapping[str, str] | None = None) -> str | None:
    """The key for ``deployment`` (``None`` when it needs none); :class:`ModelError` when unset."""
    environ = os.environ if environ is None else environ
    env = _missing(deployment, environ)
    if env is not None:
        raise ModelError(_message([(deployment.name, env)]))
    name = key_env(deployment)
    return environ[name].strip() if name else None


def check_keys(deployments: Iterable[ModelDeployment], environ: Mapping[str, str] | None = None) -> None:
    """Fail before any request when a deployment's key is not set, naming every variable missing."""
    environ = os.environ if environ is None else environ
    missing = []
    for deployment in deployments:
        env = _missing(deployment, environ)
        if env is not None and (deployment.name, env) not in missing:
            missing.append((deployment.name, env))
    if missing:
        raise ModelError(_message(missing))


def _message(missing: list[tuple[str, str]]) -> str:
    lines = [
        f"model {name!r} reads its API key from the environment variable {env}, which is not set"
        for name, env in missing
    ]
    envs = sorted({env for _, env in missing})
    hint = "set " + " and ".join(envs) + " (e.g. export " + envs[0] + "=...)"
    return "missing API key: " + "; ".join(lines) + "; " + hint


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each secret (and of its last 8+ characters) replaced."""
    return Redactor(secrets).text(text)


def key_variables(deployments: Iterable[ModelDeployment]) -> list[str]:
    """Every environment variable a key may come from: the deployments' ``api_key_env`` and the defaults."""
    names = {d.api_key_env for d in deployments if d.api_key_env}
    return sorted(names | set(DEFAULT_KEY_ENV.values()))


def registry_redactor(deployments: Iterable[ModelDeployment], environ: Mapping[str, str] | None = None) -> Redactor:
    """A :class:`Redactor` of every secret the registry knows: the keys it declares (those set in the
    environment) and the secrets its deployments' ``args`` hold (:func:`~holistic.core.secrets.secret_values`:
    ``extra_body: {api_key: ...}``, values marked ``secret: true``), so a server's echo of any is scrubbed."""
    deployments = list(deployments)
    environ = os.environ if environ is None else environ
    from_args = [value for d in deployments for value in secret_values(d.args)]
    keys = [environ.get(v, "").strip() for v in key_variables(deployments)]
    return Redactor([*keys, *from_args])
