"""A run's browser bundle: its instance browser's data, built once and kept in the run's folder.

Building a run's instance browser (:func:`~holistic.site.browser.build_browser`) reads all of its
Parquet files and is most of what a site of thousands of runs costs, yet it depends only on the
run's own files. So ``helm-run`` builds it when the run completes (:func:`write_bundle`), into
``<run>/browser/``, and ``helm-summarize`` links its files into the site
(:func:`bundle_into`), building (and keeping) it only when it is missing or stale::

    <run>/browser/manifest.json     format, fingerprint, the browser's facts, every file's size and sha256
    <run>/browser/index.js          the instance browser's index  (linked into the site as data/<run>/)
    <run>/browser/chunk_NNNN.js     its chunks                    (linked too)
    <run>/browser/predictions.json  what the compare-systems pages show of each instance (read, not linked)
    <run>/browser/page.json         the run page's own facts: statistics, in-context examples, reasoning,
                                    request totals (added up on the models page)

The *fingerprint* is a hash of exactly what the files were built from: the run's verified manifest
(every result file's size and sha256, so a rerun or any changed file changes it), the main metric,
the longest text shown (``max_field_chars``), the bundle format and the builder's own source. A
bundle is used only when its fingerprint is the one its run gives today.

A bundle is read as hostile: the folder and its files must be real ones (no symbolic link is
followed, files are opened relative to the folder), their names are the few above, each file
must have the size and sha256 its manifest lists, and each script must be exactly one call of
the browser's loader with a JSON literal (so it can carry data, never code). Anything else (a
missing, stale, damaged or tampered bundle) is rebuilt, never trusted. A bundle built by this
user's holistic carries an attestation (an HMAC under the user's secret, :data:`ATTEST`) of its
fingerprint and scripts' hashes: its scripts, once their sizes and sha256 match, are not parsed again. Its files reach the site
by hard link when the two folders share a filesystem (a site folder copied elsewhere still holds
every file), else by copy; either way the copy in the site is the one checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from holistic.core.errors import HolisticError
from holistic.metrics.choices import read_answer
from holistic.results import RunReader
from holistic.results.atomic import build_folder, writing
from holistic.results.layout import BROWSER_DIR
from holistic.results.output_cache import (
    OutputCache,
    attestation,
    attested,
    code_fingerprint,
    key_of,
    read_regular,
    user_secret,
)
from holistic.site.browser import MAX_FIELD_CHARS, BrowserData, build_browser
from holistic.site.bundle_reuse import Placed, file_signature
from holistic.site.haystack import load_artifact
from holistic.site.reasoning import run_reasoning
from holistic.site.run_facts import page_facts, sound_page_facts
from holistic.site.writer import clean
from holistic.summarize.load import main_metric_of
from holistic.summarize.tables import Table

BUNDLE_FORMAT = 2
"""Bumped when the bundle's files change shape (the builder's source is in the fingerprint too)."""
MANIFEST_FILE = "manifest.json"
PREDICTIONS_FILE = "predictions.json"
PAGE_FILE = "page.json"
MAX_MANIFEST_BYTES = 1 << 20
MAX_BUNDLE_FILE_BYTES = 1 << 30
"""Largest file of a bundle read (a chunk holds at most 250 records of cut text fields)."""
_SCRIPT_NAME = re.compile(r"\A(?:index|chunk_[0-9]{4})\.js\Z")
_CHUNK_CALL = re.compile(rb"\AHOLISTIC_CHUNK\(([0-9]{1,6}),")
_INDEX_CALL = b"HOLISTIC_INDEX("
_END = b");\n"


@dataclass(frozen=True)
class BundleJob:
    """One run's instance browser to put into a site (picklable: it goes to worker processes)."""

    reader: RunReader
    out_dir: Path
    """The site's ``data/<run id>`` folder."""
    main_metric: str | None
    max_field_chars: int
    predictions: bool
    """Whether the compare-systems pages need the run's predictions."""
    fallback_predictions: bool = False
    """Whether they need them only when the browser is not taken from the run's bundle (the
    compare-systems data is then made from the bundle's own predictions file, elsewhere:
    :func:`compared_predictions`)."""
    cache: OutputCache | None = None
    """Where the scripts an earlier summarize found sound are known by their hash (not parsed again)."""
    known: Mapping[str, list[Any]] = field(default_factory=dict)
    """The bundle's scripts as the last summarize left them (:class:`~holistic.site.bundle_reuse.KnownScripts`):
    one whose file is still that one is linked without being read again."""


