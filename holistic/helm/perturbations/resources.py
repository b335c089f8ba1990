"""HELM's perturbation resources, obtained the way HELM obtains them and pinned by sha256.

HELM 0.5.16 reads two resources that holistic does not ship:

- the SAE -> AAVE dictionary of its ``dialect`` perturbation (Ziems et al., 2022,
  "VALUE"). HELM downloads a JSON conversion of the authors' dictionary that is not
  published anywhere holistic can reach; holistic downloads the authors' original
  (``resources/sae_aave_mapping_dict.pkl`` of ``GT-SALT/value``, pinned by commit and
  sha256), reads it with an unpickler that refuses every class (the file holds only a
  ``dict`` of ``set`` of ``str``), and writes it as JSON ``{key: sorted(values)}``;
- the gender word lists of its ``gender`` perturbation, which HELM keeps in its source
  (``GENDER_TERM_MAPPINGS`` and ``GENDER_PRONOUN_MAPPINGS`` in
  ``helm/benchmark/augmentations/gender_perturbation.py``). holistic downloads that file
  at HELM's ``v0.5.16`` commit and reads the two literals with ``ast.literal_eval``
  (never executing it).

Each resource is looked for, in order, in the data root (``--data-root`` /
``HOLISTIC_DATA_ROOT``) under ``helm_perturbations/``, then in the download cache
(``~/.cache/holistic/data/helm_perturbations/``), then downloaded into the cache
(never when offline). Wherever it is found, its sha256 must be the pinned one.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import pickle
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError

FOLDER = "helm_perturbations"
DATA_ROOT_ENV = "HOLISTIC_DATA_ROOT"
CACHE_ENV = "HOLISTIC_CACHE_DIR"
_TIMEOUT_S = 60.0
_MAX_BYTES = 4 << 20
"""Largest download accepted (both sources are a few kilobytes)."""


@dataclass(frozen=True)
class HelmResource:
    """One file under ``helm_perturbations/`` and how to make it from its published source."""

    path: str
    """Path under ``helm_perturbations/`` (POSIX)."""
    sha256: str
    """Checksum of the file as holistic reads it."""
    source_url: str
    """Where the published source is downloaded from."""
    source_sha256: str | None
    """Checksum of the downloaded source (``None``: the converted file's pin is the check)."""
    convert: Callable[[bytes], bytes]
    """Published source bytes -> the file's bytes."""


class _NoClassesUnpickler(pickle.Unpickler):
    """Reads only pickles of built-in containers and strings: any class reference is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise DataSourceError(
            f"the SAE->AAVE dictionary refers to {module}.{name}; only dicts, sets and strings are read"
        )


def dialect_json_from_pickle(raw: bytes) -> bytes:
    """The authors' pickled ``dict[str, set[str]]`` as JSON ``{key: sorted(values)}`` (keys sorted)."""
    loaded = _NoClassesUnpickler(io.BytesIO(raw)).load()
    if not isinstance(loaded, dict) or not all(
        isinstance(k, str) and isinstance(v, (set, frozenset, list)) and all(isinstance(x, str) for x in v)
        for k, v in loaded.items()
    ):
        raise DataSourceError("the SAE->AAVE dictionary is not a mapping of words to sets of words")
    table = {k: sorted(v) for k, v in loaded.items()}
    return json.dumps(table, indent=0, sort_keys=True, ensure_ascii=False).encode("utf-8")


_GENDER_LISTS = ("GENDER_TERM_MAPPINGS", "GENDER_PRONOUN_MAPPINGS")
HELM_GENDERS = ("neutral", "female", "male")
"""The column order of HELM's gender tuples."""


def gender_json_from_source(raw: bytes) -> bytes:
    """HELM's two gender lists read from its source file (``ast``, never executed), as JSON."""
    tree = ast.parse(raw.decode("utf-8"))
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in _GENDER_LISTS:
            assert node.value is not None
            rows = ast.literal_eval(node.value)
            out[node.target.id] = {
                "lines": [node.lineno, node.end_lineno],
                "genders": list(HELM_GENDERS),
                "mappings": [list(row) for row in rows],
            }
    if set(out) != set(_GENDER_LISTS):
        raise DataSourceError(f"HELM's gender_perturbation.py does not define {', '.join(_GENDER_LISTS)}")
    return json.dumps({k: out[k] for k in _GENDER_LISTS}, indent=1).encode("utf-8")


DIALECT = HelmResource(
    path="dialect/sae_aave_mapping.json",
    sha256="4e145bfe9310a339302b3f3dfc7993c4503ddcabfc9c30de5f07170b45ebc816",
    source_url="https://raw.githubusercontent.com/GT-SALT/value/4fa1b538a358a2af4462f7073d040b0177bec7e7/"
    "resources/sae_aave_mapping_dict.pkl",
    source_sha256="f248e33c6b32ee1a37380f2c441d09b4e97d912aeb45ecd82a8162de43b2d772",
    convert=dialect_json_from_pickle,
)
GENDER = HelmResource(
    path="gender/helm_gender_mappings.json",
    sha256="bceaf680e095edd73acef3f81beed49b874f4c313f195a5796c7b1912ef89da2",
    source_url="https://raw.githubusercontent.com/stanford-crfm/helm/ef439fc94e58568fd1274d5c07ceb1b711360a55/"
    "src/helm/benchmark/augmentations/gender_perturbation.py",
    source_sha256=None,
    convert=gender_json_from_source,
)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    return (Path(env) if env else Path.home() / ".cache" / "holistic" / "data") / FOLDER


def _places(data_root: Path | None) -> list[Path]:
    root = (
        data_root
        if data_root is not None
        else (Path(os.environ[DATA_ROOT_ENV]) if DATA_ROOT_ENV in os.environ else None)
    )
    return ([root / FOLDER] if root is not None else []) + [_cache_dir()]


def resource_path(resource: HelmResource, data_root: Path | None = None, *, offline: bool = False) -> Path:
    """Where ``resource`` is on disk (found, or downloaded and converted into the cache); checked by sha256."""
    places = _places(data_root)
    for base in places:
        path = base / resource.path
        if path.is_file():
            actual = _sha256(path.read_bytes())
            if actual != resource.sha256:
                raise DataSourceError(
                    f"checksum mismatch for {FOLDER}/{resource.path}: {path} has sha256 {actual}, "
                    f"expected {resource.sha256}; delete it (or fix the mirror) and fetch again"
                )
            return path
    looked = ", ".join(str(base / resource.path) for base in places)
    if offline:
        raise DataSourceError(
            f"HELM's {FOLDER}/{resource.path} not found (looked in {looked}; offline: not downloaded)"
        )
    try:
        with urllib.request.urlopen(resource.source_url, timeout=_TIMEOUT_S) as response:
            raw = response.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise DataSourceError(
            f"HELM's {FOLDER}/{resource.path} not found (looked in {looked}) and downloading "
            f"{resource.source_url} failed: {exc}"
        ) from None
    if len(raw) > _MAX_BYTES:
        raise DataSourceError(f"{resource.source_url} is larger than {_MAX_BYTES} bytes; refused")
    if resource.source_sha256 is not None and _sha256(raw) != resource.source_sha256:
        raise DataSourceError(
            f"checksum mismatch for {resource.source_url}: sha256 {_sha256(raw)}, expected {resource.source_sha256}"
        )
    data = resource.convert(raw)
    if _sha256(data) != resource.sha256:
        raise DataSourceError(
            f"{FOLDER}/{resource.path} made from {resource.source_url} has sha256 {_sha256(data)}, "
            f"expected {resource.sha256}"
        )
    target = _cache_dir() / resource.path
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp:
        tmp.write(data)
    os.replace(tmp.name, target)
    return target


@cache
def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def dialect_mapping(data_root: Path | None = None, *, offline: bool = False) -> dict[str, list[str]]:
    """HELM's SAE -> AAVE dictionary, in the file's key and value order."""
    table: dict[str, list[str]] = _read_json(resource_path(DIALECT, data_root, offline=offline))
    return table


def gender_mappings(mode: str, data_root: Path | None = None, *, offline: bool = False) -> list[tuple[str, ...]]:
    """HELM's gender tuples ``(neutral, female, male)`` for ``terms`` or ``pronouns``, in HELM's order."""
    key = {"terms": "GENDER_TERM_MAPPINGS", "pronouns": "GENDER_PRONOUN_MAPPINGS"}[mode]
    raw = _read_json(resource_path(GENDER, data_root, offline=offline))
    return [tuple(row) for row in raw[key]["mappings"]]
