"""Log-likelihoods through an OpenAI-compatible server are checked before they are trusted.

A tiny word-level language model answers the completions endpoint in three ways: echo
logprobs where they belong, echo logprobs one position late (as llama-cpp-python's
server does), and echo logprobs that agree with nothing. The client probes once per
run, corrects the known shift, and refuses the unknown one.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from holistic.core.types import Capabilities, ModelDeployment, Request
from holistic.models.openai_client import OpenAIClient
from holistic.models.reliability import RetryPolicy

VOCAB = [
    " Paris",
    " London",
    " is",
    " the",
    " capital",
    " of",
    " France",
    " cold",
    " hot",
    " and",
    " Celsius",
    " five",
    " 4",
]


NEXT = {"The": " capital", " capital": " of", " of": " France", " France": " is", " is": " Paris", " Paris": " and"}
NEXT |= {" and": " the", " the": " capital"}


UNKNOWN = -30.0
"""The logprob of a word outside the toy model's vocabulary (never among the alternatives)."""


def words(text: str) -> list[str]:
    return re.findall(r"\s*\S+", text)


def distribution(prefix: list[str]) -> dict[str, float]:
    """log p(next word | prefix) over VOCAB plus the prefix's own words: a fixed, normalised toy LM."""
    vocab = list(dict.fromkeys([*VOCAB, *prefix]))
    scores = {w: math.sin(len(prefix) * 1.7 + sum(map(ord, w)) * 0.37) * 3.0 for w in vocab}
    if prefix and prefix[-1] in NEXT:
        scores[NEXT[prefix[-1]]] = 6.0  # a clear next word: "The capital of France is Paris and the ..."
    top = max(scores.values())
    norm = top + math.log(sum(math.exp(v - top) for v in scores.values()))
    return {w: v - norm for w, v in scores.items()}


def true_logprob(context: str, continuation: str) -> float:
    before, after = words(context), words(continuation)
    return sum(distribution(before + after[:i])[w] for i, w in enumerate(after))


def _top(dist: dict[str, float], n: int) -> dict[str, float]:
    return dict(sorted(dist.items(), key=lambda kv: -kv[1])[:n])


