"""The runs' bundle scripts an earlier summarize put into the site, known while their files are unchanged.

Putting a run's instance browser into the site (:func:`holistic.site.bundle.bundle_into`) links its
bundle's scripts and checks the copy the site holds: each file read again and hashed, about a
megabyte per run of a thousand instances, gigabytes for a suite of thousands of runs. A
re-summarize after one run changed would check every other run's scripts again, unchanged.

So after each summarize the output cache (:mod:`holistic.results.output_cache`, signed with the
user's secret: a record planted in the suite is never read) keeps a record of the scripts placed
from bundles: for each run, its bundle folder, and each script's sha256 beside what the file was
once the site was in place (inode, device, size, modification and change times, as
:mod:`holistic.site.page_reuse` keeps for pages). A script whose bundle file still has that very
stat, and whose sha256 is the one the bundle's manifest lists, is that checked file: it is linked
without being read again. A file written, replaced or linked anew has another change time (no
user can set one back), so it is read and checked as before; so is every script of a run the
record does not name, or names with another folder.

The record also says which runs need no building at all (their bundle's manifest is the file it
was): when every run is such, the site is put together in this process, no worker started.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from holistic.results.layout import BROWSER_DIR
from holistic.results.output_cache import OutputCache, key_of, read_json_entry, stat_signature, write_json_entry

BUNDLES_CACHE = "site_bundles"
"""The output cache's kind of the record of the scripts placed from the runs' bundles (one entry)."""
MANIFEST = "manifest.json"

Placed = dict[str, list[Any]]
"""Script name -> ``[inode, device, size, modification time (ns), sha256]`` of the bundle's file as
placed and checked by this summarize."""
Known = dict[str, list[Any]]
"""Script name -> ``[inode, device, size, modification time (ns), change time (ns), sha256]`` of the
bundle's file as the last summarize left it."""


def file_signature(path: Path | str, *, dir_fd: int | None = None) -> list[int] | None:
    """The stat signature of a regular file (no link followed); ``None`` for anything else."""
    try:
        info = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return stat_signature(info) if stat.S_ISREG(info.st_mode) else None


class KnownScripts:
    """The scripts an earlier summarize placed from the runs' bundles, and those this one places."""

    def __init__(self, cache: OutputCache) -> None:
        self.cache = cache
        self.entry = key_of("bundle scripts", 1)
        value = read_json_entry(cache, BUNDLES_CACHE, self.entry, {})
        self.previous: dict[str, Any] = value if isinstance(value, dict) else {}
        self.placed: dict[str, tuple[str, Placed]] = {}

    def _recorded(self, run_id: str, folder: Path) -> dict[str, Any] | None:
        found = self.previous.get(run_id)
        if not (isinstance(found, list) and len(found) == 3 and found[0] == str(folder)):
            return None
        manifest, scripts = found[1], found[2]
        return {"manifest": manifest, "scripts": scripts} if isinstance(scripts, dict) else None

    def of(self, run_id: str, run_folder: Path) -> Known:
        """The run's scripts as recorded (empty when the record does not name the run's bundle folder)."""
        found = self._recorded(run_id, run_folder / BROWSER_DIR)
        if found is None:
            return {}
        return {n: v for n, v in found["scripts"].items() if isinstance(v, list) and len(v) == 6}

    def current(self, run_id: str, run_folder: Path) -> bool:
        """Whether the run's bundle manifest is the file the record names (its bundle is then, unless its
        run's files changed, the one placed last time: nothing to build)."""
        found = self._recorded(run_id, run_folder / BROWSER_DIR)
        return found is not None and file_signature(run_folder / BROWSER_DIR / MANIFEST) == found["manifest"]

    def note(self, run_id: str, run_folder: Path, placed: Placed) -> None:
        """Note the scripts placed from the run's bundle (checked, as :data:`Placed` says)."""
        if placed:
            self.placed[run_id] = (str(run_folder / BROWSER_DIR), placed)

    def save(self) -> None:
        """Keep the record for the next summarize (once the new site is in place and the old one removed:
        removing its links changed the files' change times). A script whose file is no longer the one
        placed (another inode, size or modification time) is left out."""
        record: dict[str, Any] = {}
        for run_id, (folder, placed) in self.placed.items():
            scripts = _settled(folder, placed)
            manifest = file_signature(os.path.join(folder, MANIFEST))
            if scripts and manifest is not None:
                record[run_id] = [folder, manifest, scripts]
        write_json_entry(self.cache, BUNDLES_CACHE, self.entry, record)


def _settled(folder: str, placed: Mapping[str, list[Any]]) -> Known:
    """The scripts of ``placed`` still the files placed, with their stat now (paths as strings: thousands)."""
    out: Known = {}
    for name, seen in placed.items():
        now = file_signature(os.path.join(folder, name))
        if now is not None and len(seen) == 5 and now[:4] == seen[:4]:
            out[name] = [*now, seen[4]]
    return out
