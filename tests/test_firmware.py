"""The reference firmware (hardware/firmware/gardenboard.py) on the host, under CPython.

The Pico's pins are replaced by a simulated switch matrix (:class:`SimulatedMatrix`: reed
switches with or without their diodes), its clock by numbers in milliseconds, its USB port by
a byte list; every line it sends is read back with the daemon's own parser
(``companion.board.protocol``), so the firmware and the companion cannot drift apart.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from companion.board import protocol

FIRMWARE = Path(__file__).resolve().parent.parent / "hardware" / "firmware"


def load_firmware() -> ModuleType:
    """``gardenboard`` as MicroPython would import it, from ``hardware/firmware``."""
    spec = importlib.util.spec_from_file_location("gardenboard", FIRMWARE / "gardenboard.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gardenboard", module)
    spec.loader.exec_module(module)
    return module


gardenboard = load_firmware()


class RowPin:
    """An output pin: the firmware drives it with ``value(v)``."""

    def __init__(self) -> None:
        self.level = 1

    def value(self, level: int | None = None) -> int:
        if level is not None:
            self.level = level
        return self.level


class ColumnPin:
    """An input pin with a pull-up: low when the matrix connects it to a driven-low row."""

    def __init__(self, matrix: SimulatedMatrix, column: int) -> None:
        self.matrix = matrix
        self.column = column

    def value(self, level: int | None = None) -> int:
        assert level is None, "the firmware must not drive a column"
        return 0 if self.matrix.pulled_low(self.column) else 1


class SimulatedMatrix:
    """A rows x columns switch matrix; ``closed`` holds the ``(row, column)`` switches closed.

    With ``diodes`` (cathode to the row) current flows only from a column into a low row
    through the closed switch between them.  Without, current flows both ways through every
    closed switch, so three closed switches at the corners of a rectangle make the fourth
    corner read closed too: the "ghost" the diodes are there to stop (WIRING.md).
    """

    def __init__(self, rows: int, columns: int, *, diodes: bool = True) -> None:
        self.rows = [RowPin() for _ in range(rows)]
        self.columns = [ColumnPin(self, c) for c in range(columns)]
        self.diodes = diodes
        self.closed: set[tuple[int, int]] = set()

    def pulled_low(self, column: int) -> bool:
        low_rows = {r for r, pin in enumerate(self.rows) if pin.level == 0}
        if self.diodes:
            return any((r, column) in self.closed for r in low_rows)
        # Without diodes: is the column wired to a low row through any chain of switches?
        seen_columns, seen_rows, frontier = {column}, set[int](), [column]
        while frontier:
            c = frontier.pop()
            for r, c2 in self.closed:
                if c2 == c and r not in seen_rows:
                    seen_rows.add(r)
                    for r2, c3 in self.closed:
                        if r2 == r and c3 not in seen_columns:
                            seen_columns.add(c3)
                            frontier.append(c3)
        return bool(seen_rows & low_rows)

    def set_cell(self, index: int, closed: bool) -> None:
        switch = divmod(index, len(self.columns))
        (self.closed.add if closed else self.closed.discard)(switch)


class Wire:
    """The USB serial port: collects what the firmware writes, parses it like the Pi does."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.parser = protocol.LineParser()

    def write(self, data: bytes) -> None:
        self.data += data

    def messages(self) -> list[protocol.Message | protocol.LineRefused]:
        """The lines written since the last call, decoded by the companion's parser."""
        out = self.parser.feed(bytes(self.data))
        self.data.clear()
        return out


def mars_board(**options: object) -> tuple[SimulatedMatrix, Wire, object]:
    """A Mars presence board (91 cells on 10 x 10 wires), started at t = 0 ms."""
    matrix = SimulatedMatrix(10, 10)
    wire = Wire()
    sensor = gardenboard.SwitchMatrix(matrix.rows, matrix.columns, 91)
    controller = gardenboard.Controller(sensor, wire.write, layout="mars", board_id="test-1",
                                        **options)
    return matrix, wire, controller


