"""The one place where a model's output is executed: a bubblewrap sandbox per sample.

Every sample runs in a fresh ``bwrap`` with every namespace unshared (user, mount,
PID, network, IPC, UTS, cgroup) and ``--die-with-parent``:

- **network**: a new network namespace with nothing but a loopback that is down; no
  connection leaves it, to 127.0.0.1 included;
- **files**: a new mount namespace holding only the interpreter's folders (read-only),
  ``/proc`` of the sandbox's own PID namespace, a minimal ``/dev`` and two per-sample
  sized ``tmpfs``: ``/tmp`` (the working directory) and ``/dev/shm``, together
  ``max_file_mb`` (a quarter of it for ``/dev/shm``). The root and ``/dev`` are
  read-only, so nothing else is writable: tmpfs pages live in host memory and escape
  ``RLIMIT_AS``, so every writable mount has a size. No other host path exists in there:
  not the project, not the data, not ``/etc``, not ``$HOME``;
- **processes**: a new PID namespace; when the sample's first process ends, the kernel
  kills every process left in it, so nothing outlives the sample;
- **privileges**: all capabilities dropped, a fresh user namespace mapping the sample
  to an unprivileged uid (65534); when holistic itself runs as root, bubblewrap is
  started as that uid too, so the per-user process limit holds. The sample cannot make a
  user namespace of its own (which would give it the capabilities to mount an unsized
  tmpfs): see :mod:`holistic.metrics.sandbox_userns`;
- **host memory**: what samples run at once can pin in tmpfs is at most
  ``max(PINNED_FILES_MB, max_file_mb)``: :func:`sample_concurrency` runs fewer samples at
  once when ``concurrency * max_file_mb`` would exceed :data:`PINNED_FILES_MB`;
- **limits** (:class:`Limits`): wall time (the sandbox is killed), CPU seconds,
  address space, processes, bytes written to standard output and error, file size.

The sandboxed program is :mod:`holistic.metrics.sandbox_child`: it sets the limits
with ``setrlimit`` before any of the model's code runs, runs it, and reports through a
pipe. A sample that crosses a limit is a failed sample whose :class:`Execution` names
the limit.

Where the sandbox cannot be made (no ``bwrap`` on ``PATH``, user namespaces disabled,
no interpreter to run), :func:`sandbox_problem` says what is missing and
:func:`run_samples` raises :class:`SandboxUnavailable`: code is never run any other
way.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from holistic.core.errors import HolisticError
from holistic.metrics.sandbox_userns import seccomp_fd, userns_args, userns_problem

_CHILD = Path(__file__).with_name("sandbox_child.py")
_NOBODY = 65534
_STARTUP_S = 10.0
"""Wall time allowed on top of the per-test limits for starting the sandbox and the interpreter."""
_REPORT_CAP = 1 << 20
_TAIL = 2000
"""Characters of standard output and error kept per sample."""
PINNED_FILES_MB = 1024
"""Host memory the tmpfs of the samples run at once may hold together (see :func:`sample_concurrency`)."""


class SandboxUnavailable(HolisticError):
    """Code scoring was asked for on a host that cannot make the sandbox."""

    exit_code = 2


@dataclass(frozen=True)
class Limits:
    """What one sample may use. Crossing any of them fails the sample, the limit named."""

    timeout_s: float = 3.0
    """Per test (HELM's 3 s for HumanEval and APPS); the sandbox is killed at the sum of the
    per-test limits plus start-up time."""
    cpu_time_s: int = 10
    """CPU seconds of each process (``RLIMIT_CPU``)."""
    memory_mb: int = 512
    """Address space of each process (``RLIMIT_AS``)."""
    max_processes: int = 4
    """Processes and threads in the sandbox, its init included (``RLIMIT_NPROC``)."""
    max_output_bytes: int = 1 << 20
    """Standard output plus standard error; the sandbox is killed when it writes more."""
    max_file_mb: int = 16
    """The sample's file budget: the sizes of its writable mounts together (``/tmp`` and
    ``/dev/shm``), and the size of any one file written (``RLIMIT_FSIZE``)."""

    def mount_sizes(self) -> tuple[int, int]:
        """Bytes of the ``/tmp`` and ``/dev/shm`` tmpfs (``/dev/shm`` 0: left read-only)."""
        shm = (self.max_file_mb << 20) // 4
        return (self.max_file_mb << 20) - shm, shm

    def child_limits(self) -> dict[str, int]:
        return {
            "memory_bytes": self.memory_mb << 20,
            "cpu_time_s": self.cpu_time_s,
            "max_processes": self.max_processes,
            "max_file_bytes": self.max_file_mb << 20,
        }


@dataclass(frozen=True)
class Execution:
    """What happened to one sample in the sandbox."""

    passed: bool
    """Every test passed (and the program reached its end)."""
    tests: tuple[bool, ...] = ()
    """Per test case (APPS); HumanEval's program is one test."""
    limit: str | None = None
    """The limit that stopped it: ``time``, ``cpu_time``, ``memory``, ``processes``,
    ``output``, ``file_size``, ``disk``, ``open_files``; ``None`` when none did."""
    reason: str = ""
    """``passed``, or why not (the error raised, the limit, or how the process ended)."""
    exit_code: int | None = None
    wall_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    """The last characters of what the sample printed."""
    setup_error: bool = field(default=False, compare=False)
    """The sandbox itself failed to start (an infrastructure problem, not the sample's)."""

    def record(self) -> dict[str, Any]:
        """JSON-compatible facts for the results (stored with the per-instance value)."""
        out = asdict(self)
        out["tests"] = list(self.tests)
        out["wall_s"] = round(self.wall_s, 3)
        del out["setup_error"]
        return out


