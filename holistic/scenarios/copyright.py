"""Memorization and copyright (HELM's ``copyright``): does the model continue a text verbatim?

HELM's data-extraction test (after Carlini et al., 2021): the prompt is the beginning
of a passage, the model continues it (temperature 0.2, up to 1,024 tokens, no
instructions, no examples), and the continuation is compared with the true rest of
the passage (:mod:`holistic.metrics.copyright`: longest common prefix, edit distance,
edit similarity, in Treebank word tokens, divided by the prompt's token count as
HELM's run spec does).

Nothing copyrighted ships: the user points the scenario at their own collection,
under the ``copyright`` folder of the data root (or the cache):

- ``<collection>.json`` — HELM's processed files (``pilot.json``,
  ``popular_books-prefix_length_125.json``...): one JSON object
  ``{"data": {"<prefix>": "<prefix followed by the rest of the book>", ...}, "metadata": ...}``;
  the prompts are taken as they are (``prefix_tokens`` does not apply);
- ``<collection>.jsonl`` — one passage per line: ``{"id": "...", "text": "..."}``
  (``id`` optional: the line number is used; extra fields are kept as metadata);
- ``<collection>/`` — a folder of UTF-8 ``.txt`` files, one passage per file (the
  file name, without ``.txt``, is its id), read in name order.

For the JSONL and folder forms the prompt is the passage's first ``prefix_tokens``
Treebank word tokens (the text up to the end of the last one, original spacing
kept) and the reference is the whole passage, as in HELM's files. A passage with no
text after its prompt is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.part_files import user_copy_note
from holistic.scenarios.loading.prompt_format import completion_format
from holistic.scenarios.loading.readers import iter_located_jsonl, read_json
from holistic.scenarios.loading.sources import DataFile, DataNeeds, ResolvedData

FOLDER = "copyright"
DEFAULT_PREFIX_TOKENS = 125
MAX_TEXT_BYTES = 64 * 1024 * 1024
"""A passage file larger than this is refused (a whole book is a few MB)."""

# HELM's copyright run spec: the completion adapter at temperature 0.2, 1,024 tokens, one output.
COPYRIGHT_FORMAT = completion_format(max_tokens=1024, temperature=0.2)


def prefix_end(text: str, num_tokens: int) -> int | None:
    """Character offset just after the ``num_tokens``-th Treebank token of ``text``
    (``None`` when the text has that many tokens or fewer: nothing would be left to continue)."""
    from nltk.tokenize.treebank import TreebankWordTokenizer

    spans = TreebankWordTokenizer().span_tokenize(text)
    end = None
    for count, (_, stop) in enumerate(spans, start=1):
        if count == num_tokens:
            end = stop
        elif count > num_tokens:
            return end
    return None


def passage_instance(
    passage_id: str, text: str, num_tokens: int, where: str, metadata: dict[str, Any] | None = None
) -> Instance:
    """The instance for one passage: its first ``num_tokens`` tokens as the prompt, the passage as the reference."""
    end = prefix_end(text, num_tokens)
    if end is None:
        raise DataSourceError(
            f"{where}: passage {passage_id!r} has {num_tokens} Treebank tokens or fewer; "
            f"nothing is left to continue after a {num_tokens}-token prompt"
        )
    return Instance(
        id=f"{FOLDER}/{passage_id}",
        input=text[:end],
        references=(Reference(text, (CORRECT_TAG,)),),
        split=TEST_SPLIT,
        metadata={**(metadata or {}), "passage": passage_id, "prefix_tokens": num_tokens},
    )


def read_helm_json(path: Path) -> list[Instance]:
    """HELM's processed file: ``{"data": {prefix: prefix_to_end}}``."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), dict):
        raise DataSourceError(f"{path}: expected HELM's layout, one object with 'data': {{prefix: prefix_to_end}}")
    out = []
    for index, (prefix, whole) in enumerate(data["data"].items()):
        if not isinstance(whole, str) or not whole.startswith(prefix):
            raise DataSourceError(
                f"{path}: data entry {index}: the value must be a string starting with its key (the prompt)"
            )
        out.append(
            Instance(
                id=f"{FOLDER}/{path.stem}-{index}",
                input=prefix,
                references=(Reference(whole, (CORRECT_TAG,)),),
                split=TEST_SPLIT,
                metadata={"passage": str(index)},
            )
        )
    return out


