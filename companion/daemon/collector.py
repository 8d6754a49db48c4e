"""The garbage collector kept off the path of the field updates.

CPython's collector runs when enough objects were made, that is in the middle of whatever
made them: a pause of 2-6 ms landing on a field update, longer than the update's own time
on the wire (about 1.3 ms at 115200 baud).  While a loop runs, :class:`IdleCollector` turns
automatic collection off and the loop collects when it is idle instead: the young
generations after an event when no other event waits, all of them at most every
``full_every_s`` seconds on the same idle moments.  What the loop's owner made before it
starts (the modules, the rules' tables, the journal read back) is frozen out of the
collector's sight, so a full collection walks only what the game made.  Objects without
cycles are freed by their reference counts as ever; only cycles wait for an idle moment.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from types import TracebackType

FULL_EVERY_S = 30.0
"""Seconds between two full collections at most (on the idle moment after them)."""


class IdleCollector:
    """Automatic collection off while the loop runs, and the collections the loop makes.

    ``clock``: seconds (monotonic, or the virtual clock of a simulated table).  Used as a
    context manager around the loop: on entry automatic collection is turned off and the
    objects made until then are frozen; on exit both are given back as they were.
    """

    def __init__(self, clock: Callable[[], float], full_every_s: float = FULL_EVERY_S) -> None:
        self.clock = clock
        self.full_every_s = full_every_s
        self._full_at = 0.0
        self._was_enabled = False

    def __enter__(self) -> IdleCollector:
        self._was_enabled = gc.isenabled()
        gc.disable()
        gc.freeze()
        self._full_at = self.clock() + self.full_every_s
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        gc.unfreeze()  # the objects go back to the collector when the loop ends
        if self._was_enabled:
            gc.enable()

    def idle(self) -> None:
        """No event waits: collect the youngest generation (and the middle one as often as
        CPython would, every ``gc.get_threshold()[1]`` young collections), or every
        generation when ``full_every_s`` seconds went by since the last full collection."""
        now = self.clock()
        if now >= self._full_at:
            gc.collect()
            self._full_at = now + self.full_every_s
            return
        young, middle, _ = gc.get_count()
        if middle >= gc.get_threshold()[1]:
            gc.collect(1)
        elif young > 0:
            gc.collect(0)
