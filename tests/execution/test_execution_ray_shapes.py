"""Resources a Ray task declares for a run, and the cluster-wide budget of API models."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.execution.ray_executor import RayConnectionError, probe_address, task_shape
from holistic.models.registry import ModelRegistry


def _registry(tmp_path: Path) -> ModelRegistry:
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n"
        "  - name: openai/served\n    provider: openai\n    model_id: m\n"
        "    args: {base_url: 'http://127.0.0.1:8000/v1', max_concurrency: 10}\n"
        "  - name: openai/unbounded\n    provider: openai\n    model_id: m\n"
        "    args: {base_url: 'http://127.0.0.1:8000/v1'}\n",
        encoding="utf-8",
    )
    return ModelRegistry(path)


def test_local_models_take_a_cpu_and_api_models_none(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    local = task_shape(registry.get("embedded/smollm2-135m-instruct"), concurrency=4)
    assert (local.num_cpus, local.num_gpus, local.threads, local.group) == (1, 0, 1, None)
    api = task_shape(registry.get("openai/unbounded"), concurrency=4)
    assert (api.num_cpus, api.threads, api.group) == (0, 4, None)


def test_api_budget_bounds_runs_in_flight_times_threads(tmp_path: Path) -> None:
    served = _registry(tmp_path).get("openai/served")
    shape = task_shape(served, concurrency=4)
    assert shape.group == "openai/served" and shape.threads == 4 and shape.slots == 2
    assert shape.slots * shape.threads <= 10
    wide = task_shape(served, concurrency=32)  # -j above the budget: one run, budget threads
    assert (wide.threads, wide.slots) == (10, 1)


@pytest.mark.parametrize("address", ["ray://:6379", "127.0.0.1:notaport"])
def test_malformed_addresses_are_named(address: str) -> None:
    with pytest.raises(RayConnectionError, match="--address"):
        probe_address(address)
