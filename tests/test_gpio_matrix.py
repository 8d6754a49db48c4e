"""The GPIO-scanned switch matrix (companion.board.gpio_matrix) on gpiozero's MockFactory,
wired as a matrix circuit (MatrixCircuit): readings at their dump positions, per-cell
debounce, the serial board's events, and a game seen exactly as a serial presence board
shows it.  Scans run on a virtual clock (begin/scan), never timed."""

from __future__ import annotations

from pathlib import Path
from queue import Queue
from typing import Any

import pytest

from companion import events
from companion.board import protocol
from companion.board.gpio_matrix import GpioMatrix, MatrixCircuit, occupancy
from companion.errors import ConfigError
from companion.referee.referee import RefereeSettings
from companion.sim.perform import Put
from companion.sim.scenario import drive, read_scenario, scenario_events, scenario_referee

ROWS = [f"GPIO{n}" for n in (4, 5, 6, 12, 13, 16, 19, 20, 21, 26, 27, 17, 22)]
COLUMNS = [f"GPIO{n}" for n in (2, 3, 7, 8, 9, 10, 11, 14, 15, 18, 23, 24)]


def matrix(factory: Any, layout: str = "mars", rows: int = 10, columns: int = 10,
           **options: float) -> tuple[MatrixCircuit, GpioMatrix, Queue[events.Event]]:
    circuit = MatrixCircuit(factory, ROWS[:rows], COLUMNS[:columns])
    queue: Queue[events.Event] = Queue()
    scanner = GpioMatrix(queue, layout=layout, rows=ROWS[:rows], columns=COLUMNS[:columns],
                         pin_factory=factory, **options)
    return circuit, scanner, queue


def messages(queue: Queue[events.Event]) -> list[object]:
    out = []
    while not queue.empty():
        event = queue.get()
        if isinstance(event, events.BoardMessage):
            out.append(event.message)
    return out


def test_closed_switches_read_occupied_at_their_dump_positions(pin_factory: Any) -> None:
    circuit, scanner, _ = matrix(pin_factory)
    circuit.closed = {(0, 0), (4, 5), (9, 0)}  # cells 0, 45 and 90: 0,-5 ... 0,0 ... 0,5
    readings = scanner.read()
    assert [protocol.LAYOUTS["mars"][i] for i, r in enumerate(readings) if r] == [
        "0,-5", "0,0", "0,5"]


def test_a_matrix_smaller_than_the_layout_is_refused(pin_factory: Any) -> None:
    with pytest.raises(ConfigError, match="9 rows x 10 columns make 90 switches, but the mars "
                       "board has 91 cells"):
        matrix(pin_factory, rows=9)


def test_a_pin_a_button_holds_is_refused_naming_both_and_the_rows_are_given_back(
    pin_factory: Any,
) -> None:
    from companion.config import ButtonPins
    from companion.daemon.controls import Controls

    factory = pin_factory
    rows, columns = ROWS[:10], [*COLUMNS[:9], "GPIO17"]
    with Controls(Queue(), pins=ButtonPins(ok="GPIO17", undo="GPIO25", select="GPIO1",
                                           buzzer=None), pin_factory=factory):
        with pytest.raises(ConfigError) as refused:
            GpioMatrix(Queue(), layout="mars", rows=rows, columns=columns, pin_factory=factory)
        assert str(refused.value) == ("[switches] columns (column 10) and [buttons] ok both "
                                      "use GPIO17; each needs its own pin")
        scanner = GpioMatrix(Queue(), layout="mars", rows=rows, columns=COLUMNS[:10],
                             pin_factory=factory)  # every pin of the refused one was freed
        scanner.close()


def test_start_posts_link_up_hello_and_dump_like_a_serial_board(pin_factory: Any) -> None:
    circuit, scanner, queue = matrix(pin_factory)
    circuit.closed = {(4, 5)}
    scanner.begin(0.0)
    first = queue.get()
    assert isinstance(first, events.LinkState) and first.up
    hello, dump = messages(queue)
    assert hello == protocol.Hello(0, "1", "mars", "presence", "gpio-matrix", "companion-gpio")
    assert isinstance(dump, protocol.Dump) and dump.board("mars")["0,0"] == "occupied"


