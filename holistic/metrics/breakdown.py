"""Statistics per value of an instance attribute (BLiMP paradigm, bAbI task, BOLD group...).

A scenario names metadata keys in ``ScenarioInfo.breakdowns``; every per-instance
value of an instance whose metadata has such a key is also counted under the
sub-split ``<key>=<value>`` (e.g. ``paradigm=wh_island``). The per-instance table
keeps one row per value; only ``stats.parquet`` gains the breakdown rows, aggregated
(with bootstrap intervals) exactly like the overall ones, so the overall row
(sub-split null) is unchanged and each group's row reads on its own.
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
