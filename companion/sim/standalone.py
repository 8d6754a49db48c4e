"""Playing on the standalone simulated board (``companion sim --serve``), for a daemon it
cannot see.

The served board gets nothing back from the daemon but requests for a hello or a dump: no
matrix, no buttons.  So it follows the game on its own: the same setup from the same seed,
every step it carries out applied to its own rules state.  Before it carries a step out it
rehearses it against the real referee in virtual time (:func:`companion.sim.harness.rehearse`)
with the daemon's default ``[board]`` settings: the board's own sensing, the Mars dice tray,
the Uranus card reader, and a show-tray on an identity board (a presence board, which cannot
tell the colours shown on it, has none).  The rehearsal says what the daemon will commit, and
which buttons a person must press at the companion: OK for a step a presence board cannot
see, Select and OK for a question the sensors cannot settle.

:class:`SimGame` is that game and the hands that move its pieces (real time, one piece at a
time); :class:`VirtualPlayers` play it (``--players``), preferring the steps the sensors
alone show; :mod:`companion.sim.console` lets a person type the steps (``--interactive``).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace

from companion.config import Config, GameConfig
from companion.errors import SimulationError
from companion.opponent import Strength
from companion.referee.referee import RefereeSettings
from companion.rules.base import Board, Cell, Outcome, Piece, Seated, SomeRules
from companion.sim.board import VirtualBoard
from companion.sim.handsetup import lay_out
from companion.sim.harness import Answer, Rehearsal, menu_label, rehearse
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
from companion.sim.players import VirtualSeats, chance_ops, choose_step
from companion.sim.scenario import Scenario

log = logging.getLogger("companion.sim")

Ask = Callable[[str, Rehearsal], bool]
"""``(sentence, rehearsal) -> bool``: a person presses the buttons ``rehearsal`` says at the
companion (its ``presses``, then its ``answers`` when the companion asks), as ``sentence``
says; False when nobody will."""


def press_sentence(presses: Sequence[str], answers: Sequence[str], why: str) -> str:
    """What to do at the companion, in words: ``'at the companion press OK, then choose
    "plant red" (Select moves, OK takes) for 3>0,1=red'``."""
    parts = [f"press {', '.join(p.upper() for p in presses)}"] if presses else []
    parts += [f'choose "{a}"' for a in answers]
    how = " (Select moves, OK takes)" if answers else ""
    return f"at the companion {', then '.join(parts)}{how} for {why}"


class SimGame:
    """The game the standalone board follows: ``setup``'s rules and position, ``board``'s
    pieces, and the hands that move them.

    ``speed``: a factor on every wait of the hands (2.0 moves twice as fast as people).
    ``stop``: set to end whatever the hands are doing.
    """

    def __init__(self, setup: Scenario, board: VirtualBoard, *, speed: float = 1.0,
                 stop: threading.Event | None = None) -> None:
        self.rules: SomeRules = setup.rules()
        self.state: Seated = setup.setup()
        self.layout = setup.layout
        self.board = board
        self.speed = speed
        self.stop = stop or threading.Event()
        self.presence = board.sensing == "presence"
        # A presence board cannot tell the colours shown on a tray, so it has none (as the
        # demo's): the daemon asks with Select and OK instead.
        self.settings = RefereeSettings(presence=self.presence, tray=not self.presence)
        cells = () if self.presence else self.rules.tray_cells(self.state)
        self.tray = sorted(cells, key=lambda c: (len(c), c))
        self._config = Config(game=GameConfig(setup.game, setup.players, setup.seed,
                                              setup.board, setup.options))

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended, ``None`` while it goes on."""
        return self.rules.outcome(self.state)

    @property
    def over(self) -> bool:
        return self.outcome is not None

    def expected(self) -> dict[Cell, Piece]:
        """The board as the game stands (tray cells empty)."""
        return self.rules.board(self.state)

    def script(self, step: Hashable, rng: random.Random, noise: Noise,
               changes: Mapping[Cell, Piece] | None = None) -> list[Op]:
        """How a person carries ``step`` out from the board as it stands: the pieces one at a
        time, the flowers shown on the tray, the dice rolled or the card held to the reader,
        and OK where a presence board cannot see the step.  Waits are divided by ``speed``.

        ``changes`` (cell -> piece): what the step does to the board; by default what the
        rules core says a legal ``step`` does (a forbidden one's come from
        :func:`companion.sim.forbidden.forbidden_changes`).
        """
        if changes is None:
            changes = self.rules.changes(self.state, step)
        path = self.rules.choice_path(self.state, step)
        ops = perform(self.board.board, changes, rng, noise, tray=self.tray,
                      tray_show=tray_flowers(path) if self.tray else ())
        ops += chance_ops(self.rules, self.state, step, rng)
        if self.presence and unseen_by_presence(self.board.board, changes):
            ops.append(Press(0.4, "ok"))  # a step the board cannot see: the players say so
        return self._paced(ops)

    def hands(self, changes: Mapping[Cell, Piece], rng: random.Random,
              noise: Noise) -> list[Op]:
        """The operations that take the board as it stands to ``changes`` (cell -> piece),
        one piece at a time, waits divided by ``speed``."""
        return self._paced(perform(self.board.board, changes, rng, noise))

    def lay_out(self, setup: Mapping[Cell, Piece], rng: random.Random) -> list[Op]:
        """How a person lays out ``setup`` by hand from the board as it stands, a piece at a
        time (:func:`companion.sim.handsetup.lay_out`); waits divided by ``speed``."""
        return self._paced(lay_out(self.board.board, setup, rng))

    def _paced(self, ops: list[Op]) -> list[Op]:
        # A sensor glitch (a few ms) stays as short as it is, whatever the speed.
        return [replace(op, wait=op.wait / self.speed) if op.wait >= 0.01 else op for op in ops]

    def rehearse(self, base: Mapping[Cell, Piece], ops: Sequence[Op],
                 answer: Answer = lambda options, level: None) -> Rehearsal:
        """What the daemon will make of ``ops`` played from ``base`` (the board when the game
        stood at :attr:`state`), its questions answered with ``answer``."""
        from companion.daemon.service import game_extensions

        return rehearse(self.rules, self.state, self.layout, base, ops, settings=self.settings,
                        extensions=game_extensions(self._config), answer=answer)

    def step_answer(self, step: Hashable) -> Answer:
        """Answers to the daemon's questions about ``step``: its own labels, level by level."""
        path = self.rules.choice_path(self.state, step)
        notation = self.rules.format_step(self.state, step)
        return lambda options, level: menu_label(path, notation, level)

    def carry_out(self, ops: Sequence[Op]) -> bool:
        """Move the pieces and send the dice and cards of ``ops`` in real time; presses are
        for a person at the companion and are left out.  False if stopped on the way."""
        for op in ops:
            if self.stop.wait(op.wait):
                return False
            if isinstance(op, Put):
                self.board.put(op.cell, op.piece)
            elif isinstance(op, Signal):
                self.board.send(op.message)
        return True


