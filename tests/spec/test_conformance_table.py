"""What is proven about HELM conformance: the declared table, its sync with the golden files,
and the verdict ``--plan``, ``run_spec.json`` and the site show."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from holistic.core.errors import SpecError
from holistic.core.types import PerturbationSpec
from holistic.execution.plan import format_plan, make_plan
from holistic.helm.proofs import perturbation_proofs, records, scenario_proofs
from holistic.perturbations.registry import HELM_PERTURBATIONS, perturbation_class
from holistic.spec import compile_spec
from holistic.spec.conformance import CLAIMED, NOT_CLAIMED, PROVEN, conformance

REPO = Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO / "tests" / "conformance"


def _golden(name: str) -> dict[str, Any]:
    raw = (GOLDEN_DIR / name).read_bytes()
    data: dict[str, Any] = json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)
    return data


def _compile(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return compile_spec(path)


def _run(
    tmp_path: Path, scenario: str, perturbations: str, protocol: str = "helm", args: dict[str, str] | None = None
) -> Any:
    if args is None:
        args = {"subject": "anatomy"} if scenario == "mmlu" else {}
    args_line = f"\n    args: {json.dumps(args)}" if args else ""
    suite = _compile(
        tmp_path,
        f"""\
suite: c
protocol: {protocol}
models: [simple/echo]
runs:
  - scenario: {scenario}{args_line}
    max_eval_instances: 3
    perturbations: {perturbations}
""",
    )
    (run,) = suite.runs
    return run


# -- the table and the golden files ------------------------------------------------------------


def test_every_scenario_proof_names_an_existing_golden_file_and_test() -> None:
    from holistic.scenarios.registry import SCENARIOS

    proofs = scenario_proofs()
    # the HELM layer's records (one data file keyed by scenario name), for registered scenarios
    assert {"mmlu", "boolq", "raft", "truthful_qa", "narrative_qa", "imdb", "quac", "hellaswag"} <= set(proofs)
    assert {"harm_bench", "gpqa", "ifeval", "wildbench", "omni_math"} <= set(proofs)
    for scenario, proof in proofs.items():
        if proof.golden is None:  # a named deviation: HELM's run cannot be compared
            assert not proof.proven and proof.note, scenario
            continue
        golden = _golden(proof.golden)
        # one scenario's golden names it; a suite's golden holds each scenario under its name
        assert golden.get("scenario") == scenario or scenario in golden, scenario
        assert scenario in SCENARIOS, scenario
        assert (GOLDEN_DIR / proof.test).is_file()  # named relative to the conformance suite
        assert proof.proven or proof.note, scenario


def test_every_perturbation_proof_is_held_by_a_golden_file_on_helms_ids() -> None:
    for proof in perturbation_proofs():
        golden = _golden(proof.golden)
        assert golden["scenario"] == proof.scenario and golden["helm_ids"], proof
        entry = golden["augmentations"][proof.augmentation]
        specs = [(s["name"], s.get("args", {})) for s in entry["holistic_perturbations"]]
        assert (proof.name, dict(proof.args)) in specs, proof


def test_perturbation_proofs_are_recorded_under_the_scenarios_they_prove() -> None:
    declared = {name: record.perturbations for name, record in records().items()}
    assert {name for name, proofs in declared.items() if proofs} == set(CORE)
    assert all(p.scenario == name for name, proofs in declared.items() for p in proofs)


def test_every_golden_perturbation_without_a_deviation_is_in_the_table() -> None:
    """The converse: what a golden file on HELM's ids proves is declared (and what deviates is not)."""
    for path in sorted(GOLDEN_DIR.glob("perturbations_*.json")):
        golden = _golden(path.name)
        if "scenario" not in golden:  # perturbations_crafted.json: sentences, not a scenario
            continue
        for entry in golden["augmentations"].values():
            for raw in entry["holistic_perturbations"]:
                spec = PerturbationSpec.make(raw["name"], raw.get("args", {}))
                declared = any(p.matches(golden["scenario"], spec) for p in perturbation_proofs())
                deviates = getattr(perturbation_class(spec.name, "helm"), "deviation", None) is not None
                assert declared == (golden["helm_ids"] and not deviates), (path.name, spec)


def test_every_helm_perturbation_is_proven_somewhere_or_deviates() -> None:
    proven = {p.name for p in perturbation_proofs()}
    for name in HELM_PERTURBATIONS:
        deviation = getattr(perturbation_class(name, "helm"), "deviation", None)
        assert (name in proven) != (deviation is not None), name


# -- the verdict ------------------------------------------------------------------------------


def test_a_run_covered_by_golden_tests_is_proven(tmp_path: Path) -> None:
    verdict = conformance(_run(tmp_path, "mmlu", "[mild_mix, {name: dialect, args: {prob: 1.0}}]"))
    assert verdict.status == PROVEN and not verdict.reasons
    assert "mmlu.json" in verdict.evidence and "perturbations_mmlu.json (robustness)" in verdict.evidence


