"""Specs: how instances become requests (:class:`AdapterSpec`) and what one run is (:class:`RunSpec`).

Frozen dataclasses, values only (see :mod:`holistic.core.types`, which re-exports every
name here).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any, Literal, Self, TypedDict, get_args

from holistic.core.hashing import canonical_json, short_hash
from holistic.core.judges import JudgeSpec

AdaptationMethod = Literal[
    "generation",
    "multiple_choice_joint",
    "multiple_choice_separate_original",
    "multiple_choice_separate_calibrated",
    "language_modeling",
    "ranking_binary",
]
ADAPTATION_METHODS: tuple[str, ...] = get_args(AdaptationMethod)
GENERATION, JOINT, SEPARATE, CALIBRATED, LANGUAGE_MODELING, RANKING = ADAPTATION_METHODS
"""The methods by name (``SEPARATE``: ``multiple_choice_separate_original``)."""
MULTIPLE_CHOICE_METHODS: tuple[str, ...] = (JOINT, SEPARATE, CALIBRATED)
SCORING_METHODS: tuple[str, ...] = (SEPARATE, CALIBRATED, LANGUAGE_MODELING, RANKING)
"""Methods whose requests are log-likelihood scores (always plain-text prompts), except
``ranking_binary`` when it generates (see :attr:`AdapterSpec.scores_loglikelihood`)."""

# The AdapterSpec options with a fixed set of values: each type, and its values in order (the
# order validation lists them in). A spec's strings are checked against these where it is read
# (:func:`holistic.adaptation.validation.validate_adapter_spec`).
InstructionPlacement = Literal["before", "after"]
INSTRUCTION_PLACEMENTS: tuple[str, ...] = get_args(InstructionPlacement)
ChatExamples = Literal["multi_turn", "single_turn"]
CHAT_EXAMPLES: tuple[str, ...] = get_args(ChatExamples)
Selection = Literal["helm", "first", "mmr"]
SELECTIONS: tuple[str, ...] = get_args(Selection)
SEEDED_SELECTION: Selection = "helm"
"""The ``selection`` that draws seeded, class-balanced examples (HELM's), per eval instance."""
EvalInstances = Literal["sample", "first"]
EVAL_INSTANCE_MODES: tuple[str, ...] = get_args(EvalInstances)
ProtocolName = Literal["helm", "holistic"]
PROTOCOLS: tuple[str, ...] = get_args(ProtocolName)
EvalSampling = Literal["helm", "stable"]
EVAL_SAMPLINGS: tuple[str, ...] = get_args(EvalSampling)
RUNNER_SAMPLING: EvalSampling = "helm"
"""The ``eval_sampling`` that draws as HELM's runner does (NumPy's legacy generator, seed 0)."""
AnswerParsing = Literal["helm", "lenient"]
ANSWER_PARSINGS: tuple[str, ...] = get_args(AnswerParsing)
LengthNormalization = Literal["none", "char", "token", "byte"]
LENGTH_NORMALIZATIONS: tuple[str, ...] = get_args(LengthNormalization)
TruncationSide = Literal["left", "right"]
TRUNCATION_SIDES: tuple[str, ...] = get_args(TruncationSide)
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]
REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)


