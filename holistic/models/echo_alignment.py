"""Are a server's echo log-probabilities where they should be? Checked before they are trusted.

Log-likelihood scoring through an OpenAI-compatible server reads the prompt's tokens
back with ``echo`` and takes each token's logprob. Some servers put them in the wrong
place: llama-cpp-python's reports, at position *k*, the distribution *after* token
*k* (so ``token_logprobs[k]`` is token *k*'s probability as the *next* token), one
position late. Every score is then silently wrong (PIQA at chance through such a
server, 0.75 locally on the same weights).

The probe asks the server two things about one fixed prompt: the greedy next token
with its logprob (a plain completion, no echo), and the echo of the prompt followed
by that token. A server that aligns echo logprobs gives the token the same logprob
both ways. One that reports them a position late gives it, at the position before,
among that position's alternatives (``top_logprobs[k-1]``). The verdict:

- ``aligned``: trusted as is;
- ``shifted``: the known one-position shift; each continuation token's logprob is
  then read from the alternatives of the position before it (exact; a token that is
  not among them cannot be recovered, and that request fails saying so), and the
  client's identity records the correction, so no uncorrected cached answer is reused;
- ``unverified``: the server returns no generation logprobs, or the probe's token does
  not come back as one echoed token — nothing contradicts it, and the run says so;
- ``inconsistent``: the two answers disagree in no known way, or the echoed offsets do
  not spell the prompt; log-likelihood requests are refused with the numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

PROBE_PROMPT = "The capital of France is"
"""The fixed prompt of the probe (any model continues it with a clear next token)."""
ALIGNED = "aligned"
SHIFTED = "shifted"
UNVERIFIED = "unverified"
INCONSISTENT = "inconsistent"


WARN_STATUSES = (SHIFTED, UNVERIFIED, INCONSISTENT)
"""Verdicts a run reports as a warning (anything but ``aligned``)."""


def scoring_check(client: object) -> dict[str, object] | None:
    """What a client found when it checked how it scores log-likelihoods (its optional
    ``prepare_scoring()`` hook: an API server's echo alignment); ``None`` for clients that
    score locally or have nothing to report."""
    hook = getattr(client, "prepare_scoring", None)
    facts = hook() if callable(hook) else None
    return facts if isinstance(facts, dict) else None


class EchoToken(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def logprob(self) -> float | None: ...
    @property
    def top(self) -> Mapping[str, float]: ...
    @property
    def offset(self) -> int: ...


@dataclass(frozen=True)
class EchoAlignment:
    """The probe's verdict on one server, with what it measured."""

    status: str
    detail: str
    echo_logprob: float | None = None
    """The probe token's logprob as the echo reported it (where the client reads it)."""
    generated_logprob: float | None = None
    """Its logprob as the plain completion reported it."""
    token: str | None = None
    facts: Mapping[str, object] = field(default_factory=dict)

    @property
    def refuses(self) -> bool:
        return self.status == INCONSISTENT

    def record(self) -> dict[str, object]:
        """What a run's artifacts keep of the probe."""
        return {
            "status": self.status,
            "detail": self.detail,
            "token": self.token,
            "echo_logprob": self.echo_logprob,
            "generated_logprob": self.generated_logprob,
            **self.facts,
        }


def tolerance(value: float) -> float:
    """How far the two answers may differ and still be the same number (nats)."""
    return max(0.05, 0.01 * abs(value))


def judge(prompt: str, generated: tuple[str, float] | None, echoed: Sequence[EchoToken]) -> EchoAlignment:
    """The verdict for ``echoed`` (the echo of ``prompt + generated token``).

    ``generated`` is the greedy next token and its logprob from a plain completion, or
    ``None`` when the server gives no generation logprobs."""
    problem = offsets_problem(echoed)
    if problem is not None:
        return EchoAlignment(INCONSISTENT, f"the echoed tokens do not spell the prompt: {problem}")
    if generated is None:
        return EchoAlignment(UNVERIFIED, "the server returns no log-probabilities for generated tokens to compare")
    token, logprob = generated
    at = [i for i, t in enumerate(echoed) if t.offset >= len(prompt) and t.offset < len(prompt) + len(token)]
    if len(at) != 1 or echoed[at[0]].text != token or echoed[at[0]].offset != len(prompt):
        return EchoAlignment(
            UNVERIFIED,
            f"the probe's next token {token!r} did not come back as one echoed token; alignment not measured",
            token=token,
            generated_logprob=logprob,
        )
    j = at[0]
    echo = echoed[j].logprob
    if echo is not None and abs(echo - logprob) <= tolerance(logprob):
        return EchoAlignment(ALIGNED, "echo and completion agree", echo, logprob, token)
    before = echoed[j - 1].top.get(token) if j >= 1 else None
    if before is not None and abs(before - logprob) <= tolerance(logprob):
        return EchoAlignment(
            SHIFTED,
            "echo log-probabilities are reported one position late (token k's at position k-1's alternatives); "
            "corrected",
            echo,
            logprob,
            token,
            {"position_before": before},
        )
    return EchoAlignment(
        INCONSISTENT,
        f"the server gives the token {token!r} after {prompt!r} log-probability {logprob:.4f} when generating it "
        f"but {echo if echo is None else round(echo, 4)} when echoing it, and no known shift explains the "
        "difference",
        echo,
        logprob,
        token,
    )


def offsets_problem(echoed: Sequence[EchoToken]) -> str | None:
    """Why the echoed offsets are not those of consecutive tokens, or ``None``."""
    for previous, token in itertools.pairwise(echoed):
        if token.offset != previous.offset + len(previous.text):
            return (
                f"token {token.text!r} at offset {token.offset}, but {previous.text!r} at {previous.offset} "
                f"ends at {previous.offset + len(previous.text)}"
            )
    return None


def shifted_logprobs(echoed: Sequence[EchoToken], indices: Sequence[int]) -> list[float | None]:
    """Under the one-position shift, the true logprob of each token at ``indices``: its value
    among the alternatives of the position before (``None`` when it is not among them)."""
    out: list[float | None] = []
    for k in indices:
        before = echoed[k - 1].top if k >= 1 else {}
        value = before.get(echoed[k].text)
        out.append(None if value is None else float(value))
    return out
