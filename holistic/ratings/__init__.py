"""Human ratings of generations: export items for raters, import their ratings, measure agreement.

HELM has people judge the disinformation scenario's generations (does a headline
support the thesis? is a message divisive?). ``helm-ratings export FILE``
writes one row per generated completion of the suite's disinformation runs (CSV or
JSON Lines, by the file's extension) with an empty ``rater`` field and one empty field
per question; raters fill them in. ``helm-ratings import FILE...`` checks
every row against the suite (errors name the file and line) and stores them in
``<suite>/ratings/``; the summary then shows each question's mean per run and the
raters' agreement (Krippendorff's alpha).
"""

from holistic.ratings.agreement import krippendorff_alpha_interval
from holistic.ratings.exchange import export_items, import_ratings, read_rating_rows
from holistic.ratings.questions import QUESTIONS, Question, questions_for

__all__ = [
    "QUESTIONS",
    "Question",
    "export_items",
    "import_ratings",
    "krippendorff_alpha_interval",
    "questions_for",
    "read_rating_rows",
]
