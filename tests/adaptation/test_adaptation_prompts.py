"""Golden prompts: every method's exact text and chat messages, byte for byte."""

from __future__ import annotations

import pytest

from holistic.adaptation import adapt
from holistic.core.errors import SpecError
from holistic.core.hashing import canonical_json, short_hash
from holistic.core.specs import ProtocolBehaviour
from holistic.core.types import AdapterSpec, Message, PromptFormat, RunSpec, ScenarioSpec
from holistic.spec.protocol import HOLISTIC_BEHAVIOUR
from tests.adaptation.adaptation_fixtures import CHAT_MODEL, EVAL, PLAIN_MODEL, TRAIN

MMLU_LIKE = AdapterSpec(
    method="multiple_choice_joint",
    instructions="The following are multiple choice questions (with answers) about colours.",
    input_prefix="Question: ",
    output_prefix="Answer: ",
    max_train_instances=2,
    selection="first",
    protocol="holistic",  # holistic's own prompt-format choices (chat for generation on chat models)
    behaviour=HOLISTIC_BEHAVIOUR,
)

JOINT_PROMPT = (
    "The following are multiple choice questions (with answers) about colours.\n"
    "\n"
    "Question: Colour of grass?\n"
    "A. red\n"
    "B. green\n"
    "C. blue\n"
    "Answer: B\n"
    "\n"
    "Question: Colour of blood?\n"
    "A. red\n"
    "B. green\n"
    "C. blue\n"
    "Answer: A\n"
    "\n"
    "Question: Colour of the sky?\n"
    "A. red\n"
    "B. green\n"
    "C. blue\n"
    "Answer:"
)

SEPARATE_PROMPT = (
    "The following are multiple choice questions (with answers) about colours.\n"
    "\n"
    "Question: Colour of grass?\n"
    "Answer: green\n"
    "\n"
    "Question: Colour of blood?\n"
    "Answer: red\n"
    "\n"
    "Question: Colour of the sky?\n"
    "Answer:"
)


def test_joint_prompt_and_letter_mapping_on_a_chat_model_are_plain() -> None:
    [state] = adapt(TRAIN, EVAL, MMLU_LIKE, CHAT_MODEL, None, seed=0)
    assert state.request.messages is None
    assert state.request.prompt == JOINT_PROMPT
    assert state.request.kind == "generate"
    assert state.output_mapping == {"A": "red", "B": "green", "C": "blue"}
    assert state.train_ids == ("t0", "t1")
    assert state.num_train_instances == 2 and not state.prompt_truncated


def test_joint_prompt_with_chat_forced_is_multi_turn() -> None:
    [state] = adapt(TRAIN, EVAL, MMLU_LIKE.replace(prompt_format="chat"), CHAT_MODEL, None, seed=0)
    assert state.request.prompt == ""
    assert state.request.messages == (
        Message("system", "The following are multiple choice questions (with answers) about colours."),
        Message("user", "Question: Colour of grass?\nA. red\nB. green\nC. blue\nAnswer:"),
        Message("assistant", "B"),
        Message("user", "Question: Colour of blood?\nA. red\nB. green\nC. blue\nAnswer:"),
        Message("assistant", "A"),
        Message("user", "Question: Colour of the sky?\nA. red\nB. green\nC. blue\nAnswer:"),
    )


def test_generation_is_chat_on_chat_models_and_plain_otherwise() -> None:
    spec = MMLU_LIKE.replace(method="generation", max_tokens=7, stop_sequences=("\n",))
    [chat] = adapt(TRAIN, EVAL, spec, CHAT_MODEL, None, seed=0)
    assert chat.request.messages == (
        Message("system", "The following are multiple choice questions (with answers) about colours."),
        Message("user", "Question: Colour of grass?\nAnswer:"),
        Message("assistant", "green"),
        Message("user", "Question: Colour of blood?\nAnswer:"),
        Message("assistant", "red"),
        Message("user", "Question: Colour of the sky?\nAnswer:"),
    )
    assert (chat.request.max_tokens, chat.request.stop) == (7, ("\n",))
    [plain] = adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)
    assert plain.request.messages is None
    assert plain.request.prompt == SEPARATE_PROMPT
    # HELM's protocol sends the raw prompt to a model that takes plain text, chat template or not
    [helm] = adapt(TRAIN, EVAL, spec.replace(protocol="helm", behaviour=ProtocolBehaviour()), CHAT_MODEL, None, seed=0)
    assert helm.request.messages is None and helm.request.prompt == SEPARATE_PROMPT


def test_single_turn_chat_keeps_examples_in_one_user_message() -> None:
    spec = MMLU_LIKE.replace(method="generation", chat_examples="single_turn", global_prefix="<<", global_suffix=">>")
    [state] = adapt(TRAIN, EVAL, spec, CHAT_MODEL, None, seed=0)
    body = SEPARATE_PROMPT.split("\n\n", 1)[1]
    assert state.request.messages == (
        Message("system", "The following are multiple choice questions (with answers) about colours."),
        Message("user", "<<" + body + ">>"),
    )