@dataclass(frozen=True)
class ReasoningSetting:
    """How much a reasoning model may think (``adaptation.reasoning``): an effort, a budget of
    thinking tokens, or both; the deployment's ``reasoning.style`` says which it takes and how
    each is sent (:mod:`holistic.models.reasoning`)."""

    effort: ReasoningEffort | None = None
    budget_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The values given (a missing one is left out)."""
        return {k: v for k, v in (("effort", self.effort), ("budget_tokens", self.budget_tokens)) if v is not None}


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
class ProtocolBehaviour:
    """What a run's protocol means, as named behaviours: the adapter, the metrics, the perturbations
    and execution read these, never the protocol's name. The spec compiler resolves ``protocol``
    into them once (``helm`` through the HELM layer, :mod:`holistic.helm.protocol`; ``holistic`` in
    :mod:`holistic.spec.protocol`). The defaults are HELM's, as :class:`AdapterSpec`'s are."""

    strip_cue_only: bool = True
    """How the end of the evaluated instance's block is trimmed. ``True`` (HELM's adapter strips its
    output prefix only): the answer cue loses its trailing whitespace, an input ending in a space
    keeps it when there is no cue, and the last chat user turn is sent verbatim. ``False``: the
    block loses its trailing spaces and tabs, the last chat user turn its surrounding whitespace."""

    score_after_block: bool = True
    """Separate multiple-choice scoring sends HELM's text: the eval block with its trailing spaces,
    then the choice, the continuation scored being `` <choice>`` as HELM's metric counts it.
    ``False``: the trimmed prompt, then one space and the choice."""

    ranking_generates: bool = True
    """``ranking_binary`` generates a yes/no answer per passage (HELM's one ``generate`` request per
    passage; each in-context example a training query with every one of its passages), which any
    model can give. ``False``: `` Yes`` and `` No`` are scored by log-likelihood."""

    auto_chat: bool = False
    """``prompt_format: auto`` sends chat messages for generation on chat models. ``False`` (HELM):
    plain text wherever the deployment accepts it."""

    helm_perturbations: bool = True
    """The built-in perturbation names mean HELM 0.5.16's algorithms: seeded by each instance's HELM
    id (``id<n>``, its position in the scenario as loaded), a variant whose input did not change
    dropped, only HELM's arguments accepted. ``False``: holistic's own, seeded by the run."""

    keep_unchanged_variants: bool = False
    """Perturbed variants whose input did not change are kept, not dropped: HELM's ``DataAugmenter``
    keeps them on scenarios whose loader gives a ``PassageQuestionInput`` (BoolQ, NarrativeQA,
    NaturalQuestions with a passage, CivilComments), whose ``Input`` never equals a variant's."""

    echoed_scoring_tokens: bool = True
    """A log-likelihood request's completion tokens are the prompt's and the scored text's (HELM sends
    ``echo_prompt`` with no new tokens and counts the whole sequence). ``False``: the tokens generated."""

    request_minimum: bool = True
    """An instance with several requests also keeps its smallest single request's efficiency values:
    HELM's worst case over variants takes the minimum over requests, not over the variants' means."""

    exact_match_at_run_normalization: bool = True
    """Separate multiple-choice ``exact_match`` is the pick under the run's ``length_normalization``
    (HELM's). ``False``: the pick of the summed log-probability, each normalisation reported apart."""


