"""HELM's records as holistic's rows: instances, requests, per-instance stats and stats.

Each converter takes one decoded HELM value (a request state, a per-instance entry, a
stat) and *pops* every field it maps, so what is left is exactly what holistic's schema
has no place for: it goes, as canonical JSON, into the row's ``raw`` column, and its
field paths are counted in :class:`Unmapped` so the import can list them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from holistic.core.hashing import canonical_json
from holistic.core.untrusted import check_type

WORST_FAMILIES = frozenset({"robustness", "fairness"})
"""HELM's perturbation names for the combined worst case, which holistic names the same way."""


@dataclass
class Unmapped:
    """Field paths of HELM's files that have no column in holistic's schema (kept raw)."""

    fields: Counter[str] = field(default_factory=Counter)

    def note(self, prefix: str, rest: Mapping[str, Any]) -> None:
        for key in rest:
            self.fields[f"{prefix}.{key}"] += 1

    def names(self) -> list[str]:
        return sorted(self.fields)


def _raw(rest: Mapping[str, Any]) -> str | None:
    return canonical_json(dict(rest)) if rest else None


def _pop_dict(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.pop(key, None)
    return dict(value) if isinstance(value, Mapping) else {}


def perturbation_column(description: Mapping[str, Any] | None) -> str | None:
    """HELM's ``PerturbationDescription`` of a stat name as holistic's ``perturbation`` value.

    ``computed_on: perturbed`` is the perturbation's own name (the value on the variants);
    ``worst`` is the worst case over an instance and its variants (holistic's ``P:worst``,
    or ``robustness`` / ``fairness`` for HELM's combined families); ``original`` is the
    original's value on the same instances (``P:original``)."""
    if not description:
        return None
    name = str(description.get("name", "?"))
    computed_on = description.get("computed_on", "perturbed")
    if computed_on == "worst":
        return name if name in WORST_FAMILIES else f"{name}:worst"
    if computed_on == "original":
        return f"{name}:original"
    return f"{name}:perturbed" if name in WORST_FAMILIES else name


@dataclass(frozen=True)
class StatName:
    metric: str
    split: str
    sub_split: str | None
    perturbation: str | None


def stat_name(name: Mapping[str, Any], unmapped: Unmapped, where: str) -> tuple[StatName, dict[str, Any]]:
    """A HELM ``MetricName`` as holistic's four name columns, and what is left of it."""
    rest = dict(name)
    metric = rest.pop("name", None)
    if not isinstance(metric, str) or not metric:
        raise ValueError("name.name: missing or not a string")
    split = rest.pop("split", None)
    sub_split = rest.pop("sub_split", None)
    perturbation = rest.pop("perturbation", None)
    if perturbation is not None and not isinstance(perturbation, Mapping):
        raise ValueError("name.perturbation: not an object")
    out_rest: dict[str, Any] = {}
    if perturbation:
        out_rest["perturbation"] = dict(perturbation)
    unmapped.note(f"{where}.name", rest)
    out_rest.update({f"name.{k}": v for k, v in rest.items()})
    return (
        StatName(
            metric=metric,
            split=str(split) if split is not None else "test",
            sub_split=str(sub_split) if sub_split is not None else None,
            perturbation=perturbation_column(perturbation),
        ),
        out_rest,
    )


@dataclass(frozen=True)
class StatValues:
    count: int
    sum: float
    sum_sq: float
    min: float | None
    max: float | None
    mean: float | None
    stddev: float | None


def stat_values(stat: dict[str, Any]) -> StatValues:
    """Pop HELM's ``Stat`` numbers (its ``mean`` is kept exactly as HELM wrote it)."""
    count = stat.pop("count", None)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValueError("count: missing or not a whole number >= 0")

    def number(key: str, *, required: bool) -> float | None:
        value = stat.pop(key, None)
        if value is None:
            if required:
                raise ValueError(f"{key}: missing")
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{key}: not a number ({value!r})")
        return float(value)

    total = number("sum", required=True)
    sum_sq = number("sum_squared", required=True)
    stat.pop("variance", None)  # stddev squared; derived
    assert total is not None and sum_sq is not None
    values = StatValues(
        count=count,
        sum=total,
        sum_sq=sum_sq,
        min=number("min", required=False),
        max=number("max", required=False),
        mean=number("mean", required=count > 0),
        stddev=number("stddev", required=False),
    )
    _check_consistent(values)
    return values


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _check_consistent(v: StatValues) -> None:
    """HELM's numbers of one stat agree with each other (its ``Stat`` computes them together): a
    stat whose mean is not its sum over its count, or outside its min and max, is not HELM's."""
    if v.count == 0 and (v.sum != 0 or v.sum_sq != 0):
        raise ValueError(f"count: 0 values cannot sum to {v.sum}")
    if v.sum_sq < 0:
        raise ValueError(f"sum_squared: {v.sum_sq} is negative")
    if v.count > 0 and v.mean is not None and not _close(v.mean, v.sum / v.count):
        raise ValueError(f"mean: {v.mean} contradicts sum / count = {v.sum} / {v.count}")
    if v.min is not None and v.max is not None and v.min > v.max:
        raise ValueError(f"min: {v.min} is above max {v.max}")
    if v.mean is None or v.min is None or v.max is None or v.count == 0:
        return
    slack = 1e-9 * max(1.0, abs(v.min), abs(v.max))
    if not v.min - slack <= v.mean <= v.max + slack:
        raise ValueError(f"mean: {v.mean} is outside min {v.min} and max {v.max}")


@dataclass(frozen=True)
class Perturbation:
    name: str | None
    args: str | None
    robustness: bool
    fairness: bool


def instance_perturbation(value: Any) -> Perturbation:
    if not isinstance(value, Mapping) or not value:
        return Perturbation(None, None, False, False)
    rest = dict(value)
    name = str(rest.pop("name", "?"))
    robustness = bool(rest.pop("robustness", False))
    fairness = bool(rest.pop("fairness", False))
    rest.pop("computed_on", None)
    return Perturbation(name, canonical_json(rest), robustness, fairness)


def _references(refs: Any, unmapped: Unmapped) -> list[dict[str, Any]]:
    out = []
    for ref in refs or ():
        ref = dict(ref)
        output = _pop_dict(ref, "output")
        text = output.pop("text", "")
        unmapped.note("instance.references[].output", output)
        tags = [str(t) for t in ref.pop("tags", ()) or ()]
        unmapped.note("instance.references[]", ref)
        out.append({"output": str(text), "tags": tags, "relevance": None, "first_stage_rank": None})
    return out


def instance_row(instance: dict[str, Any], unmapped: Unmapped, *, role: str) -> dict[str, Any]:
    """One ``instances`` row (join columns aside) from HELM's ``Instance``; pops what it maps."""
    inst = dict(instance)
    instance_id = inst.pop("id", None)
    if not isinstance(instance_id, str) or not instance_id:
        raise ValueError("instance.id: missing or not a string")
    text = _pop_dict(inst, "input")
    input_text = text.pop("text", "")
    unmapped.note("instance.input", text)
    references = _references(inst.pop("references", ()), unmapped)
    split = str(inst.pop("split", None) or "test")
    sub_split = inst.pop("sub_split", None)
    pert = instance_perturbation(inst.pop("perturbation", None))
    unmapped.note("instance", inst)
    rest = dict(inst)
    if text:
        rest["input"] = text
    return {
        "instance_id": instance_id,
        "role": role,
        "split": split,
        "sub_split": str(sub_split) if sub_split is not None else None,
        "perturbation": pert.name,
        "perturbation_args": pert.args,
        "robustness": pert.robustness,
        "fairness": pert.fairness,
        "input": str(input_text),
        "references": references,
        "metadata": canonical_json({}),
        "raw": _raw(rest),
    }


def _tokens(tokens: Any) -> list[dict[str, Any]]:
    out = []
    for tok in tokens or ():
        top = tok.get("top_logprobs") if isinstance(tok, Mapping) else None
        out.append(
            {
                "text": str(tok.get("text", "")),
                "logprob": float(tok.get("logprob", 0.0) or 0.0),
                "top_logprobs": list(top.items()) if isinstance(top, Mapping) and top else None,
            }
        )
    return out


def _request_kind(request: Mapping[str, Any], method: str) -> str:
    if method == "language_modeling":
        return "rolling_loglikelihood"
    if request.get("echo_prompt") and request.get("max_tokens") == 0:
        return "loglikelihood"
    return "generate"


@dataclass
class RequestCounter:
    """Positions of each instance's requests within a trial (HELM does not number them)."""

    seen: Counter[tuple[str, str | None, int]] = field(default_factory=Counter)

    def next(self, instance_id: str, perturbation: str | None, trial: int) -> int:
        key = (instance_id, perturbation, trial)
        index = self.seen[key]
        self.seen[key] += 1
        return index


def request_row(
    state: dict[str, Any], method: str, counter: RequestCounter, unmapped: Unmapped
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One ``requests`` row (join columns aside) and the ``instances`` row of its instance,
    from one of HELM's request states."""
    st = dict(state)
    instance = st.pop("instance", None)
    if not isinstance(instance, Mapping):
        raise ValueError("instance: missing or not an object")
    inst_row = instance_row(dict(instance), unmapped, role="eval")
    trial = st.pop("train_trial_index", 0)
    if not isinstance(trial, int) or isinstance(trial, bool):
        raise ValueError("train_trial_index: not a whole number")
    request = _pop_dict(st, "request")
    if not request:
        raise ValueError("request: missing or not an object")
    result = _pop_dict(st, "result")
    completions = check_type(result.pop("completions", None) or [], "a list", "result.completions")
    for i, completion in enumerate(completions):
        check_type(completion, "an object", f"result.completions[{i}]")
    first = completions[0] if completions else None
    messages = request.pop("messages", None)
    if messages is not None:
        for i, message in enumerate(check_type(messages, "a list", "request.messages")):
            check_type(message, "an object", f"request.messages[{i}]")
    prompt = request.pop("prompt", "")
    kind = _request_kind(request, method)
    mode = st.pop("request_mode", None)
    stop = request.pop("stop_sequences", None) or []
    mapping = st.pop("output_mapping", None)
    success = bool(result.pop("success", False)) if result else False
    row = {
        "instance_id": inst_row["instance_id"],
        "split": inst_row["split"],
        "sub_split": inst_row["sub_split"],
        "perturbation": inst_row["perturbation"],
        "trial": trial,
        "request_index": counter.next(inst_row["instance_id"], inst_row["perturbation"], trial),
        "reference_index": st.pop("reference_index", None),
        "role": "calibration" if mode == "calibration" else "main",
        "kind": kind,
        "prompt": str(prompt),
        "messages": None
        if not messages
        else [{"role": str(m.get("role", "")), "content": str(m.get("content", ""))} for m in messages],
        "continuation": "",
        "max_tokens": int(request.pop("max_tokens", 0) or 0),
        "temperature": float(request.pop("temperature", 0.0) or 0.0),
        "stop": [str(s) for s in stop],
        "num_completions": int(request.pop("num_completions", 1) or 1),
        "top_k_logprobs": int(request.pop("top_k_per_token", 0) or 0),
        "trial_tag": "",
        "train_ids": [],
        "num_train_instances": int(st.pop("num_train_instances", 0) or 0),
        "prompt_truncated": bool(st.pop("prompt_truncated", False)),
        "output_mapping": list(mapping.items()) if isinstance(mapping, Mapping) else None,
        "success": success,
        "error": None if success else str(result.pop("error", None) or "HELM recorded no result"),
        "error_kind": None,
        "completion": str(first.get("text", "")) if first is not None else None,
        "logprob": float(first.get("logprob", 0.0) or 0.0) if first is not None else None,
        "tokens": _tokens(first.get("tokens")) if first is not None else [],
        "completions": [
            {
                "text": str(c.get("text", "")),
                "logprob": float(c.get("logprob", 0.0) or 0.0),
                "finish_reason": _finish_reason(c.get("finish_reason")),
                "is_greedy": None,
                "num_tokens": len(c.get("tokens") or ()),
            }
            for c in completions
        ],
        "post_processed": None,
        "parse_error": None,
        "prompt_logprobs": None,
        "has_logprobs": _real_logprobs(completions),
        "prompt_tokens": 0,
        "completion_tokens": sum(len(c.get("tokens") or ()) for c in completions),
        "latency_s": float(result.pop("request_time", 0.0) or 0.0),
        "cached": bool(result.pop("cached", False)),
        "attempts": 1,
        "cost_usd": 0.0,
        "engine": "helm",
        "cache_key": "",
    }
    rest: dict[str, Any] = dict(st)
    if mode is not None and mode != "calibration":
        rest["request_mode"] = mode
    for prefix, part in (("request", request), ("result", result)):
        unmapped.note(prefix, part)
        if part:
            rest[prefix] = part
    if any(set(c) - _COMPLETION_FIELDS for c in completions):
        rest["completions"] = completions  # fields beyond text, logprob, tokens, finish_reason
        unmapped.note("result.completions[]", {k: None for c in completions for k in set(c) - _COMPLETION_FIELDS})
    unmapped.note("request_state", st)
    row["raw"] = _raw(rest)
    return row, inst_row


def _real_logprobs(completions: list[Any]) -> bool:
    """Whether the completions carry log-probabilities worth reading. HELM's Hugging Face client
    reports them after temperature scaling, and greedy decoding runs at temperature 1e-7, so on
    a local model every token's log-probability is exactly 0: such a request is recorded as
    having none (the values themselves are kept)."""
    values = [t.get("logprob") for c in completions for t in (c.get("tokens") or ())]
    return bool(values) and any(v not in (None, 0, 0.0) for v in values)


_COMPLETION_FIELDS = frozenset({"text", "logprob", "tokens", "finish_reason"})


def _finish_reason(value: Any) -> str | None:
    if isinstance(value, Mapping):
        reason = value.get("reason")
        return str(reason) if reason is not None else None
    return None if value is None else str(value)
