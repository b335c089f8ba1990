"""The results store: layout, Arrow schemas, run manifests, the suite lock and typed readers.

Writers (``helm-run``) go through :class:`~holistic.results.store.SuiteStore`; readers
(``helm-summarize``, the site, ``helm-diff``, tests) through
:class:`~holistic.results.reader.SuiteReader`. No other module spells a results file name.
"""

from holistic.results.layout import COMPLETE_MARKER, PARTIAL_MARKER, check_suite_name
from holistic.results.manifest import DamagedRunError, Manifest
from holistic.results.reader import RunReader, SuiteReader
from holistic.results.references import reference_from_row, reference_row, references_from_rows
from holistic.results.schemas import SCHEMA_VERSION

__all__ = [
    "COMPLETE_MARKER",
    "PARTIAL_MARKER",
    "SCHEMA_VERSION",
    "DamagedRunError",
    "Manifest",
    "RunReader",
    "SuiteReader",
    "check_suite_name",
    "reference_from_row",
    "reference_row",
    "references_from_rows",
]