@dataclass(frozen=True)
class AdapterSpec:
    """How instances become requests: the prompt, the examples and the decoding."""

    method: AdaptationMethod = "generation"
    """One of :data:`ADAPTATION_METHODS`."""

    instructions: str = ""
    """Task instructions placed before (or after) the examples and input."""

    instruction_placement: InstructionPlacement = "before"
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
    choice_labels: tuple[str, ...] = ()
    """The labels of the joint multiple-choice choices, in order (HELM's ``reference_prefix_characters``):
    each takes the place of the ``A`` of ``reference_prefix`` for its choice and is the answer that
    picks it. Empty: ``A``, ``B``, ``C``, ..."""
    answer_pattern: str | None = None
    """A regular expression searched in a joint multiple-choice answer before it is looked up among
    the choice labels (HELM's ``output_mapping_pattern``): its first group (else the whole match)
    is the answer read; no match picks no choice. Each search stops after one second."""
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

    chat_examples: ChatExamples = "multi_turn"
    """With chat prompts: examples as alternating turns (``multi_turn``) or inside one
    user turn (``single_turn``)."""

    max_train_instances: int = 5
    """In-context examples per prompt (0 for zero-shot)."""

    num_train_trials: int = 1
    """Independent draws of in-context examples; results are the mean over trials."""

    selection: Selection = "helm"
    """In-context example selection: ``helm`` (seeded, class-balanced), ``first`` (the
    pool's first k in the pool's order: lm-evaluation-harness's ``first_n``) or ``mmr`` (maximal marginal relevance over sentence embeddings)."""

    mmr_lambda: float = 0.5
    """Relevance/diversity trade-off for ``mmr`` (1.0 = relevance only)."""

    max_eval_instances: int | None = None
    """Down-sampling of evaluation instances (``None`` = all), as ``eval_instances`` says."""

    eval_instances: EvalInstances = "sample"
    """How ``max_eval_instances`` picks: ``sample`` (seeded from the spec and the instance
    ids, as HELM) or ``first`` (the first N in the data's own order, as lm-evaluation-harness's
    ``--limit``)."""

    protocol: ProtocolName = "helm"
    """Whose protocol the run reproduces: ``helm`` (HELM's prompts, requests, sampling and
    scoring; a departing option is a compile-time error) or ``holistic`` (holistic's own
    options allowed; its defaults are ``eval_sampling: stable`` and ``answer_parsing:
    lenient``). The run spec compiler sets it (``protocol:`` at the top, in ``defaults`` or
    per run; default ``helm`` for HELM's core scenarios, ``holistic`` otherwise). It is the
    record of the claim: what the protocol means is :attr:`behaviour`, which nothing but the
    compiler derives from it."""

    eval_sampling: EvalSampling = "helm"
    """How evaluation instances are down-sampled: ``helm`` (HELM's runner: NumPy's
    legacy generator seeded with 0 draws ``max_eval_instances`` of the pooled valid and
    test instances without replacement, in drawn order) or ``stable`` (per-instance
    hash ranks: raising the limit only adds instances, scenario order kept)."""

    answer_parsing: AnswerParsing = "helm"
    """How a joint multiple-choice answer is read: ``helm`` (``completion.strip()`` must
    be exactly a choice letter, anything else is wrong) or ``lenient`` (also lower case,
    ``(B)``, ``B.``, ``Answer: B`` and the choice text; its accuracy is reported as
    ``exact_match_lenient``)."""

    num_outputs: int = 1
    """Completions sampled per request (for @k metrics)."""

    temperature: float = 0.0
    max_tokens: int = 100
    stop_sequences: tuple[str, ...] = ()

    length_normalization: LengthNormalization = "none"
    """For separate multiple-choice scoring, which length normalisation is the headline:
    ``none``, ``char``, ``token`` or ``byte`` (every variant is reported; see
    :mod:`holistic.metrics.choices`)."""

    truncation_side: TruncationSide = "left"
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

    reasoning: ReasoningSetting | None = None
    """The reasoning effort and/or thinking budget sent to a reasoning model (``None``: no setting
    is sent, the model's own default applies)."""

    behaviour: ProtocolBehaviour = ProtocolBehaviour()
    """What :attr:`protocol` means for this run, resolved by the spec compiler (not written in a
    spec, not part of :meth:`as_dict` or the run id: it follows from the protocol and the scenario)."""

    def __post_init__(self) -> None:
        # A spec writes the format as a string; an unknown one is kept for validation to name.
        if not isinstance(self.prompt_format, PromptFormat) and self.prompt_format in PROMPT_FORMATS:
            object.__setattr__(self, "prompt_format", PromptFormat(self.prompt_format))

    def replace(self, **changes: Any) -> AdapterSpec:
        return replace(self, **changes)

    @property
    def scores_loglikelihood(self) -> bool:
        """Whether the requests score given text by log-likelihood (the model needs prompt
        log-probabilities). ``ranking_binary`` generating a yes/no answer per passage
        (:attr:`ProtocolBehaviour.ranking_generates`) needs none: any model can give it."""
        return self.method in SCORING_METHODS and not (self.method == RANKING and self.behaviour.ranking_generates)

    def value_of(self, key: str) -> Any:
        """An option by the name a spec's axes use: a field, or ``reasoning.effort`` /
        ``reasoning.budget_tokens`` (``None`` when no reasoning setting is given)."""
        head, _, sub = key.partition(".")
        value = getattr(self, head)
        if sub:
            return getattr(value, sub) if value is not None else None
        return value

    def as_dict(self) -> dict[str, Any]:
        """The options by name (:data:`ADAPTER_FIELDS`, not :attr:`behaviour`): what
        ``dataclasses.asdict`` gives, without its deep copy (every option is a scalar, an enum or a
        tuple of strings, so the values are shared as they are; a plan of 50,000 runs hashes each
        run's adapter). ``reasoning`` is there only when set (as a mapping), and ``choice_labels``
        and ``answer_pattern`` only when set, so the ids of runs without them are those they always
        had."""
        out = {name: getattr(self, name) for name in ADAPTER_FIELDS if name not in _ONLY_WHEN_SET}
        if self.choice_labels:
            out["choice_labels"] = self.choice_labels
        if self.answer_pattern is not None:
            out["answer_pattern"] = self.answer_pattern
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning.as_dict()
        return out


