"""Small instances, deployments, a word tokenizer and a fake embedder for adaptation tests."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from holistic.core.types import Capabilities, Instance, Message, ModelDeployment, Reference
from holistic.models.simple import SimpleTokenizer

CHAT_MODEL = ModelDeployment(
    name="test/chat",
    provider="simple",
    model_id="chat",
    context_window=4096,
    capabilities=Capabilities(logprobs=True, prompt_logprobs=True, chat=True, completions=True),
)
PLAIN_MODEL = ModelDeployment(
    name="test/plain",
    provider="simple",
    model_id="plain",
    context_window=4096,
    capabilities=Capabilities(logprobs=True, prompt_logprobs=True, chat=False),
)


def mc(iid: str, question: str, choices: Sequence[str], correct: int, split: str = "train") -> Instance:
    refs = tuple(Reference(c, ("correct",) if j == correct else ()) for j, c in enumerate(choices))
    return Instance(id=iid, input=question, references=refs, split=split)


COLOURS = ("red", "green", "blue")
TRAIN = [
    mc("t0", "Colour of grass?", COLOURS, 1),
    mc("t1", "Colour of blood?", COLOURS, 0),
    mc("t2", "Colour of the sea?", COLOURS, 2),
]
EVAL = [mc("e0", "Colour of the sky?", COLOURS, 2, split="test")]


def labelled(n_per_label: dict[str, int]) -> list[Instance]:
    """Classification training instances: ``n`` per label, ids ``<label><i>``."""
    out = []
    for label, n in n_per_label.items():
        for i in range(n):
            out.append(
                Instance(id=f"{label}{i}", input=f"text {label} {i}", references=(Reference(label, ("correct",)),))
            )
    return out


class WordTokenizer(SimpleTokenizer):
    """Words, whitespace runs and punctuation marks are tokens; round-trips exactly."""

    def render_chat(self, messages: Sequence[Message]) -> str:
        return "".join(f"<{m.role}>\n{m.content}\n" for m in messages) + "<assistant>\n"


class BagOfWordsEmbedder:
    """A cheap deterministic embedder: normalised word counts over a fixed vocabulary."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        index = {w: i for i, w in enumerate(_VOCAB)}
        rows = np.zeros((len(texts), len(_VOCAB)))
        for r, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                if word in index:
                    rows[r, index[word]] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


_VOCAB = (
    "cat",
    "cats",
    "dog",
    "dogs",
    "kitten",
    "purr",
    "bark",
    "pet",
    "stock",
    "market",
    "price",
    "shares",
    "rain",
    "weather",
    "sunny",
    "cloud",
    "the",
    "a",
    "is",
    "are",
    "what",
    "do",
)
