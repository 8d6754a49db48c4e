"""The GPIO controls beside the board: the OK, Undo, Select and Roll buttons, the buzzer and
the status LED, each on a GPIO pin of the Pi.

Every device is made with the pin factory passed in (one from
:func:`companion.board.pins.make_pin_factory`, shared by every part; gpiozero's
``MockFactory`` in tests and the demo), never gpiozero's global ``Device.pin_factory``, and
through :func:`companion.board.pins.claim`, so that a pin two parts want is refused by
gpiozero's own reservation in a sentence naming both.

Debouncing is ours, because gpiozero's mock pins ignore ``bounce_time`` and a contact
bounces on release as well as on press.  It is the one debounce of the field updates and the
GPIO switch matrix (:class:`companion.board.debounce.Debounce`), button by button: every edge
is a reading of the pin's level, a level that goes back to the one last reported before
``bounce_s`` is dropped, and one that lasts ``bounce_s`` is reported (by its timer, or by
the next edge when a busy host runs the timer late).  What differs is only
who says when to look: the edges arrive on their own, so a one-shot timer is set for the
moment the first reading waiting will have lasted (``Debounce.next_at``), set again at every
edge.  So a bouncing contact gives one press and one release, a glitch shorter than
``bounce_s`` gives nothing, a held button gives one press, and nothing runs between edges
(no polling).

Threads: edges arrive on the pin factory's thread (on the driving thread with mock pins),
debounced changes on the timer's (a :class:`threading.Timer` unless another ``timer`` is given,
as tests do to drive time themselves); both only put events on the daemon's one queue.  An
exception in either is logged (logger ``companion.daemon.controls``) and put on the queue as an
:class:`companion.events.Fault`; the controls go on working.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from queue import SimpleQueue
from types import MappingProxyType, TracebackType
from typing import Protocol, assert_never

from gpiozero import LED, Buzzer, DigitalInputDevice

from companion import events
from companion.board.debounce import Debounce
from companion.board.pins import Device, DeviceKind, PinFactory, claim
from companion.config import ButtonPins
from companion.errors import InvalidArgumentError
from companion.referee.effects import BuzzPattern

log = logging.getLogger("companion.controls")

BUTTONS = ("ok", "undo", "select", "roll")
"""The button names, as in :class:`companion.events.Button` and ``[buttons]``."""


@dataclass(frozen=True, slots=True)
class Beeps:
    """A buzzer pattern: ``n`` beeps of ``on_s`` seconds, ``off_s`` seconds apart."""

    on_s: float
    off_s: float
    n: int


BUZZ_PATTERNS: Mapping[BuzzPattern, Beeps] = MappingProxyType({
    BuzzPattern.ILLEGAL: Beeps(0.08, 0.08, 3),  # the board matches no legal step
    BuzzPattern.QUESTION: Beeps(0.04, 0.0, 1),  # the players are asked to choose with Select and OK
})  # fmt: skip
"""What :meth:`Controls.buzz` sounds, by the pattern the referee gives (``Buzz.pattern``)."""


class StatusLight(StrEnum):
    """What the status LED shows: ``ready`` steady light, ``busy`` blinking, ``error``
    blinking fast (:data:`STATUS_BLINKS`), ``off`` none."""

    READY = "ready"
    BUSY = "busy"
    ERROR = "error"
    OFF = "off"


STATUS_BLINKS: Mapping[StatusLight, tuple[float, float]] = MappingProxyType({
    StatusLight.BUSY: (0.5, 0.5),
    StatusLight.ERROR: (0.1, 0.1),
})  # fmt: skip
"""The status LED's blinking states: on and off times in seconds."""

class OneShot(Protocol):
    """A one-shot timer as :class:`threading.Timer` is one: made not started, then
    ``start()``; ``cancel()`` before it runs stops it."""

    def start(self) -> None: ...

    def cancel(self) -> None: ...


