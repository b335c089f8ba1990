"""A small named registry with entry-point discovery for third-party packages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from holistic.core.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to objects (usually classes or factories).

    ``group`` is the Python entry-point group third-party packages use, e.g.
    ``holistic.scenarios``; entry points are loaded lazily on first lookup.
    """

    def __init__(self, kind: str, group: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self._items: dict[str, T] = {}
        self._loaded_entry_points = group is None

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorator

    def add(self, name: str, obj: T) -> None:
        if name in self._items and self._items[name] is not obj:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj

    def _load_entry_points(self) -> None:
        if self._loaded_entry_points:
            return
        self._loaded_entry_points = True
        assert self.group is not None
        for ep in entry_points(group=self.group):
            if ep.name not in self._items:
                self._items[ep.name] = ep.load()

    def get(self, name: str) -> T:
        if name not in self._items:
            self._load_entry_points()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._items) from None

    def __contains__(self, name: object) -> bool:
        if name not in self._items:
            self._load_entry_points()
        return name in self._items

    def names(self) -> list[str]:
        self._load_entry_points()
        return sorted(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
