"""Screens to pixels: :func:`render` draws a :class:`Screen` for a matrix size and colour mode.

Every layout shows at a glance whose turn it is, the prompt and the scores (or hands):

* **Turn badge**: the player to move as a digit in a block of their colour (inverted on a mono
  matrix) at the left of the text; a message addressed to them (``"P2: your turn"``) loses its
  ``P2:``, which the badge says.
* **Mini-map** (RGB matrices where the board fits at one pixel a cell above a 5-pixel text
  line, i.e. 16 x 16 and up): the board at the largest whole cell size that fits (1 pixel on a
  16 x 16, 2 on a 32 x 32 or 64 x 32), flower colours, highlights blinking.  A gardener or
  Martian is its player's colour with a white mark: one white pixel of its cell, or, at one
  pixel a cell, a slow flash to white.  Right of the map, where there is room, the Mars dice
  pool as digits on dice (where not all fit, each value once, and the pool on the ticker)
  and, from 16 free columns, a line per player's score (a filled badge for the player to
  move) and per extra.  Under the map the text lines: the badge, the message
  and what the side had no room for, as a ticker.
* **Text** (every mono matrix, such as MAX7219 chains of 32 x 8, 64 x 8 or 32 x 16, since one
  colour cannot tell the flowers apart, so the message must name the cells; and RGB matrices
  too small for a map): lines of CP437 text, 8 pixels high, after the badge; highlights are not
  drawn.  One line carries the message first, then the scores (``P1 3-4-5-5-6  P2 0-4-5-5-6``)
  and extras; with two lines the scores get the second.  An urgent message stands alone on the
  first line; a menu shows its current choice first, after an arrow, then the question.
* **End** (the game is over and the board is as it should be): the ranking, one line per
  player from the winner down, each after its player's badge, then the message; on a single
  line the winner's badge and the ranking as a ticker.

Every line too long for its box is a ticker (:mod:`companion.display.text`).  Drawn from
``frame`` alone every ticker starts at its beginning on frame 0; given a
:class:`~companion.display.text.Ticker` and the display's ``tick``, lines keep their place from
screen to screen.  On a text-only matrix the message is the players' guidance, so a new message
starts its line over; under a map, which shows what to do, a new prompt for the player to move
does not interrupt the scores going by (any other new message does).  Highlights blink and
gardeners flash with ``frame`` (see :func:`companion.display.palette.blink`).
:func:`render_frame` also says whether anything moves, so the display thread sleeps while
nothing does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from PIL import Image

from companion.display import palette
from companion.display.geometry import BoardGrid, board_grid
from companion.display.palette import Colour
from companion.display.text import (
    HOLD,
    LARGE,
    SMALL,
    Box,
    Font,
    Segment,
    Tape,
    Ticker,
    draw_tape,
    plain,
    strip,
)
from companion.display.text import width as text_width
from companion.errors import InvalidArgumentError
from companion.referee.screen import Screen
from companion.rules.base import parse_piece

MODES = ("1", "RGB", "RGBA")
"""Image modes of luma devices this module draws for: ``"1"`` mono, ``"RGB"``/``"RGBA"`` colour."""

DIE_FACE: Colour = (150, 0, 0)
DIE_DIGIT: Colour = palette.WHITE
FLASH = 10
"""Frames per phase of a gardener's flash at one pixel a cell (half a second at 50 ms)."""

Item = list[Segment]
"""One status item: a player's score or one extra."""

_SEPARATOR = "   "
_END = "the end"  # the end screen's tickers' key: they start over when it comes
_SIDE_TEXT_MIN = 16  # free columns right of the map before scores get lines of their own


@dataclass(frozen=True)
class Frame:
    """A rendered frame: ``image`` (``width`` x ``height``, the requested mode) and whether
    anything in it scrolls, blinks or flashes (``animated``), i.e. whether the next frame
    differs."""

    image: Image.Image
    animated: bool
    cycle: int = 0
    """Frames until every ticker on it has come round to its start once (0: none scrolls)."""
    still: int = 0
    """Frames after this one that are the same picture, one a step of ``frame`` (and of the
    ticker's ``tick``): a ticker resting at its start, highlights and gardeners between two
    blinks; the display sleeps through them."""


