"""What the daemon tells of itself: systemd's readiness, watchdog and status line
(:mod:`companion.daemon.notify`), and the status LED, from what it knows of the board.

:class:`Health` keeps the board's status (:class:`BoardStatus`) and the two deadlines of its
own the loop wakes for: the end of the wait for the board at start (``READY=1`` is sent then
at the latest) and the next ``WATCHDOG=1``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import StrEnum

from companion.daemon.controls import StatusLight
from companion.daemon.notify import Notifier
from companion.events import BoardMessage, LinkState

log = logging.getLogger("companion")


class BoardStatus(StrEnum):
    """What the service knows of the board: ``waiting`` for it at start, ``up`` (it spoke),
    ``down`` (the link was lost, or it never answered), ``silent`` (no heartbeat)."""

    WAITING = "waiting"
    UP = "up"
    DOWN = "down"
    SILENT = "silent"

    @property
    def words(self) -> str:
        """The status in words, for ``systemctl status``."""
        return {"waiting": "waiting for the board", "up": "board connected",
                "down": "board disconnected", "silent": "board silent"}[self]


class Health:
    """The board's status, the readiness wait and the watchdog of one service.

    ``notifier`` speaks to systemd; ``light`` shows a state on the status LED (it does nothing
    without one); ``ready_timeout_s`` is how long the start waits for the board (seconds).
    """

    def __init__(self, notifier: Notifier, light: Callable[[StatusLight], None], *,
                 ready_timeout_s: float) -> None:
        self.notifier = notifier
        self.ready_timeout_s = ready_timeout_s
        self.board = BoardStatus.WAITING
        self.ready = False
        self.down_notice = ""
        """What the link said to do about the outage (a port another program holds), if
        anything."""
        self._light = light
        self._ready_at: float | None = None
        self._ping_at: float | None = None
        self._status = ""

    def start(self, now: float) -> None:
        """The loop starts at ``now``: the wait for the board and the watchdog begin."""
        self._ready_at = now + self.ready_timeout_s
        if self.notifier.watchdog_s is not None:
            self._ping_at = now

    def deadlines(self) -> list[float]:
        """When the loop must wake for readiness or the watchdog (monotonic seconds)."""
        return [t for t in (self._ready_at, self._ping_at) if t is not None]

    def tick(self, now: float) -> bool:
        """Send ``WATCHDOG=1`` if it is due; whether the wait for the board ran out just now
        (the caller says so and calls :meth:`ready_now`)."""
        if self._ping_at is not None and now >= self._ping_at and self.notifier.watchdog_s:
            self.notifier.watchdog()
            self._ping_at = now + self.notifier.watchdog_s / 2
        if self._ready_at is not None and now >= self._ready_at:
            self._ready_at = None
            return not self.ready
        return False

    def saw(self, event: BoardMessage | LinkState) -> None:
        """The board spoke, or the link came up or went down."""
        match event:
            case BoardMessage():
                if self.board != BoardStatus.UP:
                    self.board = BoardStatus.UP
                    self._light(StatusLight.READY)
            case LinkState():
                if not event.up:
                    self.board = BoardStatus.DOWN
                    self._light(StatusLight.ERROR)
                self.down_notice = "" if event.up else event.notice

    def silent(self) -> None:
        """No heartbeat came in time."""
        self.board = BoardStatus.SILENT
        self._light(StatusLight.ERROR)

    def no_board(self) -> None:
        """The board did not answer within the wait."""
        self.board = BoardStatus.DOWN

    def ready_now(self, status: str) -> None:
        """Start-up is over (the board answered, or the wait for it ran out): ``READY=1`` with
        the ``status`` line."""
        self._ready_at = None
        self.ready = True
        self._status = status
        self.notifier.ready(status)

    def report(self, status: str) -> None:
        """A ``STATUS=`` line, when it says something new."""
        if status != self._status:
            self._status = status
            self.notifier.status(status)

    def stopping(self) -> None:
        """``STOPPING=1``: the loop has ended."""
        self.notifier.stopping()
