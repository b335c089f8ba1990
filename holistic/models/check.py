"""Do several providers agree on log-likelihoods? A check users can run.

:func:`compare_loglikelihoods` scores a few fixed continuations (``" Paris"`` after
``"The capital of France is"``...) on each client and flags the cases where two clients
differ by more than ``tolerance`` nats. The summed logprob of a continuation is the
log-probability of its *text*, so clients with different tokenizers are comparable.

Typical uses: the embedded model under its two engines (Q4_1 GGUF in llama.cpp vs.
the dequantised weights in transformers), or a local model against the same weights
behind an OpenAI-compatible server.

>>> table = compare_loglikelihoods({"a": client_a, "b": client_b})   # doctest: +SKIP
>>> print(table.format())                                              # doctest: +SKIP

From the shell: ``python -m holistic.cli.check`` (:mod:`holistic.cli.check`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from holistic.core.interfaces import Client
from holistic.core.types import Request


@dataclass(frozen=True)
class CheckCase:
    """One continuation scored after one prompt."""

    prompt: str
    continuation: str


DEFAULT_CASES: tuple[CheckCase, ...] = (
    CheckCase("The capital of France is", " Paris"),
    CheckCase("The capital of France is", " London"),
    CheckCase("Water freezes at zero degrees", " Celsius"),
    CheckCase("One, two, three, four,", " five"),
    CheckCase("The opposite of hot is", " cold"),
    CheckCase("Question: What is 2 + 2?\nAnswer:", " 4"),
)


@dataclass(frozen=True)
class AgreementRow:
    """One case across all clients."""

    case: CheckCase
    logprobs: Mapping[str, float | None]
    """Summed logprob of the continuation per client (``None`` when the request failed)."""
    errors: Mapping[str, str] = field(default_factory=dict)
    """Error message per client whose request failed."""
    max_diff: float | None = None
    """Largest pairwise difference among the clients that answered."""
    flagged: bool = False
    """``max_diff`` exceeds the tolerance, or a client failed."""


@dataclass(frozen=True)
class AgreementTable:
    """The result of :func:`compare_loglikelihoods`."""

    names: tuple[str, ...]
    rows: tuple[AgreementRow, ...]
    tolerance: float

    @property
    def ok(self) -> bool:
        """No case was flagged."""
        return not any(r.flagged for r in self.rows)

    @property
    def flagged(self) -> tuple[AgreementRow, ...]:
        return tuple(r for r in self.rows if r.flagged)

    def format(self) -> str:
        """A plain-text table, one line per case, flagged cases marked ``!!``."""
        head = ["prompt", "continuation", *self.names, "max diff", ""]
        lines = [head]
        for row in self.rows:
            cells = [_clip(row.case.prompt, 32), repr(row.case.continuation)]
            for name in self.names:
                value = row.logprobs.get(name)
                cells.append("error" if value is None else f"{value:.4f}")
            cells.append("-" if row.max_diff is None else f"{row.max_diff:.4f}")
            cells.append("!!" if row.flagged else "")
            lines.append(cells)
        widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
        out = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
        out.append(
            f"tolerance {self.tolerance} nats: {'all agree' if self.ok else f'{len(self.flagged)} case(s) disagree'}"
        )
        for row in self.rows:
            for name, message in row.errors.items():
                out.append(f"  {name} failed on {row.case.prompt!r} + {row.case.continuation!r}: {message}")
        return "\n".join(out)


def compare_loglikelihoods(
    clients: Mapping[str, Client] | Sequence[Client],
    cases: Sequence[CheckCase] | Sequence[tuple[str, str]] = DEFAULT_CASES,
    *,
    tolerance: float = 0.1,
) -> AgreementTable:
    """Score every case on every client and flag disagreements above ``tolerance`` nats."""
    named = _named(clients)
    if len(named) < 2:
        raise ValueError("compare_loglikelihoods needs at least two clients to compare")
    checked = [c if isinstance(c, CheckCase) else CheckCase(*c) for c in cases]
    scores: dict[str, list[tuple[float | None, str | None]]] = {}
    for name, client in named.items():
        requests = [
            Request(model=client.deployment.name, kind="loglikelihood", prompt=c.prompt, continuation=c.continuation)
            for c in checked
        ]
        results = client.process(requests)
        scores[name] = [
            (r.completions[0].logprob, None) if r.success and r.completions else (None, r.error or "no result")
            for r in results
        ]
    rows = []
    for i, case in enumerate(checked):
        logprobs = {name: scores[name][i][0] for name in named}
        errors = {name: str(scores[name][i][1]) for name in named if scores[name][i][1] is not None}
        values = [v for v in logprobs.values() if v is not None]
        max_diff = max(values) - min(values) if len(values) >= 2 else None
        flagged = bool(errors) or (max_diff is not None and max_diff > tolerance)
        rows.append(AgreementRow(case, logprobs, errors, max_diff, flagged))
    return AgreementTable(tuple(named), tuple(rows), tolerance)


def _named(clients: Mapping[str, Client] | Sequence[Client]) -> dict[str, Client]:
    """Clients by display name: the deployment name, plus the engine when names repeat."""
    if isinstance(clients, Mapping):
        return dict(clients)
    bases = [c.deployment.name for c in clients]
    named: dict[str, Client] = {}
    for client, base in zip(clients, bases, strict=True):
        name = base
        if bases.count(base) > 1:
            name = f"{base} [{client.identity().get('engine', '?')}]"
        unique, k = name, 2
        while unique in named:
            unique, k = f"{name} #{k}", k + 1
        named[unique] = client
    return named


def _clip(text: str, width: int) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= width else flat[: width - 1] + "…"
