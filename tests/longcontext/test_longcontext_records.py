"""Record construction invariants of the haystack scenario (fast: chars/4 and a word tokenizer)."""

from __future__ import annotations

import hashlib
import json
import statistics
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from holistic.core.hashing import canonical_json
from holistic.models.simple import SimpleTokenizer
from holistic.scenarios.haystack import prompts
from holistic.scenarios.haystack.clauses import CorpusIndex
from holistic.scenarios.haystack.generator import generate_corpus
from holistic.scenarios.haystack.queries import BUILTIN_TASKS, parse_task
from holistic.scenarios.haystack.records import Record, RecordBuilder, RecordSettings, depth_bin_of
from holistic.scenarios.haystack.tokens import LengthUnit, fallback_unit

REPO = Path(__file__).resolve().parents[2]
LENGTHS = (2048, 4096, 8192)


@cache
def _index() -> CorpusIndex:
    return CorpusIndex.of(generate_corpus(3000, seed=7))


@cache
def _records(unit_name: str) -> tuple[RecordBuilder, dict[str, list[Record]]]:
    unit = LengthUnit(SimpleTokenizer(), "simple") if unit_name == "simple" else fallback_unit("test")
    builder = RecordBuilder(
        _index(), unit, RecordSettings(lengths=LENGTHS, records_per_length=4, num_queries=3, seed=3)
    )
    return builder, {task: builder.build_task(parse_task(task)) for task in BUILTIN_TASKS}


def _all(unit_name: str = "simple") -> list[Record]:
    return [r for records in _records(unit_name)[1].values() for r in records]


@pytest.mark.parametrize("unit_name", ["simple", "chars"])
def test_context_length_is_the_target_within_one_article(unit_name: str) -> None:
    builder, by_task = _records(unit_name)
    for record in (r for rs in by_task.values() for r in rs):
        m = record.metadata
        assert m["context_tokens"] == builder.unit.counter.count(record.text)  # what is recorded is what is there
        assert m["context_tokens"] <= m["length"]
        assert m["length"] - m["context_tokens"] <= builder.max_tokens + 8, record.id


def test_needles_are_exactly_the_matching_articles_and_depths_are_where_they_sit() -> None:
    builder, by_task = _records("simple")
    corpus = _index().corpus
    for task, records in by_task.items():
        queries = {q.sentence: q for q in builder.queries(parse_task(task))}
        for record in records:
            m = record.metadata
            query = queries[m["query"]]
            matching = {corpus[p].id for p in query.matches}
            in_context = [i for i in m["context_ids"] if i in matching]
            assert in_context == m["gold_ids"] == list(record.gold_ids)  # no unlabelled needle, context order
            assert m["num_needles"] == len(m["gold_ids"]) == len(m["needle_depths"])
            if m["zero_needle"]:
                assert m["num_needles"] == 0 and m["depth_bin"] is None
                continue
            assert 1 <= m["num_needles"] <= m["k_max"] == 10
            # Recompute each needle's depth from the blocks in front of it.
            blocks = [builder.tokens(corpus.position(i)) for i in m["context_ids"]]
            total = sum(blocks)
            for gold_id, depth in zip(m["gold_ids"], m["needle_depths"], strict=True):
                at = m["context_ids"].index(gold_id)
                assert depth == pytest.approx(sum(blocks[:at]) / total, abs=1e-4)
                assert 0.0 <= depth < 1.0
            median = statistics.median(m["needle_depths"])
            assert m["depth_bin"] == ["0-25", "25-50", "50-75", "75-100"][depth_bin_of(median, 4)]
            assert prompts.article_block(corpus[corpus.position(m["gold_ids"][0])], "plain").rstrip() in record.text


def test_k_spans_one_to_ten_and_each_needle_has_its_own_depth() -> None:
    builder = RecordBuilder(
        _index(), fallback_unit("test"), RecordSettings(lengths=(8192,), records_per_length=60, num_queries=6, seed=5)
    )
    records = [r for r in builder.build_task(parse_task("company")) if not r.metadata["zero_needle"]]
    counts = [r.metadata["num_needles"] for r in records]
    assert set(counts) == set(range(1, 11))  # k in [1, 10], as the paper draws it (not capped by a depth bin)
    spread = []
    for record in records:
        m = record.metadata
        depths = m["needle_depths"]
        assert m["needle_depth_bins"] == [["0-25", "25-50", "50-75", "75-100"][depth_bin_of(d, 4)] for d in depths]
        assert m["depth"] == pytest.approx(statistics.median(depths), abs=1e-4)
        if len(depths) >= 2:
            assert len(set(depths)) == len(depths)  # one record's needles sit at different depths
            spread.append(len(set(m["needle_depth_bins"])))
    # Depths are drawn independently per needle: records with many needles span several bins.
    assert max(spread) == 4 and statistics.mean(spread) > 2


def test_a_needle_count_or_share_that_cannot_fit_is_refused_naming_the_field() -> None:
    from holistic.core.errors import ScenarioArgError

    with pytest.raises(
        ScenarioArgError, match=r"max_needles 10 does not fit.*largest max_needles that fits is \d"
    ) as info:
        RecordBuilder(_index(), fallback_unit("test"), RecordSettings(lengths=(512, 4096)))
    assert info.value.field == "max_needles"
    with pytest.raises(ScenarioArgError, match=r"largest upper share that fits is 0\.\d\d") as info:
        RecordBuilder(
            _index(),
            fallback_unit("test"),
            RecordSettings(lengths=(1024,), min_needles=10, hard_negative_share=(0.1, 0.5)),
        )
    assert info.value.field == "hard_negative_share"


