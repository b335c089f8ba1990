"""``helm-import``: HELM's raw run folders as an ordinary holistic suite (see :mod:`.importer`)."""

from holistic.helm_import.importer import ImportOptions, RunImport, import_helm
from holistic.helm_import.stream import HelmFileError

__all__ = ["HelmFileError", "ImportOptions", "RunImport", "import_helm"]
