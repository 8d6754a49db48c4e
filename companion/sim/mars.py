"""Virtual Mars players' hands for what no cell shows: the dice and the buttons.

:func:`chance_ops` is what :func:`companion.sim.players.chance_ops` calls for every Mars step;
it plays the board's dice tray (``[board] dice = "tray"``, the default and the demo's board).
:func:`dice_ops` gives the same for the other sources of :mod:`companion.referee.mars`.  The
operations follow the matrix as :class:`companion.referee.mars.MarsTable` draws it:

* a roll: the dice land in the tray (one ``DICE`` reading of every die, in the order they
  came to rest), or each value is entered with Select and OK, or the Roll/OK button is pressed
  for the companion's own dice;
* no dice to roll: OK ends the turn;
* a move or a discard: the used die goes back into the case (the tray's reading loses it);
* a discard: nothing more here; the matrix asks which die, and the players answer its menu
  like any question (the menu's labels are the rules core's ``choice_path``).
"""

from __future__ import annotations

import random
from collections import Counter

from companion.board import protocol
from companion.errors import InvalidArgumentError
from companion.referee.mars import DIE_VALUES
from companion.rules.mars import Discard, Move, Roll, State, Step, dice_to_roll
from companion.sim.perform import Op, Press, Signal


def chance_ops(state: State, step: Step, rng: random.Random) -> list[Op]:
    """The dice-tray players' operations for ``step`` in ``state`` (see the module docstring)."""
    return dice_ops(state, step, rng, source="tray")


def dice_ops(state: State, step: Step, rng: random.Random, *, source: str,
             roll_button: bool = False) -> list[Op]:
    """The operations for the hidden part of ``step`` with the dice ``source`` (``"tray"``,
    ``"buttons"`` or ``"virtual"``; ``roll_button``: press Roll rather than OK for virtual
    dice).  With virtual dice the companion draws the values, so ``step`` must be the roll it
    will draw for the game to go on as the players think.  Waits in seconds, from ``rng``.
    Raises :class:`InvalidArgumentError` for an unknown source.
    """
    if source not in ("tray", "buttons", "virtual"):
        raise InvalidArgumentError(f"unknown dice source {source!r}")
    wait = rng.uniform(0.2, 0.5)
    if isinstance(step, Roll):
        if not step.values:
            return [Press(wait, "ok")]
        if source == "tray":
            landed = list(step.values)
            rng.shuffle(landed)
            return [Signal(wait, protocol.Dice(seq=0, values=tuple(landed)))]
        if source == "virtual":
            return [Press(wait, "roll" if roll_button else "ok")]
        ops: list[Op] = []
        for value in step.values:
            ops += [Press(rng.uniform(0.15, 0.3), "select")] * DIE_VALUES.index(value)
            ops.append(Press(rng.uniform(0.2, 0.4), "ok"))
        return ops
    if isinstance(step, Move | Discard) and source == "tray":
        left = Counter(state.pool) - Counter([step.die])
        return [Signal(wait, protocol.Dice(seq=0, values=tuple(sorted(left.elements()))))]
    return []


def roll(state: State, rng: random.Random) -> Roll:
    """The dice the player to move rolls into the empty pool: one die for each hex without a
    flower next to their gardener, each 1 to 6 (Gardens of Mars, Rolling Dice)."""
    return Roll(tuple(rng.randint(1, 6) for _ in range(dice_to_roll(state))))
