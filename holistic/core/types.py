"""Core value types shared by every part of holistic.

Every type here is a frozen dataclass: values, not objects with behaviour.
Other packages (scenarios, adaptation, models, metrics, execution) exchange
these and nothing else, so each part can be read and tested alone.

Mappings inside frozen dataclasses are stored as plain ``dict`` for ease of
use; treat them as read-only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from holistic.core.hashing import canonical_json, short_hash
from holistic.core.judges import Annotation, JudgeSpec
from holistic.core.secrets import is_secret_name

CORRECT_TAG = "correct"


class RequestRole(StrEnum):
    """What a request is for within its instance (``Request.role``; the ``role`` column)."""

    MAIN = "main"
    """The request whose answer is scored (generation, or the scored choice)."""
    CALIBRATION = "calibration"
    """The answer scored after a neutral cue alone (calibrated multiple choice)."""
    YES = "yes"
    """Ranking: the passage judged relevant."""
    NO = "no"
    """Ranking: the passage judged not relevant."""
    WINDOW = "window"
    """Language modelling: one window of a document scored token by token."""


# ---------------------------------------------------------------------------
# Scenario data
# ---------------------------------------------------------------------------

TRAIN_SPLIT = "train"
VALID_SPLIT = "valid"
TEST_SPLIT = "test"
EVAL_SPLITS = (VALID_SPLIT, TEST_SPLIT)

SAMPLE_UNIT_KEY = "sample_unit"
"""Instance metadata key: instances sharing a value are down-sampled together (kept or
dropped as one unit, e.g. a needle record and its zero-needle twin)."""
SAMPLE_STRATUM_KEY = "sample_stratum"
"""Instance metadata key: down-sampling takes units from every stratum in turn, so cells
(e.g. task x length) stay balanced."""


@dataclass(frozen=True)
class Reference:
    """One reference output of an instance (a gold answer, or a choice)."""

    output: str
    """The reference text (an answer, or the text of one choice)."""

    tags: tuple[str, ...] = ()
    """Tags such as ``"correct"``; a reference is correct when it carries ``"correct"``."""

    relevance: int | None = None
    """Ranking: the graded relevance judgement of this passage (e.g. 0-3 on TREC); ``None``
    when the data has no grades (then a ``correct`` passage counts as grade 1, others 0)."""

    first_stage_rank: int | None = None
    """Ranking: this passage's rank (1 = top) in the first-stage retriever's list; ``None``
    for a passage that list did not retrieve (added only because it is judged)."""

    @property
    def is_correct(self) -> bool:
        return CORRECT_TAG in self.tags


@dataclass(frozen=True)
class PerturbationDescription:
    """Which perturbation produced an instance (``None`` on an original)."""

    name: str
    """Registered perturbation name, e.g. ``"typos"`` or ``"dialect"``."""

    robustness: bool = False
    """Counts toward the robustness category (worst case over variants)."""

    fairness: bool = False
    """Counts toward the fairness category (worst case over variants)."""

    args: tuple[tuple[str, Any], ...] = ()
    """The perturbation's arguments, sorted by name, for display and hashing."""


@dataclass(frozen=True)
class Instance:
    """One example of a scenario: an input and its references."""

    id: str
    """Stable identifier, unique within the scenario (perturbed variants share it)."""

    input: str
    """The input text (question, passage, document...)."""

    references: tuple[Reference, ...] = ()
    """Gold answers and/or choices; for multiple choice, the choices in order."""

    split: str = TEST_SPLIT
    """``train``, ``valid`` or ``test``."""

    sub_split: str | None = None
    """A finer partition (e.g. a CivilComments identity group)."""

    perturbation: PerturbationDescription | None = None
    """Set on perturbed variants; ``None`` on the original."""

    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form per-instance facts (subject, gender, needle positions...)."""

    continuation: str | None = None
    """Partial scoring (WinoGrande): the text scored after each choice, where each
    reference is that choice's own context; ``None`` for ordinary instances."""

    @property
    def correct_references(self) -> tuple[Reference, ...]:
        return tuple(r for r in self.references if r.is_correct)

    @property
    def first_correct(self) -> Reference | None:
        refs = self.correct_references
        return refs[0] if refs else None

    def with_input(self, text: str, perturbation: PerturbationDescription) -> Instance:
        return replace(self, input=text, perturbation=perturbation)


