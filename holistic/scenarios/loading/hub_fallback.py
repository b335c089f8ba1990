"""The base of a core scenario that reads its authors' files or else their Hugging Face Hub copy."""

from __future__ import annotations

from typing import ClassVar

from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.hf_copy import HubCopy


class HubFallbackScenario(FileScenario):
    """A core scenario that falls back on its Hub copy :attr:`hub`: its ``hf_revision`` arg,
    checked once (``args_schema=hub.args_schema(...)`` declares it)."""

    hub: ClassVar[HubCopy]
    hf_revision: str
    """The Hub revision the copy's layout is read at."""

    def __init__(self, hf_revision: str | None = None) -> None:
        self.hf_revision = self.hub.revision(hf_revision)
