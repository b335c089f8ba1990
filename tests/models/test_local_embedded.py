"""The embedded SmolLM2-135M-Instruct, offline, under both engines (real model: slow)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from holistic.core.types import Message, Request
from holistic.models.check import compare_loglikelihoods
from holistic.models.engine_options import EngineOptions
from holistic.models.registry import ModelRegistry, create_client
from holistic.models.weights import embedded_gguf_path

pytestmark = pytest.mark.real_model
MODEL = "embedded/smollm2-135m-instruct"


def _client(engine: str) -> Any:
    dep = ModelRegistry().get(MODEL)
    return create_client(replace(dep, args={"engine": engine}))


@pytest.fixture(scope="module", autouse=True)
def _offline() -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")
    yield
    mp.undo()


@pytest.fixture(scope="module")
def hf_client() -> Iterator[Any]:
    client = _client("transformers")
    yield client
    client.close()


@pytest.fixture(scope="module")
def llama_client() -> Iterator[Any]:
    pytest.importorskip("llama_cpp")
    client = _client("llama_cpp")
    yield client
    client.close()


@pytest.mark.parametrize("engine", ["transformers", "llama_cpp"])
def test_embedded_model_answers_offline_and_knows_paris(engine: str, request: pytest.FixtureRequest) -> None:
    client = request.getfixturevalue("hf_client" if engine == "transformers" else "llama_client")
    question = (Message("user", "Which city is the capital of France? Answer in one word."),)
    chat = Request(model=MODEL, messages=question, max_tokens=12)
    paris, london, answer = client.process(
        [
            Request(model=MODEL, kind="loglikelihood", prompt="The capital of France is", continuation=" Paris"),
            Request(model=MODEL, kind="loglikelihood", prompt="The capital of France is", continuation=" London"),
            chat,
        ]
    )
    assert paris.success and london.success and answer.success
    assert paris.completions[0].logprob > london.completions[0].logprob
    assert paris.completions[0].is_greedy
    assert "Paris" in answer.completions[0].text
    # the chat template was applied: the prompt counted is the rendered conversation
    rendered = client.tokenizer().render_chat(question)
    assert rendered.startswith("<|im_start|>system\n") and rendered.endswith("<|im_start|>assistant\n")
    assert answer.prompt_tokens == client.tokenizer().count(rendered)
    assert answer.engine == engine
    identity = client.identity()
    digest = hashlib.sha256(embedded_gguf_path().read_bytes()).hexdigest()
    assert identity["engine"] == engine and identity["weights_sha256"] == digest


def test_both_engines_agree_on_loglikelihoods(hf_client: Any, llama_client: Any) -> None:
    table = compare_loglikelihoods([hf_client, llama_client], tolerance=0.1)
    assert table.ok, table.format()


def test_real_model_batched_prefix_cached_scores_equal_direct_forward(hf_client: Any) -> None:
    torch = pytest.importorskip("torch")
    shots = "".join(f"Q: What is {i} + {i}?\nA: {2 * i}\n\n" for i in range(1, 6))
    reqs = [
        Request(model=MODEL, kind="loglikelihood", prompt=f"{shots}Q: What is {q} + {q}?\nA:", continuation=f" {a}")
        for q in (6, 7)
        for a in (12, 14, 16)
    ]
    fast = hf_client.process(reqs)
    engine = hf_client.engine.engine  # the deferred engine's real one (built by the first request)
    opts = engine.options
    try:
        engine.options = EngineOptions(batch_size=1, prefix_cache=False)
        slow = hf_client.process(reqs)
    finally:
        engine.options = opts
    tok = hf_client.tokenizer()
    for a, b, r in zip(fast, slow, reqs, strict=True):
        ctx, cont = tok.encode(r.prompt), tok.encode(r.continuation)
        with torch.inference_mode():
            lp = engine.model(torch.tensor([ctx + cont])).logits[0].log_softmax(-1)
        direct = sum(float(lp[len(ctx) - 1 + i, t]) for i, t in enumerate(cont))
        assert a.completions[0].logprob == pytest.approx(b.completions[0].logprob, abs=1e-4)
        assert a.completions[0].logprob == pytest.approx(direct, abs=1e-4)
    # the model can add: 6 + 6 = 12 is the likeliest of the three
    assert max(fast[:3], key=lambda r: r.completions[0].logprob) is fast[0]


def test_the_deferred_tokenizer_encodes_renders_and_names_special_ids_as_transformers_does() -> None:
    # The embedded client builds prompts with the folder's tokenizer.json and chat template
    # (no transformers import until a request misses the cache); the engine it builds
    # later uses transformers' tokenizer. Both must agree, token for token.
    from transformers import AutoTokenizer

    from holistic.models.folder_tokenizer import FolderTokenizer
    from holistic.models.hf_tokenizer import HFTokenizer
    from holistic.models.huggingface import special_ids_from_files
    from holistic.models.weights import converted_gguf_dir

    folder = converted_gguf_dir(embedded_gguf_path())
    light = FolderTokenizer(folder)
    full = HFTokenizer(AutoTokenizer.from_pretrained(str(folder)))
    texts = [
        "The capital of France is",
        " Paris",
        "Question: Which organ pumps blood?\nAnswer: the heart.\n\n",
        "  leading spaces, trailing spaces  ",
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
        "Ünïcödé – “quotes” 東京 🙂\t\ttabs\r\nand <br /> tags",
        "12345.678 + 0.5 = ?",
    ]
    for text in texts:
        assert light.encode(text) == full.encode(text), text
        assert light.decode(light.encode(text)) == full.decode(full.encode(text))
    chats = [
        (Message("user", "Which city is the capital of France?"),),
        (Message("system", "Be brief."), Message("user", "2+2?"), Message("assistant", "4"), Message("user", "3+3?")),
    ]
    for messages in chats:
        assert light.render_chat(messages) == full.render_chat(messages)
    special, pad = special_ids_from_files(folder, light)
    client = _client("transformers")
    engine = client.engine.engine  # builds the real engine
    assert special == engine.special_ids() and pad == engine.pad_id
    client.close()


def test_the_native_llama_scores_the_embedded_model_as_transformers_does() -> None:
    from holistic.models.hf_engine import TransformersEngine
    from holistic.models.llama_native import NativeLlamaForCausalLM
    from holistic.models.local_client import LocalClient
    from holistic.models.local_engine import DeferredEngine

    dep = ModelRegistry().get(MODEL)
    native = create_client(dep)
    reference = create_client(replace(dep, args={"native": False}))
    reqs = [
        Request(model=MODEL, kind="loglikelihood", prompt="The capital of France is", continuation=c)
        for c in (" Paris", " London", " a city in Europe")
    ] + [Request(model=MODEL, prompt="Question: 2+2=? Answer:", max_tokens=6)]
    a, b = native.process(reqs), reference.process(reqs)
    assert isinstance(native, LocalClient) and isinstance(native.engine, DeferredEngine)
    assert isinstance(native.engine.engine, TransformersEngine)
    assert isinstance(native.engine.engine.model, NativeLlamaForCausalLM)
    for x, y in zip(a, b, strict=True):
        assert x.success and y.success
        assert x.completions[0].text == y.completions[0].text
        assert [t.logprob for t in x.completions[0].tokens] == pytest.approx(
            [t.logprob for t in y.completions[0].tokens], abs=1e-4
        )
    native.close()
    reference.close()


def test_real_model_batched_drafted_generation_is_one_at_a_time_greedy(hf_client: Any) -> None:
    """Few-shot chain-of-thought prompts decoded together over their shared prefix, with
    drafts looked up in the text, give exactly the tokens of one prompt at a time, no
    prefix reuse, one token per step."""
    shots = "".join(
        f"Q: {name} has {a} apples and buys {b} more. How many apples does {name} have?\n"
        f"A: {name} starts with {a} apples. {a} + {b} = {a + b}. The answer is {a + b}.\n\n"
        for name, a, b in (("Ann", 3, 4), ("Bob", 10, 5), ("Cid", 7, 8))
    )
    questions = [
        "Dee has 6 apples and buys 9 more",
        "Eve has 12 pears and eats 5",
        "Fay reads 4 pages a day for 3 days",
    ]
    reqs = [
        Request(model=MODEL, prompt=f"{shots}Q: {q}. How many are there?\nA:", max_tokens=32, stop=("Q:",))
        for q in questions
    ]
    engine = hf_client.engine.engine
    opts = engine.options
    try:
        before = engine.counters.forward_calls
        fast = hf_client.process(reqs)
        fast_calls = engine.counters.forward_calls - before
        engine.options = EngineOptions(batch_size=1, prefix_cache=False, draft_tokens=0)
        before = engine.counters.forward_calls
        slow = [hf_client.process([r])[0] for r in reqs]
        slow_calls = engine.counters.forward_calls - before
    finally:
        engine.options = opts
    for a, b in zip(fast, slow, strict=True):
        assert a.success and b.success
        assert [t.text for t in a.completions[0].tokens] == [t.text for t in b.completions[0].tokens]
        assert a.completions[0].text == b.completions[0].text and a.completions[0].text.strip()
    assert fast_calls < slow_calls
