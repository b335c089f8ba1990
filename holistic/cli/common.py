"""Helpers shared by the command-line entry points: error reporting and exit codes.

Exit codes: 0 success; 1 finished but something failed (e.g. a run); 2 bad input
(spec, names, store, options; the :class:`~holistic.core.errors.HolisticError`
subclass decides); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from holistic.core.errors import HolisticError

EXIT_INTERRUPTED = 130


def fail(prog: str, exc: HolisticError) -> int:
    """Print ``prog: error: message`` (no traceback) and return the error's exit code."""
    print(f"{prog}: error: {str(exc).strip()}", file=sys.stderr)
    return exc.exit_code


def run_main(prog: str, body: Callable[[], int], *, on_interrupt: str = "") -> int:
    """Call ``body`` turning user-facing errors and Ctrl-C into a message and an exit code."""
    try:
        return body()
    except HolisticError as exc:
        return fail(prog, exc)
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted" + (f"; {on_interrupt}" if on_interrupt else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `helm-run spec --plan | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def patterns(values: Sequence[str] | None) -> list[str]:
    """Flatten repeated and comma-separated pattern options: ``-m a,b -m c`` -> ``[a, b, c]``."""
    out: list[str] = []
    for value in values or ():
        out.extend(p.strip() for p in value.split(",") if p.strip())
    return out


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def env_path(value: str | None, env_var: str) -> Path | None:
    """``value`` as a path, else the environment variable's value, else ``None``."""
    chosen = value if value else os.environ.get(env_var) or None
    return Path(chosen).expanduser() if chosen else None
