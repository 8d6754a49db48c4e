"""The standalone simulated board with players (``companion sim --serve pty --players N``) and
typed steps (``--interactive``), against the real daemon stack: ``service.build`` reading the
simulator's pseudo-terminal through pyserial, gpiozero mock pins, a luma dummy device.

The simulator runs as ``companion sim`` in a child process where the test is about the command
line (its output, its input, its exit), and in this process where the test must play the
person at the companion's buttons.  Waits are bounded and end on the daemon's events (its
commits and screens), never on the machine's speed.
"""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion.display import make_device
from companion.errors import UsageError
from companion.referee.recognition import sensed
from companion.rules.base import EMPTY
from companion.rules.mars import Move, Roll, dice_to_roll
from companion.service import Service, build
from companion.sim.demo import demo_config
from companion.sim.harness import Rehearsal
from companion.sim.scenario import Scenario
from companion.sim.serve import Faults, ServedBoard, run_sim
from companion.sim.standalone import SimGame, VirtualPlayers

SEED = 1
WAIT_S = 30.0
"""The longest any one wait lasts: reached only when something is broken."""


class Daemon:
    """``companion run`` in a thread, built from the demo's configuration with ``port`` as
    its board; its commits and screens are recorded, and the test presses its buttons."""

    def __init__(self, tmp_path: Path, port: str, *, game: str = "enceladus",
                 sensing: str = "identity") -> None:
        from gpiozero.pins.mock import MockFactory

        config = demo_config(game, 2, SEED, "hexagonal", tmp_path / "journal", sensing)
        self.config = replace(config, board=replace(config.board, port=port))
        self.presence = sensing == "presence"
        self.stack = ExitStack()
        self.factory = MockFactory()
        self.stack.callback(self.factory.close)
        device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
        self.service: Service = build(self.config, self.stack, pin_factory=self.factory,
                                      device=device)
        self.commits: list[str] = []
        self.screens: list[Any] = []
        self.changed = threading.Condition()
        self.service.commit_listeners.append(self._commit)
        self.service.screen_listeners.append(self._screen)
        self.thread = threading.Thread(target=self.service.run, daemon=True)

    def _commit(self, committed: Any) -> None:
        with self.changed:
            self.commits.append(committed.step)
            self.changed.notify_all()

    def _screen(self, screen: Any) -> None:
        with self.changed:
            self.screens.append(screen)
            self.changed.notify_all()

    def __enter__(self) -> Daemon:
        self.thread.start()
        referee = self.service.referee
        assert self.wait(lambda: referee.have_board and not referee.syncing), "no board seen"
        return self

    def __exit__(self, *exc: object) -> None:
        self.service.stop("test over")
        self.thread.join(10)
        self.stack.close()
        assert not self.thread.is_alive()

    def wait(self, predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def wrong(self) -> set[str]:
        """The cells the matrix shows as wrong now."""
        screen = self.screens[-1] if self.screens else None
        return {c for c, role in screen.highlights.items() if role == "wrong"} if screen else set()

    def sees(self, board: dict[str, str]) -> bool:
        """Whether the daemon has taken in every reading of ``board`` (the physical pieces)."""
        referee = self.service.referee
        shown = {c: sensed(p) if self.presence else p for c, p in board.items()}
        return not referee.pending and referee.observed == shown

    def press(self, name: str) -> None:
        """Press and release a button as a person does; the press is taken once the matrix
        answers it, the release is held longer than the debounce."""
        pin = self.factory.pin(getattr(self.config.buttons.pins, name))
        shown = len(self.screens)
        pin.drive_low()
        self.wait(lambda: len(self.screens) > shown, 5.0)
        pin.drive_high()
        time.sleep(0.15)  # released longer than the 30 ms debounce, or two presses read as one

    def choose(self, label: str) -> None:
        """Answer the matrix's question with ``label``: Select until it shows, then OK."""
        assert self.wait(lambda: bool(self.screens and label in self.screens[-1].menu)), label
        for _ in range(64):
            screen = self.screens[-1]
            if screen.menu[screen.menu_index] == label:
                break
            self.press("select")
        self.press("ok")


class SimProcess:
    """``companion sim --serve pty ARGS`` in a child process: its output lines arrive on
    :meth:`line`, its log lines are kept in :attr:`log`, :meth:`type` writes a line to it."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "companion.cli", "sim", "--serve", "pty", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        first = self.line()
        assert first.startswith("simulated "), first
        self.port = first.rsplit(" ", 1)[1]

    def _read_out(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line.rstrip("\n"))

    def line(self) -> str:
        line = self.lines.get(timeout=WAIT_S)
        assert line is not None, "the simulator ended: " + "\n".join(self.log)
        return line

    def type(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def says(self, text: str, until: str) -> list[str]:
        """Type ``text``; the lines printed up to and with the first that contains ``until``."""
        self.type(text)
        out = [self.line()]
        while until not in out[-1]:
            out.append(self.line())
        return out

    def close(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(10)


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as opened:
        yield opened


def sim(stack: ExitStack, *args: str) -> SimProcess:
    process = SimProcess(*args)
    stack.callback(process.close)
    return process


# --- virtual players -----------------------------------------------------------------------


def test_virtual_players_make_steps_the_daemon_commits(tmp_path: Path, stack: ExitStack) -> None:
    board = sim(stack, "--players", "2", "--speed", "3", "--pace", "1.5")
    with Daemon(tmp_path, board.port) as daemon:
        assert daemon.wait(lambda: len(daemon.commits) >= 3), board.log
    played = [m[1] for line in board.log if (m := re.search(r"P\d plays (\S+)$", line))]
    assert daemon.commits[:3] == played[:3]
    assert not [line for line in board.log if "Traceback" in line]


def test_players_ask_a_person_for_what_a_presence_board_cannot_show(tmp_path: Path) -> None:
    """Gardens of Mars on a presence board: the colour planted is asked with Select and OK.
    The players take steps no button is needed for where they can, and ask for the rest; the
    person here presses what they ask, and the players go on once the daemon has committed."""
    setup = Scenario("mars", 2, SEED)
    pieces = setup.rules().board(setup.setup())
    asked: list[str] = []
    with ServedBoard("pty", setup.layout, pieces, sensing="presence") as served, \
            Daemon(tmp_path, served.port, game="mars", sensing="presence") as daemon:
        game = SimGame(setup, served.board, speed=4.0)

        def ask(sentence: str, rehearsal: Rehearsal) -> bool:
            asked.append(sentence)
            for name in rehearsal.presses:
                assert daemon.wait(lambda: daemon.sees(served.board.board))
                daemon.press(name)
            for label in rehearsal.answers:
                daemon.choose(label)
            return True

        def turn() -> bool:  # the person sees the matrix: the next step once this one is in
            return daemon.wait(lambda: len(daemon.commits) == len(players.performed))

        players = VirtualPlayers(game, seed=SEED, ask=ask, turn=turn)
        players.start()
        assert daemon.wait(lambda: len(daemon.commits) >= 10 or players.error is not None)
        game.stop.set()
        players.join(10)
    assert players.error is None
    assert daemon.commits[:10] == players.performed[:10]
    assert asked and all(s.startswith("at the companion ") for s in asked), asked


def test_options_that_do_not_go_with_the_players_are_refused_in_one_sentence() -> None:
    common: dict[str, Any] = dict(serve="pty", speed=1.0, game="enceladus", seed=1,
                                  board="hexagonal", sensing="identity", faults=Faults())
    with pytest.raises(UsageError, match="do not go with --empty"):
        run_sim(replay_file=None, players=2, scenario_file=None, empty=True, **common)
    with pytest.raises(UsageError, match="do not go with --scenario"):
        run_sim(replay_file=None, players=None, scenario_file="x", empty=False,
                interactive=True, **common)


@pytest.mark.parametrize("option", ["--pace", "--speed"])
def test_a_pace_or_speed_of_zero_is_a_usage_error(option: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from companion.cli import make_parser

    with pytest.raises(SystemExit) as exit_status:
        make_parser().parse_args(["sim", option, "0"])
    assert exit_status.value.code == 2
    assert "'0' is not a number above 0" in capsys.readouterr().err


# --- a person typing the steps -------------------------------------------------------------


def test_typed_steps_are_refereed_and_a_wrong_one_is_shown(tmp_path: Path,
                                                          stack: ExitStack) -> None:
    from companion.rules.enceladus import RULES

    board = sim(stack, "--interactive", "--speed", "4")
    assert "type help" in board.line()
    state = RULES.new_game(2, SEED, {})
    with Daemon(tmp_path, board.port) as daemon:
        # a step in notation
        assert board.says("@L4", "should commit")[-1] == \
            "The companion should commit @L4; P2 to move."
        assert daemon.wait(lambda: daemon.commits == ["@L4"])
        state = RULES.apply(state, RULES.parse_step(state, "@L4"))
        # a step cell by cell
        assert board.says("put L7 M2", "should commit")[-1].startswith(
            "The companion should commit @L7;")
        assert daemon.wait(lambda: daemon.commits == ["@L4", "@L7"])
        state = RULES.apply(state, RULES.parse_step(state, "@L7"))
        # a wrong step: the companion shows the cell, the simulator says which
        said = board.says("put Bj M1", "as wrong")
        assert said == ["No legal step explains the board: the companion shows Bj as wrong "
                        "(put them right, or restore)."]
        assert daemon.wait(lambda: daemon.wrong() == {"Bj"})
        board.type("restore")
        assert daemon.wait(lambda: not daemon.wrong() and daemon.sees(RULES.board(state)))
        # the game goes on from where it stood
        move = RULES.format_step(state, next(RULES.legal_steps(state)))
        assert board.says(move, "should commit")[-1].startswith(f"The companion should commit "
                                                                f"{move};")
        assert daemon.wait(lambda: daemon.commits == ["@L4", "@L7", move])
        # bad input: one sentence each, then the console goes on
        for bad, words in (("frob", "neither a command nor a step"),
                           ("lift zz9", "zz9 is not a cell of the enceladus board"),
                           ("put e5", "put takes a cell and a piece"),
                           ("put e5 blah", "'blah' is not a piece"),
                           ("f5/zz", "neither a command nor a step"),
                           (f"{move}", "is not legal here")):
            said = board.says(bad, words)
            assert len(said) == 1 and said[0].endswith("."), said
        assert board.says("help", "quit")[0].lstrip().startswith("STEP")
        shown = board.says("board", "T1")
        assert shown[0].split() == list("abcdefghij") and len(shown) == 16
        board.type("quit")
        assert board.process.wait(10) == 0
    assert daemon.commits == ["@L4", "@L7", move]
    assert not [line for line in board.log if "Traceback" in line]


def test_dice_an_illegal_move_and_a_question_on_a_presence_board(tmp_path: Path,
                                                                 stack: ExitStack) -> None:
    """Gardens of Mars on a presence board: dice from the tray, a move the rules forbid
    carried out all the same (and refused by the daemon), and a move whose colour the daemon
    asks, answered at the companion and told to the simulator."""
    from companion.rules.mars import RULES

    board = sim(stack, "--interactive", "--game", "mars", "--sensing", "presence",
                "--speed", "4")
    board.line()
    state = RULES.new_game(2, SEED, {})
    with Daemon(tmp_path, board.port, game="mars", sensing="presence") as daemon:
        for placed in (1, 2):  # both gardeners placed; the matrix confirms each
            place = RULES.format_step(state, next(RULES.legal_steps(state)))
            board.says(place, "should commit")
            state = RULES.apply(state, RULES.parse_step(state, place))
            assert daemon.wait(lambda: len(daemon.commits) == placed)  # noqa: B023
        values = (3, 5, 2, 6, 1, 4)[: dice_to_roll(state)]
        roll = RULES.format_step(state, Roll(values))
        said = board.says("dice " + " ".join(map(str, values)), "should commit")
        assert said[-1].startswith(f"The companion should commit {roll};")
        state = RULES.apply(state, RULES.parse_step(state, roll))
        assert daemon.wait(lambda: len(daemon.commits) == 3 and daemon.commits[-1] == roll)

        # a die nobody rolled: carried out, refused on the matrix
        moves = [s for s in RULES.legal_steps(state) if isinstance(s, Move) and s.plant]
        reachable = {RULES.format_step(state, s).split(">")[1].split("=")[0] for s in moves}
        unused = next(d for d in range(1, 7) if d not in state.pool)
        board_now = RULES.board(state)
        target = next(c for c in board_now if board_now[c] == EMPTY and c not in reachable)
        said = board.says(f"{unused}>{target}=red", "as wrong")
        assert "is not legal here" in said[0] and "carried out all the same" in said[0]
        assert daemon.wait(lambda: target in daemon.wrong())
        assert ", ".join(sorted(daemon.wrong())) in said[-1]
        board.type("restore")
        assert daemon.wait(lambda: not daemon.wrong() and daemon.sees(board_now))

        # a move cell by cell: the daemon asks the colour; answered there and here
        move = moves[0]
        notation = RULES.format_step(state, move)
        *hands, last = [f"put {cell} {piece}" if piece else f"lift {cell}"
                        for cell, piece in RULES.changes(state, move).items()]
        for line in hands:
            board.type(line)
        said = board.says(last, "asks which")
        assert said[-1].startswith("The companion asks which: ") and \
            f"plant {move.plant}" in said[-1], said
        daemon.choose(f"plant {move.plant}")
        assert daemon.wait(lambda: daemon.commits[-1:] == [notation])
        assert board.says(f"answer plant {move.plant}", "should commit")[-1].startswith(
            f"The companion should commit {notation};")
        assert board.says("answer plant red", "asking nothing") == [
            "The companion is asking nothing now."]
        assert board.process.stdin is not None
        board.process.stdin.close()  # the end of input ends the simulator
        assert board.process.wait(10) == 0
    assert len(daemon.commits) == 4
