"""An instance's references as the ``references`` column stores them, and back.

The column is a list of ``struct<output, tags, relevance, first_stage_rank>`` (see
:data:`~holistic.results.schemas.REFERENCE_TYPE`). Runs written before ``relevance`` and
``first_stage_rank`` were fields carried them as the tags ``relevance=<grade>`` and
``first_stage_rank=<n>``; :func:`reference_from_row` reads those into the fields, so an
old run reads as a new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from holistic.core.types import Reference

_LEGACY_FIELDS = {"relevance=": "relevance", "first_stage_rank=": "first_stage_rank"}
"""Tag prefix -> field, for runs that stored the ranking judgements as tags."""


def reference_row(reference: Reference) -> dict[str, Any]:
    """One element of the ``references`` column."""
    return {
        "output": reference.output,
        "tags": list(reference.tags),
        "relevance": reference.relevance,
        "first_stage_rank": reference.first_stage_rank,
    }


def reference_from_row(row: Mapping[str, Any]) -> Reference:
    """The :class:`Reference` of one element of the ``references`` column (any layout version)."""
    tags: list[str] = []
    fields: dict[str, int | None] = {
        "relevance": row.get("relevance"),
        "first_stage_rank": row.get("first_stage_rank"),
    }
    for tag in row.get("tags") or ():
        prefix = next((p for p in _LEGACY_FIELDS if tag.startswith(p) and tag[len(p) :].lstrip("-").isdigit()), None)
        if prefix is None:
            tags.append(tag)
        elif fields[_LEGACY_FIELDS[prefix]] is None:
            fields[_LEGACY_FIELDS[prefix]] = int(tag[len(prefix) :])
    return Reference(str(row["output"]), tuple(tags), **fields)


def references_from_rows(rows: Iterable[Mapping[str, Any]] | None) -> list[Reference]:
    """Every reference of one ``references`` cell, in order (a null cell has none)."""
    return [reference_from_row(r) for r in rows or ()]
