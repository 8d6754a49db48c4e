"""Virtual players: which legal step to make next.

Players pick at random among the legal steps, grouped by kind (a move, a special action, a
placement...) so that rare kinds with many variants (thousands of ways to swap two flowers)
do not crowd out the moves that make a game progress (the ``quick`` strength of
:mod:`companion.opponent`).  Everything comes from the player's own ``random.Random``, so a
game replays from its seed.
"""

from __future__ import annotations

import importlib
import random
from typing import Any

from companion.board import protocol
from companion.opponent import quick
from companion.referee.seats import SeatedRules
from companion.rules.base import GameRules
from companion.sim.perform import Op, Press, Signal


def choose_step(rules: GameRules[Any, Any], state: Any, rng: random.Random) -> Any:
    """A random legal step, chance's included (a roll among the rolls the rules list), at the
    ``quick`` strength of :func:`companion.opponent.quick`: first a kind of step, then a step
    of it.

    Raises ``ValueError`` when there is no legal step (the game is over).
    """
    return quick(list(rules.legal_steps(state)), rng)


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


def announced_step(rules: GameRules[Any, Any], state: Any, rng: random.Random) -> Any | None:
    """At the companion's seat, the step the matrix announces, as the person there carries it
    out (with whatever chance gives it: the flowers drawn from the tube); ``None`` at a
    person's seat or when nothing is announced (a roll).  ``rules`` are the referee's
    (:class:`companion.referee.seats.SeatedRules` when the companion plays)."""
    if not isinstance(rules, SeatedRules) or rules.seats.announced(state) is None:
        return None
    return rng.choice(list(rules.legal_steps(state)))


def cards_for_the_companion(rules: GameRules[Any, Any], state: Any,
                            rng: random.Random) -> list[Op]:
    """The cards a person deals the companion when the matrix asks for them (Gardens of
    Uranus with a card reader): each held face down to the reader, drawn among the cards
    nobody has shown nor dealt it (the principle of deferred decisions, as for the virtual
    people's own cards, :mod:`companion.sim.uranus`); ``[]`` when none is asked."""
    if not isinstance(rules, SeatedRules):
        return []
    seats = rules.seats
    missing = seats.missing(rules.core, state)
    if not missing:
        return []
    from companion.rules.uranus import seen

    dealt = {card for cards in seats.dealt.values() for card in cards}
    free = sorted(card for card, mission in seats.catalogue.items()
                  if mission not in seen(state) and card not in dealt)
    return [Signal(rng.uniform(0.4, 0.9), protocol.Card(seq=0, card_id=card))
            for card in rng.sample(free, missing)]


def announced_ops(rules: GameRules[Any, Any], state: Any, step: Any,
                  rng: random.Random) -> list[Op]:
    """The operations beside the cells for an announced ``step``: those of
    :func:`chance_ops`, but for a step no cell shows (a card scored, a die discarded) the
    dice that leave the tray and OK, which carries it out."""
    ops = chance_ops(rules, state, step, rng)
    if rules.changes(state, step):
        return ops
    dice = [op for op in ops if isinstance(op, Signal) and isinstance(op.message, protocol.Dice)]
    return [*dice, Press(rng.uniform(0.4, 0.8), "ok")]
