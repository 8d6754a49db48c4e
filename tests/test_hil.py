"""Hardware in the loop: one suite, simulated by default, real when hardware is named.

By default the board is the simulator (a VirtualBoard on a pty) and the pins are gpiozero's
MockFactory wired as a switch matrix.  Set ``COMPANION_TEST_PORT=/dev/ttyACM0`` to run the
board tests against a real board controller (leave its cells empty), and
``COMPANION_TEST_ROWS=GPIO5,GPIO6,...`` with ``COMPANION_TEST_COLUMNS=GPIO13,GPIO19,...`` (and
``COMPANION_TEST_LAYOUT``, default ``uranus-hexagonal``) to scan a real switch matrix with the
board cleared; what needs hardware that is not named is skipped, as
gpiozero's test_real_pins.py and pyserial's own suites do.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Iterator

import pytest

from companion import events
from companion.board import protocol
from companion.board.gpio_matrix import GpioMatrix, MatrixCircuit
from companion.board.link import BoardLink
from companion.sim.serve import ServedBoard
from companion.tools.monitor import run_monitor

PORT = os.environ.get("COMPANION_TEST_PORT")
ROWS = [p for p in os.environ.get("COMPANION_TEST_ROWS", "").split(",") if p]
COLUMNS = [p for p in os.environ.get("COMPANION_TEST_COLUMNS", "").split(",") if p]
WAIT = 10.0


@pytest.fixture(params=["simulated", pytest.param("real", marks=pytest.mark.hardware)])
def port(request: pytest.FixtureRequest) -> Iterator[str]:
    """A board's port: the simulator's pty, or ``COMPANION_TEST_PORT``."""
    if request.param == "real":
        if not PORT:
            pytest.skip("set COMPANION_TEST_PORT to test a real board")
        yield PORT
        return
    with ServedBoard("pty", "mars", {}) as board:
        yield board.port


def _first(inbox: queue.Queue[events.Event], kind: type) -> object:
    while True:
        event = inbox.get(timeout=WAIT)
        if isinstance(event, events.BoardMessage) and isinstance(event.message, kind):
            return event.message


def test_board_says_hello_and_dumps_its_layout(port: str) -> None:
    inbox: queue.Queue[events.Event] = queue.Queue()
    with BoardLink(port, inbox):
        hello = _first(inbox, protocol.Hello)
        dump = _first(inbox, protocol.Dump)
    assert isinstance(hello, protocol.Hello) and isinstance(dump, protocol.Dump)
    assert len(dump.pieces) == len(protocol.LAYOUTS[hello.layout])


def test_board_sends_a_heartbeat_every_second(port: str) -> None:
    inbox: queue.Queue[events.Event] = queue.Queue()
    with BoardLink(port, inbox):
        first = _first(inbox, protocol.Heartbeat)
        second = _first(inbox, protocol.Heartbeat)
    assert isinstance(first, protocol.Heartbeat) and isinstance(second, protocol.Heartbeat)
    assert 500 <= (second.uptime_ms - first.uptime_ms) % protocol.UPTIME_MODULO <= 1500


def test_board_at_rest_has_no_stuck_or_flaky_cell_and_no_bad_line(port: str) -> None:
    lines: list[str] = []
    assert run_monitor(port, seconds=2.0, stuck_s=60.0, out=lines.append) == []
    assert lines[-1].startswith("0 refused lines")


@pytest.fixture(params=["mock", pytest.param("real", marks=pytest.mark.hardware)])
def pins(request: pytest.FixtureRequest) -> Iterator[tuple[object, list[str], list[str]]]:
    """A pin factory and the matrix wiring: mock pins wired as a matrix circuit with every
    switch open, or the real pins named (the board cleared)."""
    if request.param == "real":
        if not (ROWS and COLUMNS):
            pytest.skip("set COMPANION_TEST_ROWS and COMPANION_TEST_COLUMNS to scan real pins")
        from companion.board.pins import make_pin_factory

        factory = make_pin_factory()
        yield factory, ROWS, COLUMNS
        factory.close()
        return
    factory = request.getfixturevalue("pin_factory")
    rows = [f"GPIO{n}" for n in (4, 5, 6, 12, 13, 16, 20, 21)]
    columns = [f"GPIO{n}" for n in (2, 3, 7, 8, 9, 10, 11, 14)]
    MatrixCircuit(factory, rows, columns)
    yield factory, rows, columns


def test_matrix_of_the_cleared_board_reads_every_cell_empty(
    pins: tuple[object, list[str], list[str]],
) -> None:
    factory, rows, columns = pins
    layout = os.environ.get("COMPANION_TEST_LAYOUT", "uranus-hexagonal")
    inbox: queue.Queue[events.Event] = queue.Queue()
    matrix = GpioMatrix(inbox, layout=layout, rows=rows, columns=columns, pin_factory=factory)
    try:
        assert matrix.read() == [""] * len(protocol.LAYOUTS[layout])
    finally:
        matrix.close()
