"""The static site: leaderboards, run pages, a per-instance browser and plots."""

from holistic.site.render import render_site

__all__ = ["render_site"]
