"""What the code scenarios (HumanEval, APPS) share: their ScenarioInfo fields, and reading problems."""

from __future__ import annotations

import ast

from holistic.core.errors import DataSourceError
from holistic.core.types import AdapterDefaults, PromptFormat
from holistic.scenarios.loading.categories import CategoryPreset, worked_answer
from holistic.scenarios.loading.prompt_format import prompt_format


class CodePreset(CategoryPreset):
    """The :class:`~holistic.core.interfaces.ScenarioInfo` fields of a code scenario:
    ``ScenarioInfo(..., **code_info(...))``."""

    task: str
    default_adapter: AdapterDefaults
    main_metric: str


def code_info(
    *, main_metric: str, max_train_instances: int, stop_sequences: tuple[str, ...], unperturbed: str
) -> CodePreset:
    """A program written by completion and scored by its tests; ``unperturbed`` says why
    robustness and fairness are not measured."""
    return CodePreset(
        **worked_answer(answer="a program", unperturbed=unperturbed),
        task="code",
        # A completion task (HELM's completion adapter): the model continues the text as
        # written, never wrapped in a chat template.
        default_adapter={
            **prompt_format(
                input_suffix="",
                output_suffix="",
                max_train_instances=max_train_instances,
                max_tokens=600,
                temperature=0.2,
                stop_sequences=stop_sequences,
            ),
            "prompt_format": PromptFormat.PLAIN,
        },
        main_metric=main_metric,
    )


def check_parses(source: str, where: str, what: str) -> None:
    """Raise a :class:`DataSourceError` at ``where`` when ``source`` is not valid Python
    (parsed only, never run)."""
    try:
        ast.parse(source)
    except SyntaxError as exc:
        raise DataSourceError(f"{where}: {what} does not parse as Python: {exc.msg} (its line {exc.lineno})") from None
    except ValueError as exc:
        raise DataSourceError(f"{where}: {what} does not parse as Python: {exc}") from None
