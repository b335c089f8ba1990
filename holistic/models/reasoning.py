"""Reasoning models: how a reasoning setting is sent, and how thoughts are told apart from the answer.

A deployment's ``reasoning:`` mapping (:class:`~holistic.core.types.ReasoningSupport`) says both.

**Sending** (``adaptation.reasoning``, :func:`setting_problem` is checked when a spec compiles):

- ``openai_effort`` takes ``effort``: ``reasoning_effort`` on chat completions, ``reasoning:
  {effort, summary: auto}`` on the Responses API. No budget.
- ``anthropic_thinking`` takes ``budget_tokens``: ``thinking: {type: enabled, budget_tokens}``
  (sent without ``temperature``, which the API refuses with thinking); ``effort: none`` sends
  ``thinking: {type: disabled}``. No other effort.
- ``chat_template_kwargs`` (vLLM, llama.cpp and SGLang servers) takes ``effort``:
  ``chat_template_kwargs: {enable_thinking: effort != none, reasoning_effort: effort}``. No budget.
- ``none`` takes nothing.

**Reading** (:func:`read_answer`, the rule ``docs/models.md`` states):

- a thought field (``field: reasoning_content``): its text is the thought, the content the answer.
  A value that is not a string is kept as its JSON text, with a note;
- think tags (``think_tags: [open, close]``) inside the content: when the closing tag is there,
  everything up to its **last** occurrence is the thought, without the tags (nested or repeated blocks included; a
  closing tag without an opening one means the server put the opening tag in the prompt) and
  what follows is the answer. An opening tag that never closes is a thought that did not finish:
  everything from it on is the thought, the answer is empty. Without either tag the whole content
  is the answer;
- a thought (its text, or reasoning tokens the server counted) and no answer with finish reason
  ``length`` (``max_tokens`` reached while thinking) is also unfinished. An unfinished thought leaves the answer empty: nothing is read from the thought;
- thoughts longer than :data:`MAX_REASONING_CHARS` keep their first characters, with a note.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from holistic.core.types import Completion, ModelDeployment, ReasoningSupport, Request

MAX_REASONING_CHARS = 1_000_000
"""Characters of one completion's thought kept in the results (the rest is cut, with a note)."""

TAKES: dict[str, tuple[str, ...]] = {
    "openai_effort": ("effort",),
    "anthropic_thinking": ("budget_tokens", "effort"),
    "chat_template_kwargs": ("effort",),
    "none": (),
}
"""The reasoning settings each style takes (``anthropic_thinking`` takes only ``effort: none``)."""


@dataclass(frozen=True)
class Answer:
    """A completion's final answer told apart from its thought."""

    text: str
    reasoning: str | None = None
    unfinished: bool = False
    note: str | None = None


def setting_problem(deployment: ModelDeployment, key: str, value: Any) -> str | None:
    """Why ``deployment`` cannot take ``reasoning.<key>: value`` (``None`` when it can)."""
    style = deployment.reasoning.style
    if key not in TAKES[style]:
        takers = [s for s, keys in TAKES.items() if key in keys]
        if style == "none":
            return (
                f"model {deployment.name!r} takes no reasoning setting (its models-file entry has no "
                f"reasoning.style, or style none); a deployment with style {' or '.join(takers)} takes {key}"
            )
        return (
            f"model {deployment.name!r} (reasoning style {style}) takes no reasoning.{key}; "
            f"style {' or '.join(takers)} does"
        )
    if style == "anthropic_thinking" and key == "effort" and value != "none":
        return (
            f"model {deployment.name!r} (reasoning style anthropic_thinking) takes a thinking budget, not effort "
            f"{value!r}; give reasoning.budget_tokens (effort none turns thinking off)"
        )
    return None


def budget_problem(budget: int, max_tokens: int) -> str | None:
    """Why a thinking budget does not fit the run's ``max_tokens`` (both numbers said)."""
    if budget < 0:
        return f"reasoning.budget_tokens is {budget}, a negative number; give 0 or more (max_tokens is {max_tokens})"
    if budget > max_tokens:
        return (
            f"reasoning.budget_tokens {budget} is larger than max_tokens {max_tokens}: the thought could use every "
            "token before the answer; raise max_tokens or lower the budget"
        )
    return None


