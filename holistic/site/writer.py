"""What every page of the site shares: the templates, the page writer and the judge warnings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holistic.core.resources import project_path
from holistic.results.atomic import writing
from holistic.summarize.tables import anchor

if TYPE_CHECKING:
    from jinja2 import Environment

    from holistic.site.page_reuse import PageReuse
    from holistic.summarize.summary import Summary  # a type only: a run's bundle (built as it ends) needs no summary

STATIC_FILES = ("style.css", "site.js", "chunks.js", "browser.js", "compare.js")


def templates_dir() -> Path:
    """``site_templates/`` (templates, CSS and JavaScript) of the checkout or the installation."""
    folder = project_path("site_templates")
    if not (folder / "base.html").exists():
        raise FileNotFoundError(f"site templates not found (looked for {folder})")
    return folder


def environment() -> Environment:
    """The Jinja2 environment of the site's templates (autoescaping on, the ``anchor`` filter)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape  # the pages only, not a run's bundle

    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=False,
        keep_trailing_newline=True,
    )
    env.filters["anchor"] = anchor
    return env


def clean(v: Any) -> Any:
    """``None`` for NaN (a page shows it as missing), else ``v``."""
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


class SiteWriter:
    """Renders templates into the site folder; ``common`` is the context every page gets."""

    def __init__(self, site_dir: Path, suite: str, has_diff: bool, reuse: PageReuse | None = None) -> None:
        self.site_dir = site_dir
        self.env = environment()
        self.common: dict[str, Any] = {"suite": suite, "has_diff": has_diff}
        self.reuse = reuse
        """The old site's pages, taken when made from the same inputs (:mod:`holistic.site.page_reuse`)."""

    def page(self, rel: str, template: str, title: str, **context: Any) -> Path:
        path = self.site_dir / rel
        key = self.reuse.key(template, rel, title, self.common, context) if self.reuse is not None else None
        if key is not None and self.reuse is not None and self.reuse.take(rel, key):
            return path
        depth = rel.count("/")
        html = self.env.get_template(template).render(title=title, root="../" * depth, **self.common, **context)
        path.parent.mkdir(parents=True, exist_ok=True)
        with writing(path):
            path.write_text(html, encoding="utf-8")
        if key is not None and self.reuse is not None:
            self.reuse.wrote(rel, key)
        return path


def judge_flags(summary: Summary, judges: Sequence[str]) -> list[dict[str, str]]:
    """The flagged judges among ``judges`` (a page showing their scores warns about each)."""
    flags = summary.judges.flags
    return [{"judge": j, "reason": flags[j]} for j in sorted(set(judges)) if j in flags]


def rows_of(table: dict[str, Any], column: str) -> dict[str, Any] | None:
    """``table`` (a judge agreement table) with only the rows of scenario ``column`` (``None``: none)."""
    rows = [r for r in table["rows"] if r and r[0].get("value") == column]
    return {**table, "rows": rows} if rows else None