@dataclass
class _Pen:
    """What every drawing step needs: the image, the animation's clocks, what moved."""

    image: Image.Image
    mono: bool
    frame: int
    ticker: Ticker | None
    tick: int
    animated: bool = field(default=False)
    cycle: int = field(default=0)
    still: int | None = field(default=None)  # the fewest frames anything moving stays the same

    def moves(self, same_for: int) -> None:
        """Something on the frame moves, and stays the same for ``same_for`` frames more."""
        self.animated = True
        self.still = same_for if self.still is None else min(self.still, same_for)

    def line(self, box: Box, tape: Tape, font: Font, *, centre: bool = True) -> None:
        phase = self.frame if self.ticker is None else self.ticker.phase(box, tape, font,
                                                                          self.tick)
        frames = draw_tape(self.image, box, tape, font, phase, centre=centre, mono=self.mono)
        if frames:  # a ticker rests at its start until its phase is past HOLD
            self.moves(max(0, HOLD - phase % frames))
        self.cycle = max(self.cycle, frames)


def render(screen: Screen, *, width: int, height: int, mode: str, frame: int = 0) -> Image.Image:
    """The image of ``screen`` on a ``width`` x ``height`` matrix in ``mode`` (:data:`MODES`) at
    animation step ``frame`` (frames since the screen was shown).  Pure.

    Raises :class:`InvalidArgumentError` for a mode not in :data:`MODES` or a size below 1 x 1.
    """
    return render_frame(screen, width=width, height=height, mode=mode, frame=frame).image


def render_frame(
    screen: Screen,
    *,
    width: int,
    height: int,
    mode: str,
    frame: int = 0,
    ticker: Ticker | None = None,
    tick: int = 0,
) -> Frame:
    """Like :func:`render`, with whether the screen is animated (see :class:`Frame`).  With a
    ``ticker``, the tickers' places come from it at ``tick`` (frames of the display's clock)
    and it remembers them for the next screen; without, they come from ``frame``."""
    if mode not in MODES:
        raise InvalidArgumentError(f"cannot draw in image mode {mode!r}; expected one of {MODES}")
    if width < 1 or height < 1:
        raise InvalidArgumentError(f"cannot draw on a {width} x {height} matrix")
    mono = mode == "1"
    pen = _Pen(Image.new("RGB", (width, height)), mono, frame, ticker, tick)
    grid, cell = (None, 0) if mono else _map_geometry(screen.layout, tuple(screen.cells), width,
                                                      height)
    if screen.ranking and not screen.highlights:
        _draw_end(pen, screen)
    elif grid is not None and cell:
        _draw_map_layout(pen, screen, grid, cell)
    else:
        _draw_text_area(pen, (0, 0, width, height), screen, _status(screen, frozenset()),
                        guiding=True)
    image = pen.image
    if mono:
        image = image.convert("1", dither=Image.Dither.NONE)
    elif mode != "RGB":
        image = image.convert(mode)
    return Frame(image, pen.animated, pen.cycle, pen.still or 0)


# ---- text content ---------------------------------------------------------------------------


def _addressed(screen: Screen) -> bool:
    """Whether the message is a prompt for the player to move (``"P2: ..."``)."""
    return bool(screen.to_move) and screen.message.startswith(f"P{screen.to_move}: ")


def _message(screen: Screen) -> str:
    """The message without the ``P2:`` that the turn badge says."""
    text = screen.message
    return text[len(f"P{screen.to_move}: "):] if _addressed(screen) else text


def _head(screen: Screen, font: Font) -> list[Segment]:
    """The message line: the urgent warning, or the menu's choice then the question."""
    message = plain(_message(screen))
    if screen.urgent:
        return [(message, palette.URGENT_TEXT)]
    if screen.menu:
        where = f" {screen.menu_index + 1}/{len(screen.menu)}" if len(screen.menu) > 1 else ""
        out = [(font.arrow + plain(screen.menu[screen.menu_index]), palette.MENU_TEXT)]
        out.append((where, palette.LABEL_TEXT))
        return out + ([(_SEPARATOR + message, palette.TEXT)] if message else [])
    return [(message, palette.TEXT)] if message else []


