"""Pure rules cores of the three games; no I/O.

``load(name)`` imports a game's module lazily, so a tool that needs one game never pays for
the others.
"""

from __future__ import annotations

import importlib
from types import ModuleType

GAMES = ("enceladus", "mars", "uranus")


def load(name: str) -> ModuleType:
    """The rules module of game ``name`` (it has ``RULES`` and ``CASES``).

    Raises ``KeyError`` for a name not in :data:`GAMES`.
    """
    if name not in GAMES:
        raise KeyError(name)
    return importlib.import_module(f"companion.rules.{name}")