# --- layouts and framing --------------------------------------------------------------------


@pytest.mark.parametrize("layout", sorted(protocol.LAYOUTS))
def test_layout_cells_are_the_companions_dump_order(layout: str) -> None:
    assert tuple(gardenboard.layout_cells(layout)) == protocol.LAYOUTS[layout]


def test_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="chess"):
        gardenboard.layout_cells("chess")


@pytest.mark.parametrize("body", ["DUMP?", "HELLO?", "F 12 e6 1r", "HB 7 1500", "LEDS off"])
def test_checksum_and_frame_match_the_companion(body: str) -> None:
    assert gardenboard.checksum(body) == protocol.checksum(body)
    assert gardenboard.frame(body) == protocol.frame(body)


def test_power_up_sends_a_bare_newline_hello_and_dump() -> None:
    matrix, wire, controller = mars_board()
    matrix.set_cell(45, True)  # 0,0: the central space
    controller.start(0)
    assert wire.data.startswith(b"\nHELLO 0 1 mars presence test-1 ")
    hello, dump = wire.messages()
    assert hello == protocol.Hello(0, "1", "mars", "presence", "test-1", gardenboard.FIRMWARE)
    assert isinstance(dump, protocol.Dump) and dump.seq == 1
    board = dump.board("mars")
    assert board["0,0"] == "occupied"
    assert [cell for cell, piece in board.items() if piece] == ["0,0"]


# --- the switch matrix ----------------------------------------------------------------------


def test_switch_matrix_reads_each_closed_switch_at_its_dump_position() -> None:
    matrix = SimulatedMatrix(3, 4)
    sensor = gardenboard.SwitchMatrix(matrix.rows, matrix.columns)
    for index in (0, 5, 11):
        matrix.set_cell(index, True)
    assert [i for i, code in enumerate(sensor.read()) if code == "#"] == [0, 5, 11]
    assert all(row.level == 1 for row in matrix.rows), "every row is released after the scan"


def test_diodes_stop_ghosts_a_bare_matrix_would_show() -> None:
    # Switches at (0,0), (0,1) and (1,0) closed: (1,1) ghosts without diodes.
    for diodes, expected in ((True, [0, 1, 2]), (False, [0, 1, 2, 3])):
        matrix = SimulatedMatrix(2, 2, diodes=diodes)
        matrix.closed = {(0, 0), (0, 1), (1, 0)}
        sensor = gardenboard.SwitchMatrix(matrix.rows, matrix.columns)
        assert [i for i, code in enumerate(sensor.read()) if code == "#"] == expected


def test_switch_matrix_reads_only_the_layouts_cells() -> None:
    matrix = SimulatedMatrix(10, 10)
    matrix.set_cell(95, True)  # a switch beyond the 91 Mars cells
    assert len(gardenboard.SwitchMatrix(matrix.rows, matrix.columns, 91).read()) == 91


def test_too_small_a_matrix_is_refused() -> None:
    matrix = SimulatedMatrix(9, 10)
    with pytest.raises(ValueError, match="91 cells need more than 9 rows x 10 columns"):
        gardenboard.SwitchMatrix(matrix.rows, matrix.columns, 91)


def test_sensor_of_the_wrong_size_is_named() -> None:
    matrix = SimulatedMatrix(8, 8)
    controller = gardenboard.Controller(
        gardenboard.SwitchMatrix(matrix.rows, matrix.columns), Wire().write, layout="mars"
    )
    with pytest.raises(ValueError, match="reads 64 cells, the mars layout has 91"):
        controller.start(0)


# --- debounce, field updates, heartbeats ----------------------------------------------------


def test_a_reading_held_for_the_debounce_time_is_one_field_update() -> None:
    matrix, wire, controller = mars_board(debounce_ms=20)
    controller.start(0)
    wire.messages()
    matrix.set_cell(0, True)  # 0,-5
    for now in range(1, 60):
        controller.poll(now)
    assert wire.messages() == [protocol.FieldUpdate(2, "0,-5", "occupied")]


