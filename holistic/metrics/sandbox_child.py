"""The program that runs *inside* the sandbox: limits first, then the model's code.

:mod:`holistic.metrics.sandbox` starts the sandbox's interpreter as ``python -I -c <this
file's text>`` (nothing of the package is visible in there) and writes one JSON task
to its standard input. This program

1. reads the task, then points standard input at ``/dev/null``;
2. sets its resource limits (``setrlimit``: address space, CPU seconds, processes,
   file size, no core files), so everything after this line, and every process it
   starts, runs under them;
3. runs the task — ``program`` (a HumanEval check program: passes when it runs to the
   end) or ``apps`` (one candidate against each test case, HELM's APPS comparison) —
   with the task's per-test time limit (``SIGALRM``);
4. writes its findings as JSON lines to the report pipe it was given, one line per
   test and a last line ``{"done": ...}``.

Only the standard library is used, and only the process that started the task
reports: processes the model's code forks and that return here exit quietly.
A program that exits by itself (``os._exit``, ``sys.exit`` at the top level) never
reaches the last line, so it cannot pass.
"""

import contextlib
import errno
import functools
import io
import json
import os
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any

Report = Callable[[dict[str, Any]], None]
_MAIN_PID = os.getpid()


class _Timeout(BaseException):
    """The per-test time limit (a BaseException so a bare ``except Exception`` cannot swallow it)."""


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout()


