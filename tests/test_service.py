"""The service loop (service.py): journal before matrix, resume, systemd readiness, watchdog and
status, a silent board asked for a dump, a full card, SIGHUP display reloads.

The loop runs in virtual time: :class:`ScriptedQueue` hands out the events scripted on a
virtual clock and, when the loop's wait would run out first, moves the clock by that wait
instead of sleeping, so every test is exact and instant.  systemd is a real datagram socket
in a temporary folder, read as systemd reads it.
"""

from __future__ import annotations

import errno
import gc
import json
import logging
import queue
import socket
import weakref
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion import journal as journal_mod
from companion.board import protocol
from companion.config import Config, DisplayConfig, GameConfig, JournalConfig, load_config
from companion.daemon.collector import IdleCollector
from companion.daemon.notify import Notifier
from companion.daemon.service import (
    JOURNAL_ALARM,
    JOURNAL_RETRY_S,
    Reload,
    Service,
    new_or_resumed_game,
)
from companion.events import BoardMessage, Button, Event, LinkState, Stop
from companion.referee.referee import Referee, RefereeSettings
from companion.referee.timers import VirtualClock
from companion.rules import load

ENCELADUS = load("enceladus").RULES
SEED = 5


class ScriptedQueue(queue.Queue[Event]):
    """Events at given virtual times on ``clock``; ``get`` moves the clock instead of blocking.

    ``timeouts`` records every wait the loop asked for (``None``: wait forever).
    """

    def __init__(self, clock: VirtualClock, script: list[tuple[float, Event]]) -> None:
        super().__init__()
        self.clock = clock
        for at, event in script:
            clock.post(event, at)
        self.timeouts: list[float | None] = []

    def get(self, block: bool = True, timeout: float | None = None) -> Event:
        self.timeouts.append(timeout)
        event = self.clock.wait(timeout)  # LookupError past the script: add a Stop
        if event is None:
            raise queue.Empty
        return event

    def empty(self) -> bool:
        return not self.clock.waiting()


class Systemd:
    """A datagram socket where the notifications arrive, as systemd's ``$NOTIFY_SOCKET``."""

    def __init__(self, path: Path) -> None:
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(str(path))
        self.socket.setblocking(False)
        self.address = str(path)

    def messages(self) -> list[dict[str, str]]:
        out = []
        while True:
            try:
                data = self.socket.recv(4096)
            except BlockingIOError:
                return out
            out.append(dict(line.split("=", 1) for line in data.decode().split("\n")))


class Link:
    """The board link's sending side: records what the Pi sends."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, message: Any) -> bool:
        self.sent.append(message)
        return True


@pytest.fixture
def systemd(tmp_path: Path) -> Iterator[Systemd]:
    listener = Systemd(tmp_path / "notify")
    yield listener
    listener.socket.close()


def _setup() -> Any:
    return ENCELADUS.new_game(2, SEED, {})


def _dump(state: Any) -> BoardMessage:
    board = ENCELADUS.board(state)
    pieces = tuple(board[cell] for cell in ENCELADUS.layout(state))
    return BoardMessage(0, protocol.Dump(seq=0, pieces=pieces))


def _hello() -> BoardMessage:
    return BoardMessage(0, protocol.Hello(seq=0, version="1", layout="enceladus",
                                          sensing="identity", board_id="T1", firmware="t"))


def _step_events(state: Any, step: Any, at: float) -> list[tuple[float, Event]]:
    """The field updates of ``step``, 0.1 s apart from ``at`` (one piece at a time)."""
    changes = ENCELADUS.changes(state, step)
    return [(at + 0.1 * i, BoardMessage(0, protocol.FieldUpdate(seq=0, cell=c, piece=p)))
            for i, (c, p) in enumerate(sorted(changes.items()))]


def _first_steps(count: int) -> list[tuple[Any, Any]]:
    state, played = _setup(), []
    for _ in range(count):
        step = min(ENCELADUS.legal_steps(state), key=lambda s: ENCELADUS.format_step(state, s))
        played.append((state, step))
        state = ENCELADUS.apply(state, step)
    return played


def _service(clock: VirtualClock, script: list[tuple[float, Event]], *, state: Any = None,
             notifier: Notifier | None = None, **options: Any) -> tuple[Service, ScriptedQueue]:
    events = ScriptedQueue(clock, script)
    referee = Referee(ENCELADUS, state if state is not None else _setup(), "enceladus",
                      RefereeSettings(settle_s=0.3, tray=True))
    service = Service(referee, events, clock=clock, notifier=notifier or Notifier(), **options)
    return service, events


# --------------------------------------------------------------------------- journal and matrix


def test_a_committed_step_is_in_the_journal_before_the_matrix_shows_it(tmp_path: Path) -> None:
    clock = VirtualClock()
    (before, step), = _first_steps(1)
    journal = journal_mod.Journal.create(tmp_path, {"game": "enceladus", "setup": "x"})
    script = [(0.0, _dump(before)), *_step_events(before, step, 1.0), (5.0, Stop(0))]
    service, _ = _service(clock, script, journal=journal)
    seen: list[tuple[int, int]] = []  # (steps committed, steps in the file) at every screen

    def on_screen(screen: Any) -> None:
        lines = journal.path.read_text().splitlines()
        seen.append((service.referee.steps_committed, sum('"step"' in line for line in lines)))

    service.screen_listeners.append(on_screen)
    service.run()
    assert (1, 1) in seen
    assert all(in_file >= committed for committed, in_file in seen)


def test_the_step_that_ended_the_game_taken_back_is_a_game_in_progress_logged_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Undo after the end: the game goes on (no outcome, the journal's pointer names it for a
    restart) and the take-back is one line of the log."""
    # player 2 has no Martian move left once player 1 plays j3/i3 (the end of the game)
    state = load("enceladus").CASES.position({"game": "enceladus", "options": {}, "position": {
        "players": 2, "to_move": 1, "cells": {"j1": "M1", "j3": "red", "i3": "red", "L9": "M2"},
        "reserves": {"1": {"blue": 1}, "2": {}}, "tube": {}, "used_actions": []}})
    clock = VirtualClock()
    journal = journal_mod.Journal.create(tmp_path, {"game": "enceladus", "setup": "x"},
                                         fsync=False)
    updates = [BoardMessage(0, protocol.FieldUpdate(seq=0, cell=cell, piece=piece))
               for cell, piece in (("j1", ""), ("j3", ""), ("j3", "M1"), ("i3", ""))]
    script = [(0.0, _dump(state)), *((1.0 + 0.1 * i, u) for i, u in enumerate(updates)),
              (3.0, Button(0, "undo")), (4.0, Stop(0))]
    service, _ = _service(clock, script, state=state, journal=journal)
    ended: list[bool] = []
    service.screen_listeners.append(lambda screen: ended.append(service.outcome is not None))
    with caplog.at_level(logging.INFO, logger="companion"):
        outcome = service.run()
    journal.close()
    assert True in ended and outcome is None and service.referee.steps_committed == 0
    assert journal_mod.latest_unfinished(tmp_path) == journal.path
    said = [r.getMessage() for r in caplog.records if "taken back" in r.getMessage()]
    assert said == ["step 1 (j3/i3) taken back"]


def test_what_start_up_made_is_out_of_the_collectors_sight_while_the_loop_runs() -> None:
    # A full collection mid-game walks only what the game made, not every module: the
    # objects made before the loop are frozen while it runs, and given back when it ends.
    clock = VirtualClock()
    (before, step), = _first_steps(1)
    service, _ = _service(clock, [(0.0, _dump(before)), *_step_events(before, step, 1.0),
                                  (5.0, Stop(0))])
    frozen: list[int] = []
    service.screen_listeners.append(lambda _: frozen.append(gc.get_freeze_count()))
    service.run()
    assert len(frozen) > 1 and all(count > 1000 for count in frozen[1:])  # [0]: at start
    assert gc.get_freeze_count() == 0


class _Node:
    itself: _Node


def _heartbeat(at: float) -> tuple[float, Event]:
    return at, BoardMessage(0, protocol.Heartbeat(seq=0, uptime_ms=int(at * 1000)))


def test_the_loop_collects_garbage_only_when_no_event_waits() -> None:
    # A collection in the middle of a field update costs more than the update's time on the
    # wire: automatic collection is off while the loop runs, and the loop collects between
    # events, never while one waits (here the board's messages come three at once), and all
    # the generations once in a while.
    clock = VirtualClock()
    (before, first), (after, second) = _first_steps(2)
    burst = [_heartbeat(1.0), _heartbeat(1.0), *_step_events(before, first, 1.0)]
    service, events = _service(clock, [(0.0, _dump(before)), *burst,
                                       *_step_events(after, second, 2.0), _heartbeat(40.0),
                                       (41.0, Stop(0))])
    handling = [False]
    handle = service.referee.handle

    def timed(event: Any) -> Any:
        handling[0] = True
        try:
            return handle(event)
        finally:
            handling[0] = False

    runs: list[tuple[int, bool, bool]] = []  # (generation, while handling, while one waits)

    def on_collect(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append((info["generation"], handling[0], not events.empty()))

    enabled: list[bool] = []
    service.referee.handle = timed  # type: ignore[method-assign]
    service.screen_listeners.append(lambda _: enabled.append(gc.isenabled()))
    was = gc.isenabled()
    gc.callbacks.append(on_collect)
    try:
        service.run()
    finally:
        gc.callbacks.remove(on_collect)
    assert service.referee.steps_committed == 2
    assert len(enabled) > 1 and not any(enabled[1:])  # [0]: at start, before the loop
    assert len(runs) > 3 and not any(handling or waiting for _, handling, waiting in runs)
    assert {generation for generation, _, _ in runs} >= {0, 2}
    assert gc.isenabled() == was and gc.get_freeze_count() == 0


def test_a_long_games_garbage_is_collected_while_the_loop_runs() -> None:
    # With automatic collection off, the loop's own collections keep memory bounded: the
    # cycles made along a game (here one at each screen shown) are freed before it ends.
    clock = VirtualClock()
    played = _first_steps(4)
    script = [(0.0, _dump(played[0][0]))]
    for i, (state, step) in enumerate(played):
        script += _step_events(state, step, 1.0 + i)
    service, _ = _service(clock, [*script, (9.0, Stop(0))])
    made, freed = [0], [0]

    def cycle(_: Any) -> None:
        node = _Node()
        node.itself = node
        made[0] += 1
        weakref.finalize(node, lambda: freed.__setitem__(0, freed[0] + 1))

    service.screen_listeners.append(cycle)
    service.run()
    assert made[0] > 8 and freed[0] >= made[0] - 1


def test_a_full_collection_frees_what_outlived_the_young_ones() -> None:
    clock = VirtualClock()
    freed = []
    with IdleCollector(clock, full_every_s=10.0) as collector:
        held = _Node()
        held.itself = held  # a cycle, still held at the young collection
        weakref.finalize(held, lambda: freed.append(True))
        collector.idle()
        del held
        clock.now = 5.0
        collector.idle()
        collector.idle()
        young = bool(freed)
        clock.now = 10.0
        collector.idle()
    assert not young and freed


def test_a_resumed_game_is_out_of_sync_until_the_board_matches(tmp_path: Path) -> None:
    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(tmp_path)))
    played = _first_steps(3)
    header = {"game": "enceladus", "layout": "enceladus", "players": 2, "seed": SEED,
              "options": {}, "setup": ENCELADUS.format_position(played[0][0])}
    journal = journal_mod.Journal.create(tmp_path, header)
    for number, (before, step) in enumerate(played, 1):
        journal.step(number, ENCELADUS.to_move(before), ENCELADUS.format_step(before, step))
    journal.close()

    start = new_or_resumed_game(config, ENCELADUS, tmp_path)
    assert start.resumed and start.journal is not None and start.journal.path == journal.path
    assert start.history == played and start.state == ENCELADUS.apply(*played[-1])
    start.journal.close()
    state, history = start.state, start.history

    clock = VirtualClock()
    board_after_two = ENCELADUS.apply(*played[1])  # the last step was made but then undone
    service, _ = _service(clock, [(0.0, _dump(board_after_two)), (1.0, _dump(state)),
                                  (2.0, Stop(0))], state=state)
    service.referee.history = list(history)
    screens: list[Any] = []
    service.screen_listeners.append(screens.append)
    service.run()
    messages = [s.message for s in screens]
    assert "Put the board back as shown" in messages
    assert messages[-1].endswith("your turn") and service.referee.steps_committed == 3


