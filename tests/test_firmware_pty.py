"""Acceptance: the reference firmware's frames, fed through a pseudo-terminal, drive a whole
simulated game in the daemon.

The firmware (``hardware/firmware/gardenboard.py``) runs here under CPython on its own
thread, as on the Pico's core: it scans a simulated identity sensor (one piece code per cell,
set by the virtual players), debounces, and writes its lines to the master side of a pty; the
daemon, built by ``companion.daemon.service.build`` as for ``companion run``, opens the slave
side with pyserial and referees.  The players (:class:`companion.sim.table.TablePlayers`) move
pieces on the sensor and press gpiozero mock buttons, exactly as in ``companion demo``.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from companion.board import protocol
from companion.config import layout_name
from companion.daemon.service import build
from companion.rules import load
from companion.rules.base import EMPTY, Cell, Piece
from companion.sim.demo import demo_config
from companion.sim.perform import Noise
from companion.sim.table import TablePlayers
from tests.test_firmware import gardenboard


class IdentitySensor:
    """What an identity board's sensors read: a piece code per cell, in dump order."""

    def __init__(self, cells: tuple[Cell, ...], board: dict[Cell, Piece]) -> None:
        self.codes = [protocol.CODES[board.get(cell, EMPTY)] for cell in cells]

    def read(self) -> list[str]:
        return list(self.codes)


class FirmwareBoard:
    """The firmware on a pty, with the hands-on side :class:`TablePlayers` expects of a board:
    ``board`` (cell -> piece), ``sensing``, ``put(cell, piece)`` and ``send(message)``."""

    sensing = "identity"

    def __init__(self, layout: str, cells: tuple[Cell, ...], board: dict[Cell, Piece]) -> None:
        self.cells = cells
        self.board = {cell: board.get(cell, EMPTY) for cell in cells}
        self.sensor = IdentitySensor(cells, self.board)
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        self._slave = slave
        self.controller = gardenboard.Controller(
            self.sensor, self._write, layout=layout, sensing="identity", board_id="fw-test"
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="firmware", daemon=True)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.master, view):]

    def _run(self) -> None:
        start = time.monotonic()
        self.controller.start(0)
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.001)
            if ready:
                self.controller.receive(os.read(self.master, 1024))
            self.controller.poll(int((time.monotonic() - start) * 1000))

    def put(self, cell: Cell, piece: Piece) -> None:
        self.board[cell] = piece
        self.sensor.codes[self.cells.index(cell)] = protocol.CODES[piece]

    def send(self, message: object) -> None:
        raise AssertionError(f"the reference firmware has no dice tray or card reader: {message}")

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for fd in (self.master, self._slave):
            os.close(fd)


def test_firmware_frames_drive_a_whole_enceladus_game_in_the_daemon(
    tmp_path: Path, pin_factory: Any
) -> None:
    config = demo_config("enceladus", 2, 5, "hexagonal", tmp_path / "journal")
    config = replace(config, board=replace(config.board, settle_ms=150))
    rules = load("enceladus").RULES
    state = rules.new_game(2, 5, config.game.rules_options())
    with ExitStack() as stack:
        board = FirmwareBoard(layout_name(config), rules.layout(state), rules.board(state))
        board.start()
        stack.callback(board.close)
        config = replace(config, board=replace(config.board, port=board.port))
        factory = pin_factory
        service = build(config, stack, pin_factory=factory)
        pins = config.buttons.pins
        buttons = {name: factory.pin(getattr(pins, name)) for name in ("ok", "undo", "select")}
        # The firmware debounces 20 ms itself: the players' 3 ms glitches never leave the board.
        table = TablePlayers(rules, state, board, buttons,  # type: ignore[arg-type]
                             seed=5, speed=10.0, noise=Noise(glitch=0.5), on_stuck=service.stop)
        commits: list[str] = []
        service.commit_listeners.append(lambda committed: commits.append(committed.step))
        service.commit_listeners.append(table.on_commit)
        service.screen_listeners.append(table.on_screen)
        service.stop_when_over = True
        table.start()
        stack.callback(table.stop)
        outcome = service.run()
    assert table.error is None
    assert outcome is not None, "the game reached its end"
    assert len(commits) == table.steps > 10
    assert service.link.bad_lines == 0
