"""``include:`` — merge shared run-spec files under the file that names them.

Rules (also in the run-spec schema's description):

- ``include`` is a path or a list of paths, relative to the including file.
- Included files are merged in the order given (a later one wins over an earlier
  one), and the including file is merged over all of them: *the including file wins*.
- Mappings merge key by key, recursively (so ``defaults.adaptation`` can be
  extended one field at a time); any other value is replaced whole — except the
  top-level ``runs`` list, which is concatenated (included runs first), so a suite
  can be assembled from group files.
- Included files may include others; a cycle is an error naming the chain.
- A file reached twice (a diamond: two includes that share a base) is merged once,
  the first time (files are told apart by their real path); at most
  :data:`MAX_INCLUDE_FILES` files are read for one spec.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import SpecError
from holistic.spec.source import KEY, DocPath, Locations, Source, load_source

INCLUDE_KEY = "include"
MAX_INCLUDE_FILES = 100
"""Most files (the spec and everything it includes) read for one run spec."""


@dataclass(frozen=True)
class MergedSpec:
    """A run spec with its includes merged in."""

    data: dict[str, Any]
    locations: Locations
    """Where each merged value was written (possibly in an included file)."""
    sources: tuple[Source, ...]
    """Every file read: the top file first, then included files in the order read."""


def load_with_includes(path: Path, display: str | None = None) -> MergedSpec:
    """Load ``path`` and everything it includes (see the module docstring for the rules)."""
    sources: list[Source] = []
    data, locations = _load(path.resolve(), display if display is not None else str(path), (), sources)
    return MergedSpec(data=data, locations=locations, sources=tuple(sources))


def _load(
    resolved: Path, display: str, chain: tuple[Path, ...], sources: list[Source]
) -> tuple[dict[str, Any], Locations]:
    source = load_source(resolved, display)
    sources.append(source)
    if source.data is None:
        raise SpecError("the file is empty; a run spec is a mapping with at least `suite` and `runs`", file=display)
    if not isinstance(source.data, dict):
        raise source.locations.error((), "a run spec must be a mapping (keys such as `suite`, `models`, `runs`)")
    own: dict[str, Any] = dict(source.data)
    includes = own.pop(INCLUDE_KEY, None)
    if includes is None:
        return own, source.locations

    entries: list[tuple[str, DocPath]]
    if isinstance(includes, str):
        entries = [(includes, (INCLUDE_KEY,))]
    elif isinstance(includes, list) and all(isinstance(x, str) for x in includes):
        entries = [(x, (INCLUDE_KEY, i)) for i, x in enumerate(includes)]
    else:
        raise source.locations.error((INCLUDE_KEY,), "expected a file path or a list of file paths")

    base: dict[str, Any] = {}
    base_locs = Locations(display)
    for name, where in entries:
        target = (resolved.parent / name).resolve()
        shown = os.path.normpath(os.path.join(os.path.dirname(display), name))
        if target == resolved or target in chain:
            cycle = " -> ".join([*(p.name for p in (*chain, resolved)), target.name])
            raise source.locations.error(where, f"include cycle: {cycle}")
        if not target.is_file():
            raise source.locations.error(where, f"included file not found: {shown}")
        if any(s.path == target for s in sources):
            continue  # already merged (a diamond): once is enough
        if len(sources) >= MAX_INCLUDE_FILES:
            raise source.locations.error(
                where,
                f"more than {MAX_INCLUDE_FILES} files included; a run spec "
                "needs far fewer (check for include chains that grow)",
            )
        inc_data, inc_locs = _load(target, shown, (*chain, resolved), sources)
        base = merge_into(base, base_locs, inc_data, inc_locs, top_level=True)
    return merge_into(base, base_locs, own, source.locations, top_level=True), base_locs


def merge_into(
    base: dict[str, Any],
    base_locs: Locations,
    over: dict[str, Any],
    over_locs: Locations,
    *,
    top_level: bool = False,
    path: DocPath = (),
) -> dict[str, Any]:
    """Merge ``over`` over ``base`` (``over`` wins); ``base_locs`` is updated to match."""
    out = dict(base)
    for key, value in over.items():
        here = (*path, key)
        old = out.get(key)
        if top_level and key == "runs" and isinstance(old, list) and isinstance(value, list):
            offset = len(old)
            out[key] = [*old, *value]
            for i in range(len(value)):
                base_locs.update(over_locs.rebased((*here, i), (*here, offset + i)))
            base_locs.update(over_locs.rebased((KEY, key), (KEY, key)))
        elif isinstance(old, dict) and isinstance(value, dict):
            out[key] = merge_into(old, base_locs, value, over_locs, path=here)
        else:
            out[key] = value
            base_locs.update(over_locs.rebased(here, here))
            base_locs.update(over_locs.rebased((*path, KEY, key), (*path, KEY, key)))
    return out
