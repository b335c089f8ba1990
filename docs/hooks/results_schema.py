"""MkDocs hook: the results page's tables of files and columns, read from schemas/results.schema.json.

That file is generated from the code (``python -m holistic.results.schemas``), so the page
shows the columns the writer writes. A page asks for the tables with the line
``<!-- results-schema -->``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MARKER = "<!-- results-schema -->"
SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "results.schema.json"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(name: str, table: dict[str, Any]) -> str:
    rows = [
        f"| `{c['name']}` | {c['type']}{'' if c['nullable'] else ', not null'} | {_cell(c['description'])} |"
        for c in table["columns"]
    ]
    return "\n".join(
        [f"### `{name}`", "", f"`{table['file']}`", "", "| column | type | meaning |", "|---|---|---|", *rows]
    )


def _key_table(title: str, entries: dict[str, str]) -> str:
    rows = [f"| `{key}` | {_cell(value)} |" for key, value in entries.items()]
    return "\n".join([f"### {title}", "", "| key | meaning |", "|---|---|", *rows])


def render(schema: dict[str, Any]) -> str:
    parts = [
        f"Schema version {schema['schema_version']}.",
        _key_table("Files of a run", schema["run_files"]),
        _key_table("`suite.json`", schema["suite_json"]),
        *(_table(name, table) for name, table in schema["tables"].items()),
        *(_table(name, table) for name, table in schema["suite_tables"].items()),
    ]
    return "\n\n".join(parts) + "\n"


def on_page_markdown(markdown: str, **_: object) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render(json.loads(SCHEMA.read_text(encoding="utf-8"))))
