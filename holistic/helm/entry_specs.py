"""HELM run entries -> a holistic run spec under ``protocol: helm`` (``helm-run --run-entries/--conf-paths``).

Each entry becomes one run of the spec, as a user would have written it by hand: the scenario and
its arguments (:mod:`holistic.helm.entry_table`), HELM's run expanders as run fields
(``data_augmentation`` -> perturbations, ``max_train_instances``, ``num_train_trials``,
``max_eval_instances``, ``temperature``, ``num_outputs``, ``max_tokens`` via
``num_output_tokens``), the conf entry's ``groups`` added to the run's, and HELM's model names
resolved to the registry's deployments (:func:`resolve_model`). Like HELM, ``--max-eval-instances``
and ``--num-train-trials`` fill what an entry leaves unset, and a model group (``model=text``)
needs ``--models-to-run``. What cannot be translated is a :class:`~holistic.core.errors.SpecError`
naming the entry and the nearest valid name; the compiler then checks the spec as any other.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from holistic.core.errors import SpecError, did_you_mean
from holistic.core.types import ModelDeployment
from holistic.helm.entry_table import CORE_METRICS, DISPATCH, FUNCTIONS, NOT_HERE, HelmFunction, augmentation
from holistic.helm.entry_table import known_augmentations as _known_augmentations
from holistic.helm.run_entries import RunEntry, Value, parse_description

MODEL_GROUPS = frozenset(
    {
        "all",
        "text_code",
        "text",
        "code",
        "instruction_following",
        "full_functionality_text",
        "limited_functionality_text",
    }
)
"""HELM's ``model=`` values that stand for a group of models (HELM then needs ``--models-to-run``)."""

HELM_HUB_PREFIX = "huggingface/"
"""HELM's deployments of Hugging Face Hub models (``huggingface/smollm2-135m-instruct``)."""

RUN_FIELDS = {"max_eval_instances": "max_eval_instances", "num_train_trials": "num_train_trials"}
"""HELM run expanders that are holistic run fields of the same name."""
ADAPTATION_EXPANDERS = {
    "max_train_instances": "max_train_instances",
    "temperature": "temperature",
    "num_outputs": "num_outputs",
    "num_output_tokens": "max_tokens",
}
"""HELM run expanders that set an adaptation field: HELM's name -> holistic's."""
MODEL_EXPANDERS = ("model", "model_deployment")
UNSUPPORTED = (
    "instructions",
    "prompt",
    "newline",
    "stop",
    "add_to_stop",
    "global_prefix",
    "anthropic",
    "claude_3",
    "follow_format_instructions",
    "format_prompt",
    "num_trials",
    "eval_split",
    "tokenizer",
    "num_prompt_tokens",
    "increase_max_tokens",
    "increase_temperature",
    "chatml",
    "output_format_instructions",
    "process_output",
)
"""HELM run expanders that change HELM's prompts away from a scenario's HELM run spec: holistic
refuses them under ``protocol: helm`` (write a ``protocol: holistic`` spec to change prompts)."""


@dataclass(frozen=True)
class Translated:
    """The run spec document the entries make, and the entries each run came from."""

    document: dict[str, Any]
    origins: tuple[str, ...]


def resolve_model(name: str, deployments: Sequence[ModelDeployment], where: str) -> str:
    """A HELM model or deployment name -> the registry's deployment: its own name, else the one
    whose ``provider/model_id`` is that name, else (HELM's ``huggingface/<name>``) the one whose
    model id ends in ``/<name>`` (any case). Otherwise an error naming the closest deployments."""
    names = [d.name for d in deployments]
    if name in names:
        return name
    for d in deployments:
        if f"{d.provider}/{d.model_id}" == name:
            return d.name
    short = name.removeprefix(HELM_HUB_PREFIX)
    if short != name and short:
        for d in deployments:
            if d.model_id.lower().rsplit("/", 1)[-1] == short.lower():
                return d.name
    close = did_you_mean(name, names)
    hint = f"; the closest: {', '.join(close)}" if close else ""
    raise SpecError(
        f"{where}: HELM model {name!r} has no deployment in the registry{hint} (add one named {name!r} "
        "with --models-file)"
    )


