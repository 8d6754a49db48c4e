"""What the matrix should show: one immutable :class:`Screen`, built by the referee.

A screen is a description, not pixels: :func:`companion.display.render.render` turns it into an
image for a given matrix size and colour mode, and :class:`companion.display.Display` puts it on
the device.  Building a screen is cheap and has no I/O, so the referee makes a new one for every
change and hands it over whole (``Display.show``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from companion.errors import InvalidArgumentError, UnknownGameError
from companion.rules import GAMES, LAYOUTS

ROLES = ("dest", "pick", "wrong", "restore", "place", "changed")
"""Highlight roles: ``dest`` a legal destination, ``pick`` a flower to take away, ``wrong`` a cell
that differs from what the rules expect and must be fixed, ``restore`` a piece to put back for an
undo, ``place`` a piece to put here, ``changed`` a cell whose sensor changed (sensor test)."""

def _no_map() -> Mapping[str, str]:
    return MappingProxyType({})


def _frozen(mapping: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Screen:
    """One screenful for the LED matrix; immutable (mappings are copied into read-only views).

    ``game``: one of :data:`companion.rules.GAMES`.  ``layout``: one of
    :data:`companion.rules.LAYOUTS`.
    ``cells``: cell name -> canonical piece (``companion.rules.base``), every cell of the layout
    (the rules core's ``board(state)``; empty cells as ``""``) so the board's outline is drawn.
    ``highlights``: cell -> role (:data:`ROLES`).  ``message``: a prompt, question, warning or
    ``"Player 2 wins"``; one for the player to move starts ``"P2: "`` (the turn badge then says
    who, and under a map it does not interrupt the scores going by).  ``scores``: per player
    ``(1, "3-4-5-5-6")`` or ``(2, "14 pts")``.
    ``to_move``: the player whose turn it is, 0 for nobody (setup, game over).  ``urgent``: the
    message is a warning: drawn at once, interrupting a scroll, in the alarm colour, without
    the scores.  ``menu``/``menu_index``: the choices Select cycles through and the current one.
    ``extra``: per-game extras, key -> text: ``"pool": "3 5"`` (Mars dice, also drawn as dice
    where room), ``"tube": "b3 r2"``, ``"track": "P1 12 (lap 1)"``...  ``ranking``: once the
    game is over, every player's result, best first: ``((2, "6-6-6-8-10"), (1, "5-5-5-6-13"))``
    (drawn as the end screen once the board is as it should be, i.e. nothing is highlighted).

    Raises :class:`UnknownGameError` for an unknown game or layout, :class:`InvalidArgumentError`
    for an unknown highlight role or a ``menu_index`` outside ``menu``: these are programming
    errors of the caller, not player errors.
    """

    game: str
    layout: str
    cells: Mapping[str, str]
    highlights: Mapping[str, str] = field(default_factory=_no_map)
    message: str = ""
    scores: tuple[tuple[int, str], ...] = ()
    to_move: int = 0
    urgent: bool = False
    menu: tuple[str, ...] = ()
    menu_index: int = 0
    extra: Mapping[str, str] = field(default_factory=_no_map)
    ranking: tuple[tuple[int, str], ...] = ()

    def __post_init__(self) -> None:
        if self.game not in GAMES:
            raise UnknownGameError(
                f"unknown game {self.game!r}; expected one of {', '.join(GAMES)}")
        if self.layout not in LAYOUTS:
            expected = ", ".join(LAYOUTS)
            raise UnknownGameError(f"unknown layout {self.layout!r}; expected one of {expected}")
        bad = sorted({role for role in self.highlights.values() if role not in ROLES})
        if bad:
            raise InvalidArgumentError(
                f"unknown highlight role(s) {bad}; expected one of {', '.join(ROLES)}")
        if self.menu and not 0 <= self.menu_index < len(self.menu):
            raise InvalidArgumentError(
                f"menu_index {self.menu_index} is outside a menu of {len(self.menu)}")
        # frozen dataclass: set the read-only copies through object.__setattr__
        object.__setattr__(self, "cells", _frozen(self.cells))
        object.__setattr__(self, "highlights", _frozen(self.highlights))
        object.__setattr__(self, "extra", _frozen(self.extra))
        object.__setattr__(self, "scores", tuple(self.scores))
        object.__setattr__(self, "menu", tuple(self.menu))
        object.__setattr__(self, "ranking", tuple(self.ranking))
