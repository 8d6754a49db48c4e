"""A garden laid out by hand, adopted by the real daemon: the journal's header holds the
adopted setup, so ``kill -9`` and a restart resume the game from it, and ``companion replay``
replays it.

The daemon runs in a child process (the kill test's own, ``tests/test_faults.py`` run as a
script: its commits and screens as JSON lines, button presses on standard input); the board,
a :class:`~companion.sim.board.VirtualBoard` on a pseudo-terminal, and the players stay here.
"""

from __future__ import annotations

import json
import queue
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from companion import journal as journal_mod
from companion.cli import main
from companion.rules import load
from companion.sim.board import VirtualBoard
from companion.sim.handsetup import bare_board, draw_setup
from companion.sim.perform import Noise, Put, perform
from companion.sim.players import choose_step

ENCELADUS = load("enceladus").RULES
CHILD = Path(__file__).with_name("test_faults.py")
WAIT_S = 30.0


class Child:
    """The daemon in a child process; its JSON lines arrive on :attr:`lines`."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen([sys.executable, str(CHILD), str(config)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def until(self, wanted: Any) -> dict[str, Any]:
        """The first line for which ``wanted(line)`` holds (fails after :data:`WAIT_S`)."""
        deadline = time.monotonic() + WAIT_S
        while (left := deadline - time.monotonic()) > 0:
            line = self.lines.get(timeout=left)
            assert line is not None, "the daemon ended"
            if wanted(line):
                return line
        raise AssertionError("the daemon never showed it")

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


def _perform(board: VirtualBoard, state: Any, step: Any, rng: random.Random) -> Any:
    for op in perform(board.board, ENCELADUS.changes(state, step), rng, Noise.none()):
        time.sleep(op.wait / 8)
        if isinstance(op, Put):
            board.put(op.cell, op.piece)
    return ENCELADUS.apply(state, step)


def test_a_garden_laid_out_by_hand_survives_kill_9_and_replays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seeded = ENCELADUS.new_game(2, 21, {})
    setup = draw_setup(ENCELADUS, seeded, random.Random(77))
    board = VirtualBoard("enceladus", ENCELADUS.layout(seeded), bare_board(ENCELADUS, seeded))
    board.start()
    journals = tmp_path / "games"
    config = tmp_path / "companion.toml"
    config.write_text(
        f'[game]\nname = "enceladus"\nseed = 21\nsetup = "board"\n'
        f'[board]\nport = "{board.port}"\nsettle_ms = 150\nready_timeout_s = 5\n'
        f'[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n'
        f'[journal]\ndirectory = "{journals}"\n')
    child = Child(config)
    try:
        assert child.until(lambda line: "resumed" in line)["resumed"] == 0
        said = child.until(lambda line: line.get("screen", "").startswith("Setup:"))
        assert "Every square of the garden holds a flower or a peak" in said["screen"]
        for cell in ENCELADUS.layout(seeded):  # the players fill the garden from the bag
            if board.board[cell] != setup[cell]:
                board.put(cell, setup[cell])
        child.until(lambda line: line.get("screen") == "P1: your turn")
        state, rng = ENCELADUS.adopt_setup(seeded, setup), random.Random(5)
        for number in (1, 2, 3):
            step = choose_step(ENCELADUS, state, rng)
            text = ENCELADUS.format_step(state, step)
            state = _perform(board, state, step, rng)
            assert child.until(lambda line: "commit" in line) == {"commit": number, "step": text}
        child.kill()  # the power goes

        child = Child(config)
        assert child.until(lambda line: "resumed" in line)["resumed"] == 3
        child.until(lambda line: line.get("screen", "").endswith("your turn"))
        step = choose_step(ENCELADUS, state, rng)
        text = ENCELADUS.format_step(state, step)
        state = _perform(board, state, step, rng)
        assert child.until(lambda line: "commit" in line) == {"commit": 4, "step": text}
    finally:
        child.kill()
        board.close()

    games = sorted(journals.glob("*.jsonl"))
    assert len(games) == 1, "the journal begun with the seed's setup is gone"
    record = journal_mod.read(games[0])
    assert ENCELADUS.parse_position(record.header["setup"]) == ENCELADUS.adopt_setup(seeded,
                                                                                   setup)
    assert [after for _, _, after in record.replay(ENCELADUS)][-1] == state
    assert main(["replay", "--no-gif", str(games[0])]) == 0
    assert text in capsys.readouterr().out
