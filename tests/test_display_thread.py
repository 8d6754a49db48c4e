"""The display thread: draws at once, animates by its clock only while something moves, keeps
the tickers' places from screen to screen, survives a failing device, stops cleanly.  No test
measures time: the thread runs on a clock the test sets, either with an hour-long frame interval
(every frame comes from a ``show`` at the tick the test chose) or sleeping on the test's
:class:`Time`, which wakes it when the test moves the clock on and counts its sleeps.  Waits
have generous timeouts only as a safety net."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from luma.core.device import dummy
from PIL import Image

from companion.display import Display, Screen, make_device, render, render_frame
from companion.display.palette import ROLE_PERIODS
from companion.display.render import FLASH
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


class Time:
    """The display thread's clock and its sleep, both the test's: the thread sleeps (its
    ``wait``) until notified by ``show``/``close`` or by :meth:`step`, which moves the clock on.
    Every sleep is counted with the timeout it asked for (``None``: until something happens)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.asked: list[float | None] = []  # the timeout of each sleep, in order
        self._asleep = False
        self._watch = threading.Condition()
        self._thread: threading.Condition | None = None

    def clock(self) -> float:
        return self.now

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        with self._watch:
            self._thread = condition
            self.asked.append(timeout)
            self._asleep = True
            self._watch.notify_all()
        condition.wait(WAIT)  # held by the thread; woken by show, close or step
        with self._watch:
            self._asleep = False

    def asleep(self, times: int = 0) -> int:
        """Block until the thread sleeps, having gone to sleep at least ``times`` times; how
        many times it has."""
        with self._watch:
            assert self._watch.wait_for(lambda: self._asleep and len(self.asked) >= times,
                                        WAIT), "the thread never slept"
            return len(self.asked)

    def step(self, seconds: float = 1.0) -> None:
        """Move the clock on by ``seconds`` with the thread asleep, and let it do what is due
        then: return once it sleeps again.  Call it once the thread has taken in the last
        ``show`` (``wait_frames``, :meth:`asleep`): a thread just notified still looks asleep."""
        slept = self.asleep()
        self.now += seconds
        assert self._thread is not None
        with self._thread:
            self._thread.notify_all()
        with self._watch:
            assert self._watch.wait_for(lambda: self._asleep and len(self.asked) > slept, WAIT)


@pytest.fixture
def time() -> Time:
    return Time()


def on(device: Any, time: Time, **options: Any) -> Display:
    """A display on the test's :class:`Time`: one frame a second of its clock, calm after an
    hour unless ``calm_after`` says otherwise."""
    options.setdefault("calm_after", 3600.0)
    return Display(device, clock=time.clock, wait=time.wait, frame_interval=1.0, **options)


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


def drawn_frames(shown: Screen, upto: int, width: int = 32, height: int = 8,
                 mode: str = "1") -> list[int]:
    """The frames from 0 to ``upto`` a display draws for ``shown``: each whose picture differs
    from the one before (the thread sleeps through the others)."""
    images = [render(shown, width=width, height=height, mode=mode, frame=k).tobytes()
              for k in range(upto + 1)]
    return [k for k in range(upto + 1) if k == 0 or images[k] != images[k - 1]]


def test_a_long_message_scrolls_by_itself_one_pixel_a_frame(device: Any, time: Time) -> None:
    display = on(device, time)
    frames = drawn_frames(screen(LONG), HOLD + 13)
    assert frames == [0, *range(HOLD + 1, HOLD + 14)]  # held still, then a pixel a frame
    try:
        display.show(screen(LONG))
        for tick in range(HOLD + 12):
            assert display.wait_frames(sum(k <= tick for k in frames), WAIT)
            assert same(display.last_image, render(screen(LONG), width=32, height=8, mode="1",
                                                   frame=tick)), tick
            following = next(k for k in frames if k > tick)
            # asleep until the next frame that differs is due
            assert time.asked[-1] == pytest.approx(following - tick)
            time.step()
        assert not same(display.last_image, render(screen(LONG), width=32, height=8, mode="1"))
    finally:
        display.close()