@dataclass(frozen=True)
class Sample:
    """One program to run: ``kind`` ``program`` (passes when it runs to its end) or ``apps``."""

    program: str
    kind: str = "program"
    fn_name: str | None = None
    inputs: tuple[Any, ...] = ()
    outputs: tuple[Any, ...] = ()

    @property
    def num_tests(self) -> int:
        return len(self.inputs) if self.kind == "apps" else 1


def interpreter() -> Path | None:
    """The Python that runs inside the sandbox: the system's ``/usr/bin/python3`` when there
    is one (its folders are readable by any user), else the interpreter running holistic."""
    system = Path("/usr/bin/python3")
    if system.exists():
        return system.resolve()
    base = Path(getattr(sys, "_base_executable", sys.executable) or sys.executable)
    return base.resolve() if base.exists() else None


def _mounts(python: Path) -> list[str]:
    """Read-only binds of the interpreter's folders (and the system libraries it links)."""
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    prefix = Path(sys.base_prefix).resolve() if not str(python).startswith("/usr/") else None
    if prefix is not None and prefix != Path("/usr") and python.is_relative_to(prefix):
        args += ["--ro-bind", str(prefix), str(prefix)]
    return args


def _drop_to_nobody() -> bool:
    """Run bubblewrap as an unprivileged uid when holistic runs as root (the kernel does
    not apply the process limit to root's processes, in any namespace)."""
    return os.geteuid() == 0


def _writable_mounts(limits: Limits) -> list[str]:
    """``/dev`` read-only but for sized ``/dev/shm``, a sized ``/tmp``; the root read-only at the end."""
    tmp, shm = limits.mount_sizes()
    args = ["--dev", "/dev", "--remount-ro", "/dev"]
    if shm:
        args += ["--size", str(shm), "--tmpfs", "/dev/shm"]
    return [*args, "--size", str(tmp), "--tmpfs", "/tmp", "--remount-ro", "/"]


def bwrap_command(bwrap: str, python: Path, limits: Limits, userns: Sequence[str] = ("--disable-userns",)) -> list[str]:
    """The full command line of one sandbox (``userns``: the arguments refusing nested user
    namespaces, from :func:`~holistic.metrics.sandbox_userns.userns_args`)."""
    return [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        *userns,
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--cap-drop",
        "ALL",
        "--uid",
        str(_NOBODY),
        "--gid",
        str(_NOBODY),
        "--hostname",
        "sandbox",
        *_mounts(python),
        "--proc",
        "/proc",
        *_writable_mounts(limits),
        "--chdir",
        "/tmp",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
        "--",
        str(python),
        "-I",
        "-c",
        _CHILD.read_text(encoding="utf-8"),
    ]


