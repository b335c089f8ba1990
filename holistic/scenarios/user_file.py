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
:mod:`holistic.scenarios.user_fields` for the field mapping.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import TRAIN_SPLIT, Instance
from holistic.scenarios.readers import first_bad_utf8_line, iter_numbered_jsonl, open_text, read_json
from holistic.scenarios.sources import default_data_root
from holistic.scenarios.user_dataset import UserDatasetScenario, user_dataset_info
from holistic.scenarios.user_fields import SPLIT_ALIASES, Row, build_instances

FORMATS = ("csv", "tsv", "json", "jsonl", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def infer_format(path: Path, given: str | None) -> str:
    if given is not None:
        if given not in FORMATS:
            raise ValueError(f"format {given!r} is not one of {', '.join(FORMATS)}")
        return given
    suffixes = [s for s in path.suffixes if s != ".gz"]
    fmt = _EXTENSIONS.get(suffixes[-1].lower()) if suffixes else None
    if fmt is None:
        raise ValueError(f"cannot tell the format of {path.name} from its extension; set format ({', '.join(FORMATS)})")
    return fmt


def read_rows(path: Path, fmt: str, split: str | None, limit: int | None = None) -> list[Row]:
    """Every row of a table file (the first ``limit`` when given), each with ``file:line``
    (or ``file[index]``) for errors."""
    if fmt in ("csv", "tsv"):
        with open_text(path) as fh:
            reader = csv.DictReader(fh, delimiter="\t" if fmt == "tsv" else ",")
            rows = []
            try:
                for values in itertools.islice(reader, limit):
                    if None in values:
                        raise DataSourceError(f"{path}:{reader.line_num}: more fields than the header has columns")
                    rows.append(Row(values, f"{path}:{reader.line_num}", split))
            except csv.Error as exc:
                raise DataSourceError(f"{path}:{reader.line_num}: {exc}") from None
            except UnicodeDecodeError as exc:
                line = first_bad_utf8_line(path) or reader.line_num + 1
                raise DataSourceError(f"{path}:{line}: not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
            return rows
    if fmt == "jsonl":
        numbered = itertools.islice(iter_numbered_jsonl(path), limit)
        return [Row(values, f"{path}:{number}", split) for number, values in numbered]
    if fmt == "json":
        data = read_json(path)
        if isinstance(data, Mapping):
            lists = [v for v in data.values() if isinstance(v, list)]
            if len(lists) != 1:
                raise DataSourceError(f"{path}: expected a list of objects (or an object holding exactly one list)")
            data = lists[0]
        if not isinstance(data, list) or not all(isinstance(v, Mapping) for v in data):
            raise DataSourceError(f"{path}: expected a list of objects")
        return [Row(values, f"{path}[{i}]", split) for i, values in enumerate(data[:limit])]
    import pyarrow.parquet as pq

    if limit is not None:
        batch = next(pq.ParquetFile(path).iter_batches(batch_size=max(limit, 1)), None)
        values_list = batch.to_pylist()[:limit] if batch is not None else []
    else:
        values_list = pq.read_table(path).to_pylist()
    return [Row(values, f"{path}[row {i}]", split) for i, values in enumerate(values_list)]


class FileDatasetScenario(UserDatasetScenario):
    """A user's dataset in a local file (or one file per split)."""

    plan_builds_prompts = True
    """Instances are cheap to make (no download): ``--plan`` counts real prompt tokens."""

    info = user_dataset_info(
        "file",
        "A user dataset from CSV, TSV, JSON, JSONL or Parquet with a field mapping.",
        {
            "path": {
                "type": ["string", "object"],
                "description": "The file, or a mapping split -> file (train, valid, test). A relative "
                "path is found relative to the working directory or, failing that, to the spec file.",
                "x-path": True,
            },
            "format": {"enum": list(FORMATS)},
        },
        required=("path", "fields"),
    )

    def __init__(
        self,
        path: str | Mapping[str, str],
        fields: Mapping[str, Any],
        format: str | None = None,
        labels: Any = None,
        template: str | None = None,
        splits: Mapping[str, str] | None = None,
        num_train: int = 0,
        label_format: str | None = None,
        split_map: Mapping[str, str] | None = None,
    ) -> None:
        if isinstance(path, Mapping):
            self.paths: dict[str | None, str] = {}
            for split, file in path.items():
                target = SPLIT_ALIASES.get(str(split).lower())
                if target is None:
                    raise ValueError(
                        f"path: split {split!r} is not a split name (train, dev, few_shot, valid, test...)"
                    )
                if target in self.paths:
                    raise ValueError(f"path: two files for the {target} split")
                self.paths[target] = str(file)
        elif isinstance(path, str) and path:
            self.paths = {None: path}
        else:
            raise ValueError("path must be a file path or a mapping of split names to file paths")
        self.formats = {s: infer_format(Path(p), format) for s, p in self.paths.items()}
        self._set_mapping(fields, labels, template, splits, num_train, label_format, split_map)

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

    @classmethod
    def may_have_train_pool(cls, args: Mapping[str, Any]) -> bool:
        path = args.get("path")
        files_give_train = isinstance(path, Mapping) and any(
            SPLIT_ALIASES.get(str(k).lower()) == TRAIN_SPLIT for k in path
        )
        return files_give_train or super().may_have_train_pool(args)

    @classmethod
    def preflight(cls, args: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
        """Problems found by reading the first rows of each file that can be found now
        (``(argument path, message)``): field paths that do not fit, a template that
        does not render. Files not found yet (a data mirror given at run time) are skipped."""
        scenario = cls(**args)
        problems: list[tuple[tuple[str | int, ...], str]] = []
        for split, path in scenario.paths.items():
            located = _find_now(path)
            if located is None:
                continue
            try:
                rows = read_rows(located, scenario.formats[split], split, limit=_PREFLIGHT_ROWS)
            except DataSourceError as exc:
                problems.append((("path",) if split is None else ("path", _split_key(args, split)), str(exc)))
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

    @classmethod
    def estimate_num_instances(cls, args: Mapping[str, Any]) -> int | None:
        """Evaluation rows (valid and test) in the files, when they can be read now."""
        sample = _sample(cls, args)
        return sample.eval_rows if sample is not None else None

    @classmethod
    def estimate_num_references(cls, args: Mapping[str, Any]) -> int | None:
        sample = _sample(cls, args)
        return sample.references if sample is not None else None

    @classmethod
    def estimate_input_chars(cls, args: Mapping[str, Any]) -> int | None:
        sample = _sample(cls, args)
        return sample.input_chars if sample is not None else None

    @classmethod
    def estimate_choice_chars(cls, args: Mapping[str, Any]) -> int | None:
        sample = _sample(cls, args)
        return sample.choice_chars if sample is not None else None

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        rows: list[Row] = []
        digests: list[str] = []
        for split, path in self.paths.items():
            located = self.locate(path, ctx)
            digests.append(f"{split}={hashlib.sha256(located.read_bytes()).hexdigest()}")
            rows.extend(read_rows(located, self.formats[split], split))
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


def _split_key(args: Mapping[str, Any], split: str) -> str:
    paths = args.get("path")
    if isinstance(paths, Mapping):
        for key in paths:
            if SPLIT_ALIASES.get(str(key).lower()) == split:
                return str(key)
    return split


@dataclass(frozen=True)
class _Sample:
    eval_rows: int
    references: int | None
    input_chars: int | None
    choice_chars: int | None = None


_SAMPLES: dict[str, _Sample | None] = {}


def _sample(cls: type[FileDatasetScenario], args: Mapping[str, Any]) -> _Sample | None:
    """Counts from reading the files (once per argument set): eval rows, mean choices, mean input length."""
    from holistic.core.hashing import canonical_json

    key = canonical_json(dict(args))
    if key not in _SAMPLES:
        _SAMPLES[key] = _read_sample(cls, args)
    return _SAMPLES[key]


def _read_sample(cls: type[FileDatasetScenario], args: Mapping[str, Any]) -> _Sample | None:
    try:
        scenario = cls(**args)
        rows: list[Row] = []
        for split, path in scenario.paths.items():
            located = _find_now(path)
            if located is None:
                return None
            rows.extend(read_rows(located, scenario.formats[split], split))
        instances = build_instances(rows, scenario.mapping, "estimate")
    except (DataSourceError, ValueError, TypeError, OSError):
        return None
    evaluation = [i for i in instances if i.split != TRAIN_SPLIT]
    if not evaluation:
        return _Sample(0, None, None)
    refs = [r.output for i in evaluation for r in i.references]
    return _Sample(
        eval_rows=len(evaluation),
        references=round(len(refs) / len(evaluation)) or None,
        input_chars=round(sum(len(i.input) for i in evaluation) / len(evaluation)),
        choice_chars=round(sum(map(len, refs)) / len(refs)) if refs else None,
    )
