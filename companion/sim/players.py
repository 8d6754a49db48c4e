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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from companion.opponent import Decision, Strength, chance_next, decide, interrupt, quick
from companion.rules.base import GameRules
from companion.sim.perform import Op


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


class Seats:
    """The virtual players' decisions at a table: a :class:`~companion.opponent.Strength`
    for each seat, the dice they roll and, in Gardens of Uranus, the cards each holds.

    ``strengths[p - 1]`` is player p's.  Every choice comes from ``random.Random(seed)``, so
    a game replays from its seed.  The players keep their hands as people do: dealt from the
    seed (:class:`companion.sim.uranus.Hands`), each seat choosing with its own hand only,
    while ``state`` is the companion's view, where hidden cards are only counted.
    """

    def __init__(self, rules: GameRules[Any, Any], state: Any, strengths: Sequence[Strength],
                 *, seed: int) -> None:
        if len(strengths) != rules.players(state):
            raise ValueError(f"{len(strengths)} strengths for {rules.players(state)} players")
        self.rules = rules
        self.strengths = tuple(Strength(s) for s in strengths)
        self.rng = random.Random(seed)
        self.decided: Decision | None = None
        """The engine's last decision, ``None`` when the last step was chance's or out of
        turn."""
        self.hands: Any = None
        if rules.name == "uranus":
            from companion.sim.uranus import Hands

            self.hands = Hands(state, seed)

    def known(self, player: int) -> frozenset[str] | None:
        """The cards player ``player`` holds (Gardens of Uranus), else ``None``."""
        return None if self.hands is None else self.hands.known(player)

    def step(self, state: Any, strength: Strength | None = None) -> Any:
        """The next step in ``state``: a roll of the dice when chance is next, a seat's
        out-of-turn step when one has it (the Hexagon card shown), else the step of the
        player to move at their strength (or ``strength``).  Raises ``ValueError`` once the
        game is over."""
        rules = self.rules
        self.decided = None
        if chance_next(rules, state):
            return roll(rules, state, self.rng)
        for player in range(1, rules.players(state) + 1):
            claim = interrupt(rules, state, player, self.known(player))
            if claim is not None:
                return claim
        mover = rules.to_move(state)
        self.decided = decide(rules, state, strength or self.strengths[mover - 1],
                              rng=self.rng, known=self.known(mover))
        return self.decided.step

    def played(self, state: Any, step: Any) -> None:
        """Keep the hands up to date with ``step`` made in ``state`` (a card scored is
        replaced by the top card of its deck)."""
        if self.hands is not None:
            self.hands.played(state, step)


def roll(rules: GameRules[Any, Any], state: Any, rng: random.Random) -> Any:
    """Chance's step, drawn as the real source draws it (Gardens of Mars: each die 1-6)."""
    module = importlib.import_module(f"companion.sim.{rules.name}")
    return module.roll(state, rng)


def play(rules: GameRules[Any, Any], strengths: Sequence[Strength], *, seed: int,
         options: Mapping[str, Any] | None = None,
         on_step: Callable[[Any, Any], None] | None = None) -> Any:
    """A whole game of ``rules`` among seats of ``strengths`` from ``seed`` (the setup and
    every choice), without a board: the final state.  ``on_step(state, step)`` is called
    before each step."""
    state = rules.new_game(len(strengths), seed, options or {})
    seats = Seats(rules, state, strengths, seed=seed)
    while rules.outcome(state) is None:
        step = seats.step(state)
        if on_step is not None:
            on_step(state, step)
        seats.played(state, step)
        state = rules.apply(state, step)
    return state
