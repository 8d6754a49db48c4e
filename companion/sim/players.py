"""Virtual players: which legal step to make next.

Players pick at random among the legal steps, grouped by kind (a move, a special action, a
placement...) so that rare kinds with many variants (thousands of ways to swap two flowers)
do not crowd out the moves that make a game progress.  Everything comes from the player's own
``random.Random``, so a game replays from its seed.
"""

from __future__ import annotations

import importlib
import random
from collections import defaultdict
from typing import Any

from companion.rules.base import GameRules
from companion.sim.perform import Op

KIND_WEIGHTS = {"Action": 0.2, "Score": 0.15}
"""Chance weight of a step kind (by class name) against 1.0 for every other kind: special
actions (Enceladus) and scoring a card instead of moving (Uranus) now and then, as people do."""


def choose_step(rules: GameRules[Any, Any], state: Any, rng: random.Random) -> Any:
    """A random legal step: first a kind, weighted by :data:`KIND_WEIGHTS`, then a step of it.

    Raises ``ValueError`` when there is no legal step (the game is over).
    """
    by_kind: dict[str, list[Any]] = defaultdict(list)
    for step in rules.legal_steps(state):
        by_kind[type(step).__name__].append(step)
    if not by_kind:
        raise ValueError("no legal step: the game is over")
    kinds = sorted(by_kind)
    weights = [KIND_WEIGHTS.get(kind, 1.0) for kind in kinds]
    kind = rng.choices(kinds, weights)[0]
    return rng.choice(by_kind[kind])


def chance_ops(rules: GameRules[Any, Any], state: Any, step: Any, rng: random.Random) -> list[Op]:
    """The operations for the part of ``step`` that no cell shows: rolling dice into the Mars
    dice tray, holding a Uranus card to the reader, pressing OK for a penalty.

    A game with such steps has a module ``companion.sim.<game>`` with a function
    ``chance_ops(state, step, rng) -> list[Op]``; other games need none.
    """
    try:
        module = importlib.import_module(f"companion.sim.{rules.name}")
    except ModuleNotFoundError:
        return []
    ops: list[Op] = module.chance_ops(state, step, rng)
    return ops
