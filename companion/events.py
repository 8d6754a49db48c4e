"""The events of the daemon's one queue.

Producers at the edges (the serial reader thread, gpiozero callbacks, timers, the signal
handlers) put events on one :class:`queue.SimpleQueue`, whose ``put`` is reentrant; the
referee thread takes them one by one.  Every event carries ``t``, the producer's
``time.monotonic()`` reading in seconds, so a recorded event log replays exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # the protocol's messages are only named here; the board imports events
    from companion.board.protocol import Message


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events; ``t`` is ``time.monotonic()`` in seconds when it happened."""

    t: float


@dataclass(frozen=True, slots=True)
class BoardMessage(Event):
    """A well-formed message from the board controller (see ``companion.board.protocol``)."""

    message: Message


@dataclass(frozen=True, slots=True)
class BadLine(Event):
    """A line from the board that was refused (bad checksum, too long, unknown message...).

    ``reason`` is a sentence for a maker; ``line`` the first bytes of the line, made printable.
    """

    reason: str = ""
    line: str = ""


@dataclass(frozen=True, slots=True)
class LinkState(Event):
    """The serial link came up (``up=True``) or was lost; ``detail`` says why or where;
    ``notice``, when not empty, is what the players must do, for the matrix (``"/dev/ttyACM0
    is in use by minicom (pid 1234); close it"``)."""

    up: bool = False
    detail: str = ""
    notice: str = ""


@dataclass(frozen=True, slots=True)
class Button(Event):
    """A debounced button press (``pressed=True``) or release; ``name`` is ``ok``, ``undo``,
    ``select`` or ``roll``."""

    name: str = ""
    pressed: bool = True


@dataclass(frozen=True, slots=True)
class StartGame(Event):
    """Start a new game at this table now (the live page's New game, behind its PIN), as OK
    after the end starts the next one: ``players``, ``seed`` (0 draws one), ``options``
    (``[game.options]``, checked by the rules core; what the board fixes, the Uranus board,
    stays as configured); ``reserves``: each player's ``{colour: count}`` as dealt by hand at
    the table, or ``()`` for the seed's deal; and the seats' ``names`` (``[players] names``)
    and ``seats`` (``[players] seats``: ``()`` for people everywhere)."""

    players: int = 2
    seed: int = 0
    options: Mapping[str, object] = field(default_factory=dict)
    reserves: tuple[Mapping[str, int], ...] = ()
    names: tuple[str, ...] = ()
    seats: tuple[str, ...] = ()


class TimerName(StrEnum):
    """The referee's timers (``SetTimer``): a cell change waiting out the debounce time, a
    completed step waiting out the settle time, a board no step explains waiting out the grace
    period, and the board's heartbeat (silence longer than the timeout: the board is lost)."""

    DEBOUNCE = "debounce"
    SETTLE = "settle"
    GRACE = "grace"
    HEARTBEAT = "heartbeat"


@dataclass(frozen=True, slots=True)
class Hint(Event):
    """A person asks for the step the strong companion would make in their place (the live
    page's Hint; on the buttons, a long Select press)."""


@dataclass(frozen=True, slots=True)
class Timer(Event):
    """A timer set by the referee has run out; ``name`` says which."""

    name: TimerName = TimerName.DEBOUNCE


@dataclass(frozen=True, slots=True)
class Fault(Event):
    """An error inside an edge thread (a callback, the reader) that the daemon survived."""

    where: str = ""
    error: str = ""
    details: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Stop(Event):
    """Shut down (SIGTERM, Ctrl-C, end of a demo)."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Reload(Event):
    """Re-read the configuration file at ``path`` and apply its ``[display]`` (``SIGHUP``)."""

    path: str = ""


AnyEvent: TypeAlias = (BoardMessage | BadLine | LinkState | Button | Hint | StartGame | Timer
                       | Fault | Stop | Reload)
"""Every event the queue carries: the closed union the service and the referee dispatch on."""