def daemon_timer(interval_s: float, function: Callable[[], None]) -> OneShot:
    """A :class:`threading.Timer` calling ``function`` after ``interval_s`` seconds, on a
    daemon thread so that a pending debounce never holds the process open."""
    timer = threading.Timer(interval_s, function)
    timer.daemon = True
    return timer


class Controls:
    """The buttons, buzzer and status LED, feeding debounced button events into ``queue``.

    ``pins``: the wiring (``config.buttons.pins``); ``roll``, ``buzzer`` and ``status_led``
    may be ``None`` (not fitted).  ``pin_factory``: a gpiozero pin factory (the caller's, left
    open by :meth:`close`).  ``clock``:
    the time source of the events' ``t``, in seconds.  ``bounce_s``: how long a contact must
    stay put before a press or release counts, in seconds.  ``timer``: makes the one-shot
    timer of each edge from ``(seconds, function)`` (:func:`daemon_timer`; tests pass one
    that runs when they move their clock on).

    Each debounced change becomes ``events.Button(t, name, pressed)`` with ``t`` the time it
    was confirmed.  A button held down at start is not a press.

    Raises :class:`companion.errors.ConfigError` when a pin cannot be used (invalid, in use)
    and :class:`InvalidArgumentError` for a negative ``bounce_s``.

    Example (no hardware)::

        factory = MockFactory()
        with Controls(events, pins=ButtonPins(), pin_factory=factory) as controls:
            factory.pin(17).drive_low()  # OK pressed: Button(t, "ok", True) 30 ms later
    """

    def __init__(
        self,
        queue: SimpleQueue[events.AnyEvent],
        *,
        pins: ButtonPins,
        pin_factory: PinFactory,
        clock: Callable[[], float] = time.monotonic,
        bounce_s: float = 0.03,
        timer: Callable[[float, Callable[[], None]], OneShot] = daemon_timer,
    ) -> None:
        if bounce_s < 0:
            raise InvalidArgumentError(f"bounce_s must be 0 or more seconds, not {bounce_s}")
        self._queue = queue
        self._clock = clock
        self._bounce_s = bounce_s
        self._timer = timer
        self._lock = threading.Lock()
        self._closed = False
        self._factory = pin_factory
        self._devices: list[Device] = []
        self._buttons: dict[str, Device] = {}
        self._reported: dict[str, bool] = {}  # the level each button was last reported at
        self._debounce: Debounce[str, bool] = Debounce(bounce_s)
        self._waiting: OneShot | None = None  # set for when the next reading will have lasted
        try:
            for name in BUTTONS:
                # bounce_time=None: every edge reaches us, the debouncing is ours.  A plain
                # input device, not gpiozero's Button: Button's hold thread wakes ten times a
                # second for a hold we never use.
                button = self._make(name, DigitalInputDevice, pins, pull_up=pins.pull_up,
                                    bounce_time=None)
                if button is not None:
                    self._buttons[name] = button
                    self._reported[name] = bool(button.is_active)
            self._buzzer = self._make("buzzer", Buzzer, pins)
            self._led = self._make("status_led", LED, pins)
        except BaseException:
            self.close()
            raise
        for name, button in self._buttons.items():
            on_edge = self._guarded(self._edge, name)
            button.when_activated = on_edge
            button.when_deactivated = on_edge

    def _make(self, key: str, kind: DeviceKind, pins: ButtonPins,
              **options: object) -> Device:
        """The ``kind`` device on the pin of ``pins.<key>``; ``None`` when none is fitted."""
        pin = getattr(pins, key)
        if pin is None:
            return None
        device = claim(kind, pin, part=f"[buttons] {key}", pin_factory=self._factory, **options)
        self._devices.append(device)
        return device

    def _guarded(self, action: Callable[[str], None], name: str) -> Callable[[], None]:
        """``action(name)`` as a callback whose errors are logged and queued as a Fault."""

        def callback() -> None:
            try:
                action(name)
            except Exception as error:
                self._fault(name, error)

        return callback

    def _fault(self, name: str, error: Exception) -> None:
        """Log ``error`` of ``name`` (a button, or ``debounce`` for the timer) and queue it."""
        log.exception("error in the controls' callback for %s; they go on", name)
        try:
            kind = type(error).__name__
            fault = events.Fault(
                self._clock(), where=f"controls.{name}", error=str(error) or kind,
                details={"type": kind},
            )  # fmt: skip
            self._queue.put(fault)
        except Exception:
            log.exception("the error above could not be put on the event queue")

    def _edge(self, name: str) -> None:
        """Any edge of button ``name``: its level is a reading that must last ``bounce_s``."""
        with self._lock:
            if self._closed:
                return
            now = self._clock()
            # A reading that has lasted bounce_s counts though its timer has not run yet (a
            # busy host runs it late): this edge must not take it for a glitch.
            self._report(now, now)
            level = bool(self._buttons[name].is_active)
            self._debounce.read(name, level, self._reported[name], now)
            self._set_timer(now)

    def _set_timer(self, now: float) -> None:
        """(Re)set the one-shot timer for when the first reading waiting will have lasted
        ``bounce_s``; none while nothing waits.  Called with the lock held."""
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None
        at = self._debounce.next_at()
        if at is not None:
            settle = self._guarded(lambda _: self._settle(at), "debounce")
            self._waiting = self._timer(max(0.0, at - now), settle)
            self._waiting.start()

    def _settle(self, at: float) -> None:
        """The timer set for ``at`` ran out: report each button whose level has lasted
        ``bounce_s`` by then (the timer is trusted to have waited, should the clock lag it;
        the clock stamps the events).  A timer cancelled too late to stop it, set for an
        older edge, finds nothing that has lasted yet."""
        with self._lock:
            if self._closed:
                return
            now = self._clock()
            self._report(now, max(now, at))
            self._set_timer(now)

    def _report(self, now: float, at: float) -> None:
        """Queue, stamped ``now``, each button whose level has lasted ``bounce_s`` by ``at``.
        Called with the lock held."""
        for name, pressed, _ in self._debounce.due(at):
            try:
                self._queue.put(events.Button(now, name=name, pressed=pressed))
                self._reported[name] = pressed
            except Exception as error:
                self._fault(name, error)

    def buzz(self, pattern: BuzzPattern) -> None:
        """Sound ``pattern`` (:data:`BUZZ_PATTERNS`: ``illegal`` is three 80 ms beeps) in the
        background; a new pattern cuts the one playing.  Nothing happens without a buzzer.
        Raises :class:`InvalidArgumentError` for an unknown pattern."""
        if pattern not in BUZZ_PATTERNS:
            known = ", ".join(BUZZ_PATTERNS)
            raise InvalidArgumentError(f"unknown buzzer pattern {pattern!r}; known: {known}")
        beeps = BUZZ_PATTERNS[pattern]
        if self._buzzer is not None and not self._closed:
            self._buzzer.beep(beeps.on_s, beeps.off_s, beeps.n, background=True)

    def status(self, state: StatusLight) -> None:
        """Show ``state`` on the status LED.  Nothing happens without a status LED.  Raises
        :class:`InvalidArgumentError` for an unknown state."""
        if state not in tuple(StatusLight):
            known = ", ".join(StatusLight)
            raise InvalidArgumentError(f"unknown status {state!r}; known: {known}")
        if self._led is None or self._closed:
            return
        match StatusLight(state):
            case StatusLight.READY:
                self._led.on()
            case StatusLight.OFF:
                self._led.off()
            case StatusLight.BUSY | StatusLight.ERROR as blinking:
                on_s, off_s = STATUS_BLINKS[blinking]
                self._led.blink(on_s, off_s, background=True)
            case _ as unknown:
                assert_never(unknown)

    def close(self) -> None:
        """Stop debouncing and close every device.  Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._waiting is not None:
                self._waiting.cancel()
        for device in reversed(self._devices):
            device.close()

    def __enter__(self) -> Controls:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
