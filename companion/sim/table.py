"""Virtual players at a real-time table: the simulated board, gpiozero mock buttons, the matrix.

:class:`TablePlayers` plays a game the way people do: it chooses a legal step, performs it one
piece at a time on a :class:`~companion.sim.board.VirtualBoard` (real time, with noise), answers
the matrix's questions by pressing Select and OK on gpiozero's mock pins, and waits until the
companion confirms its step before the next player goes (so :attr:`Noise.reach_in` is the
virtual-time harness's alone). It reads the matrix through the screens the daemon shows and the
steps it commits, as a person reads the LED matrix.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from companion.config import Config
from companion.opponent import Strength
from companion.referee.effects import Committed
from companion.referee.screen import Screen
from companion.rules.base import Seated, SomeRules
from companion.sim.board import VirtualBoard
from companion.sim.perform import (
    PEOPLE,
    Noise,
    Op,
    Press,
    Put,
    Signal,
    perform,
    tray_flowers,
    unseen_by_presence,
)
from companion.sim.players import (
    VirtualSeats,
    announced_ops,
    announced_step,
    cards_for_the_companion,
    chance_ops,
    choose_step,
)

if TYPE_CHECKING:
    from gpiozero.pins.mock import MockPin  # gpiozero has no types
    from luma.core.device import device as LumaDevice  # nor has luma

    from companion.daemon.service import Service

log = logging.getLogger("companion.sim")

_STEADY = Noise.none()

CORRECTED_S = 2.0
"""Seconds the players give a step shown other than theirs to be corrected (its last piece
landed a moment after it was committed) before they take it back: the debounce and the
daemon's handling of the last update, with room for a loaded machine."""
"""The hands of a player who has just seen their step misread: no slips this time."""


