"""Canonical JSON and hashing: the basis of run ids and cache keys."""

from __future__ import annotations

import hashlib
import json
from typing import IO, Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no whitespace, UTF-8 kept as is; tuples become lists."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def stream_sha256(stream: IO[bytes]) -> str:
    """SHA-256 (hex) of what is left to read in a binary stream, read a megabyte at a time."""
    digest = hashlib.sha256()
    for block in iter(lambda: stream.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def short_hash(text: str, length: int = 10) -> str:
    return sha256_hex(text)[:length]


def stable_seed(*parts: Any) -> int:
    """A 63-bit seed derived from the parts (spec seed, instance id, purpose...).

    Never depends on global state, the clock or Python's salted ``hash``.
    """
    digest = hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1
