"""Pieces of the local providers that need no model: prefix planning, stops, hashing, checks."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from holistic.core.errors import ModelError
from holistic.core.interfaces import Client
from holistic.core.types import Message, ModelDeployment, Request, RequestResult
from holistic.models.chat_template import render_chat_template
from holistic.models.check import CheckCase, compare_loglikelihoods
from holistic.models.prefix_plan import plan_prefixes
from holistic.models.registry import ModelRegistry, create_client
from holistic.models.stops import cut_at_stop, find_stop
from holistic.models.weights import file_sha256


def _members(node: Any) -> list[int]:
    return [i for n in node.walk() for i in n.members]


def test_prefix_plan_groups_shared_prefixes_and_keeps_every_sequence_once() -> None:
    shared = list(range(100, 140))  # 40 shared tokens, like instructions + examples
    seqs = [[*shared, 1, 2, i] for i in range(5)] + [[7, 8, 9], [*shared[:10], 5]]
    root = plan_prefixes(seqs, [len(s) - 1 for s in seqs], min_shared=8)
    assert sorted(_members(root)) == list(range(len(seqs)))
    deepest = max(root.walk(), key=lambda n: n.end)
    assert deepest.end == 42 and sorted(deepest.members) == [0, 1, 2, 3, 4]
    assert 5 in root.members  # nothing in common with the others


def test_prefix_plan_never_shares_past_a_sequences_limit() -> None:
    seqs = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]]
    root = plan_prefixes(seqs, [4, 10], min_shared=2)
    for node in root.walk():
        for i in node.members:
            assert node.end <= [4, 10][i]
    identical = plan_prefixes([[1, 2, 3, 4]] * 3, [3, 3, 3], min_shared=2)
    assert max(n.end for n in identical.walk()) == 3  # the last token is recomputed per copy


def test_stop_sequences_cut_text_and_tokens() -> None:
    pieces = ["Paris", ".", "\n", "Question", ":"]

    def decode(ids: Sequence[int]) -> str:
        return "".join(pieces[i] for i in ids)

    assert find_stop("Paris.\nQuestion", ["\n", "Question"]) == 6
    text, kept, stopped = cut_at_stop(decode, [0, 1, 2, 3, 4], ["\nQ"])
    assert (text, kept, stopped) == ("Paris.", 2, True)
    assert cut_at_stop(decode, [0, 1], ["zzz"]) == ("Paris.", 2, False)


def test_chat_template_renders_like_transformers() -> None:
    template = (
        "{% for m in messages %}{{ bos_token }}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    out = render_chat_template(template, [Message("user", "hi")], bos_token="<s>")
    assert out == "<s>user: hi\nassistant:"
    with pytest.raises(ModelError, match="only user"):
        render_chat_template("{{ raise_exception('only user') }}", [Message("system", "x")])


def test_file_hash_is_cached_by_path_mtime_and_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "cache"))
    f = tmp_path / "w.gguf"
    f.write_bytes(b"weights-1")
    first = file_sha256(f)
    assert (tmp_path / "cache" / "hashes.json").is_file()
    assert file_sha256(f) == first
    f.write_bytes(b"weights-22")
    os.utime(f, ns=(1, 1))
    assert file_sha256(f) != first


def test_compare_loglikelihoods_flags_disagreements() -> None:
    reg = ModelRegistry()
    a = create_client(reg.get("simple/echo"))
    b = create_client(reg.get("simple/echo"))
    same = compare_loglikelihoods([a, b], [("The capital of France is", " Paris")])
    assert same.ok and same.rows[0].max_diff == 0.0
    assert "all agree" in same.format()

    class Shifted:
        deployment = replace(a.deployment, name="simple/shifted")

        def process(self, requests: Sequence[Request]) -> list[RequestResult]:
            out = a.process(requests)
            return [
                replace(r, completions=(replace(r.completions[0], logprob=r.completions[0].logprob - 1.0),))
                for r in out
            ]

        def identity(self) -> dict[str, Any]:
            return {"engine": "shifted"}

    table = compare_loglikelihoods(
        {"echo": a, "shifted": cast(Client, Shifted())}, [CheckCase("One, two,", " three")], tolerance=0.5
    )
    assert not table.ok and table.rows[0].max_diff == pytest.approx(1.0)
    assert "!!" in table.format()
    no_logprobs = create_client(reg.get("simple/no-logprobs"))
    failed = compare_loglikelihoods([a, no_logprobs], [("a", " b")])
    assert failed.rows[0].flagged and "simple/no-logprobs" in failed.rows[0].errors


def test_embedded_engine_and_arg_errors_suggest_valid_names() -> None:
    dep = ModelRegistry().get("embedded/smollm2-135m-instruct")
    with pytest.raises(ModelError, match="did you mean 'transformers'"):
        create_client(replace(dep, args={"engine": "transformer"}))
    with pytest.raises(ModelError, match="does not apply to engine 'llama_cpp'"):
        create_client(replace(dep, args={"engine": "llama_cpp", "dtype": "float32"}))


def test_llama_cpp_provider_checks_the_path(tmp_path: Path) -> None:
    dep = ModelDeployment(name="llama_cpp/x", provider="llama_cpp", model_id=str(tmp_path / "model.bin"))
    with pytest.raises(ModelError, match=r"does not end in \.gguf"):
        create_client(dep)
    with pytest.raises(ModelError, match="does not exist"):
        create_client(replace(dep, model_id=str(tmp_path / "missing.gguf")))
