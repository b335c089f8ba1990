"""Run-spec files are read by the located-YAML loader :mod:`holistic.core.located_yaml`
(the same one model files use); these are its names as the spec modules know them."""

from __future__ import annotations

from holistic.core.located_yaml import (
    KEY,
    DocPath,
    Location,
    Locations,
    PathPart,
    Source,
    format_path,
    load_source,
    parse_source,
)

__all__ = [
    "KEY",
    "DocPath",
    "Location",
    "Locations",
    "PathPart",
    "Source",
    "format_path",
    "load_source",
    "parse_source",
]
