"""Expand a validated run spec into the run matrix: one :class:`RunSpec` per cell.

For each entry of ``runs`` (in file order):

1. the scenario name, its arguments, models, metrics and perturbations are checked
   against the registries (unknown names get "did you mean");
2. ``defaults`` are layered under the entry (the entry's own values win);
3. list-valued scenario args (unless the scenario declares the argument a sequence,
   an array in its derived schema) and list-valued adaptation fields (except ``stop_sequences``, ``choice_labels``
   and ``post_processing``) multiply, as do models. Order: args in sorted key
   order (values in the given order), then adaptation fields in sorted key order,
   then models;
4. each cell's :class:`AdapterSpec` is the dataclass defaults, under the
   scenario's ``info.default_adapter``, under the spec ``seed`` and the run's
   protocol (and that protocol's defaults), under the user's values;
5. the protocol (``protocol:`` of the run, else of ``defaults``, else of the spec; by
   default ``helm`` for HELM's core scenarios, ``holistic`` otherwise) is checked: a
   ``helm`` run whose adaptation departs from HELM's is an error at the line that set
   the departing field (see :mod:`holistic.spec.protocol`).

When a run asks for ``robustness`` or ``fairness`` (and the scenario measures
it) but lists no perturbations, the perturbation package's defaults are added.
An explicit ``perturbations: []`` means none.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import holistic.spec.protocol as protocols
from holistic.core.arguments import unknown_argument
from holistic.core.errors import ModelError, ScenarioArgError, SpecError, UnknownNameError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.judges import JudgeSpec, VerdictRule, template_field_problem
from holistic.core.naming import run_name
from holistic.core.specs import ADAPTER_FIELDS
from holistic.core.types import AdapterSpec, ModelDeployment, PerturbationSpec, RunSpec, ScenarioSpec
from holistic.scenarios.base import BaseScenario
from holistic.scenarios.loading.languages import english_only_reason
from holistic.spec.catalog import Catalog
from holistic.spec.labels import entry_name
from holistic.spec.layers import NON_MULTIPLYING_FIELDS, Written, adaptation_layer, axes, layered
from holistic.spec.reasoning import fold_reasoning, reasoning_error
from holistic.spec.schema import describe_schema, retired_field, runspec_schema, validate_value
from holistic.spec.source import DocPath, Location, Locations

DEFAULT_MODEL = "embedded/smollm2-135m-instruct"
"""The model runs use when the spec names none (offline, no key)."""

PERTURBATION_CATEGORIES = ("robustness", "fairness")


@dataclass(frozen=True)
class ExpandedRun:
    """One cell of the matrix plus where its entry was written (for later error reports)."""

    spec: RunSpec
    entry: int
    """Index of the ``runs`` entry it came from."""


@dataclass(frozen=True)
class Expansion:
    runs: tuple[ExpandedRun, ...]
    warnings: tuple[str, ...]


DEFAULT_MAX_RUNS = 100_000
"""Runs one spec may make (``helm-run --max-runs``), counted before anything is expanded."""


class _RunCount:
    """Runs counted entry by entry before each is expanded: past the limit, the error names the list
    that multiplies most."""

    def __init__(self, locations: Locations, max_runs: int) -> None:
        self.locations = locations
        self.max_runs = max_runs
        self.total = 0

    def add(self, index: int, factors: Sequence[tuple[int, DocPath]]) -> None:
        n = math.prod(k for k, _ in factors)
        self.total += n
        if self.total <= self.max_runs:
            return
        k, path = max(factors, key=lambda f: f[0]) if factors else (1, ("runs", index))
        product = " x ".join(f"{f:,}" for f, _ in factors) or "1"
        raise self.locations.error(
            path,
            f"this spec makes at least {self.total:,} runs, more than the limit of {self.max_runs:,} "
            f"(runs[{index}] alone makes {product} = {n:,}; this list multiplies it by {k:,}); "
            "split the spec or raise the limit with --max-runs",
        )


def expand(
    doc: Mapping[str, Any], locations: Locations, catalog: Catalog, *, seed: int, max_runs: int = DEFAULT_MAX_RUNS
) -> Expansion:
    """Expand every entry of ``doc["runs"]``; raise :class:`SpecError` on the first problem, and when
    the matrix would have more than ``max_runs`` runs (counted before expanding)."""
    count = _RunCount(locations, max_runs)
    defaults: Mapping[str, Any] = doc.get("defaults") or {}
    default_layer = adaptation_layer(defaults, ("defaults",), locations)
    top_models = Written(doc["models"], ("models",)) if "models" in doc else None
    out: list[ExpandedRun] = []
    warnings: list[str] = []
    seen: dict[str, tuple[int, str]] = {}
    for index, entry in enumerate(doc["runs"]):
        top_protocol = Written(doc["protocol"], ("protocol",)) if "protocol" in doc else None
        expander = _EntryExpander(
            index, entry, defaults, default_layer, top_models, locations, catalog, seed, top_protocol, count
        )
        expander.top_judges = Written(doc["judges"], ("judges",)) if "judges" in doc else None
        for spec in expander.expand():
            previous = seen.get(spec.run_id)
            if previous is not None:
                raise locations.error(
                    ("runs", index),
                    f"duplicate run {spec.name!r}: runs[{previous[0]}] already produces it (same run id "
                    f"{spec.run_id}); remove one or make them differ",
                )
            seen[spec.run_id] = (index, spec.name)
            out.append(ExpandedRun(spec=spec, entry=index))
        warnings.extend(expander.warnings)
    return Expansion(runs=tuple(out), warnings=tuple(dict.fromkeys(warnings)))


class _EntryExpander:
    """Checks and multiplies one entry of ``runs``."""

    def __init__(
        self,
        index: int,
        entry: Mapping[str, Any],
        defaults: Mapping[str, Any],
        default_layer: Mapping[str, Written],
        top_models: Written | None,
        locations: Locations,
        catalog: Catalog,
        seed: int,
        top_protocol: Written | None = None,
        count: _RunCount | None = None,
    ) -> None:
        self.count = count
        self.index = index
        self.top_protocol = top_protocol
        self.at: DocPath = ("runs", index)
        self.entry = entry
        self.defaults = defaults
        self.default_layer = default_layer
        self.top_models = top_models
        self.locations = locations
        self.catalog = catalog
        self.seed = seed
        self.warnings: list[str] = []
        self._info_adapter: Mapping[str, Any] = {}
        self.top_judges: Written | None = None

    def error(self, path: DocPath, message: str) -> SpecError:
        return self.locations.error(path, message)

    # -- the pieces --------------------------------------------------------

    def scenario(self) -> tuple[str, ScenarioInfo]:
        name = self.entry["scenario"]
        try:
            info = self.catalog.scenario_info(name)
        except UnknownNameError as exc:
            raise self.error((*self.at, "scenario"), exc.format()) from None
        self._check_default_adapter(name, info)
        return name, info

    def _check_default_adapter(self, name: str, info: ScenarioInfo) -> None:
        adaptation_schema = runspec_schema()["$defs"]["adaptation"]
        for key, value in info.default_adapter.items():
            where = (*self.at, "scenario")
            if key not in ADAPTER_FIELDS:
                raise self.error(
                    where, f"scenario {name!r} recommends an unknown adaptation field {key!r} (a bug in the scenario)"
                )
            plain = list(value) if isinstance(value, tuple) else value
            prop = adaptation_schema["properties"][key]
            single = prop["anyOf"][0] if "anyOf" in prop else prop
            try:
                validate_value(plain, single, self.locations, where)
            except SpecError:
                expected = describe_schema(single, runspec_schema())
                raise self.error(
                    where,
                    f"scenario {name!r} recommends an invalid {key} ({type(value).__name__}); expected {expected} "
                    "(a bug in the scenario)",
                ) from None

    def arg_axes(self, name: str) -> list[tuple[str, list[Written]]]:
        args: Mapping[str, Any] = self.entry.get("args") or {}
        props: Mapping[str, Any] = self.catalog.scenario_class(name).args_schema()["properties"]
        for key in args:
            if key not in props:
                if not props:
                    raise self.error((*self.at, "args"), f"scenario {name!r} takes no arguments")
                retired = retired_field(key, props)
                msg = f"argument {retired}" if retired else unknown_argument("scenario", name, key, props)
                raise self.locations.key((*self.at, "args"), key).error(
                    msg, path=(*self.locations.display_path((*self.at, "args")), key)
                )
        written = {k: Written(v, (*self.at, "args", k)) for k, v in args.items()}
        for key, value in written.items():
            if isinstance(value.value, list) and not value.value and not _declares_array(props.get(key)):
                raise self.error(value.path, "an empty list here multiplies to no runs; give at least one value")
        return axes(written, multiplies=lambda key: not _declares_array(props.get(key)))

    def check_args(self, name: str, combo: Mapping[str, Written]) -> BaseScenario:
        """The arguments against the scenario's derived schema, then the scenario's own checks of
        values that fit together (its construction, which loads no data): the scenario the
        other hooks are asked of."""
        cls = self.catalog.scenario_class(name)
        values = {k: w.value for k, w in combo.items()}
        # Point errors at the value actually used (the list item when the arg multiplied).
        shifted = _ComboLocations(self.locations, combo, (*self.at, "args"))
        validate_value(values, cls.args_schema(), shifted, (*self.at, "args"), what=f"argument of scenario {name!r}")
        try:
            scenario = cls(**values)
            scenario.check_args()
        except ScenarioArgError as exc:
            at = combo[exc.field].path if exc.field in combo else (*self.at, "args")
            raise self.error(at, str(exc)) from None
        except (TypeError, ValueError) as exc:
            raise self.error((*self.at, "args"), f"scenario {name!r}: {exc}") from None
        return scenario

    def adaptation_axes(self) -> list[tuple[str, list[Written]]]:
        layer = dict(self.default_layer)
        layer.update(adaptation_layer(self.entry, self.at, self.locations))
        for key, written in layer.items():
            if isinstance(written.value, list) and not written.value and key not in NON_MULTIPLYING_FIELDS:
                raise self.error(written.path, "an empty list here multiplies to no runs; give at least one value")
        return axes(layer, multiplies=lambda key: key not in NON_MULTIPLYING_FIELDS)

    def models(self) -> list[tuple[ModelDeployment, Written]]:
        chosen = Written(self.entry["models"], (*self.at, "models")) if "models" in self.entry else self.top_models
        items = (
            [Written(v, (*chosen.path, i)) for i, v in enumerate(chosen.value)]
            if chosen is not None
            else [Written(DEFAULT_MODEL, self.at)]
        )
        out: list[tuple[ModelDeployment, Written]] = []
        names: set[str] = set()
        for item in items:
            if item.value in names:
                raise self.error(item.path, f"model {item.value!r} is listed twice")
            names.add(item.value)
            try:
                out.append((self.catalog.model(item.value), item))
            except UnknownNameError as exc:
                raise self.error(item.path, exc.format()) from None
            except ModelError as exc:  # e.g. a Hugging Face id that cannot be had offline
                raise self.error(item.path, str(exc)) from None
        return out

    def metrics(self, info: ScenarioInfo) -> list[Written]:
        chosen = layered(self.entry, self.defaults, "metrics", self.at)
        if chosen is None:
            return [Written(c, (*self.at, "scenario")) for c in info.metric_categories]
        out: dict[str, Written] = {}
        for i, name in enumerate(chosen.value):
            path = (*chosen.path, i)
            try:
                self.catalog.check_metric(name)
            except UnknownNameError as exc:
                raise self.error(path, exc.format()) from None
            out.setdefault(name, Written(name, path))
        return list(out.values())

    def perturbations(self, info: ScenarioInfo, metrics: Sequence[str], helm: bool) -> tuple[PerturbationSpec, ...]:
        """The run's perturbations, each checked against the class it means (with ``helm``, HELM's
        algorithm: an argument HELM does not have is an error at its line)."""
        chosen = layered(self.entry, self.defaults, "perturbations", self.at)
        if chosen is None:
            perturbed = set(info.metric_categories) - set(info.unperturbed_by_default)
            wanted = [c for c in PERTURBATION_CATEGORIES if c in metrics and c in perturbed]
            if not wanted:
                return ()
            return tuple(self.catalog.default_perturbations(wanted))
        out: list[PerturbationSpec] = []
        for i, item in enumerate(chosen.value):
            path = (*chosen.path, i)
            name, args = (item, {}) if isinstance(item, str) else (item["name"], item.get("args") or {})
            try:
                self.catalog.perturbation(name)
            except UnknownNameError as exc:
                raise self.error(path if isinstance(item, str) else (*path, "name"), exc.format()) from None
            spec = PerturbationSpec.make(name, args)
            not_english = english_only_reason(name, info.language)
            if not_english is not None:
                raise self.error(path if isinstance(item, str) else (*path, "name"), not_english)
            problem = self.catalog.perturbation_problem(spec, helm=helm)
            if problem is not None:
                key = (problem.path or "").split(".args.", 1)[1] if ".args." in (problem.path or "") else None
                where = (*path, "args", key) if key is not None and key in args else path
                raise self.error(where, problem.message)
            if spec in out:
                raise self.error(path, f"perturbation {name!r} is listed twice with the same arguments")
            out.append(spec)
        return tuple(out)

    def protocol(self, info: ScenarioInfo) -> Written | None:
        """The protocol the run claims, where it was written (``None``: the scenario's default)."""
        return layered(self.entry, self.defaults, "protocol", self.at) or self.top_protocol

    def judges(self, scenario: str, info: ScenarioInfo, declared: Sequence[str] | None) -> tuple[JudgeSpec, ...]:
        """The run's judges (the entry's, else ``defaults``', else the spec's), each checked:
        the model is in the registry, the template refers only to what the scenario's
        instances have (``declared``: their metadata fields, ``None`` if unknown), the verdict
        rule is valid."""
        chosen = layered(self.entry, self.defaults, "judges", self.at) or self.top_judges
        if chosen is None:
            return ()
        out: list[JudgeSpec] = []
        for i, item in enumerate(chosen.value):
            at = (*chosen.path, i)
            judge = self._judge(scenario, info, item, at, declared)
            if any(j.label == judge.label for j in out):
                raise self.error(at, f"judge {judge.label!r} is listed twice; give one of them another name (name:)")
            out.append(judge)
        return tuple(out)

    def _judge(
        self, scenario: str, info: ScenarioInfo, item: Any, at: DocPath, declared: Sequence[str] | None
    ) -> JudgeSpec:
        spec: Mapping[str, Any] = {"model": item} if isinstance(item, str) else item
        model_at = at if isinstance(item, str) else (*at, "model")
        try:
            self.catalog.model(spec["model"])
        except UnknownNameError as exc:
            raise self.error(model_at, f"judge: {exc.format()}") from None
        except ModelError as exc:
            raise self.error(model_at, f"judge: {exc}") from None
        default = info.judge
        if default is None and ("template" not in spec or "parse" not in spec):
            missing = " and ".join(k for k in ("template", "parse") if k not in spec)
            raise self.error(at, f"scenario {scenario!r} has no judge prompt of its own; give the judge's {missing}")
        template = spec.get("template", default.template if default is not None else "")
        template_at = (*at, "template") if "template" in spec else at
        problem = template_field_problem(template, declared)
        if problem is not None:
            raise self.error(template_at, problem)
        if "parse" in spec:
            rule = VerdictRule.from_mapping(spec["parse"])
            rule_problem = rule.problem()
            if rule_problem is not None:
                raise self.error((*at, "parse"), f"invalid verdict rule: {rule_problem}")
        else:
            assert default is not None
            rule = default.rule
        stat = spec.get("stat", default.stat if default is not None else "judge_score")
        return JudgeSpec(
            model=spec["model"],
            template=template,
            rule=rule,
            name=str(spec.get("name", "")),
            stat=stat,
            max_tokens=int(spec.get("max_tokens", default.max_tokens if default is not None else 256)),
            temperature=float(spec.get("temperature", 0.0)),
            retries=int(spec.get("retries", 2)),
            source="spec" if "template" in spec or default is None else f"scenario:{scenario}",
            empty_score=default.empty_score if default is not None and "template" not in spec else None,
            rescaled=default.rescaled if default is not None and "stat" not in spec else None,
        )

    def groups(self, scenario: str) -> tuple[str, ...]:
        chosen = layered(self.entry, self.defaults, "groups", self.at)
        return tuple(dict.fromkeys(chosen.value)) if chosen is not None else (scenario,)

    # -- checks that need the model -----------------------------------------

    def check_capabilities(
        self,
        deployment: ModelDeployment,
        model_at: Written,
        metrics: Sequence[Written],
        method: Written | None,
        adapter: AdapterSpec,
    ) -> None:
        caps = deployment.capabilities
        if not caps.logprobs:
            for metric in metrics:
                if self.catalog.metric_needs_logprobs(metric.value):
                    raise self.error(
                        metric.path,
                        f"metric {metric.value!r} needs token log-probabilities, but model {deployment.name!r} "
                        "does not return them; drop the metric or the model (categories such as 'calibration' "
                        "are marked not applicable instead)",
                    )
        if adapter.scores_loglikelihood and not caps.prompt_logprobs:
            where = method.path if method is not None else model_at.path
            raise self.error(
                where,
                f"method {adapter.method!r} scores text by log-probability, but model {deployment.name!r} "
                "cannot score a given continuation (no prompt log-probabilities); use generation or "
                "multiple_choice_joint",
            )

    # -- the product --------------------------------------------------------

    def expand(self) -> list[RunSpec]:
        scenario, info = self.scenario()
        self._info_adapter = info.default_adapter
        arg_axes = self.arg_axes(scenario)
        adapt_axes = self.adaptation_axes()
        models = self.models()
        named = entry_name(self.entry, self.at, self.locations, arg_axes, adapt_axes, len(models) > 1)
        if self.count is not None:
            factors = [(len(v), v[0].path[:-1]) for _, v in (*arg_axes, *adapt_axes) if len(v) > 1]
            if len(models) > 1:
                factors.append((len(models), models[0][1].path[:-1]))
            self.count.add(self.index, factors)
        metric_items = self.metrics(info)
        metric_names = tuple(m.value for m in metric_items)
        protocol_at = self.protocol(info)
        protocol = protocol_at.value if protocol_at is not None else protocols.default_protocol(info)
        helm = protocols.protocol_behaviour(protocol, scenario, {}).helm_perturbations
        perturbations = self.perturbations(info, metric_names, helm)
        groups = self.groups(scenario)
        run_level = set(adaptation_layer(self.entry, self.at, self.locations))
        multiplied = {key for key, values in adapt_axes if len(values) > 1}
        shown_fields = run_level | multiplied

        arg_keys = [k for k, _ in arg_axes]
        adapt_keys = [k for k, _ in adapt_axes]
        out: list[RunSpec] = []
        for arg_combo in itertools.product(*(values for _, values in arg_axes)):
            args = self._resolve_paths(scenario, dict(zip(arg_keys, arg_combo, strict=True)))
            made = self.check_args(scenario, args)
            self._preflight(scenario, made, args)
            judges = self.judges(scenario, info, made.judge_fields())
            # The scenario's recommended adapter fields for these args (MMLU names the subject,
            # RAFT its task; by default its info's default_adapter).
            recommended: Mapping[str, Any] = dict(made.adapter_defaults())
            for adapt_combo in itertools.product(*(values for _, values in adapt_axes)):
                user = dict(zip(adapt_keys, adapt_combo, strict=True))
                values = {k: w.value for k, w in args.items()}
                adapter = protocols.resolve_protocol(self._adapter(info, user, recommended, protocol), scenario, values)
                self._check_adapter(scenario, adapter, user)
                problem_of_method = made.adapter_problem(adapter.method)  # the scenario's own objection
                if problem_of_method is not None:
                    self._raise_at_arg(args, problem_of_method)
                problem = protocols.check_protocol(adapter, user, recommended, info)
                if problem is not None:
                    field, message = problem
                    claim = (
                        f"protocol 'helm' set at line {self.locations.find(protocol_at.path).line}"
                        if protocol_at is not None
                        else f"protocol 'helm' is the default for HELM's scenario {scenario!r}"
                    )
                    raise self.error(
                        user[field].path, f"{message} ({claim}); set protocol: holistic on the run to use it"
                    )
                for deployment, model_at in models:
                    self.check_capabilities(deployment, model_at, metric_items, user.get("method"), adapter)
                    reasoning = reasoning_error(adapter, user, deployment)
                    if reasoning is not None:
                        raise self.error(*reasoning)
                    values = {k: w.value for k, w in args.items()}
                    scenario_spec = ScenarioSpec.make(scenario, values)
                    label = named.base(values, adapter, deployment.name) if named else scenario
                    name = run_name(label, scenario_spec, adapter, deployment.name, shown_fields)
                    own = named.of(values, adapter, deployment.name) if named else None
                    facts = (scenario_spec, adapter, deployment.name, metric_names, perturbations, groups, judges)
                    out.append(RunSpec(name, *facts, label=own))
        return out

    def _check_adapter(self, scenario: str, adapter: AdapterSpec, user: Mapping[str, Written]) -> None:
        problem = self.catalog.adapter_problem(adapter)
        if problem is None:
            return
        field = (problem.path or "").removeprefix("adaptation.").split("[")[0].split(".")[0]
        if field in user:
            raise self.error(user[field].path, problem.message)
        origin = f" (scenario {scenario!r} recommends this value)" if field in dict(self._info_adapter) else ""
        raise self.error((*self.at, "scenario"), f"adaptation.{field}: {problem.message}{origin}")

    def _raise_at_arg(self, args: Mapping[str, Written], problem: tuple[tuple[str | int, ...], str]) -> None:
        where, message = problem
        head = args.get(str(where[0])) if where else None
        path = (*head.path, *where[1:]) if head is not None else (*self.at, "args", *where)
        raise self.error(path, message)

    def _preflight(self, scenario: str, made: BaseScenario, args: Mapping[str, Written]) -> None:
        """A scenario's own cheap look at its data (``preflight()``, e.g. the ``file``
        scenario checking its field paths against the first rows): the first problem is an
        error at the argument it concerns."""
        try:
            problems = made.preflight()
        except (TypeError, ValueError) as exc:
            raise self.error((*self.at, "args"), f"scenario {scenario!r}: {exc}") from None
        if problems:
            self._raise_at_arg(args, problems[0])

    def _resolve_paths(self, scenario: str, args: dict[str, Written]) -> dict[str, Written]:
        """Relative file arguments (schema ``x-path``) that do not exist from the working
        directory but do from the spec file's folder are rewritten to point there."""
        props = self.catalog.scenario_class(scenario).args_schema()["properties"]
        base = Path(self.locations.file).parent
        out = dict(args)
        for key, written in args.items():
            prop = props.get(key)
            if not isinstance(prop, Mapping):
                continue
            if prop.get("x-path"):
                out[key] = Written(_relocate_value(written.value, base), written.path)
            elif prop.get("type") == "array" and isinstance(written.value, list):  # e.g. join: [{path: ...}]
                item_props = (prop.get("items") or {}).get("properties", {})
                keys = {k for k, v in item_props.items() if isinstance(v, Mapping) and v.get("x-path")}
                if keys:
                    items = [
                        {k: _relocate_value(v, base) if k in keys else v for k, v in item.items()}
                        if isinstance(item, Mapping)
                        else item
                        for item in written.value
                    ]
                    out[key] = Written(items, written.path)
        return out

    def _adapter(
        self,
        info: ScenarioInfo,
        user: Mapping[str, Written],
        defaults: Mapping[str, Any] | None = None,
        protocol: str = "helm",
    ) -> AdapterSpec:
        values: dict[str, Any] = dict(info.default_adapter if defaults is None else defaults)
        values["seed"] = self.seed
        values["protocol"] = protocol
        values.update(protocols.PROTOCOL_DEFAULTS[protocol])
        values.update({k: w.value for k, w in user.items()})
        fold_reasoning(values)
        for key in NON_MULTIPLYING_FIELDS:
            if key in values:
                values[key] = tuple(values[key])
        return AdapterSpec(**values)


def _relocate_value(value: Any, base: Path) -> Any:
    """A path (or a mapping of splits to paths) relocated by :func:`_relocate`."""
    if isinstance(value, str):
        return _relocate(value, base)
    if isinstance(value, Mapping):
        return {k: _relocate(v, base) if isinstance(v, str) else v for k, v in value.items()}
    return value


def _relocate(value: str, base: Path) -> str:
    path = Path(value)
    if path.is_absolute() or path.exists() or not (base / path).exists():
        return value
    return os.path.relpath(base / path)


def _declares_array(prop: Any) -> bool:
    """Whether an args-schema property declares an array (so a list is the value, not axes)."""
    if not isinstance(prop, Mapping):
        return False
    kind = prop.get("type")
    if kind == "array" or (isinstance(kind, list) and "array" in kind):
        return True
    return any(_declares_array(b) for b in (*prop.get("anyOf", ()), *prop.get("oneOf", ())))


class _ComboLocations(Locations):
    """Locations where ``args.<key>`` resolves to the list item the combination used."""

    def __init__(self, base: Locations, combo: Mapping[str, Written], args_at: DocPath) -> None:
        super().__init__(base.file, dict(base.items()))
        self._base = base
        self._combo = combo
        self._args_at = args_at

    def _map(self, path: DocPath) -> DocPath:
        n = len(self._args_at)
        key = path[n] if path[:n] == self._args_at and len(path) > n else None
        if isinstance(key, str) and key in self._combo:
            return (*self._combo[key].path, *path[n + 1 :])
        return path

    def find(self, path: DocPath) -> Location:
        return self._base.find(self._map(path))

    def error(self, path: DocPath, message: str) -> SpecError:
        return self._base.error(self._map(path), message)
