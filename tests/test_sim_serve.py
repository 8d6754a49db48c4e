"""The standalone simulated board with players (``companion sim --serve pty --players N``) and
typed steps (``--interactive``), against the real daemon stack: ``service.build`` reading the
simulator's pseudo-terminal through pyserial, gpiozero mock pins, a luma dummy device.

The simulator runs as ``companion sim`` in a child process where the test is about the command
line (its output, its input, its exit), and in this process where the test must play the
person at the companion's buttons.  Waits are bounded and end on the daemon's events (its
commits and screens), never on the machine's speed.
"""

from __future__ import annotations

import logging
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import WAIT_S, DaemonThread, mock_pins

from companion.daemon.service import build
from companion.display import make_device
from companion.errors import UsageError
from companion.referee.recognition import sensed
from companion.rules.base import EMPTY
from companion.rules.mars import Move, Roll, dice_to_roll
from companion.sim.demo import demo_config
from companion.sim.harness import Rehearsal
from companion.sim.scenario import Scenario
from companion.sim.serve import Faults, ServedBoard, run_sim
from companion.sim.standalone import SimGame, VirtualPlayers

SEED = 1


class Daemon(DaemonThread):
    """``companion run`` in a thread, built from the demo's configuration with ``port`` as
    its board, on the test's mock pins; the test presses its buttons."""

    def __init__(self, tmp_path: Path, port: str, *, game: str = "enceladus",
                 sensing: str = "identity", setup: str = "seed") -> None:
        config = demo_config(game, 2, SEED, "hexagonal", tmp_path / "journal", sensing)
        self.config = replace(config, board=replace(config.board, port=port),
                              game=replace(config.game, setup=setup))
        self.presence = sensing == "presence"
        stack = ExitStack()
        self.factory = mock_pins()
        stack.callback(self.factory.close)
        device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
        super().__init__(build(self.config, stack, pin_factory=self.factory, device=device),
                         stack)

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
        self.press_pin(pin, name, then=lambda: len(self.screens) > shown)

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


def test_virtual_players_lay_out_a_garden_of_their_own_that_the_daemon_adopts(
        tmp_path: Path, stack: ExitStack) -> None:
    """``--hand-setup``: the board starts with its garden in the bag; the players draw a
    setup of their own (not the daemon's seed) and lay it out piece by piece; the daemon,
    with ``[game] setup = "board"``, takes it and referees the steps that follow."""
    board = sim(stack, "--players", "2", "--speed", "6", "--pace", "1.2", "--hand-setup")
    with Daemon(tmp_path, board.port, setup="board") as daemon:
        assert any(s.message.startswith("Setup: ") for s in daemon.screens)
        assert daemon.wait(lambda: len(daemon.commits) >= 2), board.log
    seeded = Scenario("enceladus", 2, SEED).setup()
    first = daemon.service.referee.history[0][0]
    assert first.garden != seeded.garden  # the players' garden, not the seed's
    played = [m[1] for line in board.log if (m := re.search(r"P\d plays (\S+)$", line))]
    assert daemon.commits[:2] == played[:2]
    assert any("lay out the garden by hand" in line for line in board.log)


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
    with pytest.raises(UsageError, match="^--hand-setup: the virtual players lay the garden "
                                         "out by hand, so give --players too$"):
        run_sim(replay_file=None, players=None, scenario_file=None, empty=False,
                hand_setup=True, **common)
    with pytest.raises(UsageError, match="^--hand-setup needs --sensing identity"):
        run_sim(replay_file=None, players=2, scenario_file=None, empty=False,
                hand_setup=True, **{**common, "sensing": "presence"})
    with pytest.raises(UsageError, match="do not go with --scenario"):
        run_sim(replay_file=None, players=None, scenario_file="x", empty=False,
                interactive=True, **common)
    # a trace replays what a board once sent: a setup or planted sensors would be ignored
    with pytest.raises(UsageError, match="^--replay plays a recorded trace as it was, so it "
                                         "does not go with --scenario$"):
        run_sim(replay_file="t", players=None, scenario_file="x", empty=False, **common)
    with pytest.raises(UsageError, match="does not go with --empty$"):
        run_sim(replay_file="t", players=None, scenario_file=None, empty=True, **common)
    with pytest.raises(UsageError, match="does not go with --stuck or --flaky$"):
        run_sim(replay_file="t", players=None, scenario_file=None, empty=False,
                **{**common, "faults": Faults(stuck=("a1",))})


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
        move = RULES.format_step(state, next(iter(RULES.legal_steps(state))))
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
            place = RULES.format_step(state, next(iter(RULES.legal_steps(state))))
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


