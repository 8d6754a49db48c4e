"""What the referee asks the world to do.

The referee is a pure state machine: :meth:`Referee.handle` takes one event and returns a list
of effects, which the service carries out *in order* (so a step is journaled before the matrix
shows it).  Tests and replays read the effects instead of running hardware.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Committed:
    """A step was committed: ``number`` counts steps from 1; ``step`` is its notation;
    ``position`` the new state's notation; ``state`` the state itself."""

    number: int
    player: int
    step: str
    position: str
    state: Any


@dataclass(frozen=True, slots=True)
class Undone:
    """The last committed step (``number``) was taken back."""

    number: int
    step: str


@dataclass(frozen=True, slots=True)
class GameOver:
    """The game ended; ``outcome`` is a :class:`companion.rules.base.Outcome`."""

    outcome: Any


@dataclass(frozen=True, slots=True)
class Adopted:
    """The garden the players laid out by hand is the game's setup: ``position`` is its
    position notation (for the journal's header), ``state`` the state."""

    position: str
    state: Any


@dataclass(frozen=True, slots=True)
class NewGame:
    """The players pressed OK after the end: set up the next game."""


@dataclass(frozen=True, slots=True)
class Show:
    """Show this :class:`companion.display.screen.Screen` on the matrix."""

    screen: Any


@dataclass(frozen=True, slots=True)
class Buzz:
    """Sound the buzzer: ``pattern`` is ``"illegal"`` or ``"question"``."""

    pattern: str


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Deliver ``events.Timer(name=name)`` at monotonic time ``at`` (seconds); a later
    ``SetTimer`` of the same name replaces it, ``at=None`` cancels it."""

    name: str
    at: float | None


@dataclass(frozen=True, slots=True)
class Send:
    """Send a protocol message to the board controller."""

    message: Any


@dataclass(frozen=True, slots=True)
class Note:
    """A line for the log: ``level`` is a :mod:`logging` level name."""

    level: str
    text: str
