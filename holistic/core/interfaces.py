"""The records extensions exchange with the engine, and the model client's interface.

Each extension kind has one contract, a base class the registry checks with ``issubclass``:
:class:`~holistic.scenarios.base.BaseScenario`, :class:`~holistic.metrics.base.BaseMetric`
and :class:`~holistic.perturbations.base.BasePerturbation` (model providers register a client
factory whose clients offer :class:`Client` and :class:`Tokenizer`). This module holds what
those hooks take and return: :class:`ScenarioInfo`, :class:`ScenarioContext`, :class:`MetricInfo`,
:class:`MetricContext`, :class:`MetricResult`.
Extensions register by name (see :mod:`holistic.core.registry`), for installed packages
through the entry-point groups ``holistic.scenarios``, ``holistic.models``,
``holistic.metrics`` and ``holistic.perturbations``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from holistic.core.judges import JudgeDefault
from holistic.core.types import (
    AdapterDefaults,
    Message,
    ModelDeployment,
    PerInstanceStat,
    Request,
    RequestResult,
    Stat,
)

METRIC_CATEGORIES: tuple[str, ...] = (
    "accuracy",
    "calibration",
    "robustness",
    "fairness",
    "efficiency",
    "bias",
    "toxicity",
)


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


class TokenCounter(Protocol):
    """Counts the tokens of a text."""

    def count(self, text: str) -> int: ...


@dataclass(frozen=True)
class CountingTokenizer:
    """A token counter plus what it is (what a :data:`TokenizerResolver` returns)."""

    counter: TokenCounter
    name: str
    """The model or tokenizer reference it was resolved from, or ``chars/4``."""
    fallback: bool = False
    """Counts are ``ceil(characters / 4)`` estimates, not a tokenizer's tokens."""
    reason: str | None = None
    """Why the fallback was used."""