MAX_CHOICE_LABEL_CHARS = 16
"""Characters of one of ``AdapterSpec.choice_labels``."""
MAX_ANSWER_PATTERN_CHARS = 1_000
"""Characters of ``AdapterSpec.answer_pattern``."""

_ONLY_WHEN_SET = frozenset({"reasoning", "choice_labels", "answer_pattern"})
"""Options :meth:`AdapterSpec.as_dict` gives only when set (added after run ids were first hashed)."""

ADAPTER_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AdapterSpec) if f.name != "behaviour")
"""AdapterSpec's options (the fields a spec may write, ``protocol`` included), in declaration order."""


class AdapterDefaults(TypedDict, total=False):
    """The :class:`AdapterSpec` options (:data:`ADAPTER_FIELDS`) a scenario recommends
    (``ScenarioInfo.default_adapter``), each typed as the field is, so a misspelt key or a wrong
    value type is a type error."""

    method: AdaptationMethod
    instructions: str
    instruction_placement: InstructionPlacement
    global_prefix: str
    global_suffix: str
    input_prefix: str
    input_suffix: str
    reference_prefix: str
    reference_suffix: str
    choice_labels: tuple[str, ...]
    answer_pattern: str | None
    output_prefix: str
    output_suffix: str
    instance_prefix: str
    template: str | None
    prompt_format: PromptFormat
    chat_examples: ChatExamples
    max_train_instances: int
    num_train_trials: int
    selection: Selection
    mmr_lambda: float
    max_eval_instances: int | None
    eval_instances: EvalInstances
    protocol: ProtocolName
    eval_sampling: EvalSampling
    answer_parsing: AnswerParsing
    num_outputs: int
    temperature: float
    max_tokens: int
    stop_sequences: tuple[str, ...]
    length_normalization: LengthNormalization
    truncation_side: TruncationSide
    post_processing: tuple[str, ...]
    top_k_logprobs: int
    language_modeling_window: int
    language_modeling_context: int
    seed: int
    reasoning: ReasoningSetting | None


@dataclass(frozen=True)
class NamedSpec:
    """A registered name plus its arguments: what :class:`ScenarioSpec` and
    :class:`PerturbationSpec` are (two names, so a signature says which registry it means)."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()
    """Arguments sorted by name; values are JSON-compatible."""

    @property
    def args_dict(self) -> dict[str, Any]:
        return dict(self.args)

    @classmethod
    def make(cls, name: str, args: Mapping[str, Any] | None = None) -> Self:
        return cls(name=name, args=tuple(sorted((args or {}).items())))


class ScenarioSpec(NamedSpec):
    """A registered scenario name plus its arguments."""


class PerturbationSpec(NamedSpec):
    """A registered perturbation name plus its arguments."""


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
    label: str | None = None
    """The run's own name from its spec entry's ``name:`` (templates filled, suffixed when the entry
    makes several runs), shown instead of the name made from its facts (:mod:`holistic.core.naming`);
    ``None`` for an unnamed entry. Not part of the run id: ``name`` already carries the entry's ``name:``."""

    def canonical(self) -> dict[str, Any]:
        """JSON-compatible form used for ``run_spec.json`` and (without ``label``) for hashing
        (``judges`` and ``label`` only when the run has them, so the ids of other runs do not change)."""
        out: dict[str, Any] = {
            "name": self.name,
            "scenario": {"name": self.scenario.name, "args": dict(self.scenario.args)},
            "adapter": self.adapter.as_dict(),
            "model": self.model,
            "metrics": list(self.metrics),
            "perturbations": [{"name": p.name, "args": dict(p.args)} for p in self.perturbations],
            "groups": list(self.groups),
        }
        if self.judges:
            out["judges"] = [j.canonical() for j in self.judges]
        if self.label is not None:
            out["label"] = self.label
        return out

    @functools.cached_property
    def run_id(self) -> str:
        """Stable id: a readable, filesystem-safe name plus a short hash of the spec (computed once:
        a plan of many runs asks for it often)."""
        readable = _slug(f"{self.scenario.name}_{self.model}")
        identity = self.canonical()
        identity.pop("label", None)
        return f"{readable}-{short_hash(canonical_json(identity))}"


def _slug(text: str) -> str:
    out = []
    for ch in text:
        out.append(ch if ch.isalnum() or ch in "-_." else "_")
    slug = "".join(out).strip("_")
    return slug[:80]
