"""HELM's ``helm-run``, after the changes the conformance harness names for a scenario.

Runs in HELM's interpreter (it imports HELM, never holistic)::

    <helm venv>/bin/python helm_run_patched.py PATCHES_JSON [helm-run arguments...]

``PATCHES_JSON`` is :func:`tools.conformance.helm.staging.helm_patches`' dict (empty for most
scenarios): ``raft`` answers ``datasets.load_dataset`` with the RAFT authors' ``train.csv``;
``summarization`` runs HELM's summarization metrics without its ``summarization`` extra.
"""

import csv
import json
import sys
import types
from typing import Any

patches = json.loads(sys.argv[1])
sys.argv = ["helm-run", *sys.argv[2:]]
if "raft" in patches:
    import datasets

    def load_dataset(
        path: str, name: str | None = None, cache_dir: Any = None, split: Any = None, **kwargs: Any
    ) -> Any:
        spec = patches["raft"][name]
        with open(spec["csv"], encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        names = ["Unlabeled", *spec["labels"]]
        features = {c: datasets.Value("string") for c in rows[0] if c not in ("ID", "Label")}
        features.update(ID=datasets.Value("int32"), Label=datasets.ClassLabel(names=names))
        typed = [{**r, "ID": int(r["ID"]), "Label": names.index(r["Label"])} for r in rows]
        return datasets.Dataset.from_list(typed, features=datasets.Features(features))

    datasets.load_dataset = load_dataset
if "summarization" in patches:
    import spacy.cli

    # Nothing here installs en_core_web_sm, summ_eval or bert_score (HELM's "summarization"
    # extra). BERTScore and SummaC run only on a GPU device (device=cpu here); summ_eval's
    # coverage, density and compression are not computed (named in NOT_COMPARED).
    spacy.cli.download = lambda *args, **kwargs: None
    bert_score = types.ModuleType("bert_score")
    bert_score.BERTScorer = None  # type: ignore[attr-defined]
    stats = types.ModuleType("summ_eval.data_stats_metric")
    stats.DataStatsMetric = type("DataStatsMetric", (), {})  # type: ignore[attr-defined]
    sys.modules.update(
        {"bert_score": bert_score, "summ_eval": types.ModuleType("summ_eval"), "summ_eval.data_stats_metric": stats}
    )
    from helm.benchmark.metrics import summarization_metrics as sm

    def no_scores(self: Any, eval_cache_path: str) -> None:
        # HELM's human-evaluation and QAFactEval scores are looked up by the deployment's name
        # and the exact summary, for the models of HELM's own runs: a model HELM never ran has
        # none (HELM's lookup misses and it reports no stat), so they are not downloaded.
        raise ValueError("no scores for this model")

    sm.SummarizationMetric._load_humaneval = no_scores
    sm.SummarizationMetric._load_qafacteval = lambda self, path: setattr(self, "qa_fact_eval", {})
    sm.SummarizationMetric._compute_data_stats = lambda self, inp, pred: {}
from helm.benchmark.run import main  # noqa: E402  (after the patches, which must precede HELM's imports)

sys.exit(main())
