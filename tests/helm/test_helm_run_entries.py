"""HELM's command line as it is: ``helm-run --conf-paths FILE.conf`` and ``--run-entries ENTRY`` plan
the runs a hand-written spec under ``protocol: helm`` plans, with HELM's prompts (the goldens)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from holistic.adaptation import adapt
from holistic.cli import helm_entries
from holistic.cli import run as helm_run
from holistic.core.errors import SpecError
from holistic.core.types import RunSpec
from holistic.helm.entry_specs import scenario_defaults
from holistic.helm.run_entries import collect, parse_description
from holistic.models.registry import ModelRegistry
from holistic.spec import compile_spec
from tests.conformance import test_conformance_golden as goldens

REPO = Path(__file__).resolve().parents[2]
MODEL = "embedded/smollm2-135m-instruct"

# HELM 0.5.16's run_entries.conf, its core scenarios' entries as written there (the `# ...` lines
# and the spacing too), except XSum: HELM's core conf runs `summarization_xsum_sampled`, whose data
# holistic does not have; `summarization_xsum` is the entry the goldens prove.
_SUBSETS = [
    "ade_corpus_v2",
    "banking_77",
    "neurips_impact_statement_risks",
    "one_stop_english",
    "overruling",
    "semiconductor_org_types",
    "systematic_review_inclusion",
    "tai_safety_research",
    "terms_of_service",
    "tweet_eval_hate",
    "twitter_complaints",
]
_DEMOGRAPHICS = ["all", "male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white"]
_MMLU = ["abstract_algebra", "college_chemistry", "computer_security", "econometrics", "us_foreign_policy"]
CORE_CONF = "\n".join(
    [
        "# Main `RunSpec`s for the benchmarking.",
        "",
        "entries: [",
        '  {description: "boolq:model=text,data_augmentation=canonical", priority: 1}',
        '  {description: "narrative_qa:model=text,data_augmentation=canonical", priority: 2}',
        '  {description: "quac:model=text,data_augmentation=canonical", priority: 1}',
        '  {description: "natural_qa:model=text,mode=openbook_longans,data_augmentation=canonical", priority: 1}',
        '  {description: "natural_qa:model=text,mode=closedbook,data_augmentation=canonical", priority: 1}',
        '  {description: "commonsense:model=full_functionality_text,dataset=hellaswag,'
        'method=multiple_choice_separate_original,data_augmentation=canonical", priority: 1}',
        '  {description: "commonsense:model=full_functionality_text,dataset=openbookqa,'
        'method=multiple_choice_separate_calibrated,data_augmentation=canonical", priority: 2}',
        '  {description: "truthful_qa:model=text,task=mc_single,data_augmentation=canonical", priority: 1}',
        *(f'  {{description: "mmlu:model=text,subject={s},data_augmentation=canonical", priority: 2}}' for s in _MMLU),
        "  // Information retrieval",
        '  {description: "msmarco:model=full_functionality_text,data_augmentation=canonical,track=regular,'
        'valid_topk=30", priority: 2}',
        '  {description: "msmarco:model=full_functionality_text,data_augmentation=canonical,track=trec,'
        'valid_topk=30", priority: 1}',
        '  {description: "summarization_cnndm:model=text,temperature=0.3,device=cpu", priority: 1}',
        '  {description: "summarization_xsum:model=text,temperature=0.3,device=cpu", priority: 1}',
        '  {description: "imdb:model=text,data_augmentation=canonical", priority: 1}',
        *(
            f'  {{description: "civil_comments:model=text,demographic={d},data_augmentation=canonical", '
            f"priority: {1 if d == 'all' else 2}}}"
            for d in _DEMOGRAPHICS
        ),
        *(
            f'  {{description: "raft:subset={s},model=text,data_augmentation=canonical", priority: 2}}'
            for s in _SUBSETS
        ),
        "]",
        "",
    ]
)
CORE_FLAGS = ["--models-to-run", MODEL, "--max-eval-instances", "1000", "--num-train-trials", "3", "--suite", "core"]


def _translated_runs(argv: list[str]) -> tuple[RunSpec, ...]:
    args = helm_run.build_parser().parse_args(argv)
    with helm_entries.translated_spec(args) as spec:
        return compile_spec(spec).runs


def _plan_runs(output: str) -> list[str]:
    """The plan's run table (names, ids, methods, protocol, instances, requests, tokens)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Runs ("))
    end = next(i for i, line in enumerate(lines) if line.startswith("Totals:"))
    return lines[start:end]


