"""``financial_phrasebank``: 3-class sentiment of financial news sentences (Malo et al., 2014).

The short-context baseline of the haystack's sentiment concept: can the model tell
the sentiment of one sentence before it has to find sentiment-bearing articles in a
long context?

Files as the authors ship them (Financial PhraseBank v1.0): Latin-1 text, one
``sentence@label`` per line, label ``positive``, ``negative`` or ``neutral``; one
file per annotator agreement level (``agreement`` arg): ``Sentences_AllAgree.txt``
(``all``), ``Sentences_75Agree.txt`` (``75``), ``Sentences_66Agree.txt`` (``66``),
``Sentences_50Agree.txt`` (``50``). There is no official split: a seeded, fixed set of
:data:`TRAIN_POOL` sentences becomes the in-context example pool, the rest is test.
The data are CC BY-NC-SA 3.0 and not downloaded automatically: put the files under
``<data root>/financial_phrasebank/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import FileScenario, check_choice, with_train_pool
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.sources import DataFile, DataNeeds, ResolvedData

LABELS: tuple[str, ...] = ("negative", "neutral", "positive")
FILES: dict[str, str] = {
    "all": "Sentences_AllAgree.txt",
    "75": "Sentences_75Agree.txt",
    "66": "Sentences_66Agree.txt",
    "50": "Sentences_50Agree.txt",
}
TRAIN_POOL = 60
_HINT = "Financial PhraseBank v1.0 (Malo et al., 2014), FinancialPhraseBank-v1.0.zip from the authors"


def read_phrasebank(path: Path, prefix: str) -> list[Instance]:
    """Every ``sentence@label`` line of ``path`` as a test instance (ids carry the line number)."""
    out = []
    with path.open("r", encoding="latin-1", newline="") as fh:
        for number, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            sentence, sep, label = line.rpartition("@")
            label = label.strip().lower()
            if not sep or not sentence.strip():
                raise DataSourceError(f"{path}:{number}: expected 'sentence@label', got {line[:60]!r}")
            if label not in LABELS:
                raise DataSourceError(f"{path}:{number}: label {label!r} is not one of {', '.join(LABELS)}")
            out.append(
                Instance(
                    id=f"{prefix}-{number:05d}",
                    input=sentence.strip(),
                    references=tuple(Reference(name, (CORRECT_TAG,) if name == label else ()) for name in LABELS),
                    split=TEST_SPLIT,
                    metadata={"label": label, "line": number},
                )
            )
    if not out:
        raise DataSourceError(f"{path}: no sentences")
    return out


@dataclass(frozen=True, kw_only=True)
class FinancialPhraseBankScenario(FileScenario):
    """Positive, negative or neutral: sentiment of a financial news sentence for an investor."""

    info = ScenarioInfo(
        name="financial_phrasebank",
        description="Financial PhraseBank: 3-class investor sentiment of financial news sentences.",
        task="classification",
        default_adapter=prompt_format(
            instructions=(
                "Classify the sentiment of the financial news sentence for an investor as positive, negative or neutral."
            ),
            input_prefix="Sentence: ",
            output_prefix="Sentiment: ",
            max_tokens=3,
        ),
        main_metric="quasi_exact_match",
        **CLASSIFICATION,
        tags=("sentiment_analysis", "classification", "finance"),
    )

    agreement: str = arg("all", enum=tuple(FILES))

    def __post_init__(self) -> None:
        object.__setattr__(self, "agreement", check_choice(str(self.agreement), tuple(FILES), "agreement"))

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        sizes = {"all": 2264, "75": 3453, "66": 4217, "50": 4846}
        return PlanFacts(num_instances=sizes[self.agreement] - TRAIN_POOL)

    def data_needs(self) -> DataNeeds:
        name = FILES[self.agreement]
        return DataNeeds(
            "financial_phrasebank",
            layouts=((DataFile(name),), (DataFile(f"FinancialPhraseBank-v1.0/{name}"),)),
            hint=_HINT,
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        path = next(iter(data.paths.values()))
        instances = read_phrasebank(path, f"fpb{self.agreement}")
        return with_train_pool(instances, TRAIN_POOL, f"financial_phrasebank-{self.agreement}-train")
