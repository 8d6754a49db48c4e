"""The matrix drawn in a terminal (``companion demo``): half blocks, fitted, redrawn in place.

Each character cell shows two matrix pixels, one above the other (``▀`` in the upper pixel's
colour on the lower one's), in the xterm 256-colour palette, so a pixel is about square.  The
picture is fitted to the terminal: each pixel as many cells as fit, the same whole number
across and down, or the picture scaled down where the terminal is smaller than the matrix.  It
stands at the top of the terminal, a caption line under it (the demo's live page address,
written again whenever the screen is cleared); each frame writes only the cells that changed
since the last one, after a cursor move, so a frame with nothing new writes nothing.  Closing
leaves the last frame and the caption on screen and the cursor under them.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import TextIO

from PIL import Image

from companion.display.palette import Colour

UPPER_HALF = "\u2580"
_CUBE = (0, 95, 135, 175, 215, 255)  # the xterm 6 x 6 x 6 colour cube's levels
Cell = tuple[int, int]
"""A character cell's two colours as palette indexes: upper pixel, lower pixel."""


def _nearest_level(value: int) -> int:
    return min(range(6), key=lambda i: abs(_CUBE[i] - value))


@lru_cache(maxsize=4096)
def xterm_colour(colour: Colour) -> int:
    """The xterm 256-colour index nearest ``colour``: from the colour cube (16-231) or the
    grey ramp (232-255, 8 to 238 in steps of 10), which keeps the faint marks of the board."""
    r, g, b = colour[:3]
    levels = [_nearest_level(c) for c in (r, g, b)]
    cube = 16 + 36 * levels[0] + 6 * levels[1] + levels[2]
    cube_rgb = tuple(_CUBE[i] for i in levels)
    grey_step = min(23, max(0, round(((r + g + b) / 3 - 8) / 10)))
    grey = 8 + 10 * grey_step

    def distance(other: tuple[int, ...]) -> int:
        return sum((a - b) ** 2 for a, b in zip((r, g, b), other, strict=True))

    return cube if distance(cube_rgb) <= distance((grey, grey, grey)) else 232 + grey_step


def fit(width: int, height: int, columns: int, rows: int) -> tuple[int, int]:
    """The picture's size in pixels (each a character cell wide, half a cell high) for a
    ``width`` x ``height`` matrix in ``columns`` x ``rows`` cells: a whole number of cells a
    pixel where at least one fits, else scaled down to fit; at least 1 x 2."""
    across, down = columns / width, 2 * rows / height
    scale = min(across, down)
    if scale >= 1:
        whole = int(scale)
        return width * whole, height * whole
    return max(1, int(width * scale)), max(2, int(height * scale))


class TerminalMatrix:
    """A device for :class:`companion.display.Display` that draws in a terminal.

    ``width`` x ``height``: the matrix (``mode`` is ``"RGB"``).  ``stream``: where to write,
    a terminal (default ``sys.stdout``).  ``reserve``: rows to leave free under the picture
    for what is printed after it, besides the row the cursor waits on and the ``caption``'s
    (one line under the picture, cut to the terminal's width; ``""``: none).  ``size``: the
    terminal's ``(columns, rows)``, asked on every frame so a resized terminal gets a fitted
    picture (default ``shutil.get_terminal_size``).  ``bytes_written`` counts the bytes
    written.
    """

    mode = "RGB"

    def __init__(
        self,
        width: int,
        height: int,
        *,
        stream: TextIO | None = None,
        reserve: int = 0,
        caption: str = "",
        size: Callable[[], tuple[int, int]] | None = None,
    ) -> None:
        self.width, self.height = width, height
        self._stream = stream if stream is not None else sys.stdout
        self._caption = caption
        self._reserve = reserve + (1 if caption else 0)
        self._size = size or _terminal_size
        self._shown: list[list[Cell]] = []  # the cells on the terminal now, by row
        self._fitted: tuple[int, int, int, int] | None = None  # terminal and picture sizes
        self.bytes_written = 0

    def display(self, image: Image.Image) -> None:
        """Draw ``image`` (``width`` x ``height``), writing only the cells that changed."""
        columns, rows = self._size()
        picture = fit(self.width, self.height, columns, max(1, rows - self._reserve - 1))
        out: list[str] = []
        w, h = picture
        if self._fitted != (columns, rows, *picture):
            out.append("\x1b[0m\x1b[2J")  # a new size: start from a clear screen
            self._fitted, self._shown = (columns, rows, *picture), []
            if self._caption:
                out.append(f"\x1b[{(h + 1) // 2 + 1};1H{self._caption[:columns]}")
        scaled = image.convert("RGB").resize(picture, Image.Resampling.NEAREST)
        data = scaled.tobytes()
        pixels = [xterm_colour((data[i], data[i + 1], data[i + 2]))
                  for i in range(0, len(data), 3)]
        cells = [[(pixels[y * w + x], pixels[(y + 1) * w + x] if y + 1 < h else 0)
                  for x in range(w)] for y in range(0, h, 2)]
        for row, line in enumerate(cells):
            before = self._shown[row] if row < len(self._shown) else None
            out.extend(_changes(row, line, before))
        self._shown = cells
        if out:
            out.append(self._park())  # the cursor under the picture and its caption
            self._write("".join(out))

    def cleanup(self) -> None:
        """Leave the picture and its caption on screen, the colours reset and the cursor
        under them."""
        if self._shown:
            self._write(self._park())

    def _park(self) -> str:
        return f"\x1b[0m\x1b[{len(self._shown) + 1 + (1 if self._caption else 0)};1H"

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()
        self.bytes_written += len(text.encode())


def _terminal_size() -> tuple[int, int]:
    size = shutil.get_terminal_size()
    return size.columns, size.lines


def _changes(row: int, line: list[Cell], before: list[Cell] | None) -> list[str]:
    """The escape codes and characters that turn ``before`` into ``line`` on terminal row
    ``row`` (from 0): a cursor move before each run of changed cells, a colour code only
    where the colour changes."""
    out: list[str] = []
    colours: Cell | None = None
    last = -2
    for x, cell in enumerate(line):
        if before is not None and x < len(before) and before[x] == cell:
            continue
        if x != last + 1:
            out.append(f"\x1b[{row + 1};{x + 1}H")
        if cell != colours:
            out.append(f"\x1b[38;5;{cell[0]};48;5;{cell[1]}m")
            colours = cell
        out.append(UPPER_HALF)
        last = x
    return out
