"""Import a vendor SDK (``openai``, ``anthropic``) without loading aiohttp for a transport holistic
never uses.

Both SDKs vendor an aiohttp transport and import it (and aiohttp with it) as soon as the SDK is
imported, whenever aiohttp is installed, only to offer ``DefaultAioHttpClient``. aiohttp is installed
beside many packages (``datasets``, ``s3fs``...), and importing it takes about 0.1 s: an eighth of a
one-request run against an API server. holistic's clients send through their own bounded HTTP
transport (:mod:`holistic.models.http_bounds`), so :func:`aiohttp_on_demand` imports the SDK with
that transport reported missing, then puts back an SDK ``DefaultAioHttpClient`` that imports the
transport when it is first constructed, with the SDK's own defaults (its timeout, connection limits
and redirects). Only ``isinstance`` against ``DefaultAioHttpClient`` differs: the object built is
the aiohttp client class itself.

Nothing changes when the SDK was already imported (by the user's code, say), when aiohttp is not
installed, or on an SDK version without the vendored transport.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _transport(package: str) -> str:
    return f"{package}._vendor.httpx_aiohttp"


@contextmanager
def aiohttp_on_demand(package: str) -> Iterator[None]:
    """Around ``import package``: the SDK's aiohttp transport is imported only when first used."""
    name = _transport(package)
    if package in sys.modules or name in sys.modules or importlib.util.find_spec("aiohttp") is None:
        yield
        return
    sys.modules[name] = None  # type: ignore[assignment]  # the import system's "not importable" mark
    try:
        yield
    finally:
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]
    if package in sys.modules and importlib.util.find_spec(name) is not None:
        _restore(package)


def _restore(package: str) -> None:
    """Point the SDK's ``DefaultAioHttpClient`` at a class building its aiohttp client on demand."""
    base = sys.modules.get(f"{package}._base_client")
    stand_in = getattr(base, "DefaultAioHttpClient", None)
    if base is None or not isinstance(stand_in, type):
        return

    class DefaultAioHttpClient(stand_in):  # type: ignore[misc,valid-type]
        __doc__ = stand_in.__doc__

        def __new__(cls, **kwargs: Any) -> Any:
            return aiohttp_client_class(package, stand_in)(**kwargs)

    DefaultAioHttpClient.__module__ = base.__name__
    DefaultAioHttpClient.__qualname__ = DefaultAioHttpClient.__name__
    for module in (base, sys.modules.get(package)):
        if module is not None and getattr(module, "DefaultAioHttpClient", None) is stand_in:
            module.DefaultAioHttpClient = DefaultAioHttpClient  # type: ignore[attr-defined]


@functools.cache
def aiohttp_client_class(package: str, stand_in: type) -> type:
    """The SDK's aiohttp client: its vendored transport's client with the SDK's defaults (the
    ``stand_in`` that says aiohttp is missing when the transport cannot be imported)."""
    try:
        transport = importlib.import_module(_transport(package))
    except ImportError:
        return stand_in
    base = sys.modules[f"{package}._base_client"]
    client: type = transport.Httpx2AiohttpClient
    defaults = {
        "timeout": base.DEFAULT_TIMEOUT,
        "limits": base.DEFAULT_CONNECTION_LIMITS,
        "follow_redirects": True,
    }

    class AioHttpClient(client):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            for key, value in defaults.items():
                kwargs.setdefault(key, value)
            super().__init__(**kwargs)

    AioHttpClient.__module__ = base.__name__
    AioHttpClient.__qualname__ = AioHttpClient.__name__
    return AioHttpClient
