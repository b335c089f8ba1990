"""A hostile or careless user against helm-run, helm-summarize and helm-diff.

Each test is one failure family of the hardening issue and fails on the code before it:
templates that run code, two writers on one suite, trusted-but-damaged results,
all-failed runs ranked as complete, resource bombs, a site deleted by a failed
summarize, a bad cache row, secrets in results, tracebacks, and unchecked names.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.diff import main as diff_main
from holistic.cli.run import main as run_main
from holistic.cli.summarize import main as summarize_main
from holistic.models.reliability import parse_retry_after
from tests.cli.helm_run_helpers import (
    REPO,
    call_count,
    cli_env,
    helm_run_process,
    one_error_line,
    run_dirs,
    write_slow_models,
    write_spec,
)


@pytest.fixture
def call_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "calls.log"
    monkeypatch.setenv("HOLISTIC_SIMPLE_CALL_LOG", str(log))
    return log


def _run(*args: object) -> int:
    return run_main([str(a) for a in args])


def _summarize(*args: object) -> int:
    return summarize_main([str(a) for a in args])


def _diff(*args: object) -> int:
    return diff_main([str(a) for a in args])


# -- 1. no code from a spec -------------------------------------------------------------------

ESCAPES = [
    "{{ cycler.__init__.__globals__.os.system('id > PWNED') }}",
    "{{ joiner.__init__.__globals__['os'].system('id > PWNED') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ lipsum.__globals__.os.popen('id > PWNED').read() }}",
    "{{ namespace|attr('__init__') }}",
    "{% set n = '_' ~ '_class_' ~ '_' %}{{ input|attr(n) }}",
    "{{ '{0.__class__.__init__.__globals__}'.format(cycler) }}",
    "{{ self._TemplateReference__context }}",
    "{{ ()|attr('\\x5f\\x5fclass\\x5f\\x5f') }}",
]


@pytest.mark.parametrize("where", ["adaptation", "file"])
@pytest.mark.parametrize("escape", ESCAPES)
def test_a_template_cannot_run_code(
    tmp_path: Path,
    call_log: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    escape: str,
    where: str,
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(json.dumps({"q": f"q{i}", "a": "x", "split": "test" if i > 3 else "train"}) + "\n" for i in range(8))
    )
    template = json.dumps("Q: " + escape)
    if where == "adaptation":
        run = (
            f"  - scenario: file\n    args: {{path: {data}, fields: {{input: q, output: a, split: split}}}}\n"
            f"    adaptation: {{template: {template}}}\n"
        )
    else:
        run = (
            f"  - scenario: file\n    args:\n      path: {data}\n      fields: {{output: a, split: split}}\n"
            f"      template: {template}\n"
        )
    spec = tmp_path / "evil.yaml"
    spec.write_text(f"suite: evil\nmodels: [simple/echo]\nruns:\n{run}")
    monkeypatch.chdir(tmp_path)
    rc = _run(spec, "--output-dir", tmp_path / "out")
    err = capsys.readouterr().err
    assert rc == 2, err
    line = 6 if where == "adaptation" else 8
    one_error_line(err, f"{spec}:{line}", "template")
    assert not (tmp_path / "PWNED").exists()


def test_the_sandbox_also_refuses_at_render_time() -> None:
    from holistic.core.templates import TemplateProblem, environment, render

    unchecked = environment().from_string("{{ x.__class__.__mro__ }}")  # bypasses the static check
    with pytest.raises(TemplateProblem, match="sandbox"):
        render(unchecked, {"x": 1})


# -- 2. one writer per suite ------------------------------------------------------------------


def test_a_second_helm_run_on_a_suite_waits_or_stops_and_never_repeats_calls(tmp_path: Path) -> None:
    # slow enough (10 requests x 3 s) that the others start, even on a busy machine, while the first writes
    spec = write_spec(tmp_path, models=("simple/slow",), digits=(1,), num_test=20, max_eval=10)
    models = write_slow_models(tmp_path, delay_s=3.0)
    out, log = tmp_path / "out", tmp_path / "calls.log"
    args = [str(spec), "--output-dir", str(out), "--models-file", str(models), "--batch-size", "1"]
    first = helm_run_process(args, log, tmp_path)
    while call_count(log) < 1:
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    second = helm_run_process(args, log, tmp_path)
    refused = subprocess.run(
        [sys.executable, "-m", "holistic.cli.run", *args, "--no-wait"],
        cwd=tmp_path,
        env=cli_env(log),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.poll() is None, "the first helm-run ended too soon for this test"
    assert refused.returncode == 2, refused.stderr
    one_error_line(refused.stderr, f"pid {first.pid}", "--no-wait")
    _, err1 = first.communicate(timeout=300)
    out2, err2 = second.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, (err1, err2)
    assert f"being written by pid {first.pid}" in err2
    assert "1 already complete" in out2
    lines = log.read_text().splitlines()
    assert len(lines) == len(set(lines))  # no request was computed twice
    (run_dir,) = run_dirs(out / "tiny")
    assert {p.name for p in run_dir.iterdir()} >= {"stats.parquet", "requests.parquet", "_COMPLETE"}


# -- 3. the manifest is verified ------------------------------------------------------------


def test_damaged_results_are_refused_by_readers_and_redone_by_helm_run(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out) == 0
    assert _run(spec, "--output-dir", out, "--suite", "copy") == 0
    calls = call_count(call_log)
    capsys.readouterr()
    victim = run_dirs(out / "tiny")[0]
    (victim / "per_instance_stats.parquet").unlink()
    stats = victim / "stats.parquet"
    stats.write_bytes(stats.read_bytes()[:-7] + b"garbage")

    assert _summarize("--suite", "tiny", "--output-dir", out) == 2
    one_error_line(capsys.readouterr().err, victim.name, "per_instance_stats.parquet")
    assert _diff(out / "tiny", out / "copy") == 2
    one_error_line(capsys.readouterr().err, victim.name)

    assert _run(spec, "--output-dir", out) == 0
    captured = capsys.readouterr()
    assert f"run {victim.name}: damaged" in captured.out + captured.err
    assert call_count(call_log) == calls  # redone from the cache
    assert _summarize("--suite", "tiny", "--output-dir", out, "--no-site") == 0
    assert _diff(out / "tiny", out / "copy", "--format", "json") == 0


# -- 4. failed requests -----------------------------------------------------------------------


def test_failed_requests_leave_a_partial_run_that_a_rerun_completes(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write_spec(tmp_path, models=("simple/echo", "simple/dead"), digits=(1,), max_eval=10)
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - {name: simple/dead, provider: simple, model_id: dead, context_window: 4096}\n")
    out = tmp_path / "out"
    monkeypatch.setenv("HOLISTIC_SIMPLE_FAIL_RATE", "0.3")  # a flaky server
    assert _run(spec, "--output-dir", out, "--models-file", models, "--models", "simple/echo") == 3
    stdout = capsys.readouterr().out
    assert "PARTIAL" in stdout and "rerun" in stdout
    suite = json.loads((out / "tiny" / "suite.json").read_text())
    assert [r["status"] for r in suite["runs"]] == ["partial"]
    (run_dir,) = run_dirs(out / "tiny")
    assert (run_dir / "_PARTIAL").exists() and not (run_dir / "_COMPLETE").exists()
    rows = pq.read_table(run_dir / "requests.parquet", columns=["success", "cache_key"]).to_pylist()
    failed = len({r["cache_key"] for r in rows if not r["success"]})
    assert failed > 0

    monkeypatch.setenv("HOLISTIC_SIMPLE_FAIL_RATE", "1")  # a dead endpoint
    assert _run(spec, "--output-dir", out, "--models-file", models, "--models", "simple/dead") == 3
    assert _summarize("--suite", "tiny", "--output-dir", out) == 3  # written, but the suite is unfinished
    captured = capsys.readouterr().out
    assert "not ranked" in captured
    index = (out / "tiny" / "site" / "index.html").read_text()
    assert "Error rate" in index and "failed every request and are not ranked" in index
    summary = json.loads((out / "tiny" / "summary" / "summary.json").read_text())
    assert summary["leaderboards"] and all(
        "simple/dead" not in board["models"] for board in summary["leaderboards"].values()
    )
    assert {r["model"]: r["ranked"] for r in summary["runs"]} == {"simple/echo": True, "simple/dead": False}

    monkeypatch.setenv("HOLISTIC_SIMPLE_FAIL_RATE", "0")
    before = call_count(call_log)
    assert _run(spec, "--output-dir", out, "--models-file", models, "--models", "simple/echo") == 0
    assert call_count(call_log) - before == failed  # only the failed requests were retried
    assert (run_dir / "_COMPLETE").exists() and not (run_dir / "_PARTIAL").exists()


# -- 5. resource bombs ------------------------------------------------------------------------

LAUGHS = "x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"x-{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def test_alias_bombs_stop_with_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bomb.yaml"
    spec.write_text(LAUGHS + "suite: s\nmodels: [simple/echo]\nruns: [{scenario: arithmetic}]\n")
    assert _run(spec, "--plan") == 2
    one_error_line(capsys.readouterr().err, str(spec), "expands to more than")
    models = tmp_path / "models.yaml"
    models.write_text(LAUGHS + "models: []\n")
    good = write_spec(tmp_path)
    assert _run(good, "--plan", "--models-file", models) == 2
    one_error_line(capsys.readouterr().err, str(models), "expands to more than")


def test_merge_key_bombs_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["x-m0: &m0 {" + ", ".join(f"k{j}: {j}" for j in range(20)) + "}"]
    for i in range(1, 25):
        lines.append(f"x-m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}")
    spec = tmp_path / "merge.yaml"
    spec.write_text("\n".join(lines) + "\nsuite: s\nmodels: [simple/echo]\nruns: [{scenario: arithmetic}]\n")
    # merges resolve level by level (each level keeps 20 keys), never 20 * 2**24 entries
    assert _run(spec, "--plan") == 0, capsys.readouterr().err


def test_an_include_diamond_is_read_once_per_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    depth = 23
    (tmp_path / "l0.yaml").write_text("defaults: {max_eval_instances: 3}\n")
    for i in range(1, depth + 1):
        (tmp_path / f"l{i}.yaml").write_text(f"include: [l{i - 1}.yaml, l{i - 1}.yaml]\n")
    spec = tmp_path / "top.yaml"
    spec.write_text(f"include: [l{depth}.yaml]\nsuite: s\nmodels: [simple/echo]\nruns: [{{scenario: arithmetic}}]\n")
    assert _run(spec, "--plan") == 0, capsys.readouterr().err


def test_too_many_includes_and_huge_or_special_files_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(150):
        (tmp_path / f"c{i}.yaml").write_text(f"include: [c{i + 1}.yaml]\n" if i < 149 else "seed: 1\n")
    spec = tmp_path / "chain.yaml"
    spec.write_text("include: [c0.yaml]\nsuite: s\nmodels: [simple/echo]\nruns: [{scenario: arithmetic}]\n")
    assert _run(spec, "--plan") == 2
    one_error_line(capsys.readouterr().err, "more than 100 files included")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# " + b"x" * (5 * 1024 * 1024) + b"\n")
    assert _run(big, "--plan") == 2
    one_error_line(capsys.readouterr().err, str(big), "larger than")
    assert _run("/dev/zero", "--plan") == 2
    one_error_line(capsys.readouterr().err, "/dev/zero", "not a regular file")


# -- 6. a failed summarize keeps the site ----------------------------------------------------


def test_a_failed_summarize_keeps_the_old_site(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    spec.write_text(spec.read_text() + '    groups: ["cost $x^{ of }$"]\n')
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out) == 0
    assert _summarize("--suite", "tiny", "--output-dir", out, "--num-bootstrap", 5) == 0
    index = out / "tiny" / "site" / "index.html"
    before = index.read_text()
    capsys.readouterr()
    assert _summarize("--suite", "tiny", "--output-dir", out, "--previous", tmp_path / "typo") == 2
    one_error_line(capsys.readouterr().err, "typo")
    assert index.read_text() == before
    assert not [p for p in (out / "tiny").iterdir() if p.name.startswith(".site")]


# -- 7. a damaged cache row is a miss ---------------------------------------------------------


def test_an_undecodable_cache_row_is_recomputed_and_reported_once(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, digits=(1,))
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out) == 0
    cache = out / "cache" / "requests.sqlite"
    conn = sqlite3.connect(cache)
    (key,) = conn.execute("SELECT key FROM results LIMIT 1").fetchone()
    conn.execute("UPDATE results SET value = '{\"success\": tru' WHERE key = ?", (key,))
    conn.commit()
    conn.close()
    capsys.readouterr()
    before = call_count(call_log)
    assert _run(spec, "--output-dir", out, "--suite", "again") == 0
    err = capsys.readouterr().err
    assert err.count("cannot be decoded") == 1 and str(cache) in err and key in err
    assert call_count(call_log) - before == 1
    conn = sqlite3.connect(cache)
    json.loads(conn.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()[0])
    conn.close()


# -- 8. secrets never reach what is written ---------------------------------------------------


def test_no_secret_reaches_any_output_file(
    tmp_path: Path, call_log: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key, url_pass, url_query, body = "sk-test-KEY0123456789abcdef", "URLPASS9876", "QUERYSECRET55", "BODYSECRET77"
    monkeypatch.setenv("MY_TEST_KEY", key)
    monkeypatch.setenv("HOLISTIC_SIMPLE_LEAK_ENV", "MY_TEST_KEY")
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  - name: simple/keyed\n    provider: simple\n    model_id: echo\n    context_window: 4096\n"
        "    api_key_env: MY_TEST_KEY\n"
        f"    args: {{base_url: 'https://user:{url_pass}@example.invalid/v1?api-key={url_query}&x=1', "
        f"extra_body: {{api_key: {body}, temperature_hint: 1}}}}\n"
    )
    spec = write_spec(tmp_path, models=("simple/keyed",), digits=(1,))
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out, "--models-file", models) == 0
    assert _summarize("--suite", "tiny", "--output-dir", out, "--num-bootstrap", 5) == 0
    printed = capsys.readouterr()
    secrets = [key, url_pass, url_query, body]
    assert not [s for s in secrets if s in printed.out + printed.err]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    for path in files:
        raw = path.read_bytes()
        texts = [raw.decode("utf-8", "replace")]
        if path.suffix == ".parquet":
            texts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
        for secret in secrets:
            assert all(secret not in t for t in texts), (secret, path)
    spec_json = json.loads(next((out / "tiny" / "runs").glob("*/run_spec.json")).read_text())
    assert "example.invalid" in json.dumps(spec_json)  # the URL itself is kept, its credentials are not


# -- 9. errors, not tracebacks ---------------------------------------------------------------


@pytest.mark.parametrize("content", [b"suite: s\x00\nruns: []\n", b"suite: s\x07x\nruns: []\n"])
def test_control_bytes_in_a_spec_name_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    spec = tmp_path / "ctl.yaml"
    spec.write_bytes(content)
    assert _run(spec, "--plan") == 2
    one_error_line(capsys.readouterr().err, f"{spec}:1:", "control character")


def test_bad_options_and_paths_are_one_line_errors(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out, "--suite", "x" * 300) == 2
    one_error_line(capsys.readouterr().err, "--suite", "invalid suite name")
    assert _run(spec, "--output-dir", out) == 0
    assert _run(spec, "--output-dir", out, "--suite", "copy") == 0
    capsys.readouterr()
    for bad in ("0", "-3"):
        with pytest.raises(SystemExit) as info:
            _summarize("--suite", "tiny", "--output-dir", out, "--num-bootstrap", bad)
        assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        _diff(out / "tiny", out / "copy", "-o", tmp_path / "missing" / "d.csv", "--format", "csv")
    assert info.value.code == 2 and "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        _diff(out / "tiny", out / "copy", "--html", tmp_path)
    assert info.value.code == 2 and "is a folder" in capsys.readouterr().err
    assert _diff(out / "tiny", out / "copy", "--html", out / "tiny" / "suite.json") == 2
    one_error_line(capsys.readouterr().err, "--html", "inside the input suite")
    assert json.loads((out / "tiny" / "suite.json").read_text())["suite"] == "tiny"


def test_an_invalid_utf8_csv_names_the_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.csv"
    data.write_bytes(b"q,a,split\nfine,x,train\nbad \xff\xfe,y,test\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"suite: s\nmodels: [simple/echo]\nruns:\n  - scenario: file\n"
        f"    args: {{path: {data}, fields: {{input: q, output: a, split: split}}}}\n"
    )
    assert _run(spec, "--output-dir", tmp_path / "out") in (1, 2)  # caught while compiling (2) or running (1)
    out = capsys.readouterr()
    assert f"{data}:" in out.out + out.err and "not UTF-8" in out.out + out.err
    assert "Traceback" not in out.out + out.err


def test_retry_after_that_is_not_a_finite_number_falls_back_to_backoff() -> None:
    assert parse_retry_after({"Retry-After": "nan"}) is None
    assert parse_retry_after({"Retry-After": "inf"}) is None
    assert parse_retry_after({"retry-after-ms": "nan", "Retry-After": "2"}) == 2.0


def test_an_unexpected_exception_prints_a_traceback_and_asks_for_a_report(capsys: pytest.CaptureFixture[str]) -> None:
    from holistic.cli.common import EXIT_BUG
    from holistic.cli.common import run_main as run_body

    def boom() -> int:
        raise ZeroDivisionError("x")

    assert run_body("helm-run", boom) == EXIT_BUG
    err = capsys.readouterr().err
    assert "Traceback" in err and "please report it" in err


# -- 10. names and paths ---------------------------------------------------------------------


@pytest.mark.parametrize("suite", ["'abc\\n'", "cache", "'.hidden'"])
def test_suite_names_in_a_spec_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: str) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(f'suite: "{suite.strip(chr(39))}"\nmodels: [simple/echo]\nruns: [{{scenario: arithmetic}}]\n')
    assert _run(spec, "--plan") == 2
    one_error_line(capsys.readouterr().err, f"{spec}:1", "suite")


@pytest.mark.parametrize("name", ["a b", "\u202eevil", ".hidden", "cache", "../up"])
def test_suite_option_is_validated_like_the_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out, "--suite", name) == 2
    one_error_line(capsys.readouterr().err, "--suite", "invalid suite name")
    assert not out.exists() or not any(out.iterdir())
    assert _summarize("--suite", name, "--output-dir", out) == 2
    one_error_line(capsys.readouterr().err, "--suite")
    assert not (tmp_path / "up").exists()


def test_summarize_refuses_a_newer_schema_version(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out) == 0
    meta_path = out / "tiny" / "suite.json"
    meta = json.loads(meta_path.read_text())
    meta["schema_version"] = 99
    meta_path.write_text(json.dumps(meta))
    capsys.readouterr()
    assert _summarize("--suite", "tiny", "--output-dir", out) == 2
    one_error_line(capsys.readouterr().err, "schema_version 99", "newer")
    assert _run(spec, "--output-dir", out) == 2
    one_error_line(capsys.readouterr().err, "schema_version 99")


def test_the_repository_names_results_files_only_in_the_results_package() -> None:
    offenders = []
    for path in (REPO / "holistic").rglob("*.py"):
        if "results" in path.relative_to(REPO / "holistic").parts[:1]:
            continue
        if path == REPO / "holistic" / "helm" / "imports" / "layout.py":
            continue  # names HELM's own run files (its run_spec.json is not holistic's)
        text = path.read_text(encoding="utf-8")
        for name in (
            '"_COMPLETE"',
            '"suite.json"',
            '"run_spec.json"',
            '"artifacts.json"',
            'stats.parquet"',
            '"requests.parquet"',
            '"instances.parquet"',
        ):
            if name in text:
                offenders.append(f"{path.relative_to(REPO)}: {name}")
    assert not offenders