def test_separate_original_scores_each_choice_after_the_prompt() -> None:
    states = adapt(TRAIN, EVAL, MMLU_LIKE.replace(method="multiple_choice_separate_original"), CHAT_MODEL, None, seed=0)
    assert [
        (s.request.kind, s.request.prompt, s.request.continuation, s.reference_index, s.request_index) for s in states
    ] == [
        ("loglikelihood", SEPARATE_PROMPT, " red", 0, 0),
        ("loglikelihood", SEPARATE_PROMPT, " green", 1, 1),
        ("loglikelihood", SEPARATE_PROMPT, " blue", 2, 2),
    ]
    assert all(s.request.messages is None and s.request.max_tokens == 0 for s in states)


def test_calibrated_pairs_the_prompt_with_the_neutral_answer_context() -> None:
    states = adapt(
        TRAIN, EVAL, MMLU_LIKE.replace(method="multiple_choice_separate_calibrated"), PLAIN_MODEL, None, seed=0
    )
    assert [(s.role, s.request.prompt, s.request.continuation, s.reference_index) for s in states] == [
        ("main", SEPARATE_PROMPT, " red", 0),
        ("calibration", "Answer:", " red", 0),
        ("main", SEPARATE_PROMPT, " green", 1),
        ("calibration", "Answer:", " green", 1),
        ("main", SEPARATE_PROMPT, " blue", 2),
        ("calibration", "Answer:", " blue", 2),
    ]
    assert [s.request_index for s in states] == list(range(6))


def test_ranking_asks_yes_and_no_per_passage() -> None:
    from holistic.core.types import Instance, Reference

    query = Instance(
        id="q1",
        input="who wrote hamlet",
        split="test",
        references=(
            Reference("Hamlet is a tragedy by Shakespeare.", ("correct",), relevance=3, first_stage_rank=1),
            Reference("Paris is in France.", relevance=0),
        ),
    )
    spec = AdapterSpec(
        method="ranking_binary", max_train_instances=0, protocol="holistic", behaviour=HOLISTIC_BEHAVIOUR
    )
    states = adapt([], [query], spec, PLAIN_MODEL, None, seed=0)
    first = "Passage: Hamlet is a tragedy by Shakespeare.\nQuery: who wrote hamlet\nDoes the passage answer the query?\nAnswer:"
    second = "Passage: Paris is in France.\nQuery: who wrote hamlet\nDoes the passage answer the query?\nAnswer:"
    assert [(s.request.prompt, s.request.continuation, s.role, s.reference_index) for s in states] == [
        (first, " Yes", "yes", 0),
        (first, " No", "no", 0),
        (second, " Yes", "yes", 1),
        (second, " No", "no", 1),
    ]


def test_instructions_after_go_between_the_input_and_the_answer_cue() -> None:
    spec = MMLU_LIKE.replace(
        instruction_placement="after",
        max_train_instances=1,
        instructions="Reply with a letter.",
        global_prefix="[",
        global_suffix="]",
    )
    [state] = adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)
    assert state.request.prompt == (
        "[Question: Colour of grass?\nA. red\nB. green\nC. blue\nAnswer: B\n"
        "\n"
        "Question: Colour of the sky?\nA. red\nB. green\nC. blue\nReply with a letter.\nAnswer:]"
    )


def test_jinja_template_renders_examples_and_eval_block() -> None:
    template = "Q: {{ input }}\n{% for l, c in zip(letters, choices) %}({{ l }}) {{ c }}\n{% endfor %}A: {{ output }}\n"
    spec = MMLU_LIKE.replace(template=template, instructions="", max_train_instances=1)
    with pytest.raises(SpecError, match="unknown variable 'zip'"):
        adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)
    template = (
        "Q: {{ input }}\n{% for c in choices %}({{ letters[loop.index0] }}) {{ c }}\n{% endfor %}A: {{ output }}\n"
    )
    [state] = adapt(TRAIN, EVAL, spec.replace(template=template), PLAIN_MODEL, None, seed=0)
    assert state.request.prompt == (
        "Q: Colour of grass?\n(A) red\n(B) green\n(C) blue\nA: B\n"
        "\n"
        "Q: Colour of the sky?\n(A) red\n(B) green\n(C) blue\nA:"
    )
    [chat] = adapt(TRAIN, EVAL, spec.replace(template=template, prompt_format="chat"), CHAT_MODEL, None, seed=0)
    assert chat.request.messages == (
        Message("user", "Q: Colour of grass?\n(A) red\n(B) green\n(C) blue\nA:"),
        Message("assistant", "B"),
        Message("user", "Q: Colour of the sky?\n(A) red\n(B) green\n(C) blue\nA:"),
    )


def test_template_error_names_the_unknown_variable_and_suggests() -> None:
    spec = MMLU_LIKE.replace(template="{{ inputt }}")
    with pytest.raises(SpecError, match=r"unknown variable 'inputt'.*did you mean 'input'"):
        adapt(TRAIN, EVAL, spec, PLAIN_MODEL, None, seed=0)


