"""The referee's timers and the one virtual-time driver (companion.referee.timers): what the
daemon's loop, the simulator's tables, the scenario runner and the tests share."""

from __future__ import annotations

import pytest

from companion.events import AnyEvent, Button, Stop, Timer, TimerName
from companion.referee.effects import Effects, SetTimer
from companion.referee.timers import Timeline, Timers, VirtualClock


def test_a_timer_is_set_replaced_and_cancelled_by_its_effects() -> None:
    timers = Timers()
    timers.arm(SetTimer(TimerName.SETTLE, 2.0))
    timers.arm(SetTimer(TimerName.DEBOUNCE, 1.0))
    timers.arm(SetTimer(TimerName.SETTLE, 0.5))  # replaced
    assert timers == {TimerName.SETTLE: 0.5, TimerName.DEBOUNCE: 1.0}
    timers.arm(SetTimer(TimerName.SETTLE, None))  # cancelled
    assert timers == {TimerName.DEBOUNCE: 1.0}
    assert timers.pop_due(0.9) is None and TimerName.DEBOUNCE in timers
    assert timers.pop_due(1.0) == (TimerName.DEBOUNCE, 1.0)
    assert not timers and timers.pop_due(99.0) is None


def test_timers_that_run_out_together_go_in_the_order_they_were_set() -> None:
    timers = Timers()
    for name in (TimerName.GRACE, TimerName.DEBOUNCE, TimerName.SETTLE):
        timers.arm(SetTimer(name, 1.0))
    assert [timers.pop_due(1.0) for _ in range(3)] == [
        (TimerName.GRACE, 1.0), (TimerName.DEBOUNCE, 1.0), (TimerName.SETTLE, 1.0)]


class Echo:
    """A referee that answers every event with the effects scripted for its kind."""

    def __init__(self, answers: dict[str, Effects] | None = None) -> None:
        self.seen: list[AnyEvent] = []
        self.answers = answers or {}

    def handle(self, event: AnyEvent) -> Effects:
        self.seen.append(event)
        key = event.name if isinstance(event, Button | Timer) else type(event).__name__
        return self.answers.pop(key, [])


def test_events_and_timers_reach_the_referee_in_time_order_at_their_times() -> None:
    referee = Echo({"ok": [SetTimer(TimerName.SETTLE, 1.5)],
                    "settle": [SetTimer(TimerName.GRACE, 2.5)]})
    seen: list[Effects] = []
    time = Timeline(referee.handle, on_effects=seen.append)
    time.post(Button(2.0, "undo", True))
    time.post(Button(1.0, "ok", True))
    time.advance(2.2)
    assert referee.seen == [Button(1.0, "ok", True), Timer(1.5, TimerName.SETTLE),
                            Button(2.0, "undo", True)]
    assert seen == [[SetTimer(TimerName.SETTLE, 1.5)], [SetTimer(TimerName.GRACE, 2.5)], []]
    assert time() == time.now == 2.2 and time.timers == {TimerName.GRACE: 2.5}
    time.advance(1.0)  # the clock never goes back
    assert time.now == 2.2 and len(referee.seen) == 3


def test_a_timer_that_runs_out_as_an_event_comes_goes_first_as_in_the_daemons_loop() -> None:
    referee = Echo({"Stop": [SetTimer(TimerName.DEBOUNCE, 1.0)]})
    time = Timeline(referee.handle)
    time.deliver(Stop(0.0))
    time.post(Button(1.0, "ok", True))
    time.advance(1.0)
    assert [type(event).__name__ for event in referee.seen] == ["Stop", "Timer", "Button"]


def test_a_replaced_or_cancelled_timer_never_fires() -> None:
    referee = Echo({"ok": [SetTimer(TimerName.SETTLE, 1.0), SetTimer(TimerName.GRACE, 1.1)],
                    "undo": [SetTimer(TimerName.SETTLE, 3.0), SetTimer(TimerName.GRACE, None)]})
    time = Timeline(referee.handle)
    time.post(Button(0.1, "ok", True))
    time.post(Button(0.5, "undo", True))
    time.advance(5.0)
    assert [e for e in referee.seen if isinstance(e, Timer)] == [Timer(3.0, TimerName.SETTLE)]


def test_a_late_event_is_delivered_at_the_clocks_time() -> None:
    referee = Echo()
    time = Timeline(referee.handle, now=10.0)
    time.post(Button(4.0, "ok", True))
    time.advance(10.0)
    assert referee.seen == [Button(10.0, "ok", True)]


def test_the_virtual_clock_hands_out_events_as_a_blocking_queue_would() -> None:
    clock = VirtualClock()
    clock.post(Stop(0.0), at=5.0)
    assert clock.wait(2.0) is None and clock() == 2.0  # timed out: the clock moved by the wait
    assert clock.wait(None) == Stop(5.0) and clock() == 5.0
    with pytest.raises(LookupError, match="no event is posted"):
        clock.wait(1.0)  # in virtual time nothing else could ever come

