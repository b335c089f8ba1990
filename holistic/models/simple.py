"""``simple``: a deterministic model for tests only (never a default).

It answers without any weights, so the whole pipeline can be tested offline and
fast. Behaviour:

- ``generate``: if the prompt ends with an arithmetic question (``a op b``), the
  answer; otherwise the first word of the prompt's last non-empty line after its
  prefix (``Input: foo bar`` -> ``foo``). ``simple/echo`` with ``temperature > 0``
  picks a word of the prompt from a seed derived from the request.
- ``loglikelihood``: ``-0.5`` per character of the continuation, plus a small
  deterministic jitter from the prompt and continuation.

Set ``HOLISTIC_SIMPLE_CALL_LOG`` to a file path to have every served request
appended to it (one line each: kind, prompt length, a hash of the request, the deployment): tests
count model calls, and repeated ones, across processes with it.
The provider arg ``delay_s`` (e.g. in a ``--models-file`` entry) makes every request
take that many seconds, so tests can interrupt a run part-way.

Two more switches for the reliability tests (environment variables, so they do not
change the model's identity or its cache keys): ``HOLISTIC_SIMPLE_FAIL_RATE`` (0..1)
fails that share of requests, chosen by a hash of the prompt, like a flaky server
(``1`` is a dead endpoint); ``HOLISTIC_SIMPLE_FAIL_MODEL`` names one deployment whose every
request fails (a dead judge beside a healthy candidate); ``HOLISTIC_SIMPLE_LEAK_ENV`` names an environment variable
whose value is appended to every completion and error, like a server echoing a key.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import replace

from holistic.core.hashing import canonical_json, sha256_hex, stable_seed
from holistic.core.types import Completion, Message, ModelDeployment, Request, RequestResult, Token
from holistic.models.base_client import BaseClient

_TOKEN_RE = re.compile(r"\s+|\w+|[^\w\s]")
_WORD_RE = re.compile(r"\w+")
_LISTED_COUNT_CHARS = 1 << 20
"""Texts up to this length are counted from the list of their tokens (a few megabytes at most)."""
_ARITH_WINDOW = 4096
"""Characters at the end of the prompt searched for a sum (operands of a thousand digits fit)."""
_ARITH_RE = re.compile(r"(-?\d+)\s*([-+*])\s*(-?\d+)\s*(?:=|\?)?\s*(?:Answer:|Output:|A:)?\s*$")


class SimpleTokenizer:
    """Words, runs of whitespace and single punctuation marks are tokens."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._inverse: list[str] = []

    def tokens(self, text: str) -> list[str]:
        return _TOKEN_RE.findall(text)

    def encode(self, text: str) -> list[int]:
        ids = []
        for tok in self.tokens(text):
            if tok not in self._vocab:
                self._vocab[tok] = len(self._inverse)
                self._inverse.append(tok)
            ids.append(self._vocab[tok])
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self._inverse[i] for i in ids)

    def count(self, text: str) -> int:
        if len(text) <= _LISTED_COUNT_CHARS:
            return len(_TOKEN_RE.findall(text))  # a third faster than counting matches one by one
        return sum(1 for _ in _TOKEN_RE.finditer(text))  # no copy of any token (a prompt may be huge)

    def render_chat(self, messages: Sequence[Message]) -> str:
        return "".join(f"<|{m.role}|>\n{m.content}\n" for m in messages) + "<|assistant|>\n"


