"""The ``file`` scenario: any CSV/TSV/JSON/JSONL/Parquet dataset, from YAML alone.

```yaml
runs:
  - scenario: file
    args:
      path: data/reviews.csv            # or {train: a.csv, test: b.csv}
      fields: {input: text, label: sentiment, id: review_id}
      labels: {"0": negative, "1": positive}
```

Paths are read as given when absolute; a relative path is looked up under the
data mirror (``--data-root``) first, then the working directory. The format comes
from the extension unless ``format`` says otherwise. See
:mod:`holistic.scenarios.loading.user_fields` for the field mapping.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg, argument_fields
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import TRAIN_SPLIT, Instance
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.sources import default_data_root
from holistic.scenarios.loading.user_dataset import UserDatasetScenario, user_dataset_info
from holistic.scenarios.loading.user_fields import SPLIT_ALIASES, build_instances
from holistic.scenarios.loading.user_shaping import JOIN_SCHEMA, Join, join_rows, parse_joins
from holistic.scenarios.loading.user_tables import FORMATS, Row, infer_format, iter_table, read_rows


@dataclass(frozen=True, kw_only=True)
class FileDatasetScenario(UserDatasetScenario):
    """A user's dataset in a local file (or one file per split)."""

    info = user_dataset_info("file", "A user dataset from CSV, TSV, JSON, JSONL or Parquet with a field mapping.")

    path: str | Mapping[str, str] = arg(
        schema={
            "type": ["string", "object"],
            "description": "The file, or a mapping split -> file (train, valid, test). A relative "
            "path is found relative to the working directory or, failing that, to the spec file.",
            "x-path": True,
        }
    )
    format: str | None = arg(None, enum=FORMATS)
    join: Any = arg(None, schema=JOIN_SCHEMA)
    paths: dict[str | None, str] = field(init=False, repr=False, compare=False)
    """The file of each split (``None``: one file whose rows say their split)."""
    formats: dict[str | None, str] = field(init=False, repr=False, compare=False)
    joins: tuple[Join, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        paths: dict[str | None, str] = {}
        if isinstance(self.path, Mapping):
            for split, file in self.path.items():
                target = SPLIT_ALIASES.get(str(split).lower())
                if target is None:
                    raise ValueError(
                        f"path: split {split!r} is not a split name (train, dev, few_shot, valid, test...)"
                    )
                if target in paths:
                    raise ValueError(f"path: two files for the {target} split")
                paths[target] = str(file)
        elif isinstance(self.path, str) and self.path:
            paths = {None: self.path}
        else:
            raise ValueError("path must be a file path or a mapping of split names to file paths")
        object.__setattr__(self, "paths", paths)
        object.__setattr__(self, "formats", {s: infer_format(Path(p), self.format) for s, p in paths.items()})
        joins = parse_joins(self.join, lambda name: SPLIT_ALIASES.get(name.lower()))
        object.__setattr__(self, "joins", joins)
        for i, entry in enumerate(joins):
            for part in paths:
                if entry.file_for(part) is None:
                    raise ValueError(f"join[{i}].path: no file for the {part} split (give one per file of path)")

    def joins_found(self, split: str | None, find: Callable[[str], Path | None]) -> bool:
        """Whether every file joined to the rows of ``split`` can be found by ``find``."""
        return all(find(name) is not None for entry in self.joins if (name := entry.file_for(split)) is not None)

    def read_split(
        self, split: str | None, located: Path, find: Callable[[str], Path | None], limit: int | None = None
    ) -> list[Row]:
        """The rows of one file of ``path``, with every join and computed column added.

        ``find`` locates a joined file. ``limit`` reads only the first rows (``--plan``).
        """
        rows = read_rows(located, self.formats[split], split, limit=limit)
        for entry in self.joins:
            name = entry.file_for(split)
            assert name is not None  # checked in __init__
            other = find(name)
            if other is None:
                raise DataSourceError(f"join: file {name!r} not found")
            by_key = entry.key != "line"
            right = iter_table(other, entry.format, limit=None if by_key else limit)
            rows = join_rows(rows, entry, right, str(other), complete=limit is None)
        return self.shape(rows, located)

    def locate(self, path: str, ctx: ScenarioContext) -> Path:
        candidate = Path(path).expanduser()
        if candidate.is_absolute():
            tried = [candidate]
        else:
            root = ctx.data_root if ctx.data_root is not None else default_data_root()
            tried = ([Path(root) / candidate] if root is not None else []) + [Path.cwd() / candidate]
        for place in tried:
            if place.is_file():
                return place
            if place.exists():
                kind = "a folder" if place.is_dir() else "a named pipe (FIFO)" if place.is_fifo() else "a device"
                raise DataSourceError(
                    f"dataset path {place} is {kind}, not a regular file; give a CSV, TSV, JSON, JSONL or Parquet file"
                )
        raise DataSourceError(f"dataset file {path!r} not found; looked in: " + ", ".join(str(p) for p in tried))

    def may_have_train_pool(self) -> bool:
        return TRAIN_SPLIT in self.paths or super().may_have_train_pool()

    def preflight(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Problems found by reading the first rows of each file that can be found now
        (``(argument path, message)``): field paths that do not fit, a template that
        does not render. Files not found yet (a data mirror given at run time) are skipped."""
        scenario = self
        problems: list[tuple[tuple[str | int, ...], str]] = []
        for split, path in scenario.paths.items():
            located = _find_now(path)
            if located is None or not scenario.joins_found(split, _find_now):
                continue
            try:
                rows = scenario.read_split(split, located, _find_now, limit=_PREFLIGHT_ROWS)
            except DataSourceError as exc:
                problems.append((("path",) if split is None else ("path", _split_key(self.path, split)), str(exc)))
                continue
            for row in rows:
                for key, _, message in scenario.mapping.check(row.values):
                    where: tuple[str | int, ...] = ("fields", *(int(k) if k.isdigit() else k for k in key.split(".")))
                    problems.append((where, f"{row.where}: {message}"))
                if problems:
                    return problems
            if rows:
                try:
                    build_instances(rows, replace(scenario.mapping, num_train=0), "preflight")
                except DataSourceError as exc:
                    at = "template" if scenario.mapping.template is not None and "template" in str(exc) else "fields"
                    problems.append(((at,), str(exc)))
                    return problems
        return problems

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        """Its prompts are built (the rows are the user's), and its sizes counted from the files
        when they can be read now."""
        return _sample(self)

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        rows: list[Row] = []
        digests: list[str] = []
        for split, path in self.paths.items():
            located = self.locate(path, ctx)
            with located.open("rb") as fh:  # streamed: never the whole file in memory for its digest
                digests.append(f"{split}={hashlib.file_digest(fh, 'sha256').hexdigest()}")
            rows.extend(self.read_split(split, located, lambda name: self.locate(name, ctx)))
        # The pool is seeded by the files' contents, not their paths: the same data gives
        # the same split wherever it is stored and whichever folder helm-run starts in.
        return build_instances(
            rows, self.mapping, "file:" + ",".join(sorted(self.paths.values())), seed_key="file:" + ",".join(digests)
        )


_PREFLIGHT_ROWS = 5


def _find_now(path: str) -> Path | None:
    """Where ``path`` is without a run context: as given, or under ``$HOLISTIC_DATA_ROOT``."""
    candidate = Path(path).expanduser()
    places = [candidate]
    root = os.environ.get("HOLISTIC_DATA_ROOT")
    if root and not candidate.is_absolute():
        places.insert(0, Path(root) / candidate)
    return next((p for p in places if p.is_file()), None)


def _split_key(paths: str | Mapping[str, str], split: str) -> str:
    if isinstance(paths, Mapping):
        for key in paths:
            if SPLIT_ALIASES.get(str(key).lower()) == split:
                return str(key)
    return split


_SAMPLES: dict[str, PlanFacts] = {}


def _sample(scenario: FileDatasetScenario) -> PlanFacts:
    """Counts from reading the files (once per argument set): eval rows, mean choices, mean input length."""
    from holistic.core.hashing import canonical_json

    key = canonical_json({f.name: getattr(scenario, f.name) for f in argument_fields(type(scenario))})
    if key not in _SAMPLES:
        _SAMPLES[key] = _read_sample(scenario)
    return _SAMPLES[key]


def _read_sample(scenario: FileDatasetScenario) -> PlanFacts:
    try:
        rows: list[Row] = []
        for split, path in scenario.paths.items():
            located = _find_now(path)
            if located is None:
                return PlanFacts(builds_prompts=True)
            rows.extend(scenario.read_split(split, located, _find_now))
        instances = build_instances(rows, scenario.mapping, "estimate")
    except (DataSourceError, ValueError, TypeError, OSError):
        return PlanFacts(builds_prompts=True)
    evaluation = [i for i in instances if i.split != TRAIN_SPLIT]
    if not evaluation:
        return PlanFacts(num_instances=0, builds_prompts=True)
    refs = [r.output for i in evaluation for r in i.references]
    return PlanFacts(
        num_instances=len(evaluation),
        num_references=round(len(refs) / len(evaluation)) or None,
        input_chars=round(sum(len(i.input) for i in evaluation) / len(evaluation)),
        choice_chars=round(sum(map(len, refs)) / len(refs)) if refs else None,
        builds_prompts=True,
    )
