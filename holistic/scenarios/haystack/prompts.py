"""The text a haystack record shows the model: the task instruction and the articles.

Two ablations, each a scenario arg:

- ``instruction_placement``: the task instruction ``before`` the articles or
  ``after`` them (the wording says "below" or "above" accordingly);
- ``formatting``: ``plain`` (labelled lines) or ``markdown`` (``###`` headings and
  bold field names, as in the long-context paper's prompt schema).

The answer is requested as JSON with an inline example (``{"article_ids": [...]}``,
key :data:`ANSWER_KEY`); the example ids are real ids of the corpus that are absent
from the record, so copying the example is scored as returning wrong articles.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from holistic.scenarios.haystack.corpus import Article

FORMATTINGS: tuple[str, ...] = ("plain", "markdown")
PLACEMENTS: tuple[str, ...] = ("before", "after")
ANSWER_KEY = "article_ids"


def article_block(article: Article, formatting: str) -> str:
    """One article as shown in the context (ends with a blank line)."""
    date = article.date.isoformat()
    if formatting == "markdown":
        return f"### Article {article.id}\n**Date:** {date}\n**Title:** {article.title}\n\n{article.body}\n\n"
    return f"Article ID: {article.id}\nDate: {date}\nTitle: {article.title}\n{article.body}\n\n"


def answer_example(example_ids: Sequence[str]) -> str:
    return json.dumps({ANSWER_KEY: list(example_ids)})


def instruction(sentence: str, example_ids: Sequence[str], formatting: str, placement: str) -> str:
    """The task instruction for ``sentence`` (``Find all ... articles about X``)."""
    where = "below" if placement == "before" else "above"
    empty = json.dumps({ANSWER_KEY: []})
    rules = (
        f"{sentence} from the news articles {where}. "
        f"Answer with JSON only: the IDs of every matching article, in the form {answer_example(example_ids)}. "
        f"If no article matches, answer {empty}."
    )
    if formatting == "markdown":
        return f"### TASK\n{rules}\n"
    return f"TASK: {rules}\n"


def articles_heading(formatting: str) -> str:
    return "### ARTICLES\n\n" if formatting == "markdown" else "ARTICLES:\n\n"


def assemble(instruction_text: str, blocks: Sequence[str], formatting: str, placement: str) -> str:
    """The full record text: instruction and articles in the chosen order."""
    articles = articles_heading(formatting) + "".join(blocks)
    if placement == "before":
        return instruction_text + "\n" + articles.rstrip("\n") + "\n"
    return articles + instruction_text


def fixed_parts(instruction_text: str, formatting: str, placement: str) -> str:
    """Everything of :func:`assemble` except the article blocks (for token budgets)."""
    return assemble(instruction_text, (), formatting, placement)