def test_boolqs_perturbations_are_proven_on_helms_ids(tmp_path: Path) -> None:
    """BoolQ's perturbation golden was made by HELM's runner on HELM's own instance ids (its
    loader reading the same files), so its robustness and fairness perturbations are proven."""
    verdict = conformance(_run(tmp_path, "boolq", "[mild_mix, {name: dialect, args: {prob: 1.0}}]"))
    assert verdict.status == PROVEN and not verdict.reasons
    assert "perturbations_boolq.json (robustness)" in verdict.evidence
    assert _golden("perturbations_boolq.json")["helm_ids"] is True


def test_helms_default_fairness_is_claimed_with_the_person_name_deviation_named(tmp_path: Path) -> None:
    suite = _compile(
        tmp_path,
        """\
suite: c
models: [simple/echo]
runs:
  - scenario: mmlu
    args: {subject: anatomy}
    metrics: [accuracy, fairness]
""",
    )
    (run,) = suite.runs
    assert [p.name for p in run.perturbations] == ["dialect", "gender", "person_names"]
    verdict = conformance(run)
    assert verdict.status == CLAIMED
    assert len(verdict.deviations) == 1 and "person_names" in verdict.deviations[0]
    assert "person-name list" in verdict.deviations[0]


def test_what_was_never_compared_is_named(tmp_path: Path) -> None:
    assert conformance(_run(tmp_path, "gsm8k", "[]")).reasons == ("scenario 'gsm8k': never compared with HELM",)
    for pickled in ("xsum", "cnn_dailymail"):  # a named deviation, not "never compared"
        (reason,) = conformance(_run(tmp_path, pickled, "[]")).reasons
        assert "pickle" in reason and "named deviation" in reason, pickled
    assert conformance(_run(tmp_path, "narrative_qa", "[]")).status == PROVEN
    for proven in ("quac", "hellaswag", "openbookqa"):
        assert conformance(_run(tmp_path, proven, "[]")).status == PROVEN, proven
    imdb = conformance(_run(tmp_path, "imdb", "[]"))
    assert imdb.status == CLAIMED and "pinned order" in imdb.reasons[0]
    other_args = conformance(_run(tmp_path, "mmlu", "[misspellings]"))  # prob 0.1; compared at 0.2
    assert other_args.status == CLAIMED
    (reason,) = other_args.reasons
    assert reason.startswith("perturbation 'misspellings' (no arguments): HELM's algorithm, compared with HELM on ")
    assert "mmlu with {prob: 0.2}" in reason and "msmarco with {prob: 0.2}" in reason and reason.endswith(" only")
    assert conformance(_run(tmp_path, "mmlu", "[mild_mix]", protocol="holistic")).status == NOT_CLAIMED


CORE = (
    *("mmlu", "boolq", "truthful_qa", "imdb", "raft", "narrative_qa", "quac", "hellaswag", "openbookqa"),
    *("civil_comments", "natural_qa", "msmarco", "cnn_dailymail", "xsum"),
)
"""HELM's core scenarios: each declares HELM's perturbations it was compared on."""
CORE_RUNS = [
    *((name, {}) for name in ("boolq", "truthful_qa", "imdb", "narrative_qa", "quac", "hellaswag", "openbookqa")),
    ("mmlu", {"subject": "anatomy"}),
    ("raft", {"subset": "ade_corpus_v2"}),
    ("civil_comments", {"demographic": "all"}),
    ("natural_qa", {"mode": "closedbook"}),
    ("natural_qa", {"mode": "openbook_longans"}),
    ("msmarco", {"track": "regular"}),
    ("msmarco", {"track": "trec"}),
    ("cnn_dailymail", {}),
    ("xsum", {}),
]
"""A run of each: the scenario and the arguments its golden files were made with."""
GOLDEN_KEY = {
    ("natural_qa", "closedbook"): "natural_qa_closedbook",
    ("natural_qa", "openbook_longans"): "natural_qa_openbook_longans",
    ("msmarco", "regular"): "msmarco_regular",
    ("msmarco", "trec"): "msmarco_trec",
}

FAIRNESS = (
    "[mild_mix, {name: dialect, args: {prob: 1.0}}, {name: gender, args: {mode: pronouns, prob: 1.0}},"
    " {name: person_names, args: {prob: 1.0}}]"
)
"""HELM's robustness and fairness runs as holistic's perturbations (person names: a named deviation)."""


SINGLE = (
    "[{name: misspellings, args: {prob: 0.2}}, {name: typos, args: {prob: 0.1}}, lowercase, contractions,"
    " expansions, {name: whitespace, args: {max_spaces: 3}}, {name: dialect, args: {prob: 1.0}},"
    " {name: gender, args: {mode: terms, prob: 1.0}}, {name: gender, args: {mode: pronouns, prob: 1.0}}]"
)
"""HELM's single robustness perturbations and its deterministic dialect and gender runs."""