class TablePlayers:
    """Virtual players for one game, in their own thread.

    ``pins``: button name -> the gpiozero mock pin wired to it (pull-up: pressed = low).
    ``speed``: a factor on every wait (2.0 plays twice as fast as :class:`Noise` paces), but
    a hand's: ``debounce_s`` is the board's ``[board] debounce_ms`` in seconds, and a piece
    lifted or set down stays so at least twice that long, as a hand does, however fast the
    speed (a flower taken and a Martian set on its square in less would be no change to a
    presence board, and the step never seen whole); a contact glitch keeps its few ms.
    ``step_timeout``: seconds to wait for the matrix to confirm a step before giving up;
    ``on_stuck(reason)`` is called then (and when the players fail).  ``strengths``: each
    player's :class:`~companion.opponent.Strength` (:class:`~companion.sim.players.VirtualSeats`:
    they hold their own hidden cards and roll their own dice); ``None`` keeps the plain
    random choice of :func:`~companion.sim.players.choose_step`.  ``seated()``: the daemon's
    rules as its referee sees them now; at the companion's seat the person carries out the
    step they announce (:func:`companion.sim.players.announced_step`), dealing it its cards
    first when the matrix asks for them.

    A step the matrix confirms as another one (a hand slowed down by a busy machine can rest
    longer than the settle time mid-step) is taken back as a person would: Undo, the pieces
    put back, the turn played again with steadier hands; :attr:`misread` counts them.
    """

    def __init__(
        self,
        rules: SomeRules,
        state: Seated,
        board: VirtualBoard,
        pins: dict[str, MockPin],
        *,
        seed: int,
        noise: Noise = PEOPLE,
        speed: float = 1.0,
        debounce_s: float = 0.0,
        step_timeout: float = 20.0,
        on_stuck: Callable[[str], None] | None = None,
        strengths: Sequence[Strength] | None = None,
        seated: Callable[[], SomeRules] | None = None,
    ) -> None:
        self.rules = rules
        self.seats = None if strengths is None else VirtualSeats(rules, state, strengths, seed=seed)
        self.seated = seated or (lambda: rules)
        self.state = state
        self.board = board
        self.pins = pins
        self.rng = random.Random(seed)
        self.noise = noise
        self.speed = speed
        self.debounce_s = debounce_s
        self.step_timeout = step_timeout
        self.on_stuck = on_stuck
        self.tray = sorted(rules.tray_cells(state), key=lambda c: (len(c), c))
        self._screen: Screen | None = None
        self._committed: list[tuple[int, object]] = []  # (number, state) of each commit
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self.steps = 0
        self.questions = 0
        self.misread = 0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._play, name="sim-players", daemon=True)

    # ------------------------------------------------------------------ reading the matrix
    def on_screen(self, screen: Screen) -> None:
        """Listener for the daemon's screens (what a person sees on the matrix)."""
        with self._changed:
            self._screen = screen
            self._changed.notify_all()

    def on_commit(self, committed: Committed) -> None:
        """Listener for the daemon's commits (the matrix confirming a step, or correcting
        the one it showed last)."""
        with self._changed:
            # A step of the same number again: the one before it was corrected or taken back.
            while self._committed and self._committed[-1][0] >= committed.number:
                self._committed.pop()
            self._committed.append((committed.number, committed.state))
            self._changed.notify_all()

    def _wait_for(self, path: tuple[str, ...], notation: str,
                  after: object) -> tuple[object] | None:
        """The state the companion commits next, as a 1-tuple; ``None`` on a stop or after
        ``step_timeout``.  Questions on the way are answered with ``path``/``notation``.
        A commit other than ``after`` (the state the players made) is taken only once it
        stood :data:`CORRECTED_S` uncorrected: a step committed while its last piece was on
        its way is corrected when the piece lands."""
        deadline = time.monotonic() + self.step_timeout
        answered: Screen | None = None
        wrong_until: float | None = None
        with self._changed:
            while True:
                # A commit seen before a stop still counts: the daemon may stop at the end
                # of the game before this thread wakes for its last commit.
                if self._committed:
                    if self._committed[0][1] == after or self._stop.is_set():
                        return (self._committed.pop(0)[1],)
                    if wrong_until is None:
                        wrong_until = time.monotonic() + CORRECTED_S
                    if time.monotonic() >= wrong_until:
                        return (self._committed.pop(0)[1],)
                    self._changed.wait(wrong_until - time.monotonic())
                    continue
                if self._stop.is_set():
                    return None
                screen = self._screen
                if screen is not None and screen.menu and screen is not answered:
                    answered = screen
                    self._changed.release()
                    try:
                        self._answer(screen, path, notation)
                    finally:
                        self._changed.acquire()
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)

    def _take_back(self, put_back: dict[str, str]) -> None:
        """Undo the step the companion misread and set ``put_back`` (cell -> piece) again."""
        self.misread += 1
        log.warning("the companion took step %d for another; the players take it back",
                    self.steps + 1)
        self._press("undo")
        self._perform(perform(self.board.board, put_back, self.rng, _STEADY))

    def _answer(self, screen: Screen, path: tuple[str, ...], notation: str) -> None:
        # A label names its level ("pay blue", "draw 2: red"): find ours in the menu.
        question = [o for o in (*path, notation) if o in screen.menu]
        wanted = question[0] if question else screen.menu[0]
        self.questions += 1
        presses = (screen.menu.index(wanted) - screen.menu_index) % len(screen.menu)
        for _ in range(presses):
            self._press("select")
        self._press("ok")
        time.sleep(0.1 / self.speed)

    # ------------------------------------------------------------------ hands
    def _press(self, name: str) -> None:
        pin = self.pins[name]
        # released longer than any debounce too, or two quick presses read as one
        time.sleep(max(self.rng.uniform(0.1, 0.2) / self.speed, 0.08))
        pin.drive_low()
        time.sleep(0.08)  # longer than any debounce: a real press
        pin.drive_high()

    def _perform(self, ops: list[Op]) -> None:
        for op in ops:
            if op.wait < 0.01:  # a contact glitch, as short at any speed
                time.sleep(op.wait)
            elif isinstance(op, Put):
                time.sleep(max(op.wait / self.speed, 2 * self.debounce_s))
            else:
                time.sleep(op.wait / self.speed)
            if isinstance(op, Put):
                self.board.put(op.cell, op.piece)
            elif isinstance(op, Signal):
                self.board.send(op.message)
            else:
                self._press(op.name)

    def _wait_until(self, done: Callable[[], bool]) -> bool:
        """Wait, screen by screen, until ``done()``; ``False`` on a stop or after
        ``step_timeout``."""
        deadline = time.monotonic() + self.step_timeout
        with self._changed:
            while not self._stop.is_set():
                if done():
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return False

    def _wait_for_turn(self) -> bool:
        """Wait, as a person does, until the matrix prompts a player ("P1: ..."): the daemon
        has the board and sees it set up.  ``False`` on a stop or after ``step_timeout``."""
        return self._wait_until(lambda: self._screen is not None
                                and re.match(r"P\d", self._screen.message) is not None)

    def _play(self) -> None:
        try:
            if not self._wait_for_turn():
                if not self._stop.is_set():
                    self.error = "the companion never showed that the board is set up"
                    log.error("%s", self.error)
                return
            steady = False
            while not self._stop.is_set() and self.rules.outcome(self.state) is None:
                held = None if self.seats is None else self.seats.known(
                    self.rules.to_move(self.state))
                deal = cards_for_the_companion(self.seated(), self.state, self.rng, held)
                if deal:  # the matrix asks for the companion's cards first
                    self._perform(deal)
                    if not self._wait_until(lambda: announced_step(
                            self.seated(), self.state, random.Random()) is not None):
                        self.error = "the companion never announced its step"
                        return
                announced = announced_step(self.seated(), self.state, self.rng)
                if announced is not None:
                    step = announced
                elif self.seats is None:
                    step = choose_step(self.rules, self.state, self.rng)
                else:
                    step = self.seats.step(self.state)
                after = self.rules.apply(self.state, step)
                path = self.rules.choice_path(self.state, step)
                notation = self.rules.format_step(self.state, step)
                changes = self.rules.changes(self.state, step)
                ops = perform(
                    self.board.board,
                    changes,
                    self.rng,
                    _STEADY if steady else self.noise,
                    tray=self.tray,
                    tray_show=tray_flowers(path) if self.tray else (),
                )
                if announced is not None:  # as the matrix announces it
                    ops += announced_ops(self.rules, self.state, step, self.rng)
                else:
                    ops += chance_ops(self.rules, self.state, step, self.rng)
                presence = self.board.sensing == "presence"
                if presence and unseen_by_presence(self.board.board, changes):
                    ops.append(Press(0.4, "ok"))  # a step the board cannot see: say so
                put_back = {cell: self.board.board[cell] for cell in changes}
                self._perform(ops)
                committed = self._wait_for(path, notation, after)
                if committed is not None and committed[0] != after and not self._stop.is_set():
                    self._take_back(put_back)
                    steady = True
                    if not self._wait_for_turn():
                        committed = None
                    else:
                        continue
                if committed is None or committed[0] != after:
                    if not self._stop.is_set():
                        self.error = (
                            f"the companion did not confirm step {self.steps + 1} "
                            f"({self.rules.format_step(self.state, step)})"
                        )
                        log.error("%s", self.error)
                    return
                if self.seats is not None:
                    self.seats.played(self.state, step)
                self.state = after
                self.steps += 1
                steady = False
        except Exception as error:  # report, never hang the demo
            self.error = f"virtual players stopped: {error!r}"
            log.exception("virtual players stopped")
        finally:
            if self.error and self.on_stuck is not None:
                self.on_stuck(self.error)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread.ident is not None:  # started
            self._thread.join(timeout=5)

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)


@dataclass
class SimulatedTable:
    """A daemon and its simulated board and players, seated by :func:`seat`."""

    service: Service
    players: TablePlayers
    board: VirtualBoard
    config: Config


def seat(
    config: Config,
    stack: ExitStack,
    *,
    device: LumaDevice,
    speed: float = 4.0,
    noise: Noise = PEOPLE,
    board_class: type[VirtualBoard] = VirtualBoard,
    strength: Strength | None = None,
    state: Seated | None = None,
    players_seed: int | None = None,
) -> SimulatedTable:
    """Lay out a new game of ``config`` on a simulated board, build the daemon around it
    exactly as ``companion run`` does (the board's pseudo-terminal as its port, gpiozero's
    MockFactory pins, ``device`` as the matrix) and seat virtual players at it.

    Nothing runs yet: start ``players`` and run ``service``.  Everything is closed by
    ``stack``.  ``board_class`` lets a benchmark stamp the board's writes.  ``strength``: how
    every virtual player plays (see :class:`TablePlayers`; ``None``, the plain random choice).
    ``state``: the position laid out and played on in place of a new game (a game the
    daemon resumes from its journal stands so on the board).  ``players_seed``: the seed of
    the players' choices, the game's seed by default (players started again take another,
    not to repeat the choices of their first start).
    """
    from gpiozero.pins.mock import MockFactory

    from companion.config import layout_name
    from companion.daemon.service import build
    from companion.rules import load

    rules = load(config.game.name).RULES
    if state is None:
        state = rules.new_game(config.game.players, config.game.seed,
                               config.game.rules_options())
    board = board_class(layout_name(config), rules.layout(state), rules.board(state),
                        sensing=config.board.sensing)
    stack.callback(board.close)
    board.start()
    config = replace(config, board=replace(config.board, port=board.port))
    factory = MockFactory()
    stack.callback(factory.close)
    service = build(config, stack, pin_factory=factory, device=device)
    pins = config.buttons.pins
    players = TablePlayers(
        rules, state, board,
        {name: factory.pin(getattr(pins, name)) for name in ("ok", "undo", "select", "roll")
         if getattr(pins, name)},
        seed=config.game.seed if players_seed is None else players_seed, noise=noise,
        speed=speed, debounce_s=config.board.debounce_ms / 1000, on_stuck=service.stop,
        strengths=None if strength is None else [strength] * config.game.players,
        seated=lambda: service.referee.rules,
    )
    service.screen_listeners.append(players.on_screen)
    service.commit_listeners.append(players.on_commit)
    stack.callback(players.stop)
    return SimulatedTable(service, players, board, config)
