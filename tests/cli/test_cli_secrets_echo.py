"""A secret the models file holds never comes back: a server that echoes its request (the
``extra_body`` key, a value marked ``secret: true``) in its answer, split across tokens, or in its
error message, gets nothing of them written — results, request cache, site, terminal — under a
1.5 GB address-space cap and a CPU deadline."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from holistic.core.secrets import encoded_forms
from tests.cli.helm_run_helpers import capped, cli_env, write_spec
from tests.cli.hostile_server import HostileServer

BODY_KEY = "sk-body-7f3a9c21e5d84b06"
MARKED = "session-4c1e8b7a2f9d"


def _models(path: Path, port: int, extra_body: str) -> Path:
    entries = "".join(
        f"  - name: echoing/{mode}\n    provider: openai\n    model_id: {mode}\n    context_window: 4096\n"
        f"    args: {{base_url: 'http://127.0.0.1:{port}/v1', timeout_s: 5, max_attempts: 1, "
        f"extra_body: {{{extra_body}, hint: 1}}}}\n"
        "    capabilities: {logprobs: true, completions: true, chat: false}\n"
        for mode in ("echo", "echo_error")
    )
    path.write_text("models:\n" + entries, encoding="utf-8")
    return path


def _texts(path: Path) -> list[str]:
    raw = path.read_bytes()
    texts = [raw.decode("utf-8", "replace")]
    if path.suffix == ".parquet":
        texts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
    return texts


def _echoed_nowhere(tmp_path: Path, extra_body: str, secret: str) -> str:
    """Run a suite on the echoing servers; check ``secret`` is written and printed nowhere; what the
    server was sent."""
    out = tmp_path / "out"
    env = cli_env(tmp_path / "calls.log")
    env["OPENAI_API_KEY"] = "sk-test-env-key-0123456789"
    with HostileServer() as server:
        models = _models(tmp_path / "models.yaml", server.port, extra_body)
        spec = write_spec(tmp_path, models=("echoing/echo", "echoing/echo_error"), digits=(1,), max_eval=2)
        args = [str(spec), "--output-dir", str(out), "--models-file", str(models)]
        run = capped("holistic.cli.run", args, tmp_path, env=env)
        assert run.returncode == 3, run.stdout + run.stderr  # the erroring server's requests failed
        sent = json.dumps(server.payloads)
    assert secret in sent  # the server was sent it
    summary = capped("holistic.cli.summarize", ["--suite", "tiny", "--output-dir", str(out)], tmp_path, env=env)
    assert "Traceback" not in summary.stderr
    secrets = [secret, *encoded_forms(secret)]
    printed = run.stdout + run.stderr + summary.stdout + summary.stderr
    assert not [s for s in secrets if s in printed]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "requests.parquet" for p in files) and any(p.suffix == ".html" for p in files)
    assert any("cache" in p.parts for p in files)
    for path in files:
        for text in _texts(path):
            leaked = [s for s in secrets if s in text]
            assert not leaked, (leaked, path)
    # the echo itself is kept, masked: the answer is there, its secrets are not
    rows = [r for p in out.rglob("requests.parquet") for r in pq.read_table(p).to_pylist()]
    assert any("***" in str(r.get("completion")) and "hint" in str(r.get("completion")) for r in rows)
    return sent


def test_a_servers_echo_of_an_extra_body_key_is_written_nowhere(tmp_path: Path) -> None:
    _echoed_nowhere(tmp_path, f"api_key: {BODY_KEY}", BODY_KEY)


def test_a_value_marked_secret_is_sent_as_itself_and_written_nowhere(tmp_path: Path) -> None:
    sent = _echoed_nowhere(tmp_path, f"session: {{secret: true, value: {MARKED}}}", MARKED)
    assert '"secret": true' not in sent  # the server got the value, not the marking
