"""HELM's requests of its Capabilities run specs and its answer parsing and IFEval metric, made by
HELM's own code; runs in HELM's interpreter (``tools.conformance.helm.capabilities`` runs it)::

    <helm venv>/bin/python helm_capabilities_requests.py PAYLOAD_JSON

prints one JSON object (the golden file's body) on its last line.
"""

import hashlib
import io
import json
import sys
import zipfile

import datasets
import helm.benchmark.adaptation.adapters.adapter as adapter_module
import helm.benchmark.scenarios.gpqa_scenario as gpqa_module
import helm.benchmark.scenarios.ifeval_scenario as ifeval_module
import helm.benchmark.scenarios.mmlu_pro_scenario as mmlu_pro_module
import helm.benchmark.scenarios.omni_math_scenario as omni_math_module
import helm.benchmark.scenarios.wildbench_scenario as wildbench_module
import langdetect
import pandas as pd
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.metrics.gpqa_chain_of_thought_metric import extract_answer
from helm.benchmark.metrics.ifeval_metrics import IFEvalMetric
from helm.benchmark.run_specs.capabilities_run_specs import (
    get_gpqa_spec,
    get_ifeval_spec,
    get_mmlu_pro_spec,
    get_omni_math_spec,
    get_wildbench_spec,
)
from helm.benchmark.scenarios.gpqa_scenario import GPQAScenario
from helm.benchmark.scenarios.ifeval_scenario import IFEvalScenario
from helm.benchmark.scenarios.mmlu_pro_scenario import MMLUProScenario
from helm.benchmark.scenarios.omni_math_scenario import OmniMATHScenario
from helm.benchmark.scenarios.scenario import TEST_SPLIT, with_instance_ids
from helm.benchmark.scenarios.wildbench_scenario import WildBenchScenario
from helm.common.request import GeneratedOutput, Request, RequestResult
from roomy_window import install_roomy_window  # beside this file

args = json.loads(sys.argv[1])
install_roomy_window(adapter_module)


def requests(run_spec, instances):
    adapter = AdapterFactory.get_adapter(run_spec.adapter_spec, None)
    out = []
    if any(instance.id is None for instance in instances):  # HELM's runner does this
        instances = with_instance_ids(instances)
    for instance in instances:
        if instance.split != TEST_SPLIT:
            continue
        (state,) = adapter.generate_requests(instance, 0, [])
        r = state.request
        out.append(
            {
                "id": instance.id,
                "prompt_sha256": hashlib.sha256(r.prompt.encode("utf-8")).hexdigest(),
                "prompt": r.prompt if args["keep_text"] == run_spec.name.split(":")[0] else None,
                "temperature": r.temperature,
                "max_tokens": r.max_tokens,
                "stop_sequences": list(r.stop_sequences),
                "num_completions": r.num_completions,
            }
        )
    return out


result = {}
with zipfile.ZipFile(args["gpqa_zip"]) as archive:
    frame = pd.read_csv(io.BytesIO(archive.read("dataset/gpqa_main.csv", pwd=args["gpqa_password"].encode())))
gpqa_module.datasets.load_dataset = lambda *a, **k: datasets.Dataset.from_pandas(frame)
spec = get_gpqa_spec("gpqa_main", "true", "false")
result["gpqa"] = {
    "run_spec": spec.name,
    "requests": requests(spec, GPQAScenario("gpqa_main").get_instances(args["tmp"])),
}

with open(args["ifeval"], encoding="utf-8") as fh:
    rows = [json.loads(line) for line in fh if line.strip()]
names = sorted({k for row in rows for kw in row["kwargs"] for k in kw})
for row in rows:
    row["kwargs"] = [{n: kw.get(n) for n in names} for kw in row["kwargs"]]
ifeval_module.datasets.load_dataset = lambda *a, **k: datasets.Dataset.from_list(rows)
spec = get_ifeval_spec()
result["ifeval"] = {"run_spec": spec.name, "requests": requests(spec, IFEvalScenario().get_instances(args["tmp"]))}

table = pd.read_parquet(args["mmlu_pro_test"])
valid = pd.read_parquet(args["mmlu_pro_validation"])
mmlu_pro_module.load_dataset = lambda *a, **k: datasets.DatasetDict(
    {"test": datasets.Dataset.from_pandas(table), "validation": datasets.Dataset.from_pandas(valid)}
)
spec = get_mmlu_pro_spec("all", "true", "false")
result["mmlu_pro"] = {
    "run_spec": spec.name,
    "requests": requests(spec, MMLUProScenario("all").get_instances(args["tmp"])),
}

result["chain_of_thought_answers"] = [[text, extract_answer(text)] for text in args["responses"]]

# HELM's IFEvalMetric on the generated responses (its own checkers, its own stripping)
langdetect.DetectorFactory.seed = 0
by_id = {i.id: i for i in IFEvalScenario().get_instances(args["tmp"])}
metric = IFEvalMetric()
with open(args["ifeval_responses"], encoding="utf-8") as src, open(args["ifeval_values"], "w", encoding="utf-8") as out:
    for item in map(json.loads, src):
        state = RequestState(
            instance=by_id[f"id{item['key']}"],
            reference_index=None,
            request_mode=None,
            train_trial_index=0,
            output_mapping=None,
            request=Request(model="x/y", model_deployment="x/y", prompt=""),
            result=RequestResult(
                success=True,
                embedding=[],
                completions=[GeneratedOutput(text=item["response"], logprob=0.0, tokens=[])],
                cached=False,
            ),
            num_train_instances=0,
            prompt_truncated=False,
        )
        (stat,) = metric.evaluate_generation(spec.adapter_spec, state, None, "")
        out.write(
            json.dumps(
                {"key": item["key"], "variant": item["variant"], stat.name.name: stat.mean}, separators=(",", ":")
            )
            + "\n"
        )

# WildBench (after IFEval: datasets.load_dataset is answered with its rows from here on)
wildbench_module.datasets.load_dataset = lambda *a, **k: datasets.Dataset.from_list(args["wildbench_rows"])
wildbench_spec = get_wildbench_spec("v2")
adapter = AdapterFactory.get_adapter(wildbench_spec.adapter_spec, None)
chat = []
for instance in with_instance_ids(WildBenchScenario("v2").get_instances(args["tmp"])):
    (state,) = adapter.generate_requests(instance, 0, [])
    r = state.request
    chat.append(
        {
            "id": instance.id,
            "prompt": r.prompt,
            "messages": r.messages,
            "temperature": r.temperature,
            "max_tokens": r.max_tokens,
            "stop_sequences": list(r.stop_sequences),
            "num_completions": r.num_completions,
        }
    )
result["wildbench"] = {"run_spec": wildbench_spec.name, "requests": chat}

omni_math_module.datasets.load_dataset = lambda *a, **k: datasets.Dataset.from_list(args["omni_math_rows"])
spec = get_omni_math_spec()
args["keep_text"] = "omni_math"
result["omni_math"] = {"run_spec": spec.name, "requests": requests(spec, OmniMATHScenario().get_instances(args["tmp"]))}
print(json.dumps(result))
