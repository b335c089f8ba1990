"""Finding the final answer of a MATH solution: the last ``\\boxed{...}`` (or ``\\fbox{...}``).

Shared by the MATH scenario (which turns a solution into its answer) and the MATH
metrics (which read the answer out of a model's worked solution).
"""

from __future__ import annotations


def last_boxed(text: str) -> str | None:
    """The last ``\\boxed{...}``/``\\fbox{...}`` group with balanced braces, or ``None``."""
    start = text.rfind("\\boxed")
    if start < 0:
        start = text.rfind("\\fbox")
        if start < 0:
            return None
    depth = 0
    for end in range(start, len(text)):
        if text[end] == "{":
            depth += 1
        elif text[end] == "}":
            depth -= 1
            if depth == 0:
                return text[start : end + 1]
    return None


def unbox(group: str | None) -> str | None:
    """The content of ``\\boxed{content}`` (``None`` for any other shape)."""
    opening = "\\boxed{"
    if group is None or not group.startswith(opening) or not group.endswith("}"):
        return None
    return group[len(opening) : -1]


def boxed_answer(solution: str | None) -> str | None:
    """The content of the last ``\\boxed{}`` of ``solution`` (``None`` when there is none)."""
    return None if solution is None else unbox(last_boxed(solution))
