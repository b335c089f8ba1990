"""Rendering one instance as a prompt block.

A block is an in-context example (with its answer) or the evaluated instance (ending
at the answer cue). Without a template the anatomy is::

    {input_prefix}{input}{input_suffix}
    {A. }{choice 1}{reference_suffix}          # joint multiple choice only; "A" counts up
    {B. }{choice 2}{reference_suffix}
    {output_prefix}{answer}{output_suffix}     # the evaluated instance stops after output_prefix

``ranking_binary`` uses HELM's fixed pair layout instead of the input/output prefixes::

    Passage: {passage}
    Query: {input}
    Does the passage answer the query?
    Answer: {Yes|No}

With ``AdapterSpec.template`` the template renders the whole block (see
:mod:`holistic.adaptation.template`). The evaluated instance's block ends where the
template puts ``{{ output }}`` (whatever the template renders after it is dropped),
and the last line before that place is its answer cue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from holistic.adaptation.template import InstanceTemplate
from holistic.adaptation.validation import AdaptationError
from holistic.core.specs import JOINT, RANKING
from holistic.core.types import AdapterSpec, Instance

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SENTINEL = "\x00answer\x00"

RANKING_QUESTION = "Does the passage answer the query?"
RANKING_CUE = "Answer: "
YES = "Yes"
NO = "No"


@dataclass(frozen=True)
class Block:
    """One rendered instance block."""

    query: str
    """Everything before the answer cue (input, choices; the whole block for templates)."""

    cue: str
    """The answer cue (the output prefix); ``""`` for template blocks."""

    answer: str
    """The answer shown in the plain prompt (``""`` for the evaluated instance and templates)."""

    suffix: str
    """Text after the answer (the output suffix) in the plain prompt."""

    chat_user: str
    """The block without its answer, as a chat user turn."""

    chat_answer: str
    """The answer as a chat assistant turn (``""`` for the evaluated instance)."""

    @property
    def example_text(self) -> str:
        return self.query + self.cue + self.answer + self.suffix


def letters_for(n: int, labels: Sequence[str] = ()) -> list[str]:
    """The labels of ``n`` joint choices: ``labels`` (``choice_labels``) when given, else A, B, C, ..."""
    if labels:
        if n > len(labels):
            raise AdaptationError(
                f"joint multiple choice with choice_labels {list(labels)} supports at most {len(labels)} choices, "
                f"got {n}"
            )
        return list(labels[:n])
    if n > len(LETTERS):
        raise AdaptationError(f"joint multiple choice supports at most {len(LETTERS)} choices, got {n}")
    return list(LETTERS[:n])


def letter_prefix(reference_prefix: str, letter: str) -> str:
    """``"A. "`` -> ``"C. "``: the first ``A`` of the prefix becomes the letter."""
    return reference_prefix.replace("A", letter, 1)


def example_answer(instance: Instance, method: str, labels: Sequence[str] = ()) -> str:
    """The answer an in-context example shows (see :func:`ranking_pair` for ranking); ``labels``
    are the joint choices' ``choice_labels``."""
    refs = instance.references
    if method == JOINT:
        for i, ref in enumerate(refs):
            if ref.is_correct:
                return letters_for(len(refs), labels)[i]
        return ""
    correct = instance.first_correct
    if correct is not None:
        return correct.output
    return refs[0].output if refs else ""


def ranking_pair(instance: Instance, position: int) -> tuple[str, str] | None:
    """The (passage, answer) an in-context ranking example shows.

    Examples alternate between a relevant passage (answer ``Yes``; even positions) and a
    non-relevant one (``No``; odd positions), so the shots are balanced; when the
    instance lacks the wanted kind, the other kind is used.
    """
    relevant = [r.output for r in instance.references if r.is_correct]
    other = [r.output for r in instance.references if not r.is_correct]
    order = [(relevant, YES), (other, NO)] if position % 2 == 0 else [(other, NO), (relevant, YES)]
    for passages, answer in order:
        if passages:
            return passages[0], answer
    return None


class BlockRenderer:
    """Renders instance blocks for one adapter spec."""

    def __init__(self, spec: AdapterSpec) -> None:
        self.spec = spec
        self.template = InstanceTemplate(spec.template) if spec.template is not None else None

    def render(
        self,
        instance: Instance,
        *,
        answer: str | None,
        text: str | None = None,
        passage: str = "",
    ) -> Block:
        """Render ``instance``; ``answer=None`` renders the evaluated instance.

        ``text`` replaces the instance input (a truncated input); for ranking it
        replaces the passage instead.
        """
        spec = self.spec
        is_ranking = spec.method == RANKING
        input_text = instance.input if (text is None or is_ranking) else text
        if is_ranking and text is not None:
            passage = text
        choices = [r.output for r in instance.references]
        letters = (
            letters_for(len(choices), spec.choice_labels)
            if spec.method == JOINT
            else [LETTERS[i % 26] for i in range(len(choices))]
        )
        if self.template is not None:
            variables = {
                "input": input_text,
                "references": list(instance.references),
                "choices": choices,
                "letters": letters,
                "passage": passage,
                "instance": instance,
                "metadata": dict(instance.metadata),
            }
            # The answer's place, found with a sentinel, ends the evaluated block; its last
            # line (e.g. "A: ") is the answer cue.
            marked = self.template.render({**variables, "output": _SENTINEL})
            before = marked.split(_SENTINEL, 1)[0]
            head, newline, cue = before.rpartition("\n")
            query = head + newline
            if answer is None:
                return Block(query, cue, "", "", before.strip(), "")
            full = self.template.render({**variables, "output": answer})
            return Block(full, "", "", "", before.strip(), answer)
        if is_ranking:
            query = f"Passage: {passage}\nQuery: {input_text}\n{RANKING_QUESTION}\n"
            cue, suffix = RANKING_CUE, "\n"
        else:
            query = spec.input_prefix + input_text + spec.input_suffix
            if spec.method == JOINT:
                query += "".join(
                    letter_prefix(spec.reference_prefix, letter) + choice + spec.reference_suffix
                    for letter, choice in zip(letters, choices, strict=True)
                )
            cue, suffix = spec.output_prefix, spec.output_suffix
        chat_user = (query + cue).strip()
        if answer is None:
            return Block(query, cue, "", "", chat_user, "")
        return Block(query, cue, answer, suffix, chat_user, answer)