def test_per_cell_debounce_drops_glitches_and_measures_latency(pin_factory: Any) -> None:
    circuit, scanner, queue = matrix(pin_factory, debounce_s=0.02)
    scanner.begin(0.0)
    messages(queue)
    circuit.closed = {(0, 1)}  # a 10 ms glitch on 1,-5
    for n in range(1, 6):
        scanner.scan(n * 0.002)
    circuit.closed = set()
    for n in range(6, 30):
        scanner.scan(n * 0.002)
    assert messages(queue) == []
    circuit.closed = {(0, 1)}
    for n in range(30, 60):
        scanner.scan(n * 0.002)
    assert messages(queue) == [protocol.FieldUpdate(2, "1,-5", "occupied")]
    assert scanner.latency == pytest.approx(0.02)


def test_scan_rate_heartbeats_and_dump_requests(pin_factory: Any) -> None:
    _, scanner, queue = matrix(pin_factory)
    scanner.begin(0.0)
    messages(queue)
    for n in range(1, 501):
        scanner.scan(n * 0.002)  # 500 scans a second
    assert scanner.scan_rate == pytest.approx(500)
    assert scanner.send(protocol.RequestDump()) and not scanner.send(protocol.LedsOff())
    scanner.scan(1.002)
    kinds = [type(m).__name__ for m in messages(queue)]
    assert kinds == ["Heartbeat", "Hello", "Dump"]


def test_a_game_is_seen_and_refereed_exactly_as_from_a_serial_presence_board(
    pin_factory: Any,
) -> None:
    scenario = read_scenario(Path(__file__).parent / "scenarios" / "enceladus-4-steps.scenario")
    cells = protocol.LAYOUTS["enceladus"]
    board = occupancy(scenario.rules().board(scenario.setup()), cells)
    # The serial presence board: the scenario's events with pieces reduced to occupancy.
    serial = [
        events.BoardMessage(e.t, _presence(e.message)) if isinstance(e, events.BoardMessage) else e
        for e in scenario_events(scenario)
    ]
    # The GPIO matrix: the same hands on switches, scanned every 2 ms.
    circuit, scanner, queue = matrix(pin_factory, "enceladus", rows=13, columns=12)
    circuit.set_board(cells, board)
    scanner.begin(0.0)
    t, now = 0.0, 0.0
    for op in scenario.ops():
        t += op.wait
        while now < t:
            now += 0.002
            scanner.scan(now)
        if isinstance(op, Put):
            board = board | occupancy({op.cell: op.piece}, [op.cell])
            circuit.set_board(cells, board)
    for _ in range(100):
        now += 0.002
        scanner.scan(now)
    gpio = [queue.get() for _ in range(queue.qsize())]
    seen = [(m.cell, m.piece) for m in messages_of(gpio) if isinstance(m, protocol.FieldUpdate)]
    expected = [(m.cell, m.piece) for m in messages_of(serial)
                if isinstance(m, protocol.FieldUpdate)]
    assert seen == expected
    # Occupancy cannot tell the last step, e9/d9, from d9/e9 still under way (the flower
    # lifted from d9 for the Martian, e9 still to pick): the players say it is done with OK.
    ok = max(gpio[-1].t, serial[-1].t) + 1.0
    press = [events.Button(ok, "ok", True), events.Button(ok + 0.08, "ok", False)]
    end = ok + 3.0
    presence = RefereeSettings(presence=True)
    by_gpio = drive(scenario_referee(scenario, presence), gpio + press, end)
    by_serial = drive(scenario_referee(scenario, presence), serial + press, end)
    assert by_gpio.committed == by_serial.committed == scenario.expected


def _presence(message: object) -> object:
    if isinstance(message, protocol.Dump):
        return protocol.Dump(message.seq, tuple("occupied" if p else "" for p in message.pieces))
    if isinstance(message, protocol.FieldUpdate):
        return protocol.FieldUpdate(message.seq, message.cell,
                                    "occupied" if message.piece else "")
    return message


def messages_of(stream: list[events.Event]) -> list[object]:
    return [e.message for e in stream if isinstance(e, events.BoardMessage)]
