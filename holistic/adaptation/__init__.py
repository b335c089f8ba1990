"""Adaptation: turning scenario instances into model requests, and reading the outputs.

Public surface:

- :func:`adapt` builds every :class:`~holistic.core.types.RequestState` of a run
  (prompts per method, in-context example selection, context-window fitting);
- :func:`postprocess` applies ``AdapterSpec.post_processing`` to results;
- :func:`count_requests` predicts ``len(adapt(...))`` for ``--plan``;
- :func:`calibrated_score`, :func:`normalized_logprob`, :func:`state_logprob` and
  :func:`scored_bytes` are the arithmetic metrics apply to log-likelihood states;
- :class:`Embedder` / :class:`MiniLMEmbedder` for MMR selection;
- :data:`POST_PROCESSORS` to register more post-processors.

See ``docs/adaptation.md`` for the prompt anatomy of every method. Importing this
package does not import torch (the MMR embedder loads sentence-transformers lazily).
"""

from holistic.adaptation.adapter import adapt, count_requests, effective_trials, uses_chat
from holistic.adaptation.embedding import Embedder, MiniLMEmbedder
from holistic.adaptation.postprocess import postprocess
from holistic.adaptation.postprocessors import POST_PROCESSORS, ParseError
from holistic.adaptation.scoring import calibrated_score, normalized_logprob, scored_bytes, state_logprob
from holistic.adaptation.validation import AdaptationError, validate_adapter_spec

__all__ = [
    "POST_PROCESSORS",
    "AdaptationError",
    "Embedder",
    "MiniLMEmbedder",
    "ParseError",
    "adapt",
    "calibrated_score",
    "count_requests",
    "effective_trials",
    "normalized_logprob",
    "postprocess",
    "scored_bytes",
    "state_logprob",
    "uses_chat",
    "validate_adapter_spec",
]
