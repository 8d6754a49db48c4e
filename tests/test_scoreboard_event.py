"""An event end to end: a real Mosquitto, three companions (each a daemon built as ``companion
run`` builds it, with its simulated board and players: ``bench/table.py``) playing whole games
at once, and ``companion scoreboard``; the broker is killed and started again mid-game and a
companion is killed with SIGKILL and started again.  The scoreboard's standings are then those
the journals give.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import Broker
from test_scoreboard_mqtt import Lines

from companion import journal
from companion.scoreboard.model import FinishedView, rank
from companion.scoreboard.terminal import standings_lines

TABLE = Path(__file__).resolve().parent.parent / "bench" / "table.py"

GAME_S = 80.0
"""The longest a table may take over its game here (they take about 30 s at once)."""

TABLES = {"t1": ("enceladus", "Ann,Bob", 3), "t2": ("enceladus", "Cy,Ann", 4),
          "t3": ("uranus", "Bob,Cy", 5)}


def start(broker: Broker, table: str, folder: Path) -> tuple[subprocess.Popen[str], Lines]:
    game, names, seed = TABLES[table]
    process = subprocess.Popen(
        [sys.executable, str(TABLE), "--broker", broker.url, "--table", table, "--journal",
         str(folder / table), "--game", game, "--seed", str(seed), "--names", names,
         "--speed", "8"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return process, Lines(process.stdout)


def from_journals(folder: Path) -> tuple[list[FinishedView], dict[str, int]]:
    """Every finished game of the tables' journals, as the scoreboard should show it, and
    each table's steps."""
    finished, steps = [], {}
    for table in sorted(TABLES):
        for path in sorted((folder / table).glob("*.jsonl")):
            record = journal.read(path)
            over = record.over
            assert over is not None, f"{path} did not finish"
            names = record.header["names"]
            finished.append(FinishedView(table, path.stem, record.header["game"], tuple(
                (seat, names[seat - 1], result, points) for seat, result, points in
                over["ranking"]), tuple(names[w - 1] for w in over["winners"])))
            steps[table] = len(record.steps)
    return finished, steps


@pytest.mark.slow
def test_an_event_s_standings_on_the_scoreboard_are_the_journals_through_a_broker_restart_and_a_killed_companion(  # noqa: E501
        broker: Broker, tmp_path: Path) -> None:
    scoreboard = subprocess.Popen(
        [sys.executable, "-m", "companion.cli", "scoreboard", "--broker", broker.url,
         "--listen", "", "--client-id", "event-scoreboard"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    board = Lines(scoreboard.stdout)
    tables = {}
    try:
        board.until("Standings after 0 finished games")
        tables = {name: start(broker, name, tmp_path) for name in TABLES}
        tables["t1"][1].until("line 10 ", GAME_S)
        broker.kill()  # mid-game: the companions keep their steps in their journals
        broker.start()
        t2, lines = tables["t2"]
        lines.until("line 20 ", GAME_S)
        t2.send_signal(signal.SIGKILL)  # between two steps, or between a commit and its publish
        t2.wait(GAME_S)
        tables["t2"] = start(broker, "t2", tmp_path)  # resumes the game and sends what is left
        deadline = time.monotonic() + GAME_S
        for name, (process, lines) in tables.items():
            lines.until("over", max(1.0, deadline - time.monotonic()))
            assert process.wait(GAME_S) == 0, name
        finished, steps = from_journals(tmp_path)
        assert len(finished) == 3
        expected = standings_lines(rank(finished), 3)
        board.until(expected[0], GAME_S)
        shown = [board.until("") for _ in expected[1:]]
        assert shown == expected[1:]
        for table, count in steps.items():  # each table's last line as it ended
            assert any(line.startswith(f"{table}  ") and f"  {count} steps  " in line
                       and "-- over" in line for line in board.seen), table
    finally:
        for process, _ in tables.values():
            if process.poll() is None:
                process.kill()
                process.wait(GAME_S)
        scoreboard.send_signal(signal.SIGTERM)
        scoreboard.wait(GAME_S)
    errors = scoreboard.stderr.read() if scoreboard.stderr else ""
    assert "Traceback" not in errors