def completion(body: dict[str, Any], mode: str) -> dict[str, Any]:
    prompt = body["prompt"]
    toks = words(prompt)
    n = int(body.get("logprobs") or 1)
    generated = max(distribution(toks).items(), key=lambda kv: kv[1])[0]
    out_tokens = (toks if body.get("echo") else []) + [generated]
    positions = list(range(len(toks))) if body.get("echo") else []
    token_logprobs: list[float | None] = []
    tops: list[dict[str, float] | None] = []
    for k in positions:
        if mode == "shifted":  # the distribution *after* token k, reported at k
            dist = distribution(toks[: k + 1])
            token_logprobs.append(dist.get(toks[k], UNKNOWN))
            tops.append(_top(dist, n))
        elif k == 0:
            token_logprobs.append(None)
            tops.append(None)
        else:
            dist = distribution(toks[:k])
            token_logprobs.append(dist.get(toks[k], UNKNOWN) + (1.0 if mode == "inconsistent" else 0.0))
            tops.append(_top(dist, n))
    final = distribution(toks)
    token_logprobs.append(final[generated])
    tops.append(_top(final, n))
    offsets, at = [], 0
    for t in out_tokens:
        offsets.append(at)
        at += len(t)
    text = "".join(out_tokens)
    return {
        "id": "cmpl-toy",
        "object": "text_completion",
        "created": 1,
        "model": "toy",
        "choices": [
            {
                "text": text,
                "index": 0,
                "logprobs": {
                    "tokens": out_tokens,
                    "token_logprobs": token_logprobs,
                    "top_logprobs": tops,
                    "text_offset": offsets,
                },
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": len(toks), "completion_tokens": 1, "total_tokens": len(toks) + 1},
    }


class ToyServer:
    """The toy model behind a real HTTP server on 127.0.0.1 (one mode per server)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                outer.bodies.append(body)
                data = json.dumps(completion(body, outer.mode)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def toy() -> Iterator[dict[str, ToyServer]]:
    servers = {mode: ToyServer(mode) for mode in ("aligned", "shifted", "inconsistent")}
    yield servers
    for server in servers.values():
        server.close()


def _client(url: str) -> OpenAIClient:
    deployment = ModelDeployment(
        name="local/toy",
        provider="openai",
        model_id="toy",
        args={"base_url": url},
        capabilities=Capabilities(logprobs=True, prompt_logprobs=True, chat=False, completions=True),
    )
    return OpenAIClient(deployment, policy=RetryPolicy(max_attempts=1, jitter=0.0))


def _score(client: OpenAIClient, context: str, continuation: str) -> Any:
    [result] = client.process(
        [Request(model="local/toy", kind="loglikelihood", prompt=context, continuation=continuation)]
    )
    return result


def test_an_aligned_server_is_trusted_as_is(toy: dict[str, ToyServer]) -> None:
    client = _client(toy["aligned"].url)
    plain_identity = client.identity()
    facts = client.prepare_scoring()
    assert facts is not None and facts["status"] == "aligned"
    result = _score(client, "The capital of France", " is the")
    assert result.success, result.error
    assert result.completions[0].logprob == pytest.approx(true_logprob("The capital of France", " is the"))
    assert client.identity() == plain_identity  # nothing changes in the cache keys of a good server


def test_the_one_position_shift_is_detected_and_corrected(toy: dict[str, ToyServer]) -> None:
    client = _client(toy["shifted"].url)
    facts = client.prepare_scoring()
    assert facts is not None and facts["status"] == "shifted"
    assert client.identity()["echo_alignment"] == "shifted-one-position-corrected"
    context, continuation = "The capital of France", " is Paris"
    result = _score(client, context, continuation)
    assert result.success, result.error
    # What the server's raw echo says (read where an aligned server puts it) is wrong ...
    raw = _client(toy["shifted"].url)
    raw.alignment = None
    body = completion({"prompt": context + continuation, "echo": True, "logprobs": 5}, "shifted")
    naive = sum(v for v in body["choices"][0]["logprobs"]["token_logprobs"][4:6])
    assert not math.isclose(naive, true_logprob(context, continuation), abs_tol=0.1)
    # ... and the corrected score is the model's own.
    assert result.completions[0].logprob == pytest.approx(true_logprob(context, continuation))


def test_a_shifted_token_outside_the_alternatives_fails_with_the_reason(toy: dict[str, ToyServer]) -> None:
    client = _client(toy["shifted"].url)
    client.echo_top_logprobs = 1  # only the best alternative comes back
    assert (client.prepare_scoring() or {})["status"] == "shifted"
    result = _score(client, "The capital of France is", " cold")
    assert not result.success
    assert "one position late" in (result.error or "") and "' cold' is not among the 1 alternatives" in (
        result.error or ""
    )


def test_an_unexplained_disagreement_refuses_log_likelihoods(toy: dict[str, ToyServer]) -> None:
    server = toy["inconsistent"]
    client = _client(server.url)
    facts = client.prepare_scoring()
    assert facts is not None and facts["status"] == "inconsistent"
    before = len(server.bodies)
    result = _score(client, "The capital of France", " is the")
    assert not result.success and "log-likelihoods refused" in (result.error or "")
    assert len(server.bodies) == before  # refused without asking the server


def _mc_spec(folder: Path, url: str, suite: str) -> list[str]:
    """helm-run's arguments for a two-question multiple-choice run on the toy server at ``url``."""
    data = folder / "mc.jsonl"
    rows = [
        {"q": "The capital of France", "choices": ["is Paris", "is London", "and cold"], "answer": 0},
        {"q": "The capital of", "choices": ["France is", "the hot", "cold and"], "answer": 0},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    models = folder / f"{suite}_models.yaml"
    models.write_text(
        "models:\n  - name: local/toy\n    provider: openai\n    model_id: toy\n"
        f"    args: {{base_url: '{url}', max_attempts: 1, echo_top_logprobs: 20}}\n    context_window: 2048\n"
        "    capabilities: {logprobs: true, prompt_logprobs: true, chat: false, completions: true}\n",
        encoding="utf-8",
    )
    spec = folder / f"{suite}.yaml"
    spec.write_text(
        f"suite: {suite}\nmodels: [local/toy]\nruns:\n  - scenario: file\n    args:\n      path: {data}\n"
        "      fields: {input: q, choices: choices, label: answer}\n      label_format: index0\n"
        "    adaptation: {method: multiple_choice_separate_original, max_train_instances: 0, input_prefix: '', "
        "input_suffix: '', output_prefix: ''}\n    metrics: [accuracy]\n",
        encoding="utf-8",
    )
    return [str(spec), "--models-file", str(models), "--output-dir", str(folder / "out"), "--quiet"]


def _mc_run(folder: Path, url: str, suite: str) -> tuple[int, Path]:
    code = main(_mc_spec(folder, url, suite))
    (run_dir,) = (folder / "out" / suite / "runs").iterdir()
    return code, run_dir


def test_a_run_through_a_shifted_server_scores_as_through_an_aligned_one(
    tmp_path: Path, toy: dict[str, ToyServer]
) -> None:
    code_a, aligned = _mc_run(tmp_path, toy["aligned"].url, "aligned")
    code_s, shifted = _mc_run(tmp_path, toy["shifted"].url, "shifted")
    assert (code_a, code_s) == (0, 0)

    def logprobs(run_dir: Path) -> list[float]:
        rows = pq.read_table(run_dir / "requests.parquet").to_pylist()
        return [r["logprob"] for r in sorted(rows, key=lambda r: (r["instance_id"], r["reference_index"]))]

    assert logprobs(shifted) == pytest.approx(logprobs(aligned))
    check = json.loads((shifted / "artifacts.json").read_text())["execution"]["loglikelihood_check"]
    assert check["status"] == "shifted"
    assert json.loads((shifted / "run_spec.json").read_text())["model_identity"]["echo_alignment"]
    code_i, broken = _mc_run(tmp_path, toy["inconsistent"].url, "inconsistent")
    assert code_i == 3  # partial: every log-likelihood request refused, recorded, retried on a rerun
    errors = {r["error"] for r in pq.read_table(broken / "requests.parquet").to_pylist()}
    assert len(errors) == 1 and "log-likelihoods refused" in errors.pop()


def test_the_agreement_check_from_the_shell(
    tmp_path: Path, toy: dict[str, ToyServer], capsys: pytest.CaptureFixture[str]
) -> None:
    from holistic.cli.check import main as check

    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n"
        + "".join(
            f"  - name: toy/{mode}\n    provider: openai\n    model_id: toy\n"
            f"    args: {{base_url: '{toy[mode].url}', max_attempts: 1, echo_top_logprobs: 50}}\n"
            "    capabilities: {logprobs: true, prompt_logprobs: true, chat: false, completions: true}\n"
            for mode in ("aligned", "shifted", "inconsistent")
        ),
        encoding="utf-8",
    )
    assert check(["toy/aligned", "toy/shifted", "--models-file", str(models)]) == 0
    out = capsys.readouterr().out
    assert "toy/shifted: echo log-probabilities shifted" in out and "all agree" in out
    assert check(["toy/aligned", "toy/inconsistent", "--models-file", str(models)]) == 1
    out = capsys.readouterr().out
    assert "toy/inconsistent: echo log-probabilities inconsistent" in out and "log-likelihoods refused" in out
    assert check(["toy/aligned", "toy/missing", "--models-file", str(models)]) == 2
    assert "toy/missing" in capsys.readouterr().err


def test_an_unreachable_base_url_fails_at_once_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket
    import time

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    started = time.monotonic()
    assert main(_mc_spec(tmp_path, url, "down")) == 2
    assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert f"base_url {url} is unreachable" in err and "Connection refused" in err and "nothing was written" in err
    assert not (tmp_path / "out" / "down").exists()
