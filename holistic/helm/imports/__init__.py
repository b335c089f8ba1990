"""``helm-import``: HELM's raw run folders as an ordinary holistic suite.

:func:`holistic.helm.imports.importer.import_helm` imports a folder (see :mod:`.importer`);
:mod:`.names` maps HELM's scenario and stat names onto holistic's. This module imports none of
its submodules (a package that imported its own submodules, which import it back, is a circle).
"""
