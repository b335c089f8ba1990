"""Where results live: a local folder (:class:`pathlib.Path`) or an fsspec URI (:class:`UriPath`).

This is the store's one filesystem abstraction. A plain path, and a ``file://`` URI (turned
into the same local path), keep the local code paths untouched: atomic rename, ``fsync``,
the kernel suite lock. Any other URI (``s3://bucket/prefix``, ``gs://``, ``az://``,
``memory://``, ...) becomes a :class:`UriPath`: the small part of the ``pathlib.Path``
interface the store uses, implemented on an fsspec filesystem.

On an object store a file is written with one ``PUT``: it appears whole or not at all, so
no temporary-and-rename is needed; the run manifest is still written last, and readers
trust only runs with a verified manifest. What such stores cannot give (a kernel lock) is
handled by :mod:`holistic.results.lock`.

A URI is shown (``str``) with its credentials masked by :func:`holistic.core.secrets.scrub_url`;
any error text that might repeat them goes through :meth:`UriPath.redact`.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

from holistic.core.errors import StoreError
from holistic.core.extras import absent
from holistic.core.secrets import Redactor, scrub_url, url_secrets

if TYPE_CHECKING:
    import pyarrow.dataset as ds

_URI_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def _spare_pandas_probe() -> None:
    """Answer, once, pyarrow's question whether pandas is installed, without importing pandas.

    The first time pyarrow converts a Python list to an array it imports pandas (about a
    quarter of a second), only to recognise pandas objects among the values: holistic
    never gives it any. Asked here while an import of pandas fails, pyarrow remembers "no"
    for that check alone; its pandas entry points (``to_pandas``, ``from_pandas``) still
    import pandas when called. Nothing is done when pandas is already imported."""
    if "pandas" in sys.modules:
        return
    with absent("pandas"):
        pa.array([0])


_spare_pandas_probe()


def uri_scheme(text: str) -> str | None:
    """``s3`` for ``s3://bucket/x``; ``None`` for a plain path."""
    match = _URI_RE.match(text)
    return match.group(1).lower() if match else None


@dataclass(frozen=True)
class _Stat:
    st_size: int


def _install_hint(scheme: str) -> str:
    """The package that implements ``scheme`` in fsspec (``s3fs`` for ``s3``), as an install command."""
    try:
        from fsspec.registry import known_implementations
    except ImportError:
        return "pip install fsspec"
    known = known_implementations.get(scheme)
    if not known:
        return "no fsspec package implements it"
    package = str(known.get("class", "")).split(".", 1)[0]
    return f"pip install {package}" if package else "see the fsspec documentation"


