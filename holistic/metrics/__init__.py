"""Metrics: one module per family, a registry, and the aggregation into statistics.

- :mod:`holistic.metrics.registry` — ``METRICS``, ``metric_info``, ``select_metrics``.
- :mod:`holistic.metrics.stats` — ``aggregate`` (means, trial spread, bootstrap CIs).
- Families: ``accuracy`` (exact match, F1, final number, multiple choice),
  ``overlap`` (ROUGE, BLEU), ``bertscore``, ``summarization``, ``calibration``,
  ``efficiency``, ``language_modeling``, ``ranking``; robustness, fairness, bias and
  toxicity register from their own modules.

Nothing heavy is imported here: importing the package or planning a run never loads
torch, bert-score or rouge-score.
"""
