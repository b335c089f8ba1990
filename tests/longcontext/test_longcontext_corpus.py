"""The synthetic corpus generator and the user-corpus loader."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.scenarios.haystack.corpus import SENTIMENTS, parse_sentiment
from holistic.scenarios.haystack.generator import generate_corpus
from holistic.scenarios.haystack.loader import load_corpus

_TONE = {
    "very_positive": ("record", "soar", "surge", "doubl", "blowout", "all-time", "breakthrough", "stellar", "landmark"),
    "very_negative": ("plunge", "fraud", "cut", "suspend", "recall", "worst", "slump", "crash", "collapse"),
}


def test_generator_makes_thousands_of_distinct_annotated_articles_deterministically() -> None:
    corpus = generate_corpus(4000, seed=1)
    assert len(corpus) == 4000
    assert len({(a.title, a.body) for a in corpus}) == 4000
    assert len({a.id for a in corpus}) == 4000
    assert generate_corpus(4000, seed=1).fingerprint == corpus.fingerprint
    assert generate_corpus(4000, seed=2).fingerprint != corpus.fingerprint
    counts = Counter(a.sentiment for a in corpus)
    assert set(counts) == set(SENTIMENTS) and min(counts.values()) > 400
    assert len(corpus.companies()) == 60
    for article in corpus.articles[:300]:
        assert article.company in article.title or article.company in article.body
        words = (article.title + " " + article.body).lower()
        if article.sentiment in _TONE:
            assert any(w in words for w in _TONE[article.sentiment]), article
    # Similar names across sectors make company hard negatives possible.
    stems = Counter(name.split()[0] for name in corpus.companies())
    assert max(stems.values()) >= 2


def _write_csv(path: Path, rows: list[str]) -> Path:
    path.write_text("id,title,body,company,date,sentiment,sector\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_csv_and_jsonl_corpora_load(tmp_path: Path) -> None:
    csv_path = _write_csv(
        tmp_path / "news.csv",
        [
            'a1,"Acme up","Acme, the maker, rose.",Acme,2023-01-02,Very Positive,tech',
            "a2,Acme down,Acme fell.,Acme,2023-02-03T10:00:00,-1,",
        ],
    )
    corpus = load_corpus(csv_path)
    assert [a.id for a in corpus] == ["a1", "a2"]
    assert corpus[0].body == "Acme, the maker, rose." and corpus[0].sentiment == "very_positive"
    assert corpus[0].sector == "tech" and corpus[1].sector is None
    assert str(corpus[1].date) == "2023-02-03" and corpus[1].sentiment == "negative"
    jsonl = tmp_path / "news.jsonl"
    jsonl.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "id": 7,
                    "title": "T",
                    "body": "B",
                    "company": "C",
                    "date": "2020-05-05",
                    "sentiment": "neutral",
                    "extra": 1,
                },
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    assert load_corpus(jsonl)[0].id == "7"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["a1,T,B,C,2023-13-01,neutral,"], "news.csv:2: field 'date' is '2023-13-01', expected YYYY-MM-DD"),
        (
            ["a1,T,B,C,2023-01-01,neutral,", "a1,T,B,C,2023-01-01,neutral,"],
            "news.csv:3: field 'id': 'a1' already used on line 2",
        ),
        (["a1,T,B,C,2023-01-01,great,"], "news.csv:2: field 'sentiment': unknown sentiment 'great'"),
        (["a1,T,,C,2023-01-01,neutral,"], "news.csv:2: field 'body' is empty"),
    ],
)
def test_bad_rows_are_reported_with_file_line_and_field(tmp_path: Path, rows: list[str], message: str) -> None:
    with pytest.raises(DataSourceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_corpus(_write_csv(tmp_path / "news.csv", rows))


def test_missing_column_suggests_the_nearest_name(tmp_path: Path) -> None:
    path = tmp_path / "news.csv"
    path.write_text("id,title,text,company,date,sentiment\na,b,c,d,2020-01-01,neutral\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"news.csv:1: missing field 'body'"):
        load_corpus(path)
    path.write_text("id,headline,body,company,date,sentiments\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"missing field 'title'"):
        load_corpus(path)
    path2 = tmp_path / "news.jsonl"
    path2.write_text(
        '{"id": "a", "title": "t", "body": "b", "company": "c", "dates": "2020-01-01", "sentiment": "neutral"}\n'
    )
    with pytest.raises(DataSourceError, match=r"news.jsonl:1: missing field 'date'; did you mean 'dates'\?"):
        load_corpus(path2)
    other = tmp_path / "news.txt"
    other.write_text("x", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"unsupported corpus format '.txt'; use .csv or .jsonl"):
        load_corpus(other)


def test_sentiment_labels_accept_common_spellings() -> None:
    assert parse_sentiment("very-negative") == "very_negative"
    assert parse_sentiment(" Positive ") == "positive"
    assert parse_sentiment(2) == "very_positive"
    with pytest.raises(ValueError, match="expected one of very_negative"):
        parse_sentiment("mixed")


def test_user_corpus_drives_the_scenario(tmp_path: Path) -> None:
    from holistic.core.interfaces import ScenarioContext
    from holistic.scenarios.haystack.scenario import HaystackScenario

    corpus = generate_corpus(1500, seed=4)
    path = tmp_path / "mine.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"doc-{i}",
                    "title": a.title,
                    "body": a.body,
                    "company": a.company,
                    "date": a.date.isoformat(),
                    "sentiment": a.sentiment.replace("_", " "),
                }
            )
            + "\n"
            for i, a in enumerate(corpus)
        ),
        encoding="utf-8",
    )
    scenario = HaystackScenario(tasks=["company+time"], lengths=[1024], records_per_length=2, corpus=str(path))
    instances = scenario.get_instances(ScenarioContext())
    assert len(instances) == 4
    assert all(i.metadata["corpus"] == "mine.jsonl" for i in instances)
    assert all(g.startswith("doc-") for i in instances for g in i.metadata["gold_ids"])
