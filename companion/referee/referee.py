"""The referee: one game, refereed from the board's sensor stream.

A pure state machine over events (:mod:`companion.events`): :meth:`Referee.handle` takes one
event and returns the effects (:mod:`companion.referee.effects`) for the service to carry out.
Time comes only from the events, so a recorded event log replays to the same commits.

How a turn flows (PRODUCT.md): field updates are debounced per cell; the observed board is
compared with the expected one and with every legal step (:mod:`.recognition`); a step that the
board completes is committed once the board has stayed so for the settle time, or at once when
the last change took a piece away and no other step could still be under way.  A board that
no legal step explains is shown cell by cell, with the buzzer, after the grace period; nothing is
committed until it is put right.  Undo takes the last step back and shows what to restore.
What the sensors cannot tell (a payment colour without a tray, the flowers drawn from the tube)
is asked with Select/OK.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from companion.board import protocol
from companion.display.screen import Screen
from companion.events import BadLine, BoardMessage, Button, Event, Fault, LinkState, Stop, Timer
from companion.referee.effects import (
    Buzz,
    Committed,
    GameOver,
    NewGame,
    Note,
    SetTimer,
    Show,
    Undone,
)
from companion.referee.recognition import (
    StepIndex,
    board_diff,
    guidance,
    on_the_way,
    sensed_board,
)
from companion.rules.base import EMPTY, Board, Cell, GameRules, Piece, tray_counts

Effects = list[Any]


@dataclass(frozen=True, slots=True)
class RefereeSettings:
    """Timing and fitted parts.  Times in seconds.

    ``debounce_s``: a cell change counts once it has lasted this long (sensor glitches are
    shorter).  ``settle_s``: a completed step whose last change put a piece down is committed
    after the board stayed unchanged this long (the piece may still be slid on).
    ``grace_s``: a board no legal step explains is flagged after this long.
    ``tray``: a show-tray is fitted (else payments and draws are asked with Select/OK).
    ``heartbeat_timeout_s``: silence after which the board counts as disconnected.
    ``presence``: the board reports only empty/occupied; identities are tracked from the
    setup and the steps, and asked only where occupancy cannot tell.
    """

    debounce_s: float = 0.02
    settle_s: float = 0.4
    grace_s: float = 1.5
    tray: bool = True
    heartbeat_timeout_s: float = 2.0
    presence: bool = False


DEFAULT_SETTINGS = RefereeSettings()


@dataclass
class Question:
    """A choice the sensors cannot make: ``steps`` still possible, asked level by level."""

    steps: list[Hashable]
    level: int
    options: list[str]
    diff: dict[Cell, Piece]
    index: int = 0


class Extension(Protocol):
    """Game-specific inputs that are not pieces on cells: the Mars dice tray or dice buttons,
    the Uranus card reader, a penalty confirmed with OK.

    ``handle`` sees board messages the referee does not use itself (``Dice``, ``Card``) and
    button presses while no question is open; it returns the effects, or ``None`` when the
    event is not its business.  It commits through :meth:`Referee.commit`.  ``decorate``
    adds its part to every screen (a prompt to roll, the dice pool).
    """

    def handle(self, referee: Referee, event: Event) -> Effects | None: ...

    def decorate(self, referee: Referee, screen: Screen) -> Screen: ...


@dataclass
class _Pending:
    piece: Piece
    since: float


@dataclass
class Referee:
    """Referee of one game.

    ``rules`` is a game's :class:`GameRules`; ``state`` the position to start from;
    ``layout_name`` the board layout the board controller must announce (``"enceladus"``...);
    ``history`` the ``(state_before, step)`` pairs already committed (resume after a restart).
    ``syncing`` starts the referee waiting for the board to match ``state`` before it recognises
    any step (a fresh setup, a resumed game).  ``extensions`` take the inputs that are not
    pieces on cells (dice, cards, a penalty to confirm), see :class:`Extension`.
    """

    rules: GameRules[Any, Any]
    state: Any
    layout_name: str
    settings: RefereeSettings = field(default_factory=RefereeSettings)
    history: list[tuple[Any, Any]] = field(default_factory=list)
    syncing: bool = True
    extensions: list[Extension] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.layout: tuple[Cell, ...] = self.rules.layout(self.state)
        self.layout_set = frozenset(self.layout)
        self.tray: frozenset[Cell] = self.rules.tray_cells(self.state)
        self.observed: dict[Cell, Piece] = dict.fromkeys(self.layout, EMPTY)
        self.have_board = False
        self.pending: dict[Cell, _Pending] = {}
        self.last_change_t = 0.0
        self.last_change_removed = False
        self.question: Question | None = None
        self.warned = False
        self.grace_set = False
        self.unknown_cells: set[str] = set()
        self._new_state(self.state)

    # ------------------------------------------------------------------ state
    def _new_state(self, state: Any) -> None:
        # Everything derived from the state is computed once per committed step, never per
        # field update: the end test alone may try thousands of steps.
        self.state = state
        self.expected: dict[Cell, Piece] = self.rules.board(state)
        self.sensed_expected = (
            sensed_board(self.expected) if self.settings.presence else self.expected
        )
        self.index = StepIndex(self.rules, state, self.expected, self.settings.presence)
        self.touched: set[Cell] = set()
        self.outcome = self.rules.outcome(state)
        self.scores = tuple(self.rules.status(state))
        self.to_move = 0 if self.outcome is not None else self.rules.to_move(state)
        self.question = None

    @property
    def steps_committed(self) -> int:
        return len(self.history)

    # ------------------------------------------------------------------ events
    def start(self, now: float) -> Effects:
        """Effects to run once at start (the link asks the board for its hello and a dump)."""
        return [Show(self._screen(now))]

    def handle(self, event: Event) -> Effects:
        """Take one event; return the effects to carry out, in order."""
        if isinstance(event, BoardMessage):
            return self._message(event.t, event.message)
        if isinstance(event, Timer):
            return self._timer(event)
        if isinstance(event, Button):
            if not event.pressed:
                return []
            if event.name != "undo" and self.question is None:
                for extension in self.extensions:
                    effects = extension.handle(self, event)
                    if effects is not None:
                        return effects
            return self._button(event)
        if isinstance(event, LinkState):
            return self._link(event)
        if isinstance(event, BadLine):
            return []  # the link counts and logs refused lines; the game is not touched
        if isinstance(event, Fault):
            return [Note("error", f"{event.where}: {event.error}")]
        if isinstance(event, Stop):
            return []
        return [Note("warning", f"an event the referee does not know was ignored: {event!r}")]

    # ------------------------------------------------------------------ board messages
    def _message(self, now: float, message: Any) -> Effects:
        # Sequence gaps are the link's business: it asks for a dump (companion.board.link).
        # Any message shows the board is alive; silence longer than the timeout is flagged.
        return [
            SetTimer("heartbeat", now + self.settings.heartbeat_timeout_s),
            *self._board_message(now, message),
        ]

    def _board_message(self, now: float, message: Any) -> Effects:
        if isinstance(message, protocol.Hello):
            if message.layout != self.layout_name:
                return [
                    Note(
                        "error",
                        f"the board says it is a {message.layout} board but the "
                        f"companion is set up for {self.layout_name}",
                    ),
                    Show(
                        self._notice(
                            f"Wrong board: {message.layout}, expected {self.layout_name}", now
                        )
                    ),
                ]
            sensing = "presence" if self.settings.presence else "identity"
            if message.sensing != sensing:
                return [
                    Note(
                        "error",
                        f"the board senses {message.sensing} but the companion is "
                        f"set up for {sensing} ([board] sensing)",
                    ),
                    Show(self._notice(f"Board senses {message.sensing}, expected {sensing}", now)),
                ]
            return [
                Note(
                    "info",
                    f"board {message.board_id} ({message.firmware}, {message.sensing}) says hello",
                )
            ]
        effects: Effects = []
        if isinstance(message, protocol.Dump):
            return effects + self._dump(now, message)
        if isinstance(message, protocol.FieldUpdate):
            return effects + self._field(now, message.cell, message.piece)
        if isinstance(message, protocol.Heartbeat):
            return effects
        if isinstance(message, protocol.BoardErrorMessage):
            return effects + [
                Note("warning", f"the board reports error {message.code}: {message.text}")
            ]
        for extension in self.extensions:
            handled = extension.handle(self, BoardMessage(now, message))
            if handled is not None:
                return effects + handled
        return effects + [
            Note("info", f"{type(message).__name__} is not used in {self.rules.name}")
        ]

    def _dump(self, now: float, dump: Any) -> Effects:
        if len(dump.pieces) != len(self.layout):
            return [
                Note(
                    "error",
                    f"a board dump has {len(dump.pieces)} cells but the "
                    f"{self.layout_name} layout has {len(self.layout)}; ignored",
                )
            ]
        board = dict(zip(self.layout, dump.pieces, strict=True))
        if self.have_board:  # cells changed while we could not see them count as handled
            self.touched |= {c for c, p in board.items() if self.observed.get(c) != p}
        self.observed = board
        self.pending.clear()
        self.have_board = True
        self.last_change_t = now
        self.last_change_removed = False
        return [SetTimer("debounce", None), *self._evaluate(now)]

    def _field(self, now: float, cell: str, piece: Piece) -> Effects:
        if cell not in self.layout_set:
            if cell in self.unknown_cells:
                return []
            self.unknown_cells.add(cell)
            return [
                Note(
                    "warning",
                    f"the board reported cell {cell!r}, which the "
                    f"{self.layout_name} layout does not have; ignored",
                )
            ]
        if piece == self.observed[cell]:
            self.pending.pop(cell, None)  # a glitch shorter than the debounce time
        else:
            self.pending[cell] = _Pending(piece, now)
        return self._accept_due(now)

    def _accept_due(self, now: float) -> Effects:
        due = [
            c for c, p in self.pending.items() if now - p.since >= self.settings.debounce_s - 1e-9
        ]
        for cell in due:
            before = self.observed[cell]
            after = self.pending.pop(cell).piece
            self.observed[cell] = after
            self.touched.add(cell)
            self.last_change_t = now
            # Taken away: emptied, or a gardener lifted off its flower (or the flower from
            # under it); the piece cannot be slid on any more, so nothing else is under way.
            self.last_change_removed = on_the_way(after, before)
        effects: Effects = []
        if self.pending:
            first = min(p.since for p in self.pending.values())
            effects.append(SetTimer("debounce", first + self.settings.debounce_s))
        if due:
            effects += self._evaluate(now)
        return effects

    # ------------------------------------------------------------------ timers and buttons
    def _timer(self, event: Timer) -> Effects:
        now = event.t
        if event.name == "debounce":
            return self._accept_due(now)
        if event.name == "settle":
            return self._evaluate(now)
        if event.name == "grace":
            self.grace_set = False
            return self._evaluate(now, grace_over=True)
        if event.name == "heartbeat":
            seconds = self.settings.heartbeat_timeout_s
            return [
                Note("warning", f"the board has said nothing for {seconds:g} s"),
                Show(self._notice("Board disconnected: check the cable", now, urgent=True)),
            ]
        return []

    def _button(self, event: Button) -> Effects:
        now = event.t
        if event.name == "undo":
            return self.undo(now)
        if self.question is not None:
            question = self.question
            if event.name == "select":
                question.index = (question.index + 1) % len(question.options)
                return [Show(self._screen(now))]
            if event.name == "ok":
                chosen = question.options[question.index]
                steps = [s for s in question.steps if self._label(s, question.level) == chosen]
                return self._resolve(steps, now, level=question.level + 1)
        elif event.name == "ok" and self.outcome is not None:
            return [NewGame()]
        elif event.name == "ok" and self.settings.presence and self.have_board and not self._diff():
            # A step occupancy cannot show (a gardener from one flower to another): the
            # players say so with OK and pick it from a menu.
            hidden = [
                s
                for s in self.rules.legal_steps(self.state)
                if self.index.piece_changes(s) and not self.index.changes_of(s)
            ]
            if hidden:
                return self._resolve(hidden, now, level=0)
        return []

    def _link(self, event: LinkState) -> Effects:
        if event.up:
            return [
                Note("info", f"board connected: {event.detail}"),
                SetTimer("heartbeat", event.t + self.settings.heartbeat_timeout_s),
            ]
        self.have_board = False
        return [
            Note("warning", f"board disconnected: {event.detail}"),
            SetTimer("heartbeat", None),
            Show(self._notice("Board disconnected", event.t, urgent=True)),
        ]

    # ------------------------------------------------------------------ undo
    def undo(self, now: float) -> Effects:
        """Take back the last committed step (or the open question); the matrix shows what to
        put back, and no step is recognised until the board matches again."""
        if self.question is not None:
            self.question = None
            return [Show(self._screen(now))]
        if not self.history:
            return [Show(self._notice("Nothing to undo", now))]
        before, step = self.history.pop()
        text = self.rules.format_step(before, step)
        number = len(self.history) + 1
        self._new_state(before)
        self.syncing = True
        return [
            Undone(number, text),
            Note("info", f"step {number} ({text}) taken back"),
            *self._evaluate(now),
        ]

    # ------------------------------------------------------------------ recognition
    def _diff(self) -> dict[Cell, Piece]:
        return board_diff(self.sensed_expected, self.observed, self.tray)

    def _evaluate(self, now: float, *, grace_over: bool = False) -> Effects:
        if not self.have_board:
            return [Show(self._screen(now))]
        diff = self._diff()
        over = self.outcome
        if not diff:
            self.syncing = False
            self.warned = False
            self.question = None
            return [SetTimer("grace", None), SetTimer("settle", None), Show(self._screen(now))]
        if self.syncing or over is not None:
            return [Show(self._screen(now, diff=diff))]
        if self.question is not None and self.question.diff == diff:
            return []  # the board still shows what the open question is about
        explaining, completing = self.index.explaining(diff, self.touched)
        if explaining:
            self.warned = False
            effects: Effects = [SetTimer("grace", None)]
            self.grace_set = False
            if completing:
                settled = now - self.last_change_t >= self.settings.settle_s - 1e-9
                at_once = self.last_change_removed and len(explaining) == len(completing)
                if settled or at_once:
                    return effects + self._resolve(completing, now, level=0)
                effects.append(SetTimer("settle", self.last_change_t + self.settings.settle_s))
            self.question = None
            return effects + [Show(self._screen(now, diff=diff, explaining=explaining))]
        self.question = None
        if grace_over or self.warned:
            first = not self.warned
            self.warned = True
            screen = self._screen(now, diff=diff, wrong=self._wrong_cells(diff))
            return [Show(screen), *([Buzz("illegal")] if first else [])]
        if not self.grace_set:
            self.grace_set = True
            return [SetTimer("grace", now + self.settings.grace_s)]
        return []

    def _wrong_cells(self, diff: dict[Cell, Piece]) -> set[Cell]:
        """The differing cells that no legal step explains on its own (all of them when each
        alone is explainable but not together)."""
        wrong = set()
        for cell, piece in diff.items():
            if not self.index.explaining({cell: piece})[0]:
                wrong.add(cell)
        return wrong or set(diff)

    def _label(self, step: Hashable, level: int) -> str:
        """What a question at ``level`` calls ``step``: its choice path there, else its
        notation (the last resort that always tells steps apart)."""
        path = self.rules.choice_path(self.state, step)
        return path[level] if level < len(path) else self.rules.format_step(self.state, step)

    def _resolve(self, steps: Sequence[Hashable], now: float, *, level: int) -> Effects:
        """Commit the step among ``steps`` (all leaving the observed board), asking the players
        when they lead to different states and neither the tray nor the sensors can tell.

        The tray narrows the steps first; only then do steps that lead to the same state count
        as one (paying blue and drawing three blue leaves what paying purple and drawing three
        purple leaves, but the journal records what the players did).
        """
        candidates = list(steps)
        if self.settings.tray and level == 0:
            shown = tray_counts(self.observed, self.tray)
            filtered = self.rules.tray_filter(self.state, candidates, shown)
            if filtered:
                candidates = filtered
            elif not shown and len({self.rules.apply(self.state, s) for s in candidates}) > 1:
                self.question = None
                return [Show(self._notice("Show on the tray the flowers you paid or drew", now))]
        if self.settings.presence and level == 0:
            # The players handled these cells: the step that accounts for most of them is the
            # one they made (a swap of b3 and d5, not of two flowers nobody touched).
            reach = {s: len(self.touched & self.index.piece_changes(s).keys()) for s in candidates}
            best = max(reach.values())
            candidates = [s for s in candidates if reach[s] == best]
        if len({self.rules.apply(self.state, s) for s in candidates}) == 1:
            return self._commit(candidates[0], now)
        options: list[str] = []
        for step in candidates:
            label = self._label(step, level)
            if label not in options:
                options.append(label)
        if len(options) == 1:  # this level tells nothing: ask the next one
            return self._resolve(candidates, now, level=level + 1)
        self.question = Question(candidates, level, options, self._diff())
        return [Buzz("question"), Show(self._screen(now))]

    def commit(self, step: Hashable, now: float) -> Effects:
        """Commit ``step`` (one the board cannot show: a roll, a scored card, a penalty).

        Raises :class:`companion.errors.IllegalMoveError` when it is not legal now; nothing
        changes then.
        """
        self.rules.apply(self.state, step)  # raises before anything changes
        return self._commit(step, now)

    def screen(self, now: float) -> Screen:
        """The screen for the situation now (what an extension shows after its own notice)."""
        return self._screen(now, diff=self._diff() if self.have_board else None)

    def notice(self, text: str, now: float, *, urgent: bool = False) -> Show:
        """A screen with ``text`` as its message, for an extension to show."""
        return Show(self._notice(text, now, urgent=urgent))

    def _commit(self, step: Hashable, now: float) -> Effects:
        before = self.state
        player = self.to_move
        text = self.rules.format_step(before, step)
        after = self.rules.apply(before, step)
        self.history.append((before, step))
        self._new_state(after)
        effects: Effects = [
            SetTimer("settle", None),
            SetTimer("grace", None),
            Committed(len(self.history), player, text, self.rules.format_position(after), after),
        ]
        if self.outcome is not None:
            effects.append(GameOver(self.outcome))
        return effects + self._evaluate(now)

    # ------------------------------------------------------------------ screens
    def _notice(self, text: str, now: float, *, urgent: bool = False) -> Screen:
        return replace(self._screen(now), message=text, urgent=urgent)

    def _screen(
        self,
        now: float,
        *,
        diff: dict[Cell, Piece] | None = None,
        explaining: list[Hashable] | None = None,
        wrong: set[Cell] | None = None,
    ) -> Screen:
        """The screen for the referee's situation now, with the extensions' parts."""
        screen = self._base_screen(now, diff=diff, explaining=explaining, wrong=wrong)
        for extension in self.extensions:
            screen = extension.decorate(self, screen)
        return screen

    def _base_screen(
        self,
        now: float,
        *,
        diff: dict[Cell, Piece] | None,
        explaining: list[Hashable] | None,
        wrong: set[Cell] | None,
    ) -> Screen:
        scores, outcome, to_move = self.scores, self.outcome, self.to_move
        base = Screen(
            game=self.rules.name,
            layout=self.layout_name,
            cells=dict(self.expected),
            scores=scores,
            to_move=to_move,
            ranking=tuple((p, r) for p, r, _ in outcome.ranking) if outcome is not None else (),
        )
        if not self.have_board:
            return replace(base, message="Waiting for the board...")
        if self.question is not None:
            q = self.question
            return replace(
                base,
                message=f"P{to_move}: which one? Select, then OK",
                menu=tuple(q.options),
                menu_index=q.index,
            )
        if wrong is not None:
            return replace(
                base,
                message="Not a legal move: put the cells shown right",
                highlights=dict.fromkeys(sorted(wrong), "wrong"),
                urgent=True,
            )
        if diff and (self.syncing or outcome is not None):
            what = (
                "Set up the board as shown" if not self.history else "Put the board back as shown"
            )
            return replace(base, message=what, highlights=_restore_roles(self.expected, diff))
        if outcome is not None:
            return replace(base, message=_outcome_text(outcome))
        if diff and explaining:
            cells = {**self.expected, **self.observed}
            return replace(
                base,
                cells={c: p for c, p in cells.items() if c in self.layout_set},
                highlights=guidance(self.index, self.expected, diff, explaining),
                message=f"P{to_move}: go on",
            )
        return replace(base, message=f"P{to_move}: your turn")


def _restore_roles(expected: Board, diff: dict[Cell, Piece]) -> dict[Cell, str]:
    return {cell: ("place" if expected.get(cell, EMPTY) else "pick") for cell in diff}


def _outcome_text(outcome: Any) -> str:
    if len(outcome.winners) == 1:
        head = f"Player {outcome.winners[0]} wins"
    else:
        head = "Shared win: " + ", ".join(f"P{p}" for p in outcome.winners)
    ranking = "  ".join(f"P{p} {text}" for p, text, _ in outcome.ranking)
    return ". ".join(part for part in (f"{head} ({outcome.termination})", ranking,
                                        "OK: new game") if part)
