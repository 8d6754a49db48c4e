"""The benchmarks measure what they say (bench/run.py): every field update is timed with the
timers it sets off, and the start-up figure begins a game in a folder of finished ones."""

from __future__ import annotations

import gc
import threading
from types import ModuleType

import pytest
from conftest import load_bench

from companion.board import protocol
from companion.events import BoardMessage, Timer


def _bench() -> ModuleType:
    return load_bench("run")


def test_every_field_update_is_timed_with_the_timers_it_sets_off() -> None:
    bench = _bench()
    table = bench._table("enceladus", 1, "identity", bench.PEOPLE)
    table.game, table.samples = "enceladus", []
    sent: list[object] = []
    timers: list[str] = []
    deliver = bench.VirtualTable.deliver

    def counted(self: object, event: object) -> list[object]:
        if isinstance(event, BoardMessage) and isinstance(event.message, protocol.FieldUpdate):
            sent.append(event.message)
        elif isinstance(event, Timer):
            timers.append(event.name)
        return deliver(self, event)  # type: ignore[arg-type]

    bench.VirtualTable.deliver = counted
    try:
        report = table.play()
    finally:
        bench.VirtualTable.deliver = deliver
    table.close_update()
    assert [s.message for s in table.samples] == sent
    # The debounce timers (a settle time too, now only for a step ending the game or a step
    # put back by hand) reach the referee through deliver, and are timed there.
    assert "debounce" in timers and report.over
    assert all(s.handle > 0 and s.wire > 0.001 for s in table.samples)


def test_the_games_collect_garbage_between_events_as_the_daemons_loop_does() -> None:
    # A collection is the daemon loop's idle work, not a field update's cost: none falls
    # inside the referee's handling of an event, and each is timed on its own.
    bench = _bench()
    table = bench._table("mars", 1, "presence", bench.PEOPLE)
    table.game, table.samples = "mars", []
    handling, runs, enabled = [False], [], []
    deliver = bench.VirtualTable.deliver

    def watched(self: object, event: object) -> list[object]:
        handling[0] = True
        enabled.append(gc.isenabled())
        try:
            return deliver(self, event)  # type: ignore[arg-type]
        finally:
            handling[0] = False

    def on_collect(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append((handling[0], table.time.waiting()))

    was = gc.isenabled()
    bench.VirtualTable.deliver = watched
    gc.callbacks.append(on_collect)
    try:
        report = table.play_collected()
    finally:
        gc.callbacks.remove(on_collect)
        bench.VirtualTable.deliver = deliver
    assert report.over and not any(enabled)
    assert len(runs) == len(table.collections) > 100
    assert not any(inside or waiting for inside, waiting in runs)
    assert gc.isenabled() == was


def test_start_up_begins_a_game_in_a_folder_of_finished_ones() -> None:
    found = _bench().startup([0, 20], repeats=1)
    assert sorted(found) == [0, 20] and all(seconds > 0 for seconds in found.values())


def test_the_display_figures_time_every_frame_on_both_matrices() -> None:
    bench = _bench()
    found = bench.display_costs(1)
    assert 0 < found["share"] < 1 and found["screens"] > 0
    assert sorted(found["frame_us"]) == ["16x16 RGB", "32x8 1"]
    assert all(0 < median <= p99 <= most for median, p99, most in found["frame_us"].values())


def test_an_update_costs_the_cpu_time_of_the_thread_handling_it_not_the_wall_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Time the referee's thread did not run (another process had the core) is not its cost.
    bench = _bench()
    monkeypatch.setattr(bench, "GAMES", ("mars",))
    monkeypatch.setattr(bench, "SENSING", ("presence",))
    monkeypatch.setattr(bench, "NOISES", {"people": bench.PEOPLE})
    deliver = bench.VirtualTable.deliver
    waits = threading.Event()

    def descheduled(self: object, event: object) -> list[object]:
        if isinstance(event, BoardMessage) and isinstance(event.message, protocol.FieldUpdate):
            waits.wait(0.005)  # never set: 5 ms of wall clock without CPU
        return deliver(self, event)  # type: ignore[arg-type]

    monkeypatch.setattr(bench.VirtualTable, "deliver", descheduled)
    row, = bench.per_update(1)
    assert row["updates"] > 100 and row["handle_ms"][0] < 5  # the median, in ms
    assert row["worst"].startswith("mars step ")
