"""A setup laid out by hand: the simulated players fill the garden from the bag at random, as
the rules texts say, instead of copying the companion's seeded setup from the matrix.

:func:`draw_setup` draws the setup with the simulator's own ``random.Random`` (never the
companion's seed): Enceladus, the 95 flowers and 5 peaks from the bag, drawn again while the
peaks fence off part of the garden; Mars, an empty board (with the peaks variant, that many
peaks on hexes apart from each other and from the central space); Uranus, the board's trees on
random spots off the edge.  :func:`bare_board` is the table before that, and
:func:`lay_out` the script of a person putting the pieces down one at a time.  The referee
takes the result with its ``adopt`` (``[game] setup = "board"``).  In Mars and Uranus the
players also deal the flowers from the bag (:func:`draw_deal`) and enter the counts with
Select and OK (:func:`deal_presses`, for :class:`companion.referee.deal.DealTable`).
"""

from __future__ import annotations

import random

from companion.errors import InvalidArgumentError
from companion.rules import enceladus, mars, uranus
from companion.rules.base import (
    EMPTY,
    PEAK,
    TREE,
    Board,
    Cell,
    Piece,
    Seated,
    SomeRules,
    own_state,
    parse_piece,
)
from companion.rules.gardeners import FLOWERS_EACH
from companion.rules.hexes import hex_name
from companion.rules.missions import COLOURS
from companion.rules.squares import SQUARE_NAMES
from companion.sim.perform import Op, Press, Put

SET_DOWN_S = (0.1, 0.6)
"""Seconds between two pieces a person puts down from the bag (shortest, longest)."""


def bare_board(rules: SomeRules, state: Seated) -> dict[Cell, Piece]:
    """The board of the fresh game ``state`` with its garden's flowers, peaks and trees
    still in the bag (the Enceladus wildflower and a tube cover stay on the strip)."""
    return {cell: EMPTY if parse_piece(piece).kind in ("flower", "peak", "tree") else piece
            for cell, piece in rules.board(state).items()}


def draw_setup(rules: SomeRules, state: Seated, rng: random.Random) -> dict[Cell, Piece]:
    """A random legal setup of the fresh game ``state`` as the players draw it with ``rng``:
    every cell of the layout to its piece."""
    board = bare_board(rules, state)
    if rules.name == "enceladus":
        colours = own_state(state, enceladus.State).options.colours
        bag = [PEAK] * enceladus.PEAKS + [c for c in colours
                                          for _ in range(enceladus.FLOWERS_PER_COLOUR)]
        squares = SQUARE_NAMES
        while True:  # peaks that fence off part of the garden: the players draw again
            rng.shuffle(bag)
            if enceladus.setup_valid(s for s, p in zip(squares, bag, strict=True) if p == PEAK):
                break
        board.update(zip(squares, bag, strict=True))
    elif rules.name == "mars":
        spots = [c for c in mars.GRID.cells if c != mars.CENTRE]
        rng.shuffle(spots)
        peaks: set[tuple[int, int]] = set()
        wanted = own_state(state, mars.State).options.peaks
        for spot in spots:
            if len(peaks) == wanted:
                break
            if peaks.isdisjoint(mars.GRID.neighbours[spot]):
                peaks.add(spot)
        board.update(dict.fromkeys((hex_name(c) for c in peaks), PEAK))
    elif rules.name == "uranus":
        shape = own_state(state, uranus.State).shape
        grid = shape.grid
        inner = sorted(c for c in grid.cells if c not in grid.edge)
        board.update(dict.fromkeys((grid.names[c] for c in rng.sample(inner, shape.trees)),
                                   TREE))
    else:
        raise InvalidArgumentError(f"no setup by hand for {rules.name}")
    return board


def lay_out(board: Board, setup: Board, rng: random.Random) -> list[Op]:
    """A person putting down, in no set order, every piece where ``setup`` differs from
    ``board`` (the table as it stands)."""
    cells = [cell for cell, piece in setup.items() if board.get(cell, EMPTY) != piece]
    rng.shuffle(cells)
    return [Put(rng.uniform(*SET_DOWN_S), cell, setup[cell]) for cell in cells]


def draw_deal(rules: SomeRules, state: Seated,
              rng: random.Random) -> list[dict[str, int]]:
    """The flowers of a Mars or Uranus bag dealt at random with ``rng`` to the players of the
    fresh game ``state``: each player's ``{colour: count}``."""
    if rules.name == "mars":
        colours, each, per_colour = mars.COLOURS, FLOWERS_EACH, mars.FLOWERS_PER_COLOUR
    elif rules.name == "uranus":
        colours, each, per_colour = COLOURS, FLOWERS_EACH, uranus.FLOWERS_PER_COLOUR
    else:
        raise InvalidArgumentError(f"{rules.name} deals no flowers")
    bag = [c for c in colours for _ in range(per_colour)]
    rng.shuffle(bag)
    players, hand = rules.players(state), each[rules.players(state)]
    return [{c: bag[p * hand:(p + 1) * hand].count(c) for c in colours} for p in range(players)]


def deal_presses(deal: list[dict[str, int]], rng: random.Random) -> list[Op]:
    """Select and OK as the players enter ``deal`` at the companion: per player, Select as
    many times as each colour's count, then OK, every colour but the last (the rest)."""
    ops: list[Op] = []
    for counts in deal:
        for count in list(counts.values())[:-1]:
            ops += [Press(rng.uniform(0.15, 0.4), "select") for _ in range(count)]
            ops.append(Press(rng.uniform(0.3, 0.8), "ok"))
    return ops