def _said(screen: Screen) -> str:
    """What the message line says, as a ticker's key: a change starts it over."""
    return repr((screen.message, screen.urgent, screen.menu, screen.menu_index))


def _one_line_keys(screen: Screen, guiding: bool) -> tuple[str, str]:
    """``key`` and ``news`` (see :class:`~companion.display.text.Tape`) of a line that carries
    the message and the status together: a warning, a question, or any new message where the
    text is the guidance (``guiding``) starts it over at once; under a map a new message is
    news, and a new prompt for the player to move (what the badge says) neither."""
    if screen.urgent or screen.menu or guiding:
        return _said(screen), ""
    return "", "" if _addressed(screen) else _said(screen)


def _score(player: int, result: str) -> Item:
    return [(f"P{player}", palette.player_colour(player)), (" " + plain(result), palette.TEXT)]


def _extra(key: str, value: str) -> Item:
    return [(key.capitalize(), palette.LABEL_TEXT), (" " + plain(value), palette.TEXT)]


def _status(screen: Screen, skip: frozenset[str]) -> list[Item]:
    """The status items: one per player's score, one per extra (but the keys in ``skip``)."""
    scores = [_score(p, result) for p, result in screen.scores]
    return scores + [_extra(k, v) for k, v in screen.extra.items() if k not in skip]


# ---- the turn badge -------------------------------------------------------------------------


def _badge_width(font: Font) -> int:
    """A badge is square, as high as the font: the first 8 x 8 module of a MAX7219 chain."""
    return font.height


@lru_cache(maxsize=64)
def _glyph_width(ch: str, font: Font) -> int:
    columns = font.glyphs[ord(ch)]
    return len(columns) - (1 if columns and columns[-1] == 0 else 0)


def _draw_badge(pen: _Pen, box: Box, player: int, font: Font, *, filled: bool = True) -> None:
    """Player ``player``'s badge in ``box``: their digit in their colour, marked (``filled``)
    by a block behind it: of the colour behind a dark digit in the large font, of a dark shade
    of it behind the coloured digit in the small one (whose digits fill their whole height and
    would not read inverted)."""
    left, top, box_w, box_h = box
    colour = palette.WHITE if pen.mono else palette.player_colour(player)
    digit = str(player % 10)
    ink = colour
    if filled:
        shade = palette.dark(colour) if font is SMALL and not pen.mono else colour
        pen.image.paste(shade, (left, top, left + box_w, top + box_h))
        ink = colour if shade != colour else palette.BLACK
    x = left + (box_w - _glyph_width(digit, font) + 1) // 2
    y = top + (box_h - font.height + 1) // 2
    glyph = strip(((digit, ink),), font)
    rows = min(font.height, top + box_h - y)  # cut at the bottom of the box
    if rows > 0:
        window = (0, 0, glyph.width, rows)
        pen.image.paste(glyph.image.crop(window), (x, y), glyph.mask.crop(window))


# ---- text areas -----------------------------------------------------------------------------


