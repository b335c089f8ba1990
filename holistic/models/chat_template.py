"""Render a Jinja2 chat template (as stored in GGUF metadata or ``tokenizer_config.json``).

The template runs in Jinja2's immutable sandbox with the conventions chat templates
are written for: ``trim_blocks``/``lstrip_blocks``, a ``raise_exception`` helper, the
``bos_token``/``eos_token`` variables and ``add_generation_prompt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.types import Message


def _raise(message: str) -> None:
    raise ModelError(f"chat template: {message}")


@lru_cache(maxsize=16)
def _compile(template: str) -> Any:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.globals["raise_exception"] = _raise
    return env.from_string(template)


def render_chat_template(
    template: str, messages: Sequence[Message], *, bos_token: str = "", eos_token: str = ""
) -> str:
    """The prompt text for ``messages``, ending with the assistant's turn opened."""
    try:
        compiled = _compile(template)
    except Exception as exc:  # jinja2.TemplateSyntaxError and friends
        raise ModelError(f"chat template does not compile: {exc}") from exc
    return str(
        compiled.render(
            messages=[{"role": m.role, "content": m.content} for m in messages],
            add_generation_prompt=True,
            bos_token=bos_token,
            eos_token=eos_token,
        )
    )
