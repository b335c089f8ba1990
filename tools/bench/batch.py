"""Batch mode at scale: ``--requests`` requests (default 20,000) through the batch path.

A loopback server that speaks OpenAI's Batch API (:mod:`tests.support.batch_server`; 127.0.0.1
only, bounded, it stops by itself) runs in a process of its own, so this process measures the
client alone: holistic's serving (:func:`holistic.execution.serving.serve`: the request cache
looked up, answers checked and written) with an ``openai`` deployment in batch mode
(:class:`holistic.models.batch_client.BatchClient`): the lines written to disk, uploaded,
the batch polled, its results file streamed back, every answer read by the online client's
own code and written to the request cache.

Reported: the client's wall time (the server's share of it included: it answers a batch at
its first look), its CPU time, and its peak memory (the process's maximum resident set).
Targets: under 60 s of client time and under 600 MB peak for 20,000 requests.

    python -m tools.bench.batch                      # 20,000 requests
    python -m tools.bench.batch --requests 200       # a quick check
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.bench.docs import add_docs_option, finish

TARGET_S = 60.0
TARGET_MB = 600.0


def _serve(queue: Any, stop: Any) -> None:
    from tests.support.batch_server import BatchServer

    with BatchServer(polls_to_end=1, max_requests=1_000_000, deadline_s=3600) as server:
        queue.put(server.openai_url)
        stop.wait(3600)


def run(n: int) -> dict[str, Any]:
    """Push ``n`` requests through the batch path; the figures."""
    from holistic.core.types import Capabilities, Instance, ModelDeployment, Reference, Request, RequestState
    from holistic.execution.serving import serve
    from holistic.models.batch_client import BatchClient
    from holistic.models.cache import RequestCache
    from holistic.models.openai_client import OpenAIClient

    ctx = multiprocessing.get_context("spawn")
    queue, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=_serve, args=(queue, stop), daemon=True)
    server.start()
    try:
        url = queue.get(timeout=120)
        os.environ.setdefault("BENCH_BATCH_KEY", "sk-bench-0123456789abcdef")
        deployment = ModelDeployment(
            name="bench/batch",
            provider="openai",
            model_id="bench",
            args={"base_url": url, "batch": True, "batch_poll_s": 0.2},
            capabilities=Capabilities(chat=True, completions=True, logprobs=True),
            api_key_env="BENCH_BATCH_KEY",
        )
        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            folder = Path(tmp)
            cache = RequestCache(folder / "requests.sqlite")
            states = [
                RequestState(
                    instance=Instance(id=f"id{i}", input=f"q{i}", references=(Reference(output=str(i + 1)),)),
                    request=Request(
                        model=deployment.name, prompt=f"Question {i}: what comes after {i}?\nAnswer:", max_tokens=4
                    ),
                )
                for i in range(n)
            ]
            said: list[str] = []
            started, cpu = time.perf_counter(), time.process_time()
            client = BatchClient(OpenAIClient(deployment), folder=folder, cache=cache, notify=said.append)
            out, _, stats = serve(states, client, cache, batch_size=client.request_batch_size)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            client.close()
            cache.close()
    finally:
        stop.set()
        server.join(timeout=30)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    answered = sum(1 for s in out if s.result is not None and s.result.success and s.result.batch)
    return {
        "requests": n,
        "answered_by_batch": answered,
        "failed": stats.failed,
        "client_wall_s": round(wall, 2),
        "client_cpu_s": round(cpu, 2),
        "peak_rss_mb": round(peak_mb, 1),
        "targets": {"client_s": TARGET_S, "peak_mb": TARGET_MB},
        "met": bool(answered == n and wall < TARGET_S and peak_mb < TARGET_MB),
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20_000, help="requests to send (default 20,000)")
    add_docs_option(parser)
    args = parser.parse_args(argv)
    report = run(args.requests)
    return finish("batch", report, args.write_docs)


if __name__ == "__main__":
    sys.exit(main())
