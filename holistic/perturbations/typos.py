"""Keyboard typos: letters replaced by a neighbouring key on a QWERTY keyboard."""

from __future__ import annotations

from dataclasses import dataclass

from holistic.perturbations.base import ROBUSTNESS, PerturbRandom, TextPerturbation, check_probability

# The letter rows of a US QWERTY keyboard; each row is shifted half a key to the
# right of the one above, so key (r, c) touches (r-1, c), (r-1, c+1), (r+1, c-1), (r+1, c).
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours() -> dict[str, str]:
    out: dict[str, str] = {}
    for r, row in enumerate(_ROWS):
        for c, key in enumerate(row):
            cells = [(r, c - 1), (r, c + 1), (r - 1, c), (r - 1, c + 1), (r + 1, c - 1), (r + 1, c)]
            near = [_ROWS[rr][cc] for rr, cc in cells if 0 <= rr < len(_ROWS) and 0 <= cc < len(_ROWS[rr])]
            out[key] = "".join(near)
    return out


KEYBOARD_NEIGHBOURS: dict[str, str] = _neighbours()
"""Letter -> the letters of its adjacent keys (lower case)."""


@dataclass(frozen=True)
class Typos(TextPerturbation):
    """Each letter, with probability ``prob``, becomes an adjacent key (case kept)."""

    name = "typos"
    category = ROBUSTNESS

    prob: float = 0.05
    """Per-letter probability of a typo."""

    def __post_init__(self) -> None:
        check_probability("prob", self.prob)

    def perturb(self, text: str, rng: PerturbRandom) -> str:
        out = []
        for ch in text:
            near = KEYBOARD_NEIGHBOURS.get(ch.lower())
            if near and rng.seq.random() < self.prob:
                typo = rng.seq.choice(near)
                ch = typo.upper() if ch.isupper() else typo
            out.append(ch)
        return "".join(out)