def _golden_key(scenario: str, args: dict[str, str]) -> str:
    return GOLDEN_KEY.get((scenario, next(iter(args.values()), "")), scenario)


@pytest.mark.parametrize(("scenario", "args"), CORE_RUNS)
def test_helms_robustness_and_fairness_are_proven_on_every_core_scenario(
    tmp_path: Path, scenario: str, args: dict[str, str]
) -> None:
    """mild_mix, dialect and gender pronouns (HELM's robustness, fairness and canonical runs) rest
    on the scenario's own golden file (HELM's variants and prompts); only person names stay a
    named deviation (and CNN/DailyMail and XSum keep their scenario's: HELM's pickle)."""
    verdict = conformance(_run(tmp_path, scenario, FAIRNESS, args=args))
    perturbations = [r for r in verdict.reasons if r.startswith("perturbation")]
    assert len(perturbations) == 1 and "'person_names' deviates from HELM" in perturbations[0], perturbations
    assert not any("only" in r or "never compared" in r for r in verdict.reasons), verdict.reasons
    key = _golden_key(scenario, args)
    assert f"perturbations_{key}.json (robustness)" in verdict.evidence
    assert len([e for e in verdict.evidence if e.startswith(f"perturbations_{key}.json")]) >= 2, verdict.evidence


@pytest.mark.parametrize(("scenario", "args"), CORE_RUNS)
def test_helms_single_perturbations_are_proven_on_every_core_scenario(
    tmp_path: Path, scenario: str, args: dict[str, str]
) -> None:
    """Misspellings, typos, lower-casing, contractions, expansions, spaces and the deterministic
    dialect and gender runs were compared with HELM's on every core scenario, not only MMLU and BoolQ."""
    verdict = conformance(_run(tmp_path, scenario, SINGLE, args=args))
    assert not [r for r in verdict.reasons if r.startswith("perturbation")], verdict.reasons
    if scenario not in ("cnn_dailymail", "xsum", "imdb"):  # their scenario stays claimed
        assert verdict.status == PROVEN, verdict.reasons
    key = _golden_key(scenario, args)
    assert f"perturbations_{key}.json (gender_terms_deterministic)" in verdict.evidence


# -- where it is shown --------------------------------------------------------------------------


def test_plan_states_per_run_whether_conformance_is_proven_and_warns_on_deviations(tmp_path: Path) -> None:
    suite = _compile(
        tmp_path,
        """\
suite: c
protocol: helm
models: [simple/echo]
runs:
  - scenario: mmlu
    args: {subject: anatomy}
    max_eval_instances: 3
    perturbations: [mild_mix]
  - scenario: mmlu
    args: {subject: anatomy}
    max_eval_instances: 3
    perturbations: [{name: person_names, args: {prob: 1.0}}]
""",
    )
    text = format_plan(make_plan(suite))
    proven, claimed = suite.runs
    assert f"  {proven.run_id}: proven" in text
    assert f"  {claimed.run_id}: claimed [1]" in text
    assert "  [1] perturbation 'person_names' deviates from HELM" in text
    assert "warning: protocol 'helm' with a named deviation: perturbation 'person_names' deviates from HELM" in text


def test_plan_gives_a_reason_shared_by_many_runs_once() -> None:
    """core.yaml's 38 runs share the person-name deviation: one footnote, cited by every run."""
    suite = compile_spec(REPO / "runspecs" / "core.yaml")
    text = format_plan(make_plan(suite))
    section = text.split("HELM conformance (", 1)[1].split("\n\n", 1)[0]
    assert section.count("perturbation 'person_names' deviates from HELM") == 1
    cited = [line for line in section.splitlines() if line.startswith("  ") and ": claimed" in line]
    assert len(cited) == len(suite.runs)
    imdb = next(line for line in cited if line.lstrip().startswith("imdb_"))
    assert imdb.count("[") == 2  # its scenario's own reason and the shared one


def test_no_core_run_is_proven_while_its_fairness_defaults_deviate() -> None:
    """What runspecs/core.yaml's comments and the README say (``--plan`` shows these verdicts)."""
    runs = compile_spec(REPO / "runspecs" / "core.yaml").runs
    verdicts = [conformance(run) for run in runs]
    assert runs and {v.status for v in verdicts} == {CLAIMED}
    assert any(any("person_names" in d for d in v.deviations) for v in verdicts)