# ---------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------

AdaptationMethod = Literal[
    "generation",
    "multiple_choice_joint",
    "multiple_choice_separate_original",
    "multiple_choice_separate_calibrated",
    "language_modeling",
    "ranking_binary",
]
ADAPTATION_METHODS: tuple[str, ...] = (
    "generation",
    "multiple_choice_joint",
    "multiple_choice_separate_original",
    "multiple_choice_separate_calibrated",
    "language_modeling",
    "ranking_binary",
)


class PromptFormat(StrEnum):
    """How a run's prompts are sent (``AdapterSpec.prompt_format``)."""

    AUTO = "auto"
    """Chat messages for generation methods on chat models, plain text otherwise."""
    PLAIN = "plain"
    """Raw text."""
    CHAT = "chat"
    """Messages rendered with the model's chat template."""


PROMPT_FORMATS: tuple[str, ...] = tuple(f.value for f in PromptFormat)


@dataclass(frozen=True)
class AdapterSpec:
    """How instances become requests: the prompt, the examples and the decoding."""

    method: AdaptationMethod = "generation"
    """One of :data:`ADAPTATION_METHODS`."""

    instructions: str = ""
    """Task instructions placed before (or after) the examples and input."""

    instruction_placement: str = "before"
    """``before`` or ``after`` the in-context examples and the input."""

    global_prefix: str = ""
    """Text put at the very start of every prompt."""

    global_suffix: str = ""
    """Text put at the very end of every prompt."""

    input_prefix: str = "Input: "
    input_suffix: str = "\n"
    reference_prefix: str = "A. "
    """Prefix of the first lettered choice (later ones count up: B., C., ...)."""
    reference_suffix: str = "\n"
    output_prefix: str = "Output: "
    output_suffix: str = "\n"
    instance_prefix: str = "\n"
    """Separator between in-context examples and before the eval instance."""

    template: str | None = None
    """A Jinja2 template for the instance block; overrides the prefix/suffix fields."""

    prompt_format: PromptFormat = PromptFormat.AUTO
    """``plain`` (raw text), ``chat`` (messages with the model's chat template) or
    ``auto`` (chat for generation methods on chat models, plain otherwise); a spec's
    string is read as the :class:`PromptFormat` it names."""

    chat_examples: str = "multi_turn"
    """With chat prompts: examples as alternating turns (``multi_turn``) or inside one
    user turn (``single_turn``)."""

    max_train_instances: int = 5
    """In-context examples per prompt (0 for zero-shot)."""

    num_train_trials: int = 1
    """Independent draws of in-context examples; results are the mean over trials."""

    selection: str = "helm"
    """In-context example selection: ``helm`` (seeded, class-balanced), ``fixed``
    (first k) or ``mmr`` (maximal marginal relevance over sentence embeddings)."""

    mmr_lambda: float = 0.5
    """Relevance/diversity trade-off for ``mmr`` (1.0 = relevance only)."""

    max_eval_instances: int | None = None
    """Down-sampling of evaluation instances (``None`` = all), as ``eval_instances`` says."""

    eval_instances: str = "sample"
    """How ``max_eval_instances`` picks: ``sample`` (seeded from the spec and the instance
    ids, as HELM) or ``first`` (the first N in the data's own order, as lm-evaluation-harness's
    ``--limit``)."""

    protocol: str = "helm"
    """Whose protocol the run reproduces: ``helm`` (HELM's prompts, requests, sampling and
    scoring; a departing option is a compile-time error) or ``holistic`` (holistic's own
    options allowed; its defaults are ``eval_sampling: stable`` and ``answer_parsing:
    lenient``). The run spec compiler sets it (``protocol:`` at the top, in ``defaults`` or
    per run; default ``helm`` for HELM's core scenarios, ``holistic`` otherwise)."""

    eval_sampling: str = "helm"
    """How evaluation instances are down-sampled: ``helm`` (HELM's runner: NumPy's
    legacy generator seeded with 0 draws ``max_eval_instances`` of the pooled valid and
    test instances without replacement, in drawn order) or ``stable`` (per-instance
    hash ranks: raising the limit only adds instances, scenario order kept)."""

    answer_parsing: str = "helm"
    """How a joint multiple-choice answer is read: ``helm`` (``completion.strip()`` must
    be exactly a choice letter, anything else is wrong) or ``lenient`` (also lower case,
    ``(B)``, ``B.``, ``Answer: B`` and the choice text; its accuracy is reported as
    ``exact_match_lenient``)."""

    num_outputs: int = 1
    """Completions sampled per request (for @k metrics)."""

    temperature: float = 0.0
    max_tokens: int = 100
    stop_sequences: tuple[str, ...] = ()

    length_normalization: str = "none"
    """For separate multiple-choice scoring, which length normalisation is the headline:
    ``none``, ``char``, ``token`` or ``byte`` (every variant is reported; see
    :mod:`holistic.metrics.choices`)."""

    truncation_side: str = "left"
    """Which side of the input to cut when the prompt does not fit: ``left`` or ``right``."""

    post_processing: tuple[str, ...] = ()
    """Named output post-processors applied in order (e.g. ``strip``, ``first_line``)."""

    top_k_logprobs: int = 0
    """Top-k alternatives per generated token (0 = only the chosen token's logprob)."""

    language_modeling_window: int = 512
    """Tokens per rolling window for ``language_modeling``."""

    language_modeling_context: int = 128
    """Conditioning tokens carried into each later window."""

    seed: int = 0
    """Base seed for every random choice of this run (mixed with instance ids)."""

    def __post_init__(self) -> None:
        # A spec writes the format as a string; an unknown one is kept for validation to name.
        if not isinstance(self.prompt_format, PromptFormat) and self.prompt_format in PROMPT_FORMATS:
            object.__setattr__(self, "prompt_format", PromptFormat(self.prompt_format))

    def replace(self, **changes: Any) -> AdapterSpec:
        return replace(self, **changes)


