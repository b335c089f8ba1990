"""RAFT as HELM builds it: the split, the fields shown and the instructions (issue 14, finding 8)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from holistic.scenarios.loading.sources import ResolvedData
from holistic.scenarios.raft import RAFTScenario, task_instructions

# datasets 3.6.0: Dataset.from_list(50 rows).train_test_split(test_size=0.8, seed=42)["train"] row numbers
HELM_TRAIN_ROWS = [0, 12, 14, 48, 2, 36, 33, 1, 13, 8]


def _write_task(root: Path) -> dict[str, Path]:
    folder = root / "neurips_impact_statement_risks"
    folder.mkdir(parents=True)
    labels = ["doesn't mention a harmful application", "mentions a harmful application"]
    (folder / "task.json").write_text(
        json.dumps(
            {
                "name": "neurips_impact_statement_risks",
                "description": "",
                "data_columns": ["Paper title", "Paper link", "Impact statement", "ID"],
                "label_columns": {"Label": labels},
            }
        )
    )
    with (folder / "train.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Paper title", "Paper link", "Impact statement", "ID", "Label"])
        for i in range(50):
            writer.writerow([f"Title {i}", f"https://example.org/{i}", f"Statement {i}", str(i), labels[i % 2]])
    return {f"neurips_impact_statement_risks/{name}": folder / name for name in ("task.json", "train.csv")}


def test_split_fields_and_instructions_are_helms(tmp_path: Path) -> None:
    paths = _write_task(tmp_path)
    instances = RAFTScenario(subset="neurips_impact_statement_risks").load(ResolvedData("raft", 0, paths))
    train = [i for i in instances if i.split == "train"]
    test = [i for i in instances if i.split == "test"]
    assert [i.id for i in train] == [f"neurips_impact_statement_risks-{r}" for r in HELM_TRAIN_ROWS]
    assert len(test) == 40 and not {i.id for i in test} & {i.id for i in train}
    # HELM shows the authors' fields in the authors' order, without the paper link
    assert train[0].input == "Impact statement: Statement 0\nPaper title: Title 0"
    instructions = RAFTScenario(subset="neurips_impact_statement_risks").adapter_defaults()["instructions"]
    assert instructions == task_instructions("neurips_impact_statement_risks")
    assert instructions.endswith(
        "\nPossible labels:\n1. doesn't mention a harmful application\n2. mentions a harmful application"
    )
    assert instructions.startswith("Label the impact statement based on whether it mentions a harmful application")
