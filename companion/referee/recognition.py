"""Step recognition: which legal steps explain what the sensors see.

Pure functions over a rules core (:class:`companion.rules.base.GameRules`), an expected board
and an observed board (how a turn flows: :mod:`companion.referee.referee`).

Vocabulary
----------
*diff*: the cells (tray excluded) where the observed board differs from the expected one.
A step *explains* a diff when every differing cell is one the step changes and the observed
piece there is on the way to the step's piece (already there, lifted away, or one part of a
gardener-on-a-flower).  A step *completes* when the diff equals its changes exactly.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.rules.base import EMPTY, OCCUPIED, Board, Cell, GameRules, Piece, parse_piece


def on_the_way(observed: Piece, target: Piece) -> bool:
    """Whether a cell showing ``observed`` may still become ``target`` as a person works.

    True when it already is the target, when the cell is empty (a piece lifted, or not yet
    placed), or when ``target`` is a gardener on a flower and ``observed`` is one of its two
    parts (the flower put down first, or the gardener before the flower under it).
    """
    if observed in (target, EMPTY):
        return True
    head, plus, colour = target.partition("+")
    return bool(plus) and observed in (head, colour)


def board_diff(expected: Board, observed: Board, ignore: frozenset[Cell]) -> dict[Cell, Piece]:
    """``{cell: observed piece}`` where ``observed`` differs from ``expected``, except the
    ``ignore`` cells (the show-tray)."""
    return {
        cell: piece
        for cell, piece in observed.items()
        if cell not in ignore and expected.get(cell, EMPTY) != piece
    }


def _stacked(before: Piece, after: Piece) -> bool:
    """Whether one piece is the other with a gardener added or taken off (``"red"`` and
    ``"M1+red"``): a change of the top of a stack, not of what stands on the cell."""
    return before.partition("+")[2] == after or after.partition("+")[2] == before


def sensed(piece: Piece) -> Piece:
    """What a presence-only sensor reports for ``piece``: ``"occupied"`` or empty."""
    return OCCUPIED if piece else EMPTY


def sensed_board(board: Board) -> dict[Cell, Piece]:
    """``board`` as a presence-only board reports it."""
    return {cell: sensed(piece) for cell, piece in board.items()}


@dataclass
class StepIndex:
    """The legal steps of one state and their changes, computed lazily and kept for the
    state's lifetime (the referee makes one per committed state).

    ``changes_of(step)`` is what the sensors will see change (``rules.changes``, or on a
    ``presence`` board only the cells that go from empty to occupied or back);
    ``piece_changes(step)`` is ``rules.changes`` itself; ``unseen(step)`` the cells whose
    piece changes where a presence sensor reads the same before and after (a flower swapped
    for another, a Martian landing where a flower stood).  ``explaining(diff)`` returns the
    legal steps that explain ``diff`` and, among them, those it completes.
    """

    rules: GameRules[Any, Any]
    state: Hashable
    expected: Board
    presence: bool = False
    _pieces: dict[Hashable, dict[Cell, Piece]] = field(default_factory=dict)
    _changes: dict[Hashable, dict[Cell, Piece]] = field(default_factory=dict)
    _by_cells: dict[frozenset[Cell], list[Hashable]] = field(default_factory=dict)

    def piece_changes(self, step: Hashable) -> dict[Cell, Piece]:
        found = self._pieces.get(step)
        if found is None:
            found = self._pieces[step] = self.rules.changes(self.state, step)
        return found

    def changes_of(self, step: Hashable) -> dict[Cell, Piece]:
        if not self.presence:
            return self.piece_changes(step)
        found = self._changes.get(step)
        if found is None:
            found = self._changes[step] = {
                cell: sensed(piece)
                for cell, piece in self.piece_changes(step).items()
                if sensed(piece) != sensed(self.expected.get(cell, EMPTY))
            }
        return found

    def unseen(self, step: Hashable) -> set[Cell]:
        """The cells ``step`` changes that a presence board reads the same before and after
        and that a person must lift a piece from to change: not a gardener stepping onto or
        off the flower it stands on (the flower never leaves the cell)."""
        changes = self.changes_of(step)
        return {
            cell
            for cell, piece in self.piece_changes(step).items()
            if cell not in changes and not _stacked(self.expected.get(cell, EMPTY), piece)
        }

    def candidates(self, touched: frozenset[Cell]) -> list[Hashable]:
        """The rules core's candidates for ``touched`` (the legal steps that may change all
        of those cells), kept per set of cells."""
        found = self._by_cells.get(touched)
        if found is None:
            found = self._by_cells[touched] = list(self.rules.candidates(self.state, touched))
        return found

    def explaining(
        self, diff: Mapping[Cell, Piece], handled: set[Cell] | frozenset[Cell] = frozenset()
    ) -> tuple[list[Hashable], list[Hashable]]:
        """``(explaining, completing)`` steps for ``diff`` (both empty for an empty diff).

        On a presence board a cell the step changes unseen may read empty on the way (the
        flower lifted so a Martian can stand there); a step completes only once every such
        cell is among ``handled`` (the cells seen to change since the last commit).
        """
        if not diff:
            return [], []
        explaining: list[Hashable] = []
        completing: list[Hashable] = []
        for step in self.candidates(frozenset(diff)):
            changes = self.changes_of(step)
            unseen = self.unseen(step) if self.presence else set()
            if all(
                (cell in changes and on_the_way(piece, changes[cell]))
                or (piece == EMPTY and cell in unseen)
                for cell, piece in diff.items()
            ):
                explaining.append(step)
                if (
                    len(changes) == len(diff)
                    and all(diff.get(c) == p for c, p in changes.items())
                    and unseen <= handled
                ):
                    completing.append(step)
        return explaining, completing


def lifted_pieces(expected: Board, diff: Mapping[Cell, Piece]) -> set[Piece]:
    """The Martians/gardeners that left their expected cell and are not yet put down
    anywhere the diff shows (pieces in a player's hand)."""
    gone = set()
    for cell, piece in diff.items():
        before = parse_piece(expected.get(cell, EMPTY))
        if before.kind == "martian" and parse_piece(piece).player != before.player:
            gone.add(f"M{before.player}")
    for piece in diff.values():
        info = parse_piece(piece)
        if info.kind == "martian":
            gone.discard(f"M{info.player}")
    return gone


def guidance(
    index: StepIndex, expected: Board, diff: Mapping[Cell, Piece], explaining: list[Hashable]
) -> dict[Cell, str]:
    """Cells to highlight while a step is under way: ``{cell: role}``.

    A lifted Martian/gardener: its legal destinations (``"dest"``).  Otherwise, the cells that
    every explaining step still needs: ``"pick"`` where a piece must go away, ``"place"``
    where one must be put.
    """
    lifted = lifted_pieces(expected, diff)
    if lifted:
        dests: dict[Cell, str] = {}
        for step in explaining:
            for cell, piece in index.piece_changes(step).items():
                if piece.partition("+")[0] in lifted and diff.get(cell) != piece:
                    dests[cell] = "dest"
        return dests
    todo: dict[Cell, Piece] | None = None
    for step in explaining:
        remaining = {c: p for c, p in index.changes_of(step).items() if diff.get(c) != p}
        todo = (
            remaining if todo is None else {c: p for c, p in todo.items() if remaining.get(c) == p}
        )
    return {cell: ("pick" if piece == EMPTY else "place") for cell, piece in (todo or {}).items()}