class UriPath:
    """A file or folder on an fsspec filesystem, with the ``pathlib.Path`` methods the store uses."""

    __slots__ = ("_root", "_root_path", "fs", "path")

    def __init__(self, fs: Any, path: str, root: str, root_path: str) -> None:
        self.fs = fs
        """The fsspec filesystem."""
        self.path = path
        """This location in the filesystem's own path syntax (``bucket/prefix/suite``)."""
        self._root = root  # the URI the user gave (may carry credentials: never shown)
        self._root_path = root_path

    @classmethod
    def parse(cls, uri: str, *, where: str = "--output-dir") -> UriPath:
        """Open ``uri``; an unknown scheme, or one whose package is missing, is a :class:`StoreError`."""
        scheme = uri_scheme(uri) or ""
        shown = scrub_url(uri)
        try:
            import fsspec.core
        except ImportError:
            raise StoreError(f"{where} {shown}: URIs need the fsspec package (pip install fsspec)") from None
        try:
            fs, root_path = fsspec.core.url_to_fs(uri)
        except ImportError:
            raise StoreError(
                f"{where} {shown}: the {scheme}:// scheme needs a package that is not installed "
                f"({_install_hint(scheme)})"
            ) from None
        except ValueError as exc:
            if "protocol not known" in str(exc).lower():
                raise StoreError(
                    f"{where} {shown}: unknown URI scheme {scheme!r}: no fsspec filesystem implements it "
                    f"(give a folder path, or a URI such as file:///abs/path, s3://bucket/prefix, gs://bucket/prefix)"
                ) from None
            raise StoreError(f"{where} {shown}: {Redactor(url_secrets(uri)).text(str(exc))}") from None
        except Exception as exc:  # a filesystem's constructor may fail in its own ways (bad options, no network)
            message = Redactor(url_secrets(uri)).text(f"{type(exc).__name__}: {exc}")
            raise StoreError(f"{where} {shown}: cannot open it: {message}") from None
        root_path = str(root_path).rstrip("/") or "/"
        return cls(fs, root_path, uri.rstrip("/") or uri, root_path)

    # -- identity ------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:  # Ray ships options to workers: rebuild the filesystem there
        return (_restore, (self._root, self.path))

    def __str__(self) -> str:
        rel = self.path[len(self._root_path) :] if self.path.startswith(self._root_path) else self.path
        return scrub_url(self._root + rel)

    def __repr__(self) -> str:
        return f"UriPath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriPath) and (self._root, self.path) == (other._root, other.path)

    def __lt__(self, other: UriPath) -> bool:
        return self.path < other.path

    def __hash__(self) -> int:
        return hash((self._root, self.path))

    @property
    def protocol(self) -> str:
        return uri_scheme(self._root) or ""

    def redact(self, text: str) -> str:
        """``text`` with any credential of this URI masked (for error messages)."""
        return Redactor(url_secrets(self._root)).text(text)

    # -- path arithmetic -------------------------------------------------------

    def __truediv__(self, name: str) -> UriPath:
        parts = str(name).strip("/").split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"invalid path component {name!r}")
        return UriPath(self.fs, f"{self.path.rstrip('/')}/{'/'.join(parts)}", self._root, self._root_path)

    @property
    def name(self) -> str:
        return posixpath.basename(self.path.rstrip("/"))

    @property
    def parent(self) -> UriPath:
        return UriPath(self.fs, posixpath.dirname(self.path.rstrip("/")) or "/", self._root, self._root_path)

    def with_name(self, name: str) -> UriPath:
        return self.parent / name

    def expanduser(self) -> UriPath:
        return self

    def resolve(self) -> UriPath:
        return self

    # -- queries (listings are never served from fsspec's cache: another writer may have changed them)

    def _fresh(self) -> None:
        self.fs.invalidate_cache(self.path)

    def exists(self) -> bool:
        self._fresh()
        return bool(self.fs.exists(self.path))

    def is_file(self) -> bool:
        self._fresh()
        return bool(self.fs.isfile(self.path))

    def is_dir(self) -> bool:
        self._fresh()
        return bool(self.fs.isdir(self.path))

    def iterdir(self) -> Iterator[UriPath]:
        self._fresh()
        try:
            entries = self.fs.ls(self.path, detail=False)
        except FileNotFoundError:
            return iter(())
        names = sorted({posixpath.basename(str(e).rstrip("/")) for e in entries} - {"", self.name})
        return iter([self / n for n in names])

    def stat(self) -> _Stat:
        self._fresh()
        return _Stat(st_size=int(self.fs.size(self.path)))

    # -- reading and writing ---------------------------------------------------

    def open(self, mode: str = "rb") -> IO[bytes]:
        handle: IO[bytes] = self.fs.open(self.path, mode)
        return handle

    def read_bytes(self) -> bytes:
        return bytes(self.fs.cat_file(self.path))

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.read_bytes().decode(encoding)

    def write_bytes(self, data: bytes) -> int:
        """One whole-object write (a single ``PUT`` on object stores: visible whole or not at all)."""
        self.fs.pipe_file(self.path, data)
        return len(data)

    def write_text(self, text: str, encoding: str = "utf-8") -> int:
        return self.write_bytes(text.encode(encoding))

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        del parents  # object stores have no folders to create one by one
        self.fs.makedirs(self.path, exist_ok=True)
        if not exist_ok and not self.is_dir():
            raise FileNotFoundError(str(self))

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self.fs.rm_file(self.path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def arrow_filesystem(self) -> Any:
        """This filesystem as a ``pyarrow.fs.FileSystem`` (for Parquet datasets)."""
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        return PyFileSystem(FSSpecHandler(self.fs))


def _restore(root: str, path: str) -> UriPath:
    base = UriPath.parse(root)
    return UriPath(base.fs, path, base._root, base._root_path)


Location = Path | UriPath
"""Where a results file or folder is: a local path or a URI location."""


def location(value: str | Path | UriPath, *, where: str = "--output-dir") -> Location:
    """A results location from a CLI value: a path, a ``file://`` URI (the same local path) or any fsspec URI."""
    if isinstance(value, Path | UriPath):
        return value
    local = _local_path(value, where=where)
    return local if local is not None else UriPath.parse(value, where=where)


def _local_path(value: str, *, where: str) -> Path | None:
    """The local path a CLI value names (a path, or a ``file://`` URI); ``None`` for another URI."""
    scheme = uri_scheme(value)
    if scheme is None:
        return Path(value)
    if scheme == "file":
        return Path(file_uri_path(value, where=where))
    return None


def file_uri_path(uri: str, *, where: str) -> str:
    """``/abs/dir`` for ``file:///abs/dir`` (or ``file://localhost/abs/dir``)."""
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost"):
        raise StoreError(
            f"{where} {scrub_url(uri)}: a file:// URI names a folder on this machine "
            f"(file:///abs/path), not on host {parts.netloc!r}"
        )
    path = unquote(parts.path)
    if not path:
        raise StoreError(f"{where} {scrub_url(uri)}: a file:// URI needs an absolute path (file:///abs/path)")
    return path


def local_folder(value: str | Path, *, where: str) -> Path:
    """A folder that must be on this machine (the SQLite request cache): a path or a ``file://`` URI."""
    if isinstance(value, Path):
        return value
    local = _local_path(value, where=where)
    if local is not None:
        return local
    raise StoreError(
        f"{where} {scrub_url(value)}: must be a local folder, not a {uri_scheme(value)}:// URI (SQLite is not safe on "
        f"object stores or network filesystems: keep the request cache on a local disk)"
    )


def is_remote(loc: Location) -> bool:
    return isinstance(loc, UriPath)


def shown(loc: Location) -> str:
    """``loc`` for messages (credentials masked)."""
    return str(loc)


# -- Parquet -----------------------------------------------------------------------


DICTIONARY_MAX_VALUE_BYTES = 1024 * 1024
"""A text column holding a longer value is written without dictionary encoding (see :func:`parquet_options`)."""


def parquet_options(table: pa.Table) -> dict[str, Any]:
    """How the store writes ``table`` (zstd): a text column with a huge value is written without
    dictionary encoding and without min/max statistics. In the dictionary page such a value sits
    whole, so reading it back would take four copies of it instead of two; the statistics keep a
    copy each of the column's least and greatest value, and writing them took three more (one
    200 MB field: 600 MB of the writer's peak, where the page itself needs none). Tables without
    such a value are written exactly as before."""
    huge = set()
    for name, column in zip(table.column_names, table.columns, strict=True):
        if column.nbytes <= DICTIONARY_MAX_VALUE_BYTES:
            continue  # no value can be longer than the whole column: compute's import is saved
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or pa.types.is_binary(column.type):
            import pyarrow.compute as pc

            longest = pc.max(pc.binary_length(column)).as_py()
            if longest is not None and longest > DICTIONARY_MAX_VALUE_BYTES:
                huge.add(name)
    if not huge:
        return {"compression": "zstd"}
    usual = [n for n in table.column_names if n not in huge]
    return {"compression": "zstd", "use_dictionary": usual, "write_statistics": usual}


def parquet_bytes(table: pa.Table) -> bytes:
    """``table`` encoded as the store writes it (:func:`parquet_options`), in memory."""
    sink = io.BytesIO()
    pq.write_table(table, sink, **parquet_options(table))
    return sink.getvalue()


def read_json_object(loc: Location, what: str) -> dict[str, Any]:
    """The JSON object in ``loc``, which holds ``what`` (named in the :class:`StoreError`
    a missing, unreadable or non-object file raises)."""
    try:
        data = json.loads(loc.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{loc}: missing ({what})") from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"{loc}: cannot read {what}: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict):
        raise StoreError(f"{loc}: not {what} (expected a JSON object)")
    return data


def read_parquet(loc: Location, columns: Sequence[str] | None = None, *, present: bool = False) -> pa.Table:
    """One Parquet file (only ``columns``, top-level names, when given; with ``present``, only those of
    them the file has, the file opened once).

    Read as a single file (``ParquetFile``), not as a dataset (``read_table``): the same table,
    without importing ``pyarrow.dataset`` and ``pyarrow.compute``, which a short run never needs.
    """

    def read(source: Any) -> pa.Table:
        parquet = pq.ParquetFile(source)
        selected = None if columns is None else list(columns)
        if selected is not None and present:
            names = set(parquet.schema_arrow.names)
            selected = [c for c in selected if c in names]
        return parquet.read(columns=selected)

    if isinstance(loc, UriPath):
        with loc.arrow_filesystem().open_input_file(loc.path) as fh:
            return read(fh)
    return read(loc)


def read_parquet_schema(loc: Location) -> pa.Schema:
    if isinstance(loc, UriPath):
        with loc.open("rb") as fh:
            return pq.read_schema(fh)
    return pq.read_schema(loc)


def parquet_dataset(locs: Sequence[Location], dictionary: Sequence[str] = ()) -> ds.Dataset:
    """One dataset over Parquet files that all live in one place (all paths, or all on one filesystem);
    the columns named in ``dictionary`` are read as dictionaries."""
    import pyarrow.dataset as ds  # imports pandas: only the readers of many runs need it, never helm-run

    form = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=list(dictionary)))
    remote = [loc for loc in locs if isinstance(loc, UriPath)]
    if remote:
        return ds.dataset([loc.path for loc in remote], format=form, filesystem=remote[0].arrow_filesystem())
    return ds.dataset([str(loc) for loc in locs], format=form)
