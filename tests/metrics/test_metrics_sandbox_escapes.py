"""Model-written code cannot reach the host from the sandbox: each escape fails inside it,
and each test checks on the host side that nothing got through.

Every sample runs under a 256 MB address-space cap and at most 8 processes, so a broken
sandbox fails the test rather than the machine.
"""

from __future__ import annotations

import ast
import socket
import threading
import time
import uuid
from pathlib import Path

import pytest

from holistic.metrics.sandbox import Execution, Limits, Sample, execute
from tests.metrics.sandbox_testkit import processes_in, sandbox, wait_until_gone

__all__ = ["sandbox"]
pytestmark = [pytest.mark.usefixtures("sandbox"), pytest.mark.sandbox]

REPO_ROOT = Path(__file__).resolve().parents[2]
CAPPED = Limits(timeout_s=3.0, cpu_time_s=5, memory_mb=256, max_processes=8, max_output_bytes=1 << 20)


def run(program: str, limits: Limits = CAPPED) -> Execution:
    return execute(Sample(program=program), limits)


class _Listener:
    """A TCP listener on the host's 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted: list[object] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self.server.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted.append(peer)
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


def test_the_host_listener_sees_connections_from_the_host() -> None:
    # The control: the listener used below does record a connection that is made.
    listener = _Listener()
    try:
        socket.create_connection(("127.0.0.1", listener.port), timeout=2).close()
        time.sleep(0.5)
        assert len(listener.accepted) == 1
    finally:
        listener.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "1.1.1.1"])
def test_no_connection_leaves_the_sandbox(host: str) -> None:
    listener = _Listener()
    try:
        execution = run(f"import socket\nsocket.create_connection(({host!r}, {listener.port}), timeout=2)\n")
        time.sleep(0.5)
        assert listener.accepted == []
    finally:
        listener.close()
    assert not execution.passed
    assert any(word in execution.reason for word in ("ConnectionRefusedError", "unreachable", "gaierror")), execution


def test_an_abstract_unix_socket_of_the_host_is_out_of_reach() -> None:
    name = f"\0holistic-test-{uuid.uuid4().hex}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen(1)
    server.settimeout(0.5)
    try:
        execution = run(f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({name!r})\n")
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
    assert not execution.passed and "ConnectionRefusedError" in execution.reason


def test_writes_land_only_in_the_per_sample_tmpfs(tmp_path: Path) -> None:
    marker = f"holistic-marker-{uuid.uuid4().hex}"
    target = tmp_path / "escaped.txt"
    program = (
        f"open('/tmp/{marker}', 'w').write('inside')\n"  # the tmpfs: allowed
        f"assert open('/tmp/{marker}').read() == 'inside'\n"
        f"open({str(target)!r}, 'w').write('escaped')\n"
    )
    execution = run(program)
    assert not execution.passed
    assert "FileNotFoundError" in execution.reason  # the host folder does not exist in there
    assert not target.exists()
    assert not (Path("/tmp") / marker).exists()  # the sandbox's /tmp is not the host's


@pytest.mark.parametrize("path", ["/usr/lib/holistic-escape", "/usr/bin/holistic-escape", "/bin/holistic-escape"])
def test_the_interpreter_folders_are_read_only(path: str) -> None:
    execution = run(f"open({path!r}, 'w').write('x')\n")
    assert not execution.passed and "Read-only file system" in execution.reason
    assert not Path(path).exists()


@pytest.mark.parametrize(
    "path",
    [
        "/etc/shadow",
        "/etc/passwd",
        str(REPO_ROOT / "pyproject.toml"),
        str(Path(__file__).resolve()),
        str(Path.home() / ".bashrc"),
    ],
)
def test_host_files_are_not_visible(path: str) -> None:
    execution = run(f"print(open({path!r}).read())\n")
    assert not execution.passed
    assert "FileNotFoundError" in execution.reason
    assert execution.stdout == ""


def test_only_the_sandbox_file_system_is_visible() -> None:
    execution = run("import os\nprint(sorted(os.listdir('/')))\nprint(os.listdir('/tmp'))\n")
    assert execution.passed
    listed = execution.stdout.splitlines()
    system = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr"}  # the interpreter's folders
    assert set(ast.literal_eval(listed[0])) <= system | {"dev", "proc", "tmp"}
    assert {"usr", "dev", "proc", "tmp"} <= set(ast.literal_eval(listed[0]))
    assert listed[1] == "[]"


def test_a_fork_bomb_is_stopped_and_leaves_nothing_behind() -> None:
    marker = f"holistic-forkbomb-{uuid.uuid4().hex}"
    program = (
        f"import os\nos.makedirs('/tmp/{marker}')\nos.chdir('/tmp/{marker}')\n"
        "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    start = time.monotonic()
    execution = run(program)
    assert time.monotonic() - start < 20
    assert not execution.passed
    assert execution.limit in ("processes", "time"), execution
    assert wait_until_gone(marker) == []


def test_a_process_started_by_the_sample_does_not_outlive_it() -> None:
    marker = f"holistic-daemon-{uuid.uuid4().hex}"
    program = (
        f"import os, subprocess, sys, time\nos.makedirs('/tmp/{marker}')\nos.chdir('/tmp/{marker}')\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        "if os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n"
        "time.sleep(0.5)\n"
    )
    execution = run(program)
    assert execution.passed, execution  # starting them is allowed...
    assert wait_until_gone(marker) == []  # ...but they die with the sample's PID namespace


def test_the_daemon_check_finds_a_live_process(tmp_path: Path) -> None:
    # The control for the two tests above: a process working in a marked folder is found.
    import subprocess
    import sys

    folder = tmp_path / f"holistic-control-{uuid.uuid4().hex}"
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], cwd=folder)
    try:
        time.sleep(0.3)
        assert processes_in(folder.name) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()


def test_allocating_10_gb_fails_at_the_memory_limit() -> None:
    execution = run("x = bytearray(10 * 1024 ** 3)\n")
    assert not execution.passed
    assert execution.limit == "memory" and "MemoryError" in execution.reason


def test_memory_touched_page_by_page_fails_at_the_memory_limit() -> None:
    execution = run("chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n")
    assert not execution.passed and execution.limit == "memory"


def test_an_infinite_loop_stops_at_the_time_limit() -> None:
    start = time.monotonic()
    execution = run("while True:\n    pass\n", Limits(timeout_s=1.0, memory_mb=256))
    assert time.monotonic() - start < 15
    assert not execution.passed and execution.limit == "time"


def test_a_loop_that_ignores_the_alarm_stops_at_the_cpu_limit() -> None:
    program = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    execution = run(program, Limits(timeout_s=30.0, cpu_time_s=1, memory_mb=256))
    assert not execution.passed and execution.limit == "cpu_time", execution


def test_a_sleeping_sample_that_ignores_the_alarm_is_killed_at_the_wall_limit() -> None:
    program = "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\ntime.sleep(600)\n"
    start = time.monotonic()
    execution = run(program, Limits(timeout_s=0.5, memory_mb=256))
    assert time.monotonic() - start < 30
    assert not execution.passed and execution.limit == "time" and "wall time" in execution.reason


def test_printing_1_gb_stops_at_the_output_limit() -> None:
    program = "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n"
    execution = run(program)
    assert not execution.passed and execution.limit == "output"
    assert len(execution.stdout) <= 2000


def test_a_big_file_in_the_tmpfs_stops_at_the_file_size_limit() -> None:
    program = "f = open('/tmp/big', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))\n"
    execution = run(program, Limits(memory_mb=256, max_file_mb=4))
    assert not execution.passed and execution.limit in ("file_size", "disk")


def test_exiting_early_is_not_a_pass() -> None:
    for program in ("import os\nos._exit(0)\n", "import sys\nsys.exit(0)\n", "raise SystemExit\n"):
        assert not run(program).passed, program


def test_no_privileges_inside() -> None:
    program = (
        "import os\nstatus = open('/proc/self/status').read()\n"
        "assert 'CapEff:\\t0000000000000000' in status, status\n"
        "assert os.getuid() == 65534\n"
        "assert len([p for p in os.listdir('/proc') if p.isdigit()]) <= 3  # only the sandbox's own processes\n"
    )
    assert run(program).passed
