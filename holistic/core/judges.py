"""Judges: a model that grades another model's output, as data.

A :class:`JudgeSpec` names a deployment of the model registry (any provider), the
prompt it is asked (a Jinja2 template rendered in the sandbox of
:mod:`holistic.core.templates`, versioned by the SHA-256 of its source) and the
:class:`VerdictRule` that turns its answer into a score: a JSON schema, or regular
expressions with named groups. Nothing here calls a model; the annotation stage
(:mod:`holistic.execution.annotation`) does, and records one :class:`Annotation` per
judged request and judge.

A verdict the rule cannot read is *unparseable*: it is re-asked a bounded number of
times, then recorded as such (never guessed, never dropped, never cached). Reading is
bounded (size, pattern time, JSON depth, number length: :mod:`holistic.core.verdict_limits`)
and a score outside the rule's ``[minimum, maximum]``, NaN or infinite is unparseable.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from holistic.core.hashing import canonical_json, sha256_hex
from holistic.core.verdict_limits import MAX_VERDICT_CHARS, VerdictError, check_size, load_json, number, search

__all__ = ["MAX_VERDICT_CHARS", "VerdictError"]

JUDGE_VARIABLES: Mapping[str, str] = {
    "input": "the instance's input text",
    "prompt": "the prompt the evaluated model was sent (for chat requests: the last user message)",
    "completion": "the evaluated model's answer (its first completion), inside a code fence it cannot close "
    "(HELM's judges: as generated)",
    "raw_completion": "the evaluated model's answer as generated, unfenced",
    "references": "every reference output, in order",
    "correct_references": "the reference outputs tagged correct",
    "metadata": "the instance's metadata fields the scenario declares (metadata.<field>)",
    "instance_id": "the instance id",
    "split": "the instance's split",
}
"""What a judge template may refer to, with what each holds."""

ANNOTATION_STATUSES = ("ok", "unparseable", "failed", "skipped")
"""``ok``: scored; ``unparseable``: answered, but no attempt could be read by the rule;
``failed``: the judge's request failed (retried on the next run); ``skipped``: the judged
request itself failed, so there was nothing to judge."""


@dataclass(frozen=True)
class VerdictRule:
    """How a judge's answer becomes a score.

    ``regex``: every pattern is searched in the answer (Python syntax; inline flags such
    as ``(?is)`` allowed); all must match, and their named groups are the verdict's fields.
    ``json``: the answer's outermost ``{...}`` is read as JSON and validated against
    ``schema``; its top-level keys are the fields. The field ``score`` names is the score:
    looked up in ``values`` (case- and space-insensitive) when given, else read as a number;
    a score outside ``[minimum, maximum]`` is unparseable.
    """

    kind: Literal["regex", "json"]
    patterns: tuple[str, ...] = ()
    """``regex``: the patterns, each with named groups."""
    schema: str = ""
    """``json``: the JSON schema (draft 2020-12) as canonical JSON."""
    score: str = "score"
    """The field holding the score."""
    values: tuple[tuple[str, float], ...] = ()
    """Verdict text -> score (e.g. ``yes`` -> 1); empty: the field is a number."""
    minimum: float | None = None
    maximum: float | None = None

    def canonical(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "score": self.score}
        if self.kind == "regex":
            out["patterns"] = list(self.patterns)
        else:
            out["schema"] = json.loads(self.schema)
        if self.values:
            out["values"] = dict(self.values)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    @property
    def rule_hash(self) -> str:
        return sha256_hex(canonical_json(self.canonical()))

    def problem(self) -> str | None:
        """Why this rule cannot be used (``None`` when it can): checked before anything runs."""
        if self.kind == "regex":
            if not self.patterns:
                return "a regex rule needs at least one pattern"
            import regex

            groups: set[str] = set()
            for pattern in self.patterns:
                try:
                    compiled = regex.compile(pattern)
                except regex.error as exc:
                    return f"invalid regular expression {pattern!r}: {exc}"
                if not compiled.groupindex:
                    return f"regular expression {pattern!r} has no named group (write (?P<name>...))"
                groups.update(compiled.groupindex)
            if self.score not in groups:
                return f"score field {self.score!r} is not a named group of the patterns (groups: {sorted(groups)})"
        else:
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import SchemaError

            try:
                schema = json.loads(self.schema)
                Draft202012Validator.check_schema(schema)
            except (ValueError, SchemaError) as exc:
                return f"invalid JSON schema: {getattr(exc, 'message', exc)}"
            if not isinstance(schema, dict):
                return "the JSON schema must be an object"
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            return f"minimum {self.minimum} is above maximum {self.maximum}"
        return None

    def fields(self, text: str) -> dict[str, Any]:
        """The verdict's fields; :class:`VerdictError` when the rule cannot read ``text``."""
        check_size(text)
        if self.kind == "regex":
            found: dict[str, Any] = {}
            for pattern in self.patterns:
                groups = search(pattern, text)
                if groups is None:
                    raise VerdictError(f"pattern {pattern!r} does not match")
                found.update({k: v for k, v in groups.items() if v is not None})
            return found
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end < start:
            raise VerdictError("no JSON object in the answer")
        data = load_json(text[start : end + 1])
        if not isinstance(data, dict):
            raise VerdictError("the JSON is not an object")
        from jsonschema import Draft202012Validator

        errors = sorted(Draft202012Validator(json.loads(self.schema)).iter_errors(data), key=lambda e: list(e.path))
        if errors:
            raise VerdictError(f"does not fit the schema: {errors[0].message}")
        return data

    def read(self, text: str) -> tuple[dict[str, Any], float]:
        """``(fields, score)`` of a verdict; :class:`VerdictError` when it cannot be read."""
        fields = self.fields(text)
        if self.score not in fields:
            raise VerdictError(f"no {self.score!r} field")
        raw = fields[self.score]
        if self.values:
            key = str(raw).strip().lower()
            table = {k.strip().lower(): v for k, v in self.values}
            if key not in table:
                raise VerdictError(f"{self.score} {str(raw)[:40]!r} is none of {sorted(table)}")
            score = float(table[key])
        else:
            score = number(raw, self.score)
        if (self.minimum is not None and score < self.minimum) or (self.maximum is not None and score > self.maximum):
            raise VerdictError(f"{self.score} {score:g} is outside [{self.minimum}, {self.maximum}]")
        return fields, score

    @staticmethod
    def from_mapping(data: Mapping[str, Any]) -> VerdictRule:
        """The rule written in a run spec or a scenario: ``{regex: ... | json_schema: ..., score, values,
        minimum, maximum}``."""
        values = tuple(sorted((str(k), float(v)) for k, v in (data.get("values") or {}).items()))
        common: dict[str, Any] = {
            "score": str(data.get("score", "score")),
            "values": values,
            "minimum": None if data.get("minimum") is None else float(data["minimum"]),
            "maximum": None if data.get("maximum") is None else float(data["maximum"]),
        }
        if "regex" in data:
            regex = data["regex"]
            patterns = (regex,) if isinstance(regex, str) else tuple(str(p) for p in regex)
            return VerdictRule(kind="regex", patterns=patterns, **common)
        return VerdictRule(kind="json", schema=canonical_json(data.get("json_schema", {})), **common)