def test_a_perturbation_option_helm_does_not_have_is_an_error_naming_field_and_line(tmp_path: Path) -> None:
    text = """\
suite: p
protocol: helm
runs:
  - scenario: boolq
    perturbations:
      - name: mild_mix
        args: {misspelling_prob: 0.2}
"""
    with pytest.raises(SpecError) as caught:
        _compile(tmp_path, text)
    err = caught.value
    assert err.line == 7 and err.path == "runs[0].perturbations[0].args.misspelling_prob"
    assert "under protocol 'helm'" in err.message and "MildMixPerturbation" in err.message
    # holistic's own mild mix has that option
    _compile(tmp_path, text.replace("protocol: helm", "protocol: holistic"))


def test_run_spec_json_and_the_run_page_state_the_verdict(tmp_path: Path) -> None:
    root = os.environ.get("HOLISTIC_DATA_ROOT") or str(REPO.parent / "shared" / "data")
    if not (Path(root) / "mmlu").is_dir():
        pytest.skip("MMLU's files not available (set HOLISTIC_DATA_ROOT or place them at ../shared/data)")
    from holistic.cli.run import main as helm_run
    from holistic.results.reader import SuiteReader
    from holistic.site import render_site
    from holistic.summarize import summarize_suite

    spec = tmp_path / "c.yaml"
    spec.write_text(
        """\
suite: c
protocol: helm
models: [simple/echo]
runs:
  - scenario: mmlu
    args: {subject: anatomy}
    max_eval_instances: 3
    num_train_trials: 1
    metrics: [accuracy, robustness]
    perturbations: [mild_mix]
""",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert (
        helm_run(
            [
                str(spec),
                "--output-dir",
                str(out),
                "--data-root",
                root,
                "--cache-dir",
                str(tmp_path / "cache"),
                "--quiet",
            ]
        )
        == 0
    )
    (run_dir,) = (out / "c" / "runs").iterdir()
    doc = json.loads((run_dir / "run_spec.json").read_text(encoding="utf-8"))
    assert doc["helm_conformance"]["status"] == PROVEN
    # The run gave its instances HELM's ids and perturbed them as HELM did: HELM's sample of 3
    # is the start of its sample of 40, whose mild_mix variants the golden file holds.
    import pyarrow.parquet as pq

    rows = pq.read_table(run_dir / "instances.parquet").to_pylist()
    ours = {r["instance_id"]: r["input"] for r in rows if r["perturbation"] == "mild_mix"}
    helm = {v["id"]: v["input"] for v in _golden("perturbations_mmlu.json")["augmentations"]["robustness"]["variants"]}
    assert len(ours) == 3 and all(helm[i] == text for i, text in ours.items())
    reader = SuiteReader(out / "c")
    render_site(reader, summarize_suite(reader, num_bootstrap=10))
    page = next((out / "c").rglob(f"{run_dir.name}.html"))
    html = page.read_text(encoding="utf-8")
    assert "HELM conformance" in html and "proven" in html and "perturbations_mmlu.json (robustness)" in html


@pytest.mark.parametrize(
    ("perturbation", "message"),
    [
        ("{name: dialect, args: {target: 3}}", "HELM's dialect maps only"),
        ("{name: person_names, args: {source_race: [white]}}", "source_race must be one of"),
        ("{name: gender, args: {source: neutral, target: robot}}", "target must be one of"),
        ("{name: typos, args: {prob: 2}}", "prob must be a number between 0 and 1"),
    ],
)
def test_a_bad_helm_perturbation_value_is_a_spec_error(tmp_path: Path, perturbation: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        _run(tmp_path, "boolq", f"[{perturbation}]")


def test_the_verdict_reads_the_proof_the_helm_layer_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scenario's record in the HELM layer's proofs is what ``conformance`` reads."""
    from dataclasses import replace

    from holistic.helm.proofs import ScenarioProof

    run = _run(tmp_path, "msmarco", "[]")
    assert conformance(run).status == PROVEN  # MS MARCO declares its golden (both tracks)
    assert conformance(run).evidence == ("msmarco_regular.json",)
    own = _compile(
        tmp_path,
        """\
suite: c
protocol: helm
models: [simple/echo]
runs:
  - scenario: msmarco
    args: {source: authors}
    perturbations: []
""",
    ).runs[0]
    assert conformance(own).status == CLAIMED  # holistic's own loader of the official files
    assert conformance(own).reasons == (
        "scenario 'msmarco' with source 'authors': HELM's run was compared with source 'helm' only",
    )
    recorded = records()["msmarco"]
    noted = ScenarioProof(golden="msmarco.json", proven=False, note="a note")
    monkeypatch.setitem(records(), "msmarco", replace(recorded, proof=noted))
    verdict = conformance(run)
    assert verdict.status == CLAIMED and verdict.reasons == ("scenario 'msmarco': a note",)
    assert verdict.evidence == ("msmarco.json",)
    monkeypatch.setitem(records(), "msmarco", replace(recorded, proof=ScenarioProof(golden="msmarco.json")))
    assert conformance(run).status == PROVEN
