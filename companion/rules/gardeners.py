"""What the two gardener games share: Gardens of Mars and Gardens of Uranus.

In both, each player has one gardener on a garden of hexes (:mod:`companion.rules.hexes`)
and a reserve of flowers dealt at random; a gardener is first placed on an empty hex, then
moves in a straight line and plants a flower from the reserve where it stops on an empty
hex.  A flower under a gardener stays on its hex (the board shows ``"M1+red"``), and the
score line shows points.  Each game's class derives from :class:`GardenerRules` and gives
the hooks the shared recognition needs.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import Field, replace
from types import MappingProxyType
from typing import Any, ClassVar, Protocol, TypeAlias, TypeVar

from companion.errors import InvalidPositionError, InvalidStepError
from companion.rules.base import (
    Cell,
    Move,
    Piece,
    Rules,
    Seated,
    Step,
    deal_problems,
    martian,
    martian_on,
)
from companion.rules.hexes import Hex, hex_name, parse_hex

DataclassFields: TypeAlias = dict[str, Field[Any]]
"""The ``dataclasses`` module's table of a dataclass's fields, typed as the standard
library's own stubs type it: what marks a state as a dataclass to ``replace``."""


class GardenerState(Seated, Protocol):
    """What the shared code reads of a gardener game's state: a frozen dataclass."""

    __dataclass_fields__: ClassVar[DataclassFields]

    @property
    def gardeners(self) -> tuple[Hex | None, ...]:
        """``gardeners[p - 1]``: player p's hex, ``None`` before it is placed."""
        ...

    @property
    def scores(self) -> tuple[int, ...]:
        """``scores[p - 1]``: player p's points so far."""
        ...


FLOWERS_EACH: Mapping[int, int] = MappingProxyType({2: 30, 3: 20, 4: 15, 5: 12})
"""Flowers dealt to each player by the number of players: both games have 60 flowers and
deal them all (Gardens of Mars and Gardens of Uranus, Setup)."""


def overdealt(reserves: Mapping[str, Mapping[str, int]], players: int) -> list[str]:
    """A problem for each reserve of a case position (``{player: {colour: count}}``) holding
    more flowers than a player of ``players`` is dealt (:data:`FLOWERS_EACH`)."""
    each = FLOWERS_EACH[players]
    return [
        f"position.reserves.{p} holds {sum(r.values())} flowers; each of {players} players "
        f"is dealt {each}"
        for p, r in reserves.items()
        if sum(r.values()) > each
    ]


def deal_flowers(
    rng: random.Random, colours: Sequence[str], per_colour: int, players: int, each: int
) -> tuple[tuple[int, ...], ...]:
    """Every player's reserve (counts in ``colours`` order) after ``each`` flowers are dealt
    to each of ``players`` from a shuffled bag of ``per_colour`` flowers of every colour."""
    bag = [colour for colour in colours for _ in range(per_colour)]
    rng.shuffle(bag)
    return tuple(
        tuple(bag[p * each : (p + 1) * each].count(c) for c in colours) for p in range(players)
    )


def gardener(player: int, under: str) -> Piece:
    """The piece of player ``player``'s gardener on a hex holding ``under`` (a colour or
    ``""``): ``"M1+red"`` or ``"M1"``."""
    return martian_on(player, under) if under else martian(player)


def move_changes(player: int, start: Hex, left: str, to: Hex, found: str) -> dict[Cell, Piece]:
    """The two hexes a gardener's move changes: ``start`` shows the flower ``left`` under it
    (or ``""``) and ``to`` the gardener on the flower ``found`` or planted there."""
    return {hex_name(start): left, hex_name(to): gardener(player, found)}


GState = TypeVar("GState", bound=GardenerState)


def hand_dealt(players: int, reserves: Sequence[Mapping[str, int]], colours: Sequence[str],
               per_colour: int) -> tuple[tuple[int, ...], ...]:
    """``reserves`` as dealt by hand at the table (``reserves[p - 1]``: player p's
    ``{colour: count}``) in the state's form, a count per colour of ``colours``.  Raises
    :class:`InvalidPositionError` with every sentence of
    :func:`companion.rules.base.deal_problems` (:data:`FLOWERS_EACH` each, ``per_colour`` a
    colour in the bag)."""
    problems = deal_problems(players, reserves, colours, FLOWERS_EACH, per_colour)
    if problems:
        raise InvalidPositionError(" ".join(problems))
    return tuple(tuple(int(r.get(c, 0)) for c in colours) for r in reserves)


