"""Comparing a run imported from HELM (``helm-import``) with holistic's run of the same spec.

Two tools name the same instance differently: HELM's MMLU loader numbers instances in
load order (``id0``, ``id1``...), holistic names them ``<subject>-<split>-<row>``. When the
two runs' instance ids do not already coincide, instances are paired by *content* — their
split, perturbation, input text and references — which is what makes them the same
instance; an id is used only where its content is unique on its side. The diff then
pairs by holistic's id and says how many were paired that way.

Comparability across tools rests on what both record: the prompt of every request
(byte for byte; it holds the in-context examples) and the decoding parameters. The
adaptation fields are named differently by each tool, so they are not compared.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from holistic.core.hashing import canonical_json
from holistic.diff.align import Alignment, SideRun
from holistic.results.schemas import INSTANCES_TABLE

_SHOWN = 60
"""Characters of each prompt shown around the first difference."""


@dataclass(frozen=True)
class Pairing:
    """Instance id renames applied to each side before pairing (empty: ids are used as they are)."""

    old: dict[str, str] = field(default_factory=dict)
    new: dict[str, str] = field(default_factory=dict)
    note: str = ""


def _norm(text: str) -> str:
    """Text as compared across tools: whitespace runs made one space, case folded."""
    return " ".join(str(text).split()).casefold()


def _contents(run: SideRun) -> dict[str, tuple[str, str]]:
    """instance id -> (normalised input, split and references), for the run's evaluated
    instances whose content is unique."""
    if not run.reader.has_table(INSTANCES_TABLE):
        return {}
    table = run.reader.table(INSTANCES_TABLE, ["instance_id", "role", "split", "perturbation", "input", "references"])
    keys: dict[str, tuple[str, str]] = {}
    for row in table.to_pylist():
        if row["role"] != "eval" or row["perturbation"] is not None:
            continue
        refs = [[_norm(r["output"]), "correct" in (r["tags"] or [])] for r in row["references"] or []]
        keys[row["instance_id"]] = (_norm(row["input"]), canonical_json([row["split"], refs]))
    counts = Counter(keys.values())
    return {i: k for i, k in keys.items() if counts[k] == 1}


def match_by_content(old: dict[str, tuple[str, str]], new: dict[str, tuple[str, str]]) -> dict[str, str]:
    """old id -> new id of the same content: the same normalised input and references; failing
    that, the same references and an input that holds the other's (one tool's prompt template
    around the other's question: lm-eval records the prompt it built), where only one fits."""
    by_key = {k: i for i, k in new.items()}
    pairs = {o: by_key[k] for o, k in old.items() if k in by_key}
    taken = set(pairs.values())
    by_refs: dict[str, list[str]] = {}
    for i, (_, refs) in new.items():
        if i not in taken:
            by_refs.setdefault(refs, []).append(i)
    for o, (text, refs) in old.items():
        if o in pairs or not text:
            continue
        fits = [
            n
            for n in by_refs.get(refs, [])
            if n not in taken and new[n][0] and (text in new[n][0] or new[n][0] in text)
        ]
        if len(fits) == 1:
            pairs[o] = fits[0]
            taken.add(fits[0])
    return pairs


def instance_pairing(old: SideRun, new: SideRun) -> Pairing:
    """Rename the imported side's ids to the other side's where they name the same content."""
    old_keys, new_keys = _contents(old), _contents(new)
    if not old_keys or not new_keys or set(old_keys) == set(new_keys):
        return Pairing()
    shared_ids = set(old_keys) & set(new_keys)
    if (
        shared_ids
        and all(old_keys[i] == new_keys[i] for i in shared_ids)
        and len(shared_ids) >= min(len(old_keys), len(new_keys))
    ):
        return Pairing()  # the ids already name the same instances
    matched = match_by_content(old_keys, new_keys)
    if old.imported:
        renamed, side = {o: n for o, n in matched.items() if o != n}, "old"
        pairing = Pairing(old=renamed)
    else:
        renamed, side = {n: o for o, n in matched.items() if o != n}, "new"
        pairing = Pairing(new=renamed)
    if not renamed:
        return Pairing()
    example = next(iter(sorted(renamed.items())))
    unmatched_old = sorted(set(old_keys) - set(matched))
    unmatched_new = sorted(set(new_keys) - set(matched.values()))
    unmatched = "".join(
        f"; {len(ids)} of the {name} run's matched none ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''})"
        for name, ids in (("old", unmatched_old), ("new", unmatched_new))
        if ids
    )
    return Pairing(
        old=pairing.old,
        new=pairing.new,
        note=(
            f"{len(renamed)} instances of the imported ({side}) run paired by content (input and references), "
            f"its ids differing from the other run's (e.g. {example[0]} = {example[1]}){unmatched}"
        ),
    )


