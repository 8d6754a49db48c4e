"""Lines of text on the matrix: luma's legacy bitmap fonts, coloured segments, the ticker.

Glyphs come from ``luma.core.legacy`` (the fonts of ``luma.core.legacy.font`` made
proportional), set as luma's legacy ``text`` sets them (a glyph's columns side by side, bit ``j``
of a column the pixel in row ``j``), as in luma's own ``show_message``; this module only
chooses the font, clips to a box and scrolls.  A line is measured and set once (a
:class:`Strip`, remembered for the lines in use); each frame then shows a window of it, so a
scrolling line costs a crop and a paste a frame, not a glyph look-up per character.

A line is a :class:`Tape` of items (a prompt, a player's score, an extra).  A tape wider than
its box is a ticker: it rests :data:`HOLD` frames with its start readable, runs left one pixel a
frame and comes round again after a :data:`GAP`.  Drawn from a frame number alone
(:func:`offset_at`) a tape always starts over; a :class:`Ticker` instead keeps every line's
place from one screen to the next, so a score keeps scrolling while the turns go by, and starts
a line over only when its ``key`` changes (a new question, a warning, a new kind of message).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from luma.core.legacy.font import CP437_FONT, TINY_FONT, proportional
from PIL import Image

from companion.display.palette import TEXT, WHITE, Colour

HOLD = 20
"""Frames a scrolling line rests at its start (1 s at the default 50 ms a frame)."""

GAP = 12
"""Blank pixels between the end of a scrolling line and its next start."""

Segment = tuple[str, Colour]
"""A run of text in one colour."""

Box = tuple[int, int, int, int]
"""``(left, top, width, height)`` in pixels."""


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


@lru_cache(maxsize=1024)
def plain(text: str) -> str:
    """``text`` folded to printable ASCII (accents dropped, other characters as ``?``), the
    range every legacy font covers.  Remembered: the same texts come back on every frame."""
    out = []
    for ch in text:
        base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
        out.append(base if base and all(" " <= b <= "~" for b in base) else "?")
    return "".join(out)


@lru_cache(maxsize=1024)
def _glyph(ch: str, font: Font) -> bytes:
    return bytes(font.glyphs[ord(ch)])


@lru_cache(maxsize=1024)
def _columns(chunk: str, font: Font) -> bytes:
    """The columns of ``chunk`` set in ``font``, a byte each (bit ``j``: the pixel in row
    ``j``), each glyph's looked up once."""
    return b"".join(_glyph(ch, font) for ch in chunk)


def width(segments: Sequence[Segment], font: Font) -> int:
    """Width in pixels of ``segments`` set in ``font`` (each run of text measured once, then
    remembered)."""
    return sum(len(_columns(chunk, font)) for chunk, _ in segments if chunk)


@dataclass(frozen=True)
class Strip:
    """A line of text set once: ``image`` (RGB, the line's width in pixels x the glyph rows of
    its font from ``Font.top`` down) and ``mask`` (mode ``"1"``, the lit pixels of ``image``),
    to paste windows of over what is drawn already."""

    image: Image.Image
    mask: Image.Image

    @property
    def width(self) -> int:
        """The line's width in pixels."""
        return self.image.width


@lru_cache(maxsize=64)
def strip(segments: tuple[Segment, ...], font: Font, mono: bool = False) -> Strip:
    """``segments`` set in ``font`` (every one white with ``mono``), remembered for the lines
    in use: a frame of a ticker is then a window of the same strip.  An empty line is a strip
    of width 0."""
    columns = [_columns(chunk, font) for chunk, _ in segments]
    total = sum(len(c) for c in columns)
    image = Image.new("RGB", (total, 8 - font.top))  # a legacy glyph column has 8 rows
    if not total:
        return Strip(image, Image.new("1", image.size))
    # a byte a column as the rows of an 8-pixel-wide image (bit 7 at the left), turned a
    # quarter left: column x, row j
    bits = Image.frombytes("1", (8, total), b"".join(columns))
    mask = bits.transpose(Image.Transpose.ROTATE_90).crop((0, font.top, total, 8))
    x = 0
    for chunk, (_, colour) in zip(columns, segments, strict=True):
        if chunk:
            window = (x, 0, x + len(chunk), image.height)
            image.paste(WHITE if mono else colour, window, mask.crop(window))
            x += len(chunk)
    return Strip(image, mask)


