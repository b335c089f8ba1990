"""Loading plugin code that is not installed: ``helm-run --plugins MODULE|PATH``.

A plugin module registers its scenarios, metrics, perturbations and providers when
imported, through the decorators of :mod:`holistic.plugin`. This runs user code on
purpose, so only the command line can ask for it (a run spec stays pure data: nothing in
it can load code).

An item is, in this order:

- a ``.py`` file: imported as a module named after the file;
- a folder with an ``__init__.py``: imported as a package named after the folder;
- a folder without one: every ``*.py`` file directly inside it, in name order;
- otherwise an importable module name (``my_plugins.scenarios``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from holistic.core.errors import HolisticError


class PluginError(HolisticError):
    """A ``--plugins`` item could not be found or failed while it was imported."""

    exit_code = 2


def _import_file(path: Path, item: str) -> ModuleType:
    name = path.stem
    if not name.isidentifier():
        raise PluginError(f"--plugins {item}: {path.name!r} is not an importable module name (letters, digits, '_')")
    existing = sys.modules.get(name)
    if existing is not None and existing.__file__ and Path(existing.__file__).resolve() == path.resolve():
        return existing
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"--plugins {item}: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_package(folder: Path) -> ModuleType:
    parent = str(folder.parent.resolve())
    if parent not in sys.path:
        sys.path.insert(0, parent)
    return importlib.import_module(folder.name)


def _load_one(item: str) -> list[ModuleType]:
    path = Path(item).expanduser()
    if path.is_file():
        if path.suffix != ".py":
            raise PluginError(f"--plugins {item}: a plugin file must be a Python file (.py)")
        return [_import_file(path, item)]
    if path.is_dir():
        if (path / "__init__.py").is_file():
            return [_import_package(path)]
        files = sorted(path.glob("*.py"))
        if not files:
            raise PluginError(f"--plugins {item}: the folder has no .py file")
        return [_import_file(f, item) for f in files]
    if item.endswith(".py") or "/" in item or "\\" in item:
        raise PluginError(f"--plugins {item}: no such file or folder")
    try:
        return [importlib.import_module(item)]
    except ModuleNotFoundError as exc:
        if exc.name is not None and item.startswith(exc.name):
            raise PluginError(
                f"--plugins {item}: no module named {exc.name!r} (give an importable module name, "
                "or the path of a .py file or folder)"
            ) from None
        raise


def load_plugins(items: Iterable[str]) -> list[ModuleType]:
    """Import every ``--plugins`` item (see the module docstring); returns the modules imported.

    A plugin that raises while it is imported is a :class:`PluginError` naming the item and
    the exception (exit 2), not an internal error of holistic.
    """
    modules: list[ModuleType] = []
    for item in items:
        try:
            modules.extend(_load_one(item))
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(f"--plugins {item}: importing it failed: {type(exc).__name__}: {exc}") from exc
    return modules
