"""Every ``template`` in a run spec is checked before anything runs (see :mod:`holistic.core.templates`)."""

from __future__ import annotations

from typing import Any

from holistic.spec.source import DocPath, Locations

TEMPLATE_KEY = "template"


def check_templates(data: Any, locations: Locations, path: DocPath = ()) -> None:
    """Raise a :class:`~holistic.core.errors.SpecError` (file, line) for the first unsafe or invalid template."""
    if isinstance(data, dict):
        for key, value in data.items():
            here = (*path, key)
            if key == TEMPLATE_KEY and isinstance(value, str):
                from holistic.core.templates import template_problem  # Jinja2: only for a spec with a template

                problem = template_problem(value)
                if problem is not None:
                    where = f" (template line {problem.line})" if problem.line else ""
                    raise locations.error(here, problem.message + where)
            else:
                check_templates(value, locations, here)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            check_templates(item, locations, (*path, i))
