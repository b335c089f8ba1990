"""HELM's ``DataAugmenter`` (as its runner calls it) on crafted instances; runs in HELM's interpreter::

    <helm venv>/bin/python helm_perturb_crafted.py CRAFTED_JSON AUGMENTATIONS_JSON OUT_JSON

writes HELM's variants of every crafted instance, per augmentation, to ``OUT_JSON``.
"""

import json
import sys

from helm.benchmark.augmentations.data_augmenter import DataAugmenter
from helm.benchmark.augmentations.perturbation import create_perturbation
from helm.benchmark.run_expander import PERTURBATION_SPECS_DICT
from helm.benchmark.scenarios.scenario import Input, Instance, Output, Reference

crafted, augmentations = json.loads(sys.argv[1]), json.loads(sys.argv[2])
instances = [
    Instance(
        input=Input(text=text),
        references=[Reference(output=Output(text=r), tags=["correct"] if ok else []) for r, ok in refs],
        split="test",
        id=f"id{i}",
    )
    for i, (text, refs) in enumerate(crafted)
]
out = {}
for name in augmentations:
    (specs,) = PERTURBATION_SPECS_DICT[name].values()
    augmenter = DataAugmenter(perturbations=[create_perturbation(s) for s in specs])
    made = augmenter.generate(instances, include_original=True, skip_unchanged=True, seeds_per_instance=1)
    out[name] = [
        {
            "helm_id": m.id,
            "perturbation": m.perturbation.name,
            "input": m.input.text,
            "references": [[r.output.text, r.tags] for r in m.references],
        }
        for m in made
        if m.perturbation is not None
    ]
with open(sys.argv[3], "w", encoding="utf-8") as fh:
    json.dump(out, fh, indent=1)