def test_forbidden_steps_are_carried_out_and_the_daemon_logs_what_it_refuses(
        tmp_path: Path, stack: ExitStack, caplog: pytest.LogCaptureFixture) -> None:
    """Gardens of Enceladus steps the rules forbid, carried out as their notation says: the
    daemon shows their cells as wrong and logs that once per board refused; every restore
    answers in one line; a step whose pieces the notation does not place is one sentence."""
    board = sim(stack, "--interactive", "--speed", "4")
    board.line()
    with caplog.at_level(logging.INFO, logger="companion"), \
            Daemon(tmp_path, board.port) as daemon:
        observed = daemon.service.referee.observed
        for place in ("@L4", "@L7"):
            board.says(place, "should commit")
        assert daemon.wait(lambda: daemon.commits == ["@L4", "@L7"])
        for step, physical, put_back in (
                # P1's Martian from L4 onto e5 (taking its flower), then the flower of e6
                ("e5/e6", {"L4": EMPTY, "e5": "M1", "e6": EMPTY}, "L4, e5, e6"),
                # three blue flowers on the tray, P1's disc on the pick slot, f5 picked
                ("pick:blue:f5", {"T1": "blue", "T2": "blue", "T3": "blue", "A4": "D1",
                                  "f5": EMPTY}, "A4, T1, T2, T3, f5")):
            before = len(caplog.records)
            said = board.says(step, "as wrong")
            assert said[0].startswith(f"{step} is not legal here (") and \
                said[0].endswith("carried out all the same, so the companion should refuse it.")
            assert daemon.wait(lambda: bool(daemon.wrong()) and all(  # noqa: B023
                observed.get(c) == p for c, p in physical.items()))  # noqa: B023
            wrong = ", ".join(sorted(daemon.wrong()))
            assert f"the companion shows {wrong} as wrong" in said[-1]
            refusals = [r.getMessage() for r in caplog.records[before:]
                        if r.name == "companion" and "no legal step" in r.getMessage()]
            assert refusals == [f"no legal step explains the board: {wrong} shown as wrong"]
            assert board.says("restore", "Put back") == [f"Put back as the game stands: "
                                                         f"{put_back}."]
            assert board.says("restore", "already") == [
                "The board already shows the game as it stands."]
            assert daemon.wait(lambda: not daemon.wrong())
        said = board.says("jump:blue", "lift and put")
        assert said == ["jump:blue is not legal here (a special action costs 3 flowers of one "
                        "colour; you have 0 blue), and the simulator cannot carry it out: say "
                        "where the jump lands, e.g. jump:blue:g6; make it cell by cell with "
                        "lift and put."]
        board.type("quit")
        assert board.process.wait(10) == 0
    assert daemon.commits == ["@L4", "@L7"]
    assert not [line for line in board.log if "Traceback" in line]


def test_a_forbidden_uranus_move_is_carried_out_and_one_off_the_board_is_a_sentence(
        tmp_path: Path, stack: ExitStack) -> None:
    from companion.rules.uranus import RULES

    board = sim(stack, "--interactive", "--game", "uranus", "--speed", "4")
    board.line()
    state = RULES.new_game(2, SEED, {})
    with Daemon(tmp_path, board.port, game="uranus") as daemon:
        # a gardener moved before the gardeners are placed: the notation names no start
        said = board.says("0,3=red", "lift and put")
        assert said == ["0,3=red is not legal here (every gardener must be placed on the "
                        "garden first), and the simulator cannot carry it out: P1 has no "
                        "gardener on the board to move; make it cell by cell with lift and put."]
        for placed in (1, 2):
            place = RULES.format_step(state, next(iter(RULES.legal_steps(state))))
            board.says(place, "should commit")
            state = RULES.apply(state, RULES.parse_step(state, place))
            assert daemon.wait(lambda: len(daemon.commits) == placed)  # noqa: B023
        pieces = RULES.board(state)
        reachable = {RULES.format_step(state, s).split("=")[0] for s in RULES.legal_steps(state)}
        target = next(c for c in pieces if pieces[c] == EMPTY and c not in reachable)
        start = next(c for c in pieces if pieces[c].startswith("M1"))
        said = board.says(f"{target}=red", "as wrong")
        assert "carried out all the same" in said[0], said
        observed = daemon.service.referee.observed
        assert daemon.wait(lambda: observed.get(target) == "M1+red" and
                           observed.get(start) == pieces[start].partition("+")[2])
        assert daemon.wait(lambda: target in daemon.wrong())
        said = board.says("9,9=red", "lift and put")
        assert len(said) == 1 and "cannot carry it out: 9,9 is not a cell of this board" in \
            said[0], said
        board.type("quit")
        assert board.process.wait(10) == 0
    assert len(daemon.commits) == 2
    assert not [line for line in board.log if "Traceback" in line]


