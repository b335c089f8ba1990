"""Deterministic responses to IFEval prompts that exercise every checker both ways.

Used by ``python -m tools.conformance.ifeval`` (which feeds the same responses to holistic's
checkers and to lm-evaluation-harness's) and by the test that compares holistic with
the peer's recorded verdicts. For each prompt:

- ``prompt``: the prompt itself; ``upper``, ``lower``, ``quoted``, ``no_commas``:
  simple transformations of it; ``blank``: whitespace only;
- ``satisfy``: a response built from the prompt's instructions and arguments to follow
  all of them (as far as they are compatible);
- ``wrapped``, ``starred``, ``padded``: ``satisfy`` with a chatty first and last line,
  with markdown bold, with surrounding blank lines (the loose variants and HELM's
  stripping matter there);
- ``break_<i>``: ``satisfy`` changed to violate instruction ``i``;
- ``markdown``: a generic document with a title, sections, bullets, highlights,
  placeholders and a postscript.

Nothing here is random: the same prompt always gets the same responses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]

_FILLER = (
    "The committee reviewed the plan in detail. It found the budget sound and the timeline realistic. "
    "Several members asked for clearer milestones. The chair agreed to circulate a revised draft. "
    "Everyone expected the final version next week."
)
_SENTENCES = re.findall(r"[^.]+\.", _FILLER)


def _sentences(n: int) -> str:
    return " ".join(_SENTENCES[i % len(_SENTENCES)].strip() for i in range(max(n, 1)))


def _words(text: str, n: int) -> str:
    """``text`` cut or padded (with filler words) to ``n`` words."""
    words = text.split()
    filler = _FILLER.split()
    while len(words) < n:
        words.append(filler[len(words) % len(filler)])
    return " ".join(words[: max(n, 1)])


def _apply(text: str, instruction: str, args: Mapping[str, Any], prompt: str) -> str:
    """``text`` changed to follow one instruction."""
    kind = instruction.split(":", 1)[1]
    at_least = args.get("relation", args.get("let_relation", args.get("capital_relation"))) == "at least"
    if kind == "repeat_prompt":
        return str(args["prompt_to_repeat"]) + "\n" + text
    if kind == "title":
        return "<<A Short Title>>\n" + text
    if kind == "number_words":
        n = args["num_words"]
        return _words(text, n + 5 if at_least else n - 1)
    if kind == "number_sentences":
        n = args["num_sentences"]
        return text + " " + _sentences(n + 1) if at_least else _sentences(n - 1)
    if kind == "number_paragraphs":
        return "\n***\n".join([text] + [_sentences(2)] * (args["num_paragraphs"] - 1))
    if kind == "nth_paragraph_first_word":
        paragraphs = [_sentences(2) for _ in range(args["num_paragraphs"])]
        paragraphs[0] = text
        nth = args["nth_paragraph"] - 1
        paragraphs[nth] = args["first_word"].capitalize() + " " + paragraphs[nth]
        return "\n\n".join(paragraphs)
    if kind == "multiple_sections":
        marker = args["section_spliter"]
        parts = [f"{marker} {i}\n{text if i == 1 else _sentences(1)}" for i in range(1, args["num_sections"] + 1)]
        return "\n".join(parts)
    if kind == "number_bullet_lists":
        return text + "\n" + "\n".join(f"* Point {i}." for i in range(1, args["num_bullets"] + 1))
    if kind == "number_highlighted_sections":
        return text + "\n" + " ".join(f"*highlight {i}*" for i in range(1, args["num_highlights"] + 1))
    if kind == "number_placeholders":
        return text + " " + " ".join(f"[field {i}]" for i in range(1, args["num_placeholders"] + 1))
    if kind == "postscript":
        return text + f"\n\n{args['postscript_marker']} Thank you for reading."
    if kind == "existence":
        return text + " " + " ".join(args["keywords"]) + "."
    if kind == "frequency":
        times = args["frequency"] + 1 if at_least else max(args["frequency"] - 1, 0)
        cleaned = re.sub(re.escape(args["keyword"]), "", text, flags=re.IGNORECASE)
        return cleaned + (" " + " ".join([args["keyword"]] * times) if times else "")
    if kind == "forbidden_words":
        for word in args["forbidden_words"]:
            text = re.sub(r"\b" + re.escape(word) + r"\b", "", text, flags=re.IGNORECASE)
        return text
    if kind == "letter_frequency":
        letter = args["letter"]
        if at_least:
            return text + " " + str(letter) * (int(args["let_frequency"]) + 1)
        return text.replace(letter.lower(), "").replace(letter.upper(), "")
    if kind == "english_capital":
        return text.upper()
    if kind == "english_lowercase":
        return text.lower()
    if kind == "capital_word_frequency":
        times = args["capital_frequency"] + 1 if at_least else 0
        return text + (" " + " ".join(["NOTE"] * times) if times else "")
    if kind == "no_comma":
        return text.replace(",", "")
    if kind == "json_format":
        return "```json\n" + json.dumps({"response": text}) + "\n```"
    if kind == "two_responses":
        return text + "\n******\n" + "Another take: " + text
    if kind == "end_checker":
        return text + " " + str(args["end_phrase"])
    if kind == "quotation":
        return '"' + text + '"'
    if kind == "constrained_response":
        return text + " My answer is yes."
    if kind == "response_language":
        return text
    raise ValueError(f"no response builder for instruction {instruction!r}")


def _break(text: str, instruction: str, args: Mapping[str, Any]) -> str:
    """``text`` changed so that it no longer follows one instruction."""
    kind = instruction.split(":", 1)[1]
    breakers: dict[str, Callable[[str], str]] = {
        "no_comma": lambda t: t + ", and so on",
        "quotation": lambda t: t.strip().strip('"'),
        "english_lowercase": lambda t: "Capital " + t,
        "english_capital": lambda t: t + " lower",
        "title": lambda t: t.replace("<<", "").replace(">>", ""),
        "json_format": lambda t: t + "\nnot json",
        "end_checker": lambda t: t + " And more.",
        "two_responses": lambda t: t.replace("******", "**"),
        "repeat_prompt": lambda t: "Well. " + t,
        "constrained_response": lambda t: t.replace("My answer is", "I say"),
        "postscript": lambda t: t.replace("P.S.", "PS").replace("P.P.S", "PPS"),
        "existence": lambda t: re.sub(
            "|".join(re.escape(k) for k in args.get("keywords", ["\x00"])), "", t, flags=re.I
        ),
        "forbidden_words": lambda t: t + " " + " ".join(args.get("forbidden_words", [])),
        "number_placeholders": lambda t: re.sub(r"\[[^\]]*\]", "", t),
        "number_highlighted_sections": lambda t: t.replace("*", ""),
        "number_bullet_lists": lambda t: t + "\n* One more point.",
        "number_paragraphs": lambda t: t + "\n***\nAn extra paragraph.",
        "nth_paragraph_first_word": lambda t: t.replace("\n\n", "\n"),
        "multiple_sections": lambda t: re.sub(re.escape(args.get("section_spliter", "\x00")) + r" \d+", "", t),
        "number_words": lambda t: (
            t + " " + _FILLER * 20 if args.get("relation") == "less than" else " ".join(t.split()[:3])
        ),
        "number_sentences": lambda t: t + " " + _sentences(60) if args.get("relation") == "less than" else "One.",
        "frequency": lambda t: (
            t + (" " + " ".join([args.get("keyword", "")] * 40) if args.get("relation") == "less than" else "")
        ),
        "letter_frequency": lambda t: t + " " + args.get("letter", "a") * 60,
        "capital_word_frequency": lambda t: t + " " + " ".join(["LOUD"] * 40),
        "response_language": lambda t: t + " " + _FILLER,
    }
    return breakers[kind](text)


def satisfying_response(row: Row) -> str:
    """A response built to follow each of the row's instructions in turn (the order matters:
    wrapping instructions such as JSON or quotation come last)."""
    last = (
        "english_capital",
        "english_lowercase",
        "no_comma",
        "json_format",
        "two_responses",
        "end_checker",
        "quotation",
    )
    ordered = sorted(
        zip(row["instruction_id_list"], row["kwargs"], strict=True),
        key=lambda pair: last.index(pair[0].split(":", 1)[1]) + 1 if pair[0].split(":", 1)[1] in last else 0,
    )
    text = _sentences(3)
    for instruction, args in ordered:
        text = _apply(text, instruction, args, row["prompt"])
    return text


_MARKDOWN = (
    "<<Report>>\n\nSECTION 1\n*Summary*: the plan is sound, with [name] as owner.\n\n"
    "Section 2\n* first point\n* second point\n- third point\n\n***\n\n**Bold claim** here.\n\n"
    "P.S. Reply soon.\nP.P.S Thanks."
)


def responses(row: Row) -> list[tuple[str, str]]:
    """``(variant name, response)`` pairs for one IFEval row, in a fixed order."""
    prompt = row["prompt"]
    satisfied = satisfying_response(row)
    out = [
        ("prompt", prompt),
        ("upper", prompt.upper()),
        ("lower", prompt.lower()),
        ("quoted", f'"{prompt}"'),
        ("no_commas", prompt.replace(",", "")),
        ("blank", " \n "),
        ("satisfy", satisfied),
        ("wrapped", "Sure, here is my answer:\n" + satisfied + "\nI hope this helps!"),
        ("starred", "**" + satisfied.replace(". ", ". **", 1) + "**"),
        ("padded", "\n\n" + satisfied + "\n\n"),
        ("markdown", _MARKDOWN),
    ]
    for index, (instruction, args) in enumerate(zip(row["instruction_id_list"], row["kwargs"], strict=True)):
        out.append((f"break_{index}", _break(satisfied, instruction, args)))
    return out


def all_responses(rows: Sequence[Row]) -> list[tuple[int, str, str]]:
    """``(key, variant, response)`` for every row."""
    return [(row["key"], name, text) for row in rows for name, text in responses(row)]


def random_letter_slots(rows: Sequence[Row]) -> set[tuple[int, int]]:
    """``(key, instruction index)`` of the letter_frequency instructions whose letter is not
    a-z: HELM's and lm-evaluation-harness's copies of the checker count a random letter
    instead (the authors' current code, and holistic, count the character asked for)."""
    out = set()
    for row in rows:
        for index, (instruction, args) in enumerate(zip(row["instruction_id_list"], row["kwargs"], strict=True)):
            letter = args.get("letter") if instruction == "keywords:letter_frequency" else None
            if letter is not None and not (len(letter) == 1 and "a" <= letter.lower() <= "z"):
                out.add((row["key"], index))
    return out
