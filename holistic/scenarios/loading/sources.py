"""Where a scenario's data comes from: find it locally, or fetch and verify it.

A scenario that reads files declares them with :class:`DataNeeds` (its optional
method ``data_needs()``): the files it reads, as paths relative to its folder, and
for each how to get it (:class:`Download`: a URL, optionally a member of an
archive, pinned by sha256). A scenario may accept several layouts (e.g. the
official IMDB ``aclImdb/`` tree or a one-file copy); the first layout found whole
wins.

Resolution, per layout, in this order:

1. the mirror ``ctx.data_root`` (``--data-root`` / ``HOLISTIC_DATA_ROOT``): one
   folder per scenario holding the authors' files, e.g. ``<root>/mmlu/test/anatomy_test.csv``;
2. the cache ``ctx.cache_dir`` (default ``~/.cache/holistic/data``), same layout;
3. download into the cache, verifying sha256 (never when ``ctx.offline``).

A file whose declared sha256 differs is refused (mirror, cache or download). A
download with no pinned checksum is accepted once and its sha256 recorded in the
cache's ``SHA256SUMS`` (trust on first use); later copies must match it.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext

logger = logging.getLogger(__name__)

DATA_ROOT_ENV = "HOLISTIC_DATA_ROOT"
CACHE_ENV = "HOLISTIC_CACHE_DIR"
_SUMS_FILE = "SHA256SUMS"
_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Download:
    """One way to obtain a file: fetch ``url`` (optionally extract ``member`` from the archive)."""

    url: str
    sha256: str | None = None
    """Checksum of the downloaded bytes (the archive when ``member`` is set)."""
    member: str | None = None
    """Path inside a ``.zip``/``.tar*`` archive; a trailing ``/`` extracts a whole directory.
    Without a member, a ``.gz`` URL saved under a name without ``.gz`` is decompressed."""


@dataclass(frozen=True)
class DataFile:
    """One file (or directory) a scenario reads, relative to its folder."""

    path: str
    """POSIX path under the scenario folder, e.g. ``test/anatomy_test.csv``."""
    downloads: tuple[Download, ...] = ()
    """Ways to fetch it, tried in order."""
    sha256: str | None = None
    """Checksum of the file itself; verified wherever the file is found."""
    is_dir: bool = False


@dataclass(frozen=True)
class DataNeeds:
    """Everything one scenario (with its args) reads."""

    scenario: str
    """Folder name under the mirror and the cache (usually the scenario name)."""
    layouts: tuple[tuple[DataFile, ...], ...]
    """Alternative sets of files; the first one found whole (or fetchable) is used."""
    hint: str = ""
    """Where to get the files by hand, shown when nothing is found."""


@dataclass(frozen=True)
class ResolvedData:
    """Where each file of the chosen layout is on disk."""

    scenario: str
    layout: int
    """Index of the layout used in ``DataNeeds.layouts``; a scenario compares it with the names
    it gives its layouts (an ``IntEnum`` declared beside its ``data_needs``, e.g.
    :class:`~holistic.scenarios.loading.hf_copy.AuthorsOrHub`), never with a bare number."""
    paths: dict[str, Path] = field(default_factory=dict)
    """``DataFile.path`` -> actual path."""
    origins: dict[str, str] = field(default_factory=dict)
    """``DataFile.path`` -> ``mirror``, ``cache`` or ``download``."""

    def __getitem__(self, path: str) -> Path:
        return self.paths[path]


def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "holistic" / "data"


def default_data_root() -> Path | None:
    env = os.environ.get(DATA_ROOT_ENV)
    return Path(env) if env else None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _places(needs: DataNeeds, ctx: ScenarioContext) -> list[tuple[str, Path]]:
    places: list[tuple[str, Path]] = []
    root = ctx.data_root if ctx.data_root is not None else default_data_root()
    if root is not None:
        places.append(("mirror", Path(root) / needs.scenario))
    places.append(("cache", _cache(ctx) / needs.scenario))
    return places


def _cache(ctx: ScenarioContext) -> Path:
    return Path(ctx.cache_dir) if ctx.cache_dir is not None else default_cache_dir()


def _exists(base: Path, item: DataFile) -> bool:
    target = base / item.path
    return target.is_dir() if item.is_dir else target.is_file()


def _verify(path: Path, expected: str | None, what: str) -> None:
    if expected is None or path.is_dir():
        return
    actual = file_sha256(path)
    if actual != expected:
        raise DataSourceError(
            f"checksum mismatch for {what}: {path} has sha256 {actual}, expected {expected}. "
            "The file is corrupt or a different version; delete it (or fix the mirror) and fetch again."
        )


def data_origin(needs: DataNeeds, ctx: ScenarioContext) -> str | None:
    """Where a complete layout of ``needs`` is on this machine (``mirror`` or ``cache``),
    without reading the files; ``None`` when no layout is here whole."""
    places = _places(needs, ctx)
    for layout in needs.layouts:
        for origin, base in places:
            if all(_exists(base, item) for item in layout):
                return origin
    return None


def obtainable(needs: DataNeeds) -> tuple[str, ...]:
    """The hosts a missing layout would be downloaded from (the first layout that
    declares a download for every file); empty when nothing can be downloaded."""
    from urllib.parse import urlparse

    for layout in needs.layouts:
        if layout and all(item.downloads for item in layout):
            return tuple(sorted({urlparse(d.url).netloc for item in layout for d in item.downloads}))
    return ()


def resolve(needs: DataNeeds, ctx: ScenarioContext) -> ResolvedData:
    """Find (or fetch) the first complete layout of ``needs``; see the module docstring."""
    places = _places(needs, ctx)
    for index, layout in enumerate(needs.layouts):
        for origin, base in places:
            if all(_exists(base, item) for item in layout):
                for item in layout:
                    _verify(base / item.path, item.sha256, f"{needs.scenario}/{item.path}")
                return ResolvedData(
                    needs.scenario,
                    index,
                    {item.path: base / item.path for item in layout},
                    {item.path: origin for item in layout},
                )
    failures: list[str] = []
    if not ctx.offline:
        for index, layout in enumerate(needs.layouts):
            if not all(item.downloads for item in layout):
                continue
            try:
                return _fetch_layout(needs, index, layout, ctx)
            except _FetchError as exc:
                failures.append(str(exc))
    raise DataSourceError(_missing_message(needs, places, ctx, failures))


def _missing_message(
    needs: DataNeeds, places: list[tuple[str, Path]], ctx: ScenarioContext, failures: list[str]
) -> str:
    lines = [f"data for scenario {needs.scenario!r} not found."]
    for index, layout in enumerate(needs.layouts):
        label = "expected files" if len(needs.layouts) == 1 else f"layout {index + 1} expects"
        shown = [item.path + ("/" if item.is_dir else "") for item in layout]
        more = f" (and {len(shown) - 8} more)" if len(shown) > 8 else ""
        lines.append(f"  {label}: {', '.join(shown[:8])}{more}")
    lines.append("  looked in:")
    for origin, base in places:
        lines.append(f"    {origin}: {base}")
    if ctx.offline:
        lines.append("  download: not tried (offline)")
    elif failures:
        lines.extend(f"  download failed: {f}" for f in failures)
    else:
        lines.append("  download: no download source is declared for these files")
    if ctx.data_root is None and default_data_root() is None:
        lines.append(f"  hint: point --data-root (or ${DATA_ROOT_ENV}) at a mirror with a {needs.scenario}/ folder")
    if needs.hint:
        lines.append(f"  get them from: {needs.hint}")
    return "\n".join(lines)


class _FetchError(Exception):
    pass


def _fetch_layout(needs: DataNeeds, index: int, layout: Sequence[DataFile], ctx: ScenarioContext) -> ResolvedData:
    base = _cache(ctx) / needs.scenario
    paths: dict[str, Path] = {}
    origins: dict[str, str] = {}
    for item in layout:
        target = base / item.path
        if _exists(base, item):
            _verify(target, item.sha256, f"{needs.scenario}/{item.path}")
            paths[item.path], origins[item.path] = target, "cache"
            continue
        errors = []
        for download in item.downloads:
            try:
                _fetch_one(download, item, target, ctx)
                break
            except _FetchError as exc:
                errors.append(str(exc))
        else:
            raise _FetchError(f"{item.path}: " + "; ".join(errors))
        paths[item.path], origins[item.path] = target, "download"
    return ResolvedData(needs.scenario, index, paths, origins)


def _fetch_one(download: Download, item: DataFile, target: Path, ctx: ScenarioContext) -> None:
    archive = _download_verified(download, ctx)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        staged = Path(tmp) / "staged"
        if download.member is None and _gunzip_wanted(download.url, item.path):
            with gzip.open(archive, "rb") as src, staged.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        elif download.member is None:
            shutil.copyfile(archive, staged)
        else:
            _extract(archive, download.member, staged)
        if not item.is_dir:
            _verify(staged, item.sha256, f"{item.path} from {download.url}")
        if target.exists():
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        os.replace(staged, target)


def _gunzip_wanted(url: str, path: str) -> bool:
    """A ``.gz`` download saved under a name without ``.gz`` is decompressed."""
    return url.split("?")[0].endswith(".gz") and not path.endswith(".gz")


def _download_verified(download: Download, ctx: ScenarioContext) -> Path:
    """Download ``download.url`` once into the cache's ``_downloads`` and check its sha256."""
    from holistic.core.hashing import short_hash

    folder = _cache(ctx) / "_downloads" / short_hash(download.url, 16)
    name = PurePosixPath(download.url.split("?")[0]).name or "download"
    path = folder / name
    sums = _read_sums(_cache(ctx))
    expected = download.sha256 or sums.get(download.url)
    if path.is_file():
        _verify(path, expected, download.url)
        return path
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    try:
        request = urllib.request.Request(download.url, headers={"User-Agent": "holistic-data-fetch"})
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response, partial.open("wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        partial.unlink(missing_ok=True)
        raise _FetchError(f"{download.url}: {exc}") from None
    actual = file_sha256(partial)
    if expected is not None and actual != expected:
        partial.unlink(missing_ok=True)
        raise DataSourceError(
            f"checksum mismatch for {download.url}: downloaded sha256 {actual}, expected {expected}; "
            "refusing to use it (the file changed upstream or the download was tampered with)."
        )
    if expected is None:
        logger.warning("no pinned sha256 for %s; recording %s (trust on first use)", download.url, actual)
        _record_sum(_cache(ctx), download.url, actual)
    os.replace(partial, path)
    return path


def _read_sums(cache: Path) -> dict[str, str]:
    path = cache / _SUMS_FILE
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        digest, _, url = line.partition("  ")
        if digest and url:
            out[url] = digest
    return out


def _record_sum(cache: Path, url: str, digest: str) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / _SUMS_FILE).open("a", encoding="utf-8") as fh:
        fh.write(f"{digest}  {url}\n")