def chat_params(request: Request, support: ReasoningSupport) -> dict[str, Any]:
    """The chat-completions parameters that carry ``request``'s reasoning setting."""
    effort = request.reasoning_effort
    if effort is None:
        return {}
    if support.style == "openai_effort":
        return {"reasoning_effort": effort}
    if support.style == "chat_template_kwargs":
        return {"chat_template_kwargs": {"enable_thinking": effort != "none", "reasoning_effort": effort}}
    return {}


def anthropic_params(request: Request) -> dict[str, Any]:
    """The Messages API ``thinking`` parameter for ``request``'s setting (empty when none is set)."""
    if request.reasoning_budget is not None:
        return {"thinking": {"type": "enabled", "budget_tokens": request.reasoning_budget}}
    if request.reasoning_effort == "none":
        return {"thinking": {"type": "disabled"}}
    return {}


def reported(effort: Any = None, budget: Any = None) -> str | None:
    """The setting a provider reported having applied, as ``effort=low`` / ``budget_tokens=N``."""
    parts = []
    if isinstance(effort, str) and effort:
        parts.append(f"effort={effort[:40]}")
    if isinstance(budget, int) and not isinstance(budget, bool):
        parts.append(f"budget_tokens={budget}")
    return ", ".join(parts) or None


def thought_text(value: Any) -> tuple[str | None, str | None]:
    """A thought field's value as text, and a note when it was not a string (kept as its JSON)."""
    if value is None or isinstance(value, str):
        return value, None
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text, f"the thought field held a {type(value).__name__}, not a string (kept as its JSON text)"


def bounded(text: str | None, note: str | None) -> tuple[str | None, str | None]:
    """``text`` cut to :data:`MAX_REASONING_CHARS`, the cut added to ``note``."""
    if text is None or len(text) <= MAX_REASONING_CHARS:
        return text, note
    cut = f"the thought had {len(text):,} characters; the first {MAX_REASONING_CHARS:,} are kept"
    return text[:MAX_REASONING_CHARS], f"{note}; {cut}" if note else cut


def read_answer(
    content: str, thought: Any, finish: str | None, support: ReasoningSupport, thought_tokens: int = 0
) -> Answer:
    """``content`` (and a separate thought field's value) read by the rule of the module docstring
    (``thought_tokens``: reasoning tokens the server counted, a thought even when it returns no text)."""
    reasoning, note = thought_text(thought)
    text = content
    unfinished = False
    tags = support.think_tags
    if tags is not None:
        open_tag, close_tag = tags
        end = text.rfind(close_tag) if close_tag else -1
        start = text.find(open_tag) if open_tag else -1
        inline: str | None = None
        if end >= 0:
            inline, text = text[:end], text[end + len(close_tag) :]
            if start < 0 or start > end:
                note = _join(note, "a closing tag without an opening one: the text before it is the thought")
            elif text.find(open_tag) >= 0 or inline.count(open_tag) > 1:
                note = _join(note, "nested or repeated thought tags: the thought ends at the last closing tag")
            inline = inline.replace(open_tag, "").replace(close_tag, "")  # the tags are not the thought
        elif start >= 0:
            inline, text, unfinished = text[start + len(open_tag) :], "", True
            note = _join(note, "an opening tag that never closed: the thought did not finish")
        if inline is not None:
            reasoning = inline.strip() if reasoning is None else f"{reasoning}\n\n{inline.strip()}"
    if (reasoning or thought_tokens > 0) and not text.strip() and finish == "length":
        unfinished = True
    if unfinished:
        text = ""
    reasoning, note = bounded(reasoning, note)
    answer = text.lstrip() if reasoning is not None else text  # the space after a thought is not the answer's
    return Answer(text=answer, reasoning=reasoning, unfinished=unfinished, note=note)


def with_thought(completion: Completion, answer: Answer) -> Completion:
    """``completion`` with ``answer``'s thought, whether it finished and its note."""
    if answer.reasoning is None and not answer.unfinished and answer.note is None:
        return completion
    return replace(
        completion, reasoning=answer.reasoning, reasoning_unfinished=answer.unfinished, reasoning_note=answer.note
    )


def reasoning_count(details: Any) -> int:
    """``reasoning_tokens`` of a usage block's details (0 when absent or not a count)."""
    value = getattr(details, "reasoning_tokens", None)
    if value is None and isinstance(details, dict):
        value = details.get("reasoning_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _join(note: str | None, more: str) -> str:
    return f"{note}; {more}" if note else more
