"""GPIO controls on gpiozero's own MockFactory: debounced buttons, buzzer, status LED, faults
and the pin factory check-config looks at.

Timing: the debounce time here (``BOUNCE``) is far longer than any burst of edges the tests
drive, and events are awaited on the queue with a timeout, never by sleeping blindly.
"""

from __future__ import annotations

import importlib.util
import logging
import queue
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gpiozero import Button as GpioButton
from gpiozero.pins.mock import MockFactory

from companion.config import ButtonPins
from companion.controls import (
    BUZZ_PATTERNS,
    STATUS_BLINKS,
    Beeps,
    Controls,
    make_pin_factory,
    pin_factory_missing,
)
from companion.errors import ConfigError
from companion.events import Button, Event, Fault

BOUNCE = 0.1  # seconds
WAIT = 5.0  # the longest an expected event may take, in seconds
T = 7.5  # what the test clock says
PINS = ButtonPins(ok="GPIO17", undo="GPIO27", select="GPIO22", roll="GPIO5",
                  buzzer="GPIO23", status_led="GPIO24")  # fmt: skip


@pytest.fixture
def factory() -> Iterator[Any]:
    factory = MockFactory()
    yield factory
    factory.close()


@pytest.fixture
def events() -> queue.Queue[Event]:
    return queue.Queue()


@pytest.fixture
def controls(events: queue.Queue[Event], factory: Any) -> Iterator[Controls]:
    with Controls(
        events, pins=PINS, pin_factory=factory, clock=lambda: T, bounce_s=BOUNCE
    ) as controls:
        yield controls


def next_event(events: queue.Queue[Event]) -> Event:
    return events.get(timeout=WAIT)


def assert_quiet(events: queue.Queue[Event]) -> None:
    """Nothing (more) arrives, however long the debounce takes."""
    with pytest.raises(queue.Empty):
        events.get(timeout=3 * BOUNCE)


def chatter(pin: Any, *, end_low: bool) -> None:
    """A bouncing contact: five edges 2 ms apart (10 ms in all), ending at the new level."""
    new, old = (pin.drive_low, pin.drive_high) if end_low else (pin.drive_high, pin.drive_low)
    for drive in (new, old, new, old, new):
        drive()
        time.sleep(0.002)


def wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# --- buttons --------------------------------------------------------------------------------


def test_contact_bouncing_on_press_and_on_release_gives_one_press_and_one_release(
    events: queue.Queue[Event], factory: Any, controls: Controls
) -> None:
    chatter(factory.pin(17), end_low=True)
    assert next_event(events) == Button(T, "ok", True)
    chatter(factory.pin(17), end_low=False)
    assert next_event(events) == Button(T, "ok", False)
    assert_quiet(events)


def test_three_millisecond_glitch_gives_nothing(
    events: queue.Queue[Event], factory: Any, controls: Controls
) -> None:
    factory.pin(27).drive_low()
    time.sleep(0.003)
    factory.pin(27).drive_high()
    assert_quiet(events)


def test_held_button_gives_one_press(
    events: queue.Queue[Event], factory: Any, controls: Controls
) -> None:
    factory.pin(22).drive_low()
    assert next_event(events) == Button(T, "select", True)
    assert_quiet(events)


def test_each_button_is_debounced_on_its_own(
    events: queue.Queue[Event], factory: Any, controls: Controls
) -> None:
    chatter(factory.pin(27), end_low=True)
    chatter(factory.pin(5), end_low=True)
    assert {next_event(events), next_event(events)} == {
        Button(T, "undo", True), Button(T, "roll", True),
    }  # fmt: skip
    assert_quiet(events)


def test_buttons_to_3v3_press_on_a_high_level(events: queue.Queue[Event], factory: Any) -> None:
    pins = ButtonPins(pull_up=False, buzzer=None)
    with Controls(events, pins=pins, pin_factory=factory, clock=lambda: T, bounce_s=BOUNCE):
        factory.pin(17).drive_high()
        assert next_event(events) == Button(T, "ok", True)


def test_events_carry_the_clock_reading_when_the_change_was_confirmed(
    events: queue.Queue[Event], factory: Any
) -> None:
    readings = iter([100.0, 200.0])
    with Controls(events, pins=PINS, pin_factory=factory, clock=lambda: next(readings),
                  bounce_s=BOUNCE):  # fmt: skip
        factory.pin(17).drive_low()
        assert next_event(events).t == 100.0
        factory.pin(17).drive_high()
        assert next_event(events).t == 200.0


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
    factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    events = FailsOnce()
    with Controls(events, pins=PINS, pin_factory=factory, clock=lambda: T, bounce_s=BOUNCE):
        factory.pin(17).drive_low()
        fault = next_event(events)
        assert isinstance(fault, Fault)
        assert (fault.where, fault.error) == ("controls.ok", "queue refused the event")
        assert fault.details == {"type": "RuntimeError"}
        factory.pin(17).drive_high()
        assert_quiet(events)  # the lost press is not followed by a lone release
        factory.pin(17).drive_low()
        assert next_event(events) == Button(T, "ok", True)
    (record,) = [r for r in caplog.records if r.name == "companion.controls"]
    assert record.levelno == logging.ERROR and record.exc_info is not None


