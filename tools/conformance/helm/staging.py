"""The same bytes for both tools: the data root each key reads, and the authors' files put where
HELM's downloads would put them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tools.conformance.helm.authored_news import (
    cnn_pickle_rows,
    write_cnn_dailymail,
    write_helm_pickle,
    write_xsum,
    xsum_pickle_rows,
)
from tools.conformance.helm.authored_qa import (
    MSMARCO_FILES,
    write_civil_comments,
    write_hellaswag,
    write_msmarco,
    write_narrative_qa,
    write_natural_qa,
    write_openbookqa,
    write_quac,
)
from tools.conformance.helm.keys import HELM_PICKLES, SCENARIOS, base_key, helm_name
from tools.conformance.helm.running import helm_cache_folder


def holistic_instances(key: str, data_root: Path) -> list[Any]:
    """Every instance of the scenario as holistic loads it (before sampling)."""
    from holistic.core.interfaces import ScenarioContext
    from holistic.core.types import ScenarioSpec
    from holistic.scenarios.registry import create_scenario

    name, args, _ = SCENARIOS[key]
    scenario = create_scenario(ScenarioSpec.make(name, args))
    return list(scenario.get_instances(ScenarioContext(data_root=data_root, offline=True)))


def helm_instance_json(instance: Any) -> dict[str, Any]:
    """A holistic instance in HELM's ``Instance`` JSON (train stays train; valid/test as is)."""
    return {
        "input": {"text": instance.input},
        "references": [{"output": {"text": r.output}, "tags": list(r.tags)} for r in instance.references],
        "split": instance.split,
        "id": instance.id,
    }


def scenario_data_root(key: str, data_root: Path, work: Path) -> Path:
    """The data root both tools read for ``key``: the authors' files themselves where they are
    here (MMLU, TruthfulQA, RAFT), else files written in the authors' format from the copy that
    is here (BoolQ, IMDB: see :data:`DEVIATIONS`)."""
    staged = work / "data"
    key = base_key(key)
    resources = data_root / "helm_perturbations"  # HELM's dictionary and lists, for holistic's perturbations
    if resources.is_dir() and not (staged / resources.name).exists():
        staged.mkdir(parents=True, exist_ok=True)
        (staged / resources.name).symlink_to(resources.resolve(), target_is_directory=True)
    if key in ("boolq", "imdb"):
        (_stage_boolq if key == "boolq" else _stage_imdb)(data_root, staged / key)
        return staged
    if key in WRITTEN:
        WRITTEN[key](staged / SCENARIOS[key][0])
        return staged
    return data_root


WRITTEN = {
    "narrative_qa": write_narrative_qa,
    "quac": write_quac,
    "hellaswag": write_hellaswag,
    "openbookqa": write_openbookqa,
    "civil_comments": write_civil_comments,
    "natural_qa_closedbook": write_natural_qa,
    "natural_qa_openbook_longans": write_natural_qa,
    "msmarco_regular": write_msmarco,
    "msmarco_trec": write_msmarco,
    "cnn_dailymail": write_cnn_dailymail,
    "xsum": write_xsum,
}
"""Scenarios whose data is not here: the files the harness writes in the authors' format."""


def _held_out_pool(key: str, data_root: Path) -> set[str]:
    """The ids holistic holds out as its in-context pool when only the validation/test file is here."""
    return {i.id for i in holistic_instances(key, data_root) if i.split == "train"}