def _extract(archive: Path, member: str, dest: Path) -> None:
    """Extract one file, or a directory when ``member`` ends with ``/``, to ``dest``."""
    is_dir = member.endswith("/")
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if (n.startswith(member) if is_dir else n == member)]
            if not names:
                raise _FetchError(f"{archive.name} has no member {member!r}")
            for name in names:
                if name.endswith("/"):
                    continue
                out = _safe_join(dest, name[len(member) :]) if is_dir else dest
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(name) as src, out.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
        return
    try:
        tf = tarfile.open(archive)  # noqa: SIM115 - closed by the with block below
    except tarfile.TarError as exc:
        raise _FetchError(f"{archive.name} is neither a zip nor a tar archive: {exc}") from None
    with tf:
        found = False
        for info in tf:
            name = info.name.removeprefix("./")
            if not info.isfile() or not (name.startswith(member) if is_dir else name == member):
                continue
            found = True
            out = _safe_join(dest, name[len(member) :]) if is_dir else dest
            out.parent.mkdir(parents=True, exist_ok=True)
            extracted = tf.extractfile(info)
            if extracted is None:
                continue
            with extracted as src, out.open("wb") as dst:
                shutil.copyfileobj(src, dst)
        if not found:
            raise _FetchError(f"{archive.name} has no member {member!r}")


def _safe_join(base: Path, relative: str) -> Path:
    out = (base / relative).resolve()
    if not str(out).startswith(str(base.resolve())):
        raise _FetchError(f"archive member escapes the target folder: {relative!r}")
    return out
