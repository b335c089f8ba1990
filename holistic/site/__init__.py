"""The static site: leaderboards, run pages, a per-instance browser and plots.

:func:`render_site` is imported on first use: ``helm-run`` writes each run's browser bundle
(:mod:`holistic.site.bundle`) without importing the page renderer, its plots or Jinja2."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holistic.site.render import render_site

__all__ = ["render_site"]


def __getattr__(name: str) -> Any:
    if name == "render_site":
        from holistic.site.render import render_site

        return render_site
    raise AttributeError(f"module 'holistic.site' has no attribute {name!r}")
