"""IFEval's 25 verifiable instructions (Zhou et al., 2023), as pure functions.

Each instruction id of the published data (``punctuation:no_comma``,
``length_constraints:number_words``...) has a checker ``check(response, args) -> bool``
that decides whether ``response`` follows the instruction with the arguments the data
gives it (``{"relation": "at least", "num_words": 300}``). The definitions are the
authors' (``google-research/instruction_following_eval/instructions.py``), written
anew here; HELM 0.5.16 and lm-evaluation-harness 0.4.13 carry copies of the same
code. ``tools/conformance/ifeval.py`` runs lm-evaluation-harness's checkers on the
same responses and compares every verdict.

Departures, each one deliberate:

- **No random arguments.** The authors' classes draw a random value for a missing or
  out-of-range argument. Here every argument the data must give is required, and a
  missing one is an :class:`~holistic.core.ifeval.IFEvalArgumentError` naming the instruction and argument.
  The one case in the published data: two ``keywords:letter_frequency`` rows ask for the
  letter ``#`` and ``!``, which the copies in HELM and lm-evaluation-harness replace by a
  random letter; the authors' current code (and this one) counts the character asked for.
- **Data is not a pattern.** Keywords, forbidden words, section markers and postscript
  markers are matched literally (``re.escape``); the authors use them as regular
  expressions. On the published data (plain words, ``P.S.`` / ``P.P.S`` markers, which
  have their own patterns) the verdicts are the same.
- **Language identification is seeded.** ``langdetect`` samples; the authors call it
  unseeded, so a borderline text can flip between runs. Here it runs on a private
  detector factory with seed 0 (the conformance script seeds the peer the same way).
- **Sentence splitting offline.** NLTK's English Punkt model is the one shipped with
  holistic (``holistic/metrics/nltk_data``), as NLTK 3.9+ reads it for
  ``nltk.data.load("tokenizers/punkt/english.pickle")``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

from holistic.core.ifeval import LESS_THAN
from holistic.metrics.tokenize import punkt_tokenizer, word_tokenize

CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
"""The three answers ``detectable_format:constrained_response`` accepts (contained anywhere)."""

Args = Mapping[str, Any]


def _compare(count: int, relation: str, threshold: int) -> bool:
    return count < threshold if relation == LESS_THAN else count >= threshold


# -- language --------------------------------------------------------------------


@cache
def _detector_factory() -> Any:
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.seed = 0
    return factory


def detect_language(text: str) -> str | None:
    """``langdetect``'s language code of ``text`` (seed 0); ``None`` when it finds no features."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = _detector_factory().create()
    detector.append(text)
    try:
        return str(detector.detect())
    except LangDetectException:
        return None


def _is_language(text: str, code: str) -> bool:
    # The authors count a text whose language cannot be detected as following.
    found = detect_language(text)
    return found is None or found == code


def response_language(value: str, args: Args) -> bool:
    return _is_language(value, args["language"])


def english_capital(value: str, args: Args) -> bool:
    return value.isupper() and _is_language(value, "en")


def english_lowercase(value: str, args: Args) -> bool:
    return value.islower() and _is_language(value, "en")


def capital_word_frequency(value: str, args: Args) -> bool:
    capitals = sum(1 for word in word_tokenize(value) if word.isupper())
    return _compare(capitals, args["capital_relation"], args["capital_frequency"])


# -- length ----------------------------------------------------------------------


def number_sentences(value: str, args: Args) -> bool:
    count = len(punkt_tokenizer().tokenize(value))
    return _compare(count, args["relation"], args["num_sentences"])


def number_words(value: str, args: Args) -> bool:
    return _compare(len(re.findall(r"\w+", value)), args["relation"], args["num_words"])


def number_paragraphs(value: str, args: Args) -> bool:
    """Paragraphs separated by the markdown divider ``***``; only the ends may be empty."""
    paragraphs = re.split(r"\s?\*\*\*\s?", value)
    count = len(paragraphs)
    for index, paragraph in enumerate(paragraphs):
        if not paragraph.strip():
            if index not in (0, len(paragraphs) - 1):
                return False
            count -= 1
    return count == int(args["num_paragraphs"])


_FIRST_WORD_STOPS = frozenset(".,?!'\"")


def nth_paragraph_first_word(value: str, args: Args) -> bool:
    """``num_paragraphs`` paragraphs split on ``\\n\\n``; paragraph ``nth_paragraph`` starts with ``first_word``."""
    paragraphs = value.split("\n\n")
    count = sum(1 for paragraph in paragraphs if paragraph.strip())
    nth = args["nth_paragraph"]
    if nth > count:
        return False
    paragraph = paragraphs[nth - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = []
    for letter in word:
        if letter in _FIRST_WORD_STOPS:
            break
        first.append(letter.lower())
    return count == int(args["num_paragraphs"]) and "".join(first) == str(args["first_word"]).lower()


# -- content and format ----------------------------------------------------------


def number_placeholders(value: str, args: Args) -> bool:
    return len(re.findall(r"\[.*?\]", value)) >= int(args["num_placeholders"])


def postscript(value: str, args: Args) -> bool:
    marker = args["postscript_marker"].strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + re.escape(marker.lower()) + r".*$"
    return re.search(pattern, value.lower(), flags=re.MULTILINE) is not None


def number_bullet_lists(value: str, args: Args) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", value, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", value, flags=re.MULTILINE)
    return len(stars) + len(dashes) == int(args["num_bullets"])


