"""Hex grids in axial coordinates, for Gardens of Mars and Gardens of Uranus.

Coordinates are ``(q, r)`` with ``s = -q - r`` (Red Blob Games' axial system), written
``"q,r"`` (``"-3,2"``) as in ``docs/RULINGS.md`` (Coordinates).  Neighbours
in the order ``(+1,0) (0,+1) (-1,+1) (-1,0) (0,-1) (+1,-1)``; the three line axes are
``(1,0)``, ``(0,1)``, ``(-1,1)``.  A :class:`HexGrid` is built once per board shape and
precomputes neighbours and rays, so the rules cores never recompute geometry in a hot path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cached_property

from companion.errors import InvalidStepError

Hex = tuple[int, int]
"""Axial coordinates ``(q, r)``."""

DIRECTIONS: tuple[Hex, ...] = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))
"""The six neighbour offsets, in the order of docs/RULINGS.md."""

AXES: tuple[Hex, ...] = ((1, 0), (0, 1), (-1, 1))
"""The three line axes."""


def hex_name(cell: Hex) -> str:
    """``(-3, 2) -> "-3,2"``."""
    return f"{cell[0]},{cell[1]}"


_HEX = re.compile(r"(0|-?[1-9][0-9]*),(0|-?[1-9][0-9]*)")
"""A hex's name: two whole numbers in ASCII digits as :func:`hex_name` writes them, each
with a minus sign or none; no ``-0`` and no leading zeros."""


def parse_hex(text: str) -> Hex:
    """``"-3,2" -> (-3, 2)``.  Raises :class:`InvalidStepError` for anything else: a plus
    sign, other digits than 0-9 (``"٠,٠"``), spaces or ``_`` around or within, ``-0`` or a
    leading zero (``"03"``), which would make a second name of a hex (two keys of a case's
    cells for one hex, ``" 3,0"`` beside ``"3,0"``)."""
    found = _HEX.fullmatch(text)
    if found is None:
        raise InvalidStepError(f"{text!r} is not a hex cell; write it as q,r with the digits "
                               "0-9 and a minus sign where needed (e.g. -3,2)")
    return int(found[1]), int(found[2])


def distance(a: Hex, b: Hex) -> int:
    """Hex distance ``max(|dq|, |dr|, |dq + dr|)``, in cells."""
    dq, dr = a[0] - b[0], a[1] - b[1]
    return max(abs(dq), abs(dr), abs(dq + dr))


def add(a: Hex, b: Hex, times: int = 1) -> Hex:
    """``a + times * b``."""
    return a[0] + times * b[0], a[1] + times * b[1]


class HexGrid:
    """A board shape: a finite set of hexes with precomputed neighbours and rays.

    ``cells`` is in a stable order (by ``r`` then ``q``), used as the dump order of the layout.
    """

    def __init__(self, cells: Iterable[Hex]) -> None:
        self.cells: tuple[Hex, ...] = tuple(sorted(set(cells), key=lambda c: (c[1], c[0])))
        self.cell_set: frozenset[Hex] = frozenset(self.cells)
        self.neighbours: dict[Hex, tuple[Hex, ...]] = {
            c: tuple(n for d in DIRECTIONS if (n := add(c, d)) in self.cell_set) for c in self.cells
        }
        # rays[c][i]: the cells from c outwards in DIRECTIONS[i], stopping at the edge
        by_direction = [self._rays(d) for d in DIRECTIONS]
        self.rays: dict[Hex, tuple[tuple[Hex, ...], ...]] = {
            c: tuple(rays[c] for rays in by_direction) for c in self.cells
        }
        self.names: dict[Hex, str] = {c: hex_name(c) for c in self.cells}

    def _rays(self, direction: Hex) -> dict[Hex, tuple[Hex, ...]]:
        """Every cell's ray in ``direction``: each run of cells along it walked once from
        where it starts (no cell before it), a cell's ray the rest of its run."""
        dq, dr = direction
        rays: dict[Hex, tuple[Hex, ...]] = {}
        for q, r in self.cells:
            if (q - dq, r - dr) in self.cell_set:
                continue  # not where a line enters
            line = []
            while (q, r) in self.cell_set:
                line.append((q, r))
                q, r = q + dq, r + dr
            for k, cell in enumerate(line, 1):
                rays[cell] = tuple(line[k:])
        return rays

    def __contains__(self, cell: object) -> bool:
        return cell in self.cell_set

    def __len__(self) -> int:
        return len(self.cells)

    @cached_property
    def edge(self) -> frozenset[Hex]:
        """The edge spots: cells with fewer than six on-board neighbours."""
        return frozenset(c for c in self.cells if len(self.neighbours[c]) < 6)

    def components(self, members: Iterable[Hex]) -> list[set[Hex]]:
        """The connected groups (six-way adjacency) of ``members``, biggest first."""
        todo = set(members)
        groups: list[set[Hex]] = []
        while todo:
            seed = todo.pop()
            group = {seed}
            stack = [seed]
            while stack:
                for n in self.neighbours.get(stack.pop(), ()):
                    if n in todo:
                        todo.discard(n)
                        group.add(n)
                        stack.append(n)
            groups.append(group)
        groups.sort(key=len, reverse=True)
        return groups

    def group_of(self, cell: Hex, member: Callable[[Hex], bool]) -> set[Hex]:
        """The connected group around ``cell`` of the cells for which ``member`` holds
        (``cell`` itself included)."""
        group = {cell}
        stack = [cell]
        while stack:
            for n in self.neighbours[stack.pop()]:
                if n not in group and member(n):
                    group.add(n)
                    stack.append(n)
        return group


def hexagon(radius: int) -> HexGrid:
    """The hexagon-shaped board ``max(|q|, |r|, |q + r|) <= radius`` (Mars: 5, 91 cells;
    Uranus hexagonal: 4, 61 spots)."""
    return HexGrid(
        (q, r)
        for q in range(-radius, radius + 1)
        for r in range(-radius, radius + 1)
        if abs(q + r) <= radius
    )