def _stage_boolq(data_root: Path, folder: Path) -> None:
    """Google's BoolQ format (question, title, answer, passage) from the SuperGLUE val.jsonl."""
    pool = _held_out_pool("boolq", data_root)
    train: list[str] = []
    dev: list[str] = []
    with (data_root / "boolq" / "val.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title, _, passage = row["passage"].partition(" -- ")
            label = row["label"] if isinstance(row["label"], bool) else str(row["label"]).lower() == "true"
            google = {"question": row["question"], "title": title, "answer": label, "passage": passage}
            (train if f"val-{row['idx']}" in pool else dev).append(json.dumps(google, ensure_ascii=False) + "\n")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.jsonl").write_text("".join(train), encoding="utf-8")
    (folder / "val.jsonl").write_text("".join(dev), encoding="utf-8")


def _stage_imdb(data_root: Path, folder: Path) -> None:
    """An aclImdb tree (``{train,test}/{pos,neg}/<n>_<rating>.txt``) from ``imdb_1000.txt``."""
    pool = _held_out_pool("imdb", data_root)
    tree = folder / "aclImdb"
    if tree.exists():
        shutil.rmtree(tree)
    lines = (data_root / "imdb" / "imdb_1000.txt").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        split = "train" if f"imdb_1000-{number:05d}" in pool else "test"
        polarity, rating = ("pos", 10) if label == "1" else ("neg", 1)
        target = tree / split / polarity / f"{number}_{rating}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.strip() + "\n", encoding="utf-8")


def prepare_helm_instances(key: str, out: Path, data_root: Path, helm_python: Path) -> None:
    """Put the scenario's files where HELM's download would put them (``ensure_file_downloaded``
    skips a target that exists), so that HELM's own loader reads them. ``data_root`` is the
    root of :func:`scenario_data_root`."""
    stale = helm_cache_folder(out, key)
    if stale is not None:  # HELM would read these instead of running its loader
        shutil.rmtree(stale)
    folder = out / "scenarios" / helm_name(key)
    key = base_key(key)
    data = folder / "data"
    if data.is_symlink() or data.is_file():
        data.unlink()
    elif data.is_dir():
        shutil.rmtree(data)
    folder.mkdir(parents=True, exist_ok=True)
    if key == "mmlu":
        data.symlink_to((data_root / "mmlu").resolve(), target_is_directory=True)
        return
    data.mkdir()
    if key == "truthful_qa":
        shutil.copyfile(data_root / "truthful_qa" / "TruthfulQA.csv", data / "TruthfulQA.csv")
    elif key == "boolq":
        shutil.copyfile(data_root / "boolq" / "train.jsonl", data / "train")
        shutil.copyfile(data_root / "boolq" / "val.jsonl", data / "dev")
        # HELM skips the first entry of the contrast file's "data" list (its header)
        (data / "boolq_perturbed.jsonl").write_text(json.dumps({"data": [{}]}), encoding="utf-8")
    elif key == "imdb":
        for split in ("train", "test"):
            shutil.copytree(data_root / "imdb" / "aclImdb" / split, data / split)
        for mode in ("test", "dev"):
            for kind in ("original", "contrast"):
                (data / f"{mode}_{kind}.tsv").write_text("Sentiment\tText\n", encoding="utf-8")
        # HELM's file order per split and class (its pinned-order file), here holistic's number order
        order = {
            helm_split: {
                polarity: sorted(
                    (f.name for f in (data / folder / polarity).iterdir()), key=lambda n: int(n.split("_")[0])
                )
                for polarity in ("pos", "neg")
            }
            for helm_split, folder in (("train", "train"), ("valid", "test"))
        }
        (data / "imdb_scenario_pinned_file_order.json").write_text(json.dumps(order), encoding="utf-8")
    elif key == "narrative_qa":
        shutil.copytree(data_root / "narrative_qa", data / "narrativeqa-master")
    elif key == "quac":
        for split in ("train", "val"):
            shutil.copyfile(data_root / "quac" / f"{split}_v0.2.json", data / f"{split}.json")
    elif key == "hellaswag":
        for split in ("train", "val"):
            shutil.copyfile(data_root / "hellaswag" / f"hellaswag_{split}.jsonl", data / f"hellaswag_{split}.jsonl")
    elif key == "openbookqa":
        shutil.copytree(data_root / "openbookqa", data / "OpenBookQA-V1-Sep2018" / "Data" / "Main")
    elif helm_name(key) == "natural_qa":
        for shard in range(5):
            name = f"nq-dev-0{shard}.jsonl.gz"
            shutil.copyfile(data_root / "natural_qa" / name, data / name)
    elif helm_name(key) == "msmarco":
        for name in MSMARCO_FILES:
            shutil.copyfile(data_root / "msmarco" / name, data / name)
    elif key == "civil_comments":  # HELM reads it beside data/, under its own name
        shutil.copyfile(
            data_root / "civil_comments" / "all_data_with_identities.csv", folder / "wilds_civil_comments.csv"
        )
    elif key in HELM_PICKLES:
        rows = cnn_pickle_rows() if key == "cnn_dailymail" else xsum_pickle_rows()
        write_helm_pickle(data / HELM_PICKLES[key], rows)
    elif key == "raft":
        from holistic.scenarios.raft import FIELD_ORDERING, TASK_INSTRUCTIONS

        settings = json.dumps(FIELD_ORDERING) + "\n" + json.dumps(TASK_INSTRUCTIONS) + "\n"
        # the run spec reads the instructions from scenarios/raft, the loader from scenarios/raft/data
        for target in (folder, data):
            (target / "prompt_construction_settings.json").write_text(settings, encoding="utf-8")


def helm_patches(key: str, data_root: Path) -> dict[str, Any]:
    """What ``peer/helm_run_patched.py`` changes in HELM's process for ``key`` (see :data:`DEVIATIONS`)."""
    key = base_key(key)
    if key == "raft":
        subset = SCENARIOS[key][1]["subset"]
        task = json.loads((data_root / "raft" / subset / "task.json").read_text(encoding="utf-8"))
        return {
            "raft": {
                subset: {
                    "csv": str(data_root / "raft" / subset / "train.csv"),
                    "labels": task["label_columns"]["Label"],
                }
            }
        }
    if key in HELM_PICKLES:
        return {"summarization": True}
    return {}
