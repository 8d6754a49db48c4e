"""companion monitor: per-cell health (stuck, flaky, never changed), the live lines, the
sensor-test screen, and the acceptance test: a stuck and a flaky cell planted in a simulated
board are flagged within 10 s."""

from __future__ import annotations

import pytest

from companion import events
from companion.board import protocol
from companion.cli import main
from companion.sim.serve import Faults, ServedBoard
from companion.tools.monitor import HealthTracker, Monitor, run_monitor

CELLS = ("a1", "b1", "c1")


GARDEN = tuple(f"{column}{row}" for row in (1, 2) for column in "abcdefghij")


def test_a_cell_reading_a_piece_on_the_cleared_board_is_stuck_after_stuck_s() -> None:
    tracker = HealthTracker(GARDEN, stuck_s=5.0)
    tracker.dump(0.0, {cell: ("M1" if cell == "a1" else "") for cell in GARDEN})
    assert tracker.health(4.9)["a1"].status == "ok"
    assert tracker.health(5.0)["a1"].status == "stuck"
    assert tracker.problems(5.0)[0].sentence() == (
        "a1 is stuck: it has read M1 for 5.0 s where nothing should be")


def test_a_board_with_a_game_laid_out_is_not_a_board_of_stuck_cells() -> None:
    tracker = HealthTracker(GARDEN, stuck_s=5.0)
    tracker.dump(0.0, dict.fromkeys(GARDEN, "red"))  # a garden full of flowers
    assert not tracker.problems(60.0)
    for cell in GARDEN[1:]:  # cleared, but for a1
        tracker.change(61.0, cell, "")
    assert [h.cell for h in tracker.problems(61.0)] == ["a1"]


def test_a_piece_where_one_is_expected_is_not_stuck() -> None:
    tracker = HealthTracker(CELLS, expected={"a1": "red"})
    tracker.change(0.0, "a1", "red")
    assert tracker.health(60.0)["a1"].status == "ok"


def test_three_flickers_in_the_window_make_a_cell_flaky_with_its_rate() -> None:
    tracker = HealthTracker(CELLS, flicker_s=0.25, window_s=10.0, flaky_count=3)
    for t in (1.0, 2.0, 3.0):
        tracker.change(t, "b1", "occupied")
        tracker.change(t + 0.05, "b1", "")
    health = tracker.health(3.5)["b1"]
    assert (health.status, health.flickers, health.rate) == ("flaky", 3, 18.0)
    assert tracker.health(11.5)["b1"].status == "ok", "flickers leave the window"


def test_a_piece_put_down_and_lifted_slowly_is_not_a_flicker() -> None:
    tracker = HealthTracker(CELLS, flicker_s=0.25)
    for t in (1.0, 2.0, 3.0, 4.0):
        tracker.change(t, "b1", "occupied")
        tracker.change(t + 0.5, "b1", "")
    assert tracker.health(5.0)["b1"].flickers == 0


def test_cells_never_seen_to_change_are_listed() -> None:
    tracker = HealthTracker(CELLS)
    tracker.change(1.0, "c1", "M2")
    tracker.change(2.0, "c1", "")
    statuses = {c: h.status for c, h in tracker.health(3.0).items()}
    assert statuses == {"a1": "unchanged", "b1": "unchanged", "c1": "ok"}


def test_monitor_prints_every_kind_of_message_and_refused_lines() -> None:
    monitor = Monitor()
    hello = protocol.Hello(0, "1", "mars", "presence", "b-1", "fw")
    lines = [line for event in (
        events.BoardMessage(10.0, hello),
        events.BoardMessage(10.1, protocol.Dump(1, ("occupied",) + ("",) * 90)),
        events.BoardMessage(10.2, protocol.FieldUpdate(2, "0,0", "occupied")),
        events.BoardMessage(10.3, protocol.Dice(3, (3, 5))),
        events.BoardMessage(10.4, protocol.Card(4, "U17")),
        events.BoardMessage(10.5, protocol.BoardErrorMessage(5, "E12", "row 3 open")),
        events.BadLine(10.6, "checksum 25 expected, line says 27", "F 8 d3 ,*27"),
    ) for line in monitor.handle(event)]
    assert lines == [
        "   0.000  HELLO board b-1, firmware fw, protocol 1, mars, presence",
        "   0.100  DUMP 91 cells, 1 occupied",
        "   0.200  F 0,0 occupied",
        "   0.300  DICE 3 5",
        "   0.400  CARD U17",
        "   0.500  ERR E12 row 3 open",
        "   0.600  refused: checksum 25 expected, line says 27: 'F 8 d3 ,*27'",
    ]
    assert monitor.summary(10.6)[-1] == "1 refused lines, 1 board errors"


def test_sensor_test_screen_lights_changed_cells_and_marks_bad_ones() -> None:
    monitor = Monitor("uranus-rhombus", stuck_s=5.0)
    monitor.handle(events.BoardMessage(0.0, protocol.FieldUpdate(0, "3,1", "occupied")))
    monitor.handle(events.BoardMessage(5.5, protocol.FieldUpdate(1, "0,0", "occupied")))
    screen = monitor.screen(6.0)
    assert screen is not None and screen.layout == "uranus-rhombus"
    assert dict(screen.highlights) == {"0,0": "changed", "3,1": "wrong"}
    assert screen.message == "3,1 stuck" and screen.urgent


def test_monitor_flags_a_stuck_and_a_flaky_cell_planted_in_a_simulated_board(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ServedBoard("pty", "enceladus", {}) as board:
        board.plant(Faults(stuck=("e5",), flaky=("c3",), seed=2))
        status = main(["monitor", board.port, "--seconds", "9"])
    out = capsys.readouterr().out
    flagged = [line for line in out.splitlines() if line.startswith("!! ")]
    assert status == 1
    assert any(line.startswith("!! e5 is stuck") for line in flagged), out
    assert any(line.startswith("!! c3 is flaky") for line in flagged), out
    assert "144 of 146 cells never seen to change" in out


def test_a_healthy_board_shows_no_problem() -> None:
    found: list[str] = []
    with ServedBoard("pty", "mars", {}) as board:
        problems = run_monitor(board.port, seconds=1.5, out=found.append)
    assert problems == []
    assert "no stuck or flaky cell" in found
