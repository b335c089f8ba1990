"""Making what lives as long as a program without the garbage collector walking it again and again.

A short ``helm-run`` spends much of its start importing (the model's SDK, torch) and building what
it keeps to the end: modules, classes, a compiled spec, a model's weights and code. While the heap
grows like this, CPython's generational collector keeps scanning it, full collections included,
though nothing in it is garbage: on the one-request benchmarks that is a tenth of the run's time.

:func:`long_lived` pauses the collector while such objects are made and then *freezes* everything
alive (``gc.freeze``): later collections skip those objects, so each walks only what the run itself
allocates afterwards. Reference counting still frees everything as usual; only reference cycles
that exist at the moment of freezing wait. So it is used around the few steps that make the
program's long-lived objects (preparing the runs, making a model's client, building a local
engine), never around the run's own work, and only inside :func:`program`: a command-line
program's whole run, at whose end everything frozen is handed back to the collector, unless the
process ends with it (then the interpreter's last collection, as it exits, skips the frozen
objects too). Called from the Python API in a longer-lived process (a notebook, a test
session), the collector is left alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_in_program = False


@contextmanager
def program(*, ends_process: bool) -> Iterator[None]:
    """A command-line program's run: :func:`long_lived` blocks inside take effect, and at the end
    what they froze is unfrozen, unless ``ends_process`` (the process exits right after, as when
    started from the command line); a process that goes on, such as a test calling ``main``, is
    left as it was. Nested, it changes nothing."""
    global _in_program
    if _in_program:
        yield
        return
    frozen_before = gc.get_freeze_count()
    _in_program = True
    try:
        yield
    finally:
        _in_program = False
        if frozen_before == 0 and not ends_process:
            gc.unfreeze()


@contextmanager
def long_lived() -> Iterator[None]:
    """The block makes objects that live as long as the program: no collection while it runs,
    and what it made (with everything else alive) frozen out of later collections.

    Outside :func:`program`, nested, or with collection already turned off, it changes nothing:
    only the outermost block, when collection was on, freezes and turns it back on, even if the
    block raised.
    """
    if not _in_program or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
