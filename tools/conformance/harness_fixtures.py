"""Make the test fixtures of ``helm-import --from lm-eval | inspect``: lm-evaluation-harness and
inspect_ai themselves, each in a virtual environment of its own, run on the embedded model's weights.

    python -m tools.conformance.harness_fixtures [--out tests/fixtures/harnesses] [--questions 10]

Two tasks each:

- ``arc_easy_local``: the first ``--questions`` ARC-Easy questions of the repository's ARC fixture
  (``tests/scenarios/data/arc_easy_train_head.jsonl``), flattened to ``arc_easy.jsonl`` (id, question,
  choices, answer index, answer letter). lm-eval scores each choice apart (``Question: ...\\nAnswer:``
  then `` <choice>``; ``acc``, ``acc_norm``); inspect asks for a letter (``multiple_choice()`` solver,
  ``choice()`` scorer).
- ``arithmetic_local``: five arithmetic questions written here (``arithmetic.jsonl``), answered by
  greedy generation (lm-eval ``generate_until`` with ``exact_match``; inspect ``generate()`` with ``match()``).

lm-eval 0.4.13 runs ``--model hf --model_args pretrained=MODEL,dtype=float32 --log_samples`` (its venv:
:func:`tools.peers.install_peer`). inspect_ai gets its own venv (``peers/inspect``, with ``openai``) and
reaches the same weights through an OpenAI-compatible server on 127.0.0.1
(``tools/conformance/peer/chat_server.py``, run by lm-eval's interpreter, which has torch and
transformers): inspect's ``hf/`` provider would need a second torch install.

The outputs are made neutral before they are kept: this machine's folders are rewritten
(the model folder to ``models/smollm2-135m-instruct`` (``models__smollm2-135m-instruct`` where
lm-eval names a folder after it), the work folder to ``data``, the home
folder to ``~``), inside ``.eval`` archives too, and any absolute path left fails the tool.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from tools.common import PEERS_CACHE, REPO
from tools.peers import LM_EVAL, TORCH, install_peer, model_dir, peer_env

INSPECT = "inspect-ai==0.3.285"
OPENAI = "openai"
ARC_SOURCE = REPO / "tests" / "scenarios" / "data" / "arc_easy_train_head.jsonl"
CHAT_SERVER = Path(__file__).with_name("peer") / "chat_server.py"
MODEL_NAME = "models/smollm2-135m-instruct"
ARITHMETIC = [
    ("add-1", "What is 2 plus 3?", "5"),
    ("add-2", "What is 10 plus 4?", "14"),
    ("sub-1", "What is 9 minus 7?", "2"),
    ("mul-1", "What is 3 times 3?", "9"),
    ("add-3", "What is 1 plus 1?", "2"),
]

LM_EVAL_ARC = """\
output_type: multiple_choice
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_choice: "{{choices}}"
doc_to_target: answer
target_delimiter: " "
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
"""

LM_EVAL_ARITHMETIC = """\
output_type: generate_until
doc_to_text: "Question: {{question}}\\nAnswer:"
doc_to_target: "{{answer}}"
target_delimiter: " "
generation_kwargs:
  until: ["\\n", "Question:"]
  do_sample: false
  max_gen_toks: 16
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
"""

INSPECT_TASKS = '''\
"""inspect_ai tasks over the fixture files (paths given with -T path=...)."""

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import choice, match
from inspect_ai.solver import generate, multiple_choice


@task
def arc_easy_local(path: str) -> Task:
    fields = FieldSpec(input="question", target="answer_letter", id="id", choices="choices")
    return Task(dataset=json_dataset(path, fields), solver=multiple_choice(), scorer=choice())


@task
def arithmetic_local(path: str) -> Task:
    fields = FieldSpec(input="question", target="answer", id="id")
    return Task(dataset=json_dataset(path, fields), solver=generate(), scorer=match(numeric=True))
'''


def write_data(work: Path, questions: int) -> tuple[Path, Path]:
    rows = []
    with ARC_SOURCE.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            labels = [c["label"] for c in doc["question"]["choices"]]
            answer = labels.index(doc["answerKey"])
            rows.append(
                {
                    "id": doc["id"],
                    "question": doc["question"]["stem"],
                    "choices": [c["text"] for c in doc["question"]["choices"]],
                    "answer": answer,
                    "answer_letter": "ABCDEFGH"[answer],
                }
            )
            if len(rows) == questions:
                break
    arc = work / "arc_easy.jsonl"
    arc.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    arith = work / "arithmetic.jsonl"
    arith.write_text(
        "".join(json.dumps({"id": i, "question": q, "answer": a}) + "\n" for i, q, a in ARITHMETIC), encoding="utf-8"
    )
    return arc, arith


def run_lm_eval(work: Path, arc: Path, arith: Path, model: Path) -> Path:
    python = install_peer(PEERS_CACHE / "bench" / "lm_eval", [TORCH, LM_EVAL])
    tasks = work / "lm_eval_tasks"
    tasks.mkdir()
    for name, data, settings in (("arc_easy_local", arc, LM_EVAL_ARC), ("arithmetic_local", arith, LM_EVAL_ARITHMETIC)):
        (tasks / f"{name}.yaml").write_text(
            f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {data}\ntest_split: test\n"
            + settings,
            encoding="utf-8",
        )
    out = work / "lm_eval"
    cmd = [
        str(python),
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},dtype=float32",
        "--device",
        "cpu",
        "--batch_size",
        "4",
        "--tasks",
        "arc_easy_local,arithmetic_local",
        "--include_path",
        str(tasks),
        "--log_samples",
        "--output_path",
        str(out),
        "--seed",
        "0",
    ]
    _run(cmd, work, peer_env(HF_DATASETS_CACHE=str(work / "ds")), work / "lm_eval.log")
    return out


def run_inspect(work: Path, arc: Path, arith: Path, model: Path) -> Path:
    python = install_peer(PEERS_CACHE / "inspect", [INSPECT, OPENAI])
    lm_python = install_peer(PEERS_CACHE / "bench" / "lm_eval", [TORCH, LM_EVAL])
    tasks = work / "inspect_tasks.py"
    tasks.write_text(INSPECT_TASKS, encoding="utf-8")
    port_file = work / "port"
    server = subprocess.Popen(
        [str(lm_python), str(CHAT_SERVER), str(model), str(port_file), "--idle", "300"],
        env=peer_env(),
        stdout=(work / "chat_server.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 300
        while not port_file.is_file() or not port_file.read_text():
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"harness_fixtures: the chat server did not start:\n{(work / 'chat_server.log').read_text()}"
                )
            time.sleep(1)
        env = peer_env(LOCAL_API_KEY="none", LOCAL_BASE_URL=f"http://127.0.0.1:{port_file.read_text()}/v1")
        out = work / "inspect"
        inspect = str(Path(python).with_name("inspect"))
        for name, data, fmt in (("arc_easy_local", arc, "eval"), ("arithmetic_local", arith, "json")):
            cmd = [
                inspect,
                "eval",
                f"{tasks}@{name}",
                "-T",
                f"path={data}",
                "--model",
                "openai-api/local/smollm2-135m-instruct",
                "--temperature",
                "0",
                "--max-tokens",
                "16",
                "--seed",
                "0",
                "--max-connections",
                "1",
                "--log-format",
                fmt,
                "--log-dir",
                str(out),
                "--display",
                "plain",
            ]
            _run(cmd, work, env, work / f"inspect-{name}.log")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return out


def _run(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
    with log.open("w") as fh:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=3600)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-30:])
        raise SystemExit(f"harness_fixtures: {' '.join(cmd[:4])} ... failed (exit {proc.returncode}):\n{tail}")


def neutral(text: str, replacements: list[tuple[str, str]]) -> str:
    for old, new in replacements:
        text = text.replace(old, new)
    return text


LEFT = re.compile(r"(/(?:root|home|tmp|work|usr|opt|var)/[\w.\-/]*)")


def copy_neutral(src: Path, dest: Path, replacements: list[tuple[str, str]]) -> None:
    """Copy ``src``'s files into ``dest`` with this machine's paths rewritten (``.eval`` members too)."""
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        target = dest / neutral(str(path.relative_to(src)), replacements)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".eval":
            with contextlib.suppress(ImportError):
                importlib.import_module("zipfile_zstd")  # inspect_ai's members are zstd-compressed (Python < 3.14)
            with zipfile.ZipFile(path) as zin, zipfile.ZipFile(target, "w") as zout:
                for info in zin.infolist():
                    data = neutral(zin.read(info).decode("utf-8"), replacements)
                    _check_left(f"{path.name}:{info.filename}", data)
                    zout.writestr(info.filename, data, compress_type=info.compress_type)
        else:
            data = neutral(path.read_text(encoding="utf-8"), replacements)
            _check_left(str(path.name), data)
            target.write_text(data, encoding="utf-8")


def _check_left(where: str, text: str) -> None:
    left = LEFT.findall(text)
    if left:
        raise SystemExit(f"harness_fixtures: {where} still names a path of this machine: {left[0]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.conformance.harness_fixtures", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "harnesses")
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--only", choices=["lm-eval", "inspect"], help="make only this peer's fixtures")
    ap.add_argument("--keep-work", action="store_true", help="keep the work folder (printed)")
    args = ap.parse_args(argv)
    model = model_dir()
    work = Path(tempfile.mkdtemp(prefix="harness_fixtures-"))
    replacements = [
        (str(model), MODEL_NAME),
        (str(model).replace("/", "__"), MODEL_NAME.replace("/", "__")),  # lm-eval's folder for the model
        (str(work), "data"),
        (str(Path.home()), "~"),
    ]
    try:
        arc, arith = write_data(work, args.questions)
        args.out.mkdir(parents=True, exist_ok=True)
        for data in (arc, arith):
            shutil.copy(data, args.out / data.name)
        if args.only in (None, "lm-eval"):
            out = run_lm_eval(work, arc, arith, model)
            shutil.rmtree(args.out / "lm_eval", ignore_errors=True)
            copy_neutral(out, args.out / "lm_eval", replacements)
        if args.only in (None, "inspect"):
            out = run_inspect(work, arc, arith, model)
            shutil.rmtree(args.out / "inspect", ignore_errors=True)
            copy_neutral(out, args.out / "inspect", replacements)
    finally:
        if args.keep_work:
            print(f"work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"fixtures written to {args.out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
