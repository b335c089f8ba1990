"""What every tool shares: the repository's root and the default data root."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
"""The repository's root folder (the tools run from a clone, never from an installed wheel)."""

PEERS_CACHE = Path.home() / ".cache" / "holistic" / "peers"
"""Where the peer tools (HELM, lm-evaluation-harness, ...) get virtual environments of their own."""


def default_data_root() -> Path:
    """``HOLISTIC_DATA_ROOT`` when set, else the data mirror beside the clone (``../shared/data``)."""
    return Path(os.environ.get("HOLISTIC_DATA_ROOT") or REPO.parent / "shared" / "data")
