"""``long_lived``: inside a program's run, no collection while its long-lived objects are made,
then those objects frozen out of later collections, and at the program's end all of it undone;
outside a program (the Python API in a notebook, a test session), the collector left alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from holistic.core.long_lived import long_lived, program


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.unfreeze()
    yield
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def _collected_ids() -> set[int]:
    return {id(o) for generation in range(3) for o in gc.get_objects(generation=generation)}


def test_in_a_program_no_collection_inside_then_what_was_made_is_frozen_until_the_program_ends() -> None:
    gc.enable()
    with program(ends_process=False):
        with long_lived():
            assert not gc.isenabled()
            kept = [[i] for i in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(kept)
        assert not {id(x) for x in kept} & _collected_ids()  # no collection walks them again
    assert gc.get_freeze_count() == 0  # handed back to the collector: the process goes on as before
    assert {id(x) for x in kept} <= _collected_ids()


def test_a_program_that_ends_the_process_leaves_its_objects_frozen() -> None:
    gc.enable()
    with program(ends_process=True), long_lived():
        kept = [[i] for i in range(100)]
    assert not {id(x) for x in kept} & _collected_ids()  # the collection at exit skips them


def test_outside_a_program_the_collector_is_left_alone() -> None:
    gc.enable()
    with long_lived():
        assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_nested_blocks_leave_it_to_the_outermost() -> None:
    gc.enable()
    with program(ends_process=False), long_lived():
        with long_lived():
            pass
        assert not gc.isenabled()  # the inner block did not turn collection back on
    assert gc.isenabled()


def test_collection_turned_off_by_the_program_stays_off() -> None:
    gc.disable()
    with program(ends_process=False):
        with long_lived():
            assert not gc.isenabled()
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0  # nothing frozen either: collection is managed elsewhere


def test_an_error_inside_still_turns_collection_back_on() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), program(ends_process=False), long_lived():
        raise RuntimeError("boom")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
