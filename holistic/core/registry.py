"""A named registry: one lazy name -> ``"module:attribute"`` table per kind of extension.

Built-ins and installed plugins are declared the same way: a name and the object path
``"package.module:Class"``. Built-ins come from the registry's own ``builtins`` table,
installed plugins from the Python entry-point group (``holistic.scenarios``...), both read
on first lookup and imported only when their name is asked for. Code that is not installed
(``helm-run --plugins MODULE|PATH``) registers itself when imported, through
:meth:`Registry.register` (re-exported by :mod:`holistic.plugin`).

When a registry has a ``base`` class, every object it hands out is checked to subclass it,
so the extension's optional hooks (declared on the base with defaults) can be called
directly; a plugin that does not subclass it is a clear error naming it. An extension states
its name once, in its class (a scenario's ``info.name``, a metric's or a perturbation's
``name``): the decorators read it there, and a table's or an entry point's key (an index for
importing lazily) is checked to be that name when the class is imported.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar, cast

from holistic.core.errors import HolisticError, UnknownNameError

T = TypeVar("T")


class RegistrationError(HolisticError, TypeError):
    """A registered object does not fit its registry (not a subclass of its base, not importable)."""

    exit_code = 2


def _installed_entry_points() -> dict[str, tuple[tuple[str, str], ...]]:
    """Every installed ``holistic.*`` entry point, by group: ``(name, "module:attribute")``.

    Read once for all the registries (each scan reads every installed distribution's
    metadata), and only when a registry first needs a name it does not know; read again
    when ``sys.path`` has changed since.
    """
    return _entry_points_on(tuple(sys.path))


@functools.lru_cache(maxsize=4)
def _entry_points_on(path: tuple[str, ...]) -> dict[str, tuple[tuple[str, str], ...]]:
    from importlib.metadata import entry_points

    found: Any = entry_points()  # Python 3.11: a dict of groups; 3.12 on: the entry points themselves
    groups: dict[str, list[tuple[str, str]]] = {}
    for ep in [ep for eps in found.values() for ep in eps] if isinstance(found, dict) else found:
        if ep.group.startswith("holistic."):
            groups.setdefault(ep.group, []).append((ep.name, ep.value))
    return {group: tuple(eps) for group, eps in groups.items()}


def load_object(target: str) -> Any:
    """The object ``"package.module:attribute"`` names (the attribute may be dotted)."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise RegistrationError(f"{target!r}: expected 'package.module:attribute'")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Maps names to objects (usually classes or factories).

    ``builtins`` maps a name to ``"module:attribute"``: imported on first lookup of that name.
    ``group`` is the Python entry-point group installed plugins use, e.g. ``holistic.scenarios``
    (same ``name = "module:attribute"`` form); read on first lookup of a name not yet known.
    ``base``: when given, every object must be a subclass of it.
    """

    @classmethod
    def of_extensions(
        cls, kind: str, base: type, builtins: Mapping[str, str], name_of: Callable[[Any], str | None] | None = None
    ) -> Registry[T]:
        """The registry of one extension kind: its built-ins, the entry-point group
        ``holistic.<kind>s``, its base class and where a class states its name."""
        return cls(kind, group=f"holistic.{kind}s", builtins=builtins, base=base, name_of=name_of)

    def __init__(
        self,
        kind: str,
        group: str | None = None,
        *,
        builtins: Mapping[str, str] | None = None,
        base: type | None = None,
        name_of: Callable[[Any], str | None] | None = None,
    ) -> None:
        """``name_of``: the name an object declares for itself (checked against its key)."""
        self.kind = kind
        self.name_of = name_of
        self.group = group
        self.base = base
        self._items: dict[str, T] = {}
        self._lazy: dict[str, str] = dict(builtins or {})
        self._loaded_entry_points = group is None

    def register(self, name: str) -> Callable[[T], T]:
        """Class decorator: ``@SCENARIOS.register("my_task")``."""

        def decorator(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorator

    def _check(self, name: str, obj: object, origin: str) -> T:
        base = self.base
        if base is not None and not (isinstance(obj, type) and issubclass(obj, base)):
            raise RegistrationError(
                f"{self.kind} {name!r} ({origin}) must be a subclass of {base.__module__}.{base.__qualname__} "
                f"(import it from holistic.plugin); got {obj!r}"
            )
        return cast(T, obj)

    def add(self, name: str, obj: T) -> None:
        if name in self._items and self._items[name] is not obj:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        origin = obj.__module__ if isinstance(obj, type) else type(obj).__module__
        self._items[name] = self._check(name, obj, origin)
        self._lazy.pop(name, None)

    def add_declared(self, obj: T, decorator: str) -> T:
        """Register a class under the name it declares (``name_of``): what ``@decorator`` does.
        Anything but a class of the base, or a class declaring no name, is a clear error."""
        if not isinstance(obj, type):
            raise RegistrationError(
                f"@{decorator} takes the class itself, not {obj!r}: the name is the one the class declares "
                f"(write @{decorator}, not @{decorator}(...))"
            )
        self._check(obj.__qualname__, obj, obj.__module__)
        name = self.name_of(obj) if self.name_of is not None else None
        if not isinstance(name, str) or not name:
            raise RegistrationError(f"{self.kind} {obj.__module__}.{obj.__qualname__} declares no name")
        self.add(name, cast(T, obj))
        return obj

    def _load_entry_points(self) -> None:
        if self._loaded_entry_points:
            return
        self._loaded_entry_points = True
        assert self.group is not None
        for name, value in _installed_entry_points().get(self.group, ()):
            if name not in self._items and name not in self._lazy:
                self._lazy[name] = value

    def _resolve(self, name: str) -> None:
        target = self._lazy.get(name)
        if target is None or name in self._items:
            return
        obj = load_object(target)
        # Importing the module may have registered it already (a module that also uses the decorator).
        if name not in self._items:
            self._items[name] = self._check(name, obj, target)
            self._check_name(name, obj, target)
        self._lazy.pop(name, None)

    def _check_name(self, name: str, obj: object, origin: str) -> None:
        """A table's or an entry point's key is the name the class declares (what the
        decorators register it under)."""
        declared = self.name_of(obj) if self.name_of is not None else name
        if declared != name:
            raise RegistrationError(
                f"{self.kind} {name!r} ({origin}) declares the name {declared!r}: an entry point's or a table's "
                "name must be the one the class declares"
            )

    def pending(self, name: str) -> str | None:
        """The ``"module:attribute"`` a name is declared with while it is not imported yet."""
        return None if name in self._items else self._lazy.get(name)

    def get(self, name: str) -> T:
        if name not in self._items and name not in self._lazy:
            self._load_entry_points()
        self._resolve(name)
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None

    def __contains__(self, name: object) -> bool:
        if name not in self._items and name not in self._lazy:
            self._load_entry_points()
        return name in self._items or name in self._lazy

    def names(self) -> list[str]:
        """Every registered name (nothing is imported)."""
        self._load_entry_points()
        return sorted({*self._items, *self._lazy})

    def load_all(self) -> dict[str, T]:
        """Import every registered object: name -> object."""
        return {name: self.get(name) for name in self.names()}

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
