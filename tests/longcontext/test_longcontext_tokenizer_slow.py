"""Lengths in the embedded model's own tokens (loads its tokenizer, never its weights)."""

from __future__ import annotations

import pytest

from holistic.core.interfaces import ScenarioContext
from holistic.models.counting import tokenizer_resolver
from holistic.models.registry import ModelRegistry
from holistic.scenarios.haystack.scenario import HaystackScenario


@pytest.mark.real_model
def test_record_lengths_are_counted_in_the_embedded_models_tokens() -> None:
    resolver = tokenizer_resolver(ModelRegistry())
    unit = resolver("embedded/smollm2-135m-instruct")
    assert not unit.fallback and unit.reason is None
    scenario = HaystackScenario(tasks=["company+time"], lengths=[1536, 2048], records_per_length=2, corpus_size=1500)
    ctx = ScenarioContext(model="embedded/smollm2-135m-instruct", tokenizers=resolver)  # as execution passes it
    instances = scenario.get_instances(ctx)
    assert len(instances) == 8
    for instance in instances:
        m = instance.metadata
        assert m["length_unit"] == "tokens" and m["tokenizer_fallback"] is False
        assert m["context_tokens"] == unit.counter.count(instance.input)
        assert m["length"] - 120 <= m["context_tokens"] <= m["length"]
        # BPE tokens, not characters / 4: the two differ on this text.
        assert m["context_tokens"] != -(-len(instance.input) // 4)
    llama_cpp = pytest.importorskip("llama_cpp")
    from holistic.models.weights import embedded_gguf_path

    vocab = llama_cpp.Llama(model_path=str(embedded_gguf_path()), vocab_only=True, verbose=False)
    for instance in instances[:2]:
        served = len(vocab.tokenize(instance.input.encode("utf-8"), add_bos=False, special=True))
        assert abs(served - instance.metadata["context_tokens"]) <= 0.01 * served  # what llama.cpp will see