class SimpleClient(BaseClient):
    """The deterministic test model."""

    engine_name = "simple-1"

    def __init__(self, deployment: ModelDeployment) -> None:
        super().__init__(deployment)
        self._tokenizer = SimpleTokenizer()
        self._log = os.environ.get("HOLISTIC_SIMPLE_CALL_LOG")

    def tokenizer(self) -> SimpleTokenizer:
        return self._tokenizer

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        delay = float(self.deployment.args.get("delay_s", 0.0))
        if delay > 0:
            time.sleep(delay * len(requests))
        results = [self._flaky(r) or self._one(r) for r in requests]
        leak = os.environ.get(os.environ.get("HOLISTIC_SIMPLE_LEAK_ENV", "") or "\0", "")
        if leak:
            results = [
                replace(
                    r,
                    completions=tuple(replace(c, text=c.text + " " + leak) for c in r.completions),
                    error=(r.error + " " + leak) if r.error else r.error,
                )
                for r in results
            ]
        if self._log:
            with open(self._log, "a", encoding="utf-8") as fh:
                for r in requests:
                    digest = sha256_hex(canonical_json(r.canonical()))[:16]
                    fh.write(f"{r.kind}\t{len(r.text)}\t{digest}\t{self.deployment.name}\n")
        return results

    def _flaky(self, request: Request) -> RequestResult | None:
        rate = float(os.environ.get("HOLISTIC_SIMPLE_FAIL_RATE", "0") or 0)
        if os.environ.get("HOLISTIC_SIMPLE_FAIL_MODEL") == self.deployment.name:
            rate = 1.0
        if rate <= 0 or stable_seed("fail", request.text, request.continuation or "") % 1000 >= rate * 1000:
            return None
        return RequestResult.failure("simple: HTTP 500 (injected failure)", "server", engine="simple")

    def _one(self, request: Request) -> RequestResult:
        logprobs = self.deployment.capabilities.logprobs
        text = request.prompt if request.messages is None else self._tokenizer.render_chat(request.messages)
        prompt_tokens = self._tokenizer.count(text)
        if request.kind in ("loglikelihood", "rolling_loglikelihood"):
            if not self.deployment.capabilities.prompt_logprobs:
                return RequestResult.failure("simple/no-logprobs cannot score text", "fatal", engine="simple")
            target = request.continuation if request.kind == "loglikelihood" else text
            toks = self._tokenizer.tokens(target)
            jitter = (stable_seed(text, target) % 1000) / 1000.0
            per_tok = [-0.5 * len(t) - jitter / max(len(toks), 1) for t in toks]
            tokens = tuple(Token(t, lp) for t, lp in zip(toks, per_tok, strict=True))
            return RequestResult(
                success=True,
                completions=(Completion(text=target, logprob=sum(per_tok), tokens=tokens, is_greedy=False),),
                prompt_tokens=prompt_tokens + (len(toks) if request.kind == "loglikelihood" else 0),
                has_logprobs=True,
                engine="simple",
            )
        completions = []
        for i in range(request.num_completions):
            # Answer from what was written, not from the chat template's role markers.
            source = text if request.messages is None else "\n".join(m.content for m in request.messages)
            answer = self._answer(source, request, i)
            toks = self._tokenizer.tokens(answer)[: max(request.max_tokens, 0)]
            answer = "".join(toks)
            for stop in request.stop:
                if stop and stop in answer:
                    answer = answer[: answer.index(stop)]
            tokens = tuple(Token(t, -0.1 * (j + 1)) for j, t in enumerate(self._tokenizer.tokens(answer)))
            completions.append(
                Completion(
                    text=answer,
                    logprob=sum(t.logprob for t in tokens) if logprobs else 0.0,
                    tokens=tokens if logprobs else (),
                    finish_reason="stop",
                )
            )
        return RequestResult(
            success=True,
            completions=tuple(completions),
            prompt_tokens=prompt_tokens,
            completion_tokens=sum(len(c.tokens) or self._tokenizer.count(c.text) for c in completions),
            has_logprobs=logprobs,
            engine="simple",
        )

    def _answer(self, text: str, request: Request, index: int) -> str:
        lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
        if not lines:
            return ""
        # the sum ends the prompt (the pattern is anchored at the end): its last characters suffice,
        # where searching a line of hundreds of megabytes would try every position of it
        tail = " ".join(line[-_ARITH_WINDOW:] for line in lines[-2:])[-_ARITH_WINDOW:]
        m = _ARITH_RE.search(tail)
        if m:
            a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
            return " " + str(a + b if op == "+" else a - b if op == "-" else a * b)
        if request.temperature > 0:
            words: list[str] = _WORD_RE.findall(text)
            if words:
                return " " + words[stable_seed(text, request.seed, index, request.trial_tag) % len(words)]
        # The first word of the last line that carries content after a "Prefix:" (searched in
        # place: a line may be hundreds of megabytes, and only its first word is wanted).
        for line in reversed(lines):
            colon = line.find(":")
            found = _WORD_RE.search(line, colon + 1)
            if found:
                return " " + found.group()
        return ""


def create_simple_client(deployment: ModelDeployment) -> SimpleClient:
    return SimpleClient(deployment)
