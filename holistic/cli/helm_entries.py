"""``helm-run --run-entries ENTRY ... | --conf-paths FILE.conf ...``: HELM's own command line.

The entries are translated (:mod:`holistic.helm.entry_specs`) into a holistic run spec under
``protocol: helm``, written to a temporary file, and that spec is planned, fetched or run as any
other (``--print-spec`` prints it instead: save it to keep or edit the translation).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from holistic.cli.common import positive_int
from holistic.core.errors import SpecError

if TYPE_CHECKING:  # HELM's entry tables only when --run-entries is given, not on every helm-run
    from holistic.helm.entry_specs import Translated

DEFAULT_SUITE = "default"
"""HELM's ``--suite`` default."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "HELM's command line",
        "instead of SPEC: HELM's run entries and conf files, translated into a spec under protocol: helm "
        "(the same runs as the scenarios' natural YAML); --suite defaults to HELM's 'default'",
    )
    group.add_argument(
        "-r",
        "--run-entries",
        nargs="+",
        default=[],
        metavar="ENTRY",
        help="HELM run entries, e.g. 'mmlu:subject=anatomy,model=openai/gpt-4o-mini,data_augmentation=canonical'",
    )
    group.add_argument(
        "-c",
        "--conf-paths",
        nargs="+",
        type=Path,
        default=[],
        metavar="FILE",
        help="HELM conf files (entries: [{description: ..., priority: ...}])",
    )
    group.add_argument(
        "--priority",
        type=int,
        metavar="P",
        help="only entries with priority <= P (HELM's --priority; default: every entry)",
    )
    group.add_argument(
        "--models-to-run",
        nargs="+",
        default=[],
        metavar="MODEL",
        help="the models a model=<group> entry (model=text, ...) or an entry without model= runs on, HELM's "
        "model names resolved to the registry's deployments",
    )
    group.add_argument(
        "--num-train-trials",
        type=positive_int,
        metavar="N",
        help="trials of in-context example draws for every entry (HELM's --num-train-trials)",
    )
    group.add_argument(
        "--print-spec",
        action="store_true",
        help="print the run spec the entries translate into, then stop",
    )


def wants_entries(args: argparse.Namespace) -> bool:
    return bool(args.run_entries or args.conf_paths)


def _translate(args: argparse.Namespace) -> Translated:
    from holistic.helm.entry_specs import translate
    from holistic.helm.run_entries import collect
    from holistic.models.registry import ModelRegistry

    entries = collect(list(args.conf_paths), list(args.run_entries), args.priority)
    registry = ModelRegistry(args.models_file)
    translated = translate(
        entries,
        [registry.get(name) for name in registry.names()],
        suite=args.suite or DEFAULT_SUITE,
        models_to_run=args.models_to_run,
        max_eval_instances=args.max_eval_instances,
        num_train_trials=args.num_train_trials,
        description="HELM run entries: " + ", ".join(str(p.name) for p in args.conf_paths) if args.conf_paths else "",
    )
    return translated


def _text(translated: Translated) -> str:
    header = "".join(f"# {origin}\n" for origin in translated.origins[:200])
    return header + yaml.safe_dump(translated.document, sort_keys=False, allow_unicode=True, width=120)


def spec_text(args: argparse.Namespace) -> str:
    """The entries as a holistic run spec (YAML), or a SpecError naming the entry."""
    return _text(_translate(args))


@contextmanager
def translated_spec(args: argparse.Namespace) -> Iterator[Path]:
    """The entries' spec in a temporary file, removed afterwards."""
    translated = _translate(args)
    with tempfile.TemporaryDirectory(prefix="holistic-helm-entries-") as folder:
        path = Path(folder) / "helm-run-entries.yaml"
        path.write_text(_text(translated), encoding="utf-8")
        try:
            yield path
        except SpecError as exc:
            if exc.file != str(path):
                raise
            raise _named(exc, translated) from None


def _named(exc: SpecError, translated: Translated) -> SpecError:
    """A problem the compiler found in the translated spec, named by the entry it came from."""
    found = re.match(r"runs\[(\d+)\]", exc.path or "")
    if found is None or int(found.group(1)) >= len(translated.origins):
        return SpecError(f"{exc.message} (in the translated spec, at {exc.path or 'its top'}; see --print-spec)")
    origin = translated.origins[int(found.group(1))]
    return SpecError(f"{origin}: {exc.message} (translated as {exc.path}; see --print-spec)")
