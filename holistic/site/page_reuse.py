"""The site's pages an earlier summarize wrote, taken into the new site when made from the same inputs.

A re-summarize after one run changed renders again only the pages whose inputs changed: every
other page is the file the last summarize wrote, hard-linked from the old site into the new one
(which then replaces the old one whole, as before).

Each page is known by a *key*: the sha256 of everything it is rendered from (its template, its
path, its title and its context, pickled with plain data and dataclasses only) and of the code and templates that render it.
After each summarize the output cache (:mod:`holistic.results.output_cache`, signed with the
user's secret, so a record planted in the suite is never read) keeps a record of the site's
pages: each page's key and what its file was when written (inode, size, modification and change
times). A page is taken only when its key is the recorded one and the old site still holds that
very file: writing into it, replacing it, or linking another file in its place changes its change
time, which no user can set back. Anything else is rendered.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import os
import pickle
from pathlib import Path
from typing import Any

from holistic.results.output_cache import (
    OutputCache,
    code_fingerprint,
    key_of,
    read_json_entry,
    write_json_entry,
)
from holistic.site.bundle_reuse import KnownScripts, file_signature

PAGES_CACHE = "site_pages"
"""The output cache's kind of the record of the site's pages (one entry, rewritten by each summarize)."""


def _fields(module: str, name: str, values: tuple[Any, ...]) -> None:
    """What a dataclass in a page's context stands for in its key (never called: a key is not unpickled)."""


_PLAIN = (bool, int, float, str)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
"""A dataclass type's field names (the fields of each instance are read by name)."""


class _KeyPickler(pickle.Pickler):
    """A page's context as bytes for its key: plain data (strings, numbers, lists, tuples, dicts,
    sets) and dataclasses (their type's name and their fields); any other object raises
    :class:`TypeError` (the page is then always rendered, never taken). Pickle, not JSON: a page's
    context is thousands of values, and a re-summarize keys 10,000 pages; the same context built by
    the same code gives the same bytes (a dict in another order gives another key, so the page is
    rendered again, never taken wrongly)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=5)

    def reducer_override(self, obj: Any) -> Any:
        if obj is _fields or obj in _PLAIN:  # the callables of the reductions below, by name
            return NotImplemented
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            kind = type(obj)
            names = _FIELD_NAMES.get(kind)
            if names is None:
                names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(obj))
            values = tuple((name, getattr(obj, name)) for name in names)
            return _fields, (kind.__module__, kind.__qualname__, values)
        for plain in _PLAIN:  # a subclass (an enum, a NumPy float): its plain value
            if isinstance(obj, plain) and not isinstance(obj, type):
                return plain, (plain(obj),)
        raise TypeError(f"not plain data: {type(obj).__name__}")


def _file_name(name: object) -> bool:
    """A file's own name (no folder, not ``.`` or ``..``)."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\0" not in name


@functools.cache
def _code(templates: Path) -> str:
    """The templates and the code that renders them (a new holistic renders every page again)."""
    digest = hashlib.sha256(code_fingerprint("holistic.site.writer", "holistic.summarize.tables").encode("ascii"))
    for path in sorted(templates.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(templates)).encode("utf-8") + b"\0" + path.read_bytes())
    return digest.hexdigest()


