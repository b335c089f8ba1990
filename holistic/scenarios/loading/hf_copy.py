"""Reading a dataset's Hugging Face Hub copy in its Parquet form, as a second data layout.

A core scenario reads its authors' files first; when they are absent it falls back
to the Hub copy (the repo's own Parquet files, or those the Hub serves under
``refs/convert/parquet``). Those files live under ``<scenario folder>/hf/<path in
the Hub repo>`` in the mirror and the cache, so one mirror can hold both copies.

Revisions: every scenario with a Hub layout takes an ``hf_revision`` arg that goes
into the download URL (see
:class:`~holistic.scenarios.loading.hub_fallback.HubFallbackScenario`). Its default,
:data:`HF_REVISION_UNPINNED` (``main``), is **not** pinned: the Hub repo may change
under it. Pin a commit hash of the Hub repo for reproducible runs. No sha256 is declared for these downloads; the first
download's sum is recorded in the cache's ``SHA256SUMS`` and later copies must
match it (see :mod:`holistic.scenarios.loading.sources`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any
from urllib.parse import quote

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.scenarios.loading.common import hf_file
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download

HF_REVISION_UNPINNED = "main"
"""Default Hub revision for repos whose own files are Parquet: a branch, not a pin."""

HF_PARQUET_BRANCH = "refs/convert/parquet"
"""Default Hub revision for repos whose Parquet form is the Hub's conversion: a branch, not a pin."""

HF_FOLDER = "hf"
"""Sub-folder of a scenario's mirror/cache folder holding the Hub copy."""


class AuthorsOrHub(IntEnum):
    """The two layouts of a scenario that reads its authors' files or else their Hub copy, by
    their index in ``DataNeeds.layouts`` (compare ``ResolvedData.layout`` with them)."""

    AUTHORS = 0
    """The authors' files (the first layout, preferred when present)."""
    HUB_COPY = 1
    """The Hugging Face Parquet copy under ``hf/`` (see :func:`hf_layout`)."""


HF_REVISION_DOC = (
    "Hugging Face Hub revision of the dataset's Parquet copy (used only when the authors' files are absent). "
    "The default is a branch, not a pin: pin a commit hash for reproducible runs."
)


def check_revision(revision: Any) -> str:
    """``revision`` if it is a usable Hub revision string, else a ValueError saying why."""
    if not isinstance(revision, str) or not revision.strip() or any(c in revision for c in " \t\n?#"):
        raise ValueError(f"hf_revision must be a Hub branch, tag or commit hash, got {revision!r}")
    return revision


def hf_data_file(repo: str, revision: str, repo_path: str) -> DataFile:
    """The Hub file ``repo_path`` of dataset ``repo``, kept locally as ``hf/<repo_path>``."""
    url = hf_file(repo, quote(revision, safe=""), repo_path)
    return DataFile(f"{HF_FOLDER}/{repo_path}", downloads=(Download(url),))


def hf_layout(repo: str, revision: str, repo_paths: Sequence[str]) -> tuple[DataFile, ...]:
    """A layout made of the Hub files ``repo_paths`` (see :func:`hf_data_file`)."""
    return tuple(hf_data_file(repo, revision, p) for p in repo_paths)


def hf_hint(repo: str) -> str:
    return f"the Hugging Face copy https://huggingface.co/datasets/{repo} (Parquet files, kept under {HF_FOLDER}/)"


@dataclass(frozen=True)
class HubCopy:
    """The Hub copy a core scenario falls back on: its repo and its default ``hf_revision``,
    and what the scenario declares from them (argument schema, layout, hint)."""

    repo: str
    default_revision: str = HF_REVISION_UNPINNED

    def revision_arg(self) -> str:
        """The ``hf_revision`` argument of a scenario with this copy (a dataclass field whose
        default is :attr:`default_revision`)."""
        return arg(self.default_revision, description=HF_REVISION_DOC, minLength=1)

    def layout(self, revision: str, repo_paths: Sequence[str]) -> tuple[DataFile, ...]:
        """The Hub files ``repo_paths`` at ``revision`` (see :func:`hf_layout`)."""
        return hf_layout(self.repo, revision, repo_paths)

    @property
    def hint(self) -> str:
        return hf_hint(self.repo)

    def after(self, authors: DataNeeds, revision: str, repo_paths: Sequence[str]) -> DataNeeds:
        """``authors``' layouts, then this copy's (:attr:`AuthorsOrHub.HUB_COPY` when the
        authors' files are one layout), with both hints."""
        layouts = (*authors.layouts, self.layout(revision, repo_paths))
        return DataNeeds(authors.scenario, layouts, hint=f"{authors.hint}; {self.hint}")


def read_parquet_rows(
    path: Path,
    columns: Sequence[str],
    *,
    optional: Sequence[str] = (),
    only: tuple[str, Collection[str]] | None = None,
) -> list[dict[str, Any]]:
    """Rows of a Parquet file as dicts holding ``columns`` (required) and ``optional`` ones (when present).

    ``only=(column, values)`` keeps just the rows whose ``column`` is in ``values``
    (filtered while reading, so a large file is not loaded whole). A missing
    required column is a :class:`DataSourceError` naming the file and the columns
    it has.
    """
    import pyarrow.parquet as pq

    schema_names = column_names(path)
    missing = [c for c in columns if c not in schema_names]
    if missing:
        raise DataSourceError(
            f"{path}: missing column(s) {', '.join(repr(c) for c in missing)}; columns present: {', '.join(schema_names)}"
        )
    wanted = list(columns) + [c for c in optional if c in schema_names and c not in columns]
    if only is None:
        table = pq.read_table(path, columns=wanted)
    else:
        column, values = only
        if not values:
            return []
        table = pq.read_table(path, columns=wanted, filters=[(column, "in", sorted(values))])
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def row_where(path: Path, index: int) -> str:
    """``file:row N`` (1-based) for error messages about a Parquet row."""
    return f"{path}: row {index + 1}"


def class_label_names(path: Path, column: str) -> list[str]:
    """The names of a ``ClassLabel`` column, from the features the Hub writes into a Parquet file's metadata."""
    import json

    metadata = _schema(path).metadata or {}
    try:
        features = json.loads(metadata[b"huggingface"])["info"]["features"]
        names = features[column]["names"]
    except (KeyError, TypeError, ValueError):
        raise DataSourceError(
            f"{path}: no class names for column {column!r} in the file's Hugging Face metadata "
            "(expected a ClassLabel feature under schema metadata 'huggingface')"
        ) from None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise DataSourceError(f"{path}: class names for column {column!r} must be a list of strings, got {names!r}")
    return names


def column_names(path: Path) -> list[str]:
    """The columns of a Parquet file, in file order."""
    return list(_schema(path).names)


def _schema(path: Path) -> Any:
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise DataSourceError(f"{path}: cannot read as Parquet: {exc}") from None
