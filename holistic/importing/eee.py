"""Every Eval Ever (schema 0.3.0, the PyPI package ``every-eval-ever``): a suite out, and back in.

Export (``helm-summarize --export every-eval-ever DIR``) writes, for each completed run, the
aggregate file ``DIR/data/<suite>/<developer>/<model>/<uuid>.json`` (one evaluation result per
stat of the test split: the mean as the score, its bootstrap interval, standard deviation and
count; count, sum, sum of squares, min and max as details) and the instance-level file beside it,
``<uuid>_samples.jsonl`` (one line per instance, trial and metric: the input, the references, the
choices, the output, the value as the score). The uuid is a version-4 UUID made from the run id,
so exporting the same suite twice gives the same files. Every document is validated against the
two JSON schemas the package ships before it is written: the installed package's, else the two
files taken once out of its 0.3.0 wheel (fetched with pip) into holistic's cache folder.

Import (``helm-import --from every-eval-ever``) reads the aggregate files and their
instance-level files back: each evaluation name of an aggregate file is a run, each sample an
instance, each line's score a per-instance value, and the stats are recomputed from them, so an
exported suite imports back with the same stats.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections import defaultdict
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from holistic.core.errors import HolisticError
from holistic.importing.runs import ImportedRun, instance_row, per_instance_row, request_defaults
from holistic.importing.safe import ImportFileError, finite, iter_jsonl, read_json

SCHEMA_VERSION = "0.3.0"
SCHEMA_FILES = {"aggregate": "eval.schema.json", "instance": "instance_level_eval.schema.json"}
"""The package's own schema files, by the kind of document they validate."""


class ExportError(HolisticError):
    exit_code = 2


def schema_dir() -> Path:
    """Where the package's schema files are kept once fetched (under holistic's cache folder)."""
    base = os.environ.get("HOLISTIC_CACHE_DIR") or str(Path.home() / ".cache" / "holistic")
    return Path(base) / "every-eval-ever" / SCHEMA_VERSION


def schema_text(kind: str) -> str:
    """The text of ``every-eval-ever`` SCHEMA_VERSION's schema for ``kind``, as the package ships it:
    from the installed package, else from the copy fetched once into :func:`schema_dir` (pip downloads
    the package's wheel from the package index and its two schema files are taken out of it)."""
    name = SCHEMA_FILES[kind]
    try:
        from importlib.resources import files

        shipped = files("every_eval_ever") / "schemas" / name
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
    except (ImportError, OSError):
        pass
    kept = schema_dir() / name
    if not kept.is_file():
        _fetch_schemas(schema_dir())
    return kept.read_text(encoding="utf-8")


def _fetch_schemas(folder: Path) -> None:
    """Download the package's wheel (no dependencies, any Python) and keep its schema files."""
    import subprocess
    import sys
    import tempfile
    import zipfile

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "-q", f"every-eval-ever=={SCHEMA_VERSION}", "--no-deps"]
        cmd += ["--only-binary=:all:", "--python-version", "3.12", "-d", tmp]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        wheels = list(Path(tmp).glob("every_eval_ever-*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise ExportError(
                f"the Every Eval Ever schema {SCHEMA_VERSION} is needed to validate the export and could not be "
                f"fetched (pip download every-eval-ever=={SCHEMA_VERSION}: {done.stderr.strip()[-300:]}); install "
                "the package where it installs (Python 3.12 and later), or put its schemas/*.json in "
                f"{folder}"
            )
        folder.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheels[0]) as wheel:
            for name in SCHEMA_FILES.values():
                member = wheel.getinfo(f"every_eval_ever/schemas/{name}")
                if member.file_size > 4 << 20:
                    raise ExportError(f"{wheels[0].name}: {name} is {member.file_size} bytes, more than a schema")
                part = folder / f".{name}.part"
                part.write_bytes(wheel.read(member))
                part.replace(folder / name)


@cache
def _validator(kind: str) -> Any:
    import jsonschema

    schema = json.loads(schema_text(kind))
    return jsonschema.Draft7Validator(schema)


def validation_errors(document: Mapping[str, Any], kind: str) -> list[str]:
    """What makes ``document`` invalid under the package's schema (``aggregate`` or ``instance``)."""
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:200]}"
        for e in sorted(_validator(kind).iter_errors(document), key=lambda e: list(e.absolute_path))
    ]


