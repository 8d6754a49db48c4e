"""Lines of text on the matrix: luma's legacy bitmap fonts, coloured segments, scrolling.

Glyphs come from ``luma.core.legacy`` (``text``/``textsize``, the fonts of
``luma.core.legacy.font`` made proportional), as in luma's own ``show_message``; this module only
chooses the font, clips to a box and scrolls.  A line wider than its box scrolls one pixel per
frame as a marquee: it holds still for :data:`HOLD` frames with its start readable (a new
message shows at once, never from off screen), then runs left and comes round again after a gap.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from luma.core.legacy import text as legacy_text
from luma.core.legacy import textsize
from luma.core.legacy.font import CP437_FONT, TINY_FONT, proportional
from PIL import Image, ImageDraw

from companion.display.palette import WHITE, Colour

HOLD = 20
"""Frames a scrolling line rests at its start (1 s at the default 50 ms a frame)."""

GAP = 12
"""Blank pixels between the end of a scrolling line and its next start."""

Segment = tuple[str, Colour]
"""A run of text in one colour."""


@dataclass(frozen=True)
class Font:
    """A luma legacy font: ``glyphs`` indexable by code point; a glyph is a list of columns, bit
    ``j`` of a column the pixel in row ``j``.  ``top`` is the first row used, ``height`` the rows
    used from there, ``arrow`` the character that marks a menu's current choice."""

    glyphs: proportional
    top: int
    height: int
    arrow: str


LARGE = Font(proportional(CP437_FONT), top=0, height=8, arrow="\x10")  # CP437 0x10: a triangle
"""CP437, 7 rows + descenders: the classic MAX7219 font, one line on an 8-pixel-high chain."""

SMALL = Font(proportional(TINY_FONT), top=1, height=5, arrow=">")
"""luma's 3 x 5 ``TINY_FONT`` (printable ASCII only), for a score line under a mini-map."""


def plain(text: str) -> str:
    """``text`` folded to printable ASCII (accents dropped, other characters as ``?``), the
    range every legacy font covers."""
    out = []
    for ch in text:
        base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
        out.append(base if base and all(" " <= b <= "~" for b in base) else "?")
    return "".join(out)


def width(segments: Sequence[Segment], font: Font) -> int:
    """Width in pixels of ``segments`` set in ``font``."""
    return sum(textsize(chunk, font.glyphs)[0] for chunk, _ in segments if chunk)


def draw_line(
    image: Image.Image,
    box: tuple[int, int, int, int],
    segments: Sequence[Segment],
    font: Font,
    frame: int,
    *,
    centre: bool = True,
    mono: bool = False,
) -> bool:
    """Draw one line in ``box`` = ``(left, top, width, height)`` pixels of ``image``.

    A line that fits is drawn still (centred, or left-aligned with ``centre=False``); a longer one
    scrolls with ``frame``.  ``mono`` draws every segment white.  Returns whether the line scrolls.
    """
    left, top, box_w, box_h = box
    total = width(segments, font)
    if total == 0 or box_w <= 0:
        return False
    strip = Image.new("RGB", (box_w, box_h))
    draw = ImageDraw.Draw(strip)
    y = -font.top
    if total <= box_w:
        starts = [(box_w - total) // 2 if centre else 0]
        scrolls = False
    else:
        cycle = total + GAP
        offset = max(0, frame % (cycle + HOLD) - HOLD)
        starts = [-offset, cycle - offset]
        scrolls = True
    for x in starts:
        for chunk, colour in segments:
            for ch in chunk:
                advance = textsize(ch, font.glyphs)[0]
                if x + advance > 0 and x < box_w:
                    legacy_text(draw, (x, y), ch, fill=WHITE if mono else colour, font=font.glyphs)
                x += advance
    image.paste(strip, (left, top))
    return scrolls
