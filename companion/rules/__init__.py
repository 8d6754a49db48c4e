"""Pure rules cores of the three games; no I/O.

``load(name)`` imports a game's module lazily, so a tool that needs one game never pays for
the others.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING

GAMES = ("enceladus", "mars", "uranus")

LAYOUTS = ("enceladus", "mars", "uranus-hexagonal", "uranus-trapezoid", "uranus-rhombus")
"""The physical boards: a game, and for Gardens of Uranus its board (``HELLO``'s layout)."""


def load(name: str) -> ModuleType:
    """The rules module of game ``name`` (it has ``RULES`` and ``CASES``).

    Raises ``KeyError`` for a name not in :data:`GAMES`.
    """
    if name not in GAMES:
        raise KeyError(name)
    return importlib.import_module(f"companion.rules.{name}")


@lru_cache(maxsize=len(LAYOUTS))
def layout_cells(layout: str) -> tuple[str, ...]:
    """The cells of a physical board in dump order (``hardware/PROTOCOL.md``), as its game's
    rules core lays them out: the one definition the wire protocol, the simulator and the
    rules share.  Imports only that game.  Raises ``KeyError`` for a name not in
    :data:`LAYOUTS`."""
    if layout not in LAYOUTS:
        raise KeyError(layout)
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
