"""Batch mode end to end: helm-run with the real openai and anthropic SDKs against a loopback server
that speaks both batch APIs (:mod:`tests.support.batch_server`).

A suite run with ``--batch`` gives the same answers and Parquet tables as the same suite online,
the same site (timing figures aside, as between any two online runs), and the server sees
no online request; a helm-run killed (SIGKILL) once its batch is submitted
and started again creates no second batch and completes the suite; ``--no-wait`` submits and
leaves the suite partial, and the same command collects it."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from holistic.results import SuiteReader
from tests.cli.helm_run_helpers import REPO, interruptible, write_spec
from tests.support.batch_server import BatchServer

VARIES = {"latency_s", "cached", "batch"}
"""Columns that describe how an answer came (time, cache, batch), not what it is."""


def _models(path: Path, server: BatchServer, **args: object) -> Path:
    extra = "".join(f", {k}: {v}" for k, v in args.items())
    path.write_text(
        "models:\n"
        "  - name: loop/gpt\n"
        "    provider: openai\n"
        "    model_id: gpt-loop\n"
        f"    args: {{base_url: '{server.openai_url}', batch_poll_s: 0.05{extra}}}\n"
        "    capabilities: {logprobs: true, prompt_logprobs: false, chat: true, completions: false}\n"
        "    api_key_env: LOOP_KEY\n"
        "  - name: loop/claude\n"
        "    provider: anthropic\n"
        "    model_id: claude-loop\n"
        f"    args: {{base_url: '{server.anthropic_url}', batch_poll_s: 0.05{extra}}}\n"
        "    capabilities: {chat: true}\n"
        "    api_key_env: LOOP_KEY\n",
        encoding="utf-8",
    )
    return path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["LOOP_KEY"] = "sk-loop-0123456789abcdef"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


JUDGE = """\
    judges:
      - model: loop/gpt
        name: g
        template: "Question {{ prompt }} Answer {{ completion }}"
        parse: {regex: "(?P<s>w)", score: s, values: {w: 1}}
        retries: 0
"""


def _args(tmp_path: Path, server: BatchServer, out: str, *extra: str, judged: bool = False) -> list[str]:
    spec = write_spec(tmp_path, models=("loop/gpt", "loop/claude"), digits=(1,), max_eval=5, metrics=("accuracy",))
    if judged:
        spec.write_text(spec.read_text(encoding="utf-8") + JUDGE, encoding="utf-8")
    models = _models(tmp_path / "models.yaml", server)
    return [str(spec), "--models-file", str(models), "--output-dir", str(tmp_path / out), *extra]


def _helm_run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holistic.cli.run", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _tables(suite_dir: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for run in SuiteReader(suite_dir).runs:
        for name in ("instances", "requests", "per_instance_stats", "stats", "annotations"):
            if not run.has_table(name):
                continue
            rows = pq.read_table(run.table_path(name)).to_pylist()
            out[f"{run.run_id}/{name}"] = sorted(
                repr(sorted((k, v) for k, v in r.items() if k not in VARIES)) for r in rows
            )
    return out


TIMING = (
    (re.compile(r'"latency_s":[-0-9.e]+'), '"latency_s":T'),  # the instance browser's request rows
    (re.compile(r'<td class="num" data-sort="[^"]*">[^<]*</td>(\s*</tr>)'), r"<td>T</td>\1"),  # models: latency
)


def _site(suite_dir: Path) -> dict[str, str]:
    """Every file of the suite's site, its timing figures masked."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "holistic.cli.summarize",
            "--suite",
            suite_dir.name,
            "--output-dir",
            str(suite_dir.parent),
        ],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, str] = {}
    for path in sorted((suite_dir / "site").rglob("*")):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            for pattern, mask in TIMING:
                text = pattern.sub(mask, text)
            out[str(path.relative_to(suite_dir / "site"))] = text
    return out


def _unpriced(site: dict[str, str]) -> dict[str, str]:
    """The site's files with their dollar figures, and the run page's count of batch answers, masked."""
    return {
        name: re.sub(r"; \d+ requests through a batch API, at its discount", "", re.sub(r"\$[0-9][0-9.,]*", "$-", text))
        for name, text in site.items()
    }


def _batch_column(suite_dir: Path) -> set[bool]:
    return {
        r["batch"] for run in SuiteReader(suite_dir).runs for r in pq.read_table(run.table_path("requests")).to_pylist()
    }


