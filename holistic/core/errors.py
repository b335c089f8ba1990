"""Errors users see. Each says where (file, line, field) and what would be valid."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class HolisticError(Exception):
    """Base class for errors reported to users without a traceback."""

    exit_code = 1


class SpecError(HolisticError):
    """A run spec or registry file is invalid (syntax, schema or semantics)."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        path: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        field = f"at {self.path}: " if self.path else ""
        return f"{where}{field}{self.message}"


class UnknownNameError(HolisticError, KeyError):
    """A scenario, model, metric or perturbation name is not registered."""

    exit_code = 2

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known)
        self.suggestions = did_you_mean(name, self.known)
        super().__init__(self.format())

    def format(self) -> str:
        msg = f"unknown {self.kind} {self.name!r}"
        if self.suggestions:
            msg += "; did you mean " + " or ".join(repr(s) for s in self.suggestions) + "?"
        return msg

    def __str__(self) -> str:  # KeyError would add quotes
        return self.format()


class LimitError(HolisticError):
    """Something a spec, a dataset or a server sent went past one of holistic's resource limits
    (template budget, run-matrix size, response size, schema size...). The message names the limit
    and the option that raises it; it stops the command (exit 2) rather than one run."""

    exit_code = 2


class ScenarioArgError(HolisticError, ValueError):
    """A scenario argument has a valid type but a value the scenario cannot honour."""

    exit_code = 2

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        """The argument at fault (its spec location is reported at compile time)."""
        super().__init__(message)


class DataSourceError(HolisticError):
    """A scenario's data cannot be found or fails its checksum."""


class StoreError(HolisticError):
    """The results store cannot be written or is incompatible."""

    exit_code = 2


class ModelError(HolisticError):
    """A model cannot be set up (missing key, missing weights, bad provider args)."""

    exit_code = 2


def did_you_mean(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    known = list(known)
    close = difflib.get_close_matches(name, known, n=n, cutoff=0.5)
    if not close:
        lowered = {k.lower(): k for k in known}
        close = [lowered[k] for k in difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.4)]
    if not close:
        close = [k for k in known if name.lower() in k.lower() or k.lower() in name.lower()][:n]
    return close
