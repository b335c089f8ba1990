"""The ratings file: export the items to rate, import what raters filled in.

Columns (CSV with a header, or JSON Lines with these keys), in order:

==========================  ==================================================================
``item_id``                 ``<run_id>/<instance_id>/<trial>/<completion_index>``: one generation
``run_id``, ``model``       the run and model that produced it
``capability``, ``topic``   ``reiteration`` or ``wedging``; the narrative topic (reiteration);
                            ``judge:<stat>`` for a judged run's generation
``instance_id``, ``trial``  the prompt's instance and trial
``completion_index``        which of the samples (0-4 with HELM's five)
``prompt``                  the thesis (reiteration) or the message to continue (wedging)
``completion``              the generated text to rate
``rater``                   filled in by the rater: any identifier, the same for all their rows
one column per question     see :mod:`holistic.ratings.questions`; blank = not rated
==========================  ==================================================================

Judged runs (any scenario whose run names ``judges:``) are rated too: their question is
the judges' statistic (e.g. ``safety_score``), on the judges' scale (the verdict rule's
``values`` or ``minimum``/``maximum``), so a human rating and a judge's score of the same
generation can be compared (``helm-summarize`` reports their agreement).

Only ``item_id``, ``rater`` and the question columns are read back; the others are
there for the raters (and may be left out). Several raters rate the same items in
their own copies (or the same file, one row per item and rater); import all the
files together. Every row is checked: the item must belong to the suite, the rater
must be named, a value must be a number within its question's range and the
question must be one of the item's capability; the same item and rater twice is an
error. Each error names the file, the line and the field.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from holistic.core.errors import HolisticError, did_you_mean
from holistic.core.jsonl import numbered_json_objects
from holistic.core.types import RequestRole
from holistic.ratings.questions import BY_NAME, QUESTIONS, Question
from holistic.results import atomic
from holistic.results.layout import PER_INSTANCE_RATINGS_FILE, RATINGS_DIR, RATINGS_FILE
from holistic.results.reader import SuiteReader
from holistic.results.schemas import INSTANCES_TABLE, PER_INSTANCE_RATINGS, RATINGS, REQUESTS_TABLE

DESCRIPTIVE = (
    "item_id",
    "run_id",
    "model",
    "capability",
    "topic",
    "instance_id",
    "trial",
    "completion_index",
    "prompt",
    "completion",
    "rater",
)
COLUMNS: tuple[str, ...] = (*DESCRIPTIVE, *(q.name for q in QUESTIONS))
"""The columns of a suite without judged runs (those add their judges' statistics)."""
FORMATS = (".csv", ".jsonl")
RATED_TAG = "disinformation"


class RatingsError(HolisticError):
    """A ratings file cannot be written or read back."""

    exit_code = 2


@dataclass(frozen=True)
class Item:
    """One generation to rate."""

    item_id: str
    run_id: str
    model: str
    scenario: str
    capability: str
    topic: str
    instance_id: str
    trial: int
    completion_index: int
    split: str
    sub_split: str | None
    prompt: str
    completion: str


@dataclass(frozen=True)
class Rating:
    """One rater's answer to one question about one item."""

    item: Item
    rater: str
    question: str
    """Name of the question (a key of the questions the ratings are checked against)."""
    value: float
    """The answer on the question's scale."""
    source: str
    """``file:line`` the rating came from."""


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise RatingsError(f"{path}: a ratings file ends in .csv or .jsonl, not {suffix or '(no extension)'!r}")
    return suffix


JUDGED_PREFIX = "judge:"
"""Capability of a judged run's items: ``judge:<stat>``."""


def _scale(rule: Any) -> tuple[float, float]:
    """The range of scores a verdict rule can give (its values, else its bounds, else unbounded)."""
    rule = rule if isinstance(rule, dict) else {}
    values = [float(v) for v in (rule.get("values") or {}).values()]
    if values:
        return min(values), max(values)
    low, high = rule.get("minimum"), rule.get("maximum")
    return (-math.inf if low is None else float(low)), (math.inf if high is None else float(high))


def judged_questions(specs: Sequence[dict[str, Any]]) -> dict[str, Question]:
    """One question per judges' statistic of the judged runs: rate the generation on the judges' scale."""
    found: dict[str, Question] = {}
    for spec in specs:
        for judge in spec.get("judges") or []:
            stat = str(judge.get("stat", "judge_score"))
            low, high = _scale(judge.get("rule"))
            known = found.get(stat)
            if known is not None:
                low, high = min(low, known.low), max(high, known.high)
            scale = "" if math.isinf(low) and math.isinf(high) else f" ({low:g} to {high:g})"
            found[stat] = Question(
                stat, f"{JUDGED_PREFIX}{stat}", low, high, f"The score a judge would give (statistic {stat}){scale}."
            )
    return found


def suite_questions(reader: SuiteReader) -> dict[str, Question]:
    """Every question of the suite: the disinformation questions and its judged runs' statistics."""
    return {**BY_NAME, **judged_questions([run.spec for run in reader.runs])}


def _capabilities(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """``(capability, topic)`` of a run's items: none when its generations are not rated."""
    if spec.get("judges"):
        stats = dict.fromkeys(str(j.get("stat", "judge_score")) for j in spec["judges"])
        return [(f"{JUDGED_PREFIX}{stat}", "") for stat in stats]
    tags = (spec.get("scenario_info") or {}).get("tags") or []
    if RATED_TAG not in tags:
        return []
    args = (spec.get("scenario") or {}).get("args") or {}
    capability = str(args.get("capability", "reiteration"))
    return [(capability, str(args.get("topic", "covid")) if capability == "reiteration" else "")]


def suite_items(reader: SuiteReader) -> list[Item]:
    """Every successful generation of the suite's disinformation and judged runs, in run and request order."""
    items: list[Item] = []
    for run in reader.runs:
        spec = run.spec
        rated = _capabilities(spec)
        if not rated:
            continue
        if len(rated) > 1:
            raise RatingsError(
                f"run {run.run_id}: its judges write {len(rated)} statistics; human ratings compare with one "
                "(give its judges one stat)"
            )
        ((capability, topic),) = rated
        scenario = spec.get("scenario") or {}
        instances = run.table(
            INSTANCES_TABLE, ["instance_id", "split", "sub_split", "perturbation", "input"]
        ).to_pylist()
        facts = {(r["instance_id"]): r for r in instances if r.get("perturbation") is None}
        requests = run.table(
            REQUESTS_TABLE, ["instance_id", "trial", "role", "perturbation", "success", "completions"]
        ).to_pylist()
        for request in requests:
            if request["role"] != RequestRole.MAIN or not request["success"] or request.get("perturbation") is not None:
                continue
            inst = facts.get(request["instance_id"])
            if inst is None:
                continue
            for index, completion in enumerate(request["completions"] or []):
                items.append(
                    Item(
                        item_id=f"{run.run_id}/{request['instance_id']}/{request['trial']}/{index}",
                        run_id=run.run_id,
                        model=str(spec.get("model", "")),
                        scenario=str(scenario.get("name", "")),
                        capability=capability,
                        topic=topic,
                        instance_id=request["instance_id"],
                        trial=int(request["trial"]),
                        completion_index=index,
                        split=inst["split"],
                        sub_split=inst.get("sub_split"),
                        prompt=inst["input"],
                        completion=completion["text"],
                    )
                )
    return items


def export_items(reader: SuiteReader, path: Path) -> int:
    """Write the items of ``reader``'s suite to rate into ``path`` (``.csv`` or ``.jsonl``); returns their number."""
    kind = _format(path)
    items = suite_items(reader)
    if not items:
        raise RatingsError(
            f"suite {reader.suite!r} has no generations to rate (no completed disinformation or judged run)"
        )
    questions = suite_questions(reader)
    columns = [*DESCRIPTIVE, *questions]
    rows = []
    for item in items:
        row: dict[str, Any] = {
            "item_id": item.item_id,
            "run_id": item.run_id,
            "model": item.model,
            "capability": item.capability,
            "topic": item.topic,
            "instance_id": item.instance_id,
            "trial": item.trial,
            "completion_index": item.completion_index,
            "prompt": item.prompt,
            "completion": item.completion,
            "rater": "",
        }
        row.update({name: "" for name in questions})
        rows.append(row)
    if kind == ".csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
    else:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, text)
    return len(rows)


def _check_columns(names: Sequence[str], where: str, columns: Sequence[str]) -> None:
    for name in names:
        if name not in columns:
            near = did_you_mean(name, columns)
            hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            raise RatingsError(f"{where}: unknown column {name!r}{hint}")
    for required in ("item_id", "rater"):
        if required not in names:
            raise RatingsError(f"{where}: missing column {required!r}")


def read_rating_rows(path: Path, columns: Sequence[str] = COLUMNS) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) of a ratings file, its columns checked against ``columns``."""
    kind = _format(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            if kind == ".csv":
                reader = csv.DictReader(fh)
                _check_columns(list(reader.fieldnames or []), f"{path}:1", columns)
                for row in reader:
                    if None in row:
                        raise RatingsError(f"{path}:{reader.line_num}: more fields than the header")
                    yield reader.line_num, dict(row)
            else:
                for number, value in numbered_json_objects(fh, path, RatingsError):
                    _check_columns(list(value), f"{path}:{number}", columns)
                    yield number, value
    except UnicodeDecodeError as exc:
        raise RatingsError(f"{path}: not UTF-8 text: {exc}") from None
    except csv.Error as exc:
        raise RatingsError(f"{path}: cannot read as CSV: {exc}") from None
    except OSError as exc:
        raise RatingsError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _number(value: Any, where: str, name: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise RatingsError(f"{where}: field {name!r}: {value!r} is not a number")
    if isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            raise RatingsError(f"{where}: field {name!r}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise RatingsError(f"{where}: field {name!r}: {value!r} is not a finite number")
    return number


def parse_ratings(
    items: Sequence[Item], paths: Sequence[Path], suite: str, questions: dict[str, Question] | None = None
) -> list[Rating]:
    """Every rating in ``paths``, checked against the suite's ``items`` and ``questions``
    (default: the disinformation questions)."""
    questions = BY_NAME if questions is None else questions
    by_id = {item.item_id: item for item in items}
    seen: dict[tuple[str, str], str] = {}
    out: list[Rating] = []
    columns = [*DESCRIPTIVE, *questions]
    for path in paths:
        for number, row in read_rating_rows(path, columns):
            where = f"{path}:{number}"
            values = {name: _number(row.get(name), where, name) for name in questions if name in row}
            rated = {k: v for k, v in values.items() if v is not None}
            rater = str(row.get("rater") or "").strip()
            if not rated:
                continue  # a row nobody rated yet
            if not rater:
                raise RatingsError(f"{where}: field 'rater' is empty but the row has ratings")
            item_id = str(row.get("item_id") or "").strip()
            item = by_id.get(item_id)
            if item is None:
                raise RatingsError(
                    f"{where}: field 'item_id': {item_id!r} is not a generation of suite {suite!r} "
                    "(export the items from this suite with helm-ratings export)"
                )
            key = (item_id, rater)
            if key in seen:
                raise RatingsError(f"{where}: rater {rater!r} already rated item {item_id!r} at {seen[key]}")
            seen[key] = where
            for name, value in rated.items():
                question = questions[name]
                if question.capability != item.capability:
                    valid = ", ".join(q.name for q in questions.values() if q.capability == item.capability)
                    raise RatingsError(
                        f"{where}: field {name!r} is a {question.capability} question; item {item_id!r} is "
                        f"{item.capability} (its questions: {valid})"
                    )
                if not question.low <= value <= question.high:
                    raise RatingsError(
                        f"{where}: field {name!r}: {value:g} is outside {question.low:g}-{question.high:g}"
                    )
                out.append(Rating(item, rater, name, value, where))
    return out


RATINGS_SCHEMA = pa.schema([c.field() for c in RATINGS])
PER_INSTANCE_SCHEMA = pa.schema([c.field() for c in PER_INSTANCE_RATINGS])


def import_ratings(reader: SuiteReader, paths: Sequence[Path]) -> tuple[int, int]:
    """Check and store the ratings in ``paths`` (replacing any imported before);
    returns (ratings, rated instances)."""
    ratings = parse_ratings(suite_items(reader), paths, reader.suite, suite_questions(reader))
    if not ratings:
        raise RatingsError(f"{', '.join(str(p) for p in paths)}: no ratings filled in")
    raw = pa.Table.from_pylist(
        [
            {
                "item_id": r.item.item_id,
                "run_id": r.item.run_id,
                "model": r.item.model,
                "scenario": r.item.scenario,
                "instance_id": r.item.instance_id,
                "trial": r.item.trial,
                "completion_index": r.item.completion_index,
                "rater": r.rater,
                "metric": r.question,
                "value": r.value,
                "source": r.source,
            }
            for r in ratings
        ],
        schema=RATINGS_SCHEMA,
    )
    groups: dict[tuple[str, str, int, str], list[Rating]] = {}
    for r in ratings:
        groups.setdefault((r.item.run_id, r.item.instance_id, r.item.trial, r.question), []).append(r)
    per_instance = pa.Table.from_pylist(
        [
            {
                "run_id": run_id,
                "model": members[0].item.model,
                "scenario": members[0].item.scenario,
                "instance_id": instance_id,
                "trial": trial,
                "metric": metric,
                "split": members[0].item.split,
                "sub_split": members[0].item.sub_split,
                "perturbation": None,
                "value": sum(m.value for m in members) / len(members),
                "count": len(members),
            }
            for (run_id, instance_id, trial, metric), members in sorted(groups.items())
        ],
        schema=PER_INSTANCE_SCHEMA,
    )
    folder = reader.suite_dir / RATINGS_DIR
    folder.mkdir(exist_ok=True)
    atomic.write_parquet(folder / RATINGS_FILE, raw)
    atomic.write_parquet(folder / PER_INSTANCE_RATINGS_FILE, per_instance)
    return len(ratings), len({(k[0], k[1], k[2]) for k in groups})
