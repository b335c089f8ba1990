"""Example plugin: a model provider. Its model answers with the last word of the prompt.

Load it with ``helm-run SPEC --plugins docs/examples/model_last_word.py --models-file
docs/examples/models_last_word.yaml``: the models file declares a deployment whose
``provider: last_word`` is the provider registered here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from holistic.plugin import (
    BaseClient,
    Completion,
    Message,
    ModelDeployment,
    OwnTokenizer,
    Provider,
    Request,
    RequestResult,
    Token,
    register_provider,
)


class WordTokenizer:
    """Whitespace-separated words as tokens (ids index a vocabulary grown as words are seen)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._words: list[str] = []

    def encode(self, text: str) -> list[int]:
        out = []
        for word in text.split():
            if word not in self._ids:
                self._ids[word] = len(self._words)
                self._words.append(word)
            out.append(self._ids[word])
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self._words[i] for i in ids)

    def count(self, text: str) -> int:
        return len(text.split())

    def render_chat(self, messages: Sequence[Message]) -> str:
        return "\n".join(f"{m.role}: {m.content}" for m in messages)


class LastWordClient(BaseClient):
    """Answers every generation request with the prompt's last word; cannot score text.

    ``BaseClient`` gives every member of the client protocol but ``process`` a default (32
    requests per batch, nothing kept between runs, nothing to count or close)."""

    engine_name = "last_word-1"  # part of the request cache key: change it when the answers change

    def __init__(self, deployment: ModelDeployment) -> None:
        super().__init__(deployment)
        self._tokenizer = WordTokenizer()

    def tokenizer(self) -> WordTokenizer:
        return self._tokenizer

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        results = []
        for request in requests:
            start = time.perf_counter()
            if request.kind != "generate":
                # One failed request is a result, never an exception.
                results.append(RequestResult.failure("last_word only generates", "fatal"))
                continue
            text = self._tokenizer.render_chat(request.messages) if request.messages else request.prompt
            words = text.split()
            answer = f" {words[-1]}" if words else ""
            completion = Completion(text=answer, logprob=0.0, tokens=(Token(answer, 0.0),))
            results.append(
                RequestResult(
                    success=True,
                    completions=(completion,) * request.num_completions,
                    latency_s=time.perf_counter() - start,
                    prompt_tokens=len(words),
                    completion_tokens=1,
                )
            )
        return results


@register_provider("last_word")
class LastWordProvider(Provider):
    """The facts of the models whose ``provider:`` is ``last_word``, and their client."""

    # Scenarios that measure text in the model's tokens, and --plan, count with the same
    # tokenizer the client uses.
    tokens = OwnTokenizer(lambda deployment: WordTokenizer())
    # in_process = True would batch its requests on one thread (a model in this process);
    # the default, False, sends them from -j threads, as for a remote API.

    def create_client(self, deployment: ModelDeployment) -> LastWordClient:
        return LastWordClient(deployment)
