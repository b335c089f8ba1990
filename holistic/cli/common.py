"""Helpers shared by the command-line entry points: error reporting and exit codes.

One error path for every command: anything a user or the environment can cause
(a bad spec, option, file or folder; a full or read-only disk; a damaged result)
ends in exactly one line ``prog: error: <file, line or option>: <what>`` and exit
code 2 (or the :class:`~holistic.core.errors.HolisticError` subclass's own code).
Only a bug in holistic prints a traceback, followed by a request to report it.

Exit codes: 0 success; 1 finished but some run failed; 2 bad input or environment;
3 (helm-run) finished but some requests failed; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import math
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from holistic.core.errors import HolisticError

EXIT_USAGE = 2
EXIT_BUG = 70
"""An unexpected exception: a bug in holistic (EX_SOFTWARE)."""
EXIT_INTERRUPTED = 130
REPORT_HINT = (
    "this is a bug in holistic, not in your input; please report it with the command you ran and the traceback above"
)


def fail(prog: str, exc: HolisticError) -> int:
    """Print ``prog: error: message`` (no traceback) and return the error's exit code."""
    from holistic.core.untrusted import terminal_safe

    # a message may quote hostile input (a file's name, a HELM run's name): no terminal control codes
    print(f"{prog}: error: {terminal_safe(str(exc).strip(), keep_newlines=True)}", file=sys.stderr)
    return exc.exit_code


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_main(prog: str, body: Callable[[], int], *, on_interrupt: str = "") -> int:
    """Call ``body`` turning user-facing errors and Ctrl-C into a message and an exit code.

    SIGTERM (``kill``, a scheduler stopping a job) is handled as Ctrl-C: the same clean stop."""
    if threading.current_thread() is not threading.main_thread():
        return _run_body(prog, body, on_interrupt)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run_body(prog, body, on_interrupt)
    finally:
        signal.signal(signal.SIGTERM, previous)


def end_program(code: int) -> int:
    """End a command started from the command line whose work is done, with exit ``code``,
    without the interpreter's teardown: after a run that loaded a model, freeing every module
    and object one by one took about 0.4 s more and changed nothing on disk. The exit
    handlers run (logging's flush among them) and the standard streams are flushed first.
    While a thread other than daemons is still running, this returns ``code`` and the
    interpreter ends the usual way, waiting for it."""
    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return code
    _exit_now(code)


def _exit_now(code: int) -> NoReturn:
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            stream.flush()
    os._exit(code)


def _run_body(prog: str, body: Callable[[], int], on_interrupt: str) -> int:
    try:
        return body()
    except HolisticError as exc:
        return fail(prog, exc)
    except OSError as exc:  # disk full, read-only folder, a directory where a file was expected...
        if isinstance(exc, BrokenPipeError):
            return _broken_pipe()
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{prog}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print(f"{prog}: error: out of memory", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted" + (f"; {on_interrupt}" if on_interrupt else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:
        traceback.print_exc()
        print(f"{prog}: internal error: {REPORT_HINT}", file=sys.stderr)
        return EXIT_BUG


def _broken_pipe() -> int:
    """e.g. ``helm-run spec --plan | head``: stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def patterns(values: Sequence[str] | None) -> list[str]:
    """Flatten repeated and comma-separated pattern options: ``-m a,b -m c`` -> ``[a, b, c]``."""
    out: list[str] = []
    for value in values or ():
        out.extend(p.strip() for p in value.split(",") if p.strip())
    return out


def dollars(text: str) -> float:
    """argparse type: a finite amount of US dollars >= 0 (``5``, ``2.50``, ``$10``)."""
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount of US dollars such as 2.50, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite amount of dollars >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def output_file(text: str) -> Path:
    """argparse type: a file to write, in a folder that exists, that is not a folder itself."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"folder {parent} does not exist")
    return path


def env_path(value: str | None, env_var: str) -> Path | None:
    """``value`` as a path, else the environment variable's value, else ``None``."""
    chosen = value if value else os.environ.get(env_var) or None
    return Path(chosen).expanduser() if chosen else None
