"""Screens to pixels: :func:`render` is pure, the same screen and frame give the same image.

How a screen is laid out depends on the matrix:

* **Mini-map** (RGB matrices where the board fits at one pixel a cell above a 5-pixel text
  line, i.e. 16 x 16 and up): the board at the largest whole cell size that fits (1 pixel on a
  16 x 16, 2 on a 32 x 32 or 64 x 32), flower colours, Martians white, highlights blinking;
  under it a text line (the message, or the menu's current choice, then the scores and the
  per-game extras).  Where the board leaves room on its right the Mars dice pool is drawn as
  dice faces and, from 16 free columns, the scores and extras each get a line of their own.
* **Text** (every mono matrix, such as MAX7219 chains of 32 x 8, 64 x 8 or 32 x 16, since one
  colour cannot tell the flowers apart, so the message must name the cells; and RGB matrices
  too small for a map): lines of CP437 text, 8 pixels high; highlights are not drawn.  One
  line carries the message first, then the scores (``P1 3-4-5-5-6  P2 0-4-5-5-6``) and
  extras; with two lines the scores get the second.  An urgent message stands alone on the
  first line; a menu shows its current choice first, after an arrow, then the question.

Every line too long for its box scrolls one pixel per ``frame`` (see
:mod:`companion.display.text`); highlights blink with ``frame`` (see
:func:`companion.display.palette.blink`).  :func:`render_frame` also says whether anything
moves, so the display thread sleeps while nothing does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from companion.display import palette
from companion.display.geometry import BoardGrid, board_grid
from companion.display.palette import Colour
from companion.display.screen import Screen
from companion.display.text import LARGE, SMALL, Font, Segment, draw_line, plain
from companion.rules.base import parse_piece

MODES = ("1", "RGB", "RGBA")
"""Image modes of luma devices this module draws for: ``"1"`` mono, ``"RGB"``/``"RGBA"`` colour."""

DIE_FACE: Colour = (110, 0, 0)
DIE_PIP: Colour = palette.WHITE
_PIPS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (2, 0), (0, 2), (2, 2)),
    5: ((0, 0), (2, 0), (1, 1), (0, 2), (2, 2)),
    6: ((0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)),
}
Item = list[Segment]
"""One status item: a player's score or one extra."""

_SEPARATOR = "   "
_SIDE_TEXT_MIN = 16  # free columns right of the map before scores get lines of their own


@dataclass(frozen=True)
class Frame:
    """A rendered frame: ``image`` (``width`` x ``height``, the requested mode) and whether
    anything in it scrolls or blinks (``animated``), i.e. whether the next frame differs."""

    image: Image.Image
    animated: bool


def render(screen: Screen, *, width: int, height: int, mode: str, frame: int = 0) -> Image.Image:
    """The image of ``screen`` on a ``width`` x ``height`` matrix in ``mode`` (:data:`MODES`) at
    animation step ``frame`` (one pixel of scrolling per frame).  Pure.

    Raises ``ValueError`` for a mode not in :data:`MODES` or a size below 1 x 1.
    """
    return render_frame(screen, width=width, height=height, mode=mode, frame=frame).image


def render_frame(screen: Screen, *, width: int, height: int, mode: str, frame: int = 0) -> Frame:
    """Like :func:`render`, with whether the screen is animated (see :class:`Frame`)."""
    if mode not in MODES:
        raise ValueError(f"cannot draw in image mode {mode!r}; expected one of {MODES}")
    if width < 1 or height < 1:
        raise ValueError(f"cannot draw on a {width} x {height} matrix")
    mono = mode == "1"
    image = Image.new("RGB", (width, height))
    grid = None if mono else board_grid(screen.layout, screen.cells)
    cell = _cell_size(grid, width, height) if grid is not None else 0
    if grid is not None and cell:
        animated = _draw_map_layout(image, screen, grid, cell, frame)
    else:
        animated = _draw_text_layout(image, screen, frame, mono)
    if mono:
        return Frame(image.convert("1", dither=Image.Dither.NONE), animated)
    return Frame(image if mode == "RGB" else image.convert(mode), animated)


# ---- text content ---------------------------------------------------------------------------


