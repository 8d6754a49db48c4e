"""What the referee asks the world to do.

The referee is a pure state machine: :meth:`Referee.handle` takes one event and returns a list
of effects, which the service carries out *in order* (so a step is journaled before the matrix
shows it).  Tests and replays read the effects instead of running hardware.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from companion.board.protocol import PiToBoard
from companion.events import TimerName
from companion.referee.screen import Screen
from companion.rules.base import Outcome


@dataclass(frozen=True, slots=True)
class Committed:
    """A step was committed: ``number`` counts steps from 1; ``step`` is its notation;
    ``position`` the new state's notation; ``state`` the state itself (the rules core's own
    type, opaque here: only the rules core that made it reads it).

    ``corrects``: the notation of the step committed before under the same ``number`` that
    this one takes the place of (``None`` for a new step): its player moved the piece on by
    hand (a Martian slid on, a disc moved off a wrong slot) before anything else happened,
    and the board shows this step instead.  The journal records it as that step taken back
    and this one made."""

    number: int
    player: int
    step: str
    position: str
    state: object
    corrects: str | None = None


@dataclass(frozen=True, slots=True)
class Undone:
    """The last committed step (``number``) was taken back."""

    number: int
    step: str


@dataclass(frozen=True, slots=True)
class GameOver:
    """The game ended with ``outcome``."""

    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Adopted:
    """The garden the players laid out by hand is the game's setup: ``position`` is its
    position notation (for the journal's header), ``state`` the state."""

    position: str
    state: object


@dataclass(frozen=True, slots=True)
class NewGame:
    """The players pressed OK after the end: set up the next game."""


@dataclass(frozen=True, slots=True)
class Show:
    """Show this :class:`companion.referee.screen.Screen` on the matrix."""

    screen: Screen


class BuzzPattern(StrEnum):
    """What the buzzer sounds: the board matches no legal step, or the players are asked."""

    ILLEGAL = "illegal"
    QUESTION = "question"


@dataclass(frozen=True, slots=True)
class Buzz:
    """Sound the buzzer with ``pattern``."""

    pattern: BuzzPattern


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Deliver ``events.Timer(name=name)`` at monotonic time ``at`` (seconds); a later
    ``SetTimer`` of the same name replaces it, ``at=None`` cancels it."""

    name: TimerName
    at: float | None


@dataclass(frozen=True, slots=True)
class Send:
    """Send a protocol message to the board controller."""

    message: PiToBoard


class NoteLevel(StrEnum):
    """How much a log line matters (the :mod:`logging` level of the same name)."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def logging_level(self) -> int:
        """The :mod:`logging` level: ``logging.INFO``..."""
        return logging.getLevelNamesMapping()[self.name]


@dataclass(frozen=True, slots=True)
class Note:
    """A line for the log at ``level``."""

    level: NoteLevel
    text: str


@dataclass(frozen=True, slots=True)
class Dealt:
    """Effect: the card ``card`` (its id) was read face down for the companion at ``player``'s
    seat; the journal keeps it, so a restart knows the companion's hand."""

    player: int
    card: str


@dataclass(frozen=True, slots=True)
class Hinted:
    """Effect: ``player`` asked for a hint at step ``number`` (the next step's number); the
    journal counts it."""

    number: int
    player: int
    step: str


Effect: TypeAlias = (Committed | Undone | GameOver | Adopted | NewGame | Show | Buzz | SetTimer
                     | Send | Note | Hinted | Dealt)
"""Every effect: the closed union the service dispatches on."""

Effects: TypeAlias = list[Effect]
"""What one event gives, in the order it is to be carried out."""
