"""``helm-summarize``'s output cache: what a summarize computed from given inputs, kept for the next one.

A re-summarize after one run changed redoes only what depends on that run: each cached output
(a scenario's plot, a compare-systems view's data, a bundle file found sound) is stored under a
*key*, the sha256 of everything it was made from (the inputs themselves, or their own hashes, and
:func:`code_fingerprint` of the code that makes it). A different input or a changed module gives a
different key, so a stale entry is never found, only left behind (and removed by :meth:`OutputCache.prune`
once a summarize used none of it).

The cache lives beside the summary and the site (``<suite>/.summarize-cache/``) and is read as hostile
input: a suite folder may come from elsewhere with a cache planted in it. So each entry carries an
HMAC-SHA256 of its kind, its key and its content under a secret kept outside the suite, in the user's
cache folder (:func:`secret_path`: ``summarize-cache.key`` in ``$HOLISTIC_CACHE_DIR``, default
``~/.cache/holistic``, or the file ``$HOLISTIC_CACHE_KEY_FILE`` names), created on first use readable by
its owner alone. An entry whose MAC does not verify (damaged, truncated, edited,
moved to another key or written with another secret) is ignored and its output recomputed; an entry
is also refused when it is not a regular file or is larger than :data:`MAX_ENTRY_BYTES`. Without a
usable secret (a read-only home) there is no cache: everything is computed, as before.

An entry file::

    HOLISTIC-CACHE 1\\n<hex MAC>\\n<JSON: [[name, size], ...]>\\n<the files' bytes, one after the other>
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_FOLDER = ".summarize-cache"
"""The cache's folder, beside the suite's ``summary/`` and ``site/`` (hidden: not a run, not a suite)."""
KEY_FILE = "summarize-cache.key"
MAX_ENTRY_BYTES = 1 << 30
_MAGIC = b"HOLISTIC-CACHE 1\n"
_NAME = re.compile(r"\A[0-9a-f]{64}\Z")
_KIND = re.compile(r"\A[a-z_]{1,40}\Z")


def code_fingerprint(*objects: Any) -> str:
    """The sha256 of the source of the modules that define ``objects`` (or are named by them, a string):
    a change to any of them changes every key built with it (the outputs they make are then made again)."""
    digest = hashlib.sha256()
    for name in sorted({o if isinstance(o, str) else o.__module__ for o in objects}):
        source = Path(getattr(sys.modules.get(name), "__file__", None) or "")
        digest.update(source.read_bytes() if source.is_file() else name.encode("utf-8"))
    return digest.hexdigest()


def key_of(*parts: object) -> str:
    """A cache key: the sha256 of ``parts`` as canonical JSON (strings, numbers, lists, dicts)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def read_regular(name: str | Path, limit: int, *, dir_fd: int | None = None) -> bytes | None:
    """A regular file (no link followed; ``name`` relative to ``dir_fd`` when given) of at most ``limit``
    bytes; ``None`` when it is missing, not a regular file or larger."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return fh.read(limit + 1)


KEY_FILE_ENV = "HOLISTIC_CACHE_KEY_FILE"
"""The environment variable naming the secret's file instead of the default."""


def secret_path() -> Path:
    """The file of the secret that signs the cache's entries: ``$HOLISTIC_CACHE_KEY_FILE``, else
    ``summarize-cache.key`` in holistic's cache folder (``$HOLISTIC_CACHE_DIR``, default ``~/.cache/holistic``)."""
    named = os.environ.get(KEY_FILE_ENV)
    if named:
        return Path(named)
    folder = os.environ.get("HOLISTIC_CACHE_DIR")
    return (Path(folder).expanduser() if folder else Path.home() / ".cache" / "holistic") / KEY_FILE


def user_secret() -> bytes | None:
    """The user's cache secret, created on first use (``None``: no usable secret, so no cache)."""
    path = secret_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_hex(32))
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            text = fh.read(65)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or not re.fullmatch(rb"[0-9a-f]{64}", text):
        return None
    return bytes.fromhex(text.decode("ascii"))


def attestation(secret: bytes, kind: str, text: str) -> str:
    """An HMAC-SHA256 of ``text`` under the user's secret, for ``kind``: what holistic writes beside an
    output it made itself (a run's browser bundle), so that this user's later summaries know it as
    their own; a folder from elsewhere cannot carry a valid one."""
    return hmac.new(secret, f"{kind}\0{text}".encode(), hashlib.sha256).hexdigest()


def attested(secret: bytes, kind: str, text: str, mac: object) -> bool:
    """Whether ``mac`` is :func:`attestation` of ``kind`` and ``text`` under ``secret``."""
    return isinstance(mac, str) and hmac.compare_digest(
        mac.encode("ascii", "replace"), attestation(secret, kind, text).encode("ascii")
    )


