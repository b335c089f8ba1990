"""Packages that are also the API call of the same name: ``holistic.summarize(...)`` and ``holistic.diff(...)``.

``holistic.summarize`` and ``holistic.diff`` name both a package (the implementation) and a function of
the Python API (:mod:`holistic.api`). Python binds a package's name on its parent once it is imported,
so the attribute ``holistic.summarize`` is the package whatever ``holistic/__init__.py`` says. Making
the package object callable gives both: ``from holistic.summarize import write_summary`` keeps working,
and ``holistic.summarize(suite)`` is :func:`holistic.api.summarize`.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class CallableModule(types.ModuleType):
    """A module whose call is the function named by its ``__call_target__`` (``"module:function"``)."""

    __call_target__: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        module, _, name = self.__call_target__.partition(":")
        return getattr(importlib.import_module(module), name)(*args, **kwargs)


def make_callable(module_name: str, target: str) -> None:
    """Make the (imported) module ``module_name`` callable as ``target`` (``"module:function"``, imported
    on the first call)."""
    module = sys.modules[module_name]
    module.__class__ = CallableModule
    module.__call_target__ = target  # type: ignore[attr-defined]  # (ModuleType allows any attribute)