def fingerprint(reader: RunReader, main_metric: str | None, max_field_chars: int) -> str | None:
    """The hash of everything the run's bundle is built from; ``None`` when the run's files are not
    known by a verified manifest (a folder read as it is): such a run's bundle is never kept."""
    files = reader.manifest.files
    if not files:
        return None
    facts = {
        "format": BUNDLE_FORMAT,
        "builder": _builder_hash(),
        "status": reader.manifest.status,
        "files": [[f.name, f.size, f.sha256] for f in sorted(files, key=lambda f: f.name)],
        "main_metric": main_metric,
        "max_field_chars": max_field_chars,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode("utf-8")).hexdigest()


@cache
def _builder_hash() -> str:
    """The source of the modules that decide a bundle's content: a change to any rebuilds every bundle."""
    return code_fingerprint(build_browser, read_answer, page_facts, run_reasoning, load_artifact, Table, clean)


def write_bundle(reader: RunReader, *, max_field_chars: int = MAX_FIELD_CHARS) -> Path | None:
    """Build the run's bundle into ``<run>/browser/`` (what ``helm-run`` calls when a run completes);
    returns its folder, or ``None`` when the run is not in a local folder or has no verified manifest
    (``helm-summarize`` then builds the browser itself)."""
    main_metric = main_metric_of(reader.spec)
    found = fingerprint(reader, main_metric, max_field_chars)
    if found is None or not isinstance(reader.folder, Path):
        return None
    _store(reader, found, main_metric, max_field_chars)
    return reader.folder / BROWSER_DIR


def bundle_is_current(reader: RunReader, *, max_field_chars: int = MAX_FIELD_CHARS) -> bool:
    """Whether the run has a bundle built from its files as they are now (its manifest's fingerprint
    alone: the quick look ``helm-run``'s callers may take; ``helm-summarize`` checks every file)."""
    found = fingerprint(reader, main_metric_of(reader.spec), max_field_chars)
    if found is None or not isinstance(reader.folder, Path):
        return False
    try:
        with _open_folder(reader.folder / BROWSER_DIR) as fd:
            return _manifest(fd, found) is not None
    except OSError:
        return False


def _store(reader: RunReader, found: str, main_metric: str | None, max_field_chars: int) -> BrowserData:
    """Build the bundle whole beside the old one and swap it in; returns what the browser holds."""
    assert isinstance(reader.folder, Path)

    def build(folder: Path) -> BrowserData:
        data = build_browser(reader, folder, main_metric, max_field_chars=max_field_chars)
        _write(folder / PREDICTIONS_FILE, json.dumps(data.predictions, ensure_ascii=False, separators=(",", ":")))
        page = page_facts(reader)
        _write(folder / PAGE_FILE, json.dumps(page, ensure_ascii=False, separators=(",", ":")))
        names = sorted(p.name for p in folder.iterdir() if p.name != MANIFEST_FILE)
        files = [{"name": n, **_size_and_hash((folder / n).read_bytes())} for n in names]
        manifest: dict[str, Any] = {
            "format": BUNDLE_FORMAT,
            "fingerprint": found,
            "count": data.count,
            "chunks": data.chunks,
            "perturbations": list(data.perturbations),
            "splits": list(data.splits),
            "files": files,
        }
        secret = user_secret()
        if secret is not None:  # made here: this user's summaries need not parse its scripts again
            manifest[ATTEST] = attestation(secret, ATTEST, _scripts_text(found, _scripts(files)))
        _write(folder / MANIFEST_FILE, json.dumps(manifest, indent=1, sort_keys=True))
        return replace(data, page=page)

    return build_folder(reader.folder / BROWSER_DIR, build, what="browser bundle")


