"""A transformers tokenizer behind holistic's :class:`~holistic.core.interfaces.Tokenizer` protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.types import Message


class HFTokenizer:
    """Raw-text encoding (no special tokens added) and the model's own chat template.

    Special-token text inside a prompt (e.g. ``<|im_start|>`` written by the chat
    template) is encoded as the special token, as the model saw it in training.
    """

    def __init__(self, tokenizer: Any, name: str = "") -> None:
        self.hf = tokenizer
        self.name = name

    def encode(self, text: str) -> list[int]:
        return list(self.hf(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.hf.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def count(self, text: str) -> int:
        return len(self.encode(text))

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.hf, "chat_template", None))

    def render_chat(self, messages: Sequence[Message]) -> str:
        if not self.has_chat_template:
            raise ModelError(f"tokenizer {self.name or type(self.hf).__name__} has no chat template; use plain prompts")
        rendered = self.hf.apply_chat_template(
            [{"role": m.role, "content": m.content} for m in messages],
            tokenize=False,
            add_generation_prompt=True,
        )
        return str(rendered)