def test_a_helm_conf_of_the_core_entries_compiles_to_core_yaml(tmp_path: Path) -> None:
    conf = tmp_path / "run_entries_core.conf"
    conf.write_text(CORE_CONF, encoding="utf-8")
    ours = _translated_runs(["--conf-paths", str(conf), *CORE_FLAGS])
    core = compile_spec(REPO / "runspecs" / "core.yaml").runs
    assert len(ours) == len(core) == 38
    assert sorted(r.run_id for r in ours) == sorted(r.run_id for r in core)
    by_id = {r.run_id: r for r in core}
    for run in ours:
        assert run.canonical() == by_id[run.run_id].canonical()


def test_helm_run_plan_on_the_conf_plans_core_yamls_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = tmp_path / "run_entries_core.conf"
    conf.write_text(CORE_CONF, encoding="utf-8")
    selected = ["--scenarios", "mmlu", "--scenarios", "msmarco", "--scenarios", "cnn_dailymail"]
    assert helm_run.main(["--conf-paths", str(conf), *CORE_FLAGS, "--plan", "--show-ids", *selected]) == 0
    from_conf = capsys.readouterr().out
    assert helm_run.main([str(REPO / "runspecs" / "core.yaml"), "--plan", "--show-ids", *selected]) == 0
    from_yaml = capsys.readouterr().out
    assert "Runs (8):" in from_conf
    assert _plan_runs(from_conf) == _plan_runs(from_yaml)


def test_priority_keeps_the_entries_helm_keeps(tmp_path: Path) -> None:
    conf = tmp_path / "core.conf"
    conf.write_text(CORE_CONF, encoding="utf-8")
    kept = collect([conf], ["boolq:model=text"], priority=1)
    assert len(kept) == 12  # HELM's priority-1 core entries, and --run-entries' own (priority 1)
    runs = _translated_runs(["--conf-paths", str(conf), "--priority", "1", *CORE_FLAGS])
    assert sorted({r.scenario.name for r in runs}) == [
        "boolq",
        "civil_comments",
        "cnn_dailymail",
        "hellaswag",
        "imdb",
        "msmarco",
        "natural_qa",
        "quac",
        "truthful_qa",
        "xsum",
    ]


def _with_model(entry: str, model: str) -> str:
    return f"{entry}{',' if ':' in entry else ':'}model={model}"


def _scenario(run: RunSpec) -> tuple[str, dict[str, Any]]:
    """The scenario and its arguments, a default given or not (``valid_topk=30`` is MS MARCO's default)."""
    return run.scenario.name, {**scenario_defaults(run.scenario.name), **run.scenario.args_dict}


def _golden_files() -> list[Path]:
    return goldens.GOLDEN


@pytest.mark.parametrize("path", _golden_files(), ids=[p.stem for p in _golden_files()])
def test_each_goldens_helm_entry_gives_helms_prompts(path: Path, tmp_path: Path) -> None:
    """The golden's own HELM run entry, through --run-entries, makes HELM's prompts and requests."""
    golden = json.loads(path.read_text(encoding="utf-8"))
    trials = max(s["trial"] for s in golden["request_states"]) + 1
    entry = _with_model(golden["helm_run_entry"], "huggingface/smollm2-135m-instruct")
    (run,) = _translated_runs(
        ["-r", entry, "--max-eval-instances", str(golden["max_eval_instances"]), "--num-train-trials", str(trials)]
    )
    reference = goldens.golden_run(golden, tmp_path, num_train_trials=trials)
    assert (_scenario(run), run.adapter, run.model) == (_scenario(reference), reference.adapter, MODEL)
    train = [goldens._instance(t, "train") for t in golden["train"]]
    deployment = ModelRegistry().get(MODEL)
    states = adapt(train, goldens._eval_instances(golden), run.adapter, deployment, goldens._tokenizer(golden), seed=0)
    ours = {(s.instance.id, s.trial, s.reference_index, str(s.role)): s for s in states}
    for helm in golden["request_states"]:
        state = ours[goldens._place(helm)]
        sent = state.request.prompt + (state.request.continuation if state.request.kind == "loglikelihood" else "")
        assert sent == helm["prompt"], helm["instance"]["id"]
        assert state.request.max_tokens == helm["request"]["max_tokens"]