def _write(path: Path, text: str) -> None:
    """A file of the bundle being built (not synced: the folder is swapped in whole, and a bundle that
    a crash left damaged fails its check and is rebuilt)."""
    with writing(path):
        path.write_text(text, encoding="utf-8")


def _size_and_hash(data: bytes) -> dict[str, Any]:
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def bundle_into(job: BundleJob) -> tuple[BrowserData, Placed | None]:
    """Put the run's instance browser into ``job.out_dir``: from its valid bundle (linked or copied,
    then checked), else from a bundle built now (and kept in the run's folder when it can be written),
    else built straight into the site (a suite on an object store, a read-only or unverified run).
    Returns what the browser holds, and the scripts placed from the run's bundle (as
    :data:`~holistic.site.bundle_reuse.Placed` describes them; ``None``: not taken from its bundle)."""
    reader = job.reader
    found = fingerprint(reader, job.main_metric, job.max_field_chars)
    if found is None or not isinstance(reader.folder, Path):
        return _built(job), None
    taken = _from_bundle(reader.folder / BROWSER_DIR, job, found)
    if taken is not None:
        return taken
    try:
        built = _store(reader, found, job.main_metric, job.max_field_chars)
    except (OSError, HolisticError):
        return _built(job), None  # the run folder cannot be written: this site gets its own copy
    taken = _from_bundle(reader.folder / BROWSER_DIR, job, found, built)
    return taken if taken is not None else (_built(job), None)


def _built(job: BundleJob) -> BrowserData:
    _clear(job.out_dir)
    data = build_browser(job.reader, job.out_dir, job.main_metric, max_field_chars=job.max_field_chars)
    wanted = job.predictions or job.fallback_predictions
    return replace(data, predictions=data.predictions if wanted else {}, page=page_facts(job.reader))


def compared_predictions(reader: RunReader, main_metric: str | None, max_field_chars: int) -> dict[str, Any]:
    """The run's predictions for the compare-systems data: from its bundle's predictions file when the
    bundle is current and the file is the one its manifest lists (size and sha256) and sound, as
    :func:`bundle_into` takes them; else from the bundle built again (kept when the run's folder can
    be written), else from the run's files (a browser built into a temporary folder)."""
    found = fingerprint(reader, main_metric, max_field_chars)
    if found is not None and isinstance(reader.folder, Path):
        with contextlib.suppress(OSError), _open_folder(reader.folder / BROWSER_DIR) as fd:
            manifest = _manifest(fd, found)
            entry = next((e for e in manifest["files"] if e["name"] == PREDICTIONS_FILE), None) if manifest else None
            predictions = _json(fd, entry, _sound_predictions) if entry is not None else None
            if predictions is not None:
                return predictions  # type: ignore[no-any-return]
        with contextlib.suppress(OSError, HolisticError):
            return _store(reader, found, main_metric, max_field_chars).predictions
    with tempfile.TemporaryDirectory(prefix="holistic-compare-") as tmp:
        return build_browser(reader, Path(tmp), main_metric, max_field_chars=max_field_chars).predictions


def _from_bundle(
    folder: Path, job: BundleJob, found: str, built: BrowserData | None = None
) -> tuple[BrowserData, Placed] | None:
    """The browser's facts and the scripts placed, once every script of the bundle at ``folder`` is in
    ``job.out_dir`` and checked; ``None`` (and ``job.out_dir`` emptied) when the bundle is missing,
    stale or not sound."""
    try:
        with _open_folder(folder) as fd:
            manifest = _manifest(fd, found)
            if manifest is None:
                return None
            _clear(job.out_dir)
            job.out_dir.mkdir(parents=True, exist_ok=True)
            entries = {e["name"]: e for e in manifest["files"]}
            scripts = _scripts(manifest["files"])
            own = job.cache is not None and attested(
                job.cache.secret, ATTEST, _scripts_text(found, scripts), manifest.get(ATTEST)
            )
            key = _scripts_key(scripts) if job.cache is not None and not own else None
            parse = not own and (job.cache is None or key is None or job.cache.get(SOUND_CACHE, key) is None)
            placed: Placed = {}
            for name, entry in scripts.items():
                done = _place(fd, name, job.out_dir / name, entry, parse=parse, known=job.known.get(name))
                if done is None:
                    _clear(job.out_dir)
                    return None
                placed[name] = done
            if parse and job.cache is not None and key is not None:
                job.cache.put(SOUND_CACHE, key, {})
            predictions = built.predictions if built is not None else None
            if job.predictions and predictions is None:
                predictions = _json(fd, entries[PREDICTIONS_FILE], _sound_predictions)
            page = built.page if built is not None else _json(fd, entries[PAGE_FILE], sound_page_facts)
            if page is None or (job.predictions and predictions is None):
                _clear(job.out_dir)
                return None
    except OSError:
        _clear(job.out_dir)
        return None
    return BrowserData(
        count=manifest["count"],
        chunks=manifest["chunks"],
        perturbations=tuple(manifest["perturbations"]),
        splits=tuple(manifest["splits"]),
        predictions=(predictions or {}) if job.predictions else {},
        page=page,
    ), placed


