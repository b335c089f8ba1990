"""HELM's names as holistic's: scenarios (with their arguments) and stat names.

Scenarios: a HELM scenario class that a registered scenario declares as its
counterpart (see :func:`holistic.helm.proofs.counterparts`) is imported
under that scenario's name with its argument names, so ``helm-diff`` lines an imported run
up with holistic's own run of the same spec. Any other scenario keeps HELM's class name
(``helm:<ClassName>``) and its arguments as HELM wrote them, and is listed as unmapped.

Stats: a stat name is *known* when holistic's metric registry declares it (category and
direction come from there) or when it is one of HELM's request-bookkeeping stats listed
in ``helm_stats.yaml`` (with its source in crfm-helm 0.5.16), or ``NAME@k`` of a known ``NAME``, or
the rank HELM's ranking metric gives each passage of a query (``ref<i>_rank``). An unknown name stops the
import (exit 2) unless ``--keep-unknown-stats`` is given; it is then imported under
HELM's name with no category, and listed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from holistic.core.registry import RegistrationError
from holistic.helm.proofs import HelmCounterpart, counterparts


def helm_scenarios() -> dict[str, tuple[str, HelmCounterpart]]:
    """HELM scenario class -> the registered scenario that reproduces it (the HELM layer's
    :func:`~holistic.helm.proofs.counterparts`, plugins' declarations included), and the declaration."""
    from holistic.scenarios.registry import SCENARIOS

    registered = SCENARIOS.load_all()  # a plugin's module declares its counterpart when imported
    found: dict[str, tuple[str, HelmCounterpart]] = {}
    for name, counterpart in sorted(counterparts().items()):
        if name not in registered:
            continue
        if counterpart.class_name in found:
            raise RegistrationError(
                f"scenarios {found[counterpart.class_name][0]!r} and {name!r} both declare "
                f"HELM's {counterpart.class_name} as their counterpart"
            )
        found[counterpart.class_name] = (name, counterpart)
    return found


def scenario_name_and_args(class_name: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any], bool]:
    """holistic's scenario name and arguments for HELM's scenario spec, and whether it mapped."""
    known = helm_scenarios().get(class_name)
    if known is None:
        return f"helm:{class_name.rsplit('.', 1)[-1]}", dict(args), False
    name, found = known
    out: dict[str, Any] = {}
    mapped = True
    for key, value in args.items():
        if key in found.args:
            out[found.args[key]] = value
        elif key in found.defaults_dropped and found.defaults_dropped[key] == value:
            continue
        else:  # an argument holistic's scenario does not take: keep it, under HELM's name
            out[key] = value
            mapped = False
    return name, out, mapped


@dataclass(frozen=True)
class StatInfo:
    category: str | None
    higher_is_better: bool | None


@cache
def _helm_bookkeeping() -> dict[str, StatInfo]:
    text = resources.files("holistic.helm_import").joinpath("helm_stats.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return {
        str(name): StatInfo(entry.get("category"), entry.get("higher_is_better"))
        for name, entry in (data.get("stats") or {}).items()
    }


_PASSAGE_RANK = re.compile(r"ref\d+_rank")
"""HELM's ranking metric's per-passage stat (crfm-helm 0.5.16, metrics/ranking_metrics.py): the rank
the model gave reference ``i`` of a query; bookkeeping, in no category."""


def stat_info(name: str) -> StatInfo | None:
    """Category and direction of a HELM stat name, ``None`` when holistic does not know it."""
    from holistic.metrics.registry import all_infos

    infos = all_infos()
    info = infos.get(name)
    if info is None and "@" in name:  # HELM's best-of-k variant of a known value, e.g. exact_match@5
        base, _, k = name.rpartition("@")
        info = infos.get(base) if k.isdigit() else None
    if info is not None:
        return StatInfo(info.category, info.higher_is_better)
    if _PASSAGE_RANK.fullmatch(name):
        return StatInfo(None, None)
    return _helm_bookkeeping().get(name)
