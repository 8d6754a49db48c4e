"""What drawing a frame does again and what it does once: a scrolling line is measured and set
once per text and font, a board's grid once per board, the board's picture once per step of
its blinking.  Spies count the work (glyph look-ups in the font, grid and piece computations);
nothing here measures time."""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

import pytest
from luma.core.legacy.font import proportional

from companion.display import Screen, render_frame
from companion.display.text import HOLD, Font, Ticker
from companion.rules.hexes import hex_name, hexagon
from tests.test_display import HANDS, enceladus_midgame, screens, text_screens

# the module, which the package's function of the same name hides
render_module = importlib.import_module("companion.display.render")
FRAMES = 3 * HOLD  # the hold at the start and twice as many frames of scrolling


class CountingFont(list[list[int]]):
    """A legacy font's glyph table that counts the glyphs looked up in it."""

    def __init__(self, glyphs: list[list[int]]) -> None:
        super().__init__(glyphs)
        self.lookups = 0

    def __getitem__(self, index: Any) -> Any:
        self.lookups += 1
        return super().__getitem__(index)

    def __repr__(self) -> str:
        return f"<font, {self.lookups} glyphs looked up>"


def spy(monkeypatch: pytest.MonkeyPatch, name: str) -> CountingFont:
    """The renderer's font ``name`` (``"LARGE"``, ``"SMALL"``) replaced by the same font on a
    counting glyph table: a new font, of which nothing is remembered yet."""
    font: Font = getattr(render_module, name)
    counting = CountingFont(font.glyphs.font)
    monkeypatch.setattr(render_module, name, replace(font, glyphs=proportional(counting)))
    return counting


@pytest.mark.parametrize(("size", "mode", "font"), [((32, 8), "1", "LARGE"),
                                                     ((16, 16), "RGB", "SMALL")])
def test_a_scrolling_line_is_measured_and_set_once_not_on_every_frame(
        monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], mode: str, font: str) -> None:
    counting = spy(monkeypatch, font)
    width, height = size
    shown = Screen("enceladus", "enceladus", enceladus_midgame(), scores=HANDS, to_move=1,
                   message="P1: measured once, then only moved along")
    first = render_frame(shown, width=width, height=height, mode=mode)
    assert first.animated and counting.lookups > 0
    after_first = counting.lookups
    ticker = Ticker()
    for tick in range(FRAMES):
        render_frame(shown, width=width, height=height, mode=mode, frame=tick)
        render_frame(shown, width=width, height=height, mode=mode, frame=tick, ticker=ticker,
                     tick=tick)
    assert counting.lookups == after_first


def test_a_new_message_is_set_once_when_it_comes(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = spy(monkeypatch, "LARGE")
    before = Screen("enceladus", "enceladus", {}, message="A first message, long enough to go by")
    # a Z, which the first has not: a glyph still to look up
    after = Screen("enceladus", "enceladus", {}, message="Zero: a second one, long enough too")
    ticker = Ticker()
    render_frame(before, width=32, height=8, mode="1", ticker=ticker, tick=0)
    counted = counting.lookups
    render_frame(after, width=32, height=8, mode="1", ticker=ticker, tick=1)
    assert counting.lookups > counted  # the spy sees the new text being set
    counted = counting.lookups
    for tick in range(2, FRAMES):
        render_frame(after, width=32, height=8, mode="1", ticker=ticker, tick=tick)
    assert counting.lookups == counted


def test_the_grid_is_computed_once_per_board(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    board_grid = render_module.board_grid

    def counting(layout: str, cells: Any) -> Any:
        calls.append(layout)
        return board_grid(layout, cells)

    monkeypatch.setattr(render_module, "board_grid", counting)
    # a board no other test draws: the Mars hexagon short of one cell
    names = [hex_name(c) for c in hexagon(5).cells][1:]
    cells = dict.fromkeys(names, "")
    shown = Screen("mars", "mars", cells, highlights={names[0]: "dest", names[7]: "wrong"},
                   message="P1: move 3 or 5", scores=((1, "14 pts"),), to_move=1)
    for width, height in ((16, 16), (32, 32), (64, 32)):
        for frame in range(FRAMES):
            render_frame(shown, width=width, height=height, mode="RGB", frame=frame)
    assert calls == ["mars"]


def test_the_board_is_drawn_once_per_step_of_its_blinking(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    parsed: list[str] = []
    parse_piece = render_module.parse_piece

    def counting(piece: str) -> Any:
        parsed.append(piece)
        return parse_piece(piece)

    monkeypatch.setattr(render_module, "parse_piece", counting)
    cells = enceladus_midgame() | {"a1": "red", "j10": "blue"}  # no other test's position
    shown = Screen("enceladus", "enceladus", cells, highlights={"e5": "dest", "c3": "wrong"},
                   message="Move your Martian", scores=HANDS, to_move=1)
    for frame in (0, 4, 8, 12):  # every pair of blink phases of "dest" and "wrong"
        render_frame(shown, width=32, height=32, mode="RGB", frame=frame)
    assert parsed  # the spy sees the board being drawn
    drawn = len(parsed)
    for frame in range(FRAMES):
        assert render_frame(shown, width=32, height=32, mode="RGB", frame=frame).animated
    assert len(parsed) == drawn


def frames_of(shown: Screen, width: int, height: int, mode: str, count: int,
              ticker: Ticker | None = None) -> list[Any]:
    return [render_frame(shown, width=width, height=height, mode=mode, frame=f, ticker=ticker,
                         tick=f) for f in range(count)]


@pytest.mark.parametrize("size", [(16, 16, "RGB"), (32, 32, "RGB"), (64, 32, "RGB"),
                                  (32, 8, "1"), (64, 8, "1"), (32, 16, "1")])
def test_a_frame_says_truly_how_many_frames_after_it_are_the_same(
        size: tuple[int, int, str]) -> None:
    width, height, mode = size
    kinds = screens() | text_screens()
    slept = 0
    for name, shown in kinds.items():
        for ticker in (None, Ticker()):
            frames = frames_of(shown, width, height, mode, 2 * FRAMES, ticker)
            for f, drawn in enumerate(frames):
                assert drawn.animated or not drawn.still, name
                for later in frames[f + 1:f + 1 + drawn.still]:
                    assert later.image.tobytes() == drawn.image.tobytes(), (name, f)
                slept += drawn.still > 0
    assert slept  # some frames are slept through: the tickers' rests, between blinks


def test_a_ticker_rests_at_its_start_in_one_frame() -> None:
    shown = Screen("enceladus", "enceladus", {}, message="A message too long for the chain")
    frames = frames_of(shown, 32, 8, "1", HOLD + 3)
    assert [f.still for f in frames] == [HOLD - f for f in range(HOLD)] + [0, 0, 0]
