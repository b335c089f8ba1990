"""Systems and run names of a suite's runs, as the summary and the site show them.

A leaderboard row is a model deployment *under one adaptation*. When a suite runs the same
scenario arguments on the same model with different adaptation settings (two prompt formats,
zero- and few-shot, two temperatures...), those runs are different systems, compared side by
side rather than averaged together, e.g. ``embedded/smollm2-135m-instruct [prompt_format=chat]``;
a suite without such variation has one system per model, named by the model alone. The rules
are :mod:`holistic.core.naming`'s, which ``--plan`` and helm-run's closing scores follow too.
"""

from __future__ import annotations

from holistic.core import naming
from holistic.summarize.load import RunInfo


def run_facts(run: RunInfo) -> naming.RunFacts:
    """What the run's names are made of, from its ``run_spec.json``."""
    return naming.RunFacts.of(run.spec, run.run_id)


def system_names(runs: list[RunInfo]) -> dict[str, str]:
    """run_id -> the name of the system the run belongs to."""
    return naming.system_names([run_facts(r) for r in runs])


def run_names(runs: list[RunInfo]) -> dict[str, str]:
    """run_id -> the run's name (``arithmetic (digits=1) · model [settings]``, or its spec's ``name:``)."""
    return naming.display_names([run_facts(r) for r in runs])
