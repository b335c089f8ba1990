"""The sha256 of run files as this user's holistic last computed them, kept while the files are unchanged.

Verifying a suite's runs hashes every result file each manifest lists: at 5,000 runs, most of a
re-summarize's reading. ``helm-summarize`` keeps each file's sha256 in the suite's output cache
(:mod:`holistic.results.output_cache`: one entry, signed with the user's secret) beside what the
file was when hashed: its inode, device, size, modification and change times. A file whose stat
is still that one has not been written, replaced or linked anew since (each changes the change
time, which no user can set back), so its recorded sha256 is its sha256; any other file is hashed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from holistic.results.output_cache import OutputCache, key_of, read_json_entry, stat_signature, write_json_entry

DIGESTS_CACHE = "file_digests"
"""The output cache's kind of the record of the run files' sha256 (one entry, rewritten by each summarize)."""
SETTLED_NS = 2_000_000_000


class KnownDigests:
    """The run files' sha256 an earlier summarize computed, and those this one computes."""

    def __init__(self, cache: OutputCache) -> None:
        self.cache = cache
        self.entry = key_of("file digests", 1)
        self.known: dict[str, list[object]] = {}
        value = read_json_entry(cache, DIGESTS_CACHE, self.entry, {})
        self.previous: dict[str, object] = value if isinstance(value, dict) else {}

    def sha256(self, path: Path, info: os.stat_result, compute: Callable[[Path], str]) -> str:
        """The sha256 of the file at ``path`` (``info``: its stat): the recorded one while the file is
        unchanged, else ``compute(path)``. A file changed less than :data:`SETTLED_NS` ago is not
        recorded (a change within the clock's tick would leave its times as they were)."""
        signature = stat_signature(info)
        recorded = self.previous.get(str(path))
        if isinstance(recorded, list) and len(recorded) == 6 and recorded[:5] == signature:
            digest = recorded[5]
        else:
            digest = None
        if not isinstance(digest, str):
            digest = compute(path)
        if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > SETTLED_NS:
            self.known[str(path)] = [*signature, digest]
        return digest

    def save(self) -> None:
        """Keep the record for the next summarize: the files verified by this one."""
        write_json_entry(self.cache, DIGESTS_CACHE, self.entry, self.known)