def test_a_board_that_does_not_show_the_game_is_logged_once_until_it_does(
        caplog: pytest.LogCaptureFixture) -> None:
    """A daemon whose matrix nobody sees says in its log that the board is not set up as the
    game stands (another setup here), once however many dumps repeat it."""
    clock, state = VirtualClock(), _setup()
    other = ENCELADUS.new_game(2, SEED + 1, {})
    script = [(0.0, _dump(other)), (0.5, _dump(other)), (1.0, _dump(state)), (2.0, Stop(0))]
    service, _ = _service(clock, script, state=state)
    with caplog.at_level(logging.INFO, logger="companion"):
        service.run()
    said = [r.getMessage() for r in caplog.records if "does not show the game" in r.getMessage()]
    differ = sorted(c for c in ENCELADUS.layout(state)
                    if ENCELADUS.board(state)[c] != ENCELADUS.board(other)[c])
    assert len(said) == 1, said
    assert service.referee.steps_committed == 0 and not service.referee.syncing
    assert said[0].startswith(f"the board does not show the game as it stands: {len(differ)} "
                              f"cells to set up or put back ({', '.join(differ[:8])}")


def test_a_legal_step_refused_at_the_companions_seat_is_logged_as_not_its_step(
        caplog: pytest.LogCaptureFixture) -> None:
    """At the companion's seat a legal placement that is not the one announced is refused;
    the log says it differs from the companion's step, not that no legal step explains it."""
    from companion.config import PlayersConfig
    from companion.daemon.games import game_seats

    clock, state = VirtualClock(), ENCELADUS.new_game(2, 5, {})
    seats = game_seats(replace(Config(), game=GameConfig(name="enceladus", seed=5),
                               players=PlayersConfig(seats=("quick", "person"))))
    referee = Referee(ENCELADUS, state, "enceladus", RefereeSettings(settle_s=0.3), seats=seats)
    announced = seats.announced(state)
    other = next(s for s in ENCELADUS.legal_steps(state) if s != announced)
    script = [(0.0, _dump(state)),
              (0.5, BoardMessage(0, protocol.FieldUpdate(seq=0, cell=other.cell, piece="M1"))),
              (5.0, Stop(0))]
    service = Service(referee, ScriptedQueue(clock, script), clock=clock, notifier=Notifier())
    with caplog.at_level(logging.INFO, logger="companion"):
        service.run()
    assert service.referee.steps_committed == 0
    said = [r.getMessage() for r in caplog.records if "shown as wrong" in r.getMessage()]
    assert said == [f"the board shows {ENCELADUS.format_step(state, other)}, which differs from "
                    f"the companion's step {ENCELADUS.format_step(state, announced)}: "
                    f"{other.cell} shown as wrong"]


# --------------------------------------------------------------------------- systemd


def test_ready_is_sent_once_the_board_answers(systemd: Systemd) -> None:
    clock = VirtualClock()
    service, _ = _service(clock, [(3.0, _hello()), (4.0, _dump(_setup())), (5.0, Stop(0))],
                          notifier=Notifier(systemd.address))
    service.run()
    sent = systemd.messages()
    ready = [m for m in sent if m.get("READY") == "1"]
    assert len(ready) == 1 and "board connected" in ready[0]["STATUS"]
    assert sent[-1] == {"STOPPING": "1"}


def test_without_a_board_ready_comes_after_the_wait_with_a_no_board_screen(
    systemd: Systemd,
) -> None:
    clock = VirtualClock()
    service, _ = _service(clock, [(30.0, Stop(0))], notifier=Notifier(systemd.address),
                          ready_timeout_s=10.0, port="/dev/serial/by-id/usb-board")
    screens: list[Any] = []
    service.screen_listeners.append(screens.append)
    service.run()
    ready = [m for m in systemd.messages() if m.get("READY") == "1"]
    assert len(ready) == 1 and "board disconnected" in ready[0]["STATUS"]
    no_board = [s for s in screens if s.message.startswith("No board")]
    assert no_board and no_board[0].urgent
    assert "/dev/serial/by-id/usb-board" in no_board[0].message


def test_the_loop_wakes_for_the_watchdog_every_half_interval(systemd: Systemd) -> None:
    clock = VirtualClock()
    notifier = Notifier(systemd.address, watchdog_s=10.0)
    service, events = _service(clock, [(1.0, _hello()), (31.0, Stop(0))], notifier=notifier)
    service.run()
    pings = [m for m in systemd.messages() if m.get("WATCHDOG") == "1"]
    assert len(pings) == 7  # at 0, 5, 10, ... 30 s
    assert all(t is not None and t <= 5.0 for t in events.timeouts)


def test_watchdog_interval_and_socket_come_from_systemds_environment() -> None:
    notifier = Notifier.from_environment({"NOTIFY_SOCKET": "@companion",
                                          "WATCHDOG_USEC": "20000000"})
    assert notifier.enabled and notifier.watchdog_s == 20.0
    notifier.close()


def test_status_lines_follow_the_board_and_the_game(systemd: Systemd) -> None:
    clock = VirtualClock()
    (before, step), = _first_steps(1)
    script = [(0.0, _dump(before)), *_step_events(before, step, 1.0),
              (4.0, LinkState(0, False, "lost")), (5.0, Stop(0))]
    service, _ = _service(clock, script, notifier=Notifier(systemd.address))
    service.run()
    statuses = [m["STATUS"] for m in systemd.messages() if "STATUS" in m]
    assert statuses[0] == "enceladus, step 0; waiting for the board"
    assert "enceladus, step 1, P2 to move; board connected" in statuses
    assert statuses[-1] == "enceladus, step 1, P2 to move; board disconnected"


def test_a_silent_board_is_shown_and_asked_for_a_dump() -> None:
    clock = VirtualClock()
    heartbeat = BoardMessage(0, protocol.Heartbeat(seq=0, uptime_ms=1))
    link = Link()
    service, _ = _service(clock, [(0.0, _dump(_setup())), (0.5, heartbeat), (9.0, Stop(0))],
                          link=link)
    screens: list[Any] = []
    service.screen_listeners.append(screens.append)
    service.run()
    silent = [s for s in screens if s.message.startswith("Board disconnected")]
    assert silent and silent[0].urgent
    assert service.board == "silent" and protocol.RequestDump() in link.sent


# --------------------------------------------------------------------------- a full card


def test_a_full_card_is_shown_the_game_goes_on_and_the_journal_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clock = VirtualClock()
    played = _first_steps(3)
    journal = journal_mod.Journal.create(tmp_path, {"game": "enceladus", "setup": "x"})
    script = [(0.0, _dump(played[0][0]))]
    for number, (before, step) in enumerate(played):
        script += _step_events(before, step, 1.0 + 10 * number)
    script.append((40.0, Stop(0)))
    service, _ = _service(clock, script, journal=journal)
    screens: list[Any] = []
    service.screen_listeners.append(screens.append)
    real_write = journal_mod.os.write

    def full_until_step_3(fd: int, data: bytes) -> int:
        if clock.now < 21.0:  # steps 1 and 2 find the card full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(journal_mod.os, "write", full_until_step_3)
    with caplog.at_level(logging.WARNING, logger="companion"):
        service.run()

    assert service.referee.steps_committed == 3  # the game went on
    alarms = [s for s in screens if s.message == JOURNAL_ALARM]
    assert len(alarms) == 1 and alarms[0].urgent
    assert any(s.extra.get("journal") == "NOT saved" for s in screens)
    assert "journal" not in screens[-1].extra
    back = journal_mod.read(journal.path)
    assert [e["step"] for e in back.steps] == [ENCELADUS.format_step(b, s) for b, s in played]
    assert [e["n"] for e in back.steps] == [1, 2, 3]
    assert "whole again: 2 waiting lines written" in caplog.text
    # one burst: the first failure, then one line with the count (two steps, two retries)
    assert caplog.text.count("could not be written: the disk is full") == 2
    assert "journal: 3 more in" in caplog.text


def test_a_full_card_is_retried_while_no_step_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = VirtualClock()
    (before, step), = _first_steps(1)
    journal = journal_mod.Journal.create(tmp_path, {"game": "enceladus", "setup": "x"})
    script = [(0.0, _dump(before)), *_step_events(before, step, 1.0),
              (20.0, _dump(ENCELADUS.apply(before, step))), (40.0, Stop(0))]
    service, _ = _service(clock, script, journal=journal)
    real_write = journal_mod.os.write

    def full_for_a_while(fd: int, data: bytes) -> int:
        if clock.now < 10.0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(journal_mod.os, "write", full_for_a_while)
    service.run()
    assert journal.behind == 0 and len(journal_mod.read(journal.path).steps) == 1
    assert JOURNAL_RETRY_S < 20.0


# --------------------------------------------------------------------------- SIGHUP


class Shown:
    """A display stand-in: what it was built with, what it showed, whether it was closed."""

    def __init__(self, settings: DisplayConfig) -> None:
        self.settings = settings
        self.screens: list[Any] = []
        self.closed = False
        self.switched_off = False

    def show(self, screen: Any) -> None:
        self.screens.append(screen)

    def close(self, *, switch_off: bool = True) -> None:
        self.closed = True
        self.switched_off = switch_off

    def abandon(self) -> None:
        pass


def test_a_stop_gives_up_a_gif_the_matrix_is_writing(tmp_path: Path) -> None:
    """SIGTERM while the recorder writes a GIF (a reload's, or the stop's own after an
    earlier stop): the matrix is told to give it up, so the stop does not wait for it."""
    shown = Shown(DisplayConfig())
    abandoned: list[bool] = []
    shown.abandon = lambda: abandoned.append(True)  # type: ignore[method-assign]
    service, _ = _service(VirtualClock(), [], display=shown)
    service.stop("SIGTERM")
    assert abandoned == [True]


def _reloading(tmp_path: Path, text: str) -> tuple[Service, list[Shown], VirtualClock, Path]:
    path = tmp_path / "companion.toml"
    path.write_text('[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n')
    config = load_config(path)
    built: list[Shown] = []

    def factory(settings: DisplayConfig) -> Shown:
        if settings.luma["width"] == 999:
            from companion.errors import ConfigError

            raise ConfigError("Display options width=999: too wide.")
        built.append(Shown(settings))
        return built[-1]

    clock = VirtualClock()
    path_after = tmp_path / "after.toml"
    path_after.write_text(text)
    service, _ = _service(clock, [(0.0, _dump(_setup())), (1.0, Reload(0, str(path_after))),
                                  (1.5, Stop(0))], config=config, display_factory=factory)
    service.display = factory(config.display)
    return service, built, clock, path_after


def test_sighup_rebuilds_the_display_and_leaves_the_game_alone(tmp_path: Path) -> None:
    service, built, _, _ = _reloading(
        tmp_path, '[display]\ndisplay = "dummy"\nwidth = 32\nheight = 16\n')
    state = service.referee.state
    service.run()
    assert len(built) == 2 and built[0].closed and not built[1].closed
    assert built[1].settings.luma["width"] == 32 and service.display is built[1]
    assert built[1].screens == [service.last_screen]  # the new matrix shows the game at once
    assert service.referee.state == state and service.config is not None
    assert service.config.display.luma["width"] == 32


def test_sighup_names_the_sections_that_wait_for_a_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service, built, _, _ = _reloading(
        tmp_path, '[game]\nplayers = 3\n[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n')
    with caplog.at_level(logging.INFO, logger="companion"):
        service.run()
    assert "[game] changed; that takes effect at the next start" in caplog.text
    assert len(built) == 1 and service.referee.rules.players(service.referee.state) == 2


