"""Statistics per value of an instance attribute (BLiMP paradigm, bAbI task, BOLD group...).

A scenario names metadata keys in ``ScenarioInfo.breakdowns``; every per-instance
value of an instance whose metadata has such a key is also counted under the
sub-split ``<key>=<value>`` (e.g. ``paradigm=wh_island``). The per-instance table
keeps one row per value; only ``stats.parquet`` gains the breakdown rows, aggregated
(with bootstrap intervals) exactly like the overall ones, so the overall row
(sub-split null) is unchanged and each group's row reads on its own.

An instance's own sub-split (``Instance.sub_split``: a ``file`` run's ``sub_split``
field, a CivilComments identity) names the group its values are computed in; as in
HELM, the run's overall row (sub-split null) still counts every instance
(:func:`overall_values`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from holistic.core.types import Instance, PerInstanceStat

SEPARATOR = "="


def breakdown_sub_split(key: str, value: object) -> str:
    """The sub-split name of one group: ``key=value``."""
    return f"{key}{SEPARATOR}{value}"


def breakdown_values(
    per_instance: Sequence[PerInstanceStat], instances: Sequence[Instance], keys: Sequence[str]
) -> list[PerInstanceStat]:
    """Copies of ``per_instance`` renamed into each instance's groups for ``keys``.

    Values that already carry a sub-split (an instance's own, or a metric's) are not
    broken down again; instances without the key are left out of that breakdown.
    """
    if not keys:
        return []
    metadata = {inst.id: inst.metadata for inst in instances}
    out: list[PerInstanceStat] = []
    for stat in per_instance:
        if stat.name.sub_split is not None:
            continue
        meta = metadata.get(stat.instance_id, {})
        for key in keys:
            if key in meta and meta[key] is not None:
                name = replace(stat.name, sub_split=breakdown_sub_split(key, meta[key]))
                out.append(replace(stat, name=name))
    return out


def overall_values(per_instance: Sequence[PerInstanceStat], instances: Sequence[Instance]) -> list[PerInstanceStat]:
    """Copies, without the sub-split, of the values that carry their instance's own sub-split.

    Aggregated together with ``per_instance``, they make the overall row (sub-split
    null) count every instance, those in a group included, beside each group's row.
    """
    own = {inst.id: inst.sub_split for inst in instances if inst.sub_split is not None}
    if not own:
        return []
    return [
        replace(stat, name=replace(stat.name, sub_split=None))
        for stat in per_instance
        if stat.name.sub_split is not None and own.get(stat.instance_id) == stat.name.sub_split
    ]
