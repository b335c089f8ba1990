"""Datasets shipped as one file per part (BLiMP paradigms, BBQ categories): use what is there.

A user's mirror may hold only some parts. :func:`collect_parts` loads every part
file present in the first place that has any (mirror, then cache), so a folder with
all 67 BLiMP paradigms gives all 67 and one with 13 gives 13; only when no place has
any does it fall back to fetching every wanted part (see
:mod:`holistic.scenarios.loading.sources`). :func:`parts_report` says, without loading
anything, which known parts are present and which are missing (for ``--plan``).
Files with a pinned sha256 are verified wherever they are found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.scenarios.loading.common import github_raw, pinned_sha256
from holistic.scenarios.loading.sources import (
    DataFile,
    DataNeeds,
    Download,
    default_cache_dir,
    default_data_root,
    file_sha256,
    resolve,
)


def github_file(folder: str, path: str, repo: str, commit: str, source_path: str) -> DataFile:
    """A data file fetched from ``repo`` at a pinned commit, verified by its recorded sha256."""
    return DataFile(
        path, downloads=(Download(github_raw(repo, commit, source_path)),), sha256=pinned_sha256(folder, path)
    )


def places(ctx: ScenarioContext, folder: str) -> list[Path]:
    """Where a scenario folder may be, in the order :mod:`holistic.scenarios.loading.sources` looks."""
    out = []
    root = ctx.data_root if ctx.data_root is not None else default_data_root()
    if root is not None:
        out.append(Path(root) / folder)
    out.append((Path(ctx.cache_dir) if ctx.cache_dir is not None else default_cache_dir()) / folder)
    return out


@dataclass(frozen=True)
class Parts:
    """The part files found for one dataset."""

    paths: dict[str, Path]
    """Part name -> file, in name order."""
    missing: tuple[str, ...]
    """Known part names that were wanted but not found."""


def collect_parts(
    ctx: ScenarioContext,
    needs: DataNeeds,
    wanted: Sequence[str],
    *,
    suffix: str,
    accept_unknown: bool = True,
) -> Parts:
    """Every part file present (see the module docstring).

    ``needs`` declares one layout with a :class:`DataFile` per known part (named
    ``<part><suffix>``); ``wanted`` are the part names asked for. With
    ``accept_unknown`` (no filter in force) other ``*<suffix>`` files in the folder
    are loaded too: parts this list does not know yet.
    """
    known = {item.path: item for item in needs.layouts[0]}
    for base in places(ctx, needs.scenario):
        if not base.is_dir():
            continue
        found: dict[str, Path] = {}
        for path in sorted(base.glob(f"*{suffix}")):
            name = path.name[: -len(suffix)]
            if name in wanted or (accept_unknown and path.name not in known):
                found[name] = path
        if found:
            for name, path in found.items():
                item = known.get(name + suffix)
                if item is not None and item.sha256 is not None and file_sha256(path) != item.sha256:
                    raise DataSourceError(
                        f"checksum mismatch for {needs.scenario}/{path.name}: {path} has sha256 "
                        f"{file_sha256(path)}, expected {item.sha256}. The file is corrupt or a different version."
                    )
            return Parts(found, tuple(n for n in wanted if n not in found))
    subset = DataNeeds(
        needs.scenario, layouts=(tuple(known[n + suffix] for n in wanted if n + suffix in known),), hint=needs.hint
    )
    resolved = resolve(subset, ctx)
    return Parts({p[: -len(suffix)]: resolved[p] for p in sorted(resolved.paths)}, ())


def parts_report(data_root: Path | None, folder: str, names: Sequence[str], suffix: str, what: str) -> str | None:
    """``--plan`` note: how many of ``names`` are present under the data root, and which are missing.

    ``what`` is the plural noun of a part (``paradigms``, ``categories``). Other
    ``*<suffix>`` files there (parts this list does not know) are named too.
    """
    root = data_root if data_root is not None else default_data_root()
    if root is None:
        return None
    base = Path(root) / folder
    present = [n for n in names if (base / f"{n}{suffix}").is_file()]
    missing = [n for n in names if n not in present]
    if not missing:
        return None
    known = {f"{n}{suffix}" for n in names}
    others = (
        sorted(p.name[: -len(suffix)] for p in base.glob(f"*{suffix}") if p.name not in known) if base.is_dir() else []
    )
    if not present and not others:
        return (
            f"{folder}: none of the {len(names)} {what} under {base}; they will be fetched (or the run fails offline)"
        )
    extra = f" plus {len(others)} other file(s) ({', '.join(others[:5])})" if others else ""
    shown = ", ".join(missing[:12]) + (f" (and {len(missing) - 12} more)" if len(missing) > 12 else "")
    return (
        f"{folder}: {len(present)} of {len(names)} {what} present under {base}{extra}; runs use those; missing: {shown}"
    )


def user_copy_note(data_root: Path | None, folder: str, alternatives: Sequence[str], what: str) -> str | None:
    """``--plan`` note for data only the user can supply (a licence forbids shipping it): ``None``
    when one of ``alternatives`` (paths under ``folder``, files or folders) exists in the data
    root or the cache, else where it was looked for."""
    roots = []
    root = data_root if data_root is not None else default_data_root()
    if root is not None:
        roots.append(Path(root) / folder)
    roots.append(default_cache_dir() / folder)
    if any((base / name).exists() for base in roots for name in alternatives):
        return None
    where = " or ".join(str(b) for b in roots)
    return (
        f"{folder}: {what} not found ({' or '.join(alternatives)} under {where}); these runs will fail until you add it"
    )
