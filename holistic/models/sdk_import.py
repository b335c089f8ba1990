"""Import a vendor SDK (``openai``, ``anthropic``) without loading aiohttp for a transport holistic
never uses.

Both SDKs vendor an aiohttp transport and import it (and aiohttp with it) as soon as the SDK is
imported, whenever aiohttp is installed, only to offer ``DefaultAioHttpClient``. aiohttp is installed
beside many packages (``datasets``, ``s3fs``...), and importing it takes about 0.1 s: an eighth of a
one-request run against an API server. holistic's clients send through their own bounded HTTP
transport (:mod:`holistic.models.http_bounds`), so :func:`aiohttp_on_demand` imports the SDK with
that transport reported missing, then takes the SDK's stand-in ``DefaultAioHttpClient`` (which would
say aiohttp is not installed) out of its modules. Asked for it (``openai.DefaultAioHttpClient``,
``from openai import DefaultAioHttpClient``), the SDK then imports the transport and answers with
the same client class as its own: the vendored client with the SDK's defaults (timeout, connection
limits, redirects), which can be subclassed and checked with ``isinstance`` as before.

Nothing changes when the SDK was already imported (by the user's code, say), when aiohttp is not
installed, or on an SDK version without the vendored transport.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from holistic.core.extras import absent, importable

CLIENT = "DefaultAioHttpClient"
"""The SDKs' name for their aiohttp client class."""


def _transport(package: str) -> str:
    return f"{package}._vendor.httpx_aiohttp"


@contextmanager
def aiohttp_on_demand(package: str) -> Iterator[None]:
    """Around ``import package``: the SDK's aiohttp transport is imported only when first used."""
    name = _transport(package)
    if package in sys.modules or name in sys.modules or not importable("aiohttp"):
        yield
        return
    with absent(name):
        yield
    if package in sys.modules and importable(name):
        _restore(package)


def _restore(package: str) -> None:
    """Take the SDK's stand-in ``DefaultAioHttpClient`` (which says aiohttp is missing) out of the
    SDK's modules; a module ``__getattr__`` builds the real class when it is first asked for."""
    base = sys.modules.get(f"{package}._base_client")
    found = getattr(base, CLIENT, None)
    if not isinstance(found, type):
        return
    stand_in: type = found
    for module in (base, sys.modules.get(package)):
        if module is not None and vars(module).get(CLIENT) is found:
            previous = vars(module).get("__getattr__")
            del vars(module)[CLIENT]
            vars(module)["__getattr__"] = _on_demand(module, package, stand_in, previous)


def _on_demand(
    module: ModuleType, package: str, stand_in: type, previous: Callable[[str], Any] | None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) answering ``DefaultAioHttpClient``, and passing any other
    missing name to the module's own ``__getattr__``."""

    def __getattr__(name: str) -> Any:
        if name == CLIENT:
            value = aiohttp_client_class(package, stand_in)
            vars(module)[CLIENT] = value  # found at once from now on
            return value
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    return __getattr__


@functools.cache
def aiohttp_client_class(package: str, stand_in: type) -> type:
    """The SDK's aiohttp client class: its vendored transport's client with the SDK's defaults (or
    the ``stand_in`` that says aiohttp is missing, when the transport cannot be imported)."""
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

    class DefaultAioHttpClient(client):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            for key, value in defaults.items():
                kwargs.setdefault(key, value)
            super().__init__(**kwargs)

    DefaultAioHttpClient.__module__ = base.__name__
    DefaultAioHttpClient.__qualname__ = CLIENT
    DefaultAioHttpClient.__doc__ = stand_in.__doc__
    return DefaultAioHttpClient