class PageReuse:
    """The old site's pages, for the site being built in ``new_site``."""

    def __init__(self, cache: OutputCache, old_site: Path, new_site: Path, templates: Path) -> None:
        self.cache, self.old_site, self.new_site = cache, old_site, new_site
        self.code = _code(templates)
        self.entry = key_of("pages", self.code)
        self.previous: dict[str, Any] = self._record() if old_site.is_dir() else {}
        self.written: dict[str, str] = {}
        self.taken = 0
        self.folders_entry = key_of("page folders", self.code)
        found = read_json_entry(cache, PAGES_CACHE, self.folders_entry, {}) if old_site.is_dir() else {}
        self.folders: dict[str, Any] = found if isinstance(found, dict) else {}
        self.folders_written: dict[str, list[Any]] = {}
        self.scripts = KnownScripts(cache)
        """The runs' bundle scripts the last summarize placed (:mod:`holistic.site.bundle_reuse`)."""
        self._folders: set[str] = set()
        """The new site's folders made (or found) so far."""

    def _record(self) -> dict[str, Any]:
        """The last summarize's record of its pages (empty when there is none, or not an authentic one)."""
        value = read_json_entry(self.cache, PAGES_CACHE, self.entry, {})
        return value if isinstance(value, dict) else {}

    def key(self, template: str, rel: str, title: str, common: dict[str, Any], context: dict[str, Any]) -> str | None:
        """The page's key (``None``: its context is not plain data; the page is always rendered)."""
        buffer = io.BytesIO()
        try:
            _KeyPickler(buffer).dump([self.code, template, rel, title, common, context])
        except (TypeError, ValueError, pickle.PicklingError, RecursionError):
            return None
        return hashlib.sha256(buffer.getbuffer()).hexdigest()

    def take(self, rel: str, key: str) -> bool:
        """Link the old site's page ``rel`` into the new site when it was made from ``key`` and is still
        the file then written; whether it was."""
        recorded = self.previous.get(rel)
        if not (isinstance(recorded, list) and len(recorded) == 2 and recorded[0] == key):
            return False
        old = os.path.join(self.old_site, rel)  # strings, not paths: 10,000 pages and more
        if file_signature(old) != recorded[1]:
            return False
        new = os.path.join(self.new_site, rel)
        try:
            folder = os.path.dirname(new)
            if folder not in self._folders:  # made once, not asked again for each page in it
                os.makedirs(folder, exist_ok=True)
                self._folders.add(folder)
            os.link(old, new, follow_symlinks=False)
        except OSError:
            return False
        self.wrote(rel, key)
        self.taken += 1
        return True

    def take_folder(self, rel: str, key: str) -> Any:
        """The value noted with the old site's folder ``rel`` (:meth:`wrote_folder`), its files linked into
        the new site, when it was made from ``key`` and each of its files is still the one then written
        (as :meth:`take` takes a page); else ``None``, and nothing of it linked."""
        recorded = self.folders.get(rel)
        if not (isinstance(recorded, list) and len(recorded) == 3 and recorded[0] == key):
            return None
        names = recorded[1]
        if not (isinstance(names, list) and names and all(_file_name(n) for n in names)):
            return None
        for k, name in enumerate(names):
            if not self.take(f"{rel}/{name}", key):
                for done in names[:k]:  # a folder is taken whole or not at all
                    (self.new_site / rel / done).unlink()
                    del self.written[f"{rel}/{done}"]
                    self.taken -= 1
                return None
        self.wrote_folder(rel, key, names, recorded[2])
        return recorded[2]

    def wrote_folder(self, rel: str, key: str, names: list[str], value: Any) -> None:
        """Note the folder ``rel`` of the new site, its files ``names`` made from ``key``, and ``value``
        (JSON) that the next summarize gets back when it takes the folder."""
        self.folders_written[rel] = [key, sorted(names), value]
        for name in names:
            self.wrote(f"{rel}/{name}", key)

    def wrote(self, rel: str, key: str) -> None:
        """Note the page ``rel`` of the new site, made from ``key``."""
        self.written[rel] = key

    def save(self, site: Path) -> None:
        """Keep the record of the pages of ``site`` (the new site, in place, the old one removed: removing
        the old site's links to a page changed its change time) for the next summarize."""
        record = {}
        root = str(site)
        for rel, key in self.written.items():
            found = file_signature(os.path.join(root, rel))
            if found is not None:
                record[rel] = [key, found]
        write_json_entry(self.cache, PAGES_CACHE, self.entry, record)
        folders = {
            rel: found
            for rel, found in self.folders_written.items()
            if all(f"{rel}/{name}" in record for name in found[1])
        }
        write_json_entry(self.cache, PAGES_CACHE, self.folders_entry, folders)
        self.scripts.save()