@cache
def sandbox_problem() -> str | None:
    """What this host lacks to run code in the sandbox (``None``: nothing; checked once
    per process by starting one sandbox)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return (
            "bubblewrap ('bwrap') is not on PATH; install it (Debian/Ubuntu: apt-get install bubblewrap, "
            "Fedora: dnf install bubblewrap)"
        )
    python = interpreter()
    if python is None:
        return "no Python interpreter to run inside the sandbox (/usr/bin/python3 is missing)"
    nested = userns_problem(bwrap)
    if nested is not None:
        return nested
    probe = execute(Sample(program="pass"), Limits(timeout_s=5.0), _bwrap=bwrap, _python=python)
    if probe.setup_error or not probe.passed:
        detail = (probe.stderr or probe.reason).strip().splitlines()
        text = detail[-1] if detail else probe.reason
        if "namespace" in text.lower() or "permission" in text.lower() or "operation not permitted" in text.lower():
            return f"bubblewrap cannot create its namespaces here (user namespaces disabled?): {text}"
        return f"bubblewrap failed to start a sandbox: {text}"
    return None


def require_sandbox() -> None:
    """Raise :class:`SandboxUnavailable` naming what is missing (never fall back)."""
    problem = sandbox_problem()
    if problem is not None:
        raise SandboxUnavailable(
            f"code scoring needs the OS sandbox, which this host cannot provide: {problem}. "
            "Model-written code is never run outside it."
        )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _tail(data: bytearray) -> str:
    return bytes(data[-4 * _TAIL :]).decode("utf-8", "replace")[-_TAIL:]


def _exit_reason(code: int | None) -> tuple[str | None, str]:
    """The limit and the words for a sandbox that ended without a final report."""
    if code is None:
        return None, "killed"
    signum = code - 128 if code > 128 else -code if code < 0 else 0
    if signum == signal.SIGXCPU:
        return "cpu_time", "CPU time limit exceeded (SIGXCPU)"
    if signum == signal.SIGKILL:
        return None, "killed (SIGKILL)"
    if signum > 0:
        return None, f"ended by signal {signal.Signals(signum).name}"
    return None, f"exited with code {code} before the tests finished"


def execute(sample: Sample, limits: Limits, *, _bwrap: str | None = None, _python: Path | None = None) -> Execution:
    """Run one sample in a new sandbox and wait for it (see the module docstring)."""
    bwrap = _bwrap or shutil.which("bwrap")
    python = _python or interpreter()
    if bwrap is None or python is None:
        require_sandbox()
        raise AssertionError("unreachable")
    userns, program = userns_args(bwrap)
    filter_fd = seccomp_fd(program) if program is not None else None
    if filter_fd is not None:
        userns = [a.replace("{seccomp_fd}", str(filter_fd)) for a in userns]
    read_end, write_end = os.pipe()
    task = {
        "kind": sample.kind,
        "program": sample.program,
        "fn_name": sample.fn_name,
        "inputs": list(sample.inputs),
        "outputs": list(sample.outputs),
        "timeout_s": limits.timeout_s,
        "limits": limits.child_limits(),
        "report_fd": write_end,
    }
    payload = json.dumps(task).encode("utf-8")
    deadline_s = limits.timeout_s * max(1, sample.num_tests) + _STARTUP_S
    drop = _drop_to_nobody()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            bwrap_command(bwrap, python, limits, userns),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_end,) if filter_fd is None else (write_end, filter_fd),
            start_new_session=True,
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            user=_NOBODY if drop else None,
            group=_NOBODY if drop else None,
            extra_groups=[] if drop else None,
        )
    except OSError as exc:
        os.close(read_end)
        os.close(write_end)
        return Execution(passed=False, reason=f"cannot start bubblewrap: {exc}", setup_error=True)
    finally:
        if filter_fd is not None:
            os.close(filter_fd)
    os.close(write_end)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    writer = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
    writer.start()
    out, err, report = bytearray(), bytearray(), bytearray()
    printed = 0
    limit: str | None = None
    reason = ""
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err, read_end: report}
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = start + deadline_s - time.monotonic()
            if remaining <= 0:
                limit, reason = "time", f"wall time limit ({deadline_s:.0f} s) reached; sandbox killed"
                _kill(proc)
                break
            for key, _ in selector.select(timeout=min(remaining, 0.5)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                buffer = streams[key.fd]
                buffer += chunk
                if key.fd == read_end:
                    if len(report) > _REPORT_CAP:
                        del report[_REPORT_CAP:]
                    continue
                printed += len(chunk)
                if printed > limits.max_output_bytes:
                    limit, reason = "output", f"printed more than {limits.max_output_bytes} bytes; sandbox killed"
                    _kill(proc)
                    break
                if len(buffer) > 8 * _TAIL:
                    del buffer[: len(buffer) - 8 * _TAIL]
            if limit is not None:
                break
    # The sandbox's processes all die with its PID namespace; reap bubblewrap itself.
    try:
        code: int | None = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _kill(proc)
        code = proc.wait()
    writer.join(timeout=1)
    os.close(read_end)
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    wall = time.monotonic() - start
    return _verdict(sample, report, out, err, code, limit, reason, wall)


def _feed(stdin: Any, payload: bytes) -> None:
    try:
        stdin.write(payload)
        stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _verdict(
    sample: Sample,
    report: bytearray,
    out: bytearray,
    err: bytearray,
    code: int | None,
    limit: str | None,
    reason: str,
    wall: float,
) -> Execution:
    lines = [json.loads(line) for line in bytes(report).decode("utf-8", "replace").splitlines() if _is_json(line)]
    done = any(line.get("done") for line in lines)
    results = [line for line in lines if "passed" in line]
    tests = tuple(bool(r["passed"]) for r in results)
    stderr = _tail(err)
    if limit is None:
        failed = next((r for r in results if not r["passed"]), None)
        if failed is not None:
            limit = failed.get("limit")
            reason = failed.get("error") or "wrong answer"
        elif not done:
            limit, reason = _exit_reason(code)
            if "bwrap:" in stderr and not results:
                return Execution(passed=False, reason=stderr.strip(), exit_code=code, wall_s=wall, setup_error=True)
        elif len(tests) < sample.num_tests:
            reason = "not every test ran"
    passed = limit is None and done and len(tests) == sample.num_tests and all(tests)
    if sample.kind == "apps" and len(tests) < sample.num_tests:
        tests = tests + (False,) * (sample.num_tests - len(tests))
    return Execution(
        passed=passed,
        tests=tests,
        limit=limit,
        reason="passed"
        if passed
        else (f"{limit} limit: {reason}" if limit and not reason.startswith(limit) else reason),
        exit_code=code,
        wall_s=wall,
        stdout=_tail(out),
        stderr=stderr,
    )


def _is_json(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def default_concurrency() -> int:
    """Samples run at once: one per CPU this process may use."""
    return max(1, len(os.sched_getaffinity(0)))


def sample_concurrency(limits: Limits, concurrency: int | None = None) -> int:
    """Samples run at once: ``concurrency`` (default: :func:`default_concurrency`), lowered so
    that their tmpfs together hold at most :data:`PINNED_FILES_MB` of host memory (one at a
    time when one sample's ``max_file_mb`` is above it)."""
    wanted = concurrency or default_concurrency()
    return max(1, min(wanted, PINNED_FILES_MB // max(1, limits.max_file_mb)))


def run_samples(samples: Sequence[Sample], limits: Limits, concurrency: int | None = None) -> list[Execution]:
    """Run every sample, each in its own sandbox, at most :func:`sample_concurrency` at a time, in order.

    Raises :class:`SandboxUnavailable` when the host cannot make the sandbox."""
    if not samples:
        return []
    require_sandbox()
    workers = min(len(samples), sample_concurrency(limits, concurrency))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda s: execute(s, limits), samples))


def limits_from(values: Mapping[str, Any]) -> Limits:
    """:class:`Limits` from the fields present in ``values`` (scenario arguments)."""
    names = set(Limits.__dataclass_fields__)
    return Limits(**{k: v for k, v in values.items() if k in names})
