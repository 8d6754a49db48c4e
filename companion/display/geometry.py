"""Where each cell of a board goes on the matrix, in grid units.

A :class:`BoardGrid` places every cell at ``(x2, y)``: ``y`` in cell rows, ``x2`` in *half*
cells, so hex rows can be offset by half a cell (pointy-top hexes, Red Blob Games' "doubled"
coordinates) and square boards simply use even ``x2``.  At a cell size of ``s`` pixels a cell's
top-left pixel is ``(x2 * s // 2, y * s)``: with ``s = 1`` the 91 Mars hexes fold into the
11 x 11 odd-r offset grid, with ``s = 2`` the rows are staggered by one pixel like real hexes.

Enceladus (docs/RULINGS.md, Coordinates): row 10 at the top, start squares ``L1-L10`` left,
``R1-R10`` right, ``Ba-Bj`` below; the special-action strip ``A1-A10`` (A1 the tube, A10 the
wildflower) stands as a column right of the garden, as on wide screens in the rules text, and
the show-tray ``T1-T6`` as a second column.  Hex boards are drawn from their cells' axial names
(``"q,r"``): the hexagon boards with rows of constant ``r``; the Uranus trapezoid and rhombus with
rows of constant ``q`` (their short sides lie along ``r``), so both fit in 8 rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from companion.rules.hexes import Hex, parse_hex

COLUMNS = "abcdefghij"
_STRIP_X2 = 2 * 13  # action strip column, one blank column right of the R start squares
_TRAY_X2 = 2 * 15


@dataclass(frozen=True)
class BoardGrid:
    """Cell name -> ``(x2, y)`` grid position (``x2`` in half cells, both from 0), read-only
    (the renderer keeps one grid per board).

    ``width2``/``height`` are the extent in half cells and rows.
    """

    positions: Mapping[str, tuple[int, int]]
    width2: int
    height: int

    def pixel_size(self, cell: int) -> tuple[int, int]:
        """``(width, height)`` in pixels of the whole board at ``cell`` pixels a cell."""
        return (self.width2 - 2) * cell // 2 + cell, self.height * cell


def _grid(positions: dict[str, tuple[int, int]]) -> BoardGrid:
    width2 = max(x2 for x2, _ in positions.values()) + 2
    height = max(y for _, y in positions.values()) + 1
    return BoardGrid(MappingProxyType(positions), width2, height)


def enceladus_grid() -> BoardGrid:
    """The Enceladus garden, start squares, action strip and tray: 16 x 11 cells."""
    pos: dict[str, tuple[int, int]] = {}
    for row in range(1, 11):
        y = 10 - row
        for i, col in enumerate(COLUMNS):
            pos[f"{col}{row}"] = (2 * (i + 1), y)
        pos[f"L{row}"] = (0, y)
        pos[f"R{row}"] = (2 * 11, y)
        pos[f"A{row}"] = (_STRIP_X2, row - 1)
    for i, col in enumerate(COLUMNS):
        pos[f"B{col}"] = (2 * (i + 1), 10)
    for slot in range(1, 7):
        pos[f"T{slot}"] = (_TRAY_X2, slot - 1)
    return _grid(pos)


def hex_grid(layout: str, cells: Iterable[str]) -> BoardGrid:
    """The hex board ``layout`` made of ``cells`` (axial names ``"q,r"``; other names ignored).

    ``"mars"`` and ``"uranus-hexagonal"`` use rows of constant ``r``; the trapezoid and rhombus
    rows of constant ``q``.  Raises :class:`companion.errors.InvalidStepError` for a malformed
    hex name.
    """
    swap = layout in ("uranus-trapezoid", "uranus-rhombus")
    axial: dict[str, Hex] = {name: parse_hex(name) for name in cells if "," in name}
    if not axial:
        return BoardGrid(MappingProxyType({}), 0, 0)
    doubled: dict[str, tuple[int, int]] = {}
    for name, (q, r) in axial.items():
        along, row = (r, q) if swap else (q, r)
        doubled[name] = (2 * along + row, row)
    min_x = min(x for x, _ in doubled.values())
    min_y = min(y for _, y in doubled.values())
    return _grid({name: (x - min_x, y - min_y) for name, (x, y) in doubled.items()})


def board_grid(layout: str, cells: Iterable[str]) -> BoardGrid:
    """The grid of ``layout`` (``companion.rules.LAYOUTS``) for these cells."""
    if layout == "enceladus":
        return enceladus_grid()
    return hex_grid(layout, cells)
