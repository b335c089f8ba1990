"""Contrast sets (equivariance): expert-edited inputs whose gold answer changes.

A scenario that has contrast sets (Gardner et al., 2020; HELM uses them for
IMDB and BoolQ) puts them on the original instance's metadata:

``Instance.metadata["contrast_inputs"]``: a list of contrast items, each a
mapping ``{"input": str, "references": [{"output": str, "tags": [str, ...]}, ...]}``.
When an item has no ``references`` the original's are kept.

The ``contrast_set`` perturbation turns each item into a variant (same id,
``perturbation.name == "contrast_set"``, counted toward robustness), so the
worst case over the original and its contrast variants measures equivariance.
Instances without contrast items get no variant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from holistic.core.types import Instance, Reference
from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation

CONTRAST_KEY = "contrast_inputs"


class ContrastSetError(ValueError):
    """An instance's ``contrast_inputs`` metadata is malformed."""


def _reference(instance_id: str, index: int, raw: Any) -> Reference:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("output"), str):
        raise ContrastSetError(
            f"instance {instance_id!r}: {CONTRAST_KEY}[{index}].references must be a list of "
            f"{{'output': str, 'tags': [...]}}, got {raw!r}"
        )
    tags = raw.get("tags", ())
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise ContrastSetError(f"instance {instance_id!r}: {CONTRAST_KEY}[{index}] tags must be a list of strings")
    return Reference(output=raw["output"], tags=tuple(tags))


@dataclass(frozen=True)
class ContrastSet(TextPerturbation):
    """One variant per item of ``metadata["contrast_inputs"]`` (none when absent)."""

    name = "contrast_set"
    category = ROBUSTNESS

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        return text

    def variants(self, instance: Instance, seed: int) -> list[Instance]:
        items = instance.metadata.get(CONTRAST_KEY) or ()
        if isinstance(items, (str, Mapping)) or not isinstance(items, Sequence):
            raise ContrastSetError(
                f"instance {instance.id!r}: {CONTRAST_KEY} must be a list, got {type(items).__name__}"
            )
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, Mapping) or not isinstance(item.get("input"), str):
                raise ContrastSetError(f"instance {instance.id!r}: {CONTRAST_KEY}[{i}] needs a string 'input'")
            refs = instance.references
            if item.get("references") is not None:
                refs = tuple(_reference(instance.id, i, r) for r in item["references"])
            out.append(replace(instance, input=item["input"], references=refs, perturbation=self.description()))
        return out

    def apply(self, instance: Instance, seed: int) -> Instance:
        """The first contrast variant (use :meth:`variants` for all of them)."""
        found = self.variants(instance, seed)
        if not found:
            raise ContrastSetError(f"instance {instance.id!r} has no {CONTRAST_KEY}; it has no contrast variant")
        return found[0]