@contextlib.contextmanager
def _open_folder(folder: Path) -> Iterator[int]:
    """The bundle folder opened as itself (a symbolic link in its place is refused: ``OSError``)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        yield fd
    finally:
        os.close(fd)


def _read(dir_fd: int, name: str, limit: int) -> bytes | None:
    """A regular file of the folder (no link followed), at most ``limit`` bytes; ``None`` otherwise."""
    return read_regular(name, limit, dir_fd=dir_fd)


def _manifest(dir_fd: int, found: str) -> dict[str, Any] | None:
    """The bundle's manifest when it is well formed and has the fingerprint ``found``."""
    raw = _read(dir_fd, MANIFEST_FILE, MAX_MANIFEST_BYTES)
    doc = _loads(raw) if raw is not None else None
    if not isinstance(doc, dict) or doc.get("format") != BUNDLE_FORMAT or doc.get("fingerprint") != found:
        return None
    count, chunks, files = doc.get("count"), doc.get("chunks"), doc.get("files")
    if not (_count(count) and isinstance(chunks, int) and _count(chunks) and isinstance(files, list)):
        return None
    if not all(_strings(doc.get(k)) for k in ("perturbations", "splits")):
        return None
    if len(files) != chunks + 3:  # the index, the predictions, the page and each chunk (counted before named)
        return None
    names = [f.get("name") if isinstance(f, dict) else None for f in files]
    if set(names) != {"index.js", PREDICTIONS_FILE, PAGE_FILE, *(f"chunk_{c:04d}.js" for c in range(chunks))}:
        return None
    for f in files:
        if not (_count(f.get("size")) and isinstance(f.get("sha256"), str)):
            return None
    return doc


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_BUNDLE_FILE_BYTES


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _place(
    dir_fd: int,
    name: str,
    target: Path,
    entry: Mapping[str, Any],
    *,
    parse: bool = True,
    known: list[Any] | None = None,
) -> list[Any] | None:
    """Hard-link (else copy) the bundle's script ``name`` to ``target``, then check the copy the site holds
    (without ``parse``, its size and sha256 alone: a script with them was found sound before); what the
    file placed is (:data:`~holistic.site.bundle_reuse.Placed`), ``None`` when it is not sound.

    A script ``known`` (as the last summarize left it, with the sha256 the manifest lists) whose file
    still has that stat is linked and not read again: the link is that very file."""
    if not _SCRIPT_NAME.match(name):
        return None
    if known is not None:
        linked = _linked_known(dir_fd, name, target, entry, known)
        if linked is not None:
            return linked
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
    try:
        os.link(name, target, src_dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        data = _read(dir_fd, name, entry["size"])
        if data is None:
            return None
        with writing(target):
            target.write_bytes(data)
    try:
        with_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            data = _read(with_fd, target.name, entry["size"])
        finally:
            os.close(with_fd)
        info = os.stat(target, follow_symlinks=False)
    except OSError:
        return None
    if data is None or not _sound(name, data, entry, parse=parse):
        return None
    return [info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, entry["sha256"]]


def _linked_known(dir_fd: int, name: str, target: Path, entry: Mapping[str, Any], known: list[Any]) -> list[Any] | None:
    """Link the bundle's script when its file is the one ``known`` records with the manifest's size and
    sha256; what the linked file is, else ``None`` (nothing linked, or a link to be replaced)."""
    if known[5] != entry["sha256"] or known[2] != entry["size"]:
        return None
    if file_signature(name, dir_fd=dir_fd) != known[:5]:
        return None
    try:
        os.link(name, target, src_dir_fd=dir_fd, follow_symlinks=False)
        after = os.stat(target, follow_symlinks=False)
    except OSError:
        return None
    same = [after.st_ino, after.st_dev, after.st_size, after.st_mtime_ns]
    return [*same, entry["sha256"]] if same == known[:4] else None


ATTEST = "attest"
"""The manifest's field holding the attestation (:func:`~holistic.results.output_cache.attestation`,
under the user's secret) of the bundle's fingerprint and scripts' hashes, written by the holistic that
built it: a bundle attested under this user's secret was built by holistic, so its scripts, once their
sizes and sha256 match, are the sound ones it wrote (not parsed again); any other bundle's are parsed."""


def _scripts(files: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The manifest's entries of the bundle's scripts (those linked into the site), by name."""
    return {e["name"]: e for e in files if e["name"] not in (PREDICTIONS_FILE, PAGE_FILE)}


def _scripts_text(found: str, scripts: Mapping[str, Mapping[str, Any]]) -> str:
    """What a bundle's attestation covers: its fingerprint and each script's name, size and sha256."""
    listed = sorted([name, e.get("size"), e.get("sha256")] for name, e in scripts.items())
    return json.dumps([found, listed], sort_keys=True, separators=(",", ":"))


SOUND_CACHE = "sound_scripts"
"""The output cache's kind of the bundles whose scripts were all found sound (keyed by every script's
name and sha256; the entry is empty): their scripts are checked by size and sha256 alone."""


def _scripts_key(scripts: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The output cache's key of a bundle's scripts: their names and hashes, and this code."""
    if not all(isinstance(e.get("sha256"), str) for e in scripts.values()):
        return None
    return key_of("sound", _sound_code(), sorted([name, e["sha256"]] for name, e in scripts.items()))


def _sound(name: str, data: bytes, entry: Mapping[str, Any], *, parse: bool = True) -> bool:
    """``data`` is the file the manifest lists and (unless not ``parse``) one loader call with a JSON literal."""
    if _size_and_hash(data) != {"size": entry["size"], "sha256": entry["sha256"]} or not data.endswith(_END):
        return False
    return _parses(name, data) if parse else True


@cache
def _sound_code() -> str:
    return code_fingerprint(_sound)


def _parses(name: str, data: bytes) -> bool:
    """``data`` (of the script ``name``) is one loader call with a JSON literal."""
    if name == "index.js":
        start = len(_INDEX_CALL) if data.startswith(_INDEX_CALL) else -1
    else:
        call = _CHUNK_CALL.match(data)
        start = call.end() if call is not None and int(call.group(1)) == int(name[6:10]) else -1
    if start < 0:
        return False
    return isinstance(_loads(data[start : -len(_END)]), dict)


def _json(dir_fd: int, entry: Mapping[str, Any], sound: Callable[[Any], bool]) -> Any:
    """A JSON file of the bundle, when it is the one the manifest lists and ``sound`` accepts its value."""
    data = _read(dir_fd, entry["name"], entry["size"])
    if data is None or _size_and_hash(data) != {"size": entry["size"], "sha256": entry["sha256"]}:
        return None
    value = _loads(data)
    return value if value is not None and sound(value) else None


def _loads(data: bytes) -> Any:
    """The JSON value of ``data``; ``None`` when it is not JSON, or nested too deep to read (a
    damaged bundle, rebuilt, never a crash)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _sound_predictions(value: object) -> bool:
    """The compare-systems pages' records: instance id -> the fields they read."""
    keys = {"input", "references", "correct", "prediction", "value"}
    return isinstance(value, dict) and all(isinstance(v, dict) and keys <= v.keys() for v in value.values())


def _clear(folder: Path) -> None:
    """Remove what an earlier attempt put into the site's folder of the run."""
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
