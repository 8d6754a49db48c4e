"""GPIO controls on gpiozero's own MockFactory: debounced buttons, buzzer, status LED, faults
and the pin factory check-config looks at.

Timing: the debounce timers run on the test's clock (:class:`Timers`): a test moves it on
with ``advance`` and the timers due run there and then, so no test waits for the debounce and
none depends on the machine's speed.  The buzzer and the LED blink on gpiozero's own threads:
their pin changes are awaited on a condition with a bound.
"""

from __future__ import annotations

import importlib.util
import logging
import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from gpiozero import Button as GpioButton
from gpiozero.pins.mock import MockFactory

from companion.board.pins import make_pin_factory, pin_factory_missing
from companion.config import ButtonPins
from companion.daemon.controls import BUZZ_PATTERNS, STATUS_BLINKS, Beeps, Controls
from companion.errors import ConfigError
from companion.events import Button, Event, Fault

BOUNCE = 0.1  # seconds
WAIT = 5.0  # the longest a blink on gpiozero's thread may take, in seconds: a safety net
PINS = ButtonPins(ok="GPIO17", undo="GPIO27", select="GPIO22", roll="GPIO5",
                  buzzer="GPIO23", status_led="GPIO24")  # fmt: skip


@dataclass(eq=False)
class _Shot:
    timers: Timers
    at: float
    function: Callable[[], None]

    def start(self) -> None:
        self.timers.pending.append(self)

    def cancel(self) -> None:
        if self in self.timers.pending:
            self.timers.pending.remove(self)


