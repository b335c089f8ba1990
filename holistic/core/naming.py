"""The names people read for runs: one place for the site, ``--plan`` and helm-run's closing scores.

A run reads ``scenario (key=value, ...) · system``, e.g.
``arithmetic (digits=1) · embedded/smollm2-135m-instruct [prompt_format=plain]``:

- the scenario with the arguments that tell its runs apart (paths shown by their file name;
  counts, seeds, revisions and long values left out; at most four);
- the *system*: the model, with the adaptation settings in brackets when the same model runs
  the same scenario arguments under several settings anywhere in the set of runs named together
  (a suite), so that two prompt formats or shot counts are two systems;
- or, for a run whose spec entry has its own ``name:``, that name (its ``label``).

Everything here works on the facts a run's canonical spec holds (``RunSpec.canonical()``, which
is also ``run_spec.json``), so a suite named before it runs and the same suite read back from its
files get the same names. The run id stays the identity; these names are for reading.

:func:`run_name` spells a run out in full instead (``RunSpec.name``, for logs and ``run_spec.json``):
``scenario:arg=v,...,method=...,model=...``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from holistic.core.specs import ADAPTER_FIELDS, AdapterSpec, RunSpec, ScenarioSpec

_MINOR_ARGS = ("num_", "seed", "revision", "hf_revision", "dataset_splits", "cache")
_MAX_ARGS = 4
_MAX_VALUE = 28
_IGNORED_FIELDS = frozenset({"method"})
"""Adaptation fields that never name a system (the method already splits columns)."""

_MAX_SHOWN_CHARS = 24
_ADAPTER_FIELDS = frozenset(ADAPTER_FIELDS)

NAME_WIDTH = 80
"""Widest a run's name is printed in a terminal table (longer names are cut in the middle)."""


@dataclass(frozen=True)
class RunFacts:
    """What a run's name is made of: the fields of its canonical spec that names read."""

    run_id: str
    scenario: str
    args: Mapping[str, Any]
    model: str
    adapter: Mapping[str, Any] = field(default_factory=dict)
    groups: tuple[str, ...] = ()
    label: str | None = None
    """The spec entry's own ``name:`` for the run (``None``: the run is named from its facts)."""

    @staticmethod
    def of(spec: Mapping[str, Any], run_id: str) -> RunFacts:
        """The facts of a canonical run spec (``RunSpec.canonical()`` or a ``run_spec.json``)."""
        scenario = spec.get("scenario") or {}
        return RunFacts(
            run_id=run_id,
            scenario=str(scenario.get("name", "?")),
            args=dict(scenario.get("args") or {}),
            model=str(spec.get("model", "?")),
            adapter=dict(spec.get("adapter") or {}),
            groups=tuple(spec.get("groups") or ()),
            label=spec.get("label") or None,
        )

    @staticmethod
    def of_run(run: RunSpec) -> RunFacts:
        """The facts of a run (as :meth:`of` reads them from its canonical form, without building it)."""
        return RunFacts(
            run.run_id,
            run.scenario.name,
            run.scenario.args_dict,
            run.model,
            run.adapter.as_dict(),
            run.groups,
            run.label,
        )

    @property
    def method(self) -> str:
        return str(self.adapter.get("method", "generation"))


def short_value(value: Any) -> str | None:
    """A value as a name shows it (a path by its file name), or ``None`` when too long to read."""
    if isinstance(value, Mapping) or (isinstance(value, list | tuple) and len(value) > 3):
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if "/" in text and isinstance(value, str):
        text = text.rstrip("/").rsplit("/", 1)[-1]  # a path: its file name
    return text if len(text) <= _MAX_VALUE else None


def key_args(args: Mapping[str, Any], also: Collection[str] = (), first: Collection[str] = ()) -> list[str]:
    """``name=value`` for the arguments that tell runs of one scenario apart: the ``also`` ones
    whatever they are, then up to four others without counts, seeds, revisions or values too long
    to read, the ``first`` ones (those that differ between the scenario's runs) before the rest."""
    shown = [f"{name}={value_text(args[name])}" for name in sorted(also) if name in args]
    others = []
    for name in sorted(args, key=lambda n: (n not in first, n)):
        text = None if name in also or name.startswith(_MINOR_ARGS) else short_value(args[name])
        if text is not None:
            others.append(f"{name}={text}")
    return shown + others[:_MAX_ARGS]


def run_title(
    scenario: str, args: Mapping[str, Any], system: str, also: Collection[str] = (), first: Collection[str] = ()
) -> str:
    """``scenario (key=value, ...) · system`` (``also`` and ``first``: as :func:`key_args` takes them)."""
    shown = key_args(args, also, first)
    return f"{scenario}{' (' + ', '.join(shown) + ')' if shown else ''} · {system}"


def value_text(value: Any) -> str:
    """A value as a run's name shows it: :func:`short_value`, else cut (whitespace runs as one space)."""
    text = short_value(value)
    if text is None:
        text = setting_text(value)
    return " ".join(text.split())


def setting_text(value: Any, limit: int = 32) -> str:
    """An adaptation setting's value in a system's name (cut at ``limit`` characters)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _differ(a: Any, b: Any) -> bool:
    """Whether two spec values differ (``True`` and ``1`` do)."""
    return a != b or type(a) is not type(b)


def varying_fields(runs: Iterable[RunFacts]) -> list[str]:
    """Adaptation fields whose value differs between runs of one model on the same scenario arguments."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for run in runs:
        key = json.dumps([run.model, run.scenario, run.args, run.method, list(run.groups)], sort_keys=True, default=str)
        groups[key].append(run.adapter)
    fields: set[str] = set(_IGNORED_FIELDS)
    for adapters in groups.values():
        if len(adapters) < 2:
            continue
        first = _without(adapters[0], fields)
        for adapter in adapters[1:]:
            if _without(adapter, fields) == first:  # (a fast test: most adapters differ in known fields only)
                continue
            for name in set(adapter) | set(first):
                if name not in fields and _differ(adapter.get(name), first.get(name)):
                    fields.add(name)
            first = _without(adapters[0], fields)
    return sorted(fields - _IGNORED_FIELDS)