def _head(screen: Screen, font: Font) -> list[Segment]:
    """The message line: the urgent warning, or the menu's choice then the question."""
    message = plain(screen.message)
    if screen.urgent:
        return [(message, palette.URGENT_TEXT)]
    if screen.menu:
        where = f" {screen.menu_index + 1}/{len(screen.menu)}" if len(screen.menu) > 1 else ""
        out = [(font.arrow + plain(screen.menu[screen.menu_index]), palette.MENU_TEXT)]
        out.append((where, palette.LABEL_TEXT))
        return out + ([(_SEPARATOR + message, palette.TEXT)] if message else [])
    return [(message, palette.TEXT)] if message else []


def _score(screen: Screen, player: int, result: str) -> list[Segment]:
    mark = ">" if player == screen.to_move else ""
    return [(mark, palette.TEXT), (f"P{player}", palette.player_colour(player)),
            (" " + plain(result), palette.TEXT)]


def _extra(key: str, value: str) -> list[Segment]:
    return [(key.capitalize(), palette.LABEL_TEXT), (" " + plain(value), palette.TEXT)]


def _status(screen: Screen, skip: frozenset[str]) -> tuple[list[Item], list[Item]]:
    """The status items: one per player's score, one per extra (but the keys in ``skip``)."""
    scores = [_score(screen, p, result) for p, result in screen.scores]
    return scores, [_extra(k, v) for k, v in screen.extra.items() if k not in skip]


def _joined(items: Sequence[Sequence[Segment]], separator: str) -> list[Segment]:
    out: list[Segment] = []
    for item in items:
        if out:
            out.append((separator, palette.TEXT))
        out.extend(item)
    return out


def _status_lines(scores: list[Item], extras: list[Item]) -> list[list[Segment]]:
    return [line for line in (_joined(scores, "  "), _joined(extras, "  ")) if line]


def _lines(
    screen: Screen, font: Font, count: int, status: list[list[Segment]]
) -> list[list[Segment]]:
    """``count`` lines: the message line first, then the ``status`` lines, the overflow folded
    into the last line.  An urgent message alone on one line drops the status."""
    head = _head(screen, font)
    if count == 1:
        items = [head] if screen.urgent else [head, *status]
        return [_joined([i for i in items if i], _SEPARATOR)]
    lines = ([head] if head else []) + status
    lines = lines[: count - 1] + [_joined(lines[count - 1:], _SEPARATOR)]
    return lines + [[] for _ in range(count - len(lines))]


# ---- layouts --------------------------------------------------------------------------------