@pytest.mark.parametrize(("game", "pieces", "step", "changes"), [
    ("enceladus", {"e5": "M1", "f5": "red", "f6": "blue"}, "f5/f6",
     {"e5": EMPTY, "f5": "M1", "f6": EMPTY}),
    ("enceladus", {"e5": "M1", "c3": "peak"}, "swap_martian:blue:c3",
     {"e5": "peak", "c3": "M1", "A5": "D1"}),
    ("enceladus", {"e5": "M1", "A10": "wild"}, "wildflower:blue", {"A10": EMPTY}),
    ("enceladus", {"c3": "red", "c9": EMPTY, "A8": "D2"}, "move_flower:red:c3>c9",
     {"c3": EMPTY, "c9": "red"}),
    ("mars", {"1,-1": "M1+blue", "0,1": EMPTY}, "3>0,1=red", {"1,-1": "blue", "0,1": "M1+red"}),
    ("mars", {"1,-1": "M1", "2,0": "green"}, "3>2,0", {"1,-1": EMPTY, "2,0": "M1+green"}),
    ("uranus", {"0,0": "M1", "0,3": EMPTY}, "0,3=red", {"0,0": EMPTY, "0,3": "M1+red"}),
    ("uranus", {"0,0": EMPTY}, "@0,0", {"0,0": "M1"}),
])
def test_a_forbidden_step_changes_the_cells_its_notation_names(
        game: str, pieces: dict[str, str], step: str, changes: dict[str, str]) -> None:
    from companion.sim.forbidden import forbidden_changes

    setup = Scenario(game, 2, SEED)
    rules = setup.rules()
    state = setup.setup()
    board = dict.fromkeys(rules.layout(state), EMPTY) | pieces
    assert forbidden_changes(game, board, 1, rules.parse_step(state, step)) == changes


@pytest.mark.parametrize(("game", "pieces", "step", "sentence"), [
    ("enceladus", {"e5": "M1", "d5": "M1"}, "f5",
     "P1 has more than one Martian on the board: name the one that moves, e.g. e5-f5/f6"),
    ("enceladus", {"e5": "M1", "f6": EMPTY}, "f5/f6", "f6 holds no flower to pick"),
    ("enceladus", {"e5": "peak"}, "@e5", "e5 holds a peak, and nothing can stand on it"),
    ("mars", {"1,-1": "M1", "0,1": "red"}, "3>0,1=blue",
     "0,1 is not empty, so no blue flower can be planted there"),
    ("mars", {}, "roll:0", "the dice tray reads up to 6 dice of 1 to 6"),
    ("uranus", {"0,0": "M1", "0,3": "tree"}, "0,3", "0,3 holds a tree, and nothing can stand "
     "on it"),
])
def test_a_forbidden_step_the_notation_does_not_place_is_one_sentence(
        game: str, pieces: dict[str, str], step: str, sentence: str) -> None:
    from companion.errors import InvalidStepError
    from companion.sim.forbidden import forbidden_changes

    setup = Scenario(game, 2, SEED)
    rules = setup.rules()
    state = setup.setup()
    board = dict.fromkeys(rules.layout(state), EMPTY) | pieces
    with pytest.raises(InvalidStepError) as error:
        forbidden_changes(game, board, 1, rules.parse_step(state, step))
    assert str(error.value) == sentence


@pytest.mark.parametrize("game", ["enceladus", "mars", "uranus"])
def test_forbidden_changes_agree_with_the_rules_on_legal_steps(game: str) -> None:
    """For a legal step the notation's pieces are the rules core's changes, but for what
    follows by itself (an Enceladus soliflower, picked with no step of its own)."""
    import random

    from companion.sim.forbidden import forbidden_changes
    from companion.sim.players import choose_step

    setup = Scenario(game, 2, SEED)
    rules, state, rng = setup.rules(), setup.setup(), random.Random(SEED)
    checked = 0
    for _ in range(60):
        if rules.outcome(state) is not None:
            break
        board = rules.board(state)
        kinds: dict[str, list[Any]] = {}  # a few steps of every kind (each special action)
        for step in rules.legal_steps(state):
            kinds.setdefault(f"{type(step).__name__}:{getattr(step, 'name', '')}", []).append(step)
        for step in (s for steps in kinds.values() for s in steps[:3]):
            mine = forbidden_changes(game, board, rules.to_move(state), step)
            legal = rules.changes(state, step)
            changed = {c: p for c, p in mine.items() if board[c] != p}
            assert changed.items() <= legal.items(), rules.format_step(state, step)
            if game != "enceladus":
                assert changed == legal, rules.format_step(state, step)
            checked += 1
        state = rules.apply(state, choose_step(rules, state, rng))
    assert checked > 100


@pytest.mark.parametrize(("game", "typed", "said"), [
    ("mars", "dice 9 9", "dice takes up to 6 die values from 1 to 6, e.g. dice 3 5."),
    ("mars", "dice 0", "dice takes up to 6 die values from 1 to 6, e.g. dice 3 5."),
    ("mars", "card U17", "A Gardens of Mars board has no card reader: card is for Gardens of "
                         "Uranus."),
    ("enceladus", "dice 3 5", "A Gardens of Enceladus board has no dice tray: dice is for "
                              "Gardens of Mars."),
    ("uranus", "dice 3", "A Gardens of Uranus board has no dice tray: dice is for Gardens of "
                         "Mars."),
])
def test_dice_and_cards_the_board_cannot_send_are_refused_in_a_sentence(
    stack: ExitStack, game: str, typed: str, said: str
) -> None:
    board = sim(stack, "--interactive", "--game", game)
    assert "type help" in board.line()
    assert board.says(typed, said) == [said]
    board.type("quit")
    assert board.process.wait(10) == 0
