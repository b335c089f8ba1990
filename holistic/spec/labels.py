"""A run entry's own ``name:``: the name its runs are shown by on the site, in ``--plan`` and in
helm-run's closing scores (instead of the name made from their facts, :mod:`holistic.core.naming`).

The rules (the spec-language reference, ``docs/run-specs.md``, states them for users):

- letters, digits, spaces and ``. _ - + = : , / ( ) [ ] @``, starting with a letter or digit
  (the schema says so), with ``{key}`` placeholders: ``key`` is one of the scenario's arguments,
  an adaptation field or ``model``, filled with each run's value;
- an entry that makes several runs (a list-valued argument or adaptation field, several models)
  gives each run the name followed by what tells its runs apart and the name does not mention:
  ``name (arg=value, ...) · model [field=value, ...]``, each part only when it varies;
- names are unique in a suite after expansion (against every other run's name too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from holistic.core.located_yaml import DocPath, Locations
from holistic.core.naming import RunFacts, titles, value_text
from holistic.core.specs import ADAPTER_FIELDS, AdapterSpec, RunSpec

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class EntryName:
    """The ``name:`` of one run entry, checked once; :meth:`of` names each of the entry's runs."""

    def __init__(
        self,
        text: str,
        at: DocPath,
        locations: Locations,
        *,
        args: Sequence[str],
        varying_args: Iterable[str],
        varying_fields: Iterable[str],
        several_models: bool,
    ) -> None:
        self.text = text
        if text != " ".join(text.split()):
            raise locations.error(
                at, f"name {text!r}: spaces only one at a time and between words (no tabs or line breaks)"
            )
        keys = _placeholders(text, at, locations)
        unknown = [k for k in keys if k != "model" and k not in args and k not in ADAPTER_FIELDS]
        if unknown:
            known = ", ".join(sorted(args)) or "none"
            raise locations.error(
                at,
                f"name {text!r}: {{{unknown[0]}}} is neither an argument of the scenario (its arguments here: "
                f"{known}), an adaptation field nor {{model}}",
            )
        self.keys = keys
        self.suffix_args = [k for k in sorted(varying_args) if k not in keys]
        self.suffix_fields = [k for k in sorted(varying_fields) if k not in keys]
        self.suffix_model = several_models and "model" not in keys

    def base(self, args: Mapping[str, Any], adapter: AdapterSpec, model: str) -> str:
        """The name with its placeholders filled (the label run names begin with)."""

        def value(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "model":
                return model
            return value_text(args[key] if key in args else adapter.value_of(key))

        return _PLACEHOLDER.sub(value, self.text)

    def of(self, args: Mapping[str, Any], adapter: AdapterSpec, model: str) -> str:
        """One run's name: the filled name, then what tells the entry's runs apart."""
        out = self.base(args, adapter, model)
        if self.suffix_args:
            out += " (" + ", ".join(f"{k}={value_text(args.get(k))}" for k in self.suffix_args) + ")"
        if self.suffix_model:
            out += f" · {model}"
        if self.suffix_fields:
            out += " [" + ", ".join(f"{k}={value_text(adapter.value_of(k))}" for k in self.suffix_fields) + "]"
        return out


def entry_name(
    entry: Mapping[str, Any],
    at: DocPath,
    locations: Locations,
    arg_axes: Sequence[tuple[str, Sequence[Any]]],
    adapt_axes: Sequence[tuple[str, Sequence[Any]]],
    several_models: bool,
) -> EntryName | None:
    """The entry's checked ``name:`` (``None`` when it has none); the axes are its lists of values."""
    if "name" not in entry:
        return None
    return EntryName(
        str(entry["name"]),
        (*at, "name"),
        locations,
        args=[key for key, _ in arg_axes],
        varying_args=[key for key, values in arg_axes if len(values) > 1],
        varying_fields=[key for key, values in adapt_axes if len(values) > 1],
        several_models=several_models,
    )


def _placeholders(text: str, at: DocPath, locations: Locations) -> tuple[str, ...]:
    keys = tuple(_PLACEHOLDER.findall(text))
    bad = next((k for k in keys if not _KEY.fullmatch(k)), None)
    if bad is not None:
        raise locations.error(
            at, f"name {text!r}: {{{bad}}} is not a placeholder; write {{argument}}, {{field}} or {{model}}"
        )
    if "{" in _PLACEHOLDER.sub("", text) or "}" in _PLACEHOLDER.sub("", text):
        raise locations.error(at, f"name {text!r}: a brace that opens or closes no placeholder ({{key}})")
    return keys


def check_run_names(runs: Sequence[tuple[RunSpec, int]], locations: Locations) -> None:
    """Raise :class:`SpecError` at the ``name:`` of an entry whose run has the name another run of
    the suite has too (``runs``: the expanded runs with the index of their entry)."""
    if not any(run.label is not None for run, _ in runs):
        return
    names = titles([RunFacts.of_run(run) for run, _ in runs])
    first: dict[str, tuple[RunSpec, int]] = {}
    for run, entry in runs:
        name = names[run.run_id]
        if name not in first:
            first[name] = (run, entry)
            continue
        other, other_entry = first[name]
        if run.label is None and other.label is None:
            continue  # two unnamed runs: their names get their ids' hashes
        named = entry if run.label is not None else other_entry
        where = "another run of the same entry" if entry == other_entry else f"a run of runs[{other_entry}]"
        raise locations.error(
            ("runs", named, "name"),
            f"run name {name!r} is also the name of {where}; names must be unique in a suite "
            "(put what differs in the name, e.g. {argument})",
        )
