"""The huggingface provider on a tiny random Llama written by the test (fast, offline)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from holistic.core.types import Capabilities, Message, ModelDeployment, Request  # noqa: E402
from holistic.models.engine_options import EngineOptions  # noqa: E402
from holistic.models.huggingface import create_huggingface_client  # noqa: E402
from holistic.models.local_engine import DeferredEngine, ScoreJob  # noqa: E402

CORPUS = [
    "The capital of France is Paris. The capital of Italy is Rome.",
    "Question: which organ pumps blood? Answer: the heart.",
    "One, two, three, four, five, six, seven, eight, nine, ten.",
    "The quick brown fox jumps over the lazy dog near the river bank.",
] * 20
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
FEW_SHOT = "".join(f"Question: what is {i} plus {i}? Answer: {2 * i}\n" for i in range(1, 6))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-llama")
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token=None))
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    specials = ["<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"]
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(CORPUS, trainer)
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        additional_special_tokens=specials[3:],
    )
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(out)
    config = transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)
    model.save_pretrained(out)
    return out


def _client(model_dir: Path, **args: object) -> Any:
    dep = ModelDeployment(
        name=f"huggingface/{model_dir}",
        provider="huggingface",
        model_id=str(model_dir),
        args=dict(args),
        context_window=256,
        capabilities=Capabilities(logprobs=True, prompt_logprobs=True, chat=True),
    )
    return create_huggingface_client(dep)


@pytest.fixture(scope="module")
def client(model_dir: Path) -> Iterator[Any]:
    c = _client(model_dir, device="cpu", dtype="float32", batch_size=4, min_shared_prefix=4)
    yield c
    c.close()


def _scoring_requests() -> list[Request]:
    reqs = []
    for q in range(4):
        prompt = f"{FEW_SHOT}Question: what is {q + 6} plus {q + 6}? Answer:"
        reqs += [
            Request(model="m", kind="loglikelihood", prompt=prompt, continuation=f" {c}") for c in (12, 14, 16, 18)
        ]
    reqs.append(Request(model="m", kind="loglikelihood", prompt="The capital of France is", continuation=" Paris."))
    reqs.append(Request(model="m", kind="rolling_loglikelihood", prompt="The quick brown fox jumps over the lazy dog."))
    return reqs


def _direct(client: Any, request: Request) -> float:
    """Logprob of the request from one plain forward pass of the transformers model."""
    tok = client.tokenizer()
    special = client.engine.special_ids()
    if request.kind == "rolling_loglikelihood":
        ctx, cont = [special.bos], tok.encode(request.prompt)
    else:
        ctx, cont = tok.encode(request.prompt), tok.encode(request.continuation)
    with torch.inference_mode():
        logits = client.engine.model(torch.tensor([ctx + cont])).logits[0].log_softmax(-1)
    return sum(float(logits[len(ctx) - 1 + i, t]) for i, t in enumerate(cont))


def test_batched_prefix_cached_scores_equal_unbatched_and_direct_forward(client: Any) -> None:
    reqs = _scoring_requests()
    fast = client.process(reqs)
    opts = client.engine.options
    try:
        client.engine.options = EngineOptions(batch_size=1, prefix_cache=False)
        slow = [client.process([r])[0] for r in reqs]
        client.engine.options = replace(opts, prefix_cache=False)
        batched_only = client.process(reqs)
    finally:
        client.engine.options = opts
    assert all(r.success for r in fast + slow + batched_only)
    for a, b, c, r in zip(fast, slow, batched_only, reqs, strict=True):
        assert a.completions[0].logprob == pytest.approx(b.completions[0].logprob, abs=1e-4)
        assert c.completions[0].logprob == pytest.approx(b.completions[0].logprob, abs=1e-4)
        assert a.completions[0].logprob == pytest.approx(_direct(client, r), abs=1e-4)
        assert len(a.completions[0].tokens) == len(b.completions[0].tokens) > 0
        assert a.completions[0].is_greedy == b.completions[0].is_greedy


def test_the_shared_few_shot_prefix_is_computed_once_per_run_not_per_call(model_dir: Path) -> None:
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4, row_tokens=64)
    prompts = [f"{FEW_SHOT}Question: what is {q} plus {q}? Answer:" for q in range(6, 12)]
    tok = client.tokenizer()
    counters = client.engine.counters
    first = client.process([Request(model="m", prompt=p, max_tokens=1) for p in prompts[:3]])
    after_first = counters.forward_tokens
    second = client.process([Request(model="m", prompt=p, max_tokens=1) for p in prompts[3:]])
    assert all(r.success for r in first + second)
    # far fewer tokens than running every prompt in full: the shared prefix ran once
    assert after_first < sum(len(tok.encode(p)) for p in prompts[:3]) / 2
    # ... and the second call took it from the engine's store instead of computing it again
    assert counters.prefix_hits >= 1
    shared = len(tok.encode(FEW_SHOT)) - 2
    assert counters.forward_tokens - after_first <= sum(len(tok.encode(p)) - shared for p in prompts[3:])
    client.close()


def _questions() -> list[Request]:
    """Choice-by-choice requests of 12 questions: contexts differ, some share a few-shot block."""
    reqs = []
    for q in range(12):
        shots = FEW_SHOT if q % 2 else ""
        prompt = f"{shots}Question: what is {q + 3} plus {q * 2}? Answer:"
        reqs += [
            Request(model="m", kind="loglikelihood", prompt=prompt, continuation=f" {c}")
            for c in (q, q + 10, 3 * q + 1, "seven")
        ]
    return reqs


def test_batching_across_prefix_nodes_gives_one_at_a_time_loglikelihoods_in_few_passes(model_dir: Path) -> None:
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4)
    reqs = _questions()
    fast = client.process(reqs)
    passes, tokens = client.engine.counters.forward_calls, client.engine.counters.forward_tokens
    client.engine.options = EngineOptions(batch_size=1, prefix_cache=False)
    slow = [client.process([r])[0] for r in reqs]
    assert all(r.success for r in fast + slow)
    for a, b in zip(fast, slow, strict=True):
        assert a.completions[0].logprob == pytest.approx(b.completions[0].logprob, abs=1e-4)
        assert [t.logprob for t in a.completions[0].tokens] == pytest.approx(
            [t.logprob for t in b.completions[0].tokens], abs=1e-4
        )
        assert a.completions[0].is_greedy == b.completions[0].is_greedy
    # 12 questions (48 requests) in a handful of passes, not one or two per question ...
    assert passes <= 4
    # ... and each context once: fewer tokens than the contexts counted once per choice
    tok = client.tokenizer()
    per_choice = sum(len(tok.encode(r.prompt)) for r in reqs)
    assert tokens < per_choice / 2
    client.close()


def test_choices_sharing_words_and_short_contexts_are_computed_once_with_the_same_loglikelihoods(
    model_dir: Path,
) -> None:
    # Short contexts (below min_shared_prefix) and choices that share their first words,
    # repeat each other or extend each other: every shared position is computed once and
    # its logits go to each choice running through it.
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=16)
    choices = [" the heart", " the heart of it", " the lungs", " the heart", " two", " the"]
    reqs = [
        Request(model="m", kind="loglikelihood", prompt=ctx, continuation=c)
        for ctx in ("Answer:", "Question: which organ pumps blood? Answer:", "One,")
        for c in choices
    ]
    engine, head_rows = client.engine, list[int]()
    head = engine._scoring_head  # counted: the rows of each call of the output head
    engine._scoring_head = lambda hidden: (head_rows.__iadd__([hidden.shape[0]]), head(hidden))[1]
    fast = client.process(reqs)
    engine._scoring_head = head
    tokens = client.engine.counters.forward_tokens
    client.engine.options = EngineOptions(batch_size=1, prefix_cache=False)
    slow = [client.process([r])[0] for r in reqs]
    assert all(r.success for r in fast + slow)
    for a, b in zip(fast, slow, strict=True):
        assert [t.logprob for t in a.completions[0].tokens] == pytest.approx(
            [t.logprob for t in b.completions[0].tokens], abs=1e-4
        )
        assert a.completions[0].is_greedy == b.completions[0].is_greedy
    # the unique tokens: each context once, each distinct continuation prefix once
    # (a continuation's last token is never computed: its logits predict nothing asked for)
    tok = client.tokenizer()
    trie: set[tuple[int, ...]] = set()
    for r in reqs:
        ids = tok.encode(r.prompt) + tok.encode(r.continuation)[:-1]
        trie.update(tuple(ids[: k + 1]) for k in range(len(ids)))
    assert tokens == len(trie)
    # and each position whose logits a choice reads goes through the output head once (a
    # context's last position predicts every choice's first token)
    read: set[tuple[int, ...]] = set()
    for r in reqs:
        context, ids = tok.encode(r.prompt), tok.encode(r.prompt) + tok.encode(r.continuation)
        read.update(tuple(ids[: k + 1]) for k in range(len(context) - 1, len(ids) - 1))
    assert sum(head_rows) == len(read) < sum(len(tok.encode(r.continuation)) for r in reqs)
    client.close()


def test_batched_greedy_generation_equals_one_at_a_time(model_dir: Path) -> None:
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4, row_tokens=64)
    prompts = [f"{FEW_SHOT}Question: what is {q} plus {q}? Answer:" for q in range(6, 12)]
    prompts += ["The capital of France is", "One, two, three,", "The quick brown"]
    reqs = [
        Request(model="m", prompt=p, max_tokens=3 + i % 5, stop=("\n",) if i % 2 else ()) for i, p in enumerate(prompts)
    ]
    _assert_as_one_at_a_time(client, reqs, client.process(reqs))
    client.close()


def _assert_as_one_at_a_time(client: Any, reqs: list[Request], fast: list[Any]) -> None:
    """``fast`` (the requests' results in one call) is what each request alone, without
    prefix sharing, gives: texts, finish reasons, token logprobs, top-k tokens."""
    client.engine.options = EngineOptions(batch_size=1, prefix_cache=False)
    slow = [client.process([r])[0] for r in reqs]
    for a, b in zip(fast, slow, strict=True):
        assert a.success and b.success
        assert a.completions[0].text == b.completions[0].text
        assert a.completions[0].finish_reason == b.completions[0].finish_reason
        assert [t.logprob for t in a.completions[0].tokens] == pytest.approx(
            [t.logprob for t in b.completions[0].tokens], abs=1e-4
        )
        assert [sorted(t.top_logprobs) for t in a.completions[0].tokens] == [
            sorted(t.top_logprobs) for t in b.completions[0].tokens
        ]


def test_one_token_answers_run_packed_over_the_shared_prefix_with_the_answers_of_one_at_a_time(
    model_dir: Path,
) -> None:
    """Multiple-choice letters (``max_tokens=1``) beside longer completions in one call: the
    letters' prompts run in packed rows over their shared few-shot block, with no padding,
    and every answer is what one prompt at a time without prefix sharing gives."""
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4, row_tokens=64)
    prompts = [f"{FEW_SHOT}Question: what is {q} plus {q * 3}? Answer:" for q in range(6, 14)]
    reqs = [Request(model="m", prompt=p, max_tokens=1, top_k_logprobs=3) for p in prompts]
    reqs += [Request(model="m", prompt=prompts[0], max_tokens=4), Request(model="m", prompt="One, two,", max_tokens=3)]
    reqs.append(Request(model="m", prompt=prompts[1], max_tokens=1, temperature=1.0, seed=7))
    fast = client.process(reqs)
    counters = client.engine.counters
    tok = client.tokenizer()
    letters = sum(len(tok.encode(p)) for p in prompts)
    # the shared block ran once for the letters (not once per prompt) ...
    assert counters.forward_tokens < letters / 2 + sum(len(tok.encode(r.prompt)) + r.max_tokens for r in reqs[8:])
    _assert_as_one_at_a_time(client, reqs, fast)
    assert fast[0].completions[0].tokens[0].top_logprobs  # asked for, given
    client.close()


def _in_blocks_of_three(model_dir: Path, monkeypatch: pytest.MonkeyPatch, rows: str) -> tuple[Any, list[Request]]:
    """A client whose engine takes the output head's rows three at a time (``rows``: the block size,
    of the head in the engine or of the log-softmax), and the questions with one long continuation."""
    from holistic.models import hf_engine, hf_scores

    monkeypatch.setattr(hf_scores if rows == "SOFTMAX_ROWS" else hf_engine, rows, 3)
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4)
    reqs = _questions()
    reqs.append(Request(model="m", kind="loglikelihood", prompt="One,", continuation=" two, three, four, five, six"))
    return client, reqs


def test_the_output_head_run_a_few_positions_at_a_time_scores_as_one_request_at_a_time(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, reqs = _in_blocks_of_three(model_dir, monkeypatch, "HEAD_ROWS")  # smaller than most continuations
    fast = client.process(reqs)
    assert client.engine.counters.forward_calls <= 4
    _assert_as_one_at_a_time(client, reqs, fast)
    client.close()


def test_one_token_answers_whose_logits_come_in_several_blocks_of_the_head_keep_their_own(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _ = _in_blocks_of_three(model_dir, monkeypatch, "HEAD_ROWS")  # the blocks share one buffer
    reqs = [Request(model="m", prompt=f"Question: what is {q} plus {q * 3}? Answer:", max_tokens=1) for q in range(8)]
    _assert_as_one_at_a_time(client, reqs, client.process(reqs))
    client.close()


def test_log_softmax_rows_taken_across_jobs_are_the_bits_of_job_by_job(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, reqs = _in_blocks_of_three(model_dir, monkeypatch, "SOFTMAX_ROWS")  # cutting through continuations
    blocks = client.process(reqs)
    each = client.process([replace(r, top_k_logprobs=1) for r in reqs])  # ranked tokens: job by job
    for a, b in zip(blocks, each, strict=True):
        assert a.success and b.success
        assert [(t.text, t.logprob) for t in a.completions[0].tokens] == [
            (t.text, t.logprob) for t in b.completions[0].tokens
        ]
        assert a.completions[0].logprob == b.completions[0].logprob
        assert a.completions[0].is_greedy == b.completions[0].is_greedy
    assert len({len(r.completions[0].tokens) for r in blocks}) > 1
    client.close()


def test_letters_alone_are_computed_without_padding(model_dir: Path) -> None:
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4, row_tokens=64)
    prompts = [f"{FEW_SHOT}Question: what is {q} plus {q * 3}? Answer:" for q in range(6, 14)]
    prompts += ["One,", "The quick brown fox jumps over the lazy dog near the"]  # suffixes of unequal length
    results = client.process([Request(model="m", prompt=p, max_tokens=1) for p in prompts])
    assert all(r.success and len(r.completions[0].tokens) == 1 for r in results)
    counters = client.engine.counters
    assert counters.padded_positions - counters.forward_tokens < len(prompts)
    client.close()


def test_prompts_prefilled_apart_are_decoded_together(model_dir: Path) -> None:
    """Long prompts each get their own prefill pass, but decode in one batch: the decoding
    steps are those of the longest completion, not the sum over prompts."""
    client = _client(model_dir, device="cpu", dtype="float32", max_batch_tokens=8, prefix_cache=False)
    prompts = ["The capital of France is", "One, two, three, four,", "The quick brown fox", "Once upon a"]
    reqs = [Request(model="m", prompt=p, max_tokens=6) for p in prompts]
    fast = client.process(reqs)
    calls = client.engine.counters.forward_calls
    client.engine.options = EngineOptions(batch_size=1, prefix_cache=False)
    slow = [client.process([r])[0] for r in reqs]
    for a, b in zip(fast, slow, strict=True):
        assert a.success and b.success
        assert a.completions[0].text == b.completions[0].text
        assert [t.logprob for t in a.completions[0].tokens] == pytest.approx(
            [t.logprob for t in b.completions[0].tokens], abs=1e-4
        )
    # 4 prefill passes + at most 5 shared decoding steps (one at a time: 4 x (1 + 5))
    assert calls <= 4 + 5
    client.close()


def test_the_model_loads_only_when_a_request_needs_it(model_dir: Path) -> None:
    client = _client(model_dir, device="cpu", dtype="float32")
    assert not client.engine.loaded
    identity = client.identity()  # cache keys need the identity, not the weights
    client.tokenizer().encode("prompts are built without the weights")
    assert not client.engine.loaded and identity["dtype"] == "float32" and identity["weights_sha256"]
    assert client.process([Request(model="m", prompt="One, two,", max_tokens=2)])[0].success
    assert client.engine.loaded and client.usage()["model_loads"] == 1
    client.close()


def test_a_deferred_engine_builds_prompts_without_importing_torch_and_scores_as_the_full_one(model_dir: Path) -> None:
    # Building the client and its prompts (all a fully cached rerun does) imports neither
    # torch nor transformers: checked in a fresh interpreter.
    code = (
        "import sys\n"
        "from holistic.models.huggingface import load_transformers_engine\n"
        f"engine, facts = load_transformers_engine({str(model_dir)!r}, device='cpu', deferred=True)\n"
        "engine.tokenizer().encode('Question: what is 2 plus 2? Answer:')\n"
        "print(facts['dtype'], 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["float32", "False", "False"]
    from holistic.models.huggingface import load_transformers_engine

    engine, facts = load_transformers_engine(str(model_dir), device="cpu", dtype="float32", deferred=True)
    assert isinstance(engine, DeferredEngine)
    deferred = engine
    full = _client(model_dir, device="cpu", dtype="float32")
    assert facts == {k: v for k, v in full.identity().items() if k in facts}
    text = "Question: what is 2 plus 2? Answer: 4</s><|user|>hi"
    assert deferred.tokenizer().encode(text) == full.tokenizer().encode(text)
    assert deferred.special_ids() == full.engine.special_ids()
    jobs = [ScoreJob(tuple(full.tokenizer().encode("One, two,")), tuple(full.tokenizer().encode(" three")))]
    assert not deferred.built
    a, b = deferred.score(jobs)[0], full.engine.score(jobs)[0]
    assert deferred.built and [t.logprob for t in a] == pytest.approx([t.logprob for t in b], abs=1e-6)
    deferred.close()
    full.close()


def test_the_native_llama_computes_what_transformers_computes(model_dir: Path) -> None:
    # Llama-architecture folders run on holistic's own torch code by default; `native: false`
    # runs transformers' implementation. Scores, greedy generations and the engine's
    # batching (trunks, packed rows, merged decoding) give the same numbers under both.
    from holistic.models.llama_native import NativeLlamaForCausalLM

    native = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4, row_tokens=64)
    reference = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4, row_tokens=64, native=False)
    reqs = _questions() + [
        Request(model="m", prompt=f"{FEW_SHOT}Question: what is {q} plus {q}? Answer:", max_tokens=4) for q in range(4)
    ]
    letters = [  # one-token answers over a shared prefix: keys/values dropped after the prefill
        Request(model="m", prompt=f"{FEW_SHOT}Question: what is {q} plus 1? Answer:", max_tokens=1) for q in range(6)
    ]
    a = native.process(reqs) + native.process(letters)
    b = reference.process(reqs) + reference.process(letters)
    assert isinstance(native.engine.model, NativeLlamaForCausalLM)
    assert not isinstance(reference.engine.model, NativeLlamaForCausalLM)
    for x, y in zip(a, b, strict=True):
        assert x.success and y.success
        assert [t.logprob for t in x.completions[0].tokens] == pytest.approx(
            [t.logprob for t in y.completions[0].tokens], abs=1e-4
        )
        assert [t.text for t in x.completions[0].tokens] == [t.text for t in y.completions[0].tokens]
    native.close()
    reference.close()


def test_generation_respects_max_tokens_and_stop_sequences(client: Any) -> None:
    prompt = "The capital of France is"
    free = client.process([Request(model="m", prompt=prompt, max_tokens=12)])[0]
    assert free.success
    c = free.completions[0]
    assert 1 <= len(c.tokens) <= 12 and free.completion_tokens <= 12
    text = c.text
    if c.finish_reason == "length":
        assert len(c.tokens) == 12
    assert len(text) >= 4, f"the random model ended too early: {text!r}"
    stop = text[2:4]
    stopped = client.process([Request(model="m", prompt=prompt, max_tokens=12, stop=(stop,))])[0].completions[0]
    assert stopped.text == text[: text.index(stop)]
    assert stop not in stopped.text
    assert stopped.finish_reason == "stop"
    short = client.process([Request(model="m", prompt=prompt, max_tokens=3)])[0]
    assert len(short.completions[0].tokens) <= 3
    assert text.startswith(short.completions[0].text)


def test_chat_messages_go_through_the_chat_template(client: Any) -> None:
    messages = (Message("system", "Be brief."), Message("user", "Capital of France?"))
    rendered = client.tokenizer().render_chat(messages)
    assert rendered == "<|system|>Be brief.</s><|user|>Capital of France?</s><|assistant|>"
    via_chat = client.process([Request(model="m", messages=messages, max_tokens=6, top_k_logprobs=3)])[0]
    via_text = client.process([Request(model="m", prompt=rendered, max_tokens=6)])[0]
    assert via_chat.completions[0].text == via_text.completions[0].text
    assert via_chat.prompt_tokens == len(client.tokenizer().encode(rendered))
    top = via_chat.completions[0].tokens[0].top_logprobs
    assert len(top) == 3 and via_chat.completions[0].tokens[0].logprob == pytest.approx(max(top.values()))


def test_sampling_is_seeded_and_completions_differ(client: Any) -> None:
    req = Request(model="m", prompt="One, two,", max_tokens=8, temperature=1.5, num_completions=3, seed=7)
    a = client.process([req])[0]
    b = client.process([req])[0]
    assert [c.text for c in a.completions] == [c.text for c in b.completions]
    assert len({c.text for c in a.completions}) > 1
    other = client.process([replace(req, seed=8)])[0]
    assert [c.text for c in other.completions] != [c.text for c in a.completions]


def test_too_long_prompt_is_a_recorded_error_not_an_exception(client: Any) -> None:
    ok = Request(model="m", kind="loglikelihood", prompt="The capital", continuation=" of")
    long = Request(model="m", prompt="one two three " * 200, max_tokens=2)
    results = client.process([ok, long])
    assert results[0].success
    assert not results[1].success and "context window" in (results[1].error or "")


def test_bad_provider_args_are_named(model_dir: Path) -> None:
    from holistic.core.errors import ModelError

    with pytest.raises(ModelError, match="did you mean 'batch_size'"):
        _client(model_dir, batchsize=4)
    with pytest.raises(ModelError, match="unknown dtype 'float8'"):
        _client(model_dir, dtype="float8")


def test_echo_returns_the_prompt_tokens_scored(client: Any) -> None:
    prompt = "The capital of France is"
    result = client.process([Request(model="m", prompt=prompt, max_tokens=2, echo=True)])[0]
    rolling = client.process([Request(model="m", kind="rolling_loglikelihood", prompt=prompt)])[0]
    assert result.prompt_logprobs is not None
    assert "".join(t.text for t in result.prompt_logprobs) == prompt
    assert sum(t.logprob for t in result.prompt_logprobs) == pytest.approx(rolling.completions[0].logprob, abs=1e-4)


def test_an_engine_failure_fails_only_the_request_that_caused_it(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    poison = tuple(client.tokenizer().encode("poison"))
    original = client.engine.generate

    def fragile(jobs: Any) -> Any:
        if any(j.prompt == poison for j in jobs):
            raise RuntimeError("engine blew up")
        return original(jobs)

    monkeypatch.setattr(client.engine, "generate", fragile)
    results = client.process([Request(model="m", prompt=p, max_tokens=2) for p in ("One, two,", "poison", "The")])
    assert [r.success for r in results] == [True, False, True]
    assert "engine blew up" in (results[1].error or "")


def test_a_folder_named_in_the_model_name_is_used_with_its_own_window_and_chat_template(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holistic.models.registry import ModelRegistry, create_client

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(model_dir.parent)
    registry = ModelRegistry()
    for name in (f"huggingface/{model_dir.name}", f"huggingface/./{model_dir.name}", f"huggingface/{model_dir}"):
        deployment = registry.get(name)
        # From the folder's config.json and tokenizer_config.json, not the registry's defaults.
        assert (deployment.context_window, deployment.capabilities.chat) == (512, True), name
    client = create_client(registry.get(f"huggingface/{model_dir.name}"))
    try:
        (result,) = client.process([Request(model="m", kind="generate", prompt="The capital of", max_tokens=2)])
        assert result.success
    finally:
        client.close()


def test_a_fully_cached_rerun_never_loads_the_model(model_dir: Path, tmp_path: Path) -> None:
    from holistic.core.types import Instance, RequestState
    from holistic.execution.serving import serve
    from holistic.models.cache import RequestCache

    states = [
        RequestState(instance=Instance(id=f"i{i}", input=r.prompt), request=r) for i, r in enumerate(_questions())
    ]
    cache = RequestCache(tmp_path / "cache.sqlite")
    first = _client(model_dir, device="cpu", dtype="float32")
    _, _, served = serve(states, first, cache)
    assert served.model_calls == len(states) and served.engine["forward_tokens"] > 0
    again = _client(model_dir, device="cpu", dtype="float32")
    out, _, served = serve(states, again, cache)
    assert served.cache_hits == len(states) and all(s.result is not None and s.result.success for s in out)
    assert not again.engine.loaded and served.engine["forward_calls"] == 0
    first.close()
    again.close()
    cache.close()


def test_drafted_decoding_keeps_the_greedy_tokens_in_fewer_passes(model_dir: Path) -> None:
    """Drafts looked up in a row's own text are kept only where they are the model's argmax:
    the completions are those of one token per step, computed in fewer forward passes (this
    random model soon repeats itself, so its drafts are often right)."""
    client = _client(model_dir, device="cpu", dtype="float32", min_shared_prefix=4)
    prompts = [f"{FEW_SHOT}Question: what is {q} plus {q}? Answer:" for q in range(6, 9)]
    reqs = [Request(model="m", prompt=p, max_tokens=40) for p in [*prompts, "One, two, three, four, five,"]]
    drafted = client.process(reqs)
    drafted_calls = client.engine.counters.forward_calls
    client.engine.options = EngineOptions(draft_tokens=0)
    plain = client.process(reqs)
    plain_calls = client.engine.counters.forward_calls - drafted_calls
    client.engine.options = EngineOptions(batch_size=1, prefix_cache=False, draft_tokens=0)
    alone = [client.process([r])[0] for r in reqs]
    for a, b, c in zip(drafted, plain, alone, strict=True):
        assert a.success and b.success and c.success
        assert len(a.completions[0].tokens) == 40
        assert a.completions[0].text == b.completions[0].text == c.completions[0].text
        assert [t.logprob for t in a.completions[0].tokens] == pytest.approx(
            [t.logprob for t in c.completions[0].tokens], abs=1e-4
        )
    assert drafted_calls < plain_calls
    client.close()


def test_finished_rows_stop_consuming_compute(model_dir: Path) -> None:
    """A row that has all its tokens leaves the decoding batch: the positions decoding
    computes are one per token still to come for each row, none for finished rows."""
    client = _client(model_dir, device="cpu", dtype="float32", prefix_cache=False, draft_tokens=0)
    prompts = ["The capital of France is", "One, two, three, four,", "The quick brown fox"]
    reqs = [Request(model="m", prompt=p, max_tokens=m) for p, m in zip(prompts, (2, 5, 30), strict=True)]
    results = client.process(reqs)
    counters = client.engine.counters
    lengths = [len(client.tokenizer().encode(p)) for p in prompts]
    prefill = len(prompts) * max(lengths)  # one right-padded prefill pass
    generated = [r.completion_tokens for r in results]
    assert generated == [2, 5, 30]
    # each step after the prefill's first token computes one position per unfinished row
    assert counters.padded_positions - prefill == sum(g - 1 for g in generated)
    assert counters.forward_calls == 1 + 29
    client.close()
