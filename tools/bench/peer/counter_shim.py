"""Counts the model's forward passes and padded positions in a peer's process, then hands over to
the peer's own command line; runs in the peer's interpreter::

    BENCH_COUNTS=counts.json <peer venv>/bin/python counter_shim.py MODULE [ARGS...]

writes ``{"forward_calls", "padded_positions"}`` to ``$BENCH_COUNTS`` at exit.
"""

import atexit
import json
import os
import runpy
import sys

import torch

counts = {"forward_calls": 0, "padded_positions": 0}
original = torch.nn.Module.__call__


def counting(self, *args, **kwargs):
    if type(self).__name__.endswith("ForCausalLM"):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is not None:
            counts["forward_calls"] += 1
            counts["padded_positions"] += int(ids.numel())
    return original(self, *args, **kwargs)


torch.nn.Module.__call__ = counting


def write_counts() -> None:
    with open(os.environ["BENCH_COUNTS"], "w", encoding="utf-8") as fh:
        fh.write(json.dumps(counts))


atexit.register(write_counts)
module = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
