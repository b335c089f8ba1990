"""Applying ``AdapterSpec.post_processing`` to request states that have results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from holistic.adaptation.postprocessors import POST_PROCESSORS, ParseError
from holistic.core.types import AdapterSpec, RequestState


def postprocess(states: Sequence[RequestState], spec: AdapterSpec) -> list[RequestState]:
    """Fill ``post_processed`` (one text per completion) and ``parse_error``.

    Only successful ``generate`` results are processed; other states come back
    unchanged. When a post-processor cannot read a completion, that completion's
    processed text is ``""`` and the first failure's message is kept in ``parse_error``
    (nothing is raised). Unknown post-processor names raise
    :class:`~holistic.core.errors.UnknownNameError` with a suggestion.
    """
    chain = [(name, POST_PROCESSORS.get(name)) for name in spec.post_processing]
    out = []
    for state in states:
        result = state.result
        if result is None or not result.success or state.request.kind != "generate":
            out.append(state)
            continue
        texts: list[str] = []
        error: str | None = None
        for completion in result.completions:
            text = completion.text
            try:
                for _name, processor in chain:
                    text = processor(text, state)
            except ParseError as exc:
                text = ""
                error = error or str(exc)
            texts.append(text)
        out.append(replace(state, post_processed=tuple(texts), parse_error=error))
    return out
