"""Parts that failed to open (the display without SPI or a desktop, the GPIO pins without a
pin factory) tried again from the service's loop while the game goes on without them, the
wait doubling from :data:`RETRY_FIRST_S` to :data:`RETRY_MAX_S` seconds."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from companion.errors import CompanionError

log = logging.getLogger("companion")

RETRY_FIRST_S = 2.0
"""Seconds before a part that failed to open (the display, the GPIO pins) is tried again."""

RETRY_MAX_S = 60.0
"""The longest wait between two tries; the wait doubles from :data:`RETRY_FIRST_S` up to it."""


@dataclass(slots=True)
class _Retry:
    """A part that failed to open: ``open`` is tried again at ``at`` (seconds), after ``wait``
    seconds; ``error`` is the last failure's sentence."""

    open: Callable[[], None]
    at: float
    wait: float
    error: str
    tries: int = 1


def sentence(error: BaseException) -> str:
    """An error in words, to go inside a log line: ours are sentences already (their full stop
    is dropped), anything else gets its type named."""
    if isinstance(error, CompanionError | OSError) and str(error):
        return str(error).rstrip(".")
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class Retries:
    """The parts waiting to be opened again, by name (``"display"``, ``"GPIO pins"``), on
    ``clock`` (monotonic seconds)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._waiting: dict[str, _Retry] = {}

    def later(self, what: str, open_part: Callable[[], None], error: BaseException) -> None:
        """``what`` failed to open with ``error``: say so, and call ``open_part`` after
        :data:`RETRY_FIRST_S` seconds, then after twice as long each time it raises, up to
        :data:`RETRY_MAX_S`, until it returns (it attaches the part itself)."""
        log.error("the %s cannot be opened: %s; refereeing on and trying again in %g s",
                  what, sentence(error), RETRY_FIRST_S)
        self._waiting[what] = _Retry(open_part, self._clock() + RETRY_FIRST_S, RETRY_FIRST_S,
                                     sentence(error))

    def deadlines(self) -> list[float]:
        """When the loop must wake to try a part again (monotonic seconds)."""
        return [retry.at for retry in self._waiting.values()]

    def names(self) -> list[str]:
        """The parts still waiting, in the order they failed."""
        return list(self._waiting)

    def __contains__(self, what: object) -> bool:
        return what in self._waiting

    def now(self, what: str) -> None:
        """Try ``what`` at the next turn of the loop (a reload asked for it)."""
        self._waiting[what].at = self._clock()

    def drop(self, what: str) -> None:
        """``what`` was opened another way: stop trying."""
        self._waiting.pop(what, None)

    def run(self, now: float) -> None:
        """Try every part that is due; one that opens is logged and forgotten."""
        for what, retry in list(self._waiting.items()):
            if now < retry.at:
                continue
            retry.tries += 1
            try:
                retry.open()
            except Exception as error:  # whatever a device raises, the game goes on
                retry.wait = min(2 * retry.wait, RETRY_MAX_S)
                retry.at = now + retry.wait
                same = sentence(error) == retry.error
                retry.error = sentence(error)
                log.log(logging.DEBUG if same else logging.WARNING,
                        "the %s still cannot be opened: %s; trying again in %g s",
                        what, retry.error, retry.wait, exc_info=log.isEnabledFor(logging.DEBUG))
            else:
                del self._waiting[what]
                log.info("the %s opened at the %s try", what, _ordinal(retry.tries))
