"""HELM Safety's requests, run-spec names, sampling and SafetyScoreMetric stats, made by HELM's own
code; runs in HELM's interpreter (``tools.conformance.helm.safety`` runs it)::

    <helm venv>/bin/python helm_safety_requests.py PAYLOAD_JSON

prints one JSON object (the golden file's body) on its last line.
"""

import csv
import hashlib
import json
import os
import shutil
import sys

import datasets
import helm.benchmark.adaptation.adapters.adapter as adapter_module
import helm.benchmark.scenarios.anthropic_red_team_scenario as red_team_module
import helm.benchmark.scenarios.simple_safety_tests_scenario as sst_module
import helm.benchmark.scenarios.xstest_scenario as xstest_module
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.metrics.safety_metrics import SafetyScoreMetric, SafetyScoreMetricException
from helm.benchmark.run_expander import RUN_EXPANDERS
from helm.benchmark.run_specs import safety_run_specs
from helm.benchmark.run_specs.classic_run_specs import get_bbq_spec
from helm.benchmark.runner import downsample_eval_instances
from helm.benchmark.scenarios.anthropic_red_team_scenario import AnthropicRedTeamScenario
from helm.benchmark.scenarios.bbq_scenario import BBQScenario
from helm.benchmark.scenarios.harm_bench_scenario import HarmBenchScenario
from helm.benchmark.scenarios.scenario import EVAL_SPLITS, Input, Instance, with_instance_ids
from helm.benchmark.scenarios.simple_safety_tests_scenario import SimpleSafetyTestsScenario
from helm.benchmark.scenarios.xstest_scenario import XSTestScenario
from helm.common.object_spec import parse_object_spec
from helm.common.request import GeneratedOutput, Request, RequestResult
from roomy_window import install_roomy_window  # beside this file

args = json.loads(sys.argv[1])
install_roomy_window(adapter_module)


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run(run_spec, instances, keep_text=False):
    if any(i.id is None for i in instances):  # HELM's runner does this
        instances = with_instance_ids(instances)
    evaluation = [i for i in instances if i.split in EVAL_SPLITS]
    sampled = downsample_eval_instances(instances, args["max_eval_instances"], EVAL_SPLITS)
    position = {i.id: n for n, i in enumerate(evaluation)}
    adapter = AdapterFactory.get_adapter(run_spec.adapter_spec, None)
    states = [adapter.generate_requests(instance, 0, [])[0] for instance in evaluation]
    parameters = []
    for r in (s.request for s in states):
        p = {
            "messages": r.messages,
            "temperature": r.temperature,
            "max_tokens": r.max_tokens,
            "stop_sequences": list(r.stop_sequences),
            "num_completions": r.num_completions,
        }
        if p not in parameters:
            parameters.append(p)
    return {
        "run_spec": run_spec.name,
        "adapter_spec": {
            k: v for k, v in vars(run_spec.adapter_spec).items() if isinstance(v, (str, int, float, list))
        },
        "parameters": parameters,
        "ids": [i.id for i in evaluation],
        "prompt_sha256": [sha(s.request.prompt) for s in states],
        "prompts": [s.request.prompt for s in states] if keep_text else None,
        "sampled_positions": [position[i.id] for i in sampled if i.split in EVAL_SPLITS],
    }


def csv_rows(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return [{k: (v if v != "" else None) for k, v in row.items()} for row in csv.DictReader(fh)]


result = {}
tmp = args["tmp"]
data = args["data_root"]

os.makedirs(os.path.join(tmp, "harm_bench", "data"))
shutil.copyfile(
    os.path.join(data, "harmbench", "harmbench_behaviors_text_all.csv"),
    os.path.join(tmp, "harm_bench", "data", "harmbench_behaviors_text_all.csv"),
)
result["harm_bench"] = run(
    safety_run_specs.get_harm_bench_spec(), HarmBenchScenario().get_instances(os.path.join(tmp, "harm_bench"))
)

rows = csv_rows(os.path.join(data, "xstest", "xstest_prompts.csv"))
xstest_module.load_dataset = lambda *a, **k: datasets.Dataset.from_list(rows)
result["xstest"] = run(safety_run_specs.get_xstest_spec(), XSTestScenario().get_instances(tmp))

rows = csv_rows(os.path.join(data, "simple_safety_tests", "SimpleSafetyTests - test cases.csv"))
rows = [
    {"id": r["id"], "harm_area": r["harm_area"], "category": r["category"], "prompt": r["prompts_final"]} for r in rows
]
sst_module.load_dataset = lambda *a, **k: datasets.Dataset.from_list(rows)
result["simple_safety_tests"] = run(
    safety_run_specs.get_simple_safety_tests_spec(), SimpleSafetyTestsScenario().get_instances(tmp)
)

red_team = args["red_team_rows"]
red_team_module.load_dataset = lambda *a, **k: datasets.DatasetDict({"train": datasets.Dataset.from_list(red_team)})
result["anthropic_red_team"] = run(
    safety_run_specs.get_anthropic_red_team_spec(), AnthropicRedTeamScenario().get_instances(tmp), keep_text=True
)

# BBQ: HELM Safety's run entry, its run-spec function then its run expanders, in the entry's order.
entry = parse_object_spec(args["bbq_entry"]).args  # HELM's own parsing of a run entry (numbers as numbers)
spec = get_bbq_spec(entry["subject"], entry["method"])
for key, value in entry.items():
    if key in RUN_EXPANDERS:
        (spec,) = RUN_EXPANDERS[key](value).expand(spec)
result["bbq"] = {"run_spec": spec.name, "entry": args["bbq_entry"], "categories": {}}
for category in args["bbq_categories"]:
    folder = os.path.join(tmp, "bbq_" + category)
    os.makedirs(os.path.join(folder, "data"))
    shutil.copyfile(os.path.join(data, "bbq", category + ".jsonl"), os.path.join(folder, "data", category))
    instances = BBQScenario(category).get_instances(folder)
    out = run(spec, instances)
    # Every instance in HELM's order (its shuffle): a digest of its content, and its split.
    out["content_sha256"] = [sha(json.dumps([i.input.text, [r.output.text for r in i.references]])) for i in instances]
    out["splits"] = "".join(i.split[0] for i in instances)
    result["bbq"]["categories"][category] = out
    result["bbq"]["adapter_spec"] = out.pop("adapter_spec")

# HELM's SafetyScoreMetric on annotations in its annotators' format: the stat names and values.
result["safety_metric"] = []
for annotation in args["annotations"]:
    state = RequestState(
        instance=Instance(input=Input(text="q"), references=[], split="test", id="id0"),
        reference_index=None,
        request_mode=None,
        train_trial_index=0,
        output_mapping=None,
        request=Request(model="x/y", model_deployment="x/y", prompt="q"),
        result=RequestResult(
            success=True, embedding=[], completions=[GeneratedOutput(text="a", logprob=0.0, tokens=[])], cached=False
        ),
        num_train_instances=0,
        prompt_truncated=False,
        annotations={"harm_bench": annotation},
    )
    try:
        stats = SafetyScoreMetric().evaluate_generation(
            safety_run_specs.get_harm_bench_spec().adapter_spec, state, None, ""
        )
    except SafetyScoreMetricException as exc:  # every annotator failed: HELM stops the run
        result["safety_metric"].append({"annotation": annotation, "error": str(exc)})
        continue
    result["safety_metric"].append({"annotation": annotation, "stats": {s.name.name: s.mean for s in stats}})
print(json.dumps(result))