class CharsPerToken:
    """No tokenizer: ``ceil(len(text) / 4)`` tokens."""

    name = "chars/4"

    def count(self, text: str) -> int:
        return -(-len(text) // 4)


def chars_per_token_fallback(reason: str) -> CountingTokenizer:
    """The flagged ``chars/4`` counter, with why it is used."""
    return CountingTokenizer(CharsPerToken(), CharsPerToken.name, fallback=True, reason=reason)


TokenizerResolver = Callable[[str], CountingTokenizer]
"""Model registry name (or a local tokenizer folder / ``.gguf`` file) -> its token counter.
Raises :class:`~holistic.core.errors.UnknownNameError` for an unknown model name."""


@dataclass(frozen=True)
class ScenarioContext:
    """Where a scenario may look for data, and how it may fetch it."""

    data_root: Path | None = None
    """A local mirror: one folder per scenario with the authors' files."""
    cache_dir: Path | None = None
    """Download cache (``~/.cache/holistic/data`` by default)."""
    offline: bool = False
    """Never touch the network."""
    seed: int = 0
    model: str | None = None
    """The model deployment the instances are for (``None`` outside a run)."""
    tokenizers: TokenizerResolver | None = None
    """Resolves a model name to its tokenizer, built by execution from the run's model
    registry (``--models-file`` included); ``None`` outside a run. Scenarios that measure
    text in a model's tokens use this and never build a registry themselves."""


@dataclass(frozen=True)
class ScenarioInfo:
    """Static facts about a scenario, used for planning, defaults and the coverage table."""

    name: str
    description: str = ""
    task: str = "generation"
    """``classification``, ``multiple_choice``, ``qa``, ``generation``, ``summarization``,
    ``language_modeling``, ``ranking``, ``reasoning``, ``long_context``,
    ``instruction_following`` (no references: the instructions are checked by program)."""
    default_adapter: AdapterDefaults = field(default_factory=lambda: AdapterDefaults())
    """AdapterSpec field overrides the scenario recommends (HELM's defaults)."""
    main_metric: str = "exact_match"
    metric_categories: tuple[str, ...] = ("accuracy", "efficiency")
    """Categories that apply to this scenario; the others are 'not applicable'."""
    extra_metrics: tuple[str, ...] = ()
    """Registered metric names measured when their category is asked for, beside the ones the
    task calls for: what the scenario's HELM run spec adds (``classification`` F1 on IMDB,
    ``rouge`` and ``bleu`` on NarrativeQA). A metric that cannot be measured on the run is
    still left out, with its reason."""
    not_applicable_reasons: Mapping[str, str] = field(default_factory=dict)
    """Why a category does not apply (shown in the coverage table)."""
    unperturbed_by_default: Mapping[str, str] = field(default_factory=dict)
    """Perturbation categories (``robustness``, ``fairness``, among :attr:`metric_categories`) whose
    default perturbations a run does not get: they are measured only on a run that names its
    perturbations (``perturbations:``). Each with the reason, which the coverage table shows for
    a run without them (HELM's core runs of CNN/DailyMail and XSum are unperturbed)."""
    tags: tuple[str, ...] = ()
    breakdowns: tuple[str, ...] = ()
    """Instance metadata keys whose values each get their own statistics too (sub-split
    ``key=value``), e.g. BLiMP's ``paradigm`` and ``phenomenon``."""
    judge: JudgeDefault | None = None
    """The scenario's own judge prompt and verdict rule (used when a run names only a judge's model)."""
    judge_fields: tuple[str, ...] = ()
    """Metadata fields every instance carries, which a judge template may use (``metadata.<field>``)."""
    language: str = "en"
    """The language of the instances' text (a BCP 47 code; ``mul`` for several): perturbations that
    rewrite English words do not apply to other text (:mod:`holistic.scenarios.loading.languages`)."""

    def perturbed_by(self, kinds: Collection[str | None]) -> ScenarioInfo:
        """These facts for a run whose perturbations are of ``kinds`` (``robustness``,
        ``fairness``): a category of :attr:`unperturbed_by_default` the run has no
        perturbation of does not apply, for the scenario's reason."""
        missing = {c: reason for c, reason in self.unperturbed_by_default.items() if c not in kinds}
        if not missing:
            return self
        return replace(self, not_applicable_reasons={**self.not_applicable_reasons, **missing})


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


@runtime_checkable
class Tokenizer(Protocol):
    """The model's own tokenizer (for window fitting and token counts)."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...

    def count(self, text: str) -> int: ...

    def render_chat(self, messages: Sequence[Message]) -> str:
        """The exact text the model sees for these messages (chat template applied)."""
        ...


@runtime_checkable
class Client(Protocol):
    """Serves requests for one model deployment."""

    deployment: ModelDeployment
    request_batch_size: int
    """Requests per :meth:`process` call unless ``--batch-size`` says otherwise: what the
    client batches well (a local engine packs a large batch into full forward passes)."""

    def identity(self) -> dict[str, Any]:
        """Full identity for the cache key: deployment identity plus weights hash / engine."""
        ...

    def tokenizer(self) -> Tokenizer: ...

    def process(self, requests: Sequence[Request]) -> list[RequestResult]:
        """Serve a batch; one result per request, in order. Never raises for one bad
        request: failures come back as ``RequestResult.failure(error, kind)``."""
        ...

    def begin_run(self) -> None:
        """Called before a run's first request: drop state kept from earlier runs (e.g. an
        engine's stored shared prefixes) so the run's results depend only on its own requests."""
        ...

    def close(self) -> None: ...

    def usage(self) -> dict[str, int]:
        """What an in-process engine has done so far (``forward_calls``, ``forward_tokens``,
        ``padded_positions``, ``prefix_hits``, ``model_loads``); empty for clients that do not count."""
        ...


# ---------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricInfo:
    """Declared facts about one metric value name."""

    name: str
    category: str
    higher_is_better: bool = True
    needs_logprobs: bool = False
    needs_references: bool = True
    needs_generation: bool = False
    description: str = ""


@dataclass(frozen=True)
class MetricContext:
    """What a metric may know about the run besides its request states."""

    run_id: str
    deployment: ModelDeployment
    scenario_info: ScenarioInfo
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class MetricResult:
    per_instance: list[PerInstanceStat] = field(default_factory=list)
    """One value per (instance, trial, metric name)."""
    run_stats: list[Stat] = field(default_factory=list)
    """Run-level values that are not means over instances (e.g. ECE, NDCG)."""
    artifacts: dict[str, Any] = field(default_factory=dict)
    """JSON-compatible extras for the site (reliability-diagram bins...)."""