def test_pin_in_use_is_a_config_error_and_leaves_no_pin_taken(
    events: queue.Queue[Event], factory: Any, controls: Controls
) -> None:
    others = ButtonPins(ok="GPIO6", undo="GPIO24", select="GPIO12", buzzer=None)
    with pytest.raises(ConfigError) as refused:
        Controls(events, pins=others, pin_factory=factory)
    assert str(refused.value) == (
        "[buttons] undo and [buttons] status_led both use GPIO24; each needs its own pin")
    GpioButton("GPIO6", pin_factory=factory).close()  # ok's pin was given back


def test_close_gives_the_pins_back_and_stops_pending_changes(
    events: queue.Queue[Event], factory: Any
) -> None:
    controls = Controls(events, pins=PINS, pin_factory=factory, bounce_s=BOUNCE)
    factory.pin(17).drive_low()
    controls.close()
    controls.close()
    assert_quiet(events)
    with Controls(events, pins=PINS, pin_factory=factory, bounce_s=BOUNCE):
        pass


def test_negative_bounce_time_is_refused(events: queue.Queue[Event], factory: Any) -> None:
    with pytest.raises(ValueError, match="bounce_s"):
        Controls(events, pins=PINS, pin_factory=factory, bounce_s=-0.01)


# --- buzzer and status LED ------------------------------------------------------------------


def test_illegal_buzz_is_three_80ms_beeps(factory: Any, controls: Controls) -> None:
    pin = factory.pin(23)
    before = len(pin.states)
    controls.buzz("illegal")
    wait_for(lambda: len(pin.states) >= before + 6)
    changes = pin.states[before:]  # timestamps: seconds since the previous change
    assert [s.state for s in changes] == [True, False, True, False, True, False]
    assert BUZZ_PATTERNS["illegal"] == Beeps(on_s=0.08, off_s=0.08, n=3)
    assert min(s.timestamp for s in changes if not s.state) >= 0.075


def test_question_buzz_is_one_short_beep(factory: Any, controls: Controls) -> None:
    pin = factory.pin(23)
    before = len(pin.states)
    controls.buzz("question")
    wait_for(lambda: len(pin.states) >= before + 2)
    assert [s.state for s in pin.states[before:]] == [True, False]


def test_unknown_buzz_pattern_is_refused(controls: Controls) -> None:
    with pytest.raises(ValueError, match="unknown buzzer pattern 'fanfare'"):
        controls.buzz("fanfare")


def test_status_ready_is_steady_and_off_is_dark(factory: Any, controls: Controls) -> None:
    controls.status("ready")
    assert factory.pin(24).state is True
    controls.status("off")
    assert factory.pin(24).state is False


def test_status_error_blinks_fast(factory: Any, controls: Controls) -> None:
    pin = factory.pin(24)
    before = len(pin.states)
    controls.status("error")
    wait_for(lambda: len(pin.states) >= before + 4)
    controls.status("off")
    on, off = pin.states[before : before + 2]  # timestamps: seconds since the previous change
    assert (on.state, off.state) == (True, False)
    assert off.timestamp >= STATUS_BLINKS["error"][0] - 0.005
    assert STATUS_BLINKS["error"][0] < STATUS_BLINKS["busy"][0]


def test_unknown_status_is_refused(controls: Controls) -> None:
    with pytest.raises(ValueError, match="unknown status 'sleepy'"):
        controls.status("sleepy")


def test_parts_not_fitted_are_silently_absent(events: queue.Queue[Event], factory: Any) -> None:
    pins = ButtonPins(roll=None, buzzer=None, status_led=None)
    with Controls(events, pins=pins, pin_factory=factory, bounce_s=BOUNCE) as controls:
        controls.buzz("illegal")
        controls.status("busy")
    for bcm in (5, 23, 24):
        assert [s.state for s in factory.pin(bcm).states] == [False]


# --- pin factories --------------------------------------------------------------------------


def test_pin_factory_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    factory = make_pin_factory("mock")
    assert isinstance(factory, MockFactory)
    factory.close()


def test_pin_factory_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "MOCK")
    factory = make_pin_factory()
    assert isinstance(factory, MockFactory)
    factory.close()


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
