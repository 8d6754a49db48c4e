"""Whole games in virtual time: virtual players, a noisy board, the real referee.

No threads, no pseudo-terminal, no sleeping: the board's field updates, the buttons and the
referee's timers are events on one virtual clock (a :class:`companion.referee.timers.Timeline`,
as for the scenario runner and the tests), so hundreds of noisy games run in seconds and
replay exactly from their seed.  What is checked is what recognition promises: every
step performed is committed exactly once, nothing else is committed, and the matrix raises no
alarm (the players only ever make legal steps).

The players behave like people (:data:`companion.sim.perform.PEOPLE`): besides the noise of
hands and sensors they hold pieces in the air, set one on a wrong cell, begin a step and put
it back, and the next player may reach in while the last step settles.  The board sends a
heartbeat every second, as the reference firmware does, so silence means what it would mean.

The real-time counterpart (a pseudo-terminal, the serial stack, gpiozero pins) is
:mod:`companion.sim.table`; both use the same scripts from :mod:`companion.sim.perform`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace

from companion.board import protocol
from companion.events import AnyEvent, BoardMessage, Button
from companion.referee.effects import Buzz, Committed, Effects, Show, Undone
from companion.referee.recognition import sensed
from companion.referee.referee import DEFAULT_SETTINGS, Extension, Referee, RefereeSettings
from companion.referee.screen import Screen
from companion.referee.seats import Seats
from companion.referee.timers import Timeline
from companion.rules.base import Board, Cell, Outcome, Seated, SomeRules, parse_piece
from companion.sim.handsetup import bare_board, deal_presses, lay_out
from companion.sim.perform import (
    PEOPLE,
    Noise,
    Op,
    Press,
    Put,
    Signal,
    chance,
    perform,
    tray_flowers,
    unseen_by_presence,
)
from companion.sim.players import (
    announced_ops,
    announced_step,
    cards_for_the_companion,
    chance_ops,
    choose_step,
)


@dataclass
class GameReport:
    """What one virtual game showed.  ``performed``/``committed``: step notations in order
    (``committed``: the steps in force, a step corrected replaced); ``false_commits``: steps
    nobody made left committed; ``missed``: steps made but never committed;
    ``false_alarms``: times the matrix turned urgent (a board shown as wrong, a step
    refused, the board said to be lost) or the buzzer sounded a refusal, though the players
    only ever make legal steps; ``corrections``: steps committed while their piece was still
    on its way and then taken back by the referee as the board moved on (a Martian slid
    on, a piece moved off a wrong cell), a matter of course, not an alarm;
    ``reached_in``: steps the next player began while the last one settled; ``questions``:
    Select/OK questions the players answered."""

    seed: int
    performed: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)
    false_commits: int = 0
    missed: int = 0
    false_alarms: int = 0
    corrections: int = 0
    reached_in: int = 0
    questions: int = 0
    over: bool = False
    outcome: Outcome | None = None
    seconds: float = 0.0


class VirtualTable:
    """A referee and virtual players on one virtual clock.

    ``rules``/``state``: the game and its setup (the board is laid out as the matrix shows).
    ``choose``: ``(rules, state, rng) -> step``, the players' strategy.  ``extensions``:
    the referee's game extensions (``companion.referee.<game>.extensions(config)``).
    ``heartbeat_s``: seconds between the board's heartbeats (``None``: none are sent).
    ``seats``: the companion's seats (:class:`companion.referee.seats.Seats`); at those the
    virtual person carries out the step the matrix announces instead of choosing one.
    """

    def __init__(
        self,
        rules: SomeRules,
        state: Seated,
        layout_name: str,
        *,
        seed: int,
        noise: Noise = PEOPLE,
        settings: RefereeSettings = DEFAULT_SETTINGS,
        choose: Callable[[SomeRules, Seated, random.Random], Hashable] = choose_step,
        extensions: Sequence[Extension] = (),
        heartbeat_s: float | None = 1.0,
        seats: Seats | None = None,
    ) -> None:
        self.rules = rules
        self.truth = state
        self.rng = random.Random(seed)
        self.noise = noise
        self.choose = choose
        self.seats = seats
        self.referee = Referee(rules, state, layout_name, settings, extensions=list(extensions),
                               seats=seats)
        self.sense = sensed if settings.presence else (lambda piece: piece)
        self.board = rules.board(state)
        self.tray = sorted(rules.tray_cells(state), key=lambda c: (len(c), c))
        # Looked up at each call: subclasses and tests wrap deliver and _run_effects.
        self.time = Timeline(lambda event: self.deliver(event),
                             on_effects=lambda effects: self._run_effects(effects))
        self.report = GameReport(seed)
        self.menu: tuple[tuple[str, ...], int] | None = None
        self.screen: Screen | None = None
        self.wire = 0
        self.heartbeat_s = heartbeat_s
        self.beat = heartbeat_s if heartbeat_s else math.inf  # the next heartbeat is due then
        self.alarmed = False  # the matrix shows an alarm now
        # The last step performed while it is not confirmed yet: its path and notation.
        self.settling: tuple[tuple[str, ...], str] | None = None

    # ------------------------------------------------------------------ plumbing
    @property
    def now(self) -> float:
        """The virtual clock, in seconds."""
        return self.time.now

    @now.setter
    def now(self, now: float) -> None:
        self.time.now = now

    def deliver(self, event: AnyEvent) -> Effects:
        """Hand one board or button event, or a timer the referee set, to the referee
        (benchmarks time this)."""
        return self.referee.handle(event)

    def _next_seq(self) -> int:
        seq = self.wire
        self.wire = (self.wire + 1) % protocol.SEQ_MODULO
        return seq

    def _run_effects(self, effects: Effects) -> None:
        """What the players see of ``effects`` (the timers are the timeline's)."""
        for effect in effects:
            if isinstance(effect, Committed):
                if effect.corrects is not None:
                    self.report.committed.pop()
                    self.report.corrections += 1
                self.report.committed.append(effect.step)
            elif isinstance(effect, Undone):  # the players never press Undo here
                self.report.committed.pop()
                self.report.corrections += 1
            elif isinstance(effect, Buzz) and effect.pattern == "illegal":
                self._alarm()
            elif isinstance(effect, Show):
                self.screen = screen = effect.screen
                self.menu = (screen.menu, screen.menu_index) if screen.menu else None
                if screen.urgent:
                    self._alarm()
                else:
                    self.alarmed = False

    def _alarm(self) -> None:
        # One alarm lasts until the matrix shows something calm again.
        if not self.alarmed:
            self.alarmed = True
            self.report.false_alarms += 1

    def _advance(self, until: float) -> None:
        """Deliver every event, timer and heartbeat due up to ``until`` (virtual seconds); a
        heartbeat after whatever comes at its time."""
        while self.beat <= until:
            self.time.advance(self.beat)
            beat = protocol.Heartbeat(seq=self._next_seq(),
                                      uptime_ms=int(self.now * 1000) % protocol.UPTIME_MODULO)
            self.beat += self.heartbeat_s or math.inf
            self.time.deliver(BoardMessage(self.now, beat))
        self.time.advance(until)

    def _play_ops(self, ops: list[Op]) -> None:
        t = self.now
        for op in ops:
            t += op.wait
            if isinstance(op, Put):
                self.board[op.cell] = op.piece
                update = protocol.FieldUpdate(
                    seq=self._next_seq(), cell=op.cell, piece=self.sense(op.piece)
                )
                self.time.post(BoardMessage(t, update))
            elif isinstance(op, Signal):
                self.time.post(BoardMessage(t, replace(op.message, seq=self._next_seq())))
            else:
                self.time.post(Button(t, op.name, True))
                self.time.post(Button(t + 0.08, op.name, False))
        self._advance(t)

    def _answer(self, path: tuple[str, ...], notation: str) -> bool:
        """Answer an open question for the step with ``path`` (and ``notation``, what a
        question names a step by past its path); False if none is open."""
        if self.menu is None:
            return False
        self.report.questions += 1
        self.pick(menu_label(path, notation, self.level))
        return True

    @property
    def level(self) -> int:
        """The level of the open question (0 for a game extension's menu)."""
        return self.referee.question.level if self.referee.question else 0

    def pick(self, label: str) -> None:
        """Answer the open menu with ``label`` as a person does: Select until it shows, then
        OK (a label not in the menu takes the first option)."""
        assert self.menu is not None
        options, index = self.menu
        target = options.index(label) if label in options else 0
        presses = [Press(0.3, "select") for _ in range((target - index) % len(options))]
        self._play_ops([*presses, Press(0.4, "ok")])

    # ------------------------------------------------------------------ a game
    def start(self) -> None:
        self.time.run(self.referee.start(self.now))
        pieces = tuple(self.sense(self.board[c]) for c in self.referee.layout)
        dump = protocol.Dump(seq=self._next_seq(), pieces=pieces)
        self.time.run(self.referee.handle(BoardMessage(self.now, dump)))

    def play_step(self) -> bool:
        """Choose, perform and wait for one step; False when the game is over or the referee
        missed a step or committed one nobody made.

        With :attr:`Noise.reach_in` the next player may reach in before the step is
        confirmed, where the referee can tell the two steps apart: on an identity board (a
        presence board cannot show whose piece came down), after a step that asked nothing
        (no hidden choice, no tray shown, no button) and does not end the game, when the
        next player's first touch is on a piece of their own.  (Not with dice rolled or a
        card shown first: a Uranus card shown while the last placement settles is taken as
        a question of its value, not held for the first turn.)  The steps are confirmed
        together after the last.
        """
        if self.rules.outcome(self.truth) is not None:
            return False
        announced = self._announced()
        step = announced if announced is not None else self.choose(
            self.rules, self.truth, self.rng)
        text = self.rules.format_step(self.truth, step)
        after = self.rules.apply(self.truth, step)
        changes = self.rules.changes(self.truth, step)
        path = self.rules.choice_path(self.truth, step)
        ops = perform(
            self.board,
            changes,
            self.rng,
            self.noise,
            tray=self.tray,
            tray_show=tray_flowers(path) if self.tray else (),
        )
        if announced is not None:
            ops += announced_ops(self.rules, self.truth, step, self.rng)
            if not changes:
                path = ()  # carried out with OK: nothing is asked
        else:
            ops += chance_ops(self.rules, self.truth, step, self.rng)
        if self.referee.settings.presence and unseen_by_presence(self.board, changes):
            ops.append(Press(0.4, "ok"))  # a step the board cannot see: say so
        if self.settling:
            if self._own_first_touch(ops):
                # Within the settle time of the last step, as a quick player does.
                early = self.rng.uniform(0.02, self.referee.settings.settle_s)
                ops[0] = replace(ops[0], wait=early)
                self.report.reached_in += 1
            elif not self._confirm(*self.settling):
                return False
        self.report.performed.append(text)
        claim = None if self.seats is None else self.seats.claim(self.rules, after)
        if claim is not None:  # the companion's Hexagon, claimed by the referee at once
            self.report.performed.append(self.rules.format_step(after, claim))
            after = self.rules.apply(after, claim)
        self._play_ops(ops)
        self.truth = after
        if (not path and not self.referee.settings.presence
                and not any(isinstance(op, Press) for op in ops)
                and self.rules.outcome(after) is None and chance(self.rng, self.noise.reach_in)):
            self.settling = (path, text)
            return True
        return self._confirm(path, text)

    def _announced(self) -> Hashable | None:
        """The step the matrix announces for the companion's seat now, as the person there
        carries it out (:func:`announced_step`); ``None`` at a person's seat.  The last step
        is confirmed first: the companion chooses once it is committed."""
        if self.seats is None or self.seats.strength(self.rules.to_move(self.truth)) is None:
            return None
        if self.settling:
            self._confirm(*self.settling)
        deal = cards_for_the_companion(self.referee.rules, self.truth, self.rng)
        if deal:  # the matrix asks for the companion's cards first
            self._play_ops(deal)
            self._advance(self.now + 0.5)
        return announced_step(self.referee.rules, self.truth, self.rng)

    def _own_first_touch(self, ops: list[Op]) -> bool:
        """Whether the next player's script begins on their own piece (lifted or put down)."""
        if not ops or not isinstance(ops[0], Put):
            return False
        first = ops[0]
        player = self.rules.to_move(self.truth)
        return first.cell not in self.tray and player in (
            parse_piece(self.board.get(first.cell, "")).player, parse_piece(first.piece).player)

    def _confirm(self, path: tuple[str, ...], text: str) -> bool:
        """Wait (answering questions about the step with ``path`` and notation ``text``) until
        every step performed is committed and the matrix shows the game as the players made
        it (a step committed while its last piece was on its way is corrected once it lands);
        count what was missed or committed wrongly."""
        self.settling = None
        expected = len(self.report.performed)
        deadline = self.now + 10.0
        while self.now < deadline:
            done = len(self.report.committed)
            if done > expected or (done == expected and self.referee.state == self.truth):
                break
            # A menu once the step is shown is the next step's (the dice to enter), not ours.
            if done == expected or not self._answer(path, text):
                self._advance(self.now + 0.1)
        committed = len(self.report.committed)
        if committed < expected:
            self.report.missed += expected - committed
            return False
        if self.referee.state != self.truth or committed > expected:
            self.report.false_commits += max(1, committed - expected)
            return False
        return True

    def lay_out(self, setup: Board) -> bool:
        """The players lay out ``setup`` (every cell to its piece) by hand on the board as it
        stands, one piece at a time, for a referee that adopts the setup it is shown
        (:attr:`Referee.adopt`), and wait up to 10 s for it to be taken; the game then goes
        on from it.  False when the referee did not take it, or took another."""
        self._play_ops(lay_out(self.board, setup, self.rng))
        deadline = self.now + 10.0
        while self.referee.adopt and self.now < deadline:
            self._advance(self.now + 0.1)
        if self.referee.adopt:
            return False
        self.truth = self.rules.adopt_setup(self.truth, setup)
        return bool(self.referee.state == self.truth)

    def enter_deal(self, deal: list[dict[str, int]]) -> bool:
        """The players enter the reserves ``deal``, dealt by hand, with Select and OK
        (:class:`companion.referee.deal.DealTable`); the game goes on from them.  False when
        the referee did not take them."""
        self._play_ops(deal_presses(deal, self.rng))
        self._advance(self.now + 0.5)
        self.truth = self.rules.deal_reserves(self.truth, deal)
        return bool(self.referee.state == self.truth)

    def play(self, max_steps: int = 2000, setup: Board | None = None,
             deal: list[dict[str, int]] | None = None) -> GameReport:
        """Play to the end (or ``max_steps``); the report says what happened.  With
        ``setup`` the game starts from the board with its garden still in the bag
        (:func:`companion.sim.handsetup.bare_board`), which the players lay out as
        ``setup`` (:meth:`lay_out`) for the referee to adopt; with ``deal`` they then enter
        the reserves they dealt by hand (:meth:`enter_deal`)."""
        if setup is not None:
            self.board = bare_board(self.rules, self.truth)
            self.referee.adopt = True
        self.start()
        if setup is not None and not self.lay_out(setup):
            self.report.seconds = self.now
            return self.report
        if deal is not None and not self.enter_deal(deal):
            self.report.seconds = self.now
            return self.report
        for _ in range(max_steps):
            if not self.play_step():
                break
        if self.settling:
            self._confirm(*self.settling)
        self._advance(self.now + 2.0)  # a late false commit would show here
        extra = len(self.report.committed) - len(self.report.performed)
        if extra > 0:
            self.report.false_commits += extra
        self.report.outcome = self.rules.outcome(self.referee.state)
        self.report.over = self.report.outcome is not None
        self.report.seconds = self.now
        return self.report


def menu_label(path: tuple[str, ...], notation: str, level: int) -> str:
    """What a question at ``level`` calls the step with ``path`` (its ``choice_path``) and
    ``notation``: the referee's own rule, the path's label there, else the notation."""
    return path[level] if level < len(path) else notation


@dataclass
class Rehearsal:
    """What a referee made of a script, by :func:`rehearse`: ``committed``, step notations
    in order; ``presses``, the buttons the script itself presses (OK for a step a presence
    board cannot see, a Mars turn with no dice to roll); ``answers``, the options chosen at
    the referee's questions (each with Select and OK), in order; ``question``, the options of
    a question left unanswered; ``wrong``, the cells shown as wrong at the end (no legal step
    explains the board); ``state``, the referee's game state at the end."""

    committed: list[str]
    presses: list[str]
    answers: list[str]
    question: tuple[str, ...]
    wrong: frozenset[Cell]
    state: Seated

    @property
    def buttons(self) -> bool:
        """Whether a person must press a button at the companion."""
        return bool(self.presses or self.answers)


Answer = Callable[[tuple[str, ...], int], str | None]
"""``(options, level) -> label``: how a question is answered; ``None`` leaves it open."""

MAX_ANSWERS = 12
"""Questions :func:`rehearse` answers at most (a step asks one per level of its path)."""


def rehearse(
    rules: SomeRules,
    state: Seated,
    layout_name: str,
    board: Board,
    ops: Sequence[Op],
    *,
    settings: RefereeSettings = DEFAULT_SETTINGS,
    extensions: Sequence[Extension] = (),
    answer: Answer = lambda options, level: None,
    seats: Seats | None = None,
) -> Rehearsal:
    """Play ``ops`` on ``board`` (every cell, showing ``state``) against a new referee of
    ``state`` in virtual time, the way a daemon with ``settings`` and ``extensions`` would
    take the same board messages and presses (``seats``: the companion's seats, whose
    announced step alone is recognised at its seat).  Each question before the first commit is
    answered with ``answer`` (a label not among the options leaves it open); one after it is
    about the next step and is left open.

    The clock runs until the settle and grace times have passed after the last operation or
    answer, so what is committed, asked or shown as wrong has happened by then.  The board's
    heartbeats are not rehearsed, so their silence counts for nothing.
    """
    table = VirtualTable(rules, state, layout_name, seed=0,
                         settings=replace(settings, heartbeat_timeout_s=math.inf),
                         extensions=extensions, heartbeat_s=None, seats=seats)
    table.board = dict(board)
    table.start()
    presses = [op.name for op in ops if isinstance(op, Press)]
    table._play_ops(list(ops))
    quiet = settings.settle_s + settings.grace_s + 0.5
    deadline = table.now + quiet
    question: tuple[str, ...] = ()
    answers: list[str] = []
    while table.now < deadline:
        # A question after a commit is about the next step: left open, as one nobody answers.
        if table.menu is not None and not question:
            options = table.menu[0]
            label = None
            if not table.report.committed and len(answers) < MAX_ANSWERS:
                label = answer(options, table.level)
            if label not in options:
                question = options
            else:
                answers.append(label)
                table.pick(label)
                deadline = table.now + quiet
            continue
        table._advance(min(deadline, table.now + 0.1))
    highlights = table.screen.highlights if table.screen is not None else {}
    wrong = frozenset(cell for cell, role in highlights.items() if role == "wrong")
    return Rehearsal(table.report.committed, presses, answers, question, wrong,
                     table.referee.state)
