"""Counting a function's calls in a test (what it was called with), the function still doing its work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def record_calls(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, what: Callable[..., Any] = lambda first, *_: first
) -> list[Any]:
    """Replace ``owner.name`` for the test with a wrapper that notes ``what(*args)`` of each call."""
    calls: list[Any] = []
    real = getattr(owner, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(what(*args))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls
