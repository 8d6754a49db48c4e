"""Faults the daemon survives: a board that comes back under another device name, a
pseudo-terminal pulled away mid-frame, a stalled board, and ``kill -9`` at random points.

The daemon is the real one, made by :func:`companion.daemon.service.build` and reading a
:class:`~companion.sim.board.VirtualBoard` through pyserial.  The board's port is a
``/dev/serial/by-id``-style symlink in a temporary folder, re-pointed to each new
pseudo-terminal as udev re-points the real one when a USB board is plugged back in.

For ``kill -9`` the daemon runs in a child process (this file run as a script: ``python
tests/test_faults.py CONFIG``), which prints its resumed step count, each commit and each
screen as JSON lines and takes button presses on standard input; the board and the players
stay in the test, as the physical board and the people stay at the table when the Pi loses
power, and the players do what the matrix says.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import DaemonThread, mock_pins

from companion.board import protocol
from companion.config import (
    BoardConfig,
    Config,
    DisplayConfig,
    GameConfig,
    JournalConfig,
    load_config,
)
from companion.rules import load
from companion.sim.board import VirtualBoard
from companion.sim.perform import Noise, Put, Signal, perform, tray_flowers
from companion.sim.players import chance_ops, choose_step

ENCELADUS = load("enceladus").RULES
SEED = 11
DISCONNECT_SHOWN_WITHIN_S = 2.0
"""A board gone silent is shown within this long: its heartbeat timeout is shorter."""
HEARTBEAT_TIMEOUT_S = 1.5


def _by_id(folder: Path) -> Path:
    by_id = folder / "serial" / "by-id"
    by_id.mkdir(parents=True, exist_ok=True)
    return by_id / "usb-Gardens_Companion_Board_SIM-0001-if00"


def _point(link: Path, port: str) -> None:
    """Point the stable name at ``port`` atomically (udev replaces its symlinks the same way)."""
    fresh = link.with_name(link.name + ".new")
    fresh.unlink(missing_ok=True)
    fresh.symlink_to(port)
    os.replace(fresh, link)


def _pull(board: VirtualBoard) -> None:
    """Pull the cable: close the board's pseudo-terminal.  Its reader thread is blocked in a
    read of the master side, which keeps the master open after ``close``; a byte through the
    slave side ends that read, so the master really closes and the daemon sees the hang-up."""
    poke = os.open(board.port, os.O_WRONLY | os.O_NOCTTY)
    board.close()
    with contextlib.suppress(OSError):  # EIO: the master had closed already
        os.write(poke, b"\n")
    os.close(poke)


def _board(state: Any, **options: Any) -> VirtualBoard:
    return VirtualBoard("enceladus", ENCELADUS.layout(state), ENCELADUS.board(state), **options)


def _config(tmp_path: Path, port: Path, game: str = "enceladus") -> Config:
    return Config(
        game=GameConfig(name=game, seed=SEED),
        board=BoardConfig(port=str(port), settle_ms=150, heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S,
                          ready_timeout_s=5),
        display=DisplayConfig(luma={"display": "dummy", "width": 16, "height": 16}),
        journal=JournalConfig(directory=str(tmp_path / "games"), fsync=False),
    )


class Daemon(DaemonThread):
    """The daemon in a thread of the test process, started at once and stopped by ``stack``."""

    def __init__(self, config: Config, stack: ExitStack) -> None:
        from companion.daemon.notify import Notifier
        from companion.daemon.service import build

        factory = mock_pins()
        stack.callback(factory.close)
        super().__init__(build(config, stack, pin_factory=factory, notifier=Notifier()))
        self.pins = {name: factory.pin(getattr(config.buttons.pins, name))
                     for name in ("ok", "select")}
        self.start()
        stack.callback(self.stop)

    def answer(self, labels: tuple[str, ...]) -> None:
        """Answer the matrix's question as a player who made the step named by ``labels``
        (its choice path and its notation) does: Select to the right choice, then OK."""
        screen = self.screens[-1]
        wanted = next((o for o in labels if o in screen.menu), screen.menu[0])
        for name in ["select"] * ((screen.menu.index(wanted) - screen.menu_index)
                                  % len(screen.menu)) + ["ok"]:
            self.press_pin(self.pins[name], name)

    def shown_since(self, since: float, prefix: str) -> float | None:
        """When a screen whose message starts with ``prefix`` was first shown after ``since``
        (the daemon's clock)."""
        return next((t for t, s in zip(self.shown_at, self.screens, strict=True)
                     if t >= since and s.message.startswith(prefix)), None)

    def asking(self) -> bool:
        return bool(self.screens) and bool(self.screens[-1].menu)

    def in_sync(self) -> bool:
        return bool(self.screens) and self.screens[-1].message.endswith("your turn")


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def _first_step() -> tuple[Any, Any, Any]:
    setup = ENCELADUS.new_game(2, SEED, {})
    step = choose_step(ENCELADUS, setup, random.Random(SEED))
    return setup, step, ENCELADUS.apply(setup, step)


def test_a_board_back_under_another_name_is_found_and_the_step_made_meanwhile_committed(
    tmp_path: Path, stack: ExitStack
) -> None:
    setup, step, after = _first_step()
    link = _by_id(tmp_path)
    first = stack.enter_context(_board(setup))
    _point(link, first.port)
    daemon = Daemon(_config(tmp_path, link), stack)
    assert daemon.wait(daemon.in_sync)

    second = _board(after)  # comes back as another device; the step was made meanwhile
    stack.callback(second.close)
    assert second.port != first.port
    pulled = time.monotonic()
    _pull(first)
    assert daemon.wait(lambda: daemon.shown_since(pulled, "Board disconnected") is not None)
    assert daemon.wait(lambda: daemon.service.board == "down")  # the link saw the hang-up

    second.start()
    _point(link, second.port)
    assert daemon.wait(lambda: bool(daemon.commits))
    assert daemon.commits == [ENCELADUS.format_step(setup, step)]
    assert daemon.wait(daemon.in_sync) and daemon.service.referee.state == after


def _pull_mid_frame(rounds: int, tmp_path: Path, stack: ExitStack) -> None:
    """Pull the board away ``rounds`` times, each time in the middle of a line; every other
    time a step is made while it is out.  Every step is committed once, nothing else is."""
    state = ENCELADUS.new_game(2, SEED, {})
    rng = random.Random(SEED)
    link = _by_id(tmp_path)
    board = stack.enter_context(_board(state))
    _point(link, board.port)
    daemon = Daemon(_config(tmp_path, link), stack)
    assert daemon.wait(daemon.in_sync)
    made: list[str] = []
    for round_ in range(rounds):
        cell, piece = next((c, p) for c, p in sorted(board.board.items()) if p)
        update = protocol.encode(protocol.FieldUpdate(seq=0, cell=cell, piece=piece))
        board.write_raw(update[: rng.randrange(1, len(update) - 1)])  # half a line...
        pulled = time.monotonic()
        _pull(board)  # ...and the cable is out
        assert daemon.wait(lambda pulled=pulled: daemon.shown_since(pulled, "Board disconnected")
                           is not None)
        assert daemon.wait(lambda: daemon.service.board == "down"), round_  # seen by the link
        labels: tuple[str, ...] = ()
        if round_ % 2 and ENCELADUS.outcome(state) is None:
            step = choose_step(ENCELADUS, state, rng)
            made.append(ENCELADUS.format_step(state, step))
            labels = (*ENCELADUS.choice_path(state, step), made[-1])
            state = ENCELADUS.apply(state, step)
        board = stack.enter_context(_board(state))
        _point(link, board.port)
        asked = time.monotonic()
        assert daemon.wait(lambda board=board: _asked_for_dump(board)), round_  # found it
        # The step made while the cable was out is recognised from the new dump, or, where
        # the board cannot tell (the colour paid for an action), the players are asked.
        for _ in range(4):
            if daemon.wait(lambda: len(daemon.commits) == len(made) or daemon.asking(), 5):
                if len(daemon.commits) == len(made):
                    break
                daemon.answer(labels)
                daemon.wait(lambda: not daemon.asking(), 5)
        assert daemon.wait(lambda asked=asked: len(daemon.commits) == len(made)
                           and daemon.shown_since(asked, "P") is not None and daemon.in_sync)
    assert len(daemon.commits) == len(made)
    assert daemon.service.referee.state == state


def _asked_for_dump(board: VirtualBoard) -> bool:
    return any(isinstance(r, protocol.RequestDump) for r in board.requests)


def test_the_pty_pulled_away_mid_frame_three_times(tmp_path: Path, stack: ExitStack) -> None:
    _pull_mid_frame(3, tmp_path, stack)


@pytest.mark.slow
def test_the_pty_pulled_away_mid_frame_fifty_times(tmp_path: Path, stack: ExitStack) -> None:
    _pull_mid_frame(50, tmp_path, stack)


class StallingBoard(VirtualBoard):
    """A board controller that hangs: while ``stalled`` nothing it sends reaches the wire (its
    sequence numbers still count on, as a firmware's would)."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.stalled = threading.Event()

    def write_raw(self, data: bytes) -> None:
        if not self.stalled.is_set():
            super().write_raw(data)


def test_a_stalled_board_is_shown_within_two_seconds_and_resynced_when_it_wakes(
    tmp_path: Path, stack: ExitStack
) -> None:
    """Within two seconds by the daemon's own timer: each heartbeat arms a watchdog at most
    ``heartbeat_timeout_s`` (1.5 s) ahead, and the matrix says so once it runs out."""
    setup, step, after = _first_step()
    board = StallingBoard("enceladus", ENCELADUS.layout(setup), ENCELADUS.board(setup),
                          heartbeat_s=0.3)
    stack.enter_context(board)
    daemon = Daemon(_config(tmp_path, Path(board.port)), stack)
    assert daemon.wait(daemon.in_sync)
    assert daemon.wait(lambda: "heartbeat" in daemon.service.timers)  # the board has been beating

    stalled = time.monotonic()
    board.stalled.set()
    assert daemon.wait(lambda: daemon.shown_since(stalled, "Board disconnected") is not None)
    shown = daemon.shown_since(stalled, "Board disconnected")
    assert shown is not None
    beats = [(at, when) for name, at, when in daemon.armed if name == "heartbeat" and when < shown]
    assert beats and all(at - when <= HEARTBEAT_TIMEOUT_S for at, when in beats)
    assert shown >= beats[-1][0]  # shown as the last watchdog ran out, not before
    assert HEARTBEAT_TIMEOUT_S < DISCONNECT_SHOWN_WITHIN_S
    assert daemon.service.board == "silent"

    for cell, piece in ENCELADUS.changes(setup, step).items():
        board.put(cell, piece)  # made while the board said nothing
    board.stalled.clear()
    assert daemon.wait(lambda: bool(daemon.commits))
    assert daemon.commits == [ENCELADUS.format_step(setup, step)]
    assert any(isinstance(r, protocol.RequestDump) for r in board.requests)


def test_a_damaged_journal_resumes_after_its_last_good_step_and_the_matrix_says_so(
    tmp_path: Path, stack: ExitStack, caplog: pytest.LogCaptureFixture
) -> None:
    from companion import journal

    states = _states(SEED)[:3]
    setup, rng = ENCELADUS.new_game(2, SEED, {}), random.Random(SEED)
    config = _config(tmp_path, tmp_path / "unused")
    games = Path(config.journal.directory)
    record = journal.Journal.create(games, {
        "game": "enceladus", "layout": "enceladus", "players": 2, "seed": SEED, "options": {},
        "setup": ENCELADUS.format_position(setup)}, fsync=False)
    for number, before in enumerate([setup, *states[:2]], 1):
        step = choose_step(ENCELADUS, before, rng)
        record.step(number, ENCELADUS.to_move(before), ENCELADUS.format_step(before, step))
    record.close()
    lines = record.path.read_text().splitlines()
    record.path.write_text("\n".join([lines[0], lines[1], "x" + lines[2], lines[3]]) + "\n")

    board = stack.enter_context(_board(states[2]))  # the players were at step 3
    with caplog.at_level(logging.WARNING, logger="companion"):
        daemon = Daemon(replace(config, board=replace(config.board, port=board.port)), stack)
        note = "Journal damaged at line 3: the game resumes after step 1. "
        assert daemon.wait(lambda: daemon.shown_since(0, note + "Put the board back") is not None)
        board.put_all(ENCELADUS.board(states[0]))  # one sweep: no half of it is a step
        assert daemon.wait(daemon.in_sync)
    assert not daemon.screens[-1].message.startswith(note)  # said until the board matched
    assert daemon.service.referee.state == states[0] and not daemon.commits
    damaged = [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()]
    assert damaged == [f"journal {record.path.name} is damaged at line 3 (not a journal entry); "
                       "the game resumes after step 1; the damaged file is kept as "
                       f"{record.path.name}.damaged"]
    assert record.path.read_text() == "\n".join(lines[:2]) + "\n"


# ------------------------------------------------------------------------------ steps in flight


def _resumed_referee(steps: int, *, presence: bool = False) -> tuple[Any, list[Any]]:
    """A referee resumed after ``steps`` steps of the seeded game, as the daemon makes it, and
    the states of that game."""
    from companion.referee.referee import Referee, RefereeSettings

    setup, states = ENCELADUS.new_game(2, SEED, {}), _states(SEED)
    befores = [setup, *states]
    history = [(befores[i], _step_between(befores[i], befores[i + 1])) for i in range(steps)]
    referee = Referee(ENCELADUS, befores[steps], "enceladus",
                      RefereeSettings(settle_s=0.4, presence=presence), history=history,
                      syncing=True, resumed=True)
    return referee, befores


def _step_between(before: Any, after: Any) -> Any:
    return next(s for s in ENCELADUS.legal_steps(before) if ENCELADUS.apply(before, s) == after)


def _first_dump(referee: Any, state: Any) -> list[Any]:
    """What the referee does with its first dump, showing ``state``, and its settle timer."""
    from companion.events import BoardMessage, Timer
    from companion.referee.effects import SetTimer
    from companion.referee.recognition import sensed_board

    board = ENCELADUS.board(state)
    if referee.settings.presence:
        board = sensed_board(board)
    effects = referee.handle(BoardMessage(0.0, protocol.Dump(
        seq=0, pieces=tuple(board[c] for c in referee.layout))))
    settle = [e.at for e in effects if isinstance(e, SetTimer) and e.name == "settle" and e.at]
    return effects + (referee.handle(Timer(settle[0], "settle")) if settle else [])


def _said(effects: list[Any]) -> list[str]:
    from companion.referee.effects import Committed, Show

    return [e.step if isinstance(e, Committed) else e.screen.message
            for e in effects if isinstance(e, Committed | Show)]


def test_a_step_finished_while_the_companion_was_down_is_committed_after_its_settle_time() -> None:
    referee, states = _resumed_referee(2)
    said = _said(_first_dump(referee, states[3]))
    assert ENCELADUS.format_step(states[2], _step_between(states[2], states[3])) in said
    assert referee.steps_committed == 3 and referee.state == states[3]
    assert said[-1].endswith("your turn") and not [m for m in said if m.endswith(PUT_BACK)]


def test_a_step_taken_back_before_the_restart_is_not_committed_again() -> None:
    referee, states = _resumed_referee(3)
    referee.undo(0.0)  # the players press Undo, the companion dies before they put it back
    said = _said(_first_dump(referee, states[3]))
    assert referee.steps_committed == 2 and said[-1] == "Put the board back as shown"


def test_a_resumed_game_ending_with_an_undo_is_not_in_flight(tmp_path: Path) -> None:
    from companion import journal
    from companion.daemon.service import new_or_resumed_game

    setup, states = ENCELADUS.new_game(2, SEED, {}), _states(SEED)
    record = journal.Journal.create(tmp_path, {
        "game": "enceladus", "players": 2, "setup": ENCELADUS.format_position(setup)})
    record.step(1, 1, ENCELADUS.format_step(setup, _step_between(setup, states[0])))
    config = _config(tmp_path, tmp_path / "unused")
    start = new_or_resumed_game(config, ENCELADUS, tmp_path, fsync=False)
    assert start.resumed and start.in_flight and start.journal is not None
    start.journal.undo(1)
    start.journal.close()
    again = new_or_resumed_game(config, ENCELADUS, tmp_path, fsync=False)
    assert again.resumed and not again.in_flight and again.history == []
    assert again.journal is not None
    again.journal.close()
    record.close()


def test_on_a_presence_board_a_step_with_unseen_changes_is_put_back_not_guessed() -> None:
    from companion.referee.recognition import StepIndex

    referee, states = _resumed_referee(2, presence=True)
    index = StepIndex(ENCELADUS, states[2], ENCELADUS.board(states[2]), True)
    assert index.unseen(_step_between(states[2], states[3]))  # a flower lifted unseen
    said = _said(_first_dump(referee, states[3]))
    assert referee.steps_committed == 2 and said[-1] == "Put the board back as shown"


# ------------------------------------------------------------------- fast hands, lost lines

BACK_TO_BACK_S = 0.03
"""Seconds between two operations of players in a hurry: well inside the settle time."""


def _play(board: VirtualBoard, rules: Any, state: Any, steps: list[Any], *,
          pace: float = BACK_TO_BACK_S) -> Any:
    """Perform ``steps`` one after the other without waiting for the matrix, ``pace``
    seconds between operations (the tray shows what each step pays); the state after them."""
    tray = sorted(rules.tray_cells(state), key=lambda c: (len(c), c))
    rng = random.Random(SEED)
    for step in steps:
        shown = tray_flowers(rules.choice_path(state, step)) if tray else []
        ops = perform(board.board, rules.changes(state, step), rng, Noise.none(), tray=tray,
                      tray_show=shown) + chance_ops(rules, state, step, rng)
        for op in ops:
            time.sleep(pace)
            if isinstance(op, Put):
                board.put(op.cell, op.piece)
            elif isinstance(op, Signal):
                board.send(op.message)
        state = rules.apply(state, step)
    return state


def _steps(rules: Any, state: Any, count: int) -> list[Any]:
    steps, rng = [], random.Random(SEED)
    for _ in range(count):
        steps.append(choose_step(rules, state, rng))
        state = rules.apply(state, steps[-1])
    return steps


@pytest.mark.parametrize("game", ["enceladus", "mars"])
def test_steps_made_back_to_back_within_the_settle_time_are_all_committed(
    tmp_path: Path, stack: ExitStack, game: str
) -> None:
    # Enceladus: two placements, two moves; Mars: two placements, the roll, two moves.
    rules = load(game).RULES
    setup = rules.new_game(2, SEED, {})
    board = stack.enter_context(
        VirtualBoard(game, rules.layout(setup), rules.board(setup)))
    daemon = Daemon(_config(tmp_path, Path(board.port), game), stack)
    assert daemon.wait(lambda: daemon.screens[-1].message.startswith("P1: ")
                       if daemon.screens else False)  # the board is seen set up: P1 to play
    steps = _steps(rules, setup, 4 if game == "enceladus" else 5)
    notations, state = [], setup
    for step in steps:
        notations.append(rules.format_step(state, step))
        state = rules.apply(state, step)
    final = _play(board, rules, setup, steps)
    assert daemon.wait(lambda: len(daemon.commits) == len(steps)), daemon.commits
    assert daemon.commits == notations and daemon.service.referee.state == final
    assert not [s for s in daemon.screens if s.message.startswith("Not a legal move")]


class LossyBoard(VirtualBoard):
    """A board whose field updates for the ``lost`` cells never reach the wire (their
    sequence numbers are spent, as when noise garbles a line), and whose answers to ``DUMP?``
    wait while ``dumps_held`` is set."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.lost: set[str] = set()
        self.dumps_held = threading.Event()
        self.dump_asked = threading.Event()

    def write_raw(self, data: bytes) -> None:
        (message,) = protocol.LineParser().feed(data) or (None,)
        if isinstance(message, protocol.FieldUpdate) and message.cell in self.lost:
            self.lost.discard(message.cell)
            return
        super().write_raw(data)

    def send_dump(self) -> None:
        if self.dumps_held.is_set():
            self.dump_asked.set()
            return
        super().send_dump()


def test_a_question_a_lost_tray_line_raised_closes_when_the_dump_repairs_the_tray(
    tmp_path: Path, stack: ExitStack
) -> None:
    setup = ENCELADUS.new_game(2, SEED, {})
    board = stack.enter_context(LossyBoard("enceladus", ENCELADUS.layout(setup),
                                           ENCELADUS.board(setup)))
    daemon = Daemon(_config(tmp_path, Path(board.port)), stack)
    assert daemon.wait(daemon.in_sync)
    state = setup
    for step in _steps(ENCELADUS, setup, 14):  # to a position where a colour must be paid
        labels = (*ENCELADUS.choice_path(state, step), ENCELADUS.format_step(state, step))
        count = len(daemon.commits)
        state = _play(board, ENCELADUS, state, [step])
        while not daemon.wait(lambda count=count: len(daemon.commits) > count, 2):
            daemon.answer(labels)
    pay = ENCELADUS.parse_step(state, "diagonal:red:d2")  # diagonal:yellow:d2 looks the same
    board.lost.add("T2")  # the second red flower shown on the tray: its line is lost
    board.dumps_held.set()
    asked = time.monotonic()
    _play(board, ENCELADUS, state, [pay])
    assert daemon.wait(lambda: daemon.shown_since(asked, "P2: which one?") is not None)
    assert board.dump_asked.is_set()  # the gap in the sequence numbers was seen
    time.sleep(0.7)
    board.dumps_held.clear()
    board.send_dump()  # the dump that repairs the tray arrives
    assert daemon.wait(lambda: len(daemon.commits) == 15), "the question outlived the facts"
    assert daemon.commits[-1] == "diagonal:red:d2" and not daemon.asking()


def test_a_port_another_program_holds_is_named_on_the_matrix_until_it_lets_go(
    tmp_path: Path, stack: ExitStack, caplog: pytest.LogCaptureFixture
) -> None:
    import fcntl

    setup = ENCELADUS.new_game(2, SEED, {})
    board = stack.enter_context(_board(setup))
    holder = subprocess.Popen(  # a terminal left open on the port, with a lock on it
        [sys.executable, "-c", "import fcntl, os, sys\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('holding', flush=True)\nsys.stdin.read()\n",
         board.port], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    stack.callback(holder.wait, 10)
    stack.callback(lambda: holder.stdin and holder.stdin.close())
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    name = Path(f"/proc/{holder.pid}/comm").read_text().strip()
    config = _config(tmp_path, Path(board.port))
    config = replace(config, board=replace(config.board, ready_timeout_s=0.5))
    daemon = Daemon(config, stack)
    said = f"{board.port} is in use by {name} (pid {holder.pid}); close it"
    assert daemon.wait(lambda: daemon.shown_since(0, said) is not None)
    assert daemon.wait(lambda: daemon.service.ready)  # the wait for the board is over...
    assert daemon.screens[-1].message == said  # ...and the cable is not blamed
    assert f"board disconnected: {said}" in caplog.messages  # and the log names it too
    assert daemon.service.board == "down"
    assert holder.stdin is not None
    holder.stdin.close()  # the terminal is closed
    assert daemon.wait(daemon.in_sync)
    with open(board.port, "rb") as port, pytest.raises(BlockingIOError):
        fcntl.flock(port, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the daemon holds it now


# ------------------------------------------------------------------------------ kill -9

SPEED = 4.0
"""How much faster than people the players of the kill test play."""


class Child:
    """The daemon in a child process: its JSON lines arrive on :attr:`lines`."""

    def __init__(self, config_path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(config_path)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def press(self, name: str) -> None:
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(name + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the child was just killed: its next life asks again

    def kill(self) -> None:
        self.process.kill()

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


PUT_BACK = ("Put the board back as shown", "Set up the board as shown")
"""The matrix's words that make the players undo what they made (a damage note may come
first)."""


def _answer(child: Child, line: dict[str, Any], path: tuple[str, ...]) -> None:
    """Answer the question on the screen ``line`` as the player who made the step with the
    choice ``path`` does: Select to the right choice, then OK."""
    wanted = next((o for o in path if o in line["menu"]), line["menu"][0])
    for _ in range((line["menu"].index(wanted) - line["index"]) % len(line["menu"])):
        child.press("select")
    child.press("ok")


class KilledTable:
    """One game at a real-time table whose daemon is killed with SIGKILL at random points.

    The players follow the matrix as people would: when a restart asks them to put the board
    back as shown, they do and make the step again (:attr:`redone` counts those steps).
    """

    def __init__(self, folder: Path, seed: int, kills: int) -> None:
        self.seed = seed
        self.choice = random.Random(seed)  # the steps chosen: the same as an uninterrupted game
        self.hands = random.Random(seed + 1)  # noise, kill points: free to differ
        self.setup = ENCELADUS.new_game(2, seed, {})
        self.board = _board(self.setup)
        self.board.start()
        self.config_path = folder / f"game-{seed}.toml"
        self.journals = folder / f"games-{seed}"
        self.config_path.write_text(
            f'[game]\nname = "enceladus"\nseed = {seed}\n'
            f'[board]\nport = "{self.board.port}"\nsettle_ms = 150\nready_timeout_s = 5\n'
            f'[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n'
            f'[journal]\ndirectory = "{self.journals}"\n')
        self.kill_steps = set(self.hands.sample(range(1, 40), kills))
        self.kills = 0
        self.redone = 0
        self.child = self._start()

    def _start(self) -> Child:
        child = Child(self.config_path)
        while True:
            line = child.lines.get(timeout=60)
            if line is None:  # killed before it said anything: start it again
                child.close()
                child = Child(self.config_path)
            elif "resumed" in line:
                self.resumed = int(line["resumed"])
                return child

    def _kill_later(self, delay: float) -> None:
        child = self.child

        def kill() -> None:
            if child is self.child:
                self.kills += 1
                child.kill()

        threading.Timer(delay, kill).start()

    def _perform(self, state: Any, step: Any) -> None:
        changes = ENCELADUS.changes(state, step)
        for op in perform(self.board.board, changes, self.hands, Noise()):
            time.sleep(op.wait / SPEED)
            if isinstance(op, Put):
                self.board.put(op.cell, op.piece)

    def _wait_commit(self, state: Any, step: Any) -> bool:
        """True once the step being made is committed; False when the daemon died first.
        Meanwhile the players answer questions and, when the matrix asks, put the board back
        and make the step again."""
        deadline = time.monotonic() + 30
        answered: list[str] = []
        restoring = False
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.child.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                return False
            if line.get("commit") == self.steps:
                return True
            message = line.get("screen", "")
            if message.endswith(PUT_BACK) and not restoring:
                restoring = True
                self.redone += 1
                for cell, piece in ENCELADUS.board(state).items():
                    self.board.put(cell, piece)
            elif restoring and message.endswith("your turn"):
                restoring = False
                self._perform(state, step)
            elif line.get("menu") and line["menu"] != answered:
                # Answer each question once: the same menu shown again with the cursor
                # moved is our own Select presses coming back.
                answered = line["menu"]
                _answer(self.child, line, ENCELADUS.choice_path(state, step))
        raise AssertionError(f"seed {self.seed}: step {self.steps} was never committed")

    def play(self) -> tuple[list[str], Any]:
        """Play to the end; returns the steps made and the final state."""
        state, made = self.setup, []
        self.steps = 0
        while ENCELADUS.outcome(state) is None:
            step = choose_step(ENCELADUS, state, self.choice)
            made.append(ENCELADUS.format_step(state, step))
            self.steps += 1
            if self.steps in self.kill_steps:
                self._kill_later(self.hands.uniform(0.0, 1.5))
            self._perform(state, step)
            while not self._wait_commit(state, step):
                self.child.close()
                self.child = self._start()
                if self.resumed >= self.steps:  # it was committed just before the kill
                    break
            state = ENCELADUS.apply(state, step)
        return made, state

    def close(self) -> None:
        self.child.close()
        self.board.close()


def _uninterrupted(seed: int) -> tuple[list[str], Any]:
    state, made, rng = ENCELADUS.new_game(2, seed, {}), [], random.Random(seed)
    while ENCELADUS.outcome(state) is None:
        step = choose_step(ENCELADUS, state, rng)
        made.append(ENCELADUS.format_step(state, step))
        state = ENCELADUS.apply(state, step)
    return made, state


def _states(seed: int) -> list[Any]:
    state, states, rng = ENCELADUS.new_game(2, seed, {}), [], random.Random(seed)
    while ENCELADUS.outcome(state) is None:
        state = ENCELADUS.apply(state, choose_step(ENCELADUS, state, rng))
        states.append(state)
    return states


def _killed_game(folder: Path, seed: int, kills: int) -> tuple[int, int]:
    """Play seed ``seed`` to the end with ``kills`` kills drawn; returns the kills that
    happened and the steps the players had to make again."""
    from companion import journal

    table = KilledTable(folder, seed, kills)
    try:
        made, final = table.play()
        table.child.process.wait(timeout=30)  # the daemon ends with the game
    finally:
        table.close()
    expected, expected_final = _uninterrupted(seed)
    assert made == expected
    paths = sorted(table.journals.glob("*.jsonl"))
    assert len(paths) == 1, f"seed {seed}: the game was not resumed: {paths}"
    record = journal.read(paths[0])
    # None lost, none twice: step by step, the journal leads to the states the players made
    # (by state: swapping two blue flowers is the same step whichever two were swapped).
    assert [after for _, _, after in record.replay(ENCELADUS)] == _states(seed)
    assert [e["n"] for e in record.steps] == list(range(1, len(expected) + 1))
    assert record.over is not None
    outcome = ENCELADUS.outcome(expected_final)
    assert outcome is not None and record.over["winners"] == list(outcome.winners)
    return table.kills, table.redone


@pytest.mark.slow
def test_kill_9_at_a_hundred_random_points_loses_and_repeats_no_step(tmp_path: Path) -> None:
    seeds = (21, 22, 23, 24, 25, 26)
    with ThreadPoolExecutor(len(seeds)) as pool:
        results = list(pool.map(lambda seed: _killed_game(tmp_path, seed, 25), seeds))
    # A kill drawn while the daemon is down again already, or after the last step, never
    # happens: six games of 25 drawn kills make at least a hundred.
    assert sum(kills for kills, _ in results) >= 100
    # The players finish every step they were making when the daemon died; it is never
    # to be made again.
    assert sum(redone for _, redone in results) == 0


@pytest.mark.parametrize("at_step", [1, 3])
def test_kill_9_before_a_finished_step_is_committed_commits_it_after_the_restart(
    at_step: int, tmp_path: Path
) -> None:
    from companion import journal

    state = ENCELADUS.new_game(2, SEED, {})
    board = _board(state)
    board.start()
    config = tmp_path / "game.toml"
    games = tmp_path / "games"
    # The longest debounce: the step's last change is still being debounced when it dies.
    config.write_text(
        f'[game]\nname = "enceladus"\nseed = {SEED}\n'
        f'[board]\nport = "{board.port}"\ndebounce_ms = 1000\nready_timeout_s = 5\n'
        f'[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n'
        f'[journal]\ndirectory = "{games}"\n')
    child = Child(config)
    try:
        assert child.lines.get(timeout=60) == {"resumed": 0}
        rng = random.Random(SEED)
        for number in range(1, at_step + 1):
            step = choose_step(ENCELADUS, state, rng)
            after = ENCELADUS.apply(state, step)
            for op in perform(board.board, ENCELADUS.changes(state, step), rng, Noise()):
                time.sleep(op.wait / SPEED)
                board.put(op.cell, op.piece)
            if number == at_step:
                child.kill()  # the step is finished on the board, not yet committed
            while number < at_step:  # until the step is committed
                line = child.lines.get(timeout=20)
                assert line is not None and line.get("commit") in (None, number), line
                if line.get("menu"):
                    _answer(child, line, ENCELADUS.choice_path(state, step))
                if line.get("commit") == number:
                    break
            state, before = after, state
        child.process.wait(timeout=10)
        (path,) = games.glob("*.jsonl")
        assert len(journal.read(path).steps) == at_step - 1  # it died before the commit

        child.close()
        child = Child(config)
        assert child.lines.get(timeout=60) == {"resumed": at_step - 1}
        while (line := child.lines.get(timeout=20)) is not None and "commit" not in line:
            assert not line.get("screen", "").endswith(PUT_BACK), "the step is to be redone"
            if line.get("menu"):
                _answer(child, line, ENCELADUS.choice_path(before, step))
        assert line is not None, "the daemon died"
        assert line["commit"] == at_step and line["step"] == ENCELADUS.format_step(before, step)
        steps = journal.read(path).steps
        assert [e["n"] for e in steps] == list(range(1, at_step + 1))
        assert steps[-1]["step"] == ENCELADUS.format_step(before, step)
    finally:
        child.close()
        board.close()


def _child_main(config_path: str) -> int:
    """The daemon of the kill test (this file run as a script)."""
    from gpiozero.pins.mock import MockFactory

    from companion.daemon.notify import Notifier
    from companion.daemon.service import build

    config = load_config(config_path)
    lock = threading.Lock()

    def say(**fields: Any) -> None:
        with lock:
            sys.stdout.write(json.dumps(fields) + "\n")
            sys.stdout.flush()

    with ExitStack() as stack:
        factory = MockFactory()
        stack.callback(factory.close)
        service = build(config, stack, pin_factory=factory, notifier=Notifier())
        service.stop_when_over = True
        say(resumed=service.referee.steps_committed)
        service.commit_listeners.append(lambda c: say(commit=c.number, step=c.step))
        service.screen_listeners.append(
            lambda s: say(screen=s.message, cells=dict(s.cells), menu=list(s.menu),
                          index=s.menu_index))

        def buttons() -> None:
            for line in sys.stdin:
                pin = factory.pin(getattr(config.buttons.pins, line.strip()))
                pin.drive_low()
                time.sleep(0.08)
                pin.drive_high()
                time.sleep(0.08)  # released longer than the debounce: two presses, not one

        threading.Thread(target=buttons, daemon=True).start()
        service.run()
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1]))