class Timers:
    """The test's clock and the one-shot timers set on it: ``advance`` moves the clock on and
    runs each timer that falls due, in order, at its time."""

    def __init__(self) -> None:
        self.now = 100.0
        self.pending: list[_Shot] = []

    def __call__(self, interval_s: float, function: Callable[[], None]) -> _Shot:
        return _Shot(self, self.now + interval_s, function)

    def clock(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while due := [shot for shot in self.pending if shot.at <= end]:
            shot = min(due, key=lambda shot: shot.at)
            self.pending.remove(shot)
            self.now = shot.at
            shot.function()
        self.now = end


@pytest.fixture
def timers() -> Timers:
    return Timers()


@pytest.fixture
def events() -> queue.Queue[Event]:
    return queue.Queue()


def make(events: queue.Queue[Event], pin_factory: Any, timers: Timers, pins: ButtonPins = PINS,
         **options: Any) -> Controls:
    return Controls(events, pins=pins, pin_factory=pin_factory, clock=timers.clock,
                    bounce_s=BOUNCE, timer=timers, **options)


@pytest.fixture
def controls(events: queue.Queue[Event], pin_factory: Any, timers: Timers) -> Iterator[Controls]:
    with make(events, pin_factory, timers) as controls:
        yield controls


def settled(events: queue.Queue[Event], timers: Timers) -> list[Event]:
    """What the controls report once every pin has been still well past the debounce."""
    timers.advance(3 * BOUNCE)
    out = []
    while not events.empty():
        out.append(events.get_nowait())
    return out


def chatter(pin: Any, timers: Timers, *, end_low: bool) -> float:
    """A bouncing contact: five edges 2 ms apart (8 ms in all), ending at the new level;
    returns the time of the last edge."""
    new, old = (pin.drive_low, pin.drive_high) if end_low else (pin.drive_high, pin.drive_low)
    for drive in (new, old, new, old):
        drive()
        timers.advance(0.002)
    new()
    return timers.now


# --- buttons --------------------------------------------------------------------------------


def test_contact_bouncing_on_press_and_on_release_gives_one_press_and_one_release(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers, controls: Controls
) -> None:
    pressed = chatter(pin_factory.pin(17), timers, end_low=True)
    assert settled(events, timers) == [Button(pressed + BOUNCE, "ok", True)]
    released = chatter(pin_factory.pin(17), timers, end_low=False)
    assert settled(events, timers) == [Button(released + BOUNCE, "ok", False)]


def test_a_change_counts_only_once_the_pin_has_been_still_for_the_debounce(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers, controls: Controls
) -> None:
    pin_factory.pin(17).drive_low()
    timers.advance(BOUNCE * 0.99)
    assert events.empty()
    timers.advance(BOUNCE * 0.02)
    assert events.get_nowait() == Button(timers.now - BOUNCE * 0.01, "ok", True)


def test_three_millisecond_glitch_gives_nothing(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers, controls: Controls
) -> None:
    pin_factory.pin(27).drive_low()
    timers.advance(0.003)
    pin_factory.pin(27).drive_high()
    assert settled(events, timers) == []


def test_a_press_whose_timer_runs_late_on_a_busy_host_is_not_lost(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers, controls: Controls
) -> None:
    """A press held longer than the debounce counts though its timer has not run by the
    release (a loaded host runs timer threads late): it is no glitch."""
    pin = pin_factory.pin(22)
    pin.drive_low()
    timers.now += 4 * BOUNCE  # the clock moves on; the timer thread has not run
    pin.drive_high()
    assert [(e.name, e.pressed) for e in settled(events, timers)] == [("select", True),
                                                                     ("select", False)]


def test_held_button_gives_one_press(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers, controls: Controls
) -> None:
    pin_factory.pin(22).drive_low()
    assert settled(events, timers) == [Button(timers.now - 2 * BOUNCE, "select", True)]
    assert settled(events, timers) == []


def test_each_button_is_debounced_on_its_own(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers, controls: Controls
) -> None:
    undo = chatter(pin_factory.pin(27), timers, end_low=True)
    roll = chatter(pin_factory.pin(5), timers, end_low=True)  # within undo's debounce
    assert settled(events, timers) == [Button(undo + BOUNCE, "undo", True),
                                       Button(roll + BOUNCE, "roll", True)]


def test_buttons_to_3v3_press_on_a_high_level(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers
) -> None:
    with make(events, pin_factory, timers, ButtonPins(pull_up=False, buzzer=None)):
        pin_factory.pin(17).drive_high()
        assert [e.name for e in settled(events, timers)] == ["ok"]


def test_by_default_the_debounce_runs_on_a_timer_thread(
    events: queue.Queue[Event], pin_factory: Any
) -> None:
    with Controls(events, pins=PINS, pin_factory=pin_factory, clock=lambda: 7.5, bounce_s=0.001):
        pin_factory.pin(17).drive_low()
        assert events.get(timeout=WAIT) == Button(7.5, "ok", True)


# --- faults ---------------------------------------------------------------------------------


class FailsOnce(queue.Queue[Event]):
    """An event queue whose first button event is refused, as a broken consumer might."""

    failed = False

    def put(self, item: Event, block: bool = True, timeout: float | None = None) -> None:
        if isinstance(item, Button) and not self.failed:
            self.failed = True
            raise RuntimeError("queue refused the event")
        super().put(item, block, timeout)


def test_callback_error_is_logged_and_queued_as_a_fault_and_the_next_press_arrives(
    pin_factory: Any, timers: Timers, caplog: pytest.LogCaptureFixture
) -> None:
    events = FailsOnce()
    with make(events, pin_factory, timers):
        pin_factory.pin(17).drive_low()
        (fault,) = settled(events, timers)
        assert isinstance(fault, Fault)
        assert (fault.where, fault.error) == ("controls.ok", "queue refused the event")
        assert fault.details == {"type": "RuntimeError"}
        pin_factory.pin(17).drive_high()
        assert settled(events, timers) == []  # the lost press is not followed by a lone release
        pin_factory.pin(17).drive_low()
        assert [(e.name, e.pressed) for e in settled(events, timers)] == [("ok", True)]
    (record,) = [r for r in caplog.records if r.name == "companion.controls"]
    assert record.levelno == logging.ERROR and record.exc_info is not None


def test_pin_in_use_is_a_config_error_and_leaves_no_pin_taken(
    events: queue.Queue[Event], pin_factory: Any, controls: Controls
) -> None:
    others = ButtonPins(ok="GPIO6", undo="GPIO24", select="GPIO12", buzzer=None)
    with pytest.raises(ConfigError) as refused:
        Controls(events, pins=others, pin_factory=pin_factory)
    assert str(refused.value) == (
        "[buttons] undo and [buttons] status_led both use GPIO24; each needs its own pin")
    GpioButton("GPIO6", pin_factory=pin_factory).close()  # ok's pin was given back


def test_close_gives_the_pins_back_and_stops_pending_changes(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers
) -> None:
    controls = make(events, pin_factory, timers)
    pin_factory.pin(17).drive_low()
    controls.close()
    controls.close()
    assert settled(events, timers) == []
    with make(events, pin_factory, timers):
        pass


def test_each_edge_cancels_the_last_timer_and_a_stale_timer_reports_nothing(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers, controls: Controls
) -> None:
    """A ``threading.Timer`` cancelled too late still runs, at its time: it must find that
    the pin has not been still long enough since the newer edges."""
    pin = pin_factory.pin(17)
    pin.drive_low()
    (stale,) = timers.pending
    timers.advance(BOUNCE / 2)
    pin.drive_high()
    pin.drive_low()
    assert stale not in timers.pending and len(timers.pending) == 1  # each edge cancels the last
    timers.advance(BOUNCE / 2)
    stale.function()  # at its time: low, as at its edge, but not still since: no press yet
    assert events.empty()
    assert [(e.name, e.pressed) for e in settled(events, timers)] == [("ok", True)]


def test_negative_bounce_time_is_refused(events: queue.Queue[Event], pin_factory: Any) -> None:
    with pytest.raises(ValueError, match="bounce_s"):
        Controls(events, pins=PINS, pin_factory=pin_factory, bounce_s=-0.01)


# --- buzzer and status LED ------------------------------------------------------------------


def test_illegal_buzz_is_three_80ms_beeps(pin_factory: Any, controls: Controls) -> None:
    pin = pin_factory.pin(23)
    before = len(pin.states)
    controls.buzz("illegal")
    assert pin.wait_states(before + 6, WAIT)
    changes = pin.states[before:]  # timestamps: seconds since the previous change
    assert [s.state for s in changes] == [True, False, True, False, True, False]
    assert BUZZ_PATTERNS["illegal"] == Beeps(on_s=0.08, off_s=0.08, n=3)
    assert min(s.timestamp for s in changes if not s.state) >= 0.075


def test_question_buzz_is_one_short_beep(pin_factory: Any, controls: Controls) -> None:
    pin = pin_factory.pin(23)
    before = len(pin.states)
    controls.buzz("question")
    assert pin.wait_states(before + 2, WAIT)
    assert [s.state for s in pin.states[before:]] == [True, False]


def test_unknown_buzz_pattern_is_refused(controls: Controls) -> None:
    with pytest.raises(ValueError, match="unknown buzzer pattern 'fanfare'"):
        controls.buzz("fanfare")


def test_status_ready_is_steady_and_off_is_dark(pin_factory: Any, controls: Controls) -> None:
    controls.status("ready")
    assert pin_factory.pin(24).state is True
    controls.status("off")
    assert pin_factory.pin(24).state is False


def test_status_error_blinks_fast(pin_factory: Any, controls: Controls) -> None:
    pin = pin_factory.pin(24)
    before = len(pin.states)
    controls.status("error")
    assert pin.wait_states(before + 4, WAIT)
    controls.status("off")
    on, off = pin.states[before : before + 2]  # timestamps: seconds since the previous change
    assert (on.state, off.state) == (True, False)
    assert off.timestamp >= STATUS_BLINKS["error"][0] - 0.005
    assert STATUS_BLINKS["error"][0] < STATUS_BLINKS["busy"][0]


def test_unknown_status_is_refused(controls: Controls) -> None:
    with pytest.raises(ValueError, match="unknown status 'sleepy'"):
        controls.status("sleepy")


def test_parts_not_fitted_are_silently_absent(
    events: queue.Queue[Event], pin_factory: Any, timers: Timers
) -> None:
    with make(events, pin_factory, timers, ButtonPins(roll=None, buzzer=None,
                                                  status_led=None)) as controls:
        controls.buzz("illegal")
        controls.status("busy")
    for bcm in (5, 23, 24):
        assert [s.state for s in pin_factory.pin(bcm).states] == [False]


# --- pin factories --------------------------------------------------------------------------


def test_pin_factory_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    pin_factory = make_pin_factory("mock")
    assert isinstance(pin_factory, MockFactory)
    pin_factory.close()


def test_pin_factory_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "MOCK")
    pin_factory = make_pin_factory()
    assert isinstance(pin_factory, MockFactory)
    pin_factory.close()


def test_unknown_pin_factory_says_how_to_run_without_gpio() -> None:
    with pytest.raises(ConfigError, match="tin is not installed.*GPIOZERO_PIN_FACTORY=mock"):
        make_pin_factory("tin")



def test_check_config_can_tell_a_pin_factory_that_cannot_work_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    assert pin_factory_missing() is None
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "tin")
    assert pin_factory_missing() == "GPIOZERO_PIN_FACTORY=tin is not a gpiozero pin factory " \
        "installed here"
    if importlib.util.find_spec("lgpio") is None:
        monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
        assert pin_factory_missing() == ("GPIOZERO_PIN_FACTORY=lgpio needs lgpio (python3-lgpio "
                                         "on Raspberry Pi OS), which is not installed")
