"""What every test shares: the markers that name what a test needs, and the data mirror.

Markers (registered in pyproject.toml, ``--strict-markers``): ``real_model`` (the embedded model
or another real model's weights), ``browser`` (Chromium through Playwright), ``sandbox``
(bubblewrap), ``server`` (a model server in another process), ``needs_data`` (the data mirror),
``needs_peer`` (a peer tool's own environment, e.g. HELM's), and ``slow``. A test carrying
``real_model``, ``browser`` or ``server`` is also ``slow``, so ``-m "not slow"`` leaves them out;
a test taking the ``data_root``, ``page`` or ``sandbox`` fixture gets the marker of that need.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from tests.support.data import DATA_MISSING, find_data_root, skip_without_data

HEAVY = ("real_model", "browser", "server")
"""Needs that make a test slow: the fast loop (``make test-fast``) leaves them out."""
OTHER_NEEDS = ("real_model", "browser", "sandbox", "server", "needs_peer")
BY_FIXTURE = {"data_root": "needs_data", "browser": "browser", "page": "browser", "sandbox": "sandbox"}
"""A test that takes one of these fixtures (directly or through another) has the need it names."""


def pytest_configure(config: pytest.Config) -> None:
    """On parallel workers (pytest-xdist), the cores are shared out: each worker's PyTorch (and
    every process it starts, which inherits the setting) uses its share of them. Workers that each
    ran one thread per core would together run more threads than there are cores, and PyTorch's
    threads wait for each other at every operation: a real-model test then takes many times as long."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and "OMP_NUM_THREADS" not in os.environ:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        os.environ["OMP_NUM_THREADS"] = str(max(1, cores // max(1, int(workers))))


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        for fixture, need in BY_FIXTURE.items():
            if fixture in fixtures and item.get_closest_marker(need) is None:
                item.add_marker(need)
        if any(item.get_closest_marker(name) for name in HEAVY):
            item.add_marker(pytest.mark.slow)
    # The files holding slow tests first: ``make test`` runs files on parallel workers
    # (pytest-xdist, ``--dist loadfile``), and a long file dealt out last would keep one
    # worker busy alone at the end. Otherwise the order of collection is kept.
    heavy = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in heavy)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    """A ``needs_data`` test that skips while the data mirror is present fails instead: for want of
    data always, for another reason unless the test also needs something else (a browser, a peer
    ...) that may be what is missing."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not report.skipped or item.get_closest_marker("needs_data") is None:
        return
    mirror = find_data_root()
    if mirror is None or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if DATA_MISSING in reason or not any(item.get_closest_marker(name) for name in OTHER_NEEDS):
        report.outcome = "failed"
        report.longrepr = f"a needs_data test skipped although the data mirror is present ({mirror}): {reason}"


@pytest.fixture(autouse=True, scope="session")
def _summarize_cache_secret(tmp_path_factory: pytest.TempPathFactory) -> Generator[None, None, None]:
    """helm-summarize's output cache signs its entries with a secret in the user's cache folder: the
    tests keep theirs in a folder of their own."""
    import os

    from holistic.results.output_cache import KEY_FILE_ENV

    before = os.environ.get(KEY_FILE_ENV)
    os.environ[KEY_FILE_ENV] = str(tmp_path_factory.mktemp("summarize-cache-secret") / "key")
    yield
    if before is None:
        os.environ.pop(KEY_FILE_ENV, None)
    else:
        os.environ[KEY_FILE_ENV] = before


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The data mirror (``$HOLISTIC_DATA_ROOT`` or ``../shared/data``); the test skips without it."""
    root = find_data_root()
    if root is None:
        skip_without_data("the data mirror")
    return root