def _limit_of(exc: BaseException) -> str | None:
    """The limit an exception shows the code ran into, if any."""
    if isinstance(exc, _Timeout):
        return "time"
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, RecursionError):
        return None
    if isinstance(exc, OSError):
        if exc.errno == errno.EAGAIN and isinstance(exc, BlockingIOError):
            return "processes"
        if exc.errno == errno.EFBIG:
            return "file_size"
        if exc.errno == errno.ENOSPC:
            return "disk"
        if exc.errno == errno.EMFILE:
            return "open_files"
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, _Timeout):
        return "timed out"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _set_limits(limits: dict[str, Any]) -> None:
    memory = int(limits["memory_bytes"])
    cpu = int(limits["cpu_time_s"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_NPROC, (int(limits["max_processes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["max_file_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Writing past the file-size limit raises EFBIG instead of killing silently.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _attempt(timeout: float, test: Callable[[], bool]) -> dict[str, Any]:
    """Run one test under the time limit: passed, the limit it ran into, the error it raised.
    Only the task's own process returns; processes the model's code forked exit here."""
    outcome: dict[str, Any] = {"passed": False, "limit": None, "error": None}
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        outcome["passed"] = bool(test())
    except BaseException as exc:  # the model's code may raise anything, SystemExit included
        signal.setitimer(signal.ITIMER_REAL, 0)
        if os.getpid() != _MAIN_PID:
            os._exit(1)
        outcome["limit"], outcome["error"] = _limit_of(exc), _describe(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if os.getpid() != _MAIN_PID:
        os._exit(0)
    return outcome


def _run_program(task: dict[str, Any], report: Report) -> None:
    """A whole program (HumanEval's: prompt, completion, tests, ``check(entry_point)``)."""

    def run() -> bool:
        exec(compile(task["program"], "<sample>", "exec"), {"__name__": "__sample__"})
        return True

    report(_attempt(float(task["timeout_s"]), run))


# --- APPS -----------------------------------------------------------------------------

# The imports HELM puts before every APPS candidate (as the APPS authors' harness does).
_APPS_HEADER = (
    "import sys\nimport time\nimport itertools\n"
    "from itertools import accumulate, product, permutations, combinations\n"
    "import collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, ChainMap\n"
    "from functools import lru_cache\nimport math\n"
    "from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2\n"
    "import fractions\nfrom typing import List, Tuple\n"
    "try:\n    import numpy as np\nexcept ImportError:\n    pass\n"
    "import random\nimport heapq\nfrom heapq import *\n"
)


def _int_keys(value: Any) -> Any:
    """JSON makes dict keys strings; the APPS harness turns them back into ints where it can."""
    if isinstance(value, dict):
        try:
            return {int(k): v for k, v in value.items()}
        except ValueError:
            return value
    return value


def _call_based_match(output: Any, expected: Any) -> bool:
    if isinstance(output, tuple):
        output = list(output)
    if output == expected:
        return True
    if isinstance(expected, list) and expected:
        if output == expected[0]:
            return True
        try:
            if isinstance(output[0], tuple) and [list(x) for x in output] == expected[0]:
                return True
        except (TypeError, IndexError, KeyError):
            pass
    return False


def _numbers(tokens: list[str]) -> list[float] | None:
    try:
        return [float(t) for t in tokens]
    except ValueError:
        return None


def _close(a: list[float], b: list[float]) -> bool:
    """numpy's ``allclose`` defaults (rtol 1e-5, atol 1e-8), as the APPS harness compares numbers."""
    return len(a) == len(b) and all(abs(x - y) <= 1e-8 + 1e-5 * abs(y) for x, y in zip(a, b, strict=True))


def _stdio_match(printed: str, expected: Any) -> bool:
    """The APPS harness's comparisons, most exact first: the whole text; the non-empty
    lines, each stripped; the numbers, within tolerance; the sets of whitespace-separated
    tokens per line; those sets with numbers rounded to 3 places."""
    if isinstance(expected, list):
        expected = "\n".join(str(e) for e in expected)
    expected = str(expected)
    if printed.strip() == expected.strip():
        return True
    out_lines = [line.strip() for line in printed.split("\n") if line.strip()]
    exp_lines = [line.strip() for line in expected.split("\n") if line.strip()]
    if out_lines == exp_lines:
        return True
    out_nums, exp_nums = _numbers(printed.split()), _numbers(expected.split())
    if out_nums is not None and exp_nums is not None and _close(out_nums, exp_nums):
        return True
    out_sets = {frozenset(line.split()) for line in out_lines}
    exp_sets = {frozenset(line.split()) for line in exp_lines}
    if out_sets == exp_sets:
        return True
    try:
        return {frozenset(round(float(t), 3) for t in s) for s in out_sets} == {
            frozenset(round(float(t), 3) for t in s) for s in exp_sets
        }
    except ValueError:
        return False


def _run_apps(task: dict[str, Any], report: Report) -> None:
    """One APPS candidate against every test case: ``call`` (``fn_name`` given: call the
    function, compare return values) or standard input / output."""
    timeout = float(task["timeout_s"])
    source = _APPS_HEADER + task["program"]
    fn_name: str = task.get("fn_name") or ""
    try:
        code = compile(source, "<sample>", "exec")
    except BaseException as exc:
        report({"passed": False, "limit": None, "error": "compile error: " + _describe(exc)})
        return
    namespace: dict[str, Any] = {"__name__": "__sample__"}
    found: list[Callable[..., Any]] = []

    def load() -> bool:
        exec(code, namespace)
        target = namespace["Solution"]() if "class Solution" in task["program"] else None
        found.append(getattr(target, fn_name) if target is not None else namespace[fn_name])
        return True

    if fn_name:
        loaded = _attempt(timeout, load)
        if not loaded["passed"]:
            report({**loaded, "error": f"cannot load {fn_name}: {loaded['error']}"})
            return

    def call(inputs: Any, expected: Any) -> bool:
        args = list(inputs) if isinstance(inputs, list) else [inputs]
        if args:
            args[0] = _int_keys(args[0])
        return _call_based_match(found[0](*args), _int_keys(expected))

    def stdio(inputs: Any, expected: Any) -> bool:
        real_stdin, real_stdout = sys.stdin, sys.stdout
        sys.stdin = io.StringIO("\n".join(inputs) if isinstance(inputs, list) else str(inputs))
        sys.stdout = io.StringIO()
        try:
            with contextlib.suppress(SystemExit):
                exec(code, {"__name__": "__main__"})
            printed = sys.stdout.getvalue()
        finally:
            sys.stdin, sys.stdout = real_stdin, real_stdout
        return _stdio_match(printed, expected)

    test = call if fn_name else stdio
    for inputs, expected in zip(task["inputs"], task["outputs"], strict=True):
        report(_attempt(timeout, functools.partial(test, inputs, expected)))


def main() -> None:
    task = json.loads(sys.stdin.buffer.read())
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    channel = os.fdopen(int(task["report_fd"]), "w", buffering=1, encoding="utf-8")

    def report(outcome: dict[str, Any]) -> None:
        channel.write(json.dumps(outcome) + "\n")

    _set_limits(task["limits"])
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(10_000)
    if task["kind"] == "apps":
        _run_apps(task, report)
    else:
        _run_program(task, report)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):  # the model's code may have replaced or closed them
            stream.flush()
    report({"done": True})
    channel.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