def test_a_slow_frame_is_followed_by_the_one_due_then(device: Any, time: Time) -> None:
    display = on(device, time)
    try:
        display.show(screen(LONG))
        assert display.wait_frames(1, WAIT)
        time.step(HOLD + 6.5)  # the thread overslept: it draws the frame due now, not the next
        assert display.frames_drawn == 2
        assert same(display.last_image, render(screen(LONG), width=32, height=8, mode="1",
                                               frame=HOLD + 6))
        assert time.asked[-1] == pytest.approx(0.5)  # and keeps to the clock's frames
    finally:
        display.close()


def test_a_static_screen_is_drawn_once_then_the_thread_sleeps(device: Any, time: Time) -> None:
    display = on(device, time)
    try:
        display.show(screen("OK?"))
        assert display.wait_frames(1, WAIT)
        display.show(screen("OK?"))  # the same screen again changes nothing
        time.step(3600.0)  # an hour: a polling loop would have drawn again
        assert display.frames_drawn == 1
        assert time.asked[-1] is None  # asleep until something is shown
    finally:
        display.close()


def test_a_new_message_after_some_scrolling_starts_from_its_beginning(
    device: Any, time: Time
) -> None:
    display = on(device, time)
    try:
        display.show(screen(LONG))
        assert display.wait_frames(1, WAIT)
        for _ in range(HOLD + 7):
            time.step()
        assert not same(display.last_image, render(screen(LONG), width=32, height=8, mode="1"))
        drawn = display.frames_drawn
        display.show(screen(LONG + "!"))
        assert display.wait_frames(drawn + 1, WAIT)
        assert same(display.last_image, render(screen(LONG + "!"), width=32, height=8, mode="1"))
        for frame in range(1, HOLD + 3):
            time.step()
            assert same(display.last_image, render(screen(LONG + "!"), width=32, height=8,
                                                   mode="1", frame=frame)), frame
    finally:
        display.close()


def test_highlights_blink_from_the_moment_new_text_arrives(time: Time) -> None:
    device = dummy(width=16, height=16, mode="RGB")
    display = on(device, time)
    cells = enceladus_midgame()
    first = Screen("enceladus", "enceladus", cells, message="P1: your turn", to_move=1)
    asked = Screen("enceladus", "enceladus", cells, message="P1: where to?", to_move=1,
                   highlights={"e5": "dest"})
    try:
        display.show(first)
        assert display.wait_frames(1, WAIT)
        for _ in range(5):
            time.step()
        drawn = display.frames_drawn
        display.show(asked)
        assert display.wait_frames(drawn + 1, WAIT)
        frames = [display.last_image]
        for _ in range(8):
            time.step()
            frames.append(display.last_image)
        expected = [render(asked, width=16, height=16, mode="RGB", frame=f) for f in range(9)]
        assert [same(a, b) for a, b in zip(frames, expected, strict=True)] == [True] * 9
        assert len({e.tobytes() for e in expected}) > 1  # it does blink in those frames
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
    time = Time()
    display = on(flaky, time)
    try:
        with caplog.at_level(logging.WARNING, logger="companion.display"):
            display.show(screen("OK?"))
            time.asleep(2)  # after the first failed frame
            for _ in range(3):  # a failed frame is tried again at the next tick
                time.step()
            assert display.frames_drawn == 1 and flaky.failures == 0
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


def test_highlights_changing_under_the_same_text_keep_their_rhythm(time: Time) -> None:
    device = dummy(width=16, height=16, mode="RGB")
    display = on(device, time)
    cells = enceladus_midgame()
    period = ROLE_PERIODS["dest"]
    asked = Screen("enceladus", "enceladus", cells, message="P1: where to?", to_move=1,
                   highlights={"e5": "dest"})
    more = Screen("enceladus", "enceladus", cells, message="P1: where to?", to_move=1,
                  highlights={"e5": "dest", "e9": "dest"})
    try:
        display.show(asked)
        assert display.wait_frames(1, WAIT)
        for _ in range(period):  # into the blink's second phase
            time.step()
        drawn = display.frames_drawn
        display.show(more)
        assert display.wait_frames(drawn + 1, WAIT)
        expected = render(more, width=16, height=16, mode="RGB", frame=period)
        assert not same(expected, render(more, width=16, height=16, mode="RGB"))
        assert same(display.last_image, expected)
    finally:
        display.close()


