"""The 10 x 10 square grid of Gardens of Enceladus.

Squares are named like chess squares (``docs/RULINGS.md``, Coordinates):
columns ``a``-``j`` left to right, rows ``1``-``10`` from the bottom edge up, so ``"a1"`` is the
bottom-left corner and ``"j10"`` the top-right one.  Inside the rules a square is an index
``0..99``: ``index = 10 * (row - 1) + column``, which is also the dump order of the garden
(``a1..j1, a2..j2, ..., a10..j10``).

Neighbours and rays are computed once at import into tuples (immutable), so the rules core never
recomputes geometry in a hot path.
"""

from __future__ import annotations

from collections.abc import Collection

from companion.errors import InvalidStepError

SIZE = 10
"""Squares per side."""

COLUMNS = "abcdefghij"
"""Column letters, left to right."""

Square = int
"""A square index ``0..99`` (``a1`` is 0, ``j1`` is 9, ``a2`` is 10, ``j10`` is 99)."""

ORTHOGONAL: tuple[tuple[int, int], ...] = ((0, 1), (1, 0), (0, -1), (-1, 0))
"""``(column step, row step)`` of the four orthogonal directions: up, right, down, left."""

DIAGONAL: tuple[tuple[int, int], ...] = ((1, 1), (1, -1), (-1, -1), (-1, 1))
"""The four diagonal directions: up-right, down-right, down-left, up-left."""

SQUARES: tuple[Square, ...] = tuple(range(SIZE * SIZE))
"""Every square, in dump order."""

SQUARE_NAMES: tuple[str, ...] = tuple(f"{COLUMNS[s % SIZE]}{s // SIZE + 1}" for s in SQUARES)
"""``SQUARE_NAMES[index]`` is the square's name."""

_BY_NAME = {name: s for s, name in enumerate(SQUARE_NAMES)}


def square(column: int, row: int) -> Square:
    """The square at ``column`` (0 = ``a``) and ``row`` (0 = row 1); both must be in ``0..9``."""
    return row * SIZE + column


def square_name(sq: Square) -> str:
    """``0 -> "a1"``, ``99 -> "j10"``."""
    return SQUARE_NAMES[sq]


def parse_square(text: str) -> Square:
    """``"a1" -> 0``.  Raises :class:`InvalidStepError` for a name that is not a garden square."""
    try:
        return _BY_NAME[text]
    except KeyError:
        raise InvalidStepError(
            f"{text!r} is not a garden square; name one from a1 to j10 (column a-j, row 1-10)"
        ) from None


def _ray(sq: Square, step: tuple[int, int]) -> tuple[Square, ...]:
    column, row = sq % SIZE + step[0], sq // SIZE + step[1]
    out = []
    while 0 <= column < SIZE and 0 <= row < SIZE:
        out.append(square(column, row))
        column, row = column + step[0], row + step[1]
    return tuple(out)


ORTHOGONAL_RAYS: tuple[tuple[tuple[Square, ...], ...], ...] = tuple(
    tuple(_ray(s, d) for d in ORTHOGONAL) for s in SQUARES
)
"""``ORTHOGONAL_RAYS[s][i]``: the squares from ``s`` outwards (``s`` excluded) in
``ORTHOGONAL[i]``, nearest first, up to the edge."""

DIAGONAL_RAYS: tuple[tuple[tuple[Square, ...], ...], ...] = tuple(
    tuple(_ray(s, d) for d in DIAGONAL) for s in SQUARES
)
"""``DIAGONAL_RAYS[s][i]``: the squares from ``s`` outwards in ``DIAGONAL[i]``, nearest first."""

NEIGHBOURS: tuple[tuple[Square, ...], ...] = tuple(
    tuple(ray[0] for ray in rays if ray) for rays in ORTHOGONAL_RAYS
)
"""``NEIGHBOURS[s]``: the orthogonal neighbours of ``s`` (2 in a corner, 3 on an edge, else 4)."""


def is_connected(members: Collection[Square]) -> bool:
    """Whether ``members`` form one orthogonally connected region (an empty set counts as one)."""
    return board_connected(sum(1 << s for s in set(members)))


def board_connected(board: int) -> bool:
    """Whether the squares of bit board ``board`` (bit ``s`` for square ``s``) form one
    orthogonally connected region (none counts as one): a region grown from one square, the
    whole board shifted a square each way at once (the row ends masked off), until it grows
    no more."""
    region = board & -board
    while True:
        grown = board & (
            region | ((region << 1) & NOT_FIRST_COLUMN) | ((region >> 1) & NOT_LAST_COLUMN)
            | (region << SIZE) | (region >> SIZE)
        )
        if grown == region:
            return region == board
        region = grown


NOT_FIRST_COLUMN = sum(1 << s for s in SQUARES if s % SIZE != 0)
"""The bit board of every square but those of column a: a board shifted one square right
(``<< 1``) and masked with it wraps no row end into the next row."""
NOT_LAST_COLUMN = sum(1 << s for s in SQUARES if s % SIZE != SIZE - 1)
"""The bit board of every square but those of column j, for a board shifted left (``>> 1``)."""