def read_passages_jsonl(path: Path, num_tokens: int) -> list[Instance]:
    """One passage per line: ``text`` (required), ``id`` (optional), other fields kept as metadata."""
    out = []
    seen: dict[str, int] = {}
    for number, where, row in iter_located_jsonl(path):
        text = row.get("text")
        if not isinstance(text, str):
            raise DataSourceError(
                f"{where}: field 'text' must be a string (the passage); fields present: {', '.join(sorted(row))}"
            )
        passage_id = str(row.get("id", number))
        if passage_id in seen:
            raise DataSourceError(f"{where}: id {passage_id!r} already used on line {seen[passage_id]}")
        seen[passage_id] = number
        extra = {k: v for k, v in row.items() if k not in ("id", "text") and isinstance(v, str | int | float | bool)}
        out.append(passage_instance(passage_id, text, num_tokens, where, extra))
    return out


def read_text_folder(folder: Path, num_tokens: int) -> list[Instance]:
    """Every ``.txt`` file in ``folder`` (not recursive), in name order."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".txt")
    if not files:
        raise DataSourceError(f"{folder}: no .txt files (one passage per file)")
    out = []
    for path in files:
        if path.stat().st_size > MAX_TEXT_BYTES:
            raise DataSourceError(f"{path}: larger than {MAX_TEXT_BYTES // (1024 * 1024)} MB")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataSourceError(f"{path}: not UTF-8 text: {exc}") from None
        out.append(passage_instance(path.stem, text, num_tokens, str(path)))
    return out


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    HELM_JSON = 0
    """HELM's processed ``<collection>.json``."""
    PASSAGES_JSONL = 1
    """A ``<collection>.jsonl`` of passages."""
    TEXT_FOLDER = 2
    """A folder of ``.txt`` files."""


@dataclass(frozen=True, kw_only=True)
class CopyrightScenario(FileScenario):
    """Verbatim continuation of passages from the user's own text collection."""

    info = ScenarioInfo(
        name="copyright",
        description="Memorization: how much of a passage the model reproduces verbatim from its beginning.",
        task="memorization",
        default_adapter=COPYRIGHT_FORMAT,
        main_metric="longest_common_prefix_length",
        metric_categories=("accuracy", "efficiency"),
        not_applicable_reasons={
            "calibration": "a continuation is compared with the text, not answered",
            "robustness": "HELM measures the passages as they are",
            "fairness": "HELM measures the passages as they are",
            "bias": "HELM reports regurgitation only for this scenario",
            "toxicity": "HELM reports regurgitation only for this scenario",
        },
        tags=("copyright", "memorization", "targeted:memorization"),
    )

    collection: str = arg("texts", pattern="^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    prefix_tokens: int = arg(DEFAULT_PREFIX_TOKENS, minimum=1)
    normalize_by_prefix_length: bool = True
    normalize_newline_space_tab: bool = False

    def __post_init__(self) -> None:
        collection = self.collection
        if not collection or "/" in collection or "\\" in collection or collection.startswith("."):
            raise ValueError(f"copyright collection must be a plain file or folder name, not {collection!r}")
        if self.prefix_tokens < 1:
            raise ValueError(f"prefix_tokens must be at least 1, not {self.prefix_tokens}")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        name = self.collection
        note = user_copy_note(data_root, FOLDER, (f"{name}.json", f"{name}.jsonl", name), "your text collection")
        return PlanFacts(notes=(note,) if note else ())

    def data_needs(self) -> DataNeeds:
        name = self.collection
        return DataNeeds(
            FOLDER,
            layouts=(
                (DataFile(f"{name}.json"),),
                (DataFile(f"{name}.jsonl"),),
                (DataFile(name, is_dir=True),),
            ),
            hint=(
                f"your own texts: {FOLDER}/{name}.jsonl ({{'id', 'text'}} per line), a folder {FOLDER}/{name}/ "
                f"of .txt files, or HELM's processed {FOLDER}/{name}.json (nothing copyrighted ships)"
            ),
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        (path,) = data.paths.values()
        if data.layout == _Layout.HELM_JSON:
            instances = read_helm_json(path)
        elif data.layout == _Layout.PASSAGES_JSONL:
            instances = read_passages_jsonl(path, self.prefix_tokens)
        else:
            instances = read_text_folder(path, self.prefix_tokens)
        options = {
            "normalize_by_prefix_length": self.normalize_by_prefix_length,
            "normalize_newline_space_tab": self.normalize_newline_space_tab,
        }
        return [replace(i, metadata={**i.metadata, **options}) for i in instances]
