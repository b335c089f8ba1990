"""Do several providers agree on log-likelihoods? The check from the shell.

On deployments of the registry (and ``--models-file``); exit 0 when all agree, 1 when a
case is flagged, 2 on a bad name or file::

    python -m holistic.cli.check embedded/smollm2-135m-instruct local/llama-server \
        --models-file my_models.yaml --tolerance 0.1

A client that checks its own scoring first (an OpenAI-compatible server's echo
alignment, :mod:`holistic.models.echo_alignment`) is probed before the cases, and the
probe's verdict is printed above the table (:mod:`holistic.models.check` scores the cases).
The command maps its arguments onto one call of :func:`holistic.api.check_models`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from holistic.cli.common import run_main


def main(argv: list[str] | None = None) -> int:
    """``python -m holistic.cli.check MODEL MODEL [...]``: the agreement table of these deployments."""
    parser = argparse.ArgumentParser(
        prog="python -m holistic.cli.check",
        description="Score a few fixed continuations on every named deployment and flag those that disagree "
        "(e.g. a server against the same weights run locally).",
    )
    parser.add_argument("models", nargs="+", help="deployment names (at least two)")
    parser.add_argument("--models-file", type=Path, help="your deployments, as for helm-run --models-file")
    parser.add_argument("--tolerance", type=float, default=0.1, help="nats two scores may differ by (default 0.1)")
    args = parser.parse_args(argv)
    return run_main(parser.prog, lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    """One call of :func:`holistic.api.check_models`."""
    from holistic import api

    checked = api.check_models(args.models, models_file=args.models_file, tolerance=args.tolerance)
    for name, facts in checked.scoring:
        print(f"{name}: echo log-probabilities {facts.get('status')}: {facts.get('detail')}")
    print(checked.table.format())
    return 0 if checked.ok else 1


if __name__ == "__main__":
    sys.exit(main())
