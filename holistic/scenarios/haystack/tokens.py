"""Counting context length in the evaluated model's own tokens.

The scenario does not know models: execution passes it a tokenizer resolver through
``ScenarioContext.tokenizers`` (built from the run's model registry, ``--models-file``
included) and the name of the model under evaluation (``ScenarioContext.model``).
:func:`resolve_length_unit` picks the counter from the scenario's ``tokenizer`` arg:

- ``null`` (the default): the tokenizer of the model under evaluation, so two models
  with different tokenizers each get records of the requested length in their own tokens;
- a model registry name or a local tokenizer folder / ``.gguf`` file: that tokenizer
  (to give every model the very same records);
- ``chars/4``: no tokenizer, 4 characters = 1 token.

Outside a run (no resolver) and for API models without a local tokenizer, lengths fall
back to ``chars/4``; every fallback is *flagged* (:attr:`LengthUnit.fallback` and the
reason) and written into each instance's metadata (``tokenizer_fallback``,
``tokenizer_fallback_reason``), so lengths measured in characters are never passed off
as tokens.
"""

from __future__ import annotations

from holistic.core.interfaces import CharsPerToken, CountingTokenizer, ScenarioContext, chars_per_token_fallback

FALLBACK_NAME = CharsPerToken.name

LengthUnit = CountingTokenizer
"""A token counter plus what it is (name, fallback flag and reason)."""
fallback_unit = chars_per_token_fallback


def resolve_length_unit(reference: str | None, ctx: ScenarioContext) -> LengthUnit:
    """The counter for the scenario's ``tokenizer`` arg (see the module docstring)."""
    if reference == FALLBACK_NAME:
        return fallback_unit("the run asked for chars/4 (scenario arg 'tokenizer')")
    wanted = reference if reference is not None else ctx.model
    if wanted is None:
        return fallback_unit("no model to take a tokenizer from (the scenario ran outside a run)")
    if ctx.tokenizers is None:
        return fallback_unit(f"no tokenizer resolver was given for {wanted} (the scenario ran outside a run)")
    return ctx.tokenizers(wanted)
