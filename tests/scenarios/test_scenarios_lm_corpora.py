"""Language-modelling corpora read from the user's copies: The Pile, TwitterAAE and ICE.

The files are written here in the exact formats of HELM's inputs (texts invented for
the test): the Pile's test JSONL with ``meta.pile_set_name`` and EleutherAI's
subsample index lists; HELM's header-less ``<demographic>_tweets.csv``; ICE's
per-region archive folders with the corpus markup.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.ice import strip_markup
from holistic.scenarios.registry import create_scenario


def _load(ctx: ScenarioContext, name: str, **args: object) -> list[Instance]:
    return create_scenario(ScenarioSpec.make(name, args)).get_instances(ctx)


def _folder(ctx: ScenarioContext, name: str) -> Path:
    assert ctx.data_root is not None
    path = ctx.data_root / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _pile_row(subset: str, text: str) -> str:
    return json.dumps({"text": text, "meta": {"pile_set_name": subset}}) + "\n"


def test_pile_subset_in_file_order_then_the_subsample(offline_ctx: ScenarioContext) -> None:
    pile = _folder(offline_ctx, "the_pile")
    rows = [_pile_row("Enron Emails" if i % 2 else "ArXiv", f"document {i}") for i in range(8)]
    rows.append(_pile_row("PhilPapers", "a paper"))
    (pile / "test.jsonl").write_text("".join(rows), encoding="utf-8")
    indices = pile / "test_subsample_indices" / "enron"
    indices.mkdir(parents=True)
    (indices / "group0.json").write_text("[3, 0, 3]", encoding="utf-8")
    # Enron documents are lines 2, 4, 6, 8; positions 0 and 3 (sorted, distinct) -> lines 2 and 8.
    enron = _load(offline_ctx, "the_pile", subset="Enron Emails")
    assert [(i.id, i.input) for i in enron] == [("enron-2", "document 1"), ("enron-8", "document 7")]
    assert enron[0].metadata["subset"] == "Enron Emails"
    # PhilPapers is not subsampled (no index file needed).
    assert [i.input for i in _load(offline_ctx, "the_pile", subset="PhilPapers")] == ["a paper"]
    (indices / "group0.json").write_text("[4]", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"group0\.json: position 4 is outside the subset's 4 documents"):
        _load(offline_ctx, "the_pile", subset="Enron Emails")
    (pile / "test.jsonl").write_text(_pile_row("ArXiv", "x") + json.dumps({"text": "y"}) + "\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"test\.jsonl:2: expected .*pile_set_name"):
        _load(offline_ctx, "the_pile", subset="ArXiv")
    with pytest.raises(ValueError, match="did you mean 'ArXiv'"):
        _load(offline_ctx, "the_pile", subset="Arxiv")


def test_twitter_aae_both_dialect_groups(offline_ctx: ScenarioContext) -> None:
    folder = _folder(offline_ctx, "twitter_aae")
    (folder / "aa_tweets.csv").write_text('first tweet here\n"a tweet, with a comma"\n', encoding="utf-8")
    (folder / "white_tweets.csv").write_text('"two\nlines"\n', encoding="utf-8")
    instances = _load(offline_ctx, "twitter_aae")
    assert [(i.id, i.input, i.metadata["demographic"]) for i in instances] == [
        ("aa-0", "first tweet here", "aa"),
        ("aa-1", "a tweet, with a comma", "aa"),
        ("white-0", "two\nlines", "white"),
    ]
    assert len(_load(offline_ctx, "twitter_aae", demographic="white")) == 1
    (folder / "aa_tweets.csv").write_text("ok\n\nnext\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"aa_tweets\.csv:2: empty row"):
        _load(offline_ctx, "twitter_aae", demographic="aa")


def test_ice_markup_is_stripped_as_helm_does() -> None:
    raw = "<ICE-IND:S1A-001#1:1:A>\n<$A> <#> He says <O>laughs</O> one minute <,> okay\n\n\n<$B> <#> I gave it <->you</->\n"
    assert strip_markup(raw) == "<$A> He says  one minute, okay\n\n<$B> I gave it"
    assert strip_markup("W2A-001 <p>The <it>Mint</it> &ersand; coins</p>") == "The Mint & coins"


def test_ice_regions_categories_and_east_africa_texts(offline_ctx: ScenarioContext) -> None:
    ice = _folder(offline_ctx, "ice")
    india = ice / "ICE India" / "Corpus"
    india.mkdir(parents=True)
    (india / "S1A-001.txt").write_text("<$A> <#> Spoken words", encoding="utf-8")
    (india / "W2A-001.txt").write_bytes("<p>Written caf\xe9</p>".encode("latin-1"))
    ea = ice / "ICE-EA" / "corpus" / "retagged for wsmith" / "all east africa"
    ea.mkdir(parents=True)
    (ea / "conv1K.txt").write_text("S1A001K\nFirst talk\nS1A002K\nSecond talk\n", encoding="utf-8")
    instances = _load(offline_ctx, "ice")  # regions not extracted are skipped when all are asked for
    assert [(i.id, i.input) for i in instances] == [
        ("ea/conv1K.txt-0", "First talk"),
        ("ea/conv1K.txt-1", "Second talk"),
        ("ind/S1A-001.txt", "<$A> Spoken words"),
        ("ind/W2A-001.txt", "Written café"),
    ]
    assert {i.metadata["region"] for i in instances} == {"ea", "ind"}
    assert [i.id for i in _load(offline_ctx, "ice", subset="ind", category="W")] == ["ind/W2A-001.txt"]
    with pytest.raises(DataSourceError, match=r"ICE-HK/ \(hk\).*cannot be downloaded automatically"):
        _load(offline_ctx, "ice", subset="hk")