def test_batch_suite_equals_online_suite_and_sends_nothing_online(tmp_path: Path) -> None:
    with BatchServer(polls_to_end=2) as server:
        online = _helm_run(_args(tmp_path, server, "online", judged=True), tmp_path)
        assert online.returncode == 0, online.stderr
        sent_online = server.seen.online
        assert sent_online > 0 and server.seen.batches_created == 0
        batch = _helm_run(_args(tmp_path, server, "batched", "--batch", judged=True), tmp_path)
        assert batch.returncode == 0, batch.stderr
        assert server.seen.online == sent_online, "batch mode sent requests online"
        # one per deployment's generations, one of judge prompts (both models answer alike, so the
        # second run's judge prompts are the first's, answered from the cache)
        assert server.seen.batches_created == 3
    assert "submitted batch" in batch.stderr and "completed" in batch.stderr and "ended" in batch.stderr
    online_tables, batch_tables = _tables(tmp_path / "online" / "tiny"), _tables(tmp_path / "batched" / "tiny")
    assert any(name.endswith("/annotations") and rows for name, rows in online_tables.items())
    assert online_tables == batch_tables
    online_site, batch_site = _site(tmp_path / "online" / "tiny"), _site(tmp_path / "batched" / "tiny")
    assert "models.html" in online_site and any(name.startswith("data/") for name in online_site)
    # the same pages but for the prices: a batch answer costs its deployment's batch_discount less
    assert _unpriced(online_site) == _unpriced(batch_site)
    assert not any("through a batch API" in text for text in online_site.values())
    assert any("5 requests through a batch API, at its discount" in text for text in batch_site.values())
    assert _batch_column(tmp_path / "online" / "tiny") == {False}
    assert _batch_column(tmp_path / "batched" / "tiny") == {True}


def test_killed_after_its_batch_was_created_resumes_the_same_batch(tmp_path: Path) -> None:
    with BatchServer(polls_to_end=40) as server:
        args = _args(tmp_path, server, "out", "--batch")
        proc = subprocess.Popen(
            [sys.executable, "-m", "holistic.cli.run", *args],
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=interruptible,
        )
        try:
            deadline = time.monotonic() + 120
            while server.seen.polls == 0 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.02)
            assert server.seen.polls > 0, "helm-run never polled its batch"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        created = server.seen.batches_created
        assert created == 1  # the first deployment's batch, waited on when killed
        journal = sqlite3.connect(tmp_path / "out" / "cache" / "batches.sqlite")
        assert journal.execute("SELECT COUNT(*) FROM batches").fetchone()[0] == 1
        journal.close()
        server.polls_to_end = 2
        again = _helm_run(args, tmp_path)
        assert again.returncode == 0, again.stderr
        assert server.seen.batches_created == created + 1  # only the second deployment's, none again
        assert server.seen.online == 0
    reader = SuiteReader(tmp_path / "out" / "tiny")
    assert all(run.status == "complete" for run in reader.runs)


def test_no_wait_submits_then_the_same_command_collects(tmp_path: Path) -> None:
    with BatchServer(polls_to_end=3) as server:
        args = _args(tmp_path, server, "out", "--batch", "--no-wait")
        first = _helm_run(args, tmp_path)
        assert first.returncode == 3, first.stderr  # partial: some requests wait in batches
        assert "run the same command again" in first.stderr
        assert server.seen.batches_created == 2
        assert not any(run.status == "complete" for run in SuiteReader(tmp_path / "out" / "tiny").runs)
        for _ in range(5):
            again = _helm_run(args, tmp_path)
            if all(run.status == "complete" for run in SuiteReader(tmp_path / "out" / "tiny").runs):
                break
        assert again.returncode == 0, again.stderr
        assert server.seen.batches_created == 2
        assert server.seen.online == 0
    assert all(run.status == "complete" for run in SuiteReader(tmp_path / "out" / "tiny").runs)


def test_batch_true_on_a_provider_without_a_batch_api_names_the_line(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - name: s/echo\n    provider: simple\n    model_id: echo\n    batch: true\n")
    spec = write_spec(tmp_path, models=("s/echo",))
    done = _helm_run([str(spec), "--models-file", str(models), "--output-dir", str(tmp_path / "o")], tmp_path)
    assert done.returncode != 0
    assert "models.yaml" in done.stderr and ":5" in done.stderr
    assert "no batch API" in done.stderr and "anthropic, openai" in done.stderr
