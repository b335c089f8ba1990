"""Small helpers shared by the scenarios that read files: pins, URLs, references, ids."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlparse

from holistic.core.hashing import stable_seed
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, Instance, Reference
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData, default_data_root, resolve

_CHECKSUMS = tuple(
    Path(__file__).parent.parent / "data" / name
    for name in ("checksums.json", "checksums_targeted.json", "checksums_capabilities.json")
)


@cache
def _pins() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = {}
    for path in _CHECKSUMS:
        with path.open(encoding="utf-8") as fh:
            for folder, files in json.load(fh).items():
                data.setdefault(folder, {}).update(files)
    return data


def pinned_sha256(scenario: str, path: str) -> str | None:
    """The sha256 recorded for ``<scenario>/<path>`` (the authors' file at a pinned commit), if any."""
    return _pins().get(scenario, {}).get(path)


def github_raw(repo: str, commit: str, path: str) -> str:
    """A raw-file URL pinned to a full commit hash."""
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def hf_file(repo: str, revision: str, path: str) -> str:
    """A Hugging Face Hub dataset file URL pinned to a revision."""
    return f"https://huggingface.co/datasets/{repo}/resolve/{revision}/{path}"


def choice_references(choices: Sequence[str], correct: int | Sequence[int]) -> tuple[Reference, ...]:
    """References for choices in order; the ``correct`` index (or indices) carry the correct tag."""
    indices = {correct} if isinstance(correct, int) else set(correct)
    return tuple(Reference(text, (CORRECT_TAG,) if i in indices else ()) for i, text in enumerate(choices))


def hold_out(ids: Sequence[str], count: int, purpose: str) -> set[str]:
    """A deterministic subset of ``count`` ids (lowest seeded hash), independent of input order."""
    ranked = sorted(ids, key=lambda i: (stable_seed(purpose, i), i))
    return set(ranked[:count])


def with_train_pool(instances: Sequence[Instance], count: int, purpose: str) -> list[Instance]:
    """``instances`` in order, the :func:`hold_out` set of ``count`` of them moved to ``train``.

    For datasets without a usable training split: the in-context example pool is a
    fixed seeded subset, and the other instances keep their split.
    """
    pool = hold_out([i.id for i in instances], count, purpose)
    return [replace(i, split=TRAIN_SPLIT) if i.id in pool else i for i in instances]


class FileScenario(BaseScenario):
    """Base for scenarios that read the authors' files through :mod:`holistic.scenarios.loading.sources`.

    Subclasses implement ``data_needs()`` and ``load(data)``.
    """

    num_instances: ClassVar[int | None] = None
    """Roughly how many instances the full dataset has (for ``--plan``), when it does not depend on args."""

    samples_prompts: ClassVar[bool] = False
    """Its files are small: when they are on this machine, ``--plan`` builds the prompts of a
    sample of the real instances (:attr:`PlanFacts.samples_prompts`)."""

    notes_missing_files: ClassVar[bool] = False
    """``--plan`` says when this scenario's files are not under the data root (set it for data
    that is not pinned by sha256, or that only a data root can supply)."""

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        """:attr:`num_instances`, and with :attr:`notes_missing_files` the :func:`missing_files_note`
        of these arguments' files."""
        note = missing_files_note(self.data_needs(), data_root) if self.notes_missing_files else None
        notes = (note,) if note else ()
        return PlanFacts(num_instances=self.num_instances, notes=notes, samples_prompts=self.samples_prompts)

    def data_needs(self) -> DataNeeds:
        raise NotImplementedError

    def load(self, data: ResolvedData) -> list[Instance]:
        raise NotImplementedError

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        instances = self.load(resolve(self.data_needs(), ctx))
        _check_unique_ids(instances, type(self).__name__)
        return instances


class SplitFilesScenario(FileScenario):
    """A dataset shipped as one file per split, every file read the same way.

    Subclasses set ``split_files`` ((file name, split) pairs, in load order) and
    ``hint``, and implement ``download(name)`` and ``read(path, split)``.
    """

    split_files: ClassVar[tuple[tuple[str, str], ...]]
    hint: ClassVar[str]

    def download(self, name: str) -> Download:
        raise NotImplementedError

    def read(self, path: Path, split: str) -> list[Instance]:
        raise NotImplementedError

    def data_needs(self) -> DataNeeds:
        files = tuple(DataFile(name, downloads=(self.download(name),)) for name, _ in self.split_files)
        return DataNeeds(self.info.name, layouts=(files,), hint=self.hint)

    def load(self, data: ResolvedData) -> list[Instance]:
        return [inst for name, split in self.split_files for inst in self.read(data[name], split)]


def _check_unique_ids(instances: Sequence[Instance], owner: str) -> None:
    seen: set[str] = set()
    for inst in instances:
        if inst.id in seen:
            raise ValueError(f"{owner} produced the instance id {inst.id!r} twice")
        seen.add(inst.id)


def check_choice(value: Any, allowed: Sequence[str], name: str) -> str:
    """``value`` if it is one of ``allowed``, else a ValueError naming the nearest valid value."""
    from holistic.core.errors import did_you_mean

    if value in allowed:
        return str(value)
    near = did_you_mean(str(value), allowed)
    hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else f"; valid: {', '.join(allowed)}"
    raise ValueError(f"unknown {name} {value!r}{hint}")


def check_count(name: str, value: Any, minimum: int) -> int:
    """``value`` if it is an integer (not a bool) of at least ``minimum``, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def missing_files_note(needs: DataNeeds, data_root: Path | None) -> str | None:
    """``--plan`` note when no layout of ``needs`` is complete under the data root (else ``$HOLISTIC_DATA_ROOT``).

    Says where the files would be fetched from and whether they are pinned by sha256.
    ``None`` when there is no data root or the files are there.
    """
    root = data_root if data_root is not None else default_data_root()
    if root is None:
        return None
    base = Path(root) / needs.scenario

    def present(item: DataFile) -> bool:
        return (base / item.path).is_dir() if item.is_dir else (base / item.path).is_file()

    if any(all(present(item) for item in layout) for layout in needs.layouts):
        return None
    wanted = needs.layouts[0]
    hosts = sorted({urlparse(d.url).netloc for item in wanted for d in item.downloads})
    pinned = all(item.sha256 or all(d.sha256 for d in item.downloads) for item in wanted)
    where = f"fetched from {', '.join(hosts)}" if hosts else "needed"
    check = "" if pinned else " (not pinned by sha256)"
    return (
        f"{needs.scenario}: {', '.join(item.path for item in wanted)} not under {base}; "
        f"they will be {where}{check}, or the run fails offline"
    )