@dataclass(frozen=True)
class OutputCache:
    """The cache of one suite's outputs (picklable: worker processes read and write it too)."""

    folder: Path
    secret: bytes
    started: float
    """When this summarize began: entries neither used nor written since are pruned."""

    @classmethod
    def beside(cls, derived_dir: Path) -> OutputCache | None:
        """The cache in ``derived_dir`` (where the summary and the site are); ``None`` without a secret."""
        secret = user_secret()
        return None if secret is None else cls(derived_dir / CACHE_FOLDER, secret, time.time())

    def _path(self, kind: str, key: str) -> Path:
        if not _KIND.match(kind) or not _NAME.match(key):
            raise ValueError(f"bad cache entry name {kind}/{key}")
        return self.folder / kind / key

    def _mac(self, kind: str, key: str, body: bytes) -> bytes:
        mac = hmac.new(self.secret, f"{kind}\0{key}\0".encode("ascii"), hashlib.sha256)
        mac.update(body)
        return mac.hexdigest().encode("ascii")

    def get(self, kind: str, key: str) -> dict[str, bytes] | None:
        """The files stored under ``kind``/``key``, when the entry is there and authentic; else ``None``."""
        path = self._path(kind, key)
        data = read_regular(path, MAX_ENTRY_BYTES)
        if data is None:
            return None
        files = self._unpack(kind, key, data)
        if files is not None:
            with contextlib.suppress(OSError):
                os.utime(path, follow_symlinks=False)  # used by this summarize: kept by prune()
        return files

    def keep(self, kind: str, key: str) -> bool:
        """Mark the entry ``kind``/``key`` used by this summarize without reading it (kept by :meth:`prune`:
        an output had from elsewhere, the same as this entry's, may need the entry again); whether there
        is such a file (not whether it is authentic: that is checked when it is read)."""
        try:
            os.utime(self._path(kind, key), follow_symlinks=False)
        except (OSError, ValueError):
            return False
        return True

    def _unpack(self, kind: str, key: str, data: bytes) -> dict[str, bytes] | None:
        if not data.startswith(_MAGIC):
            return None
        mac_end = data.find(b"\n", len(_MAGIC))
        if mac_end < 0 or not hmac.compare_digest(
            data[len(_MAGIC) : mac_end], self._mac(kind, key, data[mac_end + 1 :])
        ):
            return None
        head_end = data.find(b"\n", mac_end + 1)
        try:  # authentic, so written by put(): a failure here is a bug, still read as a miss
            names = json.loads(data[mac_end + 1 : head_end])
            files, at = {}, head_end + 1
            for name, size in names:
                files[str(name)] = data[at : at + int(size)]
                at += int(size)
        except (ValueError, TypeError):
            return None
        return files if at == len(data) else None

    def put(self, kind: str, key: str, files: Mapping[str, bytes]) -> None:
        """Store ``files`` under ``kind``/``key`` (whole or not at all; a failure to write is no error:
        the next summarize computes them again)."""
        path = self._path(kind, key)
        head = json.dumps([[name, len(blob)] for name, blob in files.items()]).encode("utf-8")
        body = head + b"\n" + b"".join(files.values())
        tmp = path.with_name(f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")  # writers in threads too
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(_MAGIC + self._mac(kind, key, body) + b"\n" + body)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def prune(self, kinds: Iterable[str]) -> None:
        """Remove the entries of ``kinds`` this summarize neither used nor wrote (their inputs are gone)."""
        for kind in kinds:
            with contextlib.suppress(OSError):
                for entry in os.scandir(self.folder / kind):
                    with contextlib.suppress(OSError):
                        if entry.stat(follow_symlinks=False).st_mtime < self.started - 1:
                            os.unlink(entry.path)


_VALUE = "value.json"
_MISSING = object()


def read_json_entry(cache: OutputCache, kind: str, key: str, default: Any = None) -> Any:
    """The JSON value stored under ``kind``/``key`` by :func:`write_json_entry`; ``default`` when there
    is no authentic entry or it does not hold JSON."""
    found = cache.get(kind, key)
    if found is None or _VALUE not in found:
        return default
    try:
        return json.loads(found[_VALUE])
    except (ValueError, RecursionError):
        return default


def write_json_entry(cache: OutputCache, kind: str, key: str, value: Any) -> None:
    """Store ``value`` (numbers, strings, lists, string-keyed dicts) as JSON under ``kind``/``key``."""
    cache.put(kind, key, {_VALUE: json.dumps(value).encode("utf-8")})


def cached_json(cache: OutputCache | None, kind: str, key: str | None, compute: Callable[[], Any]) -> Any:
    """``compute()``'s JSON value (numbers, strings, lists, string-keyed dicts: floats come back to the
    bit), taken from ``cache`` under ``kind``/``key`` when an earlier summarize stored it, else computed
    and stored (``key`` ``None``: not cacheable, always computed)."""
    if cache is not None and key is not None:
        found = read_json_entry(cache, kind, key, _MISSING)
        if found is not _MISSING:
            return found
    value = compute()
    if cache is not None and key is not None:
        write_json_entry(cache, kind, key, value)
    return value


def stat_signature(info: os.stat_result) -> list[int]:
    """What changes whenever a file is written, replaced or linked anew: its inode, device, size,
    modification and change times (no user can set a change time back)."""
    return [info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def run_file_sha256(files: Iterable[Any], name: str) -> str | None:
    """The sha256 a verified run manifest's ``files`` (its entries) record for ``name`` (``None``: not listed)."""
    return next((f.sha256 for f in files if f.name == name), None)
