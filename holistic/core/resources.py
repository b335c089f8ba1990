"""Files that live beside the package: ``schemas/`` and ``site_templates/``.

In a checkout (and an editable install) they are read from the repository root;
a wheel installs them under ``<prefix>/share/holistic/`` (see ``data-files`` in
``pyproject.toml``).
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2]


def project_path(*parts: str) -> Path:
    """The first existing ``<root>/<parts>`` among the checkout and the installed data folders."""
    roots = [
        _CHECKOUT,
        Path(sysconfig.get_path("data")) / "share" / "holistic",
        Path(sys.prefix) / "share" / "holistic",
    ]
    for root in roots:
        candidate = root.joinpath(*parts)
        if candidate.exists():
            return candidate
    return _CHECKOUT.joinpath(*parts)
