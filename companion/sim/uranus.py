"""Virtual Gardens of Uranus players' hands for what no cell shows: the mission cards.

:func:`chance_ops` is what :func:`companion.sim.players.chance_ops` calls for every Uranus step;
it plays a board with a card reader (``[board] cards = "reader"``, the default and the demo's
board).  :func:`card_ops` gives the same for a table without a reader.  The operations follow
the matrix as :class:`companion.referee.uranus.CardTable` draws it:

* a card scored, claimed (the Hexagon) or shown at the end: the card is held to the reader
  (one ``CARD`` message with its id from the catalogue), or, without a reader, OK opens the
  card menu;
* whatever the matrix then asks (the card's kind and name without a reader, the deck, whose
  Hexagon it is) the players answer like any question: the menu's labels are the rules core's
  ``choice_path``.

Which cards a virtual player holds: the companion's state (the one the players follow, as
people follow the matrix) knows only how many unknown cards each hand has.  Seated players
(:class:`companion.sim.players.VirtualSeats`) hold real hands, dealt from the seed by :class:`Hands`
and kept by them alone, and score and show only those.  The plain random choice
(:func:`companion.sim.players.choose_step`) chooses among the cards a player may hold, so a
card in an unknown hand is decided when it is shown, uniformly among the cards nobody has
shown yet: by the principle of deferred decisions that is the same game as a shuffled deal
whose holders play a random card, and every sequence of cards it shows is one a real deal
could show.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping

from companion.board import protocol
from companion.errors import InvalidArgumentError
from companion.referee.uranus import load_catalogue
from companion.rules.base import Seated
from companion.rules.missions import HEXAGON
from companion.rules.uranus import Claim, Reveal, Score, State, Step, deal_missions
from companion.sim.perform import Op, Press, Signal


def chance_ops(state: State, step: Step, rng: random.Random) -> list[Op]:
    """The card-reader players' operations for ``step`` in ``state`` (see the module
    docstring), with the ids of the catalogue shipped with the companion
    (:func:`companion.referee.uranus.load_catalogue`)."""
    return card_ops(state, step, rng, source="reader", catalogue=load_catalogue())


def card_ops(
    state: State,
    step: Step,
    rng: random.Random,
    *,
    source: str,
    catalogue: Mapping[str, str],
) -> list[Op]:
    """The operations for the hidden part of ``step`` with the card ``source`` (``"reader"``
    or ``"buttons"``); ``catalogue`` is ``{card id: mission}``.  Waits in seconds, from
    ``rng``.  Raises :class:`InvalidArgumentError` for an unknown source and ``KeyError`` for a
    mission with no card in ``catalogue``.
    """
    if source not in ("reader", "buttons"):
        raise InvalidArgumentError(f"unknown card source {source!r}")
    if not isinstance(step, Score | Claim | Reveal):
        return []
    wait = rng.uniform(0.3, 0.8)
    if source == "buttons":
        return [Press(wait, "ok")]
    mission = step.mission if isinstance(step, Score | Reveal) else HEXAGON
    card_id = {m: card for card, m in catalogue.items()}[mission]
    return [Signal(wait, protocol.Card(seq=0, card_id=card_id))]


class Hands:
    """The cards the virtual players of a Gardens of Uranus game hold, dealt from ``seed``
    (:func:`companion.rules.uranus.deal_missions`: five each, the rest in the board's
    decks), for the players alone: ``state`` (the companion's view of the game's start)
    gives the number of players and the board."""

    def __init__(self, state: State, seed: int) -> None:
        deal = deal_missions(state.players, state.shape.name, seed)
        self._held = [set(hand) for hand in deal.hands]
        self._decks = [list(deck) for deck in deal.decks]

    def known(self, player: int) -> frozenset[str]:
        """The cards player ``player`` holds now."""
        return frozenset(self._held[player - 1])

    def played(self, state: Seated, step: Hashable) -> None:
        """After ``step`` in ``state``: a card scored leaves its player's hand, who draws the
        top card of the deck named."""
        if isinstance(step, Score):
            held = self._held[state.to_move - 1]
            held.discard(step.mission)
            deck = self._decks[step.draw - 1]
            if deck:
                held.add(deck.pop(0))
