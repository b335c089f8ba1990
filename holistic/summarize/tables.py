"""Tables as plain data, and their CSV, Markdown, LaTeX and JSON exports."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass, field
from typing import Any


def anchor(text: Any) -> str:
    """``text`` as an element id or a file-name part: every character but letters and digits is ``-``."""
    return "".join(ch if ch.isalnum() else "-" for ch in str(text))


@dataclass(frozen=True)
class Cell:
    """One table cell: a value with an optional 95% interval, or text."""

    value: float | str | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""
    """Extra text shown on hover (e.g. the number of instances, a rank range)."""
    href: str | None = None
    anchor: str | None = None
    """Element id, so other pages can link to this row."""

    def text(self, digits: int = 3) -> str:
        v = self.value
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "–"
        if isinstance(v, str):
            return v
        out = f"{v:.{digits}f}"
        if (
            self.ci_low is not None
            and self.ci_high is not None
            and not (math.isnan(self.ci_low) or math.isnan(self.ci_high))
        ):
            out += f" [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"
        return out


@dataclass(frozen=True)
class Column:
    name: str
    lower_is_better: bool | None = None
    """``None`` for text columns."""
    description: str = ""
    digits: int = 3
    """Decimal places shown for numeric values."""
    numeric: bool = False
    """Numeric column (always true when a direction is given)."""

    def __post_init__(self) -> None:
        if self.lower_is_better is not None:
            object.__setattr__(self, "numeric", True)


@dataclass(frozen=True)
class Table:
    """A titled table: one header row, then rows of cells."""

    id: str
    """File-name-safe identifier."""
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    description: str = ""
    links: dict[str, str] = field(default_factory=dict)
    row_roles: tuple[str, ...] = ()
    """Per row: ``""`` for a compared system, ``"baseline"`` for a reference row that is
    not ranked (empty when every row is a system)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "columns": [asdict(c) for c in self.columns],
            "rows": [[_cell_json(c) for c in row] for row in self.rows],
            "links": dict(self.links),
            "row_roles": list(self.row_roles) or [""] * len(self.rows),
        }


def _cell_json(cell: Cell) -> dict[str, Any]:
    value: Any = cell.value
    if isinstance(value, float) and math.isnan(value):
        value = None
    out: dict[str, Any] = {"value": value}
    for key in ("ci_low", "ci_high"):
        v = getattr(cell, key)
        if v is not None and not math.isnan(v):
            out[key] = v
    if cell.note:
        out["note"] = cell.note
    if cell.href:
        out["href"] = cell.href
    if cell.anchor:
        out["anchor"] = cell.anchor
    return out


def to_csv(table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    header: list[str] = []
    for col in table.columns:
        header.append(col.name)
        if col.numeric:
            header += [f"{col.name} ci_low", f"{col.name} ci_high"]
    writer.writerow(header)
    for row in table.rows:
        out: list[str] = []
        for col, cell in zip(table.columns, row, strict=True):
            if not col.numeric:
                out.append("" if cell.value is None else str(cell.value))
            else:
                out += [_num(cell.value), _num(cell.ci_low), _num(cell.ci_high)]
        writer.writerow(out)
    return buf.getvalue()


def _num(v: float | str | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, str):
        return v
    return repr(float(v))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(table: Table) -> str:
    lines = [f"### {_md_escape(table.title)}", ""]
    if table.description:
        lines += [_md_escape(table.description), ""]
    lines.append("| " + " | ".join(_md_escape(_header(c)) for c in table.columns) + " |")
    lines.append("|" + "|".join("---:" if c.numeric else "---" for c in table.columns) + "|")
    for row in table.rows:
        lines.append(
            "| " + " | ".join(_md_escape(c.text(col.digits)) for c, col in zip(row, table.columns, strict=True)) + " |"
        )
    return "\n".join(lines) + "\n"


def _header(col: Column) -> str:
    if col.lower_is_better is None:
        return col.name
    return f"{col.name} {'↓' if col.lower_is_better else '↑'}"


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _tex(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text).replace("–", "--")


def to_latex(table: Table) -> str:
    spec = "".join("r" if c.numeric else "l" for c in table.columns)
    lines = [
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{_tex(table.title)}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(_tex(_header(c).replace("↓", "(lower is better)").replace("↑", "")).strip() for c in table.columns)
        + " \\\\",
        "\\midrule",
    ]
    for row in table.rows:
        lines.append(" & ".join(_tex(c.text(col.digits)) for c, col in zip(row, table.columns, strict=True)) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"
