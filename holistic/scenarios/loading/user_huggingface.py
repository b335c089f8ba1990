"""The ``huggingface`` scenario: a dataset on the Hugging Face Hub, from YAML alone.

```yaml
runs:
  - scenario: huggingface
    args:
      dataset: stanfordnlp/imdb
      revision: <commit sha>             # required: results must name the data they used
      dataset_splits: {train: train, test: test} # dataset split -> train/valid/test
      fields: {input: text, label: label}
```

Reads through the ``datasets`` package (a dependency of holistic); ``dataset`` may
also be a local folder in the Hub's layout (``data/<split>-*.parquet``), read
without network. ``ClassLabel`` columns give their label names
unless ``labels`` is set. The field mapping is :mod:`holistic.scenarios.loading.user_fields`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, replace

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance
from holistic.scenarios.loading.user_dataset import UserDatasetScenario, user_dataset_info
from holistic.scenarios.loading.user_fields import SPLIT_ALIASES, build_instances
from holistic.scenarios.loading.user_tables import Row

_DEFAULT_SPLITS = {"train": "train", "validation": "valid", "test": "test"}


@dataclass(frozen=True, kw_only=True)
class HuggingFaceDatasetScenario(UserDatasetScenario):
    """A user's dataset from the Hugging Face Hub, pinned to a revision."""

    info = user_dataset_info("huggingface", "A Hugging Face Hub dataset (id + revision) with a field mapping.")

    dataset: str = arg(minLength=1)
    revision: str = arg(minLength=1)
    config: str | None = None
    dataset_splits: Mapping[str, str] = arg(
        dict(_DEFAULT_SPLITS), description="Dataset split -> train, valid or test (default: train, validation, test)."
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.dataset or not self.revision:
            raise ValueError("dataset and revision are required (pin the revision to a commit or tag)")
        for name, split in self.dataset_splits.items():
            if str(split).lower() not in SPLIT_ALIASES:
                raise ValueError(f"dataset_splits: {name!r} maps to {split!r}; use train, valid or test")

    def may_have_train_pool(self) -> bool:
        splits = self.dataset_splits.values()
        return (
            any(str(v).lower() in ("train", "dev", "few_shot", "fewshot") for v in splits)
            or super().may_have_train_pool()
        )

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        if importlib.util.find_spec("datasets") is None:
            raise DataSourceError(
                f"scenario 'huggingface' ({self.dataset}) needs the 'datasets' package, which is not installed: "
                "pip install datasets (or export the data to a file and use scenario 'file')"
            )
        import datasets

        rows: list[Row] = []
        label_names: list[str] | None = None
        for hf_split, split in self.dataset_splits.items():
            try:
                data = datasets.load_dataset(
                    self.dataset,
                    self.config,
                    split=hf_split,
                    revision=self.revision,
                    cache_dir=str(ctx.cache_dir / "huggingface") if ctx.cache_dir else None,
                    download_mode="reuse_cache_if_exists",
                )
            except ValueError as exc:
                if "Unknown split" in str(exc):
                    continue  # a split the dataset does not have
                raise DataSourceError(f"huggingface {self.dataset}@{self.revision}: {exc}") from None
            except Exception as exc:  # network, missing dataset, auth: report, never hide
                raise DataSourceError(f"huggingface {self.dataset}@{self.revision} [{hf_split}]: {exc}") from None
            label_column = self.mapping.fields.get("label")
            feature = data.features.get(label_column) if label_column else None
            if label_names is None and feature is not None and hasattr(feature, "names"):
                label_names = list(feature.names)
            where = f"{self.dataset}[{hf_split}]"
            rows.extend(
                Row(values, f"{where}[{i}]", SPLIT_ALIASES[str(split).lower()]) for i, values in enumerate(data)
            )
        if not rows:
            raise DataSourceError(
                f"huggingface {self.dataset}@{self.revision}: none of the splits {list(self.dataset_splits)} exist"
            )
        mapping = self.mapping
        if label_names is not None and mapping.labels is None and mapping.task == "classification":
            mapping = replace(mapping, labels={str(i): n for i, n in enumerate(label_names)})
        return build_instances(self.shape(rows, f"huggingface:{self.dataset}"), mapping, f"huggingface:{self.dataset}")
