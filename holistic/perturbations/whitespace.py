"""Extra whitespace: each space between words becomes a run of 1..max_spaces spaces."""

from __future__ import annotations

import re
from dataclasses import dataclass

from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation

_SPACES = re.compile(r" +")


@dataclass(frozen=True)
class ExtraWhitespace(TextPerturbation):
    """Every run of spaces is replaced by a random number (1..``max_spaces``) of spaces.

    Newlines and tabs are kept, so the layout of the text survives.
    """

    name = "whitespace"
    category = ROBUSTNESS

    max_spaces: int = 3
    """Largest number of spaces one gap may become."""

    def __post_init__(self) -> None:
        if not isinstance(self.max_spaces, int) or isinstance(self.max_spaces, bool) or self.max_spaces < 1:
            raise ValueError(f"max_spaces must be an integer >= 1, got {self.max_spaces!r}")

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        return _SPACES.sub(lambda _m: " " * rng.seq.randint(1, self.max_spaces), text)