def constrained_response(value: str, args: Args) -> bool:
    text = value.strip()
    return any(option in text for option in CONSTRAINED_RESPONSES)


def number_highlighted_sections(value: str, args: Args) -> bool:
    """``*highlighted*`` spans with text inside; a ``**bold**`` span counts again as one more."""
    single = [h for h in re.findall(r"\*[^\n\*]*\*", value) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", value) if h[2:-2].strip()]
    return len(single) + len(double) >= int(args["num_highlights"])


def multiple_sections(value: str, args: Args) -> bool:
    splitter = re.escape(args["section_spliter"].strip())
    sections = re.split(r"\s?" + splitter + r"\s?\d+\s?", value)
    return len(sections) - 1 >= int(args["num_sections"])


def json_format(value: str, args: Args) -> bool:
    text = value.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        text = text.removeprefix(fence)
    text = text.removesuffix("```").strip()
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def title(value: str, args: Args) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", value))


# -- keywords --------------------------------------------------------------------


def keyword_existence(value: str, args: Args) -> bool:
    return all(re.search(re.escape(k), value, flags=re.IGNORECASE) for k in args["keywords"])


def keyword_frequency(value: str, args: Args) -> bool:
    count = len(re.findall(re.escape(args["keyword"].strip()), value, flags=re.IGNORECASE))
    return _compare(count, args["relation"], args["frequency"])


def forbidden_words(value: str, args: Args) -> bool:
    return not any(
        re.search(r"\b" + re.escape(word) + r"\b", value, flags=re.IGNORECASE) for word in args["forbidden_words"]
    )


def letter_frequency(value: str, args: Args) -> bool:
    letter = args["letter"].strip().lower()
    return _compare(Counter(value.lower())[letter], args["let_relation"], args["let_frequency"])


# -- combinations, start and end ---------------------------------------------------


def two_responses(value: str, args: Args) -> bool:
    """Two different responses separated by ``******`` (only the ends may be empty)."""
    parts = value.split("******")
    answers = []
    for index, part in enumerate(parts):
        if part.strip():
            answers.append(part.strip())
        elif index not in (0, len(parts) - 1):
            return False
    return len(answers) == 2 and answers[0] != answers[1]


def repeat_prompt(value: str, args: Args) -> bool:
    return value.strip().lower().startswith(args["prompt_to_repeat"].strip().lower())


def end_checker(value: str, args: Args) -> bool:
    return value.strip().strip('"').lower().endswith(args["end_phrase"].strip().lower())


def quotation(value: str, args: Args) -> bool:
    text = value.strip()
    return len(text) > 1 and text[0] == '"' and text[-1] == '"'


def no_comma(value: str, args: Args) -> bool:
    return "," not in value


CHECKERS: dict[str, Callable[[str, Args], bool]] = {
    "change_case:capital_word_frequency": capital_word_frequency,
    "change_case:english_capital": english_capital,
    "change_case:english_lowercase": english_lowercase,
    "combination:repeat_prompt": repeat_prompt,
    "combination:two_responses": two_responses,
    "detectable_content:number_placeholders": number_placeholders,
    "detectable_content:postscript": postscript,
    "detectable_format:constrained_response": constrained_response,
    "detectable_format:json_format": json_format,
    "detectable_format:multiple_sections": multiple_sections,
    "detectable_format:number_bullet_lists": number_bullet_lists,
    "detectable_format:number_highlighted_sections": number_highlighted_sections,
    "detectable_format:title": title,
    "keywords:existence": keyword_existence,
    "keywords:forbidden_words": forbidden_words,
    "keywords:frequency": keyword_frequency,
    "keywords:letter_frequency": letter_frequency,
    "language:response_language": response_language,
    "length_constraints:nth_paragraph_first_word": nth_paragraph_first_word,
    "length_constraints:number_paragraphs": number_paragraphs,
    "length_constraints:number_sentences": number_sentences,
    "length_constraints:number_words": number_words,
    "punctuation:no_comma": no_comma,
    "startend:end_checker": end_checker,
    "startend:quotation": quotation,
}
"""The 25 instruction ids of the published IFEval data -> their checkers
(the arguments each takes are :data:`holistic.core.ifeval.INSTRUCTION_ARGS`)."""


def follows(instruction_id: str, response: str, args: Args) -> bool:
    """Strict verdict: ``response`` follows the instruction (an empty response never does)."""
    return bool(response.strip()) and CHECKERS[instruction_id](response, args)


def loose_variants(response: str) -> list[str]:
    """The authors' loose reading: the response, without its first and/or last line, and
    each of those with every ``*`` removed (8 texts, in the authors' order)."""
    lines = response.split("\n")
    cut = ["\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [response, response.replace("*", ""), *cut, *(text.replace("*", "") for text in cut)]


def follows_loosely(instruction_id: str, response: str, args: Args) -> bool:
    """Loose verdict: some loose variant of ``response`` follows the instruction."""
    return any(follows(instruction_id, text, args) for text in loose_variants(response))


def strict_verdicts(instruction_ids: Sequence[str], args: Sequence[Args], response: str) -> tuple[bool, ...]:
    """Each instruction's strict verdict on ``response`` (arguments already checked)."""
    return tuple(follows(i, response, a) for i, a in zip(instruction_ids, args, strict=True))


def loose_verdicts(instruction_ids: Sequence[str], args: Sequence[Args], response: str) -> tuple[bool, ...]:
    """Each instruction's loose verdict on ``response`` (arguments already checked)."""
    return tuple(follows_loosely(i, response, a) for i, a in zip(instruction_ids, args, strict=True))