def _function(name: str, args: dict[str, Value], where: str) -> HelmFunction:
    if name in NOT_HERE:
        raise SpecError(f"{where}: {name!r}: {NOT_HERE[name]}")
    if name in DISPATCH:
        key, choices = DISPATCH[name]
        chosen = args.get(key)
        if chosen not in choices:
            known = sorted(str(c) for c in choices)
            raise SpecError(
                f"{where}: {name}:{key}={chosen} is not a scenario holistic has (it has {', '.join(known)})"
            )
        return choices[chosen]
    if name not in FUNCTIONS:
        close = did_you_mean(name, [*FUNCTIONS, *DISPATCH])
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise SpecError(f"{where}: HELM run-spec function {name!r} has no holistic scenario{hint}")
    return FUNCTIONS[name]


def scenario_defaults(scenario: str) -> dict[str, Any]:
    """The scenario's own argument defaults: an argument given at its default is left out, so
    the run equals the one a spec that omits it compiles to."""
    from holistic.scenarios.registry import SCENARIOS

    try:
        cls = SCENARIOS.get(scenario)
    except KeyError:
        return {}
    params = inspect.signature(cls.__init__).parameters.values()
    return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}


def _models(
    args: dict[str, Value], models_to_run: Sequence[str], deployments: Sequence[ModelDeployment], where: str
) -> list[str]:
    """HELM's rule: a ``model=`` group (or none) is replaced by ``--models-to-run``; a named model
    is kept (and, with ``--models-to-run``, must be among them)."""
    chosen = args.get("model_deployment", args.get("model"))
    if chosen is None or str(chosen) in MODEL_GROUPS or "/" not in str(chosen):
        if chosen is not None and "/" not in str(chosen) and str(chosen) not in MODEL_GROUPS:
            close = did_you_mean(str(chosen), sorted(MODEL_GROUPS))
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise SpecError(f"{where}: model={chosen} is neither a model (org/name) nor one of HELM's groups{hint}")
        if not models_to_run:
            why = "expands to several models" if chosen is not None else "is omitted"
            raise SpecError(f"{where}: --models-to-run must be set (because the `model=` run expander {why})")
        return [resolve_model(m, deployments, "--models-to-run") for m in models_to_run]
    resolved = resolve_model(str(chosen), deployments, where)
    if models_to_run and str(chosen) not in models_to_run and resolved not in models_to_run:
        return []
    return [resolved]


def translate_entry(
    entry: RunEntry,
    deployments: Sequence[ModelDeployment],
    *,
    models_to_run: Sequence[str] = (),
    num_train_trials: int | None = None,
) -> dict[str, Any] | None:
    """One run entry -> one run of a holistic spec (``None``: filtered out by ``--models-to-run``)."""
    where = entry.where
    name, args = parse_description(entry.description, where)
    function = _function(name, args, where)
    run: dict[str, Any] = {"scenario": function.scenario}
    scenario_args: dict[str, Any] = {}
    adaptation: dict[str, Any] = {}
    defaults = scenario_defaults(function.scenario)
    dispatch_key = DISPATCH[name][0] if name in DISPATCH else None
    allowed = [*function.args, *function.adaptation, *function.fixed, *RUN_FIELDS, *ADAPTATION_EXPANDERS]
    allowed += [*MODEL_EXPANDERS, "data_augmentation", *([dispatch_key] if dispatch_key else [])]
    for key, value in args.items():
        if key in function.args:
            target = function.args[key]
            value = _as_default_type(value, defaults.get(target))
            if target not in function.omit_default or defaults.get(target, object()) != value:
                scenario_args[target] = value
        elif key in function.adaptation:
            adaptation[function.adaptation[key]] = value
        elif key in function.fixed:
            if value not in function.fixed[key]:
                accepted = ", ".join(str(v) for v in dict.fromkeys(str(v) for v in function.fixed[key]))
                raise SpecError(
                    f"{where}: {name}:{key}={value}: holistic runs this scenario only with {key}={accepted}"
                )
        elif key in RUN_FIELDS:
            run[RUN_FIELDS[key]] = value
        elif key in ADAPTATION_EXPANDERS:
            adaptation[ADAPTATION_EXPANDERS[key]] = value
        elif key in UNSUPPORTED:
            raise SpecError(
                f"{where}: HELM's {key}= run expander changes the prompts away from HELM's run spec, which "
                "protocol: helm does not allow; write a holistic spec (protocol: holistic) for that"
            )
        elif key not in (*MODEL_EXPANDERS, "data_augmentation", dispatch_key):
            close = did_you_mean(key, allowed)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise SpecError(f"{where}: {name!r} takes no argument {key!r}{hint}")
    models = _models(args, models_to_run, deployments, where)
    if not models:
        return None
    if scenario_args:
        run["args"] = scenario_args
    run["models"] = models
    _augment(run, function, args.get("data_augmentation"), where)
    groups = [g.format(**{**defaults, **scenario_args}) for g in function.groups]
    if entry.groups:
        groups = [*(groups or [function.scenario]), *entry.groups]
    if groups:
        run["groups"] = list(dict.fromkeys(groups))
    if num_train_trials is not None:  # HELM's flag wins over an entry's num_train_trials=
        run.pop("num_train_trials", None)
    adaptation = _departures(function.scenario, adaptation)
    if adaptation:
        run["adaptation"] = adaptation
    return run


