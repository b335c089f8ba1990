"""The Python API: what the command-line programs do, as typed calls.

=====================================  ==============================  ===========================
Call                                   Command                         Returns
=====================================  ==============================  ===========================
:func:`plan`                           ``helm-run SPEC --plan``        :class:`PlanResult`
:func:`run`                            ``helm-run SPEC``               :class:`RunResult`
:func:`fetch`                          ``helm-run SPEC --fetch-only``  :class:`FetchResult`
:func:`summarize`                      ``helm-summarize``              :class:`SummarizeResult`
:func:`diff`                           ``helm-diff``                   :class:`~holistic.diff.compare.DiffReport`
:func:`load`                           (none: read the tables)         :class:`SuiteTables`
:func:`export_ratings`                 ``helm-ratings export``         the number of items
:func:`import_ratings`                 ``helm-ratings import``         :class:`RatingsImport`
:func:`import_helm`                    ``helm-import``                 the runs' reports
:func:`import_results`                 ``helm-import --from lm-eval``  the runs as read
:func:`check_models`                   ``python -m holistic.cli.check``  :class:`ModelCheck`
=====================================  ==============================  ===========================

Each command maps its arguments onto one of these calls, so a call with the same options gives the same
suite, the same run ids and the same tables as the command. Options that the commands spell as many
flags are grouped in frozen dataclasses (:class:`RunOptions`, :class:`SpecLimits`,
:class:`SummarizeOptions`); the common ones are keyword arguments. Errors a user can cause raise a
:class:`~holistic.core.errors.HolisticError` whose message names the file, line or option.

``plan``, ``run``, ``summarize``, ``diff`` and ``load`` are also available as ``holistic.plan`` and
so on; ``import holistic`` itself loads none of this until first use.
"""

from holistic.api.reading import SuiteTables, diff, load
from holistic.api.running import (
    FetchResult,
    PlanResult,
    RunOutcome,
    RunResult,
    SpecLimits,
    fetch,
    plan,
    run,
)
from holistic.api.summarizing import (
    RatingsImport,
    SummarizeOptions,
    SummarizeResult,
    export_ratings,
    import_ratings,
    summarize,
)
from holistic.api.tools import ModelCheck, check_models, import_helm, import_results
from holistic.execution.options import RunOptions

__all__ = [
    "FetchResult",
    "ModelCheck",
    "PlanResult",
    "RatingsImport",
    "RunOptions",
    "RunOutcome",
    "RunResult",
    "SpecLimits",
    "SuiteTables",
    "SummarizeOptions",
    "SummarizeResult",
    "check_models",
    "diff",
    "export_ratings",
    "fetch",
    "import_helm",
    "import_ratings",
    "import_results",
    "load",
    "plan",
    "run",
    "summarize",
]