def fence(text: str) -> str:
    """``text`` between two lines of backticks, longer than any run of backticks in it (at least
    three), so nothing in it can close the fence (CommonMark's rule)."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    marks = "`" * max(3, longest + 1)
    return f"{marks}\n{text}\n{marks}"


@dataclass(frozen=True)
class JudgeSpec:
    """One judge of a run: who is asked, what, and how the answer is read."""

    model: str
    """Deployment name from the model registry (any provider)."""
    template: str
    """The judge's prompt: a Jinja2 template over :data:`JUDGE_VARIABLES` (sandboxed)."""
    rule: VerdictRule
    name: str = ""
    """Label in tables and on the site (default: the model name)."""
    stat: str = "judge_score"
    """Name of the score's statistic (per judge: sub-split ``judge=<name>``; without: the mean over judges)."""
    max_tokens: int = 256
    temperature: float = 0.0
    retries: int = 2
    """Times an unparseable verdict is asked again (with a fresh cache key) before it is recorded as such."""
    source: str = "spec"
    """Where the prompt came from: ``spec`` or ``scenario:<name>``. A spec's template sees the
    candidate's answer fenced (:func:`fence`); a scenario's (HELM's prompts) as generated."""
    empty_score: float | None = None
    """The score of an empty answer, given without asking the judge (HELM's WildBench and
    Omni-MATH annotators); ``None``: the judge is asked."""
    rescaled: tuple[str, float, float] | None = None
    """``(stat, low, high)``: also write ``(score - low) / (high - low)`` under ``stat``
    (HELM's ``wildbench_score_rescaled``)."""

    @property
    def label(self) -> str:
        return self.name or self.model

    @property
    def prompt_hash(self) -> str:
        """SHA-256 of the template's source: the version of the judge's prompt."""
        return sha256_hex(self.template)

    def canonical(self) -> dict[str, Any]:
        return {
            "name": self.label,
            "model": self.model,
            "template": self.template,
            "prompt_sha256": self.prompt_hash,
            "rule": self.rule.canonical(),
            "stat": self.stat,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "retries": self.retries,
            "source": self.source,
            **({"empty_score": self.empty_score} if self.empty_score is not None else {}),
            **({"rescaled": list(self.rescaled)} if self.rescaled is not None else {}),
        }