class GardenerRules(Rules[GState, Step], ABC):
    """The :class:`companion.rules.base.GameRules` defaults of a gardener game: its score line,
    the reserves dealt by hand from the game's bag (:attr:`colours`,
    :attr:`flowers_per_colour`), and :meth:`candidates` from two hooks of the game
    (:meth:`_placements_on` and :meth:`_moves_onto`)."""

    colours: ClassVar[tuple[str, ...]]
    """The colours of the game's flowers, in the order of a state's reserve counts."""
    flowers_per_colour: ClassVar[int]
    """How many flowers of each colour the bag holds."""

    @abstractmethod
    def legal_steps(self, state: GState) -> Sequence[Step]:
        """Every legal step, in one sequence of steps each made once (see
        :class:`companion.rules.base.GameRules`)."""

    @abstractmethod
    def apply(self, state: GState, step: Step) -> GState:
        """The state after ``step`` (see :class:`companion.rules.base.GameRules`)."""

    def advance(self, state: GState, step: Step) -> GState:
        """:meth:`apply` itself, end test and all: the game's is no search worth leaving out
        of a question whether steps lead to one state."""
        return self.apply(state, step)

    @abstractmethod
    def _placements_on(self, state: GState, cell: Cell) -> Iterator[Step]:
        """The legal placement of the gardener to move on ``cell``, if there is one: none
        outside the placement phase."""

    @abstractmethod
    def _moves_onto(self, state: GState, landing: Cell | None) -> Iterator[Step]:
        """The legal moves of the gardener to move, in :meth:`legal_steps` order, that land
        on ``landing`` (on any hex when ``None``): none outside the move phase."""

    @abstractmethod
    def _landing(self, move: Step) -> Hex:
        """Where ``move``, one of :meth:`_moves_onto`, lands."""

    @abstractmethod
    def _flower_on(self, state: GState, spot: Hex) -> str:
        """The flower on ``spot``, under a gardener or not (``""`` for none)."""

    def reserve_problems(self, state: GState, reserves: Sequence[Mapping[str, int]]) -> list[str]:
        """What does not add up in reserves dealt by hand (``reserves[p - 1]``: player p's
        ``{colour: count}``) for the fresh game ``state``: each player is dealt 30 flowers
        with 2 players, 20 with 3, 15 with 4, 12 with 5 (:data:`FLOWERS_EACH`), and the bag
        holds :attr:`flowers_per_colour` of each colour, 10 in Gardens of Mars and 12 in
        Gardens of Uranus (each game's Setup; docs/RULINGS.md Mars #1 and Uranus #1).  One
        sentence per problem; ``[]`` when the deal adds up."""
        return deal_problems(state.players, reserves, self.colours, FLOWERS_EACH,
                             self.flowers_per_colour)

    def deal_reserves(self, state: GState, reserves: Sequence[Mapping[str, int]]) -> GState:
        """``state`` (a fresh game) with ``reserves`` as dealt at the table in place of its
        seeded deal.  Raises :class:`InvalidPositionError` with every sentence of
        :meth:`reserve_problems`."""
        return replace(state, reserves=hand_dealt(state.players, reserves, self.colours,
                                                  self.flowers_per_colour))

    def status(self, state: GState) -> tuple[tuple[int, str], ...]:
        """Each player's points so far: ``((1, "12 pts"), (2, "0 pts"))``."""
        return tuple((p, f"{score} pts") for p, score in enumerate(state.scores, 1))

    def candidates(
        self,
        state: GState,
        touched: frozenset[Cell],
        within: frozenset[Cell] | None = None,
        distinct: bool = False,
    ) -> Iterator[Step]:
        """The legal steps whose changed hexes include all of ``touched``: every step when
        nothing is touched (a step that moves no gardener changes no hex); a placement on the
        one touched hex; a move of the gardener to move landing on the one touched hex
        besides its own, or anywhere when only its own is touched.  With ``within`` (and
        something touched), only the steps whose hexes lie in ``within`` or have a flower (a
        gardener stepping off or onto it): the moves are told by their landing, none's
        changes worked out.  ``distinct`` narrows nothing: a turn has a few hundred steps at
        most."""
        if not touched:
            yield from self.legal_steps(state)
            return
        if len(touched) == 1 and (within is None or touched <= within):
            yield from self._placements_on(state, next(iter(touched)))
        here = state.gardeners[state.to_move - 1]
        if here is None:
            return
        landing = touched - {hex_name(here)}
        if len(landing) > 1:
            return
        moves = self._moves_onto(state, next(iter(landing), None))
        if within is None:
            yield from moves
            return
        if hex_name(here) not in within and not self._flower_on(state, here):
            return
        spots = _spots(within)
        for move in moves:
            to = self._landing(move)
            if to in spots or self._flower_on(state, to):
                yield move

    def moves_from(self, state: GState, cell: Cell) -> list[Move] | None:
        """The moves of the gardener to move when ``cell`` is its hex, as
        :meth:`_moves_onto` lists them, each ``(landing, None, the flower it leaves on
        cell)``, none's changes worked out (its destinations shown while it is in the hand);
        ``[]`` for any other hex and outside the move phase."""
        here = state.gardeners[state.to_move - 1]
        if here is None or hex_name(here) != cell:
            return []
        left = self._flower_on(state, here)
        return [(hex_name(self._landing(m)), None, left) for m in self._moves_onto(state, None)]


def _spots(cells: frozenset[Cell]) -> set[Hex]:
    """The hexes among ``cells`` (the others name no hex a gardener may reach)."""
    spots = set()
    for cell in cells:
        try:
            spots.add(parse_hex(cell))
        except InvalidStepError:
            continue
    return spots