def map_at_rest(time: Time, calm: int) -> tuple[Display, Screen]:
    """A 16 x 16 map whose scores scroll and whose gardeners flash, shown and left alone
    until it has come to rest (``calm`` frames)."""
    display = on(dummy(width=16, height=16, mode="RGB"), time, calm_after=float(calm))
    turn = Screen("enceladus", "enceladus", enceladus_midgame(), message="P1: your turn",
                  scores=HANDS, to_move=1)
    display.show(turn)
    assert display.wait_frames(1, WAIT)
    for _ in range(calm):
        time.step()
    assert time.asked[-1] is None  # at rest
    return display, turn


def test_a_map_comes_to_rest_as_first_shown_gardeners_and_all(time: Time) -> None:
    calm = HOLD + FLASH + 5  # the gardeners in their white phase by then
    display, turn = map_at_rest(time, calm)
    try:
        assert same(display.last_image, render(turn, width=16, height=16, mode="RGB"))
        assert not same(display.last_image, render(turn, width=16, height=16, mode="RGB",
                                                   frame=calm))
    finally:
        display.close()


def test_after_a_rest_the_next_screen_scrolls_from_the_start(time: Time) -> None:
    calm = HOLD + FLASH + 5
    display, turn = map_at_rest(time, calm)
    moved = Screen("enceladus", "enceladus", {**turn.cells, "c3": ""}, message=turn.message,
                   scores=turn.scores, to_move=1)  # the same text: the scores would run on
    try:
        drawn = display.frames_drawn
        display.show(moved)
        assert display.wait_frames(drawn + 1, WAIT)
        fresh = render_frame(moved, width=16, height=16, mode="RGB", frame=calm,
                             ticker=Ticker(), tick=calm).image
        assert not same(fresh, render(moved, width=16, height=16, mode="RGB", frame=calm))
        assert same(display.last_image, fresh)
    finally:
        display.close()


def test_an_idle_scroll_comes_to_rest_at_its_start_and_the_next_screen_scrolls(
    device: Any, time: Time
) -> None:
    calm = HOLD + 10
    display = on(device, time, calm_after=float(calm))
    try:
        display.show(screen(LONG))
        assert display.wait_frames(1, WAIT)
        for _ in range(calm - 1):  # it scrolls...
            time.step()
        assert time.asked[-1] == pytest.approx(1.0)
        assert not same(display.last_image, render(screen(LONG), width=32, height=8, mode="1"))
        time.step()  # ...until it has stood still long enough: back at its start, at rest
        assert same(display.last_image, render(screen(LONG), width=32, height=8, mode="1"))
        assert time.asked[-1] is None
        rested = display.frames_drawn
        time.step(3600.0)
        assert display.frames_drawn == rested
        display.show(screen(LONG + "!"))
        assert display.wait_frames(rested + 1, WAIT)
        for _ in range(HOLD + 2):
            time.step()
        assert display.frames_drawn == rested + len(drawn_frames(screen(LONG + "!"), HOLD + 2))
        assert same(display.last_image, render(screen(LONG + "!"), width=32, height=8, mode="1",
                                               frame=HOLD + 2))
    finally:
        display.close()


def test_a_warning_blinks_on_however_long_it_stands(device: Any, time: Time) -> None:
    display = on(device, time, calm_after=2.0)
    warning = screen(LONG, urgent=True)
    try:
        display.show(warning)
        assert display.wait_frames(1, WAIT)
        frames = drawn_frames(warning, 59)
        assert len(frames) > 10  # it blinks on
        for frame in range(1, 60):
            time.step()
            assert display.frames_drawn == sum(k <= frame for k in frames)
        assert same(display.last_image, render(warning, width=32, height=8, mode="1", frame=59))
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
