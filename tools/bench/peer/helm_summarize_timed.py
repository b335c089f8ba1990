"""HELM's own ``helm-summarize`` in this interpreter (HELM's), timed as ``tools.bench.timed_cli`` times holistic's::

    <HELM's python> helm_summarize_timed.py [helm-summarize ARGS...]

prints, on its last line, ``{"seconds", "exit", "peak_rss_mb"}`` as JSON: the seconds from the
start of this program (HELM's imports included) to the end of the summary.
"""

import json
import resource
import sys
import time

start = time.perf_counter()
from helm.benchmark.presentation.summarize import main  # noqa: E402

sys.argv = ["helm-summarize", *sys.argv[1:]]
code = 0
try:
    main()
except SystemExit as stop:
    code = stop.code if isinstance(stop.code, int) else 1
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": time.perf_counter() - start, "exit": code, "peak_rss_mb": peak_mb}), flush=True)
sys.exit(code)