def test_invalid_spec_values_are_reported_with_the_nearest_name() -> None:
    with pytest.raises(SpecError, match=r"adaptation\.method.*did you mean 'multiple_choice_joint'"):
        adapt(TRAIN, EVAL, MMLU_LIKE.replace(method="multiple_choice_jiont"), PLAIN_MODEL, None, seed=0)
    with pytest.raises(SpecError, match=r"adaptation\.prompt_format"):
        adapt(
            TRAIN,
            EVAL,
            MMLU_LIKE.replace(method="multiple_choice_separate_original", prompt_format="chat"),
            CHAT_MODEL,
            None,
            seed=0,
        )
    with pytest.raises(SpecError, match=r"does not take chat messages"):
        adapt(TRAIN, EVAL, MMLU_LIKE.replace(prompt_format="chat"), PLAIN_MODEL, None, seed=0)
    with pytest.raises(SpecError, match=r"adaptation\.prompt_format.*did you mean 'chat'"):
        adapt(TRAIN, EVAL, MMLU_LIKE.replace(prompt_format="caht"), PLAIN_MODEL, None, seed=0)


def test_prompt_format_is_a_typed_value_that_hashes_as_its_string() -> None:
    assert AdapterSpec().prompt_format is PromptFormat.AUTO
    written = AdapterSpec(prompt_format="chat")  # type: ignore[arg-type]  # as a spec's YAML writes it
    assert written.prompt_format is PromptFormat.CHAT
    assert written == AdapterSpec(prompt_format=PromptFormat.CHAT)
    run = RunSpec(name="r", scenario=ScenarioSpec.make("s"), adapter=written, model="m")
    canonical = canonical_json(run.canonical())
    assert '"prompt_format":"chat"' in canonical  # run ids of existing suites are unchanged
    assert run.run_id.endswith(short_hash(canonical))


def test_chat_only_models_get_joint_prompts_as_chat_and_max_tokens_is_capped() -> None:
    from dataclasses import replace

    from holistic.core.types import Capabilities

    chat_only = replace(CHAT_MODEL, capabilities=Capabilities(chat=True, completions=False), max_output_tokens=5)
    [state] = adapt(TRAIN, EVAL, MMLU_LIKE.replace(max_tokens=50), chat_only, None, seed=0)
    assert state.request.messages is not None and state.request.messages[-1].content.endswith("C. blue\nAnswer:")
    assert state.request.max_tokens == 5


def test_ranking_examples_alternate_relevant_and_irrelevant_passages() -> None:
    from holistic.core.types import Instance, Reference

    def query(iid: str, q: str, good: str, bad: str, split: str = "train") -> Instance:
        return Instance(
            id=iid,
            input=q,
            split=split,
            references=(Reference(bad, relevance=0), Reference(good, ("correct",), relevance=2)),
        )

    train = [
        query("a", "capital of peru", "Lima is the capital of Peru.", "Peru grows potatoes."),
        query("b", "tallest mountain", "Everest is the tallest.", "Mountains are cold."),
    ]
    spec = AdapterSpec(
        method="ranking_binary",
        max_train_instances=2,
        selection="first",
        protocol="holistic",
        behaviour=HOLISTIC_BEHAVIOUR,
    )
    states = adapt(train, [query("q", "who", "He did.", "Nobody.", "test")], spec, PLAIN_MODEL, None, seed=0)
    assert states[0].request.prompt == (
        "Passage: Lima is the capital of Peru.\nQuery: capital of peru\nDoes the passage answer the query?\nAnswer: Yes\n"
        "\n"
        "Passage: Mountains are cold.\nQuery: tallest mountain\nDoes the passage answer the query?\nAnswer: No\n"
        "\n"
        "Passage: Nobody.\nQuery: who\nDoes the passage answer the query?\nAnswer:"
    )
    assert [(s.reference_index, s.role) for s in states] == [(0, "yes"), (0, "no"), (1, "yes"), (1, "no")]

    # HELM's BinaryRankingAdapter: each training query with every one of its passages, in
    # order, and one generated answer per evaluated passage
    helm = adapt(
        train,
        [query("q", "who", "He did.", "Nobody.", "test")],
        spec.replace(protocol="helm", behaviour=ProtocolBehaviour()),
        PLAIN_MODEL,
        None,
        seed=0,
    )
    block = "Passage: {}\nQuery: {}\nDoes the passage answer the query?\nAnswer: {}\n"
    assert helm[1].request.prompt == (
        block.format("Peru grows potatoes.", "capital of peru", "No")
        + "\n"
        + block.format("Lima is the capital of Peru.", "capital of peru", "Yes")
        + "\n"
        + block.format("Mountains are cold.", "tallest mountain", "No")
        + "\n"
        + block.format("Everest is the tallest.", "tallest mountain", "Yes")
        + "\n"
        + "Passage: He did.\nQuery: who\nDoes the passage answer the query?\nAnswer:"
    )
    assert [(s.reference_index, s.role, s.request.kind, s.num_train_instances) for s in helm] == [
        (0, "main", "generate", 2),
        (1, "main", "generate", 2),
    ]