def _rows(font: Font, box_h: int) -> tuple[int, int]:
    """Line pitch and line count of ``font`` in ``box_h`` pixels (CP437 glyphs keep their own
    blank bottom row, the small font gets one)."""
    if font is LARGE:
        return LARGE.height, max(1, box_h // LARGE.height)
    return SMALL.height + 1, max(1, (box_h + 1) // (SMALL.height + 1))


def _area_font(box_w: int, box_h: int) -> tuple[Font, int, int]:
    """Font, line pitch and line count for a ``box_w`` x ``box_h`` text area: the large font
    from 8 rows and 32 columns (narrower, the small one shows more of a line)."""
    font = LARGE if box_h >= LARGE.height and box_w >= 32 else SMALL
    return (font, *_rows(font, box_h))


def _draw_text_area(
    pen: _Pen, box: Box, screen: Screen, status: list[Item], *, guiding: bool
) -> None:
    """The badge of the player to move, then the message and ``status`` in lines: the
    message alone on the first of several lines (or, urgent, alone on the only one), the
    status items one line each, the overflow folded into the last line as a ticker."""
    left, top, box_w, box_h = box
    font, pitch, count = _area_font(box_w, box_h)
    used = count * pitch - (pitch - font.height)
    top += max(0, (box_h - used) // 2)
    if screen.to_move:
        badge_w = _badge_width(font)
        _draw_badge(pen, (left, top, badge_w, used), screen.to_move, font)
        left, box_w = left + badge_w + 1, box_w - badge_w - 1
    head = _head(screen, font)
    if count == 1:
        items = [head] if screen.urgent else [head, *status]
        key, news = _one_line_keys(screen, guiding)
        lines = [Tape.of(items, separator=_SEPARATOR, key=key, news=news)]
    else:
        rest = status[count - 2:] if head else status[count - 1:]
        singles = status[: len(status) - len(rest)]
        lines = [Tape.of([head], key=_said(screen))] if head else []
        lines += [Tape.of([i]) for i in singles]
        if rest:
            lines.append(Tape.of(rest, separator=_SEPARATOR))
    for i, tape in enumerate(lines):
        pen.line((left, top + i * pitch, box_w, font.height), tape, font)


# ---- the mini-map ---------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _grid(layout: str, cells: tuple[str, ...]) -> BoardGrid:
    """:func:`~companion.display.geometry.board_grid`, computed once per board: ``cells`` are
    the names of its cells."""
    return board_grid(layout, cells)


@lru_cache(maxsize=16)
def _map_geometry(layout: str, cells: tuple[str, ...], width: int, height: int
                  ) -> tuple[BoardGrid, int]:
    """The grid of ``layout`` made of ``cells`` (names) and its cell size in pixels on a
    ``width`` x ``height`` matrix (:func:`_cell_size`), computed once per board and matrix."""
    grid = _grid(layout, cells)
    return grid, _cell_size(grid, width, height)


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
    return [int(v) for v in values if v.isdigit() and 1 <= int(v) <= 9]


@dataclass(frozen=True)
class _Dice:
    """Dice faces on the side: ``size`` (width, height) each, ``per_row`` to a row."""

    values: list[int]
    size: tuple[int, int]
    per_row: int

    @property
    def height(self) -> int:
        rows = -(-len(self.values) // self.per_row) if self.values else 0
        return rows * (self.size[1] + 1)


def _plan_dice(screen: Screen, box_w: int, box_h: int) -> _Dice:
    """The pool's dice that fit a ``box_w`` x ``box_h`` side: digits on faces with a pixel of
    margin around, or, where that leaves too few, margins only left and right.  Where not
    every die fits, each value once (the distances a gardener may go), or as many as fit;
    the whole pool then goes by on the ticker."""
    dice = _pool(screen)
    values = list(dict.fromkeys(dice))
    face_w = _glyph_width("8", SMALL) + 2
    best = _Dice([], (face_w, SMALL.height), 1)
    for face_h in (SMALL.height + 2, SMALL.height):
        per_row = (box_w + 1) // (face_w + 1)
        room = per_row * ((box_h + 1) // (face_h + 1))
        shown = dice if len(dice) <= room else values if len(values) <= room else dice[:room]
        if room and (len(shown) > len(best.values) or shown == dice != best.values):
            best = _Dice(shown, (face_w, face_h), per_row)
    return best


def _draw_dice(pen: _Pen, dice: _Dice, origin: tuple[int, int]) -> None:
    """Each die as its value, a white digit on a red face."""
    left, top = origin
    face_w, face_h = dice.size
    for i, value in enumerate(dice.values):
        x = left + (i % dice.per_row) * (face_w + 1)
        y = top + (i // dice.per_row) * (face_h + 1)
        pen.image.paste(DIE_FACE, (x, y, x + face_w, y + face_h))
        digit = Tape.of([[(str(value), DIE_DIGIT)]])
        pen.line((x + 1, y + (face_h - SMALL.height) // 2, face_w - 1, SMALL.height), digit,
                 SMALL, centre=False)


def _draw_side(pen: _Pen, screen: Screen, box: Box, dice: _Dice) -> list[Item]:
    """Dice, then a line per score (after the player's badge, filled for the player to move)
    and per extra, in ``box`` right of the map; returns the status items left for the ticker
    under the map."""
    left, top, box_w, box_h = box
    _draw_dice(pen, dice, (left, top))
    skip = frozenset({"pool"}) if dice.values == _pool(screen) else frozenset()
    items = _status(screen, skip)
    lines_top = top + dice.height
    count = (top + box_h - lines_top + 1) // (SMALL.height + 1) if box_w >= _SIDE_TEXT_MIN else 0
    lines: list[tuple[int, Item]] = [(p, [(plain(r), palette.TEXT)]) for p, r in screen.scores]
    lines += [(0, item) for item in items[len(screen.scores):]]
    badge_w = _badge_width(SMALL)
    for i, (player, item) in enumerate(lines[:count]):
        y, x = lines_top + i * (SMALL.height + 1), left
        if player:
            _draw_badge(pen, (x, y, badge_w, SMALL.height), player, SMALL,
                        filled=player == screen.to_move)
            x += badge_w + 1
        pen.line((x, y, left + box_w - x, SMALL.height), Tape.of([item]), SMALL, centre=False)
    return items[count:]


def _draw_map_layout(pen: _Pen, screen: Screen, grid: BoardGrid, cell: int) -> None:
    image = pen.image
    board_w, board_h = grid.pixel_size(cell)
    side_left = board_w + 1
    dice = _plan_dice(screen, image.width - side_left, board_h)
    if _pool(screen) and not dice.values:  # a die needs the seam's column too
        side_left = board_w
        dice = _plan_dice(screen, image.width - side_left, board_h)
    side_w = image.width - side_left
    side_text = side_w >= _SIDE_TEXT_MIN
    map_left = 0 if dice.values or side_text else (image.width - board_w) // 2
    _draw_board(pen, screen, grid, cell, (map_left, 0))
    rest = _draw_side(pen, screen, (side_left, 0, side_w, board_h), dice)
    below = (0, board_h + 1, image.width, image.height - board_h - 1)
    if below[3] < SMALL.height:
        below = (0, board_h, image.width, image.height - board_h)
    _draw_text_area(pen, below, screen, rest, guiding=False)


def empty_cell_colour(layout: str, name: str) -> Colour:
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
    pen: _Pen, screen: Screen, grid: BoardGrid, cell: int, origin: tuple[int, int]
) -> None:
    """Draw every cell of ``grid``: pieces, gardeners with their marks, highlights (the board
    drawn once for each step of its blinking and flashing: :func:`_board`)."""
    frame = pen.frame
    flash = ((frame // FLASH) % 2,) if cell == 1 else ()  # gardeners flash at a pixel a cell
    roles = sorted(set(screen.highlights.values()))
    phases = tuple((role, palette.blink_phase(role, frame)) for role in roles)
    board, animated = _board(screen.layout, tuple(screen.cells.items()),
                             tuple(screen.highlights.items()), cell, flash, phases)
    pen.image.paste(board, origin)  # the board is drawn first, on black: seams stay black
    if animated:  # until the next blink of a role or flash of the gardeners, if any
        periods = [palette.ROLE_PERIODS[role] for role in roles] + [FLASH] * len(flash)
        pen.moves(min(period - 1 - frame % period for period in periods))


@lru_cache(maxsize=32)
def _board(
    layout: str,
    cells: tuple[tuple[str, str], ...],
    highlights: tuple[tuple[str, str], ...],
    cell: int,
    flash: tuple[int, ...],
    phases: tuple[tuple[str, int], ...],
) -> tuple[Image.Image, bool]:
    """The board's image (RGB, its pixel size at ``cell`` pixels a cell) for these ``cells``
    and ``highlights`` (name-piece and name-role pairs) with the gardeners in ``flash`` phase
    (``(1,)``: flashed to white; ``()``: not flashing) and each highlight role in its blink
    phase (:func:`companion.display.palette.blink_phase`); and whether it is animated."""
    grid = _grid(layout, tuple(name for name, _ in cells))
    image = Image.new("RGB", grid.pixel_size(cell))
    pieces, lit, blinking = dict(cells), dict(highlights), dict(phases)
    animated = False
    block = cell - 1 if cell >= 3 else cell  # a dark seam between big cells
    quarter = max(1, block // 2)
    pixels = image.load() if block == 1 else None  # one pixel a cell: set it, no paste

    def blink(colour: Colour, role: str) -> Colour:
        return colour if blinking[role] else palette.highlighted(colour, role)

    for name, (x2, y) in grid.positions.items():
        piece = pieces.get(name, "")
        info = parse_piece(piece)
        main = palette.piece_colour(piece) if piece else empty_cell_colour(layout, name)
        mark = palette.gardener_mark(info.player) if info.kind == "martian" else None
        under = palette.piece_colour(info.colour) if mark and info.colour else None
        if mark and pixels is not None:
            animated = True
            main = mark if flash[0] else main
        role = lit.get(name)
        if role:
            main = blink(main, role)
            under = blink(under, role) if under else None
            mark = blink(mark, role) if mark else None
            animated = True
        x, y_px = x2 * cell // 2, y * cell
        if pixels is not None:
            pixels[x, y_px] = main
            continue
        image.paste(main, (x, y_px, x + block, y_px + block))
        if under:  # the flower under a gardener peeks out at the lower right
            image.paste(under, (x + block - quarter, y_px + block - quarter, x + block,
                                y_px + block))
        if mark:
            image.paste(mark, (x, y_px, x + max(1, block // 3), y_px + max(1, block // 3)))
    return image, animated


# ---- the end of the game --------------------------------------------------------------------


def _end_font(screen: Screen, width: int, height: int) -> tuple[Font, int, int]:
    """The large font where every result fits on a line of its own after its badge, else the
    small one where they do, else the one that shows more of them (large from 32 columns)."""
    for font in (LARGE, SMALL):
        pitch, count = _rows(font, height)
        room = width - _badge_width(font) - 1
        if font.height <= height and count >= len(screen.ranking) and all(
                text_width([(plain(r), palette.TEXT)], font) <= room for _, r in screen.ranking):
            return font, pitch, count
    return _area_font(width, height)


def _draw_end(pen: _Pen, screen: Screen) -> None:
    """The ranking, a line per player after their badge, best first, then the message (every
    line starting at its beginning when the end screen comes)."""
    image = pen.image
    ranking = list(screen.ranking)
    message = [(plain(screen.message), palette.TEXT)] if screen.message else []
    font, pitch, count = _end_font(screen, image.width, image.height)
    badge_w = _badge_width(font)
    if count == 1:
        _draw_badge(pen, (0, 0, badge_w, image.height), ranking[0][0], font)
        items = [_score(p, r) for p, r in ranking] + [message]
        pen.line((badge_w + 1, 0, image.width - badge_w - 1, font.height),
                 Tape.of(items, separator=_SEPARATOR, key=_END), font)
        return
    lines = min(count, len(ranking) + (1 if message else 0))
    top = (image.height - (lines * pitch - (pitch - font.height))) // 2
    for i in range(lines):
        y = top + i * pitch
        if i >= len(ranking):
            pen.line((0, y, image.width, font.height), Tape.of([message], key=_END), font)
        elif i == lines - 1 and len(ranking) > lines:  # no room: the rest as a ticker
            rest = [_score(p, r) for p, r in ranking[i:]] + [message]
            pen.line((0, y, image.width, font.height),
                     Tape.of(rest, separator=_SEPARATOR, key=_END), font)
        else:
            player, result = ranking[i]
            _draw_badge(pen, (0, y, badge_w, font.height), player, font)
            pen.line((badge_w + 1, y, image.width - badge_w - 1, font.height),
                     Tape.of([[(plain(result), palette.TEXT)]], key=_END), font, centre=False)