@dataclass(frozen=True)
class ScenarioSpec:
    """A registered scenario name plus its arguments."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()
    """Arguments sorted by name; values are JSON-compatible."""

    @property
    def args_dict(self) -> dict[str, Any]:
        return dict(self.args)

    @staticmethod
    def make(name: str, args: Mapping[str, Any] | None = None) -> ScenarioSpec:
        return ScenarioSpec(name=name, args=tuple(sorted((args or {}).items())))


@dataclass(frozen=True)
class PerturbationSpec:
    """A registered perturbation name plus its arguments."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    @property
    def args_dict(self) -> dict[str, Any]:
        return dict(self.args)

    @staticmethod
    def make(name: str, args: Mapping[str, Any] | None = None) -> PerturbationSpec:
        return PerturbationSpec(name=name, args=tuple(sorted((args or {}).items())))


@dataclass(frozen=True)
class RunSpec:
    """One cell of the run matrix: a scenario, an adaptation, a model, metrics."""

    name: str
    """Readable name, e.g. ``mmlu:subject=anatomy,method=multiple_choice_joint,model=...``."""

    scenario: ScenarioSpec
    adapter: AdapterSpec
    model: str
    """Model deployment name from the registry."""

    metrics: tuple[str, ...] = ("accuracy",)
    """Metric categories (``accuracy``, ``calibration``...) and/or metric names."""

    perturbations: tuple[PerturbationSpec, ...] = ()
    groups: tuple[str, ...] = ()
    """Run groups for summarisation (defaults to the scenario name)."""
    judges: tuple[JudgeSpec, ...] = ()
    """Models that grade this run's generations (the annotation stage), in the spec's order."""

    def canonical(self) -> dict[str, Any]:
        """JSON-compatible form used for hashing and ``run_spec.json`` (``judges`` only when
        the run has some, so the ids of unjudged runs do not change)."""
        from dataclasses import asdict

        out: dict[str, Any] = {
            "name": self.name,
            "scenario": {"name": self.scenario.name, "args": dict(self.scenario.args)},
            "adapter": asdict(self.adapter),
            "model": self.model,
            "metrics": list(self.metrics),
            "perturbations": [{"name": p.name, "args": dict(p.args)} for p in self.perturbations],
            "groups": list(self.groups),
        }
        if self.judges:
            out["judges"] = [j.canonical() for j in self.judges]
        return out

    @functools.cached_property
    def run_id(self) -> str:
        """Stable id: a readable, filesystem-safe name plus a short hash of the spec (computed once:
        a plan of many runs asks for it often)."""
        readable = _slug(f"{self.scenario.name}_{self.model}")
        return f"{readable}-{short_hash(canonical_json(self.canonical()))}"


