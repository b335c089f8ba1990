"""Word tokenization as HELM does it: NLTK's ``word_tokenize``, offline.

HELM tokenizes with ``nltk.word_tokenize`` for BLEU and the bias metrics. That
function first splits sentences with the Punkt model of the language
(``punkt_tab``), which NLTK does not ship: it downloads it on first use. The
English model is shipped with holistic (``nltk_data/tokenizers/punkt_tab/english``,
provenance in ``nltk_data/PROVENANCE.md``), so tokenizing never touches the network
and does not depend on what the user's own NLTK data folder holds.

:func:`word_tokenize` is NLTK's own composition — Punkt sentences, then NLTK's
Treebank-style word tokenizer on each — with the shipped parameters loaded
directly, so it gives ``nltk.word_tokenize``'s tokens exactly.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

PUNKT_DIR = ("nltk_data", "tokenizers", "punkt_tab", "english")


def _lines(name: str) -> list[str]:
    folder = resources.files("holistic.metrics")
    for part in PUNKT_DIR:
        folder = folder.joinpath(part)
    text = folder.joinpath(name).read_text(encoding="utf-8")
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


@cache
def punkt_tokenizer() -> Any:
    """NLTK's English Punkt sentence tokenizer, with the parameters shipped with holistic."""
    from collections import defaultdict

    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.collocations = {tuple(line.split("\t")) for line in _lines("collocations.tab")}
    params.sent_starters = set(_lines("sent_starters.txt"))
    params.abbrev_types = set(_lines("abbrev_types.txt"))
    ortho = defaultdict(int)
    for line in _lines("ortho_context.tab"):
        word, value = line.split("\t")
        ortho[word] = int(value)
    params.ortho_context = ortho
    tokenizer = PunktSentenceTokenizer()
    tokenizer._params = params
    return tokenizer


@cache
def _word_tokenizer() -> Any:
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def sent_tokenize(text: str) -> list[str]:
    """English sentences of ``text`` (``nltk.sent_tokenize``)."""
    return list(punkt_tokenizer().tokenize(text))


def word_tokenize(text: str) -> list[str]:
    """Words of ``text`` exactly as ``nltk.word_tokenize(text)`` gives them (English)."""
    words = _word_tokenizer()
    return [token for sentence in sent_tokenize(text) for token in words.tokenize(sentence)]
