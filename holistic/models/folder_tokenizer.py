"""A model folder's tokenizer and chat template without transformers or torch.

``--plan`` counts prompt tokens the way the model will see them, but must stay fast
and must not import torch. A Hugging Face tokenizer folder holds everything needed:
``tokenizer.json`` (read by the ``tokenizers`` library, which transformers' fast
tokenizers wrap) and the chat template (``chat_template.jinja``, or
``tokenizer_config.json``'s ``chat_template``), rendered in Jinja2's sandbox as
transformers renders it, with the folder's ``bos_token``/``eos_token``.

Text is encoded without added BOS/EOS, and special-token text inside it (e.g.
``<|im_start|>`` written by a chat template) becomes the special token, as
:class:`~holistic.models.hf_tokenizer.HFTokenizer` encodes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.types import Message
from holistic.models.chat_template import render_chat_template
from holistic.models.hf_local import read_json_object


def _stamp(folder: Path) -> tuple[tuple[int, int] | None, ...]:
    """What a folder's tokenizer is read from, as it is now (modification time and size of each file)."""
    stamps: list[tuple[int, int] | None] = []
    for name in _TOKENIZER_FILES:
        try:
            stat = (folder / name).stat()
        except OSError:
            stamps.append(None)
            continue
        stamps.append((stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


@lru_cache(maxsize=16)
def _read_folder(folder: Path, stamp: tuple[tuple[int, int] | None, ...]) -> tuple[Any, dict[str, Any], str | None]:
    """A folder's tokenizer, ``tokenizer_config.json`` and chat template, read once per process
    while the files are unchanged (``stamp``): a plan counts the tokens of every run of a suite,
    and reading a ``tokenizer.json`` takes a tenth of a second. The tokenizer is never changed
    after it is read, so the runs share it."""
    from tokenizers import Tokenizer as FastTokenizer

    tokenizer = FastTokenizer.from_file(str(folder / "tokenizer.json"))
    config = read_json_object(folder / "tokenizer_config.json")
    return tokenizer, config, _chat_template(folder, config)


def has_tokenizer_files(folder: Path) -> bool:
    """Whether ``folder`` holds a ``tokenizer.json`` this module can read."""
    return (folder / "tokenizer.json").is_file()


class FolderTokenizer:
    """The tokenizer of a folder with ``tokenizer.json`` (see the module docstring)."""

    def __init__(self, folder: Path, name: str = "") -> None:
        if not has_tokenizer_files(folder):
            raise ModelError(f"{folder}: no tokenizer.json")
        self.name = name or str(folder)
        self._tok, config, self._template = _read_folder(folder, _stamp(folder))
        self._config = config
        self._bos = _token_text(config.get("bos_token"))
        self._eos = _token_text(config.get("eos_token"))

    def encode(self, text: str) -> list[int]:
        if not text:
            return []
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return str(self._tok.decode(list(ids), skip_special_tokens=False))

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def special_text(self, key: str) -> str:
        """The text of a special token named in ``tokenizer_config.json`` (``eos_token``, ...); '' if none."""
        return _token_text(self._config.get(key))

    def token_id(self, text: str) -> int | None:
        """The id of one token's text (``None`` for '' or a text that is not one token)."""
        if not text:
            return None
        found = self._tok.token_to_id(text)
        return int(found) if found is not None else None

    @property
    def has_chat_template(self) -> bool:
        return bool(self._template)

    def render_chat(self, messages: Sequence[Message]) -> str:
        if not self._template:
            raise ModelError(f"tokenizer {self.name} has no chat template; use plain prompts")
        return render_chat_template(self._template, messages, bos_token=self._bos, eos_token=self._eos)


def _chat_template(folder: Path, config: dict[str, Any]) -> str | None:
    """The folder's default chat template (a ``.jinja`` file wins, as in transformers)."""
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: [{"name": "default", "template": ...}, ...]
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    return template if isinstance(template, str) and template else None


def _token_text(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""
