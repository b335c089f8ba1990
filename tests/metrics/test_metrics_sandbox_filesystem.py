"""The sandbox's whole file system is bounded, and a sample cannot make a user namespace of its own.

tmpfs pages live in host memory and escape ``RLIMIT_AS``, so every writable mount must
have a size: a sample that fills ``/``, ``/dev``, ``/dev/shm`` and ``/tmp`` pins at most its
file budget (``max_file_mb``) of host memory. A nested user namespace would give the sample
the capabilities to mount a tmpfs of any size; it is refused (``--disable-userns``, or the
seccomp filter on an older bubblewrap).

The cases are replayed in a child under the issue's 1.5 GB address-space cap and a CPU
deadline, each sample asking for far more than its budget.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from holistic.metrics.sandbox import PINNED_FILES_MB, Limits, sample_concurrency
from holistic.metrics.sandbox_userns import seccomp_program
from tests.metrics.sandbox_testkit import sandbox

__all__ = ["sandbox"]
pytestmark = [pytest.mark.usefixtures("sandbox"), pytest.mark.sandbox]

REPO_ROOT = Path(__file__).resolve().parents[2]
CAP = 1536 << 20
CPU_DEADLINE_S = 30.0
BUDGET_MB = 8

FILL = """
import ctypes, json, os
wrote = {}
for folder in ('/', '/dev', '/dev/shm', '/tmp'):
    for n in range(4):  # 4 files of 64 MB each: far over the budget, each under RLIMIT_FSIZE's reach
        try:
            with open(os.path.join(folder, f'fill{n}'), 'wb') as out:
                for _ in range(64):
                    out.write(b'x' * (1 << 20))
        except OSError:
            pass
    names = [os.path.join(folder, f'fill{n}') for n in range(4)]
    wrote[folder] = sum(os.path.getsize(name) for name in names if os.path.exists(name))
libc = ctypes.CDLL(None, use_errno=True)
userns = libc.unshare(0x10000000)
mounted = libc.mount(b'none', b'/tmp', b'tmpfs', 0, b'size=8g')
print(json.dumps({'wrote': wrote, 'unshare': userns, 'mount': mounted}))
"""

DRIVER = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
import holistic.metrics.sandbox_userns as userns
if {old_bwrap}:
    userns.bwrap_version = lambda bwrap: (0, 7, 0)
from holistic.metrics.sandbox import Limits, Sample, run_samples
limits = Limits(timeout_s=20.0, cpu_time_s=20, memory_mb=256, max_processes=8, max_file_mb={budget})
runs = run_samples([Sample(program=sys.stdin.read())] * 2, limits, concurrency=2)
print(json.dumps([{{"passed": e.passed, "reason": e.reason, "stdout": e.stdout}} for e in runs]))
"""


def replay(old_bwrap: bool = False) -> list[dict[str, object]]:
    """Two samples at once fill every folder, unshare a user namespace and mount a tmpfs (capped child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", DRIVER.format(cap=CAP, old_bwrap=old_bwrap, budget=BUDGET_MB)],
        input=FILL,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=180,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert done.returncode == 0, done.stderr[-2000:]
    assert cpu < CPU_DEADLINE_S
    runs: list[dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return [json.loads(str(run["stdout"]).strip().splitlines()[-1]) for run in runs if run["passed"]] + [
        run for run in runs if not run["passed"]
    ]


@pytest.mark.parametrize("old_bwrap", [False, True], ids=["disable-userns", "seccomp"])
def test_filling_every_folder_pins_at_most_the_file_budget_and_no_namespace_or_mount_is_made(old_bwrap: bool) -> None:
    if old_bwrap and seccomp_program() is None:
        pytest.skip("no seccomp filter for this machine")
    reports = replay(old_bwrap)
    assert len(reports) == 2 and all("wrote" in r for r in reports), reports
    for report in reports:
        wrote = report["wrote"]
        assert isinstance(wrote, dict)
        assert wrote["/"] == 0 and wrote["/dev"] == 0  # read-only
        assert wrote["/tmp"] > 0 and wrote["/dev/shm"] > 0  # writable, sized
        assert sum(wrote.values()) <= BUDGET_MB << 20  # all four mounts together: the file budget
        assert report["unshare"] == -1  # no nested user namespace
        assert report["mount"] == -1  # so no tmpfs of its own


def test_samples_run_at_once_pin_at_most_the_documented_host_memory() -> None:
    assert sample_concurrency(Limits(max_file_mb=16), 8) == 8
    assert sample_concurrency(Limits(max_file_mb=512), 8) * 512 <= PINNED_FILES_MB
    assert sample_concurrency(Limits(max_file_mb=4096), 8) == 1  # one sample over the budget runs alone
    for mb in (1, 16, 100, 512, 1024, 4096):
        limits = Limits(max_file_mb=mb)
        tmp, shm = limits.mount_sizes()
        assert tmp + shm == mb << 20
        assert sample_concurrency(limits, 64) * mb <= max(PINNED_FILES_MB, mb)


def test_where_nested_namespaces_cannot_be_refused_code_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import holistic.metrics.sandbox_userns as userns

    monkeypatch.setattr(userns, "bwrap_version", lambda bwrap: (0, 7, 0))
    assert userns.userns_problem("bwrap") is None or userns.seccomp_program() is None  # the filter stands in
    monkeypatch.setattr("platform.machine", lambda: "riscv64")  # no filter written for it
    problem = userns.userns_problem("bwrap")
    assert problem is not None and "--disable-userns" in problem and "upgrade bubblewrap" in problem
    with pytest.raises(OSError, match="upgrade bubblewrap"):
        userns.userns_args("bwrap")
    monkeypatch.setattr(userns, "bwrap_version", lambda bwrap: (0, 8, 0))
    assert userns.userns_problem("bwrap") is None
    assert userns.userns_args("bwrap") == (["--disable-userns"], None)