def test_sighup_with_a_broken_file_keeps_the_running_display(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service, built, _, path = _reloading(tmp_path, '[display]\nwidth = "wide"\n')
    with caplog.at_level(logging.ERROR, logger="companion"):
        service.run()
    assert len(built) == 1 and not built[0].closed
    assert f"{path}, line 2: [display] width must be" in caplog.text


def test_sighup_with_an_unusable_device_keeps_the_running_display(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service, built, _, _ = _reloading(
        tmp_path, '[display]\ndisplay = "dummy"\nwidth = 999\nheight = 16\n')
    with caplog.at_level(logging.ERROR, logger="companion"):
        service.run()
    assert len(built) == 1 and not built[0].closed and service.display is built[0]
    assert service.config is not None and service.config.display.luma["width"] == 16
    assert ("display reload failed: Display options width=999: too wide; keeping the current "
            "display") in caplog.text


def test_sighup_to_the_same_kind_of_device_leaves_the_matrix_lit_for_the_new_one(
    tmp_path: Path,
) -> None:
    service, built, _, _ = _reloading(
        tmp_path, '[display]\ndisplay = "dummy"\nwidth = 32\nheight = 16\n')
    service.run()
    assert built[0].closed and not built[0].switched_off  # the new device drives it now


def _real_reload(tmp_path: Path, after: str, factory: Any) -> tuple[Any, Path]:
    """A service built from a file with a dummy matrix, on ``factory``'s pins, and a second
    file to reload."""
    from companion.daemon.service import build

    path = tmp_path / "companion.toml"
    path.write_text(f'[board]\nport = "loop://"\n[journal]\ndirectory = "{tmp_path}"\n'
                    '[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n')
    stack = ExitStack()
    service = build(load_config(path), stack, pin_factory=factory, notifier=Notifier())
    (tmp_path / "after.toml").write_text(after)
    return service, stack


def test_a_reload_whose_device_fails_to_open_keeps_the_matrix_and_the_loop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, pin_factory: Any
) -> None:
    # luma's linux_framebuffer reads /sys/class/graphics/fb99, which no machine has.
    service, stack = _real_reload(
        tmp_path, f'[board]\nport = "loop://"\n[journal]\ndirectory = "{tmp_path}"\n'
                  '[display]\ndisplay = "linux_framebuffer"\nframebuffer_device = "/dev/fb99"\n',
        pin_factory)
    with stack:
        first = service.display
        service.reload(str(tmp_path / "after.toml"))  # what SIGHUP does
        service.reload(str(tmp_path / "after.toml"))  # and again: the loop is still there
        service.stop("test over")
        with caplog.at_level(logging.ERROR, logger="companion"):
            assert service.run() is None
        assert service.display is first and service.config.display.luma["display"] == "dummy"
        drawn = first.frames_drawn
        service._show(replace(service.last_screen, message="still drawing"))
        assert first.wait_frames(drawn + 1, timeout=5)  # the old matrix is open and drawing
    failures = [r.getMessage() for r in caplog.records if "display reload failed" in r.getMessage()]
    assert len(failures) == 2
    assert failures[0].startswith("display reload failed: Display option "
                                  "display='linux_framebuffer': the device could not be set up")
    assert failures[0].endswith("; keeping the current display")


# --------------------------------------------------------------------------- parts opened later


class Flaky:
    """A display factory whose device appears at its third try (a desktop that starts late);
    ``tries`` holds the virtual times it was asked."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.tries: list[float] = []
        self.built: list[Shown] = []

    def __call__(self, settings: DisplayConfig) -> Shown:
        self.tries.append(self.clock.now)
        if len(self.tries) < 3:
            raise OSError(errno.ENOENT, "No such file or directory", "/dev/spidev0.0")
        self.built.append(Shown(settings))
        return self.built[-1]


def test_a_display_that_fails_at_start_is_tried_again_with_a_doubling_wait(
    systemd: Systemd, caplog: pytest.LogCaptureFixture
) -> None:
    from companion.daemon.service import RETRY_FIRST_S

    clock = VirtualClock()
    flaky = Flaky(clock)
    service, events = _service(clock, [(0.0, _dump(_setup())), (30.0, Stop(0))],
                               notifier=Notifier(systemd.address), config=Config(),
                               display_factory=flaky)
    with caplog.at_level(logging.INFO, logger="companion"):
        service.open_display()
        assert service.display is None
        service.run()
    assert flaky.tries == [0.0, RETRY_FIRST_S, 3 * RETRY_FIRST_S]  # waits of 2 s, then 4 s
    (display,) = flaky.built
    assert service.display is display and display.screens == [service.last_screen]
    assert events.timeouts[1] == pytest.approx(RETRY_FIRST_S)  # the loop woke for it, no polling
    assert "the display cannot be opened: [Errno 2] No such file or directory: " in caplog.text
    assert "refereeing on and trying again in 2 s" in caplog.text
    assert "the display opened at the 3rd try" in caplog.text
    statuses = [m["STATUS"] for m in systemd.messages() if "STATUS" in m]
    assert "no display (trying again)" in statuses[0] and "no display" not in statuses[-1]


def test_the_wait_between_tries_stops_growing_at_a_minute() -> None:
    from companion.daemon.service import RETRY_MAX_S

    clock = VirtualClock()
    tries: list[float] = []

    def never() -> None:
        tries.append(clock.now)
        raise OSError("no such device")

    service, _ = _service(clock, [(0.0, _dump(_setup())), (300.0, Stop(0))])
    service.open_later("display", never, OSError("no such device"))
    service.run()
    waits = [b - a for a, b in zip(tries, tries[1:], strict=False)]
    assert tries[0] == 2.0 and waits[:5] == [4.0, 8.0, 16.0, 32.0, RETRY_MAX_S]
    assert set(waits[5:]) == {RETRY_MAX_S}


def test_a_sighup_without_a_matrix_tries_to_open_it_at_once(tmp_path: Path) -> None:
    path = tmp_path / "companion.toml"
    path.write_text('[display]\ndisplay = "dummy"\n')
    clock = VirtualClock()
    flaky = Flaky(clock)
    flaky.tries = [0.0, 0.0]  # two tries failed already
    service, _ = _service(clock, [(0.0, _dump(_setup())), (1.0, Reload(0, str(path))),
                                  (1.5, Stop(0))], config=load_config(path),
                          display_factory=flaky)
    service.open_later("display", service._open_display, OSError("no SPI"))
    service.run()
    assert flaky.tries[2:] == [1.0] and service.display is flaky.built[0]


def test_a_display_that_cannot_be_opened_at_start_leaves_the_game_refereed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, pin_factory: Any
) -> None:
    from companion.daemon.service import build

    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(tmp_path), fsync=False))
    config = replace(config, board=replace(config.board, port="loop://"),
                     display=DisplayConfig(luma={"display": "linux_framebuffer",
                                                 "framebuffer_device": "/dev/fb99"}))
    with ExitStack() as stack, caplog.at_level(logging.ERROR, logger="companion"):
        service = build(config, stack, pin_factory=pin_factory, notifier=Notifier())
        assert service.display is None and service.controls is not None
        screens: list[Any] = []
        service.screen_listeners.append(screens.append)
        service.stop("test over")
        service.run()
    assert screens  # the referee went on: what it would show reaches the listeners
    assert "the display cannot be opened: Display option display='linux_framebuffer'" in (
        caplog.text)


# --------------------------------------------------------------------------- build


def test_build_resumes_the_journal_and_wires_every_part(
    tmp_path: Path, systemd: Systemd, pin_factory: Any
) -> None:
    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(tmp_path / "games"), fsync=False))
    config = replace(config, board=replace(config.board, port=str(tmp_path / "no-board")),
                     display=DisplayConfig(luma={"display": "dummy", "width": 16, "height": 16}))
    with ExitStack() as stack:
        first = build_service(config, stack, pin_factory, systemd)
        first.journal.step(1, 1, ENCELADUS.format_step(*_first_steps(1)[0]))
    with ExitStack() as stack:
        again = build_service(config, stack, pin_factory, systemd)  # the pins given back
        assert again.journal.path == first.journal.path
        assert again.referee.steps_committed == 1 and again.referee.syncing
        assert again.notifier.address == systemd.address
    header = json.loads(first.journal.path.read_text().splitlines()[0])
    assert header["seed"] == SEED and header["layout"] == "enceladus"


def _matrix_config(tmp_path: Path, columns: tuple[str, ...]) -> Config:
    """Mars on a 10 x 10 switch matrix, built in code (no file check ran on it)."""
    from companion.config import SwitchMatrixConfig

    rows = tuple(f"GPIO{n}" for n in (4, 5, 6, 12, 13, 16, 19, 20, 21, 26))
    config = Config(game=GameConfig(name="mars", seed=SEED),
                    journal=JournalConfig(directory=str(tmp_path), fsync=False),
                    display=DisplayConfig(luma={"display": "dummy", "width": 16, "height": 16}),
                    switches=SwitchMatrixConfig(rows=rows, columns=columns))
    return replace(config, board=replace(config.board, sensing="presence"))


def test_one_pin_factory_serves_every_part_so_gpiozero_refuses_a_shared_pin_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from companion.daemon.service import build
    from companion.errors import ConfigError

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")  # build makes the factory itself
    columns = ("GPIO2", "GPIO3", "GPIO14", "GPIO15", "GPIO18", "GPIO24", "GPIO25", "GPIO0",
               "GPIO1", "GPIO17")  # GPIO17 is the OK button's
    with pytest.raises(ConfigError) as refused, ExitStack() as stack:
        build(_matrix_config(tmp_path, columns), stack, notifier=Notifier())
    assert str(refused.value) == (
        "[switches] columns (column 10) and [buttons] ok both use GPIO17; each needs its own pin")
    assert list(tmp_path.glob("*.jsonl")) == []  # no journal of a game that never began


def test_without_a_pin_factory_the_game_is_refereed_and_the_pins_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from companion.daemon.service import build

    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(tmp_path), fsync=False),
                    display=DisplayConfig(luma={"display": "dummy", "width": 16, "height": 16}))
    config = replace(config, board=replace(config.board, port="loop://"))
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "tin")  # none works here
    clock = VirtualClock()
    with ExitStack() as stack, caplog.at_level(logging.INFO, logger="companion"):
        service = build(config, stack, clock=clock, notifier=Notifier())
        assert service.controls is None and service.display is not None
        assert "the GPIO pins cannot be opened: No GPIO pin factory works here" in caplog.text
        monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")  # the pins are there now
        clock.now = 2.0
        service.stop("test over")
        service.run()
        assert service.controls is not None
    assert "the GPIO pins opened at the 2nd try" in caplog.text


def build_service(config: Config, stack: ExitStack, factory: Any, systemd: Systemd) -> Any:
    from companion.daemon.service import build

    return build(config, stack, pin_factory=factory, notifier=Notifier(systemd.address))


# --------------------------------------------------------------------------- the next game


def test_ok_after_the_end_starts_the_next_game_with_its_own_journal(tmp_path: Path) -> None:
    # Player 2 has no flower in reach: the game is over from the start (case enc-end style).
    over = load("enceladus").CASES.position({
        "game": "enceladus", "options": {},
        "position": {"players": 2, "to_move": 1, "cells": {"a1": "M1", "j10": "M2"},
                     "reserves": {"1": {"blue": 1}, "2": {}}, "tube": {}, "used_actions": []}})
    assert ENCELADUS.outcome(over) is not None
    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(tmp_path)))
    clock = VirtualClock()
    link = Link()
    press = [(2.0, Button(0, "ok", True)), (2.1, Button(0, "ok", False))]
    service, _ = _service(clock, [(0.0, _dump(over)), *press, (3.0, Stop(0))], state=over,
                          config=config, link=link)
    service.run()
    assert ENCELADUS.outcome(service.referee.state) is None  # a new game...
    assert service.referee.state == ENCELADUS.new_game(2, SEED + 1, {})  # ...the next seed
    assert service.referee.syncing  # laid out as the matrix shows before any step counts
    assert protocol.RequestDump() in link.sent
    (journal,) = tmp_path.glob("*.jsonl")
    assert json.loads(journal.read_text().splitlines()[0])["seed"] == SEED + 1


def test_a_game_chosen_on_the_page_starts_at_once_and_the_next_games_follow_it(
    tmp_path: Path,
) -> None:
    from companion.events import StartGame

    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(tmp_path), fsync=False))
    first = journal_mod.Journal.create(tmp_path, {"game": "enceladus"}, fsync=False)
    chosen = StartGame(0, players=3, seed=77, options={"mode": "cooperative"},
                       names=("Ann", "", "Cy"))
    service, _ = _service(VirtualClock(), [(1.0, chosen), (2.0, Stop(0))], config=config,
                          link=Link(), journal=first)
    service.run()
    assert service.referee.state == ENCELADUS.new_game(3, 77, {"mode": "cooperative"})
    (started,) = set(tmp_path.glob("*.jsonl")) - {first.path}
    header = json.loads(started.read_text().splitlines()[0])
    assert (header["players"], header["seed"], header["options"], header["names"]) == (
        3, 77, {"mode": "cooperative"}, ["Ann", "", "Cy"])
    service._new_game()  # OK after its end: the same players, the next seed
    assert service.referee.state == ENCELADUS.new_game(3, 78, {"mode": "cooperative"})


def _stopped_at_once(journals: Path, pin_factory: Any) -> tuple[Any, list[Any]]:
    """A daemon of an Enceladus game keeping its journals in ``journals``, on a loop:// board,
    run and stopped at once; it and the screens it showed."""
    from companion.daemon.service import build
    from companion.display import make_device

    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(journals)))
    config = replace(config, board=replace(config.board, port="loop://"))
    screens: list[Any] = []
    with ExitStack() as stack:
        service = build(config, stack, pin_factory=pin_factory,
                        device=make_device({"display": "dummy", "width": 16, "height": 16}))
        service.screen_listeners.append(screens.append)
        service.stop("test over")
        service.run()
    return service, screens


def test_a_journal_folder_that_cannot_be_written_is_said_and_the_game_goes_on(
    tmp_path: Path, pin_factory: Any
) -> None:

    (tmp_path / "games").write_text("")  # a file where the folder should be
    service, screens = _stopped_at_once(tmp_path / "games", pin_factory)
    assert service.journal is None
    first = screens[0]
    assert first.urgent and first.message.startswith("Games are not saved")
    assert "is a file, not a folder" in first.message
    assert all(s.extra.get("journal") == "NOT saved" for s in screens)


def test_the_game_in_a_journal_folder_that_cannot_be_written_goes_on_unsaved(
    tmp_path: Path, pin_factory: Any
) -> None:

    folder = tmp_path / "games"
    played = _first_steps(3)
    header = {"game": "enceladus", "layout": "enceladus", "players": 2, "seed": SEED,
              "options": {}, "setup": ENCELADUS.format_position(played[0][0])}
    journal = journal_mod.Journal.create(folder, header)
    for number, (before, step) in enumerate(played, 1):
        journal.step(number, ENCELADUS.to_move(before), ENCELADUS.format_step(before, step))
    journal.close()
    (folder / ".lock").mkdir()  # the lock cannot be taken: the folder is not the daemon's to write
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    service, screens = _stopped_at_once(folder, pin_factory)
    assert service.journal is None
    assert service.referee.history == played and service.referee.state == ENCELADUS.apply(
        *played[-1])
    assert screens[0].message.startswith("Games are not saved")
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
