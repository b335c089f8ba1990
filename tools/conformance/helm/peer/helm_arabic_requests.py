"""HELM's requests of its Arabic EXAMS and EXAMS multilingual run entries, made by HELM's own code;
runs in HELM's interpreter (``tools.conformance.helm.arabic`` runs it)::

    <helm venv>/bin/python helm_arabic_requests.py PAYLOAD_JSON

prints one JSON object (the golden file's body) on its last line. HELM's scenarios call
``datasets.load_dataset``; here that call is answered with the rows of the same files holistic
reads, in the shape the Hub serves them (EXAMS multilingual's choices transposed to lists, as its
loading script yields them).
"""

import hashlib
import io
import json
import sys
import tarfile
from dataclasses import replace

import datasets
import helm.benchmark.adaptation.adapters.adapter as adapter_module
import helm.benchmark.scenarios.arabic_exams_scenario as arabic_module
import helm.benchmark.scenarios.exams_multilingual_scenario as multi_module
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.run_expander import OutputFormatInstructions
from helm.benchmark.run_specs.arabic_run_specs import get_arabic_exams_spec
from helm.benchmark.run_specs.multilingual_run_specs import get_exams_multilingual_spec
from helm.benchmark.scenarios.arabic_exams_scenario import ArabicEXAMSScenario
from helm.benchmark.scenarios.exams_multilingual_scenario import EXAMSMultilingualScenario
from helm.benchmark.scenarios.scenario import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT
from roomy_window import install_roomy_window  # beside this file

args = json.loads(sys.argv[1])
install_roomy_window(adapter_module)


def jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def hub_exams_rows(path, member):
    """The Hub loading script's rows: ``choices`` as a dict of lists, ``para`` defaulted to ""."""
    with tarfile.open(path, "r:gz") as tar:
        text = io.TextIOWrapper(tar.extractfile(member), encoding="utf-8")
        rows = []
        for line in text:
            row = json.loads(line)
            choices = row["question"]["choices"]
            row["question"] = {
                "stem": row["question"]["stem"],
                "choices": {
                    "text": [c["text"] for c in choices],
                    "label": [c["label"] for c in choices],
                    "para": [c.get("para", "") for c in choices],
                },
            }
            rows.append(row)
        return rows


def requests(run_spec, instances):
    """Per test instance its id and prompt sha256; the request parameters (the same for every
    request of a run, checked) once; the first prompts in full with HELM's output mapping."""
    adapter = AdapterFactory.get_adapter(run_spec.adapter_spec, None)
    out = {"requests": [], "examples": [], "parameters": None}
    # HELM's adapter as its runner calls it: in-context examples drawn from the train split
    # (seeded, per trial), every evaluation instance, valid and test (the runner's sampling left
    # out: all are kept).
    evaluated = [i for i in instances if i.split in (TRAIN_SPLIT, VALID_SPLIT, TEST_SPLIT)]
    for state in adapter.adapt(evaluated, parallelism=1):
        instance, r = state.instance, state.request
        parameters = {
            "temperature": r.temperature,
            "max_tokens": r.max_tokens,
            "stop_sequences": list(r.stop_sequences),
            "num_completions": r.num_completions,
            "top_k_per_token": r.top_k_per_token,
        }
        assert out["parameters"] in (None, parameters), (out["parameters"], parameters)
        out["parameters"] = parameters
        out["requests"].append([instance.id, hashlib.sha256(r.prompt.encode("utf-8")).hexdigest()])
        if len(out["examples"]) < args["keep_prompts"]:
            out["examples"].append({"id": instance.id, "prompt": r.prompt, "output_mapping": state.output_mapping})
    return out


def splits(instances):
    counts = {}
    for instance in instances:
        counts[instance.split] = counts.get(instance.split, 0) + 1
    return counts


result = {}
arabic = datasets.DatasetDict(
    {
        "validation": datasets.Dataset.from_list(jsonl(args["arabic_dev"])),
        "test": datasets.Dataset.from_list(jsonl(args["arabic_test"])),
    }
)
arabic_module.datasets.load_dataset = lambda *a, **k: arabic
for subject in args["arabic_subjects"]:
    spec = get_arabic_exams_spec(subject)
    (spec,) = OutputFormatInstructions("arabic_mcqa").expand(spec)
    spec = replace(spec, adapter_spec=replace(spec.adapter_spec, max_train_instances=0))  # the run entry's
    instances = ArabicEXAMSScenario(subject).get_instances(args["tmp"])
    result[f"arabic_exams:subject={subject}"] = {
        "run_spec": spec.name,
        "splits": splits(instances),
        "output_mapping_pattern": spec.adapter_spec.output_mapping_pattern,
        **requests(spec, instances),
    }

multi = datasets.DatasetDict(
    {
        name: datasets.Dataset.from_list(hub_exams_rows(args["exams"][member], f"{member}.jsonl"))
        for name, member in (("train", "train"), ("validation", "dev"), ("test", "test"))
    }
)
multi_module.datasets.load_dataset = lambda *a, **k: multi
for language, subject in args["exams_runs"]:
    spec = get_exams_multilingual_spec(language, subject)
    instances = EXAMSMultilingualScenario(language, subject).get_instances(args["tmp"])
    result[f"exams_multilingual:language={language},subject={subject}"] = {
        "run_spec": spec.name,
        "splits": splits(instances),
        **requests(spec, instances),
    }
print(json.dumps(result, ensure_ascii=False))
