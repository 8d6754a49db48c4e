"""The referee: one game, refereed from the board's sensor stream.

A pure state machine over events (:mod:`companion.events`): :meth:`Referee.handle` takes one
event and returns the effects (:mod:`companion.referee.effects`) for the service to carry out.
Time comes only from the events, so a recorded event log replays to the same commits.

How a turn flows: field updates are debounced per cell; the observed board is
compared with the expected one and with the legal steps (:mod:`.recognition`).  A step that the
board completes is committed at once, the debounce being all the wait sensor bounce needs,
unless the board may still become another step:

* a step that a longer legal step extends (a Martian moved and a flower taken, but another
  pick would take that flower too, as a soliflower; a disc on Swap flowers, which already
  swaps two flowers of one colour) is never committed by a pause, however long: the matrix
  asks "go on, or OK when done", and OK, or the next player's first handling, commits it;
* a piece just put down where it may only be on its way (another legal step puts it on a
  cell next to it, as when it was set on the wrong cell first, or carries that Martian or
  gardener on along the line it came, sliding or hopping over cells; on a presence board, a
  flower planted on an empty hex while its gardener may still be in the hand) is committed
  at once all the same, and stays open to a correction by hand: until anything else happens
  (the next player's first handling, a button, a roll or a card committed), a board that
  moves on from it to another step of the same player from the position before it (the
  Martian slid on, the disc moved to the slot it was meant for) takes it back and commits
  that step in its place (:class:`Correctable`), and a board put back as it was before it
  takes it back.  Only a step that ends the game waits the settle time instead, and, on a
  presence board, one of the next player that the update closing that window completes at
  once (a single piece set down, which may still be the last player's hand at work).

A board that no legal step explains is shown cell by cell, with the buzzer, after the grace
period; nothing is committed until it is put right.  Undo takes the last step back and shows
what to restore.  What the sensors cannot tell (a payment colour without a tray, the flowers
drawn from the tube) is asked with Select/OK; a question stands while nothing observed
changes, and any new observation (the tray, a dump that repairs a lost line) is weighed again,
so a question whose answer the sensors now give closes by itself.  A board that no single step
explains but a step followed by the next player's step does (a fast reply, both steps in one
read) commits the first step, then the second as usual.

No field update walks every legal step: a diff is weighed through the rules core's
candidates for its cells, read only as far as the question needs (:class:`.StepIndex`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from itertools import compress, repeat
from typing import Protocol, assert_never

from companion.board import protocol
from companion.board.debounce import Debounce
from companion.events import (
    AnyEvent,
    BadLine,
    BoardMessage,
    Button,
    Fault,
    Hint,
    LinkState,
    Reload,
    StartGame,
    Stop,
    Timer,
    TimerName,
)
from companion.referee.effects import (
    Adopted,
    Buzz,
    BuzzPattern,
    Committed,
    Effects,
    GameOver,
    NewGame,
    Note,
    NoteLevel,
    Send,
    SetTimer,
    Show,
    Undone,
)
from companion.referee.recognition import (
    Handling,
    StepIndex,
    beyond,
    board_diff,
    guidance,
    neighbours,
    off_garden,
    on_the_way,
    sensed_board,
)
from companion.referee.screen import Screen
from companion.referee.seats import SeatedRules, Seats
from companion.rules.base import (
    EMPTY,
    Board,
    Cell,
    Outcome,
    Piece,
    Seated,
    SomeRules,
    parse_piece,
    tray_counts,
)

DONE = "done"
"""The one option of the menu that asks whether a step the board shows is done (OK)."""

SET_UP = "Set up the board as shown"
"""The prompt of a setup not laid out yet: the cells still to fill are highlighted
(``place``), those to clear too (``pick``)."""

USE_GARDEN = "use this garden"
"""The one option of the menu beside "Set up the board as shown" on an identity board, before
the first step: OK takes the garden laid out by hand instead (:attr:`Referee.adopt`)."""


@dataclass(frozen=True, slots=True)
class RefereeSettings:
    """Timing and fitted parts.  Times in seconds.

    ``debounce_s``: a cell change counts once it has lasted this long (sensor glitches are
    shorter).  ``settle_s``: a completed step that ends the game, whose last change put a
    piece down where it may only be on its way (another legal step puts it next to there, or
    carries it on along its line), is committed after the board stayed unchanged this long;
    every other completed step is committed at once (one whose piece may be on its way open
    to a correction by hand, :class:`Correctable`).
    ``grace_s``: a board no legal step explains is flagged after this long.
    ``tray``: a show-tray is fitted (else payments and draws are asked with Select/OK).
    ``heartbeat_timeout_s``: silence after which the board counts as disconnected.
    ``presence``: the board reports only empty/occupied; identities are tracked from the
    setup and the steps, and asked only where occupancy cannot tell.
    The games' own inputs (their extensions read them): ``dice`` (Mars) where the dice come
    from, ``"tray"``, ``"buttons"`` or ``"virtual"``; ``roll_button``: a Roll button is wired;
    ``cards`` (Uranus) ``"reader"`` or ``"buttons"``; ``missions`` (Uranus) the path of the
    mission card catalogue, ``""`` for the one shipped with the companion;
    ``dealt_by_hand``: the reserves are dealt from the bag by hand and entered at the table.
    """

    debounce_s: float = 0.02
    settle_s: float = 0.4
    grace_s: float = 1.5
    tray: bool = True
    heartbeat_timeout_s: float = 2.0
    presence: bool = False
    dice: str = "tray"
    roll_button: bool = False
    cards: str = "reader"
    missions: str = ""
    dealt_by_hand: bool = False


DEFAULT_SETTINGS = RefereeSettings()


@dataclass
class Correctable:
    """The last step committed while its piece may still have been on its way, open to a
    correction by hand: ``before`` the state before it, ``number`` and ``text`` the step's
    number and notation, ``index`` the legal steps of ``before`` (of the same player),
    ``sensed_expected`` the board ``before`` shows to the sensors, ``touched`` the cells
    handled since ``before`` (noted on, for a presence board's order of handling)."""

    before: Seated
    number: int
    text: str
    index: StepIndex
    sensed_expected: dict[Cell, Piece]
    touched: Handling


@dataclass
class Question:
    """A choice the sensors cannot make: ``steps`` still possible, asked level by level.

    ``seen``: the observed board (every cell, the tray too) when it was last weighed.
    ``origin``: the steps it was weighed from, before the tray and the handled cells narrowed
    them; a new observation narrows them again.
    """

    steps: list[Hashable]
    level: int
    options: list[str]
    seen: dict[Cell, Piece]
    origin: list[Hashable]
    index: int = 0


class Extension(Protocol):
    """Game-specific inputs that are not pieces on cells: the Mars dice tray or dice buttons,
    the Uranus card reader, a penalty confirmed with OK.

    ``handle`` sees board messages the referee does not use itself (``Dice``, ``Card``) and
    button presses while no question is open; it returns the effects, or ``None`` when the
    event is not its business.  It commits through :meth:`Referee.commit`.  ``settled`` is
    called whenever the board comes to show the expected position (a step committed, a board
    put right): the extension weighs what it held back meanwhile (dice rolled while the last
    step settled) and returns the effects, ``[]`` for nothing.  ``held`` names the step such
    a held input gives in a state (``None`` for none), without committing it: the referee
    commits it when the board shows a step under way that only the state after it explains
    (the next player rolled and began to move before the last step settled).  ``decorate``
    adds its part to every screen (a prompt to roll, the dice pool).
    """

    def handle(self, referee: Referee, event: Button | BoardMessage) -> Effects | None: ...

    def settled(self, referee: Referee, now: float) -> Effects: ...

    def held(self, referee: Referee, state: Seated) -> Hashable | None: ...

    def decorate(self, referee: Referee, screen: Screen) -> Screen: ...


class Unknown(Enum):
    """A value not worked out yet."""

    UNKNOWN = 0


UNKNOWN = Unknown.UNKNOWN

_UNUSED: dict[type, str] = {protocol.Dice: "The dice tray", protocol.Card: "The card reader"}
"""The board's messages a game may have no use for, named for the note saying so."""


@dataclass
class Referee:
    """Referee of one game.

    ``rules`` is a game's :class:`GameRules`; ``state`` the position to start from;
    ``layout_name`` the board layout the board controller must announce (``"enceladus"``...);
    ``history`` the ``(state_before, step)`` pairs already committed (resume after a restart).
    ``syncing`` starts the referee waiting for the board to match ``state`` before it recognises
    any step (a fresh setup, a resumed game).  ``resumed``: the companion restarted in the
    middle of this game, so while it syncs a board that a legal step explains is that step,
    made (or still settling) while it was down, and goes on as if nothing had happened (a step
    taken back is never that step, nor one a presence board cannot show whole: the pieces
    swapped unseen while the companion was down are not known).  ``extensions`` take the
    inputs that are not pieces on cells (dice, cards, a penalty to confirm), see
    :class:`Extension`.  ``seats``: who plays each seat when the companion plays some
    (:mod:`companion.referee.seats`); ``None``: people everywhere.

    ``adopt``: the setup is the one the players lay out by hand (``[game] setup = "board"``,
    or OK on the *use this garden* menu of an identity board before the first step): until
    the board meets every setup condition of the rules, the matrix names the first condition
    broken and highlights the cells of all of them (empty ones to fill, the others as wrong);
    once it does and has stood still for the settle time, it is the game's setup
    (:class:`Adopted`) and the game starts from it.
    """

    rules: SomeRules
    state: Seated
    layout_name: str
    settings: RefereeSettings = field(default_factory=RefereeSettings)
    history: list[tuple[Seated, Hashable]] = field(default_factory=list)
    syncing: bool = True
    resumed: bool = False
    extensions: list[Extension] = field(default_factory=list)
    adopt: bool = False
    seats: Seats | None = None

    def __post_init__(self) -> None:
        if self.seats is not None and self.seats.playing:
            # At the companion's seat only its announced step is legal (SeatedRules).
            self.rules = self.seats.seated(self.rules)
        self.layout: tuple[Cell, ...] = self.rules.layout(self.state)
        self.layout_set = frozenset(self.layout)
        self.tray: frozenset[Cell] = self.rules.tray_cells(self.state)
        self.observed: dict[Cell, Piece] = dict.fromkeys(self.layout, EMPTY)
        # While an event is handled (_handling), the diff of the board last worked out, as
        # (sensed_expected, observations, diff).
        self._observations = 0
        self._handling = False
        self._diffed: tuple[dict[Cell, Piece], int, dict[Cell, Piece]] | None = None
        self.have_board = False
        self.pending: Debounce[Cell, Piece] = Debounce(self.settings.debounce_s)
        self.last_change_t = 0.0
        # The last change, when it put a piece down: (cell, what the cell read before).
        self.last_put: tuple[Cell, Piece] | None = None
        self.question: Question | None = None
        self.warned = False
        self.grace_set = False
        # Lines the link refused since the board's last good one, and when the last came:
        # silence full of them is garbage (a frame cut by a stall or a pull is one line).
        self.bad_lines = 0
        self.bad_line_t = 0.0
        self.unknown_cells: set[str] = set()
        # What the matrix says of a board whose hello is not this game's (see _hello).
        self.board_refused: str | None = None
        self._new_state(self.state)
        # A restart within a correction's window: the board may show the step corrected.
        self.correcting: Correctable | None = (
            self._correctable(*self.history[-1], len(self.history))
            if self.resumed and self.history else None)

    # ------------------------------------------------------------------ state
    def _new_state(self, state: Seated, outcome: Outcome | None | Unknown = UNKNOWN,
                   changes: dict[Cell, Piece] | None = None) -> None:
        # Everything derived from the state is computed once per committed step, never per
        # field update: the end test alone may try thousands of steps.  ``outcome``: the
        # state's end test when the step that led to it was weighed already; ``changes``:
        # what that step changed on the board before (GameRules.changes), when known.
        self.state = state
        if isinstance(self.rules, SeatedRules):
            self.rules.seats.announce(self.rules.core, state)  # before any step is weighed
        if changes is None:
            self.expected: dict[Cell, Piece] = self.rules.board(state)
            self.sensed_expected = (
                sensed_board(self.expected) if self.settings.presence else self.expected)
        else:
            self.expected, self.sensed_expected = self._boards_after(changes)
        self.index = StepIndex(self.rules, state, self.expected, self.settings.presence)
        self.touched = Handling()
        self._bursts: dict[frozenset[tuple[Cell, Piece]], list[Hashable]] = {}
        self.outcome = self.rules.outcome(state) if isinstance(outcome, Unknown) else outcome
        self.scores = tuple(self.rules.status(state))
        self.to_move = 0 if self.outcome is not None else self.rules.to_move(state)
        self.question = None
        # The board completes a step but may still become a longer one: OK commits it.
        self.awaiting = False

    def _boards_after(self, changes: dict[Cell, Piece]) -> tuple[dict[Cell, Piece],
                                                                 dict[Cell, Piece]]:
        """The board expected after a step of the state now that makes ``changes``
        (GameRules.changes), and as the sensors read it: the boards now with the step's few
        cells, not every cell worked out again (asked of candidates on a field update)."""
        expected = {**self.expected, **changes}
        if not self.settings.presence:
            return expected, expected
        return expected, {**self.sensed_expected, **sensed_board(changes)}

    @property
    def steps_committed(self) -> int:
        return len(self.history)

    # ------------------------------------------------------------------ events
    def start(self, now: float) -> Effects:
        """Effects to run once at start (the link asks the board for its hello and a dump)."""
        return [Show(self._screen(now))]

    def handle(self, event: AnyEvent) -> Effects:
        """Take one event; return the effects to carry out, in order."""
        self._handling = True
        try:
            return self._event(event)
        finally:
            self._handling, self._diffed = False, None

    def _event(self, event: AnyEvent) -> Effects:
        if isinstance(event, Button) and event.pressed:
            self.correcting = None  # a button answers the board as it stands
        match event:
            case BoardMessage():
                return self._message(event.t, event.message)
            case Timer():
                return self._timer(event)
            case Button() | Hint() if self.seats is not None and self.question is None and (
                    handled := self.seats.handle(self, event)) is not None:
                return handled
            case Hint():
                return []
            case Button():
                if not event.pressed:
                    return []
                if event.name != "undo" and self.question is None:
                    for extension in self.extensions:
                        effects = extension.handle(self, event)
                        if effects is not None:
                            return effects
                return self._button(event)
            case LinkState():
                return self._link(event)
            case BadLine():
                # The link counts and logs refused lines; the game is not touched.
                self.bad_lines += 1
                self.bad_line_t = event.t
                return []
            case Fault():
                return [Note(NoteLevel.ERROR, f"{event.where}: {event.error}")]
            case Stop() | Reload() | StartGame():
                return []  # the service's own business
            case _:
                assert_never(event)

    # ------------------------------------------------------------------ board messages
    def _message(self, now: float, message: protocol.Message) -> Effects:
        # Sequence gaps are the link's business: it asks for a dump (companion.board.link).
        # Any message shows the board is alive; silence longer than the timeout is flagged.
        self.bad_lines = 0
        return [
            SetTimer(TimerName.HEARTBEAT, now + self.settings.heartbeat_timeout_s),
            *self._board_message(now, message),
        ]

    def _board_message(self, now: float, message: protocol.Message) -> Effects:
        if isinstance(message, protocol.Hello):
            return self._hello(now, message)
        effects: Effects = []
        if self.board_refused is not None and isinstance(
                message, protocol.Dump | protocol.FieldUpdate):
            return []  # said at its hello: its pieces are not this game's
        if isinstance(message, protocol.Dump):
            return effects + self._dump(now, message)
        if isinstance(message, protocol.FieldUpdate):
            return effects + self._field(now, message.cell, message.piece)
        if isinstance(message, protocol.Heartbeat):
            return effects
        if isinstance(message, protocol.BoardErrorMessage):
            return effects + [
                Note(NoteLevel.WARNING, f"the board reports error {message.code}: {message.text}")
            ]
        if self.seats is not None:
            handled = self.seats.handle(self, BoardMessage(now, message))
            if handled is not None:
                return effects + handled
        for extension in self.extensions:
            handled = extension.handle(self, BoardMessage(now, message))
            if handled is not None:
                return effects + handled
        what = _UNUSED.get(type(message), f"a {type(message).__name__} message")
        return effects + [Note(NoteLevel.INFO, f"{what} is not used in Gardens of "
                                               f"{self.rules.name.capitalize()}")]

    def _hello(self, now: float, hello: protocol.Hello) -> Effects:
        """A board that speaks another major protocol version, says it is another game's
        board, or senses otherwise than the companion is set up for, is refused until one
        that is right says hello: its cells may bear this layout's names (a Mars board holds
        every cell of the Uranus hexagonal one) but not this game's pieces, and another
        version's lines may mean otherwise.  The right board's pieces are asked for again."""
        sensing = "presence" if self.settings.presence else "identity"
        if hello.major != protocol.VERSION:
            note = (f"the board speaks protocol version {hello.major}, this companion speaks "
                    f"version {protocol.VERSION}")
            refused = f"Board speaks protocol {hello.major}, expected {protocol.VERSION}"
        elif hello.layout != self.layout_name:
            note = (f"the board says it is a {hello.layout} board but the companion is set up "
                    f"for {self.layout_name}")
            refused = f"Wrong board: {hello.layout}, expected {self.layout_name}"
        elif hello.sensing != sensing:
            note = (f"the board senses {hello.sensing} but the companion is set up for "
                    f"{sensing} ([board] sensing)")
            refused = f"Board senses {hello.sensing}, expected {sensing}"
        else:
            was, self.board_refused = self.board_refused, None
            effects: Effects = [Note(
                NoteLevel.INFO,
                f"board {hello.board_id} ({hello.firmware}, {hello.sensing}) says hello")]
            if was is not None:
                effects += [Send(protocol.RequestDump()), Show(self._screen(now))]
            return effects
        self.board_refused = refused
        self.have_board = False
        self.pending.clear()
        return [Note(NoteLevel.ERROR, note), Show(self._screen(now))]

    def _dump(self, now: float, dump: protocol.Dump) -> Effects:
        if len(dump.pieces) != len(self.layout):
            return [
                Note(
                    NoteLevel.ERROR,
                    f"a board dump has {len(dump.pieces)} cells but the "
                    f"{self.layout_name} layout has {len(self.layout)}; ignored",
                )
            ]
        board = dict(zip(self.layout, dump.pieces, strict=True))
        if self.have_board:  # cells changed while we could not see them count as handled
            for cell, piece in board.items():
                if self.observed.get(cell) != piece:
                    self.touched.note(cell, piece)
        self.observed = board
        self._observations += 1
        self.pending.clear()
        self.have_board = True
        self.last_change_t = now
        self.last_put = None  # how the cells changed meanwhile is not known
        return [SetTimer(TimerName.DEBOUNCE, None), *self._evaluate(now)]

    def _field(self, now: float, cell: str, piece: Piece) -> Effects:
        if cell not in self.layout_set:
            if cell in self.unknown_cells:
                return []
            self.unknown_cells.add(cell)
            return [
                Note(
                    NoteLevel.WARNING,
                    f"the board reported cell {cell!r}, which the "
                    f"{self.layout_name} layout does not have; ignored",
                )
            ]
        self.pending.read(cell, piece, self.observed[cell], now)
        return self._accept_due(now)

    def _accept_due(self, now: float) -> Effects:
        due = self.pending.due(now)
        for cell, after, _ in due:
            before = self.observed[cell]
            self.observed[cell] = after
            self._observations += 1
            self.touched.note(cell, after)
            if self.correcting is not None:
                self.correcting.touched.note(cell, after)
            self.last_change_t = now
            # Taken away (emptied, a gardener lifted off its flower or the flower from under
            # it) or put down: only a piece put down may still be slid on.
            self.last_put = None if on_the_way(after, before) else (cell, before)
        effects: Effects = []
        next_at = self.pending.next_at()
        if next_at is not None:
            effects.append(SetTimer(TimerName.DEBOUNCE, next_at))
        if due:
            effects += self._evaluate(now)
        return effects

    # ------------------------------------------------------------------ timers and buttons
    def _timer(self, event: Timer) -> Effects:
        now = event.t
        match event.name:
            case TimerName.DEBOUNCE:
                return self._accept_due(now)
            case TimerName.SETTLE:
                return self._evaluate(now)
            case TimerName.GRACE:
                self.grace_set = False
                return self._evaluate(now, grace_over=True)
            case TimerName.HEARTBEAT:
                seconds = self.settings.heartbeat_timeout_s
                if self.bad_lines > 1 and now - self.bad_line_t < seconds:
                    # Talking but unreadable: a wrong baudrate or a noisy line, not a pull.
                    return [
                        Note(NoteLevel.WARNING,
                             f"the board has sent only garbled lines for {seconds:g} s"),
                        Show(self._notice("Board garbled: check cable and speed", now,
                                          urgent=True)),
                    ]
                return [
                    Note(NoteLevel.WARNING, f"the board has said nothing for {seconds:g} s"),
                    Show(self._notice("Board disconnected: check the cable", now, urgent=True)),
                ]
            case _:
                assert_never(event.name)

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
                return self._decide(steps, now, level=question.level + 1, origin=question.origin)
        elif event.name == "ok" and self.outcome is not None:
            return [NewGame()]
        elif event.name == "ok" and self._may_adopt():
            self.adopt = True
            return [SetTimer(TimerName.GRACE, None), *self._evaluate(now)]
        elif event.name == "ok" and self.awaiting:
            # The players say the step the board shows is done (not a longer one under way).
            self.awaiting = False
            return self._resolve(self._completed(self.diff()), now)
        elif event.name == "ok" and self.settings.presence and self.have_board and not self.diff():
            # A step occupancy cannot show (a gardener from one flower to another): the
            # players say so with OK and pick it from a menu.  Such a step changes no cell
            # but those the players handled (apart from gardeners on flowers).
            hidden = [
                s
                for s in self.index.candidates(frozenset(), frozenset(self.touched))
                if self.index.piece_changes(s) and not self.index.changes_of(s)
            ]
            if hidden:
                return self._resolve(hidden, now)
        return []

    def _link(self, event: LinkState) -> Effects:
        if event.up:
            return [
                Note(NoteLevel.INFO, f"board connected: {event.detail}"),
                SetTimer(TimerName.HEARTBEAT, event.t + self.settings.heartbeat_timeout_s),
            ]
        self.have_board = False
        return [
            Note(NoteLevel.WARNING, f"board disconnected: {event.detail}"),
            SetTimer(TimerName.HEARTBEAT, None),
            Show(self._notice(event.notice or "Board disconnected", event.t, urgent=True)),
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
        self.correcting = None
        self.syncing = True
        self.resumed = False  # the board may still show the step taken back
        return [
            Undone(number, text),
            Note(NoteLevel.INFO, f"step {number} ({text}) taken back"),
            *self._evaluate(now),
        ]

    # ------------------------------------------------------------------ a setup laid out by hand
    def _may_adopt(self) -> bool:
        """OK may take the garden on the board as the setup: before the first step, on a
        board that tells the pieces apart, while it differs from the seed's setup."""
        return (not self.adopt and not self.history and not self.settings.presence
                and self.have_board and self.syncing and self.outcome is None
                and self.question is None and bool(self.diff()))

    def _adopt(self, now: float) -> Effects:
        """Weigh the board as the setup the players laid out (:attr:`adopt`)."""
        problems = self.rules.setup_problems(self.state, self.observed)
        shown = replace(self._screen(now), cells={c: self.observed[c] for c in self.layout})
        if problems:
            # An empty cell named is one to fill; a piece named is in the wrong place.
            cells = sorted({c for problem in problems for c in problem.cells})
            more = f" ({len(problems) - 1} more)" if len(problems) > 1 else ""
            return [SetTimer(TimerName.SETTLE, None), Show(replace(
                shown, message=f"Setup: {problems[0].text}{more}",
                highlights={c: "place" if self.observed[c] == EMPTY else "wrong"
                            for c in cells}))]
        due = self.last_change_t + self.settings.settle_s
        if now < due - 1e-9:  # a hand may still be laying out the last pieces
            return [SetTimer(TimerName.SETTLE, due),
                    Show(replace(shown, message="Setup: checking..."))]
        state = self.rules.adopt_setup(self.state, self.observed)
        self.adopt = False
        return [
            SetTimer(TimerName.SETTLE, None),
            Note(NoteLevel.INFO, "the garden on the board is the setup"),
            *self.replace_setup(state, now),
        ]

    def replace_setup(self, state: Seated, now: float) -> Effects:
        """Before the first step, ``state`` is the game's setup from now on (the garden laid
        out by hand, reserves dealt by hand): :class:`Adopted` tells the service, for the
        journal's header, then the board is weighed against it."""
        self._new_state(state)
        return [Adopted(self.rules.format_position(state), state), *self._evaluate(now)]

    # ------------------------------------------------------------------ recognition
    def diff(self) -> dict[Cell, Piece]:
        """``{cell: observed piece}`` where the board differs from what the state shows its
        sensors, the tray aside (a new dict).  While an event is handled, worked out once per
        observation and state: the evaluation, the screen and the extensions' prompts all ask
        on one field update, and each asking compares every cell of the board."""
        kept = self._diffed
        if kept and kept[0] is self.sensed_expected and kept[1] == self._observations:
            return dict(kept[2])
        diff = board_diff(self.sensed_expected, self.observed, self.tray)
        if self._handling:
            self._diffed = (self.sensed_expected, self._observations, diff)
        return dict(diff)

    def _evaluate(self, now: float, *, grace_over: bool = False) -> Effects:
        if not self.have_board:
            return [Show(self._screen(now))]
        if self.adopt and not self.history:
            return self._adopt(now)
        diff = self.diff()
        over = self.outcome
        if self.syncing and self.resumed and any(
            not self.index.unseen(s) for s in self.index.explaining(diff)
        ):
            self.syncing = False  # a step made while the companion was down (and seen so)
        # On a presence board, a step of the next player that the same update completes while
        # the last step is still open to a correction may as well be the last player's hand
        # still at work (a piece set on a wrong cell and taken away): it waits the settle time.
        window = self.settings.presence and self.correcting is not None
        if self.correcting is not None and diff:
            corrected = self._correction(diff, now)
            if corrected is not None:
                return corrected
        question = self.question
        if question is not None and diff == board_diff(self.sensed_expected, question.seen,
                                                       self.tray):
            return self._reweigh(question, now)
        self.awaiting = False
        if not diff:
            self.syncing = False
            self.warned = False
            self.question = None
            cancel: Effects = [SetTimer(TimerName.GRACE, None), SetTimer(TimerName.SETTLE, None)]
            if over is None:
                for extension in self.extensions:
                    held = extension.settled(self, now)
                    if held:
                        return cancel + held
            return cancel + [Show(self._screen(now))]
        if self.syncing or over is not None:
            return [Show(self._screen(now, diff=diff))]
        self.question = None
        if self.index.explained(diff):
            self.warned = False
            effects: Effects = [SetTimer(TimerName.GRACE, None), SetTimer(TimerName.SETTLE, None)]
            self.grace_set = False
            # One step per set of changes is enough to tell whether the board is done.
            completing = self.index.completing(diff, self.touched, distinct=True)
            if completing:
                made = self._reach(completing)
                if self._extended(diff, made):
                    self.awaiting = True  # never committed by a pause: OK says it is done
                elif not self._in_transit(diff, made):
                    return effects + self._resolve(self._completed(diff), now)
                elif not window and not self._ends_game(made):
                    # Shown at once; the board may still move on to the step meant.
                    return effects + self._resolve(self._completed(diff), now, correctable=True)
                elif now - self.last_change_t >= self.settings.settle_s - 1e-9:
                    return effects + self._resolve(self._completed(diff), now)
                else:  # an end cannot be taken back by hand: the piece must stay first
                    settle_at = self.last_change_t + self.settings.settle_s
                    effects.append(SetTimer(TimerName.SETTLE, settle_at))
            return effects + [Show(self._screen(now, diff=diff, guide=True))]
        chance = self._held_step(self.state)
        if chance is not None:
            after = self.index.after(chance)
            if StepIndex(self.rules, after, self.expected, self.settings.presence).explained(diff):
                return self._commit(chance, now)
        firsts = self._first_of_two(diff)
        if firsts:
            self.warned = False
            return [SetTimer(TimerName.GRACE, None), *self._resolve(firsts, now)]
        if grace_over or self.warned:
            first = not self.warned
            self.warned = True
            screen = self._screen(now, diff=diff, wrong=self._wrong_cells(diff))
            return [Show(screen), *([Buzz(BuzzPattern.ILLEGAL)] if first else [])]
        if not self.grace_set:
            self.grace_set = True
            return [SetTimer(TimerName.GRACE, now + self.settings.grace_s)]
        return []

    def _reweigh(self, question: Question, now: float) -> Effects:
        """The open question, on an evaluation that finds the garden's diff unchanged.

        It stands while nothing observed changed.  A new observation elsewhere (the tray, a
        dump that repairs a lost line) is weighed once it has lasted the settle time: the
        question's steps narrowed again by the tray; the step is committed, or asked among
        fewer, when that tells more than the players have answered (the cursor is kept when
        it does not).
        """
        if question.seen == self.observed:
            return []
        if now - self.last_change_t < self.settings.settle_s - 1e-9:
            return [SetTimer(TimerName.SETTLE, self.last_change_t + self.settings.settle_s)]
        question.seen = dict(self.observed)
        narrowed = self._narrow(question.origin)
        if narrowed is None:
            return []  # the tray was cleared: it tells nothing, the question stands
        still = set(narrowed)
        kept = [s for s in question.steps if s in still]
        if len(kept) == len(question.steps):
            return []
        self.question = None
        if kept:
            return self._decide(kept, now, level=question.level, origin=question.origin)
        return self._decide(narrowed, now, level=0, origin=question.origin)

    def _completed(self, diff: dict[Cell, Piece]) -> list[Hashable]:
        """Every step ``diff`` completes, each payment and draw apart, among those the tray
        shows when it shows some (``[board]`` with a tray)."""
        shown = tray_counts(self.observed, self.tray) if self.settings.tray else None
        return self.index.completing(diff, self.touched, tray=shown)

    def _extended(self, diff: dict[Cell, Piece], steps: Sequence[Hashable]) -> bool:
        """Whether a legal step not yet complete extends one of ``steps`` (all completed by
        ``diff``): the board may still become that longer step.  Steps changing the same
        cells are asked about once."""
        cells = {frozenset(self.index.piece_changes(s)): s for s in steps}
        return any(
            self.index.extension(diff, self.touched, step) is not None for step in cells.values()
        )

    def _ends_game(self, steps: Sequence[Hashable]) -> bool:
        """Whether one of ``steps`` ends the game (the end is shown and journaled at once, so
        such a step is not committed while its piece may still be on its way)."""
        return any(self.index.ending(s) is not None for s in steps)

    def _correctable(self, before: Seated, step: Hashable, number: int) -> Correctable:
        """The window of step ``number``, ``step`` made from ``before``, as after a restart."""
        expected = self.rules.board(before)
        return Correctable(before, number, self.rules.format_step(before, step),
                           StepIndex(self.rules, before, expected, self.settings.presence),
                           sensed_board(expected) if self.settings.presence else expected,
                           Handling())

    def _correction(self, diff: dict[Cell, Piece], now: float) -> Effects | None:
        """The board moved on from the step open to a correction (:attr:`correcting`);
        ``diff`` is against its result.

        The board shows another step of the same player from the position before it: that
        step replaces it (committed as any step is, so it may stay open in turn).  The board
        is as it was before the step for the settle time: the step is taken back (sooner, it
        is the piece in the hand between a wrong cell and its own).  The board is on its way to
        another step of that player (the Martian lifted off to slide on): nothing is flagged
        meanwhile.  ``None`` when the board shows anything else, weighed as usual: the window
        closes when it shows the next player's handling, and stays open through a board no
        step explains (a Martian slid over empty cells on its way)."""
        c = self.correcting
        assert c is not None
        was = board_diff(c.sensed_expected, self.observed, self.tray)
        if not was and now - self.last_change_t < self.settings.settle_s - 1e-9:
            return [SetTimer(TimerName.GRACE, None),
                    SetTimer(TimerName.SETTLE, self.last_change_t + self.settings.settle_s)]
        if not was:
            self._revert(c)
            return [Undone(c.number, c.text),
                    Note(NoteLevel.INFO, f"step {c.number} ({c.text}) taken back by hand"),
                    *self._evaluate(now)]
        if c.index.completing(was, c.touched, distinct=True):
            self._revert(c)
            effects = self._evaluate(now)
            for n, effect in enumerate(effects):
                if isinstance(effect, Committed) and effect.number == c.number:
                    effects[n] = replace(effect, corrects=c.text)
                    note = f"step {c.number} corrected by hand: {effect.step}, not {c.text}"
                    return [Note(NoteLevel.INFO, note), *effects]
            # A step still to be confirmed with OK, or asked about: not committed yet.
            return [Undone(c.number, c.text),
                    Note(NoteLevel.INFO, f"step {c.number} ({c.text}) taken back by hand: "
                                         "the board shows another step"),
                    *effects]
        if self.index.completing(diff, self.touched, distinct=True) or (
                not c.index.explained(was) and self.index.explained(diff)):
            self.correcting = None
            return None
        if not c.index.explained(was):
            return None  # neither explains it (a Martian passing over empty cells): as usual
        self.grace_set = False
        return [SetTimer(TimerName.GRACE, None), SetTimer(TimerName.SETTLE, None)]

    def _revert(self, c: Correctable) -> None:
        """Take back the step of ``c`` inside the referee (the caller says so)."""
        self.correcting = None
        self.history.pop()
        self._new_state(c.before)
        self.index, self.touched = c.index, c.touched

    def _in_transit(self, diff: dict[Cell, Piece], steps: Sequence[Hashable]) -> bool:
        """Whether the piece the last change put down may only be on its way: another legal
        step, which explains the board as it was just before, puts the same piece (the one
        ``steps``, all completed by ``diff``, put there) farther along the line it came (a
        Martian or gardener moved across the board) or, for a piece from the hand or on a
        presence board, on a cell next to it.  A Martian slid over a square it could stop on,
        a gardener hopped over hexes as its die is counted, a piece set on a wrong cell first
        and moved on all look so until the piece stays.  On a presence board a gardener
        planting on an empty hex shows its whole step once the flower is down, the gardener
        still in the hand, so that flower waits too.  The steps read are those that explain
        the board as it was, weighed already while the piece was in the hand (its
        destinations shown then), or, when nothing else had changed, those that change one of
        those cells."""
        if self.last_put is None:
            return False
        cell, before = self.last_put
        was = dict(diff)
        if before == self.sensed_expected.get(cell, EMPTY):
            was.pop(cell, None)
        else:
            was[cell] = before
        for step in steps:
            changes = self.index.piece_changes(step)
            if cell not in changes:
                continue
            head = _head(changes[cell])
            if self.settings.presence and head != changes[cell] and before == EMPTY:
                return True  # a stack put on an empty cell: its gardener may be in the hand
            origin = _origin(self.expected, changes, cell)
            # A Martian moved across the board may be sliding on along its line; one from the
            # hand (a disc, a flower, a placement), or any piece a presence board cannot name,
            # may have been set down next to its cell first.
            ways = beyond(origin, cell) if origin is not None else []
            if origin is None or self.settings.presence:
                ways = neighbours(cell) + ways
            cells = [c for c in dict.fromkeys(ways) if c in self.layout_set]
            if was and off_garden(cell):
                # A disc beside its slot: only the next slots' own steps may put it there (a
                # few), not every step explaining the rest (each changes worked out).
                for there in cells:
                    for other in self.index.candidates(frozenset(was) | {there}, distinct=True):
                        puts = self.index.piece_changes(other).get(there)
                        if (puts is not None and _head(puts) == head
                                and self.index.explains(other, was)):
                            return True
                continue
            if was:
                # The piece lifted alone: its moves as the core lists them tell at once
                # whether it may still land farther on; any other step only when none does.
                if origin is not None and was.keys() == {origin} and \
                        self.index.moves_onto(was, cells):
                    return True
                # The steps explaining the board as it was are those weighed while the piece
                # was in the hand (its destinations shown then): read once, not per cell.
                for other in self.index.explaining(was):
                    changed = self.index.piece_changes(other)
                    if any(_head(changed[c]) == head for c in cells if c in changed):
                        return True
                continue
            for there in cells:  # nothing else changed: only the steps changing that cell
                for other in self.index.probing(frozenset({there})):
                    puts = self.index.piece_changes(other).get(there)
                    if puts is not None and _head(puts) == head:
                        return True
        return False

    def _first_of_two(self, diff: dict[Cell, Piece]) -> list[Hashable]:
        """The legal steps after which the next player's step explains what is left of
        ``diff``: two steps in one burst (the next player began within the settle time of the
        last, or both steps' changes came in one read).

        The next player's step may need a step the board cannot show first, one an extension
        holds (:meth:`Extension.held`: dice rolled into the tray meanwhile).  Only for a diff
        no single step explains, and cheap: the first step must change a cell where a piece
        of the player to move stood or stands now (its Martian's square, a landing, an action
        slot), which narrows the candidates to that piece's steps, and it may change only
        cells of the diff.  What is left must touch a piece of the next player (their Martian
        lifted or set down, their disc on a slot): flowers taken while a Martian slides over
        other cells are one step under way, not two.  Worked out once per diff and state (and
        again after :meth:`weigh`).
        """
        key = frozenset(diff.items())
        found = self._bursts.get(key)
        if found is not None:
            return found
        found = self._bursts[key] = []
        own = _owned(self.to_move, diff, self.expected)
        if not own:
            return found
        presence = self.settings.presence
        within = frozenset(diff) | frozenset(self.touched) if presence else frozenset(diff)
        for step in self.index.candidates(own, within):
            if not self.index.changes_of(step).keys() <= diff.keys():
                continue
            if self.index.ending(step) is not None:
                continue
            after = self.index.after(step)
            expected, sensed_after = self._boards_after(self.index.piece_changes(step))
            rest = board_diff(sensed_after, self.observed, self.tray)
            chance = self._held_step(after)
            if chance is not None:  # a roll the next player made before moving
                after = self.rules.apply(after, chance)
            if not _owned(self.rules.to_move(after), rest, expected):
                continue
            if StepIndex(self.rules, after, expected, presence).explained(rest):
                found.append(step)
        return found

    def _held_step(self, state: Seated) -> Hashable | None:
        """The step an extension holds back for ``state`` (a roll in the dice tray), if
        the board cannot show it (it changes no cell)."""
        for extension in self.extensions:
            step = extension.held(self, state)
            if step is not None and not self.rules.changes(state, step):
                return step
        return None

    def _wrong_cells(self, diff: dict[Cell, Piece]) -> set[Cell]:
        """The differing cells that no legal step explains on its own (all of them when each
        alone is explainable but not together)."""
        wrong = set()
        for cell, piece in diff.items():
            if not self.index.explained({cell: piece}):
                wrong.add(cell)
        return wrong or set(diff)

    def _label(self, step: Hashable, level: int) -> str:
        """What a question at ``level`` calls ``step``: its choice path there, else its
        notation (the last resort that always tells steps apart)."""
        path = self.rules.choice_path(self.state, step)
        return path[level] if level < len(path) else self.rules.format_step(self.state, step)

    def _resolve(self, steps: Sequence[Hashable], now: float, *,
                 correctable: bool = False) -> Effects:
        """Commit the step among ``steps`` (all leaving the observed board), asking the players
        when they lead to different states and neither the tray nor the sensors can tell;
        ``correctable``: a step committed without a question stays open to a correction by
        hand (:class:`Correctable`).

        The tray narrows the steps first (:meth:`_narrow`); only then do steps that lead to the
        same state count as one (paying blue and drawing three blue leaves what paying purple
        and drawing three purple leaves, but the journal records what the players did).
        """
        narrowed = self._narrow(steps)
        if narrowed is None:
            self.question = None
            return [Show(self._notice("Show on the tray the flowers you paid or drew", now))]
        if correctable and self._one_state(narrowed):
            return self._commit(narrowed[0], now, correctable=True)
        return self._decide(narrowed, now, level=0, origin=list(steps))

    def _narrow(self, steps: Sequence[Hashable]) -> list[Hashable] | None:
        """``steps`` narrowed by what the sensors show outside the garden's diff: the flowers
        on the tray, then (presence board) the cells the players handled.  ``None`` when the
        tray shows nothing and the steps lead to different states (the players must show the
        flowers)."""
        candidates = list(steps)
        if self.settings.tray:
            shown = tray_counts(self.observed, self.tray)
            filtered = self.rules.tray_filter(self.state, candidates, shown)
            if filtered:
                candidates = filtered
            elif not shown and not self._one_state(candidates):
                return None
        return self._reach(candidates)

    def _reach(self, steps: Sequence[Hashable]) -> list[Hashable]:
        """On a presence board, the steps among ``steps`` that account for most of the cells
        the players handled: the one they made (a swap of b3 and d5, not of two flowers
        nobody touched); ``steps`` themselves elsewhere."""
        if not self.settings.presence or not steps:
            return list(steps)
        handled = self.touched.changed.keys()
        # In C but for each step's changes: every payment and draw of a tube action is here.
        reach = list(map(len, map(handled.__and__, map(self.index.piece_changes, steps))))
        best = max(reach)
        return list(compress(steps, map(best.__eq__, reach)))

    def _one_state(self, steps: Sequence[Hashable]) -> bool:
        """Whether every step of ``steps`` leads to the same state (advanced without the end
        test, :meth:`StepIndex.advanced`, only until two differ; one step is not applied)."""
        if len(steps) < 2:
            return True
        first = self.index.advanced(steps[0])
        return all(self.index.advanced(step) == first for step in steps[1:])

    def _decide(
        self, candidates: list[Hashable], now: float, *, level: int, origin: list[Hashable]
    ) -> Effects:
        """Commit the one state ``candidates`` lead to, or ask among them from ``level`` on
        (skipping levels with one option); ``origin`` is kept with the question."""
        if self._one_state(candidates):
            return self._commit(candidates[0], now)
        # In C but for the labels themselves: a tube action's question labels every payment
        # and draw.
        options = list(dict.fromkeys(map(self._label, candidates, repeat(level))))
        if len(options) == 1:  # this level tells nothing: ask the next one
            return self._decide(candidates, now, level=level + 1, origin=origin)
        return self.ask(candidates, options, now, level=level, origin=origin)

    def ask(self, steps: Sequence[Hashable], options: list[str], now: float, *, level: int,
            origin: Sequence[Hashable]) -> Effects:
        """Ask the players to choose among ``steps`` with Select and OK: ``options`` are the
        labels of their choice paths at ``level``; ``origin`` the steps a new observation
        narrows again.  The question stands until it is answered, taken back or closed by
        the board; the effects sound the buzzer and show the menu."""
        self.question = Question(list(steps), level, options, dict(self.observed), list(origin))
        return [Buzz(BuzzPattern.QUESTION), Show(self._screen(now))]

    def commit(self, step: Hashable, now: float) -> Effects:
        """Commit ``step`` (one the board cannot show: a roll, a scored card, a penalty).

        Raises :class:`companion.errors.IllegalMoveError` when it is not legal now; nothing
        changes then.
        """
        self.index.after(step)  # raises before anything changes
        return self._commit(step, now)

    def weigh(self, now: float) -> Effects:
        """Evaluate the board again because an extension holds a new input (dice read while
        the last step settles) that may explain what it shows."""
        self._bursts.clear()
        return self._evaluate(now)

    def screen(self, now: float) -> Screen:
        """The screen for the situation now (what an extension shows after its own notice)."""
        return self._screen(now, diff=self.diff() if self.have_board else None)

    @property
    def settling(self) -> bool:
        """Whether the board shows a legal step made but not committed yet: waiting for the
        settle time, for OK, or for an answer."""
        if not self.have_board:
            return False
        diff = self.diff()
        return bool(self.question or self.index.completing(diff, self.touched, distinct=True))

    def notice(self, text: str, now: float, *, urgent: bool = False) -> Show:
        """A screen with ``text`` as its message, for an extension to show."""
        return Show(self._notice(text, now, urgent=urgent))

    def _commit(self, step: Hashable, now: float, *, correctable: bool = False) -> Effects:
        before = self.state
        player = self.to_move
        text = self.rules.format_step(before, step)
        index, touched = self.index, self.touched
        after = index.after(step)  # kept when the end test was asked while it was weighed
        sensed_before = self.sensed_expected  # never changed in place: a new one a state
        self.history.append((before, step))
        self._new_state(after, index.ending(step), index.piece_changes(step))
        self.correcting = None
        if correctable:
            self.correcting = Correctable(before, len(self.history), text, index, sensed_before,
                                          touched)
        effects: Effects = [
            SetTimer(TimerName.SETTLE, None),
            SetTimer(TimerName.GRACE, None),
            Committed(len(self.history), player, text, self.rules.format_position(after), after),
        ]
        if self.outcome is not None:
            effects.append(GameOver(self.outcome))
        elif self.seats is not None and (claim := self.seats.claim(self.rules, after)):
            # The companion shows its Hexagon card the moment a hexagon stands: it wins.
            return effects + self._commit(claim, now)
        return effects + self._evaluate(now)

    # ------------------------------------------------------------------ screens
    def _notice(self, text: str, now: float, *, urgent: bool = False) -> Screen:
        return replace(self._screen(now), message=text, urgent=urgent)

    def _screen(
        self,
        now: float,
        *,
        diff: dict[Cell, Piece] | None = None,
        guide: bool = False,
        wrong: set[Cell] | None = None,
    ) -> Screen:
        """The screen for the referee's situation now, with the extensions' parts; ``guide``:
        a step is under way on ``diff`` (its cells to handle are highlighted)."""
        screen = self._base_screen(now, diff=diff, guide=guide, wrong=wrong)
        for extension in self.extensions:
            screen = extension.decorate(self, screen)
        if self.seats is not None:
            screen = self.seats.decorate(self, screen)
        return screen

    def _base_screen(
        self,
        now: float,
        *,
        diff: dict[Cell, Piece] | None,
        guide: bool,
        wrong: set[Cell] | None,
    ) -> Screen:
        outcome, to_move = self.outcome, self.to_move
        # One Screen built, never one then replaced: each copies the 100-odd cells.
        cells: Board = self.expected
        highlights: dict[Cell, str] = {}
        menu: tuple[str, ...] = ()
        menu_index, urgent = 0, False
        if self.board_refused is not None:
            message, urgent = self.board_refused, True
        elif not self.have_board:
            message = "Waiting for the board..."
        elif self.question is not None:
            q = self.question
            message = f"P{to_move}: which one? Select, then OK"
            menu, menu_index = tuple(q.options), q.index
        elif wrong is not None:
            message = "Not a legal move: put the cells shown right"
            highlights, urgent = dict.fromkeys(sorted(wrong), "wrong"), True
        elif diff and (self.syncing or outcome is not None):
            message = SET_UP if not self.history else "Put the board back as shown"
            highlights = _restore_roles(self.expected, diff)
            menu = (USE_GARDEN,) if self._may_adopt() else ()
        elif outcome is not None:
            message = _outcome_text(outcome)
        elif diff and guide:
            seen = {**self.expected, **self.observed}
            cells = {c: p for c, p in seen.items() if c in self.layout_set}
            highlights = guidance(self.index, self.expected, diff, self.touched)
            message = f"P{to_move}: go on"
            if self.awaiting:
                message, menu = f"P{to_move}: go on, or OK when done", (DONE,)
        else:
            message = f"P{to_move}: your turn"
        return Screen(
            game=self.rules.name,
            layout=self.layout_name,
            cells=cells,
            highlights=highlights,
            message=message,
            scores=self.scores,
            to_move=to_move,
            urgent=urgent,
            menu=menu,
            menu_index=menu_index,
            ranking=tuple((p, r) for p, r, _ in outcome.ranking) if outcome is not None else (),
        )


def _head(piece: Piece) -> Piece:
    """The top of a stack: ``"M1+red" -> "M1"``; any other piece itself."""
    return piece.partition("+")[0]


def _origin(expected: Board, changes: dict[Cell, Piece], cell: Cell) -> Cell | None:
    """The cell a Martian or gardener that ``changes`` put on ``cell`` came from across the
    board (where it stood in ``expected``); ``None`` when the piece is no Martian or came
    from the hand (a placement, a disc, a flower)."""
    head = _head(changes.get(cell, EMPTY))
    if parse_piece(head).kind != "martian":
        return None
    for origin, piece in changes.items():
        if origin != cell and _head(expected.get(origin, EMPTY)) == head and _head(piece) != head:
            return origin
    return None


def _owned(player: int, diff: dict[Cell, Piece], expected: Board) -> frozenset[Cell]:
    """The cells of ``diff`` where a piece of ``player`` stood (``expected``) or stands."""
    return frozenset(
        cell for cell, piece in diff.items()
        if player in (parse_piece(piece).player, parse_piece(expected.get(cell, EMPTY)).player)
    )


def _restore_roles(expected: Board, diff: dict[Cell, Piece]) -> dict[Cell, str]:
    return {cell: ("place" if expected.get(cell, EMPTY) else "pick") for cell in diff}


def _outcome_text(outcome: Outcome) -> str:
    if len(outcome.winners) == 1:
        head = f"Player {outcome.winners[0]} wins"
    else:
        head = "Shared win: " + ", ".join(f"P{p}" for p in outcome.winners)
    ranking = "  ".join(f"P{p} {text}" for p, text, _ in outcome.ranking)
    return ". ".join(part for part in (f"{head} ({outcome.termination})", ranking,
                                        "OK: new game") if part)
