"""The command-line programs (helm-run, helm-summarize, helm-diff, helm-import, helm-ratings): each maps its
arguments onto one call of the Python API, :mod:`holistic.api`, and prints what it returns."""

import os

# Before any program imports pyarrow, which chooses its allocator once, on import: its default
# one (mimalloc) reserves about 1 GB of address space at once, so under a limit on it (ulimit -v,
# a container's) every program failed before doing anything. The system allocator reserves what
# is used. A user's own setting wins.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
