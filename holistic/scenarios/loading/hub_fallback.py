"""The base of a core scenario that reads its authors' files or else their Hugging Face Hub copy."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from holistic.core.types import Instance
from holistic.scenarios.loading.common import FileScenario, SplitFilesScenario
from holistic.scenarios.loading.hf_copy import AuthorsOrHub, HubCopy, check_revision
from holistic.scenarios.loading.sources import DataNeeds, ResolvedData


class HubFallbackScenario(FileScenario):
    """A core scenario that falls back on its Hub copy :attr:`hub`. Its ``hf_revision``
    argument is declared by the subclass (``hf_revision: str = hub.revision_arg()``, the copy's
    default revision) and checked here."""

    hub: ClassVar[HubCopy]
    hf_revision: str
    """The Hub revision the copy's layout is read at."""

    def __post_init__(self) -> None:
        check_revision(self.hf_revision)


class SplitFilesHubScenario(SplitFilesScenario, HubFallbackScenario):
    """The authors' files one per split (:class:`SplitFilesScenario`), else the Hub copy's
    Parquet files one per split: :attr:`hf_files`, each read by :meth:`read_hf`
    (layouts :class:`AuthorsOrHub`)."""

    hf_files: ClassVar[tuple[tuple[str, str], ...]]
    """(split, path in the Hub repository) pairs, in load order."""

    def read_hf(self, path: Path, split: str) -> list[Instance]:
        raise NotImplementedError

    def data_needs(self) -> DataNeeds:
        return self.hub.after(super().data_needs(), self.hf_revision, [p for _, p in self.hf_files])

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == AuthorsOrHub.HUB_COPY:
            return [inst for split, p in self.hf_files for inst in self.read_hf(data[f"hf/{p}"], split)]
        return super().load(data)