def _safe(text: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in text).strip("._") or "unknown"
    return out[:100]


def _uuid4(seed: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256(seed.encode()).digest()[:16], version=4))


def _details(values: Mapping[str, Any]) -> dict[str, str]:
    return {k: json.dumps(v) if not isinstance(v, str) else v for k, v in values.items() if v is not None}


def export_suite(suite_dir: Path, out: Path) -> list[Path]:
    """Write every completed run of the suite at ``suite_dir`` under ``out``; the files written."""
    from holistic.results import SuiteReader
    from holistic.results.schemas import INSTANCES_TABLE, PER_INSTANCE_STATS_TABLE, REQUESTS_TABLE, STATS_TABLE

    reader = SuiteReader(suite_dir)
    written: list[Path] = []
    for run in reader.runs:
        spec = run.spec
        stats = [
            s
            for s in run.table(STATS_TABLE).to_pylist()
            if s["sub_split"] is None and s["perturbation"] is None and s["split"] == "test" and s["mean"] is not None
        ]
        if not stats:
            continue
        instances = run.table(INSTANCES_TABLE).to_pylist()
        requests = run.table(REQUESTS_TABLE).to_pylist()
        values = run.table(PER_INSTANCE_STATS_TABLE).to_pylist()
        written += _export_run(reader.suite, spec, stats, instances, requests, values, out)
    return written