def _augmented() -> list[Path]:
    return sorted((REPO / "tests" / "conformance" / "augmented").glob("*.json.gz"))


@pytest.mark.parametrize("path", _augmented(), ids=[p.name.split(".")[0] for p in _augmented()])
def test_data_augmentation_is_the_perturbations_the_goldens_prove(path: Path) -> None:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        golden: dict[str, Any] = json.load(fh)
    (run,) = _translated_runs(["-r", _with_model(golden["helm_run_entry"], MODEL)])
    expected = [(p["name"], p.get("args", {})) for p in golden["holistic_perturbations"]]
    assert [(p.name, dict(p.args)) for p in run.perturbations] == expected
    assert _scenario(run) == (golden["scenario"], {**scenario_defaults(golden["scenario"]), **golden["args"]})


def test_values_parse_as_helms_parse_object_spec() -> None:
    assert parse_description("msmarco:track=regular,valid_topk=30,temperature=0.3") == (
        "msmarco",
        {"track": "regular", "valid_topk": 30, "temperature": 0.3},
    )
    assert parse_description("boolq") == ("boolq", {})


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["-r", "mmlu:subject=anatomy,model=openai/gpt-4o-2024-08-06"], "the closest: openai/gpt-4o"),
        (["-r", "mmluu:subject=anatomy,model=" + MODEL], "did you mean 'mmlu'"),
        (["-r", "mmlu:subject=anatomy,model=text"], "--models-to-run must be set"),
        (["-r", "mmlu:subject=anatomy,modle=" + MODEL], "did you mean 'model'"),
        (["-r", "boolq:model=" + MODEL + ",data_augmentation=canonicl"], "did you mean 'canonical'"),
        (["-r", "mmlu:subject=anatomy,instructions=none,model=" + MODEL], "protocol: helm does not allow"),
        (["-r", "summarization_xsum_sampled:model=" + MODEL], "use summarization_xsum"),
        (["-r", "commonsense:dataset=piqa,method=multiple_choice_separate_original,model=" + MODEL], "hellaswag"),
    ],
)
def test_what_cannot_be_translated_is_exit_2_naming_the_nearest(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert helm_run.main([*argv, "--plan"]) == 2
    assert expected in capsys.readouterr().err


def test_a_broken_conf_names_its_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = tmp_path / "broken.conf"
    conf.write_text('entries: [\n  {description: "boolq:model=text", priority: 1}\n  {description: "imdb\n]\n')
    assert helm_run.main(["--conf-paths", str(conf), "--models-to-run", MODEL, "--plan"]) == 2
    err = capsys.readouterr().err
    assert "broken.conf" in err and "not closed" in err
    deep = tmp_path / "deep.conf"
    deep.write_text("entries: " + "[" * 5000 + "]" * 5000)
    assert helm_run.main(["--conf-paths", str(deep), "--models-to-run", MODEL, "--plan"]) == 2
    assert "nested deeper" in capsys.readouterr().err
    with pytest.raises(SpecError, match="priority must be"):
        bad = tmp_path / "bad.conf"
        bad.write_text('entries: [{description: "boolq", priority: high}]')
        collect([bad], [], None)


def test_spec_and_entries_are_one_or_the_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        helm_run.main([str(REPO / "runspecs" / "core.yaml"), "-r", "boolq:model=" + MODEL])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        helm_run.main([])
    capsys.readouterr()


def test_print_spec_shows_the_translation(capsys: pytest.CaptureFixture[str]) -> None:
    assert helm_run.main(["-r", "mmlu:subject=anatomy,model=huggingface/smollm2-135m-instruct", "--print-spec"]) == 0
    out = capsys.readouterr().out
    assert "protocol: helm" in out and "scenario: mmlu" in out and MODEL in out and "&id" not in out
