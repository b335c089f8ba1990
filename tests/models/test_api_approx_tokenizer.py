"""The stand-in tokenizer API models use for window fitting: lossless and never optimistic."""

from __future__ import annotations

from holistic.core.types import Message
from holistic.models.approx_tokenizer import ApproxTokenizer


def test_round_trip_on_any_text() -> None:
    tokenizer = ApproxTokenizer()
    for text in ["The capital of France is Paris.", "中文字符 and café\n\n  x_y = 12345678;", "tab\there\r\nend", ""]:
        assert tokenizer.decode(tokenizer.encode(text)) == text


def test_counts_err_on_the_high_side() -> None:
    tokenizer = ApproxTokenizer()
    assert tokenizer.count("internationalization") == 4  # long words cost several pieces
    assert tokenizer.count("中文字符") == 4  # one piece per CJK character, as real tokenizers spend
    messages = [Message("system", "Be brief."), Message("user", "Hi")]
    assert tokenizer.count(tokenizer.render_chat(messages)) > tokenizer.count("Be brief.Hi")
