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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance
from holistic.scenarios.readers import iter_numbered_jsonl, open_text, read_json
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import default_data_root
from holistic.scenarios.user_dataset import UserDatasetScenario, user_dataset_info
from holistic.scenarios.user_fields import SPLIT_ALIASES, Row, build_instances

FORMATS = ("csv", "tsv", "json", "jsonl", "parquet")
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".json": "json", ".jsonl": "jsonl",
               ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}

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


def read_rows(path: Path, fmt: str, split: str | None) -> list[Row]:
    """Every row of a table file, each with ``file:line`` (or ``file[index]``) for errors."""
    if fmt in ("csv", "tsv"):
        with open_text(path) as fh:
            reader = csv.DictReader(fh, delimiter="\t" if fmt == "tsv" else ",")
            rows = []
            try:
                for values in reader:
                    if None in values:
                        raise DataSourceError(f"{path}:{reader.line_num}: more fields than the header has columns")
                    rows.append(Row(values, f"{path}:{reader.line_num}", split))
            except csv.Error as exc:
                raise DataSourceError(f"{path}:{reader.line_num}: {exc}") from None
            return rows
    if fmt == "jsonl":
        return [Row(values, f"{path}:{number}", split) for number, values in iter_numbered_jsonl(path)]
    if fmt == "json":
        data = read_json(path)
        if isinstance(data, Mapping):
            lists = [v for v in data.values() if isinstance(v, list)]
            if len(lists) != 1:
                raise DataSourceError(f"{path}: expected a list of objects (or an object holding exactly one list)")
            data = lists[0]
        if not isinstance(data, list) or not all(isinstance(v, Mapping) for v in data):
            raise DataSourceError(f"{path}: expected a list of objects")
        return [Row(values, f"{path}[{i}]", split) for i, values in enumerate(data)]
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return [Row(values, f"{path}[row {i}]", split) for i, values in enumerate(table.to_pylist())]


@SCENARIOS.register("file")
class FileDatasetScenario(UserDatasetScenario):
    """A user's dataset in a local file (or one file per split)."""

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
    ) -> None:
        if isinstance(path, Mapping):
            self.paths: dict[str | None, str] = {}
            for split, file in path.items():
                if split not in SPLIT_ALIASES:
                    raise ValueError(f"path: split {split!r} is not train, valid or test")
                self.paths[SPLIT_ALIASES[split]] = str(file)
        elif isinstance(path, str) and path:
            self.paths = {None: path}
        else:
            raise ValueError("path must be a file path or a mapping of split names to file paths")
        self.formats = {s: infer_format(Path(p), format) for s, p in self.paths.items()}
        self._set_mapping(fields, labels, template, splits, num_train)

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
        raise DataSourceError(
            f"dataset file {path!r} not found; looked in: " + ", ".join(str(p) for p in tried)
        )

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        rows: list[Row] = []
        digests: list[str] = []
        for split, path in self.paths.items():
            located = self.locate(path, ctx)
            digests.append(f"{split}={hashlib.sha256(located.read_bytes()).hexdigest()}")
            rows.extend(read_rows(located, self.formats[split], split))
        # The pool is seeded by the files' contents, not their paths: the same data gives
        # the same split wherever it is stored and whichever folder helm-run starts in.
        return build_instances(rows, self.mapping, "file:" + ",".join(sorted(self.paths.values())),
                               seed_key="file:" + ",".join(digests))