class VirtualPlayers:
    """Virtual players at the standalone board, in their own thread: every player of the
    game in turn chooses a legal step and carries it out piece by piece with ``noise``, and
    the daemon is left time to commit it before the next one goes.

    Waiting is blind: ``turn()`` returns when the next step may begin (False to stop); by
    default it waits ``pace`` seconds, a person's pause, ample for the daemon's settle time.
    With ``setup`` (every cell to its piece, :func:`companion.sim.handsetup.draw_setup`) the
    players first lay the garden out by hand from the board as it stands.
    Of up to ``tries`` random steps the players take the first the daemon will commit with
    no button pressed; when every one needs a button (a forced Mars roll, a question a
    presence board cannot settle), they take one that does and ``ask`` a person to press
    the buttons at the companion; when nobody will, they stop.  With a ``strength``
    (:class:`~companion.sim.players.VirtualSeats`) the first step tried is the one a player of that
    strength makes, the others random ones.
    """

    def __init__(self, game: SimGame, *, seed: int, ask: Ask, pace: float = 2.0,
                 noise: Noise = PEOPLE, tries: int = 40,
                 turn: Callable[[], bool] | None = None, setup: Board | None = None,
                 strength: Strength | None = None) -> None:
        self.game = game
        self.setup = setup
        self.seats = None if strength is None else VirtualSeats(
            game.rules, game.state, [strength] * game.rules.players(game.state), seed=seed)
        self.rng = random.Random(seed)
        self.ask = ask
        self.noise = noise
        self.tries = tries
        self.turn = turn or (lambda: not game.stop.wait(pace))
        self.performed: list[str] = []
        self.questions = 0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._play, name="sim-players", daemon=True)

    def _choose(self) -> tuple[Hashable, list[Op], Rehearsal]:
        game, fallback = self.game, None
        for attempt in range(self.tries):
            if self.seats is None:
                step = choose_step(game.rules, game.state, self.rng)
            else:
                step = self.seats.step(game.state, None if attempt == 0 else Strength.QUICK)
            ops = game.script(step, self.rng, self.noise)
            rehearsal = game.rehearse(game.board.board, ops, game.step_answer(step))
            if rehearsal.committed != [game.rules.format_step(game.state, step)]:
                continue  # the noise made it look like something else: another step
            if not rehearsal.buttons:
                return step, ops, rehearsal
            fallback = fallback or (step, ops, rehearsal)
        if fallback is None:
            raise SimulationError(f"the companion would recognise none of {self.tries} steps tried")
        return fallback

    def _lay_out(self) -> bool:
        """Lay out :attr:`setup` by hand, one piece at a time, for a daemon that adopts the
        garden it is shown (``[game] setup = "board"``); the game goes on from it.  False if
        stopped on the way."""
        game = self.game
        assert self.setup is not None
        log.info("the players lay out the garden by hand")
        if not game.carry_out(game.lay_out(self.setup, self.rng)):
            return False
        game.state = game.rules.adopt_setup(game.state, self.setup)
        log.info("the garden is laid out: the daemon takes it after its settle time")
        return True

    def _play(self) -> None:
        game = self.game
        try:
            if self.setup is not None and not self._lay_out():
                return
            while not game.over and self.turn():
                step, ops, rehearsal = self._choose()
                notation = game.rules.format_step(game.state, step)
                player = game.rules.to_move(game.state)
                log.info("P%d plays %s", player, notation)
                if not game.carry_out(ops):
                    return
                if rehearsal.buttons:
                    self.questions += 1
                    sentence = press_sentence(rehearsal.presses, rehearsal.answers, notation)
                    if not self.ask(sentence, rehearsal):
                        log.warning("no one to press the companion's buttons: the virtual "
                                    "players stop")
                        return
                if self.seats is not None:
                    self.seats.played(game.state, step)
                game.state = rehearsal.state
                self.performed.append(notation)
            if game.outcome is not None:
                log.info("the game is over: %s", game.outcome.termination)
        except Exception as error:  # report, never leave the simulator hanging silently
            self.error = f"the virtual players stopped: {error}"
            log.exception("%s", self.error)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)