def test_hard_negatives_fill_ten_to_twenty_percent_and_fail_exactly_one_clause() -> None:
    builder, by_task = _records("simple")
    corpus = _index().corpus
    index = _index()
    for task, records in by_task.items():
        queries = {q.sentence: q for q in builder.queries(parse_task(task))}
        for record in records:
            m = record.metadata
            assert 0.1 <= m["hard_negative_share"] <= 0.2, (record.id, m["hard_negative_share"])
            clauses = queries[m["query"]].clauses
            for hid in m["hard_negative_ids"]:
                position = corpus.position(hid)
                failed = [c for c in clauses if position not in c.matching(index)]
                assert len(failed) == 1, (task, hid)
                if len(clauses) == 1:
                    assert position in failed[0].near_misses(index)
            # The plain haystack holds no other hard-negative candidate.
            excluded = {corpus[p].id for p in queries[m["query"]].excluded}
            plain = set(m["context_ids"]) - set(m["gold_ids"]) - set(m["hard_negative_ids"])
            assert not plain & excluded


def test_as_many_zero_needle_records_as_needle_records_paired_by_query() -> None:
    records = _all()
    zero = [r for r in records if r.metadata["zero_needle"]]
    assert len(zero) * 2 == len(records)
    by_pair: dict[str, list[Record]] = {}
    for r in records:
        by_pair.setdefault(r.metadata["pair"], []).append(r)
    for pair in by_pair.values():
        assert sorted(r.metadata["zero_needle"] for r in pair) == [False, True]
        assert len({r.metadata["query"] for r in pair}) == 1
        assert len({frozenset(r.metadata["hard_negative_ids"]) for r in pair}) == 1
        assert {r.metadata["sample_unit"] for r in pair} == {pair[0].metadata["pair"]}
        assert len({r.metadata["sample_stratum"] for r in pair}) == 1


def test_one_haystack_per_length_is_reused_across_tasks() -> None:
    builder, by_task = _records("simple")
    for length in LENGTHS:
        order = {builder.index.corpus[p].id: i for i, p in enumerate(builder.haystack_order(length))}
        plains = []
        for records in by_task.values():
            for r in records:
                m = r.metadata
                if m["length"] != length:
                    continue
                assert m["haystack"].endswith(f"-{length}")
                plain = [i for i in m["context_ids"] if i not in set(m["gold_ids"]) | set(m["hard_negative_ids"])]
                ranks = [order[i] for i in plain]
                assert ranks == sorted(ranks)  # the shared order, walked from its start
                plains.append(set(plain))
        # Tasks share most of their haystack (they differ only by what each query excludes).
        overlap = statistics.median(len(a & b) / min(len(a), len(b)) for a in plains for b in plains if a is not b)
        assert overlap > 0.5


def _fingerprint_instances() -> str:
    from holistic.core.interfaces import ScenarioContext
    from holistic.scenarios.haystack.scenario import HaystackScenario

    scenario = HaystackScenario(
        lengths=[1536, 2048],
        records_per_length=2,
        corpus_size=1500,
        seed=11,
        formatting="markdown",
        instruction_placement="after",
    )
    instances = scenario.get_instances(ScenarioContext())
    rows = [[i.id, i.input, [r.output for r in i.references], dict(i.metadata)] for i in instances]
    return hashlib.sha256(canonical_json(rows).encode()).hexdigest()


def test_same_args_give_identical_instances_in_another_process() -> None:
    here = _fingerprint_instances()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from test_longcontext_records import _fingerprint_instances as f; print(f())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == here


def test_prompt_ablations_place_and_format_the_instruction() -> None:
    from holistic.core.interfaces import ScenarioContext
    from holistic.scenarios.haystack.scenario import HaystackScenario

    texts = {}
    records = {}
    for placement in ("before", "after"):
        for formatting in ("plain", "markdown"):
            scenario = HaystackScenario(
                tasks=["company"],
                lengths=[1536],
                records_per_length=2,
                corpus_size=1500,
                instruction_placement=placement,
                formatting=formatting,
            )
            instances = scenario.get_instances(ScenarioContext())
            # The same records (ids, needles, their order) under every ablation value.
            records[placement, formatting] = [(i.id, i.metadata["gold_ids"]) for i in instances]
            instance = instances[0]
            texts[placement, formatting] = instance.input
            assert instance.metadata["tokenizer_fallback"] is True
            assert instance.metadata["length_unit"] == "chars/4"
            answer = json.loads(instance.references[0].output)
            assert answer == {"article_ids": instance.metadata["gold_ids"]}
    assert len({tuple(map(str, v)) for v in records.values()}) == 1
    assert texts["before", "plain"].startswith("TASK: Find all articles about ")
    assert "from the news articles below" in texts["before", "plain"]
    assert texts["after", "plain"].startswith("ARTICLES:")
    assert "from the news articles above" in texts["after", "plain"].rsplit("TASK:", 1)[1]
    assert texts["before", "markdown"].startswith("### TASK\n")
    assert "### Article " in texts["after", "markdown"] and "**Date:**" in texts["after", "markdown"]
    for text in texts.values():
        assert '{"article_ids": [' in text and '{"article_ids": []}' in text  # inline JSON example
