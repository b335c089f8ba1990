"""A command started from the command line ends without the interpreter's teardown, and
loses nothing: exit handlers run, buffered output is written, the exit code is kept."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_exit_handlers_run_and_buffered_output_is_written_before_the_process_ends() -> None:
    done = _python(
        """
        import atexit, sys
        from holistic.cli.common import end_program
        atexit.register(lambda: print("handlers ran"))
        print("out", end=" ")  # still in the buffer
        sys.stderr.write("err")
        end_program(3)
        print("not reached")
        """
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "out handlers ran\n", "err")


def test_a_thread_still_working_is_waited_for() -> None:
    done = _python(
        """
        import sys, threading, time
        from holistic.cli.common import end_program
        worker = threading.Thread(target=lambda: (time.sleep(0.3), print("worker finished")))
        worker.start()
        code = end_program(5)
        print("returned", code)
        sys.exit(code)
        """
    )
    assert done.returncode == 5
    assert done.stdout.splitlines() == ["returned 5", "worker finished"]
