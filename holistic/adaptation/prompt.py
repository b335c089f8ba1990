"""Assembling blocks into a plain-text prompt or chat messages.

Plain text (``Request.prompt``), instructions placed ``before``::

    {global_prefix}{instructions}\\n
    {instance_prefix}{example 1}{instance_prefix}{example 2}...{instance_prefix}{eval block}{global_suffix}

With placement ``after``, the instructions (plus ``\\n``) go after the evaluated
instance's input and choices, right before its answer cue (for template blocks, which
have no separate cue, at the end of the block). Trailing spaces and tabs of the eval
block are removed, so a prompt ends with ``Answer:`` rather than ``Answer: `` (the
model's answer then starts with its own space token). With
:attr:`~holistic.core.specs.ProtocolBehaviour.strip_cue_only` (``protocol: helm``) only the
answer cue is stripped (of all trailing whitespace), as HELM's adapter strips its output
prefix: an input that ends in a space keeps it when there is no cue (HarmBench,
XSTest and SimpleSafetyTests have such prompts).

Chat (``Request.messages``): the instructions are the system message (placement
``before``); ``chat_examples="multi_turn"`` makes each example a user turn (the block
without its answer) followed by an assistant turn (the answer), then the evaluated
instance as the last user turn; ``"single_turn"`` puts the examples and the evaluated
instance, laid out as in the plain prompt, into one user turn. The global prefix and
suffix wrap the first and last user turns.

An instance that is a conversation (metadata ``chat_history``, see
:data:`holistic.core.types.CHAT_HISTORY_KEY`) has its earlier turns sent as messages right
before its own user turn, role and content as written (HELM's ``ChatAdapter`` sends
WildBench's ``conversation_input`` so). With ``strip_cue_only`` the last user turn is
not stripped either: HELM sends a conversation's turns, and a prompt a chat client wraps
as one user message, verbatim. A plain prompt shows the earlier turns as
``USER: ...`` / ``ASSISTANT: ...`` paragraphs, then ``USER: `` and the evaluated block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from holistic.adaptation.blocks import Block
from holistic.core.types import AdapterSpec, Message


@dataclass(frozen=True)
class PromptPlan:
    """The blocks of one prompt, before it is laid out as text or messages."""

    spec: AdapterSpec
    examples: tuple[Block, ...]
    eval_block: Block
    history: tuple[Message, ...] = ()
    """The conversation before the evaluated instance's own turn (``chat_history``)."""

    @property
    def _before(self) -> bool:
        return bool(self.spec.instructions) and self.spec.instruction_placement == "before"

    @property
    def _after(self) -> bool:
        return bool(self.spec.instructions) and self.spec.instruction_placement == "after"

    def _eval_text(self, strip: bool = True) -> str:
        block = self.eval_block
        middle = self.spec.instructions + "\n" if self._after else ""
        if not strip:
            return block.query + middle + block.cue
        if self.spec.behaviour.strip_cue_only:
            return block.query + middle + block.cue.rstrip()
        return (block.query + middle + block.cue).rstrip(" \t")

    def _body(self, strip: bool = True) -> str:
        """Examples and the evaluated instance joined by the instance prefix."""
        texts = [b.example_text for b in self.examples] + [self._history_text() + self._eval_text(strip)]
        return self.spec.instance_prefix.join(texts)

    def _history_text(self) -> str:
        if not self.history:
            return ""
        turns = (("USER: " if m.role == "user" else "ASSISTANT: ") + m.content for m in self.history)
        return "\n\n".join(turns) + "\n\nUSER: "

    def plain(self, strip: bool = True) -> str:
        """The plain-text prompt; ``strip=False`` keeps the eval block's trailing spaces (the
        text HELM's separate scoring puts the choice after)."""
        spec = self.spec
        head = spec.instructions + "\n" + spec.instance_prefix if self._before else ""
        return spec.global_prefix + head + self._body(strip) + spec.global_suffix

    def messages(self) -> tuple[Message, ...]:
        spec = self.spec
        system = [Message("system", spec.instructions)] if self._before else []
        last = self._eval_text() if spec.behaviour.strip_cue_only else self._eval_text().strip()
        if spec.chat_examples == "single_turn" and not self.history:
            turns = [Message("user", self._body().strip())]
        else:
            turns = []
            for block in self.examples:
                turns.append(Message("user", block.chat_user))
                turns.append(Message("assistant", block.chat_answer.strip()))
            turns.extend(self.history)
            turns.append(Message("user", last))
        return tuple(system) + _wrap_user_turns(turns, spec.global_prefix, spec.global_suffix)


def _wrap_user_turns(turns: Sequence[Message], prefix: str, suffix: str) -> tuple[Message, ...]:
    out = list(turns)
    if prefix:
        out[0] = Message(out[0].role, prefix + out[0].content)
    if suffix:
        out[-1] = Message(out[-1].role, out[-1].content + suffix)
    return tuple(out)
