"""Text normalisation shared by the accuracy metrics.

- :func:`normalize_quasi` is the SQuAD-style normalisation behind
  ``quasi_exact_match`` and token F1: lower-case, drop punctuation, drop the
  articles *a*, *an*, *the*, fold runs of whitespace.
- :func:`word_tokens` splits text into lower-cased words (extractive fragments).
- :func:`final_number` extracts the answer of a maths problem: the number after
  GSM8K's ``####`` marker when present, otherwise the last number in the text.
"""

from __future__ import annotations

import re
import string
from decimal import Decimal, InvalidOperation

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)
_NUMBER = re.compile(r"-?\$?\s?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_WORD = re.compile(r"\w+", re.UNICODE)


def normalize_quasi(text: str) -> str:
    """Lower-case, remove punctuation and articles, collapse whitespace."""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCT)
    no_articles = _ARTICLES.sub(" ", no_punct)
    return " ".join(no_articles.split())


def quasi_tokens(text: str) -> list[str]:
    """Tokens of the quasi-normalised text (SQuAD F1 tokens)."""
    return normalize_quasi(text).split()


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, underscore); punctuation dropped."""
    return _WORD.findall(text.lower())


def final_number(text: str) -> Decimal | None:
    """The final numeric answer in ``text``, or ``None`` when there is none.

    GSM8K references end with ``#### 72``; model outputs usually end with the
    number. Thousands separators, a leading ``$`` and trailing zeros after the
    decimal point are ignored (``1,000.0`` == ``1000``).
    """
    marker = text.rfind("####")
    region = text[marker + 4 :] if marker >= 0 else text
    matches = _NUMBER.findall(region)
    if not matches:
        if marker >= 0:  # "####" with nothing numeric after it: look before it
            return final_number(text[:marker])
        return None
    raw = matches[0] if marker >= 0 else matches[-1]
    cleaned = raw.replace(",", "").replace("$", "").replace(" ", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    return value.normalize() if value != 0 else Decimal(0)