def _slug(text: str) -> str:
    out = []
    for ch in text:
        out.append(ch if ch.isalnum() or ch in "-_." else "_")
    slug = "".join(out).strip("_")
    return slug[:80]


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Capabilities:
    """What a model deployment can do."""

    logprobs: bool = False
    """Returns token log-probabilities of generated tokens."""

    prompt_logprobs: bool = False
    """Can score a given continuation (log-likelihood requests)."""

    chat: bool = False
    """Takes chat messages (has a chat template or a messages API)."""

    completions: bool = True
    """Takes plain-text prompts."""


@dataclass(frozen=True)
class ModelDeployment:
    """One entry of the model registry."""

    name: str
    """Registry name, e.g. ``embedded/smollm2-135m-instruct``."""

    provider: str
    """Provider key: ``embedded``, ``huggingface``, ``llama_cpp``, ``openai``, ``anthropic``, ``simple``."""

    model_id: str
    """The provider's own model id (hub id, path, API model name)."""

    args: Mapping[str, Any] = field(default_factory=dict)
    """Provider arguments (``base_url``, ``device``, ``dtype``, ``revision``...)."""

    tokenizer: str | None = None
    """Tokenizer name or path; ``None`` means the model's own."""

    context_window: int = 2048
    max_output_tokens: int = 512
    capabilities: Capabilities = Capabilities()
    price_input_per_million: float = 0.0
    price_output_per_million: float = 0.0
    api_key_env: str | None = None
    """Environment variable holding the API key (the key itself is never stored)."""

    description: str = ""

    def identity(self) -> dict[str, Any]:
        """The model's full identity for cache keys (never contains secrets)."""
        safe_args = {k: v for k, v in sorted(self.args.items()) if not is_secret_name(k)}
        return {
            "provider": self.provider,
            "model_id": self.model_id,
            "args": safe_args,
            "tokenizer": self.tokenizer,
        }


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str
    """``system``, ``user`` or ``assistant``."""

    content: str


RequestKind = Literal["generate", "loglikelihood", "rolling_loglikelihood"]


@dataclass(frozen=True)
class Request:
    """What is sent to a model.

    - ``generate``: complete ``prompt`` (or ``messages``).
    - ``loglikelihood``: score ``continuation`` given ``prompt`` as context; the
      result's first completion carries the continuation's tokens and summed logprob.
    - ``rolling_loglikelihood``: score all of ``prompt`` (no context); used by
      language modelling with the adapter's own windows.
    """

    model: str
    kind: RequestKind = "generate"
    prompt: str = ""
    messages: tuple[Message, ...] | None = None
    continuation: str = ""
    max_tokens: int = 100
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    num_completions: int = 1
    logprobs: bool = True
    """Ask for the logprob of each generated token (if the model can)."""
    top_k_logprobs: int = 0
    echo: bool = False
    """Return the prompt's tokens and logprobs with the completion."""
    trial_tag: str = ""
    """Distinguishes otherwise identical requests (e.g. trial and sample index) in the cache."""
    seed: int = 0

    def canonical(self) -> dict[str, Any]:
        from dataclasses import asdict

        data = asdict(self)
        data.pop("model")
        return data

    @property
    def text(self) -> str:
        """The prompt as one string (messages joined for display)."""
        if self.messages is not None:
            return "\n".join(f"[{m.role}] {m.content}" for m in self.messages)
        return self.prompt


@dataclass(frozen=True)
class Token:
    """One token with its logprob and (optionally) top alternatives."""

    text: str
    logprob: float
    top_logprobs: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """One completion (or, for log-likelihood requests, the scored continuation)."""

    text: str
    logprob: float = 0.0
    """Sum of token logprobs (``0.0`` when the model gives none; see ``has_logprobs``)."""
    tokens: tuple[Token, ...] = ()
    finish_reason: str | None = None
    is_greedy: bool | None = None
    """For log-likelihood requests: every continuation token was the argmax."""