def test_a_glitch_shorter_than_the_debounce_time_sends_nothing() -> None:
    matrix, wire, controller = mars_board(debounce_ms=20)
    controller.start(0)
    wire.messages()
    matrix.set_cell(0, True)
    for now in range(1, 15):
        controller.poll(now)
    matrix.set_cell(0, False)
    for now in range(15, 100):
        controller.poll(now)
    assert wire.messages() == []


def test_debounce_counts_across_the_pico_tick_counter_wrap() -> None:
    period = 1 << 30  # MicroPython's ticks_ms() wraps here on the RP2040

    def ticks_diff(later: int, earlier: int) -> int:
        return ((later - earlier + period // 2) % period) - period // 2

    matrix, wire, controller = mars_board(debounce_ms=20, ticks_diff=ticks_diff)
    start = period - 10
    controller.start(start)
    wire.messages()
    matrix.set_cell(90, True)  # 0,5: the last cell
    for step in range(1, 40):
        controller.poll((start + step) % period)
    assert wire.messages() == [protocol.FieldUpdate(2, "0,5", "occupied")]


def test_heartbeat_every_second_with_the_uptime() -> None:
    _, wire, controller = mars_board()
    controller.start(5000)
    wire.messages()
    for now in range(5000, 8001, 2):
        controller.poll(now)
    beats = wire.messages()
    assert beats == [protocol.Heartbeat(2, 1000), protocol.Heartbeat(3, 2000),
                     protocol.Heartbeat(4, 3000)]


def test_sequence_numbers_have_no_gap_whatever_is_sent() -> None:
    matrix, wire, controller = mars_board()
    controller.start(0)
    check = protocol.SequenceCheck()
    for now in range(1, 3000):
        matrix.set_cell(now // 100 % 91, bool(now // 100 % 2))
        controller.poll(now)
        if now % 700 == 0:
            controller.receive(protocol.encode(protocol.RequestDump()))
    messages = wire.messages()
    assert len(messages) > 20
    gaps = [check.observe(m.seq) for m in messages]  # type: ignore[union-attr]
    assert gaps == [0] * len(messages)


# --- commands from the Pi -------------------------------------------------------------------


def test_dump_and_hello_requests_are_answered_even_split_across_reads() -> None:
    matrix, wire, controller = mars_board()
    controller.start(0)
    wire.messages()
    matrix.set_cell(3, True)
    for now in range(1, 30):
        controller.poll(now)
    wire.messages()
    for chunk in (b"\nDUM", b"P?*33\r\nHELLO", b"?*7D\n"):
        controller.receive(chunk)
    dump, hello = wire.messages()
    assert isinstance(dump, protocol.Dump) and dump.board("mars")["3,-5"] == "occupied"
    assert isinstance(hello, protocol.Hello) and hello.board_id == "test-1"


def test_led_commands_reach_the_leds() -> None:
    lit: list[tuple[str | None, str | None]] = []
    _, wire, controller = mars_board(on_led=lambda cell, colour: lit.append((cell, colour)))
    controller.start(0)
    wire.messages()
    for command in (protocol.SetLed("-3,2", "ff8800"), protocol.SetLed("0,0", None),
                    protocol.LedsOff()):
        controller.receive(protocol.encode(command))
    assert lit == [("-3,2", "ff8800"), ("0,0", None), (None, None)]
    assert wire.messages() == []


@pytest.mark.parametrize(
    ("line", "code"),
    [(b"DUMP?*34\n", "badline"), (b"DUMP?\n", "badline"), (protocol.frame("RESET"), "unknown"),
     (protocol.frame("LED k9 ffffff"), "unknown"), (b"x" * 1100 + b"\n", "badline")],
)
def test_a_command_the_board_cannot_read_is_answered_with_err(line: bytes, code: str) -> None:
    _, wire, controller = mars_board()
    controller.start(0)
    wire.messages()
    controller.receive(line)
    (error,) = wire.messages()
    assert isinstance(error, protocol.BoardErrorMessage) and error.code == code
