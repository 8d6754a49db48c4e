"""Pure rules cores of the three games; no I/O.

Each game is one module (``enceladus``, ``mars``, ``uranus``) with its ``State``, its steps,
their notation, ``RULES`` (its class derives from :class:`companion.rules.base.Rules`;
Mars and Uranus through :class:`companion.rules.gardeners.GardenerRules`) and ``CASES``
(the case-file adapter of :mod:`companion.rules.cases`).  ``load(name)`` imports a game's
module lazily, so a tool that needs one game never pays for the others.  This package is
the one list of the games, their boards and the physical layouts, and imports nothing of
the rest of the companion but its errors (and, for the case files, how files are read).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING

from companion.errors import UnknownGameError

GAMES = ("enceladus", "mars", "uranus")
"""The games, by the name of their rules module (``[game] name`` in the configuration)."""

BOARDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"enceladus": (), "mars": (), "uranus": ("hexagonal", "trapezoid", "rhombus")}
)
"""Per game, the boards it may be played on (its option ``board``); none for a game with one
board only."""

LAYOUTS = tuple(
    layout for game in GAMES for layout in [f"{game}-{b}" for b in BOARDS[game]] or [game]
)
"""The physical boards: a game, and for a game with several boards its board (``HELLO``'s
layout): ``enceladus``, ``mars``, ``uranus-hexagonal``, ``uranus-trapezoid``,
``uranus-rhombus``."""


def load(name: str) -> ModuleType:
    """The rules module of game ``name`` (it has ``RULES`` and ``CASES``).

    Raises :class:`companion.errors.UnknownGameError` (a ``KeyError``) for a name not in
    :data:`GAMES`.
    """
    if name not in GAMES:
        raise UnknownGameError(f"{name!r} is not a game; the games are {', '.join(GAMES)}")
    return importlib.import_module(f"companion.rules.{name}")


@lru_cache(maxsize=len(LAYOUTS))
def layout_cells(layout: str) -> tuple[str, ...]:
    """The cells of a physical board in dump order (``hardware/PROTOCOL.md``), as its game's
    rules core lays them out: the one definition the wire protocol, the simulator and the
    rules share.  Imports only that game.  Raises :class:`companion.errors.UnknownGameError`
    (a ``KeyError``) for a name not in :data:`LAYOUTS`."""
    if layout not in LAYOUTS:
        raise UnknownGameError(
            f"{layout!r} is not a board layout; the layouts are {', '.join(LAYOUTS)}"
        )
    game, _, board = layout.partition("-")
    cells: tuple[str, ...] = load(game).layout_cells(board)
    return cells


if TYPE_CHECKING:
    from companion.rules import base, enceladus, mars, uranus

    def _implements_the_seam() -> None:
        # mypy checks here that each core's class is a GameRules of its own State and Step.
        _e: base.GameRules[enceladus.State, enceladus.Step] = enceladus.RULES
        _m: base.GameRules[mars.State, mars.Step] = mars.RULES
        _u: base.GameRules[uranus.State, uranus.Step] = uranus.RULES
