"""The seams between the service and its parts, as :class:`typing.Protocol` classes: what the
service asks of the board link, the matrix, the controls and the journal, and nothing more.

An object with these methods fits (the serial :class:`companion.board.link.BoardLink` and the
GPIO-scanned :class:`companion.board.gpio_matrix.GpioMatrix` are both a :class:`Link`), so a
tool or a test hands the service the parts it has, and a new part (a remote seat, a
publisher) is written against these few methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from companion.board.protocol import PiToBoard
from companion.daemon.controls import StatusLight
from companion.referee.effects import BuzzPattern
from companion.referee.screen import Screen
from companion.rules.base import Outcome


class Link(Protocol):
    """The way to the board controller: its messages arrive on the service's queue as
    :class:`companion.events.BoardMessage` events; commands go out with :meth:`send`."""

    def start(self) -> None:
        """Begin reading (a thread of its own); events go to the queue given when made."""

    def send(self, message: PiToBoard) -> bool:
        """Send ``message``; whether it went out (a link that is down drops it)."""

    def close(self) -> None:
        """Stop reading and let the port go.  Idempotent."""


class Matrix(Protocol):
    """The LED matrix (:class:`companion.display.Display`): shows screens, drawn off the
    service's thread."""

    def show(self, screen: Screen) -> None:
        """Show ``screen`` from now on (returns at once)."""

    def close(self, *, switch_off: bool = True) -> None:
        """Stop drawing; ``switch_off=False`` leaves the matrix lit for a device of the same
        type that takes over.  Idempotent."""

    def abandon(self) -> None:
        """Give up a file the closing matrix is writing (a GIF), so a stop need not wait."""


class Panel(Protocol):
    """The controls the service drives (:class:`companion.daemon.controls.Controls`): the buzzer and
    the status LED.  Their buttons put events on the queue themselves."""

    def buzz(self, pattern: BuzzPattern) -> None:
        """Sound ``pattern`` in the background."""

    def status(self, state: StatusLight) -> None:
        """Show ``state`` on the status LED."""

    def close(self) -> None:
        """Give the pins back.  Idempotent."""


class GameJournal(Protocol):
    """The record of the game in progress (:class:`companion.journal.Journal`): every call
    writes a line, made durable before it returns, or raises
    :class:`companion.errors.JournalError` and keeps the line for a later :meth:`flush`."""

    @property
    def path(self) -> Path:
        """The journal's file."""

    @property
    def behind(self) -> int:
        """Lines kept but not written yet (a full card)."""

    def step(self, number: int, player: int, step: str) -> None:
        """Step ``number`` (from 1), made by ``player``, in its game's notation."""

    def undo(self, number: int) -> None:
        """Step ``number`` was taken back."""

    def correct(self, number: int, player: int, step: str) -> None:
        """Step ``number`` was taken back and ``step`` made in its place by ``player`` (a
        step corrected by hand), the two lines durable together."""

    def hint(self, number: int, player: int) -> None:
        """Player ``player`` asked for a hint before step ``number``."""

    def dealt(self, player: int, card: str) -> None:
        """The card ``card`` was read face down for the companion at seat ``player``."""

    def finish(self, outcome: Outcome) -> None:
        """The game ended with ``outcome``."""

    def flush(self) -> None:
        """Write the lines kept back."""

    def with_setup(self, setup: str) -> GameJournal:
        """The journal of this game begun again with ``setup`` (position notation) as its
        setup, before the first step; this one is closed.  Raises
        :class:`companion.errors.JournalError` when the new one cannot be created (this one
        is kept, open)."""

    def close(self) -> None:
        """Close the file.  Idempotent."""
