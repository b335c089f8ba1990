"""The one reader of JSON Lines: numbered objects, each bad line named by its number.

Used by the scenarios' readers, the haystack corpus loader and the ratings exchange; each
opens its file its own way (gzip, byte-order mark, newline handling) and passes the lines
here, with the error class its callers expect.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def numbered_json_objects(
    lines: Iterable[str], where: object, error: Callable[[str], Exception]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line; a line that is not a JSON object raises
    ``error("<where>:<number>: ...")`` saying what is wrong with it."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}:{number}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(value, dict):
            raise error(f"{where}:{number}: expected a JSON object, got {type(value).__name__}")
        yield number, value
