"""The display thread: draws at once, animates by its clock only while something moves, keeps
the tickers' places from screen to screen, survives a failing device, stops cleanly.  No test
measures time: a clock the test sets, with an hour-long frame interval, makes every frame come
from a ``show`` at the tick the test chose, and waits have generous timeouts only as a safety
net."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from luma.core.device import dummy
from PIL import Image

from companion.display import Display, Screen, make_device, render, render_frame
from companion.display.text import HOLD, Ticker
from tests.test_display import HANDS, enceladus_midgame

WAIT = 10.0  # seconds; a safety net, never reached when the code works
LONG = "Player 2: move your Martian to a flower in its row or column"


def frozen_clock() -> float:
    return 0.0


def screen(message: str, **kwargs: Any) -> Screen:
    return Screen("enceladus", "enceladus", {}, message=message, **kwargs)


def same(a: Image.Image | None, b: Image.Image) -> bool:
    return a is not None and a.tobytes() == b.tobytes()


@pytest.fixture
def device() -> Any:
    return dummy(width=32, height=8, mode="1")


@pytest.fixture
def stepped(device: Any) -> Iterator[Display]:
    """A display whose animation never advances by itself: frames come only from ``show``."""
    display = Display(device, clock=frozen_clock, frame_interval=3600.0)
    yield display
    display.close()


class SetClock:
    """A clock that stands still until the test moves it on, by whole frames of an hour."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def at_tick(self, tick: int) -> None:
        self.now = tick * 3600.0 + 1.0  # inside the tick, clear of rounding


@pytest.fixture
def clock() -> SetClock:
    return SetClock()


@pytest.fixture
def ticking(device: Any, clock: SetClock) -> Iterator[Display]:
    """A display on the test's clock: each ``show`` draws the tick the clock is at."""
    display = Display(device, clock=clock, frame_interval=3600.0)
    yield display
    display.close()


def test_a_screen_is_drawn_as_soon_as_it_is_shown(stepped: Display, device: Any) -> None:
    stepped.show(screen("Hello"))
    assert stepped.wait_frames(1, WAIT)
    assert same(device.image, render(screen("Hello"), width=32, height=8, mode="1"))


def test_an_urgent_warning_never_waits_for_a_long_scroll(stepped: Display) -> None:
    stepped.show(screen(LONG))
    assert stepped.wait_frames(1, WAIT)
    warning = screen("Board wrong: c3", urgent=True)
    stepped.show(warning)
    assert stepped.wait_frames(2, WAIT)  # the scroll's next frame is an hour away
    assert same(stepped.last_image, render(warning, width=32, height=8, mode="1", frame=0))


def test_a_new_highlight_keeps_the_scroll_position(ticking: Display, clock: SetClock) -> None:
    ticking.show(screen(LONG))
    assert ticking.wait_frames(1, WAIT)
    clock.at_tick(HOLD + 7)
    moved = screen(LONG, highlights={"e5": "dest"})
    ticking.show(moved)
    assert ticking.wait_frames(2, WAIT)
    assert same(ticking.last_image, render(moved, width=32, height=8, mode="1", frame=HOLD + 7))


def test_the_ticker_runs_by_the_clock_not_by_the_frames_drawn(ticking: Display,
                                                             clock: SetClock) -> None:
    ticking.show(screen(LONG))
    assert ticking.wait_frames(1, WAIT)
    clock.at_tick(HOLD + 30)  # thirty frames' time later, however few were drawn
    ticking.show(screen(LONG, highlights={"e5": "dest"}))
    assert ticking.wait_frames(2, WAIT)
    assert same(ticking.last_image, render(screen(LONG), width=32, height=8, mode="1",
                                           frame=HOLD + 30))


def test_under_a_map_the_scores_scroll_on_across_turns(clock: SetClock) -> None:
    device = dummy(width=16, height=16, mode="RGB")
    display = Display(device, clock=clock, frame_interval=3600.0)
    cells = enceladus_midgame()
    turns = [Screen("enceladus", "enceladus", cells, message=f"P{p}: {m}", scores=HANDS,
                    to_move=p) for p in (1, 2) for m in ("your turn", "go on")]
    mirror = Ticker()  # what the matrix should show: the same screens on one ticker
    try:
        for tick, shown in enumerate(turns * 5, start=0):
            clock.at_tick(tick * 9)
            display.show(shown)
            assert display.wait_frames(tick + 1, WAIT)
            expected = render_frame(shown, width=16, height=16, mode="RGB", ticker=mirror,
                                    tick=tick * 9).image
            assert same(display.last_image, expected)
        assert not same(display.last_image, render(turns[-1], width=16, height=16, mode="RGB"))
    finally:
        display.close()