def _as_default_type(value: Value, default: Any) -> Any:
    """HELM passes booleans as strings (``use_chain_of_thought=True``): read them as the scenario's bool."""
    if isinstance(default, bool) and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if isinstance(default, str) and isinstance(value, int | float):  # level=1 where the scenario says '1'
        return str(value)
    return value


def _departures(scenario: str, adaptation: dict[str, Any]) -> dict[str, Any]:
    """The adaptation values that differ from the scenario's own (HELM's run spec values): an
    entry's ``method=`` or ``temperature=`` at its default leaves the run as the natural spec has it."""
    from holistic.core.specs import AdapterSpec
    from holistic.scenarios.registry import scenario_info

    try:
        recommended = dict(scenario_info(scenario).default_adapter)
    except KeyError:
        return adaptation
    fields = AdapterSpec.__dataclass_fields__
    out = {}
    for key, value in adaptation.items():
        field = fields.get(key)
        default = recommended.get(key, field.default if field is not None else None)
        if value != default:
            out[key] = value
    return out


def _augment(run: dict[str, Any], function: HelmFunction, value: Value | None, where: str) -> None:
    """``data_augmentation=`` -> the run's perturbations; none means an unperturbed run (HELM's)."""
    if function.core:
        run["metrics"] = list(CORE_METRICS)
    if value is None:
        run["perturbations"] = []
        return
    found = augmentation(str(value))
    if found is None:
        close = did_you_mean(str(value), _known_augmentations())
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise SpecError(f"{where}: data_augmentation={value} is not one holistic runs{hint}")
    perturbations, categories = found
    run["perturbations"] = [dict(p) for p in perturbations]
    if not function.core:
        run["metrics"] = ["accuracy", *categories]


def translate(
    entries: Sequence[RunEntry],
    deployments: Sequence[ModelDeployment],
    *,
    suite: str,
    models_to_run: Sequence[str] = (),
    max_eval_instances: int | None = None,
    num_train_trials: int | None = None,
    description: str = "",
) -> Translated:
    """Every entry -> a holistic run spec document (``protocol: helm``, seed 0 as HELM's)."""
    runs: list[dict[str, Any]] = []
    origins: list[str] = []
    for entry in entries:
        run = translate_entry(
            entry,
            deployments,
            models_to_run=models_to_run,
            num_train_trials=num_train_trials,
        )
        if run is not None:
            runs.append(run)
            origins.append(f"{entry.where}: {entry.description}")
    if not runs:
        raise SpecError("no run entry is left to run (all filtered out by --priority or --models-to-run)")
    first_models = runs[0]["models"]
    document: dict[str, Any] = {
        "suite": suite,
        "description": description or "HELM run entries",
        "seed": 0,
        "protocol": "helm",
        "models": first_models,
        "runs": runs,
    }
    # HELM's flags fill what an entry leaves unset: the spec's defaults, as a hand-written spec has them
    defaults = {"max_eval_instances": max_eval_instances, "num_train_trials": num_train_trials}
    if any(v is not None for v in defaults.values()):
        document["defaults"] = {k: v for k, v in defaults.items() if v is not None}
    return Translated(json.loads(json.dumps(document)), tuple(origins))  # no shared objects: no YAML anchors