def pair_across_tools(alignment: Alignment) -> Alignment:
    """``alignment`` with its unpaired runs paired across tools (:func:`_pairs_across_tools`)."""
    removed, added = list(alignment.removed), list(alignment.added)
    if not removed or not added or not any(r.imported for r in (*removed, *added)):
        return alignment
    across = _pairs_across_tools(removed, added)
    paired = {r.run_id for pair in across for r in pair}
    return Alignment(
        pairs=(*alignment.pairs, *across),
        removed=tuple(r for r in removed if r.run_id not in paired),
        added=tuple(r for r in added if r.run_id not in paired),
    )


def _pairs_across_tools(removed: list[SideRun], added: list[SideRun]) -> list[tuple[SideRun, SideRun]]:
    """Runs of another harness (lm-eval, inspect) name their task, not holistic's scenario, so
    their key never equals a native run's: an unpaired run is paired with the unpaired run of the
    other side with the same model whose instances share the most content with it (one side
    imported, at least one instance in common)."""
    pairs: list[tuple[SideRun, SideRun]] = []
    taken: set[str] = set()
    for run in removed:
        best: tuple[int, SideRun] | None = None
        for other in added:
            if other.run_id in taken or other.model != run.model or not (run.imported or other.imported):
                continue
            shared = len(match_by_content(_contents(run), _contents(other)))
            if shared and (best is None or shared > best[0]):
                best = (shared, other)
        if best is not None:
            taken.add(best[1].run_id)
            pairs.append((run, best[1]))
    return pairs


def first_difference(old: tuple[Any, ...], new: tuple[Any, ...]) -> str:
    """Where the first requests' prompts of one instance part ways, for a person to read."""
    old_trial, old_index, old_id, old_text = old
    _, _, new_id, new_text = new
    name = old_id if old_id == new_id else f"{old_id} / {new_id}"
    if old_text == new_text:
        return f"first differing prompt: instance {name}: a later request than the first"
    at = next((i for i, (a, b) in enumerate(zip(old_text, new_text, strict=False)) if a != b), None)
    if at is None:
        at = min(len(old_text), len(new_text))
    start = max(0, at - _SHOWN // 2)

    def around(text: str) -> str:
        part = text[start : at + _SHOWN // 2]
        return ("…" if start else "") + part + ("…" if at + _SHOWN // 2 < len(text) else "")

    return (
        f"first differing prompt: instance {name} (trial {old_trial}, request {old_index}) at character {at}: "
        f"old {around(old_text)!r}, new {around(new_text)!r}"
    )


def decoding_difference(old: list[str], new: list[str]) -> str:
    """The decoding fields whose values differ between the two runs' requests."""
    import json

    def values(rows: list[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for row in rows:
            for key, value in json.loads(row).items():
                out.setdefault(key, set()).add(canonical_json(value))
        return out

    a, b = values(old), values(new)
    changed = [
        f"{k} {'/'.join(sorted(a.get(k, set())))} -> {'/'.join(sorted(b.get(k, set())))}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    return "; ".join(changed) or "the combinations of decoding fields differ"


@dataclass(frozen=True)
class Unpaired:
    metrics: frozenset[str] = frozenset()
    note: str = ""

    def __bool__(self) -> bool:
        return bool(self.metrics)


def logprob_metrics_unpaired(old: SideRun, new: SideRun, shared: set[str]) -> Unpaired:
    """The shared metrics built on log-probabilities, when an imported side has none worth reading
    (HELM's Hugging Face client reports every local model's log-probability as 0): their values
    differ for that reason alone, so they are shown but not paired."""
    from holistic.metrics.registry import all_infos

    sides = [name for name, run in (("old", old), ("new", new)) if run.imported and not _real_logprobs(run)]
    if not sides:
        return Unpaired()
    infos = all_infos()
    metrics = frozenset(m for m in shared if m in infos and infos[m].needs_logprobs)
    if not metrics:
        return Unpaired()
    return Unpaired(
        metrics=metrics,
        note=(
            f"not paired: {', '.join(sorted(metrics))}: the {' and '.join(sides)} run, imported from HELM, has no real "
            "log-probabilities (every token's is exactly 0, as HELM's Hugging Face client reports them after "
            "temperature scaling), so the values built on them differ for that reason alone"
        ),
    )


def _real_logprobs(run: SideRun) -> bool:
    origin = run.spec.get("imported_from") or {}
    return bool(origin.get("real_logprobs", True))
