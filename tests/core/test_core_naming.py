"""Run names as people read them (holistic.core.naming): the rules the site, --plan and helm-run's
scores share."""

from __future__ import annotations

from holistic.core.naming import NAME_WIDTH, RunFacts, cut, display_names, run_title, system_names


def _run(run_id: str, args: dict[str, object], model: str = "m/one", **adapter: object) -> RunFacts:
    return RunFacts(
        run_id=run_id, scenario="arithmetic", args=args, model=model, adapter={"method": "generation", **adapter}
    )


def test_a_title_shows_the_arguments_that_tell_runs_apart_and_leaves_out_the_rest() -> None:
    args = {"digits": 1, "num_test": 40, "seed": 3, "path": "/data/sets/arith.jsonl", "mapping": {"a": "b"}}
    assert run_title("arithmetic", args, "m/one") == "arithmetic (digits=1, path=arith.jsonl) · m/one"
    assert run_title("boolq", {}, "m/one") == "boolq · m/one"


def test_systems_carry_the_settings_that_differ_for_the_same_model_and_arguments() -> None:
    runs = [
        _run("a", {"digits": 1}, prompt_format="plain", temperature=0.0),
        _run("b", {"digits": 1}, prompt_format="chat", temperature=0.0),
        _run("c", {"digits": 2}, model="m/two", prompt_format="plain", temperature=0.0),
    ]
    assert system_names(runs) == {
        "a": "m/one [prompt_format=plain]",
        "b": "m/one [prompt_format=chat]",
        "c": "m/two [prompt_format=plain]",
    }
    names = display_names(runs)
    assert names["a"] == "arithmetic (digits=1) · m/one [prompt_format=plain]"
    assert names["c"] == "arithmetic (digits=2) · m/two [prompt_format=plain]"


def test_a_label_is_the_name_and_two_runs_that_would_read_alike_get_their_hashes() -> None:
    runs = [
        _run("arithmetic_m_one-aaaaaaaaaa", {"digits": 1}),
        _run("arithmetic_m_one-bbbbbbbbbb", {"digits": 1}),
        RunFacts("arithmetic_m_one-cccccccccc", "arithmetic", {"digits": 2}, "m/one", label="my sums"),
    ]
    assert display_names(runs) == {
        "arithmetic_m_one-aaaaaaaaaa": "arithmetic (digits=1) · m/one #aaaaaa",
        "arithmetic_m_one-bbbbbbbbbb": "arithmetic (digits=1) · m/one #bbbbbb",
        "arithmetic_m_one-cccccccccc": "my sums",
    }


def test_runs_a_title_would_merge_show_the_arguments_that_differ_even_counts() -> None:
    runs = [_run("a", {"digits": 1, "num_test": 10}), _run("b", {"digits": 1, "num_test": 20})]
    assert display_names(runs) == {
        "a": "arithmetic (num_test=10, digits=1) · m/one",
        "b": "arithmetic (num_test=20, digits=1) · m/one",
    }


def test_the_arguments_that_differ_between_a_scenarios_runs_come_first_and_survive_a_cut() -> None:
    common = {"depth_bins": 4, "formatting": "plain", "hard_negative_share": [0.1, 0.2]}
    runs = [
        _run(p, {**common, "instruction_placement": p}, model="vendor/" + "long-model-name-" * 3)
        for p in ("before", "after")
    ]
    names = display_names(runs)
    assert names["before"].startswith("arithmetic (instruction_placement=before, depth_bins=4, ")
    assert cut(names["before"]) != cut(names["after"])
    assert "instruction_placement=after" in cut(names["after"])


def test_facts_read_the_same_from_a_canonical_spec_as_from_run_spec_json() -> None:
    spec = {
        "scenario": {"name": "arithmetic", "args": {"digits": 1}},
        "adapter": {"method": "generation", "prompt_format": "plain"},
        "model": "m/one",
        "groups": ["arithmetic"],
        "label": "sums",
        "run_id": "ignored",
    }
    facts = RunFacts.of(spec, "x")
    assert (facts.run_id, facts.scenario, facts.model, facts.method, facts.label) == (
        "x",
        "arithmetic",
        "m/one",
        "generation",
        "sums",
    )


def test_a_long_name_spares_what_tells_runs_apart_first() -> None:
    name = "haystack (formatting=plain, tasks=company) · vendor/" + "a-very-long-deployment-name-" * 4 + "v2"
    short = cut(name)
    assert len(short) == NAME_WIDTH
    assert short.startswith("haystack (formatting=plain, tasks=company) · vendor/") and short.endswith("-name-v2")
    # a model's name shared by every run gives way first, then the end of the arguments; settings stay
    long_args = (
        "synthetic_reasoning (mode=variable_substitution) · embedded/smollm2-135m-instruct [prompt_format=plain]"
    )
    short = cut(long_args)
    assert len(short) <= NAME_WIDTH
    assert short.startswith("synthetic_reasoning (mode=variable_") and short.endswith(" [prompt_format=plain]")
    assert "…) · embedded/" in short
    assert cut("short") == "short"
    assert cut("x" * 200) == "x" * 47 + "…" + "x" * 32  # any other text: its start and its end
