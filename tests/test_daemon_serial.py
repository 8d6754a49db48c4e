"""The whole daemon on a real pseudo-terminal: the simulated board controller on one side,
``service.build`` (pyserial link, gpiozero mock pins, a luma dummy device) on the other.

Garbage on the serial line (random bytes, a 1 MB line without a newline,
half lines, wrong checksums) never crashes the daemon and never changes the game; it is
counted and logged once per burst.  And a whole game through the real stacks.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import DaemonThread

from companion.board import protocol
from companion.display import make_device
from companion.sim.board import VirtualBoard
from companion.sim.demo import demo_config
from companion.sim.table import SimulatedTable, seat

SEED = 5


def seated(tmp_path: Path) -> tuple[DaemonThread, SimulatedTable]:
    """The daemon around a simulated board with its virtual players seated (not started)."""
    stack = ExitStack()
    config = demo_config("enceladus", 2, SEED, "hexagonal", tmp_path / "journal")
    device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
    table = seat(config, stack, device=device, speed=6.0)
    return DaemonThread(table.service, stack), table


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[DaemonThread, SimulatedTable]]:
    running, table = seated(tmp_path)
    with running:
        yield running, table


def test_garbage_on_the_line_never_changes_the_game(
    daemon: tuple[DaemonThread, SimulatedTable], caplog: pytest.LogCaptureFixture
) -> None:
    running, table = daemon
    rng = random.Random(1)
    referee = running.service.referee
    state = referee.state
    good = protocol.encode(protocol.FieldUpdate(seq=0, cell="a1", piece="red"))
    burst = [
        bytes(rng.randrange(256) for _ in range(4000)),  # random bytes
        b"F 1 a1 r" + b"x" * (1 << 20),  # a 1 MB line, no newline
        b"\n",
        good[: len(good) // 2],  # half a line ...
        b"\n",  # ... cut off
        b"F 7 a1 r*00\n",  # a wrong checksum
        b"HB 3 100*FF\n" * 50,
        b"\x00\xff\r\n" * 100,
    ]
    with caplog.at_level(logging.WARNING, logger="companion.board"):
        for chunk in burst:
            table.board.write_raw(chunk)
        # the line is healthy again: a dump arrives and is taken, after all the garbage
        shown = len(running.screens)
        table.board.send_dump()
        assert running.wait(lambda: len(running.screens) > shown)
    assert running.service.link.bad_lines >= 150
    assert running.thread.is_alive()
    assert referee.state == state
    assert referee.history == []
    assert referee.observed == dict(table.board.board)
    refused = [r for r in caplog.records if r.name == "companion.board"]
    assert 1 <= len(refused) <= 3, [r.getMessage() for r in refused]  # once per burst, not per line


def test_garbage_on_the_line_at_the_companions_turn_keeps_its_announced_step(
    tmp_path: Path
) -> None:
    stack = ExitStack()
    config = demo_config("enceladus", 2, SEED, "hexagonal", tmp_path / "journal")
    config = replace(config, players=replace(config.players, seats=("steady", "person")))
    device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
    table = seat(config, stack, device=device, speed=6.0)
    running = DaemonThread(table.service, stack)
    with running:
        referee = running.service.referee
        state = referee.state
        seats = referee.seats
        assert running.wait(lambda: seats.announced(state) is not None)
        step = seats.announced(state)
        shown = len(running.screens)
        table.board.write_raw(bytes(random.Random(2).randrange(256) for _ in range(4000)))
        table.board.write_raw(b"F 1 a1 r*00\n\x00\xff\r\n")
        table.board.send_dump()
        assert running.wait(lambda: len(running.screens) > shown)
        assert running.thread.is_alive() and referee.state == state
        assert seats.announced(state) == step and referee.history == []
        assert "companion" in running.screens[-1].message


def test_a_whole_game_through_the_pty_serial_and_gpio_stacks(tmp_path: Path) -> None:
    running, table = seated(tmp_path)
    with running:
        players = table.players
        players.start()
        assert running.wait(lambda: running.service.outcome is not None, timeout=120), \
            players.error
        players.stop()
        assert players.error is None
        assert len(running.service.referee.history) == players.steps


def test_a_closed_virtual_board_hangs_up_its_pseudo_terminal(tmp_path: Path) -> None:
    import os

    board = VirtualBoard("enceladus", ("a1",), {"a1": ""})
    board.start()
    daemon_side = os.open(board.port, os.O_RDWR | os.O_NOCTTY)
    os.read(daemon_side, 4096)  # the hello and the dump
    board.close()
    try:  # the board is gone, as when a USB cable is pulled: end of file or EIO
        assert os.read(daemon_side, 4096) == b""
    except OSError:
        pass
    finally:
        os.close(daemon_side)


def test_a_board_swept_back_at_once_sends_its_field_updates_in_one_write() -> None:
    import os
    import select

    from companion.rules import load

    rules = load("enceladus").RULES
    setup = rules.new_game(2, SEED, {})
    pieces = rules.board(setup)
    board = VirtualBoard("enceladus", rules.layout(setup), pieces)
    board.start()
    daemon_side = os.open(board.port, os.O_RDWR | os.O_NOCTTY)
    try:
        parser = protocol.LineParser()
        while not any(isinstance(m, protocol.Dump)
                      for m in parser.feed(os.read(daemon_side, 65536))):
            pass  # the hello, then the dump
        occupied = [cell for cell, piece in pieces.items() if piece][:3]
        writes, write = [], board.write_raw
        board.write_raw = lambda data: (writes.append(data), write(data))  # type: ignore[method-assign]
        board.put_all({cell: "" for cell in occupied})
        assert select.select([daemon_side], [], [], 10)[0]
        read = parser.feed(os.read(daemon_side, 65536))
        updates = [m for m in read if isinstance(m, protocol.FieldUpdate)]  # not a heartbeat
        assert len([w for w in writes if any(isinstance(m, protocol.FieldUpdate)
                                             for m in protocol.LineParser().feed(w))]) == 1
        assert [(u.cell, u.piece) for u in updates] == [(cell, "") for cell in occupied]
        assert [u.seq for u in updates] == list(range(updates[0].seq, updates[0].seq + 3))
    finally:
        board.close()
        os.close(daemon_side)
