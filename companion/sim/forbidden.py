"""Where the pieces of a step go when the rules forbid it: read from its notation alone.

The rules cores say what a *legal* step changes; a maker who types a forbidden step into the
simulator (``companion sim --interactive``) wants it carried out all the same, to watch the
companion refuse it.  :func:`forbidden_changes` reads the physical part of a parsed step
without asking whether it is legal: a move takes the piece on its from-cell to its to-cell
(the flower it stood on stays; an Enceladus Martian picks the flower it lands on, a gardener
stands on it), a pick takes the flower off its cell, a plant puts a flower under the
gardener, a swap exchanges two pieces, an Enceladus special action puts the player's disc on
its slot (the wildflower action takes the wildflower off it).  What the notation does not
say (which of two Martians moves, where a jump lands) or what no hand can do (two pieces on
one cell) is an :class:`companion.errors.InvalidStepError` with a sentence saying so.  For a
legal step it agrees with the rules core, but for what follows by itself (an Enceladus
soliflower).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping

from companion.board import protocol
from companion.errors import InvalidStepError
from companion.rules.base import EMPTY, Cell, Piece, disc, martian, parse_piece, top_and_under
from companion.rules.hexes import hex_name

Changes = dict[Cell, Piece]


def forbidden_changes(game: str, board: Mapping[Cell, Piece], player: int,
                      step: Hashable) -> Changes:
    """The cells ``step`` changes on ``board`` (cell -> new piece) when ``player`` makes it,
    whether the rules allow it or not; ``game`` is the rules core's name (``"enceladus"``,
    ``"mars"``, ``"uranus"``), ``step`` parsed by its ``parse_step``.

    Raises :class:`companion.errors.InvalidStepError` with one sentence when the notation
    does not say where a piece goes or no hand could put it there.
    """
    return _GAMES[game](_Hands(board, player), step)


class _Hands:
    """The board as it stands and the player whose hands move its pieces."""

    def __init__(self, board: Mapping[Cell, Piece], player: int) -> None:
        self.board = board
        self.player = player
        self.changes: Changes = {}

    def at(self, cell: Cell) -> Piece:
        if cell not in self.board:
            raise InvalidStepError(f"{cell} is not a cell of this board")
        return self.changes.get(cell, self.board[cell])

    def mover(self, named: Cell | None, what: str, naming: str = "") -> Cell:
        """The cell of the player's Martian or gardener: ``named``, else their only one;
        ``naming`` says how a step names one of several."""
        own = [c for c in self.board if (info := parse_piece(self.at(c))).kind == "martian"
               and info.player == self.player]
        if named is not None:
            if named not in own:
                raise InvalidStepError(f"P{self.player} has no {what} on {named}")
            return named
        if not own:
            raise InvalidStepError(f"P{self.player} has no {what} on the board to move")
        if len(own) > 1:
            raise InvalidStepError(f"P{self.player} has more than one {what} on the board"
                                   + (f": name the one that moves, e.g. {naming}" if naming
                                      else ", so the simulator cannot tell which moves"))
        return own[0]

    def land(self, cell: Cell, head: Piece, plant: str | None = None,
             picks: bool = False) -> None:
        """``head`` (a Martian or gardener) set down on ``cell``: on a flower ``plant``ed
        there first, or on the flower already there, or (``picks``) taking that flower."""
        info = parse_piece(self.at(cell))
        if picks and info.kind in ("flower", "wild"):
            info = parse_piece(EMPTY)
        if plant is not None and info.kind != "empty":
            raise InvalidStepError(f"{cell} is not empty, so no {plant} flower can be planted "
                                   "there")
        if info.kind not in ("empty", "flower"):
            what = f"P{info.player}'s piece" if info.player else f"a {info.kind}"
            raise InvalidStepError(f"{cell} holds {what}, and nothing can stand on it")
        colour = plant or info.colour
        self.changes[cell] = f"{head}+{colour}" if colour else head

    def move(self, src: Cell, dest: Cell, plant: str | None = None,
             picks: bool = False) -> None:
        """The Martian or gardener on ``src`` to ``dest`` (as :meth:`land`); the flower it
        stood on stays."""
        head, under = top_and_under(self.at(src))
        self.changes[src] = under
        self.land(dest, head, plant, picks)

    def take(self, cell: Cell) -> None:
        """The flower on ``cell`` picked (a Martian standing on it stays)."""
        piece = self.at(cell)
        info = parse_piece(piece)
        if info.kind not in ("flower", "wild") and not (info.kind == "martian" and info.colour):
            raise InvalidStepError(f"{cell} holds no flower to pick")
        self.changes[cell] = top_and_under(piece)[0] if info.kind == "martian" else EMPTY

    def carry(self, src: Cell, dest: Cell) -> None:
        """The piece on ``src`` (a flower, a peak) carried to the empty ``dest``."""
        if self.at(src) == EMPTY:
            raise InvalidStepError(f"{src} is empty: there is nothing to move")
        if self.at(dest) != EMPTY:
            raise InvalidStepError(f"{dest} is not empty, and no piece can go on top of another")
        self.changes[dest], self.changes[src] = self.at(src), EMPTY

    def exchange(self, a: Cell, b: Cell) -> None:
        self.changes[a], self.changes[b] = self.at(b), self.at(a)


def _enceladus(hands: _Hands, step: Hashable) -> Changes:
    from companion.rules.enceladus import ACTIONS, Action, Move, Place

    if isinstance(step, Place):
        hands.land(step.cell, martian(hands.player))
        return hands.changes
    assert isinstance(step, Move | Action)  # the other kinds of Enceladus step

    def mover() -> Cell:
        return hands.mover(step.martian, "Martian", "e5-f5/f6")

    if isinstance(step, Move):  # a Martian picks the flower it lands on
        hands.move(mover(), step.to, picks=True)
        if step.pick is not None:
            hands.take(step.pick)
        return hands.changes
    cells = step.cells
    if step.name in ("diagonal", "jump"):
        if not cells:
            raise InvalidStepError(f"say where the {step.name} lands, e.g. {step.name}:"
                                   f"{step.pay}:g6")
        hands.move(mover(), cells[0], picks=True)
    elif step.name == "pick":
        hands.take(cells[0])
    elif step.name == "swap_martian":  # the Martian and a flower or peak change places
        here, other = mover(), cells[0]
        if parse_piece(hands.at(other)).kind not in ("flower", "peak"):
            raise InvalidStepError(f"{other} holds no flower or peak to swap with")
        hands.changes[here], hands.changes[other] = (hands.at(other),
                                                     top_and_under(hands.at(here))[0])
    elif step.name in ("swap_flowers", "swap_peak_flower"):
        hands.exchange(*cells)
    elif step.name in ("move_flower", "move_peak"):
        hands.carry(*cells)
    slot = f"A{ACTIONS.index(step.name) + 1}"
    if step.name == "wildflower":  # the wildflower is taken off its slot
        hands.take(slot)
    elif parse_piece(hands.at(slot)).kind != "disc":  # a used action keeps the disc it has
        hands.changes[slot] = disc(hands.player)
    return hands.changes


def _mars(hands: _Hands, step: Hashable) -> Changes:
    from companion.rules.mars import Move, Place, Roll

    if isinstance(step, Place):
        hands.land(hex_name(step.cell), martian(hands.player))
    elif isinstance(step, Move):
        hands.move(hands.mover(None, "gardener"), hex_name(step.to), step.plant)
    elif isinstance(step, Roll) and (len(step.values) > protocol.MAX_DICE
                                     or not all(1 <= v <= 6 for v in step.values)):
        raise InvalidStepError(f"the dice tray reads up to {protocol.MAX_DICE} dice of 1 to 6")
    return hands.changes  # dice rolled or a die used: the tray reads them, no cell changes


def _uranus(hands: _Hands, step: Hashable) -> Changes:
    from companion.rules.uranus import Move, Place

    if isinstance(step, Place):
        hands.land(hex_name(step.cell), martian(hands.player))
    elif isinstance(step, Move):
        hands.move(hands.mover(None, "gardener"), hex_name(step.to), step.plant)
    return hands.changes  # a card shown changes no cell: it is held to the reader


_GAMES: dict[str, Callable[[_Hands, Hashable], Changes]] = {
    "enceladus": _enceladus, "mars": _mars, "uranus": _uranus}