def test_a_new_message_starts_from_its_beginning(stepped: Display) -> None:
    stepped.show(screen(LONG))
    assert stepped.wait_frames(1, WAIT)
    stepped.show(screen(LONG + "!"))
    assert stepped.wait_frames(2, WAIT)
    assert same(stepped.last_image, render(screen(LONG + "!"), width=32, height=8, mode="1"))


def test_a_long_message_scrolls_by_itself(device: Any) -> None:
    display = Display(device, frame_interval=0.001)
    try:
        display.show(screen(LONG))
        assert display.wait_frames(30, WAIT)
    finally:
        display.close()


def test_a_static_screen_is_drawn_once_then_the_thread_sleeps(device: Any) -> None:
    display = Display(device, frame_interval=0.001)
    try:
        display.show(screen("OK?"))
        assert display.wait_frames(1, WAIT)
        display.show(screen("OK?"))  # the same screen again changes nothing
        time.sleep(0.2)  # 200 frame intervals: a polling loop would have drawn again
        assert display.frames_drawn == 1
    finally:
        display.close()


class Flaky:
    """A device whose ``display`` raises the first ``failures`` times."""

    width, height, mode = 32, 8, "1"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.shown: list[Image.Image] = []
        self.cleaned = False

    def display(self, image: Image.Image) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("SPI write failed")
        self.shown.append(image)

    def cleanup(self) -> None:
        self.cleaned = True


def test_a_failing_device_is_logged_once_and_the_display_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    flaky = Flaky(failures=3)
    display = Display(flaky, frame_interval=0.001)
    try:
        with caplog.at_level(logging.WARNING, logger="companion.display"):
            display.show(screen("OK?"))
            assert display.wait_frames(1, WAIT)
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1 and "SPI write failed" in (errors[0].exc_text or "")
        assert any("works again after 3 failed frames" in r.getMessage() for r in caplog.records)
        display.show(screen("Next"))
        assert display.wait_frames(2, WAIT)
    finally:
        display.close()


def test_close_stops_the_thread_and_cleans_the_device_up() -> None:
    flaky = Flaky(failures=0)
    before = set(threading.enumerate())
    display = Display(flaky)
    display.show(screen(LONG))
    assert display.wait_frames(1, WAIT)
    display.close()
    assert flaky.cleaned
    assert not [t for t in set(threading.enumerate()) - before if t.name == "companion-display"]
    display.close()  # idempotent


def test_closing_a_gifanim_display_writes_the_gif(tmp_path: Path) -> None:
    path = tmp_path / "matrix.gif"
    device = make_device({"display": "gifanim", "width": 16, "height": 16, "transform": "none",
                          "filename": str(path)})
    display = Display(device, clock=frozen_clock, frame_interval=3600.0)
    display.show(screen("One"))
    assert display.wait_frames(1, WAIT)
    display.show(screen("Two"))
    assert display.wait_frames(2, WAIT)
    assert not path.exists()
    display.close()
    with Image.open(path) as gif:
        assert gif.format == "GIF"
        gif.seek(getattr(gif, "n_frames", 1) - 1)
        last = gif.convert("RGB")
    assert same(last, render(screen("Two"), width=16, height=16, mode="RGB"))


def test_an_idle_scroll_comes_to_rest_at_its_start_and_the_next_screen_scrolls(
    device: Any,
) -> None:
    display = Display(device, frame_interval=0.001, calm_after=0.3)
    try:
        display.show(screen(LONG))
        assert display.wait_frames(20, WAIT)  # it scrolls...
        time.sleep(0.5)  # ...until it has stood still long enough
        rested = display.frames_drawn
        time.sleep(0.2)  # 200 frame intervals: a scrolling display would draw on
        assert display.frames_drawn == rested
        assert same(display.last_image, render(screen(LONG), width=32, height=8, mode="1"))
        display.show(screen(LONG + "!"))
        assert display.wait_frames(rested + 20, WAIT)
    finally:
        display.close()


def test_a_warning_blinks_on_however_long_it_stands(device: Any) -> None:
    display = Display(device, frame_interval=0.001, calm_after=0.01)
    try:
        display.show(screen(LONG, urgent=True))
        time.sleep(0.1)
        drawn = display.frames_drawn
        assert display.wait_frames(drawn + 50, WAIT)
    finally:
        display.close()


class Recorder:
    """A device keeping every image it is given."""

    width, height, mode = 32, 8, "1"

    def __init__(self) -> None:
        self.images: list[bytes] = []

    def display(self, image: Image.Image) -> None:
        self.images.append(image.tobytes())

    def cleanup(self) -> None:
        pass


def test_the_thread_wakes_only_for_a_frame_that_differs() -> None:
    recorder = Recorder()
    display = Display(recorder, frame_interval=0.001)
    try:
        display.show(screen(LONG))
        assert display.wait_frames(HOLD + 10, WAIT)  # the rest at the start, then scrolling
    finally:
        display.close()
    images = recorder.images
    assert all(a != b for a, b in zip(images, images[1:], strict=False))
