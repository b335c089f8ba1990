"""Write a benchmark's figures into its page of the docs site, dated: ``--write-docs``.

Every benchmark that takes ``--write-docs`` ends by calling :func:`write_results`: its figures,
as a Markdown table headed by the date, the machine and the command, go into
``docs/benchmarks/<name>.md`` between the page's two markers::

    <!-- results: <name> -->
    ...
    <!-- end of results: <name> -->

Whatever lies between them is replaced; the rest of the page (the prose around the figures) is
left as it is. A page without the markers gets them (and the table) at its end; a missing page
is created with a title.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tools.common import REPO

DOCS = REPO / "docs" / "benchmarks"
"""The benchmark pages of the docs site."""

Row = Mapping[str, object]


def add_docs_option(parser: argparse.ArgumentParser) -> None:
    """The ``--write-docs`` option (off by default)."""
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="also write the figures, dated, into the benchmark's docs page (docs/benchmarks/<name>.md)",
    )


def markers(name: str) -> tuple[str, str]:
    """The two lines between which ``name``'s figures stand on its page."""
    return f"<!-- results: {name} -->", f"<!-- end of results: {name} -->"


def cell(value: object) -> str:
    """A value as a table shows it: numbers with four significant digits, ``|`` escaped."""
    if isinstance(value, bool) or value is None:
        text = "-" if value is None else ("yes" if value else "no")
    elif isinstance(value, float):
        text = f"{value:.4g}"
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows: Sequence[Row]) -> str:
    """``rows`` as a Markdown table; the columns are every key, in the order they first appear."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def figures(report: Mapping[str, object], prefix: str = "") -> list[dict[str, object]]:
    """A nested report (as the benchmarks write it in JSON) as ``figure | value`` rows: one per
    number or string, named by its path (``engines.llama_cpp.warm_start_s``); lists are left out."""
    rows: list[dict[str, object]] = []
    for key, value in report.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows += figures(value, f"{name}.")
        elif isinstance(value, str | int | float | bool) or value is None:
            rows.append({"figure": name, "value": value})
    return rows


def machine() -> str:
    """This machine in a few words: CPU architecture and cores, system, Python."""
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def results_block(name: str, rows: Sequence[Row], when: dt.date, command: str) -> str:
    """The marked block: date, machine, command, then the table."""
    start, end = markers(name)
    head = f"Measured {when.isoformat()} on {machine()} with `{command}`."
    return f"{start}\n{head}\n\n{table(rows)}\n{end}"


def write_results(
    name: str,
    rows: Sequence[Row],
    *,
    docs: Path = DOCS,
    when: dt.date | None = None,
    command: str | None = None,
    page: str | None = None,
) -> Path:
    """Put ``rows`` between ``name``'s markers on ``docs/<page>.md`` (``page`` defaults to ``name``:
    see the module's docstring; another page holds a benchmark's figures beside a related one's)."""
    block = results_block(
        name, rows, when or dt.datetime.now(dt.UTC).date(), command or " ".join(["python -m", *_invocation()])
    )
    path = docs / f"{page or name}.md"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"# Benchmark: {page or name}\n"
    start, end = markers(name)
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def _invocation() -> list[str]:
    """This process's command line as ``python -m`` would take it (module and arguments), each
    absolute path as ``DIR`` or ``FILE``: the page tells how to measure, not where this machine
    keeps its files."""
    main = sys.modules.get("__main__")
    module = getattr(getattr(main, "__spec__", None), "name", None) or Path(sys.argv[0]).stem
    return [module, *map(_placeholder, sys.argv[1:])]


def _placeholder(arg: str) -> str:
    """``arg``, or ``DIR``/``FILE`` for an absolute path (``--opt=/path`` keeps its ``--opt=``)."""
    option, equals, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    path = os.path.expanduser(value)
    if not os.path.isabs(path):
        return arg
    return f"{option}{equals}{'DIR' if os.path.isdir(path) else 'FILE'}"


def finish(name: str, report: Mapping[str, object], write_docs: bool) -> int:
    """Print a benchmark's ``report`` (JSON), write its figures into its docs page when asked,
    and return its exit status: 0 when the report says its targets were ``met``, else 1."""
    import json

    print(json.dumps(report, indent=2))
    if write_docs:
        write_results(name, figures(report))
    return 0 if report.get("met") else 1
