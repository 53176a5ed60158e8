"""Planning controls from many threads at once (a run verifies several patches together, and
planning runs off the event loop).

CPython 3.11 counts the depth of its AST constructor per interpreter, not per thread: when a
garbage collection inside one thread's parse runs a finalizer that hands the GIL to another
thread's parse, both fail with "SystemError: AST constructor recursion depth mismatch". This
test makes that hand-over happen all the time (a low GC threshold and garbage whose finalizer
yields the GIL and leaves more such garbage), then plans from four threads.
"""

from __future__ import annotations

import gc
import random
import threading
import time

from factory.verify.controls import plan_controls
from tests.verify.test_controls import CORE_TESTS, SOURCES, task

# the hidden test file with many more tests: a parse long enough for threads to meet in it
FILLER = "".join(f"\n\ndef test_more_{i}():\n    assert [{i}, ({i}, {{'k': [{i}]}})] == [{i}, ({i}, {{'k': [{i}]}})]\n"
                 for i in range(300))
LARGE = {**SOURCES, CORE_TESTS: SOURCES[CORE_TESTS] + FILLER}


class _Yielding:
    """Cyclic garbage whose finalizer lets another thread run and leaves its like behind."""

    alive = True

    def __del__(self):
        time.sleep(0)
        if _Yielding.alive:
            _litter()


def _litter() -> None:
    junk = _Yielding()
    junk.cycle = junk


def test_controls_planned_from_many_threads_at_once_all_plan():
    errors: list[BaseException] = []
    plans = []

    def plan_many(seed: int) -> None:
        _litter()
        for round_ in range(6):
            try:
                plans.append(plan_controls(task(), LARGE, random.Random(seed * 100 + round_)))
            except BaseException as exc:  # noqa: BLE001 - every failure is the finding
                errors.append(exc)

    threshold = gc.get_threshold()
    gc.set_threshold(100)
    try:
        threads = [threading.Thread(target=plan_many, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        _Yielding.alive = False
        gc.set_threshold(*threshold)
        gc.collect()
    assert errors == []
    assert len(plans) == 24 and all(plan.controls for plan in plans)