def _without(adapter: Mapping[str, Any], fields: Collection[str]) -> dict[str, Any]:
    out = dict(adapter)
    for name in fields:
        out.pop(name, None)
    return out


def system_name(model: str, adapter: Mapping[str, Any], fields: Sequence[str]) -> str:
    """``model [field=value, ...]`` (the model alone when no field tells systems apart)."""
    if not fields:
        return model
    return f"{model} [{', '.join(f'{f}={setting_text(adapter.get(f))}' for f in fields)}]"


def system_names(runs: Sequence[RunFacts]) -> dict[str, str]:
    """run_id -> the name of the system the run belongs to."""
    fields = varying_fields(runs)
    return {run.run_id: system_name(run.model, run.adapter, fields) for run in runs}


def _differing(runs: Iterable[RunFacts]) -> set[str]:
    """The arguments whose values differ between ``runs`` (or that some of them lack)."""
    runs = list(runs)
    first = runs[0].args
    keys: set[str] = set().union(*(run.args for run in runs))
    return {key for key in keys if any(key not in run.args or _differ(run.args[key], first.get(key)) for run in runs)}


def titles(runs: Sequence[RunFacts], systems: Mapping[str, str] | None = None) -> dict[str, str]:
    """run_id -> the run's ``label``, else its title with its system, the arguments that differ
    between the scenario's runs first (two runs may share one); ``systems``: :func:`system_names`
    of ``runs`` when known."""
    systems = system_names(runs) if systems is None else systems
    by_scenario: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        by_scenario[run.scenario].append(run)
    varying = {scenario: _differing(members) for scenario, members in by_scenario.items()}
    return {
        run.run_id: run.label or run_title(run.scenario, run.args, systems[run.run_id], first=varying[run.scenario])
        for run in runs
    }


def display_names(runs: Sequence[RunFacts]) -> dict[str, str]:
    """run_id -> the run's name as people read it: its :func:`titles`; where unnamed runs share one,
    each shows the arguments that tell them apart (counts and long values included), and where
    they still share one (they differ in perturbations, say), ``#`` and the start of its run id's hash."""
    systems = system_names(runs)
    names = titles(runs, systems)
    sharing: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        sharing[names[run.run_id]].append(run)
    for members in sharing.values():
        unnamed = [run for run in members if run.label is None]
        if len(members) < 2 or not unnamed:
            continue
        differing = _differing(unnamed)
        if differing:
            for run in unnamed:
                names[run.run_id] = run_title(run.scenario, run.args, systems[run.run_id], differing)
    counts = Counter(names.values())
    return {
        run_id: f"{name} #{run_id.rsplit('-', 1)[-1][:6]}" if counts[name] > 1 else name
        for run_id, name in names.items()
    }


def cut(text: str, width: int = NAME_WIDTH) -> str:
    """``text`` in at most ``width`` characters, cut where a run name can best spare it: first the
    model's name in its middle (every run of a table shares it), down to :data:`_MODEL_KEPT`
    characters, then the end of the scenario's arguments; what is still too long keeps its start
    and its end. E.g. ``synthetic_reasoning (mode=variable_subs…) · embedded…instruct [prompt_format=plain]``."""
    if len(text) <= width:
        return text
    head, sep, system = text.rpartition(" · ")
    if sep:
        model, bracket, settings = system.partition(" [")
        over = len(text) - width
        model = _middle(model, max(len(model) - over, min(len(model), _MODEL_KEPT)))
        room = width - len(sep) - len(model) - len(bracket) - len(settings)
        if room >= len(head):
            return f"{head}{sep}{model}{bracket}{settings}"
        if room >= 12:
            closing = ")" if head.endswith(")") and "(" in head[: room - 2] else ""
            return f"{head[: room - 1 - len(closing)].rstrip()}…{closing}{sep}{model}{bracket}{settings}"
    return _middle(text, width)


_MODEL_KEPT = 18
"""Characters of a model's name :func:`cut` keeps at least."""


def _middle(text: str, width: int) -> str:
    """``text`` in ``width`` characters: its start and its end joined by ``…``."""
    if len(text) <= width:
        return text
    start = (width - 1) * 3 // 5
    end = width - 1 - start
    return f"{text[:start].rstrip()}…{text[len(text) - end :].lstrip()}"


def run_name(
    label: str, scenario: ScenarioSpec, adapter: AdapterSpec, model: str, shown_fields: Collection[str]
) -> str:
    """The readable name of one run (``label`` is the entry's ``name`` or the scenario name)."""
    parts = [f"{key}={format_value(value)}" for key, value in scenario.args]
    parts.append(f"method={adapter.method}")
    for key in sorted(shown_fields):
        if key == "method" or key.split(".")[0] not in _ADAPTER_FIELDS:
            continue
        text = format_value(adapter.value_of(key))
        if len(text) <= _MAX_SHOWN_CHARS and "," not in text:
            parts.append(f"{key}={text}")
    parts.append(f"model={model}")
    return f"{label}:{','.join(parts)}"


def format_value(value: Any) -> str:
    """A short text form of a spec value (booleans and null as in YAML, lists joined by ``|``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "|".join(format_value(v) for v in value)
    if isinstance(value, dict):
        return "|".join(f"{k}:{format_value(v)}" for k, v in sorted(value.items()))
    if isinstance(value, str) and (not value.isprintable() or " " in value):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