@dataclass(frozen=True)
class JudgeDefault:
    """A scenario's own judge: its prompt and rule, used when a run names only the judge's model."""

    template: str
    rule: VerdictRule
    stat: str = "judge_score"
    max_tokens: int = 256
    origin: str = ""
    """Where the prompt is from (e.g. ``HELM 0.5.16 xstest_annotator``)."""
    empty_score: float | None = None
    rescaled: tuple[str, float, float] | None = None

    def for_model(self, model: str, scenario: str, name: str = "") -> JudgeSpec:
        return JudgeSpec(
            model=model,
            template=self.template,
            rule=self.rule,
            name=name,
            stat=self.stat,
            max_tokens=self.max_tokens,
            source=f"scenario:{scenario}",
            empty_score=self.empty_score,
            rescaled=self.rescaled,
        )


@dataclass(frozen=True)
class Annotation:
    """One judge's verdict on one judged request."""

    judge: str
    """The judge's label."""
    model: str
    """The judge's deployment."""
    prompt_hash: str
    rule_hash: str
    status: str
    """One of :data:`ANNOTATION_STATUSES`."""
    prompt: str = ""
    """The judge's prompt as rendered."""
    verdict: str | None = None
    """The judge's last answer, as given."""
    fields: Mapping[str, Any] = field(default_factory=dict)
    score: float | None = None
    attempts: int = 0
    error: str | None = None
    cache_key: str | None = None
    cached: bool = False
    cost_usd: float = 0.0
    """What the judge's requests for this verdict cost in US dollars (retries included; from the cache:
    their original price)."""
    batch: bool = False
    """The last answer came through the provider's batch API (priced with its ``batch_discount``)."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def template_references(source: str) -> tuple[set[str], set[str]]:
    """``(top-level variables, metadata fields)`` a judge template refers to.

    ``metadata.x`` and ``metadata['x']`` count as the field ``x``; a computed key
    (``metadata[name]``) counts as the field ``*``."""
    from jinja2 import meta, nodes

    from holistic.core.templates import environment

    tree = environment().parse(source)
    names = set(meta.find_undeclared_variables(tree))
    fields: set[str] = set()

    def on_metadata(target: nodes.Node) -> bool:
        return isinstance(target, nodes.Name) and target.name == "metadata"

    for attr in tree.find_all(nodes.Getattr):
        if on_metadata(attr.node):
            fields.add(attr.attr)
    for item in tree.find_all(nodes.Getitem):
        if on_metadata(item.node):
            key = item.arg
            fields.add(key.value if isinstance(key, nodes.Const) and isinstance(key.value, str) else "*")
    return names, fields


def _hint(name: str, known: Iterable[str]) -> str:
    from holistic.core.errors import did_you_mean

    close = did_you_mean(name, known)
    return f"; did you mean {close[0]!r}?" if close else ""


def template_field_problem(source: str, declared: Sequence[str] | None) -> str | None:
    """Why ``source`` refers to something a judge of this scenario cannot have (``None``: fine).

    ``declared``: the metadata fields the scenario's instances carry (``None``: unknown, so
    only the top-level names are checked)."""
    names, fields = template_references(source)
    for name in sorted(names):
        if name not in JUDGE_VARIABLES:
            return f"judge template refers to {name!r}, which a judge is not given{_hint(name, JUDGE_VARIABLES)}"
    if declared is None:
        return None
    for name in sorted(fields):
        if name == "*":
            continue
        if name not in declared:
            have = ", ".join(sorted(declared)) or "none"
            return (
                f"judge template refers to metadata.{name}, a field this scenario's instances do not have "
                f"(they have: {have}){_hint(name, declared)}"
            )
    return None