def _export_run(
    suite: str,
    spec: Mapping[str, Any],
    stats: list[dict[str, Any]],
    instances: list[dict[str, Any]],
    requests: list[dict[str, Any]],
    values: list[dict[str, Any]],
    out: Path,
) -> list[Path]:
    from holistic.results.store import package_version

    run_id = str(spec.get("run_id"))
    model = str(spec.get("model") or "unknown")
    name = str(spec.get("name") or run_id)
    file_uuid = _uuid4(f"{suite}/{run_id}")
    developer, _, model_name = model.rpartition("/")
    rel = Path("data") / _safe(suite) / _safe(developer or "unknown") / _safe(model_name or model)
    evaluation_id = f"{suite}/{run_id}"
    origin = spec.get("imported_from") or {}
    results = [_result(run_id, name, spec, s) for s in stats]
    lines = list(_instance_lines(evaluation_id, model, name, run_id, instances, requests, values))
    body = "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines).encode()
    samples_rel = rel / f"{file_uuid}_samples.jsonl"
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": str(spec.get("created") or origin.get("date") or "unknown"),
        "source_metadata": {
            "source_name": f"holistic suite {suite}",
            "source_type": "evaluation_run",
            "source_organization_name": "holistic",
            "evaluator_relationship": "third_party",
            "additional_details": _details({"run_id": run_id, "imported_from": origin.get("tool")}),
        },
        "eval_library": {
            "name": str(origin.get("tool") or "holistic"),
            "version": str(origin.get("harness_version") or origin.get("helm_version") or package_version()),
        },
        "model_info": {
            "name": model,
            "id": model,
            "developer": developer or "unknown",
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": samples_rel.as_posix(),
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(body).hexdigest(),
            "total_rows": len(lines),
        },
    }
    problems = validation_errors(aggregate, "aggregate")
    if problems:
        raise ExportError(f"run {run_id}: the Every Eval Ever document would not validate: {problems[0]}")
    for line in lines:
        problems = validation_errors(line, "instance")
        if problems:
            raise ExportError(f"run {run_id}: an instance line would not validate: {problems[0]}")
    folder = out / rel
    folder.mkdir(parents=True, exist_ok=True)
    (out / samples_rel).write_bytes(body)
    agg_path = folder / f"{file_uuid}.json"
    agg_path.write_text(json.dumps(aggregate, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return [agg_path, out / samples_rel]


def _result(run_id: str, name: str, spec: Mapping[str, Any], s: Mapping[str, Any]) -> dict[str, Any]:
    """One stat as an evaluation result: the mean, its interval, standard deviation and count."""
    scenario = spec.get("scenario") or {}
    return {
        "evaluation_result_id": f"{run_id}/{s['metric']}",
        "evaluation_name": name,
        "source_data": {
            "dataset_name": str(scenario.get("name") or name),
            "source_type": "other",
            "additional_details": {"scenario_args": json.dumps(scenario.get("args") or {}, sort_keys=True)},
        },
        "metric_config": {
            "metric_id": s["metric"],
            "metric_name": s["metric"],
            "lower_is_better": s["higher_is_better"] is False,
            "score_type": "continuous",
            "min_score": s["min"],
            "max_score": s["max"],
            "additional_details": _details({"category": s["category"], "main": s["metric"] == spec.get("main_metric")}),
        },
        "score_details": {
            "score": s["mean"],
            "details": _details({k: s[k] for k in ("count", "sum", "sum_sq", "min", "max", "num_trials")}),
            "uncertainty": {
                **(
                    {
                        "confidence_interval": {
                            "lower": s["ci_low"],
                            "upper": s["ci_high"],
                            "confidence_level": 0.95,
                            "method": "percentile bootstrap over instances (1,000 resamples)",
                        }
                    }
                    if s["ci_low"] is not None and s["ci_high"] is not None
                    else {}
                ),
                **({"standard_deviation": s["stddev"]} if s["stddev"] is not None else {}),
                "num_samples": int(s["count"]),
            },
        },
        "generation_config": {"additional_details": {"method": str(spec.get("adapter", {}).get("method"))}},
    }


def _instance_lines(
    evaluation_id: str,
    model: str,
    name: str,
    run_id: str,
    instances: list[dict[str, Any]],
    requests: list[dict[str, Any]],
    values: list[dict[str, Any]],
) -> Iterator[dict[str, Any]]:
    by_id = {i["instance_id"]: i for i in instances if i["role"] == "eval" and i["perturbation"] is None}
    outputs: dict[tuple[str, int], list[str]] = defaultdict(list)
    for r in sorted(requests, key=lambda r: (r["instance_id"], r["trial"], r["request_index"])):
        if r["perturbation"] is None and r["completion"]:
            outputs[(r["instance_id"], r["trial"])].append(r["completion"])
    for v in sorted(values, key=lambda v: (v["instance_id"], v["trial"], v["metric"])):
        inst = by_id.get(v["instance_id"])
        if inst is None or v["split"] != "test" or v["perturbation"] is not None or v["sub_split"] is not None:
            continue
        refs = inst["references"] or []
        yield {
            "schema_version": SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "model_id": model,
            "evaluation_name": name,
            "evaluation_result_id": f"{run_id}/{v['metric']}",
            "sample_id": v["instance_id"],
            "interaction_type": "single_turn",
            "input": {
                "raw": inst["input"],
                "reference": [r["output"] for r in refs if "correct" in (r["tags"] or [])],
                "choices": [r["output"] for r in refs] if len(refs) > 1 else None,
            },
            "output": {"raw": outputs.get((v["instance_id"], v["trial"]), [])},
            "messages": None,
            "answer_attribution": [],
            "evaluation": {"score": v["value"], "is_correct": v["value"] >= 0.5},
            "metadata": {"trial": str(v["trial"]), "metric": v["metric"]},
        }


# -- import -------------------------------------------------------------------------------------


def is_aggregate(path: Path) -> bool:
    """An Every Eval Ever aggregate file, read by its first bytes."""
    with path.open("rb") as fh:
        head = fh.read(8192)
    return b'"evaluation_results"' in head and b'"schema_version"' in head


def read_eee(source: Path, model_map: Mapping[str, str]) -> list[ImportedRun]:
    root = source if source.is_dir() else source.parent
    files = (
        [source]
        if source.is_file()
        else sorted(p for p in source.rglob("*.json") if p.is_file() and not p.is_symlink())
    )
    runs: list[ImportedRun] = []
    for path in files:
        if is_aggregate(path):
            runs.extend(_read_aggregate(path, root, model_map))
    if not runs:
        raise ImportFileError(source, "no Every Eval Ever aggregate file (*.json with evaluation_results) here")
    return runs


def _samples_path(path: Path, root: Path, detailed: Mapping[str, Any]) -> Path:
    rel = detailed.get("file_path")
    if not isinstance(rel, str) or not rel:
        raise ImportFileError(path, "detailed_evaluation_results.file_path is missing")
    candidates = [root / rel, path.parent / Path(rel).name]
    for candidate in candidates:
        resolved = candidate.resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise ImportFileError(path, f"detailed_evaluation_results.file_path {rel!r} leaves the folder imported")
        if resolved.is_file():
            return resolved
    raise ImportFileError(path, f"the instance-level file {rel!r} is not there (holistic recomputes stats from it)")


def _read_aggregate(path: Path, root: Path, model_map: Mapping[str, str]) -> list[ImportedRun]:
    data = read_json(path)
    problems = validation_errors(data, "aggregate") if isinstance(data, dict) else ["(top): not an object"]
    if problems:
        raise ImportFileError(path, f"not a valid Every Eval Ever aggregate file: {problems[0]}")
    samples = _samples_path(path, root, data.get("detailed_evaluation_results") or {})
    model_id = str(data["model_info"]["id"])
    library = data["eval_library"]
    runs: dict[str, ImportedRun] = {}
    metric_of: dict[str, tuple[str, str]] = {}
    for result in data["evaluation_results"]:
        name = str(result["evaluation_name"])
        metric = str(result["metric_config"].get("metric_id") or result["metric_config"].get("metric_name") or name)
        if name not in runs:
            runs[name] = ImportedRun(
                tool="every-eval-ever",
                name=name,
                source=samples,
                model=model_map.get(model_id, model_id),
                method=str(
                    ((result.get("generation_config") or {}).get("additional_details") or {}).get("method")
                    or "generation"
                ),
                main_metric=metric,
                origin={
                    "harness_version": str(library.get("version")),
                    "eval_library": str(library.get("name")),
                    "evaluation_id": str(data["evaluation_id"]),
                    "aggregate_file": path.name,
                },
            )
        if (result["metric_config"].get("additional_details") or {}).get("main") == "true":
            runs[name].main_metric = metric
        runs[name].higher_is_better[metric] = not result["metric_config"]["lower_is_better"]
        runs[name].reported[metric] = result["score_details"]["score"]
        metric_of[str(result.get("evaluation_result_id") or f"{name}/{metric}")] = (name, metric)
    _read_instances(samples, runs, metric_of)
    return list(runs.values())


def _read_instances(path: Path, runs: dict[str, ImportedRun], metric_of: Mapping[str, tuple[str, str]]) -> None:
    seen: set[tuple[str, str]] = set()
    for line, row in iter_jsonl(path):
        where = f"line {line}"
        if not isinstance(row, dict):
            raise ImportFileError(path, "expected an object", where=where)
        problems = validation_errors(row, "instance")
        if problems:
            raise ImportFileError(path, f"not a valid Every Eval Ever instance line: {problems[0]}", where=where)
        key = str(row.get("evaluation_result_id") or f"{row['evaluation_name']}/")
        name, metric = metric_of.get(
            key, (str(row["evaluation_name"]), str((row.get("metadata") or {}).get("metric") or "score"))
        )
        run = runs.get(name)
        if run is None:
            raise ImportFileError(path, f"evaluation_name {name!r} is not in the aggregate file", where=where)
        sample_id = str(row["sample_id"])
        trial = int((row.get("metadata") or {}).get("trial") or 0)
        value = finite(row["evaluation"]["score"], path, f"{where}: evaluation.score")
        run.per_instance.append(per_instance_row(sample_id, metric, value, trial=trial))
        if (sample_id, name) in seen:
            continue
        seen.add((sample_id, name))
        given = row["input"]
        choices = given.get("choices") or []
        correct = set(given.get("reference") or [])
        refs = [(c, c in correct) for c in choices] if choices else [(r, True) for r in given.get("reference") or []]
        run.instances.append(instance_row(sample_id, str(given["raw"]), refs, {}))
        outputs = (row.get("output") or {}).get("raw") or [""]
        run.requests.append(
            request_defaults(
                instance_id=sample_id,
                split="test",
                trial=trial,
                request_index=0,
                kind="generate",
                prompt=str(given.get("formatted") or given["raw"]),
                completion=str(outputs[0]),
                completions=[
                    {"text": str(o), "logprob": 0.0, "finish_reason": None, "is_greedy": None, "num_tokens": 0}
                    for o in outputs
                ],
                engine="every-eval-ever",
            )
        )