@dataclass(frozen=True)
class RequestResult:
    """What came back for one request."""

    success: bool
    completions: tuple[Completion, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_logprobs: tuple[Token, ...] | None = None
    """Tokens of the prompt with logprobs, when ``echo`` was asked and given."""
    latency_s: float = 0.0
    """Wall time of the original call (kept when served from the cache)."""
    cached: bool = False
    has_logprobs: bool = False
    error: str | None = None
    error_kind: str | None = None
    """``rate_limit``, ``server``, ``timeout``, ``client``, ``fatal``..."""
    attempts: int = 1
    cost_usd: float = 0.0
    engine: str = ""
    """Which engine served it (e.g. ``transformers``, ``llama.cpp``)."""


# ---------------------------------------------------------------------------
# Adaptation output
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestState:
    """One request with everything needed to score it afterwards."""

    instance: Instance
    request: Request
    trial: int = 0
    train_ids: tuple[str, ...] = ()
    """Ids of the in-context examples used, in prompt order."""
    reference_index: int | None = None
    """For separate/ranking methods: which reference this request scores."""
    role: str = RequestRole.MAIN
    """``main``; ``calibration`` for the neutral-context request of calibrated MC;
    ``window`` for language modelling windows."""
    output_mapping: Mapping[str, str] | None = None
    """For joint multiple choice: letter -> reference output."""
    num_train_instances: int = 0
    prompt_truncated: bool = False
    request_index: int = 0
    """Position among the instance's requests (windows, choices)."""
    result: RequestResult | None = None
    post_processed: tuple[str, ...] | None = None
    """Completions after post-processing (``None`` until processed)."""
    parse_error: str | None = None
    annotations: tuple[Annotation, ...] = ()
    """The judges' verdicts on this request (the annotation stage), one per judge."""

    def with_result(self, result: RequestResult) -> RequestState:
        return replace(self, result=result)


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class MetricName:
    """A structured metric name: never a string with parameters baked in."""

    name: str
    split: str = TEST_SPLIT
    sub_split: str | None = None
    perturbation: str | None = None
    """Perturbation name; ``worst`` families use ``robustness`` / ``fairness``."""

    def with_perturbation(self, perturbation: str | None) -> MetricName:
        return replace(self, perturbation=perturbation)


@dataclass(frozen=True)
class Stat:
    """A mergeable summary of values of one metric."""

    name: MetricName
    count: int = 0
    sum: float = 0.0
    sum_sq: float = 0.0
    min: float | None = None
    max: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    """95% bootstrap interval of the mean over instances (``None`` when not computed)."""
    num_trials: int = 1
    """Trials (independent draws of in-context examples) the values were averaged over."""
    trial_stddev: float | None = None
    """Population standard deviation of the per-trial means (``None`` with one trial)."""

    def add(self, value: float) -> Stat:
        return Stat(
            name=self.name,
            count=self.count + 1,
            sum=self.sum + value,
            sum_sq=self.sum_sq + value * value,
            min=value if self.min is None else min(self.min, value),
            max=value if self.max is None else max(self.max, value),
        )

    def merge(self, other: Stat) -> Stat:
        mins = [v for v in (self.min, other.min) if v is not None]
        maxs = [v for v in (self.max, other.max) if v is not None]
        return Stat(
            name=self.name,
            count=self.count + other.count,
            sum=self.sum + other.sum,
            sum_sq=self.sum_sq + other.sum_sq,
            min=min(mins) if mins else None,
            max=max(maxs) if maxs else None,
        )

    @property
    def mean(self) -> float | None:
        return self.sum / self.count if self.count else None

    @property
    def variance(self) -> float | None:
        if not self.count:
            return None
        mean = self.sum / self.count
        return max(self.sum_sq / self.count - mean * mean, 0.0)

    @property
    def stddev(self) -> float | None:
        var = self.variance
        return math.sqrt(var) if var is not None else None

    @staticmethod
    def of(name: MetricName, values: Sequence[float]) -> Stat:
        stat = Stat(name=name)
        for v in values:
            stat = stat.add(float(v))
        return stat


@dataclass(frozen=True)
class PerInstanceStat:
    """One metric value for one instance (and trial)."""

    instance_id: str
    trial: int
    name: MetricName
    value: float
    details: Mapping[str, Any] | None = field(default=None, compare=False)
    """JSON-compatible facts behind the value, stored beside it (e.g. each choice's
    log-likelihood and the index picked under every length normalisation)."""
