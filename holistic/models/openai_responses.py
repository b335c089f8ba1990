"""``openai`` deployments with ``args.api: responses``: generation through OpenAI's Responses API
(``/responses``), the API on which OpenAI's reasoning models return summaries of their thoughts.

- The prompt goes as ``input`` (chat messages as they are, ``system`` messages as
  ``instructions``); ``max_tokens`` as ``max_output_tokens``; a reasoning effort as
  ``reasoning: {effort, summary: auto}``. Stop sequences do not exist there: they are applied to
  the text afterwards. ``num_completions > 1`` makes that many calls.
- The ``reasoning`` output items' summaries are the thought; the ``message`` items' ``output_text``
  the answer. A response ``incomplete`` for ``max_output_tokens`` with no answer is a thought that
  did not finish. ``usage.output_tokens_details.reasoning_tokens`` is the reasoning-token count,
  and the ``reasoning.effort`` the response reports is recorded (``reasoning_reported``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from holistic.core.types import Completion, Request, RequestResult
from holistic.models.api_client import ApiClient, Attempts, sdk_call, stop_locally
from holistic.models.reasoning import read_answer, reasoning_count, reported, thought_text, with_thought
from holistic.models.reliability import Failure, ProviderFailure


def respond(client: ApiClient, request: Request, attempts: Attempts, extra_body: dict[str, Any]) -> RequestResult:
    """Serve one ``generate`` request through ``/responses`` (see the module docstring); ``extra_body``:
    the deployment's extra fields, sent with it."""
    params: dict[str, Any] = {
        "model": client.deployment.model_id,
        "input": _input(request),
        "max_output_tokens": max(1, min(request.max_tokens, client.deployment.max_output_tokens)),
    }
    instructions = "\n\n".join(m.content for m in request.messages or () if m.role == "system")
    if instructions:
        params["instructions"] = instructions
    if request.reasoning_effort is not None:
        params["reasoning"] = {"effort": request.reasoning_effort, "summary": "auto"}
    else:
        params["temperature"] = request.temperature  # reasoning models refuse a temperature
    if extra_body:
        params["extra_body"] = extra_body
    completions: list[Completion] = []
    prompt_tokens = completion_tokens = 0
    shown: str | None = None
    for _ in range(max(request.num_completions, 1)):
        response = attempts.send(sdk_call(client._sdk.responses.create, params), "response")
        completions.append(_completion(response, client, request.stop))
        usage = getattr(response, "usage", None)
        prompt_tokens = max(prompt_tokens, int(getattr(usage, "input_tokens", 0) or 0))
        completion_tokens += int(getattr(usage, "output_tokens", 0) or 0)
        attempts.reasoning_tokens += reasoning_count(getattr(usage, "output_tokens_details", None))
        attempts.saw_cached(getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", None))
        setting = getattr(response, "reasoning", None)
        shown = shown or reported(getattr(setting, "effort", None))
    return client._answered(
        request, completions, prompt_tokens, completion_tokens, False, None, attempts.reasoning_tokens, shown
    )


def _input(request: Request) -> list[dict[str, str]]:
    if request.messages is None:
        return [{"role": "user", "content": request.prompt}]
    return [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"]


def _completion(response: Any, client: ApiClient, stops: tuple[str, ...]) -> Completion:
    output = getattr(response, "output", None)
    if not isinstance(output, list):
        raise ProviderFailure(Failure("fatal", "the response has no output list", False))
    answers: list[str] = []
    thoughts: list[str] = []
    note: str | None = None
    for item in output:
        kind = getattr(item, "type", None)
        if kind == "message":
            answers += [str(getattr(c, "text", "") or "") for c in getattr(item, "content", None) or []]
        elif kind == "reasoning":
            for part in getattr(item, "summary", None) or []:
                text, odd = thought_text(getattr(part, "text", None))
                thoughts += [text] if text else []
                note = note or odd
    status = getattr(response, "status", None)
    reason = getattr(getattr(response, "incomplete_details", None), "reason", None)
    finish: str | None = "stop"
    if status == "incomplete":
        finish = "length" if reason == "max_output_tokens" else str(reason or status)
    thought = "\n\n".join(thoughts) if thoughts else None
    answer = read_answer("".join(answers), thought, finish, client.deployment.reasoning)
    if status == "incomplete" and not answer.text.strip():
        # the server says the response stopped before its answer: the thought did not finish
        note = answer.note or note or f"the response is incomplete ({reason or 'no reason given'})"
        answer = replace(answer, text="", unfinished=True)
    answer = replace(answer, note=answer.note or note)
    text, _, finish = stop_locally(answer.text, (), finish, [s for s in stops if s])
    return with_thought(Completion(text=text, finish_reason=finish), answer)
