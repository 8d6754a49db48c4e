"""The display thread: the one place that draws on the LED matrix (an output edge).

:meth:`Display.show` hands over a new :class:`Screen` and returns at once; the thread draws it
straight away, then redraws on every tick of its clock (``frame_interval`` seconds apart) only
while something scrolls, blinks or flashes.  A static screen is drawn once and the thread sleeps
on a condition variable until the next ``show`` or ``close`` (no polling).  Because every
``show`` wakes the thread, an urgent warning is on the matrix one frame after it is shown,
however long the scrolling message before it.

Animation is driven by the clock, not by the count of frames drawn: a slow frame is followed by
the one due then, so a ticker runs at one pixel per ``frame_interval`` however long drawing
takes.  The thread wakes only for a frame that differs from the last: it sleeps through a
ticker's rest at its start and between two blinks.  The tickers keep their place from one
screen to the next (:class:`companion.display.text.Ticker`); highlights blink from the moment
a screen with new text arrives, and keep their rhythm while only the highlights change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from PIL import Image

from companion.display.device import LumaDevice
from companion.display.render import render_frame
from companion.display.text import Ticker
from companion.errors import InvalidArgumentError, OutputFileError
from companion.referee.screen import Screen

log = logging.getLogger("companion.display")


def _same_text(a: Screen, b: Screen) -> bool:
    return (a.message, a.scores, a.to_move, a.urgent, a.menu, a.menu_index, dict(a.extra)) == (
        b.message, b.scores, b.to_move, b.urgent, b.menu, b.menu_index, dict(b.extra))


def _only_scrolls(screen: Screen) -> bool:
    """Whether nothing on ``screen`` asks for attention: its only motion is scrolling text and
    flashing gardeners."""
    return not (screen.highlights or screen.menu or screen.urgent)


class Display:
    """Draws screens on a luma ``device`` from a thread of its own.

    ``device``: any luma device (``width``, ``height``, ``mode``, ``display(image)``,
    ``cleanup()``), e.g. from :func:`companion.display.make_device`.  ``clock``: seconds, monotonic
    (injected for tests).  ``wait``: how the thread sleeps, ``wait(condition, timeout)`` called
    with ``condition`` held, as :meth:`threading.Condition.wait` is (``timeout`` in seconds of
    ``clock``, ``None`` until notified); a test passes one that sleeps until its own clock is
    moved on.  ``frame_interval``: seconds between animation frames (one pixel of
    scrolling each).  ``calm_after``: seconds after which a screen that only scrolls text and
    flashes gardeners (no highlight blinking, no question, no warning) comes to rest at the
    start of its text, so an idle companion draws nothing (idle CPU near zero on a Pi Zero,
    where a scrolling marquee costs a fifth of a core); the next screen scrolls again.  The
    thread starts at once; call :meth:`close` to stop it.

    ``frames_drawn`` counts the frames the device accepted; ``last_image`` is the last of them.
    An exception while drawing is logged on ``companion.display`` (once per run of failures) and
    the thread goes on with the next screen or frame.
    """

    def __init__(
        self,
        device: LumaDevice,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Condition, float | None], object] = threading.Condition.wait,
        frame_interval: float = 0.05,
        calm_after: float = 30.0,
    ) -> None:
        if frame_interval <= 0:
            raise InvalidArgumentError(
                f"frame_interval must be positive seconds, not {frame_interval!r}")
        self._device = device
        self._clock = clock
        self._wait = wait
        self._interval = frame_interval
        self._calm_after = calm_after
        self._cond = threading.Condition()
        self._screen: Screen | None = None
        self._fresh = False  # a screen arrived that the thread has not drawn yet
        self._closing = False
        self._failing = 0
        self.frames_drawn = 0
        self.last_image: Image.Image | None = None
        self._thread = threading.Thread(target=self._run, name="companion-display", daemon=True)
        self._thread.start()

    def show(self, screen: Screen) -> None:
        """Replace the screen (atomically) and wake the thread; returns at once.  Showing the
        screen already shown changes nothing."""
        with self._cond:
            if screen != self._screen:
                self._screen = screen
                self._fresh = True
                self._cond.notify_all()

    def wait_frames(self, count: int, timeout: float | None = None) -> bool:
        """Block until ``frames_drawn >= count`` or ``timeout`` seconds pass; returns whether
        the count was reached (for tests and benchmarks)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.frames_drawn >= count, timeout)

    def abandon(self) -> None:
        """Give up the file the device is writing as it closes, if it writes one (the gifanim
        GIF, :meth:`companion.display.recorder.GifRecorder.abandon`): a stop asked for then
        does not wait for it.  Safe from a signal handler."""
        abandon = getattr(self._device, "abandon", None)
        if abandon is not None:
            abandon()

    def close(self, *, switch_off: bool = True) -> None:
        """Stop the thread, wait for it, then ``device.cleanup()`` (which switches a matrix off
        and makes the gifanim emulator write its GIF).  ``switch_off=False`` leaves the matrix
        lit (luma's ``persist``): a reload's new device drives the same one now.  Idempotent.

        Raises :class:`~companion.errors.OutputFileError` when the device cannot write its
        file (the gifanim GIF: a full disk); any other failure of the device is logged."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        try:
            if not switch_off:
                self._device.persist = True
            self._device.cleanup()
        except OutputFileError:
            raise
        except Exception:
            log.exception("the display device failed to clean up")

    def _run(self) -> None:
        screen: Screen | None = None
        epoch = self._clock()
        ticker = Ticker()
        shown = 0  # the tick at which the screen's text arrived: highlights blink from it
        animated = False
        still = due_tick = 0
        due = 0.0
        shown_at = 0.0
        while True:
            with self._cond:
                while not self._closing and not self._fresh:
                    if not animated:
                        self._wait(self._cond, None)
                        continue
                    left = due - self._clock()
                    if left <= 0:
                        break
                    self._wait(self._cond, left)
                if self._closing:
                    return
                now = self._clock()
                # woken for a frame: that frame at least (the division may round below it)
                tick = int((now - epoch) / self._interval)
                if animated and not self._fresh:
                    tick = max(tick, due_tick)
                if self._fresh:
                    new = self._screen
                    if not (screen and new and _same_text(screen, new)):
                        shown = tick
                    screen, self._fresh = new, False
                    shown_at = now
            if screen is None:
                continue
            calms = _only_scrolls(screen)
            if calms and now - shown_at >= self._calm_after:
                ticker.reset()  # at rest at the start; the next screen starts over
                self._draw(screen, 0, None, 0)
                animated = False
            else:
                animated, still = self._draw(screen, tick - shown, ticker, tick)
            # the next frame that differs; no later than the moment to come to rest
            due_tick = tick + 1 + still
            due = epoch + due_tick * self._interval
            if calms:
                due = min(due, shown_at + self._calm_after)

    def _draw(self, screen: Screen, frame: int, ticker: Ticker | None,
              tick: int) -> tuple[bool, int]:
        """Draw one frame; returns whether to draw another (the screen is animated, or drawing
        failed: a passing fault heals by itself), and after how many frames more than the next
        (:attr:`companion.display.render.Frame.still`: the same picture till then)."""
        device = self._device
        try:
            rendered = render_frame(screen, width=device.width, height=device.height,
                                    mode=device.mode, frame=frame, ticker=ticker, tick=tick)
            device.display(rendered.image)
        except Exception:
            if not self._failing:
                log.exception("drawing on the display failed; the display goes on")
            self._failing += 1
            return True, 0
        if self._failing:
            log.warning("the display works again after %d failed frames", self._failing)
            self._failing = 0
        with self._cond:
            self.frames_drawn += 1
            self.last_image = rendered.image
            self._cond.notify_all()
        return rendered.animated, rendered.still
