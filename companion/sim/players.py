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
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

from companion.board import protocol
from companion.errors import InvalidArgumentError
from companion.opponent import Decision, Strength, chance_next, decide, interrupt, quick
from companion.referee.seats import SeatedRules
from companion.rules.base import Seated, SomeRules, own_state
from companion.sim.perform import Op, Press, Signal

if TYPE_CHECKING:
    from companion.sim.uranus import Hands


def choose_step(rules: SomeRules, state: Seated, rng: random.Random) -> Hashable:
    """A random legal step, chance's included (a roll among the rolls the rules list), at the
    ``quick`` strength of :func:`companion.opponent.quick`: first a kind of step, then a step
    of it.

    Raises :class:`InvalidArgumentError` when there is no legal step (the game is over).
    """
    step: Hashable = quick(list(rules.legal_steps(state)), rng)
    return step


def chance_ops(rules: SomeRules, state: Seated, step: Hashable, rng: random.Random) -> list[Op]:
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


class VirtualSeats:
    """The virtual players' decisions at a table: a :class:`~companion.opponent.Strength`
    for each seat, the dice they roll and, in Gardens of Uranus, the cards each holds.

    ``strengths[p - 1]`` is player p's.  Every choice comes from ``random.Random(seed)``, so
    a game replays from its seed.  The players keep their hands as people do: dealt from the
    seed (:class:`companion.sim.uranus.Hands`), each seat choosing with its own hand only,
    while ``state`` is the companion's view, where hidden cards are only counted.
    """

    def __init__(self, rules: SomeRules, state: Seated, strengths: Sequence[Strength],
                 *, seed: int) -> None:
        if len(strengths) != rules.players(state):
            raise InvalidArgumentError(
                f"{len(strengths)} strengths for {rules.players(state)} players")
        self.rules = rules
        self.strengths = tuple(Strength(s) for s in strengths)
        self.rng = random.Random(seed)
        self.decided: Decision | None = None
        """The engine's last decision, ``None`` when the last step was chance's or out of
        turn."""
        self.hands: Hands | None = None
        if rules.name == "uranus":
            from companion.rules.uranus import State
            from companion.sim.uranus import Hands

            self.hands = Hands(own_state(state, State), seed)

    def known(self, player: int) -> frozenset[str] | None:
        """The cards player ``player`` holds (Gardens of Uranus), else ``None``."""
        return None if self.hands is None else self.hands.known(player)

    def step(self, state: Seated, strength: Strength | None = None) -> Hashable:
        """The next step in ``state``: a roll of the dice when chance is next, a seat's
        out-of-turn step when one has it (the Hexagon card shown), else the step of the
        player to move at their strength (or ``strength``).  Raises
        :class:`InvalidArgumentError` once the game is over."""
        rules = self.rules
        self.decided = None
        if chance_next(rules, state):
            return roll(rules, state, self.rng)
        for player in range(1, rules.players(state) + 1):
            claim: Hashable | None = interrupt(rules, state, player, self.known(player))
            if claim is not None:
                return claim
        mover = rules.to_move(state)
        self.decided = decide(rules, state, strength or self.strengths[mover - 1],
                              rng=self.rng, known=self.known(mover))
        step: Hashable = self.decided.step
        return step

    def played(self, state: Seated, step: Hashable) -> None:
        """Keep the hands up to date with ``step`` made in ``state`` (a card scored is
        replaced by the top card of its deck)."""
        if self.hands is not None:
            self.hands.played(state, step)


def roll(rules: SomeRules, state: Seated, rng: random.Random) -> Hashable:
    """Chance's step, drawn as the real source draws it (Gardens of Mars: each die 1-6)."""
    module = importlib.import_module(f"companion.sim.{rules.name}")
    step: Hashable = module.roll(state, rng)
    return step


def play(rules: SomeRules, strengths: Sequence[Strength], *, seed: int,
         options: Mapping[str, object] | None = None,
         on_step: Callable[[Seated, Hashable], None] | None = None) -> Seated:
    """A whole game of ``rules`` among seats of ``strengths`` from ``seed`` (the setup and
    every choice), without a board: the final state.  ``on_step(state, step)`` is called
    before each step."""
    state: Seated = rules.new_game(len(strengths), seed, options or {})
    seats = VirtualSeats(rules, state, strengths, seed=seed)
    while rules.outcome(state) is None:
        step = seats.step(state)
        if on_step is not None:
            on_step(state, step)
        seats.played(state, step)
        state = rules.apply(state, step)
    return state


def announced_step(rules: SomeRules, state: Seated, rng: random.Random) -> Hashable | None:
    """At the companion's seat, the step the matrix announces, as the person there carries it
    out (with whatever chance gives it: the flowers drawn from the tube); ``None`` at a
    person's seat or when nothing is announced (a roll).  ``rules`` are the referee's
    (:class:`companion.referee.seats.SeatedRules` when the companion plays)."""
    if not isinstance(rules, SeatedRules) or rules.seats.announced(state) is None:
        return None
    step: Hashable = rng.choice(list(rules.legal_steps(state)))
    return step


def cards_for_the_companion(rules: SomeRules, state: Seated, rng: random.Random,
                            held: frozenset[str] | None = None) -> list[Op]:
    """The cards a person deals the companion when the matrix asks for them (Gardens of
    Uranus with a card reader): each held face down to the reader.  ``held``: the cards the
    table dealt that seat (:class:`VirtualSeats` keeps every seat's hand), not read yet, come first;
    any still lacking are drawn among the cards nobody has shown nor dealt it (the principle
    of deferred decisions, as for the virtual people's own cards, :mod:`companion.sim.uranus`).
    ``[]`` when none is asked."""
    if not isinstance(rules, SeatedRules):
        return []
    seats = rules.seats
    missing = seats.missing(rules.core, state)
    if not missing:
        return []
    from companion.rules.uranus import State, seen

    uranus_state = own_state(state, State)
    dealt = {card for cards in seats.dealt.values() for card in cards}
    free = sorted(card for card, mission in seats.catalogue.items()
                  if mission not in seen(uranus_state) and card not in dealt)
    own = [card for card in free if seats.catalogue[card] in (held or ())]
    others = [card for card in free if card not in own]
    cards = (own + rng.sample(others, max(0, missing - len(own))))[:missing]
    return [Signal(rng.uniform(0.4, 0.9), protocol.Card(seq=0, card_id=card))
            for card in cards]


def announced_ops(rules: SomeRules, state: Seated, step: Hashable,
                  rng: random.Random) -> list[Op]:
    """The operations beside the cells for an announced ``step``: those of
    :func:`chance_ops`, but for a step no cell shows (a card scored, a die discarded) the
    dice that leave the tray and OK, which carries it out."""
    ops = chance_ops(rules, state, step, rng)
    if rules.changes(state, step):
        return ops
    dice = [op for op in ops if isinstance(op, Signal) and isinstance(op.message, protocol.Dice)]
    return [*dice, Press(rng.uniform(0.4, 0.8), "ok")]
