"""Read HELM's JSON files with bounded memory, hashing every byte read.

HELM writes ``scenario_state.json`` as one JSON object whose ``request_states`` array
holds every request of the run; on a large run that file is hundreds of MB. Loading it
with :func:`json.load` costs several times its size in Python objects. :class:`JsonStream`
instead reads the file in blocks and decodes one value at a time with
:meth:`json.JSONDecoder.raw_decode`: the members of the top-level object one by one, and
the elements of a chosen array member one by one, so memory stays at about the largest
single element plus one block, whatever the file's size.

Every byte read goes through sha256, so the digest of the file comes for free once the
stream has been read to its end (:attr:`JsonStream.sha256`). A file that ends early (a
truncated download) or is not JSON raises :class:`HelmFileError` naming the file and the
byte offset.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from holistic.core.errors import HolisticError
from holistic.core.untrusted import UntrustedValueError, check_value

BLOCK = 1 << 20
"""Bytes read at a time."""
MAX_ELEMENT = 256 << 20
"""The largest single JSON value held at once (a request state of 256 MB is not a HELM file)."""
_WHITESPACE = " \t\n\r"
_TOKEN_SLACK = 64
"""An error this close to the end of the buffer may be a value cut by the block boundary."""


class HelmFileError(HolisticError):
    """A HELM file that is missing, truncated or not what HELM writes (exit 2)."""

    exit_code = 2

    def __init__(self, path: Path, problem: str, *, field: str | None = None) -> None:
        self.path = path
        self.problem = problem
        self.field = field
        where = f"{path}" + (f": at {field}" if field else "")
        super().__init__(f"{where}: {problem}")


class JsonStream:
    """A JSON file read value by value (see the module docstring)."""

    def __init__(self, path: Path, *, block: int = BLOCK) -> None:
        self.path = Path(path)
        self._block = block
        self._digest = hashlib.sha256()
        self._buf = ""
        self._pos = 0
        self._offset = 0
        """Characters dropped from the front of the buffer (for error offsets)."""
        self._eof = False
        self._decoder = json.JSONDecoder()
        try:
            self._fh: IO[bytes] = self.path.open("rb")
        except FileNotFoundError:
            raise HelmFileError(self.path, "missing") from None
        except OSError as exc:
            raise HelmFileError(self.path, f"unreadable: {exc.strerror or exc}") from None
        self._utf8 = _Utf8Decoder()

    def __enter__(self) -> JsonStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._fh.close()

    @property
    def sha256(self) -> str:
        """The file's sha256; read the stream to its end first (:meth:`finish`)."""
        return self._digest.hexdigest()

    # -- low level -----------------------------------------------------------

    def _fill(self) -> bool:
        """Read one more block; ``False`` at the end of the file."""
        if self._eof:
            return False
        data = self._fh.read(self._block)
        if not data:
            self._eof = True
            tail = self._utf8.finish(self.path)
            self._buf += tail
            return bool(tail)
        self._digest.update(data)
        if self._pos > len(self._buf) // 2:  # drop what was consumed
            self._offset += self._pos
            self._buf = self._buf[self._pos :]
            self._pos = 0
        self._buf += self._utf8.decode(data, self.path)
        return True

    def _truncated(self, what: str) -> HelmFileError:
        return HelmFileError(self.path, f"truncated: the file ends inside {what} (not a whole HELM file)")

    def _peek(self, what: str) -> str:
        """The next non-whitespace character (not consumed)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in _WHITESPACE:
                self._pos += 1
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill():
                raise self._truncated(what)

    def _expect(self, chars: str, what: str) -> str:
        found = self._peek(what)
        if found not in chars:
            raise HelmFileError(
                self.path, f"not valid JSON at character {self._offset + self._pos}: expected {what}, found {found!r}"
            )
        self._pos += 1
        return found

    def _value(self, what: str) -> Any:
        """Decode the next whole JSON value, reading more blocks until it is complete."""
        self._peek(what)
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buf, self._pos)
            except RecursionError:
                raise HelmFileError(self.path, f"{what} is nested too deeply to be a HELM file") from None
            except json.JSONDecodeError as exc:
                if not self._needs_more(exc):
                    raise HelmFileError(
                        self.path, f"not valid JSON at character {self._offset + exc.pos}: {exc.msg}"
                    ) from None
                if len(self._buf) - self._pos > MAX_ELEMENT:
                    raise HelmFileError(
                        self.path, f"{what} is larger than {MAX_ELEMENT >> 20} MB; not a HELM file"
                    ) from None
                if not self._fill():
                    raise self._truncated(what) from None
                continue
            except ValueError as exc:  # an integer past Python's digit limit
                raise HelmFileError(self.path, f"{what}: {exc}") from None
            # a number at the very end of the buffer may go on in the next block
            if end == len(self._buf) and isinstance(value, int | float) and self._fill():
                continue
            self._pos = end
            return value

    def _needs_more(self, exc: json.JSONDecodeError) -> bool:
        """Whether a decoding error may only mean that the value goes on past the buffer."""
        if exc.msg.startswith("Unterminated string"):
            return True
        return exc.pos >= len(self._buf) - _TOKEN_SLACK

    # -- the file's shape ----------------------------------------------------

    def checked(self, value: Any, field: str) -> Any:
        """``value`` once :func:`~holistic.core.untrusted.check_value` took it (depth, sizes, 64-bit
        integers, finite floats), else a :class:`HelmFileError` naming the file and the field."""
        try:
            check_value(value, field)
        except UntrustedValueError as exc:
            raise HelmFileError(self.path, exc.problem, field=exc.field or None) from None
        return value

    def begin(self) -> str:
        """Consume the opening ``{`` or ``[`` of the top-level value and return it."""
        return self._expect("{[", "a JSON object or array")

    def members(self, streamed: str | None = None) -> Iterator[tuple[str, Any]]:
        """The members of the top-level object (after :meth:`begin`) in file order. The value of
        the member named ``streamed`` is not decoded: its key is yielded with ``None`` and the
        caller consumes it with :meth:`elements` before asking for the next member."""
        if self._peek("a member or the end of the object") == "}":
            self._pos += 1
            return
        while True:
            key = self._value("a member name")
            if not isinstance(key, str):
                raise HelmFileError(self.path, f"not valid JSON: a member name must be a string, found {key!r}")
            self._expect(":", "':' after a member name")
            yield (key, None) if key == streamed else (key, self.checked(self._value(f"the value of {key!r}"), key))
            if self._expect(",}", "',' or '}' after a member") == "}":
                return

    def top_array(self, what: str) -> Iterator[Any]:
        """The elements of the file's top-level array (an object there is an error naming ``what``)."""
        if self._peek("a JSON array") != "[":
            raise HelmFileError(self.path, f"expected a JSON array of {what}, found {self._buf[self._pos]!r}")
        return self.elements(what, field="")

    def elements(self, what: str, field: str | None = None) -> Iterator[Any]:
        """The elements of the array that comes next, one at a time, each checked as ``field[i]``
        (default: ``what[i]``)."""
        prefix = what if field is None else field
        self._expect("[", f"an array ({what})")
        if self._peek(f"the elements of {what}") == "]":
            self._pos += 1
            return
        index = 0
        while True:
            yield self.checked(self._value(f"an element of {what}"), f"{prefix}[{index}]")
            index += 1
            if self._expect(",]", f"',' or ']' in {what}") == "]":
                return

    def finish(self) -> None:
        """Check that nothing but whitespace follows, and read to the end (completing the digest)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in _WHITESPACE:
                self._pos += 1
            if self._pos < len(self._buf):
                raise HelmFileError(self.path, f"not valid JSON: extra data at character {self._offset + self._pos}")
            if not self._fill():
                return


class _Utf8Decoder:
    """Incremental UTF-8 decoding that reports bad bytes with the file's name."""

    def __init__(self) -> None:
        import codecs

        self._dec = codecs.getincrementaldecoder("utf-8")()

    def decode(self, data: bytes, path: Path) -> str:
        try:
            return str(self._dec.decode(data))
        except UnicodeDecodeError as exc:
            raise HelmFileError(path, f"not UTF-8 text ({exc.reason})") from None

    def finish(self, path: Path) -> str:
        try:
            return str(self._dec.decode(b"", final=True))
        except UnicodeDecodeError:
            raise HelmFileError(path, "truncated: the file ends inside a UTF-8 character") from None


def read_json(path: Path) -> tuple[Any, str]:
    """A small HELM JSON file, whole, with its sha256."""
    with JsonStream(path) as stream:
        value = stream.checked(stream._value("the file's JSON value"), "")
        stream.finish()
        return value, stream.sha256


def iter_array(path: Path, what: str) -> Iterator[Any]:
    """The elements of a file whose top-level value is an array, one at a time; the file is
    checked to its end (a truncated file raises after its last whole element)."""
    with JsonStream(path) as stream:
        yield from stream.top_array(what)
        stream.finish()
