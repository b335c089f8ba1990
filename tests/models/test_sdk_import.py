"""The vendor SDKs imported without aiohttp (:mod:`holistic.models.sdk_import`): a run against an
API server does not pay for the SDKs' aiohttp transport, and a user asking the SDK for that
transport gets the same client as when the SDK imported it itself (built, subclassed, checked
with ``isinstance``). Each case runs in a fresh interpreter: what is imported is the point."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SDKS = [sdk for sdk in ("openai", "anthropic") if importlib.util.find_spec(sdk) is not None]

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("aiohttp") is None, reason="aiohttp is not installed here"),
    pytest.mark.skipif(not SDKS, reason="neither the openai nor the anthropic SDK is installed"),
]

DESCRIBE = r"""
import json, sys
def describe(sdk):
    cls = sdk.DefaultAioHttpClient
    client = cls()
    told = cls(timeout=7.0, follow_redirects=False)
    return {
        "bases": [k.__module__ + "." + k.__name__ for k in type(client).__mro__[1:]],
        "transport": type(client._transport).__name__,
        "timeout": repr(client.timeout),
        "redirects": client.follow_redirects,
        "limits": repr(client._transport.limits),
        "told": [repr(told.timeout), told.follow_redirects],
        "same_in_base": sys.modules[sdk.__name__ + "._base_client"].DefaultAioHttpClient is cls,
        "from_import": __import__(sdk.__name__, fromlist=["DefaultAioHttpClient"]).DefaultAioHttpClient is cls,
        "isinstance": isinstance(client, cls),
        "subclass": subclassed(cls),
        "missing": missing(sdk),
    }

def subclassed(cls):
    class Mine(cls):
        def marked(self):
            return "mine"
    client = Mine()
    return [type(client).__name__, client.marked(), client.follow_redirects, isinstance(client, cls)]

def missing(sdk):
    try:
        getattr(sdk, "NoSuchName")
    except AttributeError as error:
        return str(error)
"""


def _probe(code: str, sdk: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", DESCRIBE + code, sdk],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    facts: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return facts


@pytest.mark.parametrize("sdk", SDKS)
def test_holistic_client_imports_no_aiohttp_and_the_sdk_aiohttp_client_is_unchanged(sdk: str) -> None:
    ours = _probe(
        "import importlib; importlib.import_module(f'holistic.models.{sys.argv[1]}_client')\n"
        "before = 'aiohttp' in sys.modules\n"
        "sdk = sys.modules[sys.argv[1]]\n"
        "print(json.dumps({'aiohttp_before_use': before, **describe(sdk), 'aiohttp_after_use': 'aiohttp' in sys.modules}))",
        sdk,
    )
    theirs = _probe(
        "import importlib; sdk = importlib.import_module(sys.argv[1])\n"
        "before = 'aiohttp' in sys.modules\n"
        "print(json.dumps({'aiohttp_before_use': before, **describe(sdk), 'aiohttp_after_use': True}))",
        sdk,
    )
    assert theirs["aiohttp_before_use"] is True  # the SDK on its own imports aiohttp as it loads
    assert ours["aiohttp_before_use"] is False  # through holistic it does not, until asked for it
    assert ours["aiohttp_after_use"] is True
    assert ours["transport"] == theirs["transport"] == "AiohttpTransport"
    facts = (
        "timeout",
        "redirects",
        "limits",
        "told",
        "same_in_base",
        "from_import",
        "isinstance",
        "subclass",
        "missing",
    )
    for fact in facts:  # the SDK's defaults, the caller's arguments, a subclass, the module's other names
        assert ours[fact] == theirs[fact], fact
    assert ours["bases"] == theirs["bases"]  # the SDK's aiohttp client class, under the SDK's name


@pytest.mark.parametrize("sdk", SDKS)
def test_an_sdk_the_user_imported_first_is_left_as_it_is(sdk: str) -> None:
    facts = _probe(
        "import importlib; sdk = importlib.import_module(sys.argv[1]); mine = sdk.DefaultAioHttpClient\n"
        "importlib.import_module(f'holistic.models.{sys.argv[1]}_client')\n"
        "print(json.dumps({'same': sdk.DefaultAioHttpClient is mine, 'blocked': sys.modules.get(sdk.__name__ + '._vendor.httpx_aiohttp') is None}))",
        sdk,
    )
    assert facts == {"same": True, "blocked": False}


def test_openai_lazy_exports_still_answer_after_the_import() -> None:
    if "openai" not in SDKS:
        pytest.skip("the openai SDK is not installed")
    facts = _probe(
        "import holistic.models.openai_client, openai\n"
        "print(json.dumps({'handler': openai.AssistantEventHandler.__name__, 'aiohttp': 'aiohttp' in sys.modules}))",
        "openai",
    )
    # openai's own lazy name still answers, through its __getattr__ behind holistic's
    assert facts == {"handler": "AssistantEventHandler", "aiohttp": False}