@dataclass(frozen=True)
class Tape:
    """One line: ``items`` (each a run of segments) set one after the other, ``separator``
    between two.  For a :class:`Ticker`: when ``key`` changes the line starts over at once;
    when ``news`` changes it starts over once it has gone round since it last started (at once
    if it has), so news in quick succession cannot keep the rest of the line from being read;
    any other change keeps the line's place."""

    items: tuple[tuple[Segment, ...], ...]
    separator: str = "  "
    key: str = ""
    news: str = ""

    @classmethod
    def of(cls, items: Sequence[Sequence[Segment]], *, separator: str = "  ", key: str = "",
           news: str = "") -> Tape:
        """A tape of the non-empty ``items``."""
        kept = tuple(tuple(i) for i in items if any(chunk for chunk, _ in i))
        return cls(kept, separator, key, news)

    def segments(self) -> list[Segment]:
        """The whole line as segments, separators included."""
        out: list[Segment] = []
        for item in self.items:
            if out:
                out.append((self.separator, TEXT))
            out.extend(item)
        return out

    def spans(self, font: Font) -> list[tuple[int, int]]:
        """Each item's ``(start, end)`` pixel column along the line set in ``font``."""
        out, x, sep = [], 0, width([(self.separator, TEXT)], font)
        for item in self.items:
            end = x + width(item, font)
            out.append((x, end))
            x = end + sep
        return out


def offset_at(total: int, phase: int) -> int:
    """How far (pixels) a scrolling line of ``total`` pixels has run at ``phase`` frames after
    its start: still for :data:`HOLD` frames, then one pixel a frame, round after :data:`GAP`."""
    return max(0, phase % cycle(total) - HOLD)


@dataclass
class _Place:
    tape: Tape
    font: Font
    start: int  # the tick at which the line was (or would have been) at phase 0
    started: int  # the tick at which it last started over


class Ticker:
    """Where every line on the matrix is along its tape, kept from one screen to the next
    (the display thread's; lines are known by their box).

    :meth:`phase` gives a line's phase at ``tick`` (frames, counted by the caller's clock).
    A line starts over at its beginning when it is new, when its tape's ``key`` changes, or
    when its ``news`` changes and it has gone round once since it last started (see
    :class:`Tape`).  Otherwise it keeps its place: the item in view stays in view at the same
    distance into it (cut to its new length), the gap stays the gap.
    """

    def __init__(self) -> None:
        self._places: dict[Box, _Place] = {}

    def reset(self) -> None:
        """Forget every line: each starts over at its beginning."""
        self._places.clear()

    def phase(self, box: Box, tape: Tape, font: Font, tick: int) -> int:
        """The phase (frames since the line was at its start) of ``tape`` drawn in ``box``."""
        old = self._places.get(box)
        if old is None or old.tape.key != tape.key or old.font != font or (
                old.tape.news != tape.news and self._went_round(old, box, tick)):
            self._places[box] = _Place(tape, font, tick, tick)
            return 0
        if old.tape != tape:
            old.start = tick - _same_place(old, tape, font, tick - old.start)
            old.tape = tape
        return tick - old.start

    @staticmethod
    def _went_round(place: _Place, box: Box, tick: int) -> bool:
        total = width(place.tape.segments(), place.font)
        return total <= box[2] or tick - place.started >= cycle(total)


def _same_place(old: _Place, tape: Tape, font: Font, phase: int) -> int:
    """The phase of ``tape`` that shows what ``old`` shows at ``phase``."""
    old_total = width(old.tape.segments(), old.font)
    period = cycle(old_total)
    phase %= period
    x = phase - HOLD
    if x <= 0:
        return phase  # resting at the start: rest on
    total = width(tape.segments(), font)
    if x >= old_total:  # in the gap after the end: as far from the next start
        return max(HOLD, cycle(total) - (period - phase))
    new_spans = tape.spans(font)
    for i, (start, end) in enumerate(old.tape.spans(old.font)):
        if x < end + width([(old.tape.separator, TEXT)], old.font) and i < len(new_spans):
            new_start, new_end = new_spans[i]
            return HOLD + new_start + min(x - start, max(0, new_end - new_start))
    return 0


def cycle(total: int) -> int:
    """Frames a scrolling line of ``total`` pixels takes to come round to its start."""
    return total + GAP + HOLD


def draw_tape(
    image: Image.Image,
    box: Box,
    tape: Tape,
    font: Font,
    phase: int,
    *,
    centre: bool = True,
    mono: bool = False,
) -> int:
    """Draw ``tape`` in ``box`` of ``image`` at ``phase`` (see :func:`offset_at`), over what is
    drawn there already.

    A tape that fits is drawn still (centred, or left-aligned with ``centre=False``); a longer
    one scrolls.  ``mono`` draws every segment white.  Returns the frames the tape takes to
    come round (:func:`cycle`), 0 when it stands still.
    """
    left, top, box_w, box_h = box
    line = strip(tuple(tape.segments()), font, mono)
    total = line.width
    if total == 0 or box_w <= 0:
        return 0
    if total <= box_w:
        starts = [(box_w - total) // 2 if centre else 0]
    else:
        offset = offset_at(total, phase)
        starts = [-offset, total + GAP - offset]
    rows = min(box_h, line.image.height)
    for x in starts:
        first, last = max(0, -x), min(total, box_w - x)  # the columns of the line in the box
        if first < last and rows > 0:
            window = (first, 0, last, rows)
            image.paste(line.image.crop(window), (left + x + first, top), line.mask.crop(window))
    return cycle(total) if total > box_w else 0
