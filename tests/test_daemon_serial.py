"""The whole daemon on a real pseudo-terminal: the simulated board controller on one side,
``service.build`` (pyserial link, gpiozero mock pins, a luma dummy device) on the other.

Garbage on the serial line (random bytes, a 1 MB line without a newline,
half lines, wrong checksums) never crashes the daemon and never changes the game; it is
counted and logged once per burst.  And a whole game through the real stacks.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from companion.board import protocol
from companion.display import make_device
from companion.service import Service
from companion.sim.board import VirtualBoard
from companion.sim.demo import demo_config
from companion.sim.table import seat

SEED = 5


class Daemon:
    """A daemon thread around a simulated board and its players (not started), stopped on exit."""

    def __init__(self, tmp_path: Path) -> None:
        self.stack = ExitStack()
        config = demo_config("enceladus", 2, SEED, "hexagonal", tmp_path / "journal")
        device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
        self.seated = seat(config, self.stack, device=device, speed=6.0)
        self.service: Service = self.seated.service
        self.board = self.seated.board
        self.players = self.seated.players
        self.synced = threading.Event()
        self.service.screen_listeners.append(self._screen)
        self.thread = threading.Thread(target=self.service.run, daemon=True)

    def _screen(self, screen: object) -> None:
        if self.service.referee.have_board and not self.service.referee.syncing:
            self.synced.set()

    def __enter__(self) -> Daemon:
        self.thread.start()
        assert self.synced.wait(10), "the daemon never saw the board"
        return self

    def __exit__(self, *exc: object) -> None:
        self.service.stop("test over")
        self.thread.join(10)
        self.stack.close()
        assert not self.thread.is_alive()


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with Daemon(tmp_path) as running:
        yield running


def wait_until(predicate: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_garbage_on_the_line_never_changes_the_game(
    daemon: Daemon, caplog: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(1)
    state = daemon.service.referee.state
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
            daemon.board.write_raw(chunk)
        # the line is healthy again: a dump arrives and is taken
        daemon.board.send_dump()
        assert wait_until(lambda: daemon.service.link.bad_lines >= 150)
        time.sleep(0.5)
    assert daemon.thread.is_alive()
    assert daemon.service.referee.state == state
    assert daemon.service.referee.history == []
    assert daemon.service.referee.observed == {c: p for c, p in daemon.board.board.items()}
    refused = [r for r in caplog.records if r.name == "companion.board"]
    assert 1 <= len(refused) <= 3, [r.getMessage() for r in refused]  # once per burst, not per line


def test_a_whole_game_through_the_pty_serial_and_gpio_stacks(tmp_path: Path) -> None:
    with Daemon(tmp_path) as running:
        table = running.players
        table.start()
        assert wait_until(lambda: running.service.outcome is not None or table.error, timeout=120)
        table.stop()
        assert table.error is None
        assert running.service.outcome is not None
        assert len(running.service.referee.history) == table.steps


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
