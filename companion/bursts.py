"""A repeated problem logged once per burst, with a count: the board's bad lines, a journal
that cannot be written, an internal error the game survives."""

from __future__ import annotations

import logging
from collections.abc import Callable


class BurstLog:
    """Log a repeated problem once per burst with a count, not once per occurrence.

    ``what`` names the problem (``"bad line from the board"``).  The first :meth:`report`
    is logged at once (``"<what>: <detail>"``) and opens a window of ``window`` seconds;
    reports inside the window are only counted.  The count is logged (``"<what>: 41 more in
    3.2 s, the last: <detail>"``) by the first report after the window, by :meth:`quiet`
    once the window is over, or by :meth:`flush`.
    """

    def __init__(self, logger: logging.Logger, what: str, clock: Callable[[], float],
                 window: float) -> None:
        self._logger = logger
        self._what = what
        self._clock = clock
        self._window = window
        self._start: float | None = None
        self._count = 0
        self._last = ""

    def report(self, detail: str) -> None:
        """One more occurrence; ``detail`` says what happened this time."""
        now = self._clock()
        if self._start is not None and now - self._start < self._window:
            self._count += 1
            self._last = detail
            return
        self.flush()
        self._logger.warning("%s: %s", self._what, detail)
        self._start = now

    def quiet(self) -> None:
        """Things went well just now: log the count if the window is over."""
        if self._start is not None and self._clock() - self._start >= self._window:
            self.flush()

    def flush(self) -> None:
        """Log the count of the current burst, if any, and close it."""
        if self._start is not None and self._count:
            seconds = self._clock() - self._start
            self._logger.warning(
                "%s: %d more in %.1f s, the last: %s", self._what, self._count, seconds, self._last
            )
        self._start = None
        self._count = 0