def _text_layout_font(height: int) -> tuple[Font, int, int]:
    """Font, line pitch and line count for a text-only matrix ``height`` pixels high."""
    if height >= LARGE.height:
        return LARGE, LARGE.height, height // LARGE.height
    return SMALL, SMALL.height + 1, max(1, (height + 1) // (SMALL.height + 1))


def _draw_text_layout(image: Image.Image, screen: Screen, frame: int, mono: bool) -> bool:
    font, pitch, count = _text_layout_font(image.height)
    top = max(0, (image.height - count * pitch) // 2)
    animated = False
    status = _status_lines(*_status(screen, frozenset()))
    for i, line in enumerate(_lines(screen, font, count, status)):
        box = (0, top + i * pitch, image.width, min(pitch, font.height))
        animated |= draw_line(image, box, line, font, frame, mono=mono)
    return animated


def _cell_size(grid: BoardGrid, width: int, height: int) -> int:
    """The largest cell size (pixels) at which ``grid`` fits above a small text line; 0 when
    it does not fit even at one pixel a cell."""
    size = 0
    while grid.height and _fits(grid, size + 1, width, height):
        size += 1
    return size


def _fits(grid: BoardGrid, cell: int, width: int, height: int) -> bool:
    board_w, board_h = grid.pixel_size(cell)
    return board_w <= width and board_h + SMALL.height <= height


def _pool(screen: Screen) -> list[int]:
    values = screen.extra.get("pool", "").split()
    return [int(v) for v in values if v.isdigit() and int(v) in _PIPS]


@dataclass(frozen=True)
class _Side:
    """What goes right of the map: dice faces (``per_row`` to a row, ``rows`` rows), one text
    line per status item that fits (``lines``); ``rest`` are the status lines left for the
    ticker."""

    dice: list[int]
    per_row: int
    rows: int
    lines: list[list[Segment]]
    rest: list[list[Segment]]


def _plan_side(screen: Screen, width: int, height: int, cell: int) -> _Side:
    """Fill a ``width`` x ``height`` pixel box right of the map: dice first, then status."""
    dice = _pool(screen)
    face = 3 * cell
    per_row = (width + 1) // (face + 1) if dice else 0
    rows = min(-(-len(dice) // per_row), (height + 1) // (face + 1)) if per_row else 0
    shown = dice[: rows * per_row]
    scores, extras = _status(screen, frozenset({"pool"}) if shown == dice else frozenset())
    free = height - rows * (face + 1)
    count = (free + 1) // (SMALL.height + 1) if width >= _SIDE_TEXT_MIN else 0
    rest = _status_lines(scores[count:], extras[max(0, count - len(scores)):])
    return _Side(shown, per_row, rows, (scores + extras)[:count], rest)


def _draw_map_layout(
    image: Image.Image, screen: Screen, grid: BoardGrid, cell: int, frame: int
) -> bool:
    board_w, board_h = grid.pixel_size(cell)
    below = image.height - board_h
    font = LARGE if below > LARGE.height else SMALL
    pitch = font.height + 1
    count = max(1, (below + 1) // pitch)
    ticker_top = image.height - (count * pitch - 1)
    map_top = (ticker_top - board_h) // 2
    side_left = board_w + 1
    side = _plan_side(screen, image.width - side_left, board_h, cell)

    used = side.rows or side.lines
    map_left = 0 if used else (image.width - board_w) // 2
    animated = _draw_board(image, screen, grid, cell, (map_left, map_top), frame)
    _draw_dice(image, side.dice, (side_left, map_top), cell, side.per_row)
    lines_top = map_top + side.rows * (3 * cell + 1)
    for i, item in enumerate(side.lines):
        box = (side_left, lines_top + i * (SMALL.height + 1), image.width - side_left, SMALL.height)
        animated |= draw_line(image, box, item, SMALL, frame, centre=False)
    for i, line in enumerate(_lines(screen, font, count, side.rest)):
        box = (0, ticker_top + i * pitch, image.width, font.height)
        animated |= draw_line(image, box, line, font, frame)
    return animated


def _background(layout: str, name: str) -> Colour:
    """What an empty cell shows: faint marks for the board's shape, black in the garden."""
    if layout == "enceladus":
        if name[0] in "LRB":
            return palette.START_SQUARE
        if name[0] == "A":
            return palette.BLACK if name == "A10" else palette.ACTION_FREE  # A10 empty: taken
        if name[0] == "T":
            return palette.TRAY_SLOT
        return palette.BLACK
    return palette.CENTRE_HEX if layout == "mars" and name == "0,0" else palette.EMPTY_HEX


def _draw_board(
    image: Image.Image,
    screen: Screen,
    grid: BoardGrid,
    cell: int,
    origin: tuple[int, int],
    frame: int,
) -> bool:
    """Draw every cell of ``grid``; returns whether a highlight blinks."""
    left, top = origin
    block = cell - 1 if cell >= 3 else cell  # a dark seam between big cells
    quarter = max(1, block // 2)
    pixels = image.load() if block == 1 else None  # one pixel a cell: set it, no paste
    for name, (x2, y) in grid.positions.items():
        piece = screen.cells.get(name, "")
        info = parse_piece(piece)
        main = palette.piece_colour(piece) if piece else _background(screen.layout, name)
        flower_under = info.kind == "martian" and info.colour
        under = palette.piece_colour(info.colour) if flower_under else None
        role = screen.highlights.get(name)
        if role:
            main = palette.blink(main, role, frame)
            under = palette.blink(under, role, frame) if under else None
        x, y_px = left + x2 * cell // 2, top + y * cell
        if pixels is not None:
            pixels[x, y_px] = main
        else:
            image.paste(main, (x, y_px, x + block, y_px + block))
        if under and cell >= 2:  # the flower under a gardener peeks out at the lower right
            corner = (x + block - quarter, y_px + block - quarter, x + block, y_px + block)
            image.paste(under, corner)
    return bool(screen.highlights.keys() & grid.positions.keys())


def _draw_dice(
    image: Image.Image, dice: list[int], origin: tuple[int, int], cell: int, per_row: int
) -> None:
    """Dice faces, 3 x 3 pips of ``cell`` pixels each, ``per_row`` to a row."""
    left, top = origin
    face = 3 * cell
    for i, value in enumerate(dice):
        fx = left + (i % per_row) * (face + 1)
        fy = top + (i // per_row) * (face + 1)
        image.paste(DIE_FACE, (fx, fy, fx + face, fy + face))
        for px, py in _PIPS[value]:
            x, y = fx + px * cell, fy + py * cell
            image.paste(DIE_PIP, (x, y, x + cell, y + cell))
