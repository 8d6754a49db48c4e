"""The companion at the table: seats it plays, the steps it announces, and hints.

Each seat (``[players] seats``; the daemon builds them: :func:`companion.daemon.games.game_seats`)
is a person or the companion at a strength.  On the companion's turn, once the chance of the
turn is known (the Mars dice
come from their usual source first), the companion chooses its step
(:func:`companion.opponent.choose`) and the matrix announces it part by part
(:func:`describe`): the piece to move and where, the flowers to pick up, the disc to place and
the colour paid, the flower to plant, the die used, the card scored.  A person carries it out
on the board.  At that seat the referee recognises that step alone (:class:`SeatedRules`
narrows the rules core's candidates and legal steps to it), with the usual lifts, glitches
and hesitation, and guides towards it; any other board is refused after the grace period
with the cells that differ from it, and any other step the buttons would commit (a Mars
discard, a Uranus card) is refused with the announcement.  A step no cell shows (a card
scored, a die discarded, a card shown at the end) is carried out with OK.

Out of turn: in Gardens of Uranus, the moment any step makes a regular hexagon of one colour
while the Hexagon card is in a companion's hand, the referee commits its claim
(:meth:`Seats.claim`; the text, Mission cards: the owner wins instantly), and the matrix
announces it ("P2: companion: shows the Hexagon card and wins") until the next step.

Chance stays where it was: a step's chance outcome (the flowers the Enceladus tube gives, the
card drawn after a score) is not part of what is announced and comes from the table as for
anyone.  In Gardens of Uranus the companion's mission cards are its own, known to the chooser
and to nobody at the table (:meth:`Seats.hand`): with a card reader, real cards dealt to its
seat and held face down to the reader at its turn (the matrix counts them and names none; the
journal keeps their ids, for a restart); without one, dealt by the companion from the
catalogue's cards nobody has shown, a replacement after each score.  A card appears on the
matrix only in the announcement of the step that scores or shows it.  The chooser sees only
the public state and those cards, never another player's.

A hint: a person asks (a long Select press, :data:`LONG_PRESS_S`, or the live page) for the
step the strong companion would make in their place; the matrix shows it as guidance until
the board changes.  Hints are counted per player (:attr:`Seats.hints`), journaled
(:class:`Hinted`) and shown on the end screen.
"""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeGuard, cast

from companion.board import protocol
from companion.errors import IllegalMoveError, InvalidArgumentError
from companion.events import BoardMessage, Button, Event, Hint
from companion.opponent import chance_next, choose, decision, interrupt
from companion.referee.effects import (
    Buzz,
    BuzzPattern,
    Dealt,
    Effects,
    Hinted,
    Note,
    NoteLevel,
    Show,
)
from companion.referee.recognition import StepIndex
from companion.referee.screen import Screen
from companion.rules.base import (
    EMPTY,
    Cell,
    Move,
    Outcome,
    Piece,
    Seated,
    SomeRules,
    own_state,
    parse_piece,
)

if TYPE_CHECKING:
    from companion.referee.referee import Referee
    from companion.rules.uranus import Claim

LONG_PRESS_S = 1.0
"""How long Select must be held for a hint, in seconds (a short press keeps its own use)."""

HINT_STRENGTH = "strong"
"""The strength whose step a hint shows."""

RULE_SEAT = "the companion's seat"

class Chooser(Protocol):
    """What chooses the companion's step: :func:`companion.opponent.choose` unless a caller
    passes another.  ``known``: the companion's own cards (Gardens of Uranus), ``None`` in the
    other games; ``time_cap``: the most seconds the choice may take."""

    def __call__(self, rules: SomeRules, state: Seated, strength: str, *, rng: random.Random,
                 known: Collection[str] | None, time_cap: float | None) -> Hashable: ...

TIME_CAP_S = 2.0
"""The longest a choice may take, in seconds: the engine's budget counts positions (the same
step on every machine) and this only stops a search that a slow machine drags out."""


def _chance(rules: SomeRules, state: Seated) -> bool:
    """Whether chance gives the next step (the Mars dice to roll): nothing to choose."""
    return rules.outcome(state) is None and chance_next(rules, state)


@dataclass
class Seats:
    """Who plays each seat, and what the companion has announced.

    ``seats``: one per player, each ``"person"`` or a strength (``[players] seats``; players
    past the list are people).  ``seed``: the companion's choices are drawn from a
    ``random.Random`` seeded by it and the position, so a game replays the same.
    ``catalogue``: the Uranus mission cards, ``{card id: canonical mission}``; empty for the
    other games.  ``reader``: a card reader is fitted, so the companion's cards are real
    cards held face down to it (``dealt``: the ids read so far, per seat, a resumed game's
    from its journal); without one the companion deals them from the catalogue.  ``hints``:
    hints asked so far per player (a resumed game starts from its journal's count).
    ``choose``: the chooser (:data:`Chooser`; the companion's own opponent unless a caller
    passes another).
    ``times``: the seconds each announced choice took, per strength.
    """

    seats: Sequence[str]
    seed: int = 0
    catalogue: Mapping[str, str] = field(default_factory=dict)
    reader: bool = False
    dealt: dict[int, list[str]] = field(default_factory=dict)
    hints: dict[int, int] = field(default_factory=dict)
    choose: Chooser | None = None
    times: dict[str, list[float]] = field(default_factory=dict)
    _announced: dict[Hashable, Hashable] = field(default_factory=dict)
    _hint: tuple[Hashable, Hashable, frozenset[tuple[Cell, Piece]]] | None = None
    _pressed: float | None = None

    # ------------------------------------------------------------------ who plays
    def strength(self, player: int) -> str | None:
        """The strength of the companion at ``player``'s seat; ``None`` for a person."""
        seat = self.seats[player - 1] if 0 < player <= len(self.seats) else "person"
        return None if seat == "person" else seat

    @property
    def playing(self) -> bool:
        """Whether the companion has a seat at all."""
        return any(self.strength(p) for p in range(1, len(self.seats) + 1))

    def seated(self, rules: SomeRules) -> SomeRules:
        """``rules`` as the referee must see them with these seats (:class:`SeatedRules`)."""
        return cast("SomeRules", SeatedRules(rules, self))

    # ------------------------------------------------------------------ choosing
    def _rng(self, rules: SomeRules, state: Seated, salt: str) -> random.Random:
        text = f"{self.seed}:{salt}:{rules.format_position(state)}"
        return random.Random(zlib.crc32(text.encode()))

    def _chooser(self) -> Chooser:
        return self.choose if self.choose is not None else choose

    def announce(self, rules: SomeRules, state: Seated) -> Hashable | None:
        """The step the companion makes in ``state`` when it is to move there and chance has
        spoken (``None`` at a person's seat, at a roll, once the game is over); chosen once
        per state and kept, so undo and redo announce the same step."""
        if state in self._announced:
            return self._announced[state]
        if rules.outcome(state) is not None:
            return None
        player = rules.to_move(state)
        strength = self.strength(player)
        if strength is None or _chance(rules, state) or self.missing(rules, state):
            return None
        known = self.hand(rules, state, player) if rules.name == "uranus" else None
        began = time.perf_counter()
        step = self._chooser()(rules, state, strength, rng=self._rng(rules, state, "choose"),
                               known=known, time_cap=TIME_CAP_S)
        self.times.setdefault(strength, []).append(time.perf_counter() - began)
        self._announced[state] = step
        return step

    def claim(self, rules: SomeRules, state: Seated) -> Hashable | None:
        """The step a companion's seat makes out of turn in ``state``, or ``None``: in Gardens
        of Uranus the Hexagon claimed (it wins at once) when a hexagon of one colour stands
        and the Hexagon card is in its hand (:meth:`hand`); the first such seat by number."""
        if rules.name != "uranus" or rules.outcome(state) is not None:
            return None
        for player in range(1, rules.players(state) + 1):
            if self.strength(player) is not None:
                step: Hashable | None = interrupt(rules, state, player,
                                                  self.hand(rules, state, player))
                if step is not None:
                    return step
        return None

    def announced(self, state: Hashable) -> Hashable | None:
        """The step announced for ``state`` (``None`` when none was)."""
        return self._announced.get(state)

    def instead(self, referee: Referee) -> Hashable | None:
        """The legal step the board shows at the companion's seat in place of the one
        announced: one the rules allow there (:class:`SeatedRules` refuses it) that explains
        the board as observed; ``None`` when nothing is announced or no such step does (the
        board breaks the rules)."""
        rules = referee.rules
        if self.announced(referee.state) is None or not isinstance(rules, SeatedRules):
            return None
        index = StepIndex(rules.core, referee.state, referee.expected, referee.settings.presence)
        return index.explaining(referee.diff()).first()

    def waiting(self, rules: SomeRules, state: Seated) -> bool:
        """Whether ``state`` is the companion's to decide and nothing is announced for it yet:
        no step of that seat can be recognised before its announcement."""
        return (state not in self._announced and rules.outcome(state) is None
                and self.strength(rules.to_move(state)) is not None
                and not _chance(rules, state))

    # ------------------------------------------------------------------ secret cards
    def hand(self, rules: SomeRules, state: Seated, player: int) -> list[str]:
        """The companion's mission cards at ``player``'s seat in ``state`` (Gardens of
        Uranus; ``[]`` elsewhere).  With a reader, the cards read for the seat that are not
        shown yet.  Without one, as many as the seat holds: the first cards nobody has shown
        of the catalogue shuffled once for the seat (by the seed, the game's trees and the
        seat), those an earlier companion seat holds left to it; so a card scored is replaced
        by the next one, a card someone else showed too, and the hand is the same after an
        undo or a restart."""
        if rules.name != "uranus" or self.strength(player) is None:
            return []
        from companion.rules.uranus import State, seen

        state = own_state(state, State)
        taken = set(seen(state))
        if self.reader:
            return [mission for mission in dict.fromkeys(
                self.catalogue[card] for card in self.dealt.get(player, []))
                if mission not in taken]
        held: list[str] = []
        for seat in range(1, player + 1):
            if self.strength(seat) is None:
                continue
            order = sorted(set(self.catalogue.values()))
            trees = ",".join(sorted(map(str, state.trees)))
            random.Random(zlib.crc32(f"{self.seed}:{trees}:{seat}".encode())).shuffle(order)
            count = state.unknown[seat - 1]  # the cards it holds unshown
            held = [card for card in order if card not in taken][:count]
            taken.update(held)
        return held

    def missing(self, rules: SomeRules, state: Seated) -> int:
        """How many cards the reader must still read for the companion to move in ``state``
        (its turn or its cards shown at the end, with a reader, in Gardens of Uranus): the
        cards it holds unshown less those read and not shown; 0 otherwise."""
        if not self.reader or rules.name != "uranus" or rules.outcome(state) is not None:
            return 0
        from companion.rules.uranus import State

        state = own_state(state, State)
        player = rules.to_move(state)
        if self.strength(player) is None or state.phase == "placement":
            return 0
        count = state.unknown[player - 1]  # the cards it holds unshown
        return max(0, count - len(self.hand(rules, state, player)))

    # ------------------------------------------------------------------ hints
    def hint(self, rules: SomeRules, state: Seated,
             observed: Mapping[Cell, Piece]) -> Hashable | None:
        """The step the strong companion would make in ``state`` for the person to move, to
        show as guidance while the board stays as ``observed``; ``None`` when there is none
        to give (the companion's own turn, a roll, the game over)."""
        if rules.outcome(state) is not None or _chance(rules, state):
            return None
        player = rules.to_move(state)
        if self.strength(player) is not None:
            return None
        # The person's cards are theirs alone: a hint never names one (no card is known).
        try:
            step = self._chooser()(rules, state, HINT_STRENGTH,
                                   rng=self._rng(rules, state, "hint"), known=(),
                                   time_cap=TIME_CAP_S)
        except InvalidArgumentError:  # nothing to choose without the cards (shown at the end)
            return None
        self.hints[player] = self.hints.get(player, 0) + 1
        self._hint = (state, step, frozenset(observed.items()))
        return step

    def hint_shown(self, state: Hashable, observed: Mapping[Cell, Piece]) -> Hashable | None:
        """The hint to show now: the last one, while the state and the board are as they were
        when it was asked."""
        if self._hint is None:
            return None
        at, step, board = self._hint
        if at != state or board != frozenset(observed.items()):
            return None
        return step

    # ------------------------------------------------------------------ the referee's hooks
    def handle(self, referee: Referee, event: Event) -> Effects | None:
        """A button, a hint request or a board message, before the game's extensions: OK
        carries out an announced step no cell shows; Select held :data:`LONG_PRESS_S` (timed
        from its press to its release) or :class:`Hint` asks a hint; a card shown at the
        companion's seat is refused.  ``None`` when it is not the seats' business."""
        if isinstance(event, Hint):
            return self._hint_effects(referee, event.t)
        if isinstance(event, BoardMessage):
            return self._card(referee, event)
        if not isinstance(event, Button):
            return None
        if event.name == "select":
            if event.pressed:
                self._pressed = event.t
                return None
            pressed, self._pressed = self._pressed, None
            if pressed is not None and event.t - pressed >= LONG_PRESS_S - 1e-9:
                return self._hint_effects(referee, event.t)
            return None
        if not event.pressed or event.name != "ok" or not _ready(referee):
            return None
        step = self.announced(referee.state)
        if step is None or referee.rules.changes(referee.state, step):
            return None
        try:
            effects = referee.commit(step, event.t)
        except IllegalMoveError as error:  # not expected: the announced step is legal here
            return [referee.notice(error.reason, event.t, urgent=True)]
        return effects

    def _card(self, referee: Referee, event: BoardMessage) -> Effects | None:
        """A card held to the reader at the companion's seat: read face down for its hand
        while it is short of cards (:meth:`missing`; the matrix counts them and never names
        one), then the step announced; refused while its announced step stands (its cards
        are its own: OK carries out a card step); ``None`` for anything else."""
        if not isinstance(event.message, protocol.Card):
            return None
        rules, state = referee.rules, referee.state
        if self.missing(rules, state) and _ready(referee):
            return self._read(referee, event.message.card_id, event.t)
        step = self.announced(state)
        if step is None:
            return None
        said = "; ".join(p.text for p in describe(referee.rules, referee.state, step))
        return [Note(NoteLevel.WARNING,
                     f"card {event.message.card_id} shown at the companion's seat; refused"),
                Buzz(BuzzPattern.ILLEGAL),
                referee.notice(f"Not the companion's step: the companion plays {said}",
                               event.t, urgent=True)]

    def _read(self, referee: Referee, card: str, now: float) -> Effects:
        """``card`` read face down for the companion to move."""
        from companion.rules.uranus import State, seen

        rules, state, player = referee.rules, own_state(referee.state, State), referee.to_move
        mission = self.catalogue.get(card)
        if mission is None or mission in seen(state) or card in self.dealt.get(player, []) \
                or mission in self.hand(rules, state, player):
            why = "not a card of the catalogue" if mission is None else "a card known already"
            return [Note(NoteLevel.WARNING, f"card {card} read for the companion: {why}; refused"),
                    Buzz(BuzzPattern.ILLEGAL),
                    referee.notice(f"P{player}: that card cannot be the companion's ({why}); "
                                   "hold another", now, urgent=True)]
        self.dealt.setdefault(player, []).append(card)
        effects: Effects = [Dealt(player, card)]
        if not self.missing(rules, state):
            self.announce(rules, state)
        return effects + [Show(referee.screen(now))]

    def _hint_effects(self, referee: Referee, now: float) -> Effects:
        if not _ready(referee):
            return [referee.notice("A hint needs the board as the matrix shows it", now)]
        step = self.hint(referee.rules, referee.state, referee.observed)
        if step is None:
            return [referee.notice("No hint now: it is not a person's turn", now)]
        text = referee.rules.format_step(referee.state, step)
        player = referee.to_move
        return [Hinted(referee.steps_committed + 1, player, text), Show(referee.screen(now))]

    def decorate(self, referee: Referee, screen: Screen) -> Screen:
        """The companion's announcement (or a hint asked for) on a settled board, in place of
        the prompt, its cells highlighted: ``"P2: companion: gardener 0,0 to 0,3; plant
        red"``; while the step is under way, the announcement before the referee's guidance
        (``"...: go on"``); on a board refused at the companion's seat, the announcement with
        the refusal; the hints asked on the end screen (``extra["hints"]``); a Hexagon the
        companion claimed out of turn before all of it, until the next step."""
        screen = self._decorate(referee, screen)
        if referee.rules.name == "uranus" and referee.history:
            before, last = referee.history[-1]
            if _claims(last) and self.strength(last.player) is not None:
                # The claim made out of turn stays announced until the next step.
                said = "; ".join(p.text for p in describe(referee.rules, before, last))
                screen = replace(screen, message=f"P{last.player}: companion: {said}. "
                                 f"{screen.message}")
        return screen

    def _decorate(self, referee: Referee, screen: Screen) -> Screen:
        if screen.ranking and self.hints:
            counted = " ".join(f"P{p} {n}" for p, n in sorted(self.hints.items()))
            return replace(screen, extra={**screen.extra, "hints": counted})
        state, rules = referee.state, referee.rules
        step = self.announced(state)
        prompt = f"P{referee.to_move}: "
        if not _ready(referee):
            refused = "wrong" in screen.highlights.values()
            if step is None or referee.question is not None or (screen.urgent and not refused):
                return screen
            said = "; ".join(p.text for p in describe(rules, state, step))
            if refused:
                return replace(screen, message="Not the companion's step: put the cells shown "
                               f"right, then {said}")
            if screen.message.startswith(prompt):  # under way: the guidance goes on
                rest = screen.message.removeprefix(prompt)
                return replace(screen, message=f"{prompt}companion: {said}: {rest}")
            return screen
        missing = self.missing(rules, state)
        if missing:
            cards = "1 card" if missing == 1 else f"{missing} cards"
            return replace(screen, message=f"{prompt}companion: hold {cards} for it face down "
                           "to the reader", highlights={}, menu=(), menu_index=0)
        who = "companion"
        if step is None:
            step = self.hint_shown(state, referee.observed)
            who = "hint"
        if step is None:
            return screen
        parts = describe(rules, state, step)
        done = "" if rules.changes(state, step) else ", then OK"
        message = f"{prompt}{who}: {'; '.join(p.text for p in parts)}{done}"
        cells = {cell: role for part in parts for cell, role in part.cells.items()}
        return replace(screen, message=message, highlights=cells, menu=(), menu_index=0)


@dataclass(frozen=True, slots=True)
class Part:
    """One part of an announced step: ``text`` in words and the ``cells`` it concerns with
    their highlight roles (:data:`companion.display.screen.ROLES`)."""

    text: str
    cells: Mapping[Cell, str] = field(default_factory=dict)


def describe(rules: SomeRules, state: Seated, step: Hashable) -> list[Part]:
    """``step`` part by part, as a person carries it out: the piece to move (from its cell,
    highlighted ``changed``) and where (``dest``), or where it is placed; the flowers to pick
    up (``pick``); the disc to place (``place``) and the colour paid; the flower to plant; any
    other flower to put (``place``); the die used; the card scored or shown."""
    before = rules.board(state)
    changes = rules.changes(state, step)
    player = rules.to_move(state)
    own = f"M{player}"
    parts: list[Part] = []
    origin = next((c for c, p in before.items() if _head(p) == own and c in changes
                   and _head(changes[c]) != own), None)
    dest = next((c for c, p in changes.items() if _head(p) == own), None)
    word = "gardener" if rules.name != "enceladus" else "Martian"
    if dest is not None and origin is not None:
        parts.append(Part(f"{word} {origin} to {dest}", {origin: "changed", dest: "dest"}))
    elif dest is not None:
        parts.append(Part(f"place the {word} on {dest}", {dest: "dest"}))
    picks = [c for c, p in changes.items() if p == EMPTY and c != origin
             and parse_piece(before.get(c, EMPTY)).kind in ("flower", "wild")]
    if picks:
        parts.append(Part("pick up " + " ".join(picks), dict.fromkeys(picks, "pick")))
    discs = [c for c, p in changes.items() if parse_piece(p).kind == "disc"]
    path = rules.choice_path(state, step)
    pay = next((label.removeprefix("pay ") for label in path if label.startswith("pay ")), "")
    for cell in discs:
        parts.append(Part(f"disc on {cell}" + (f", pay {pay}" if pay else ""), {cell: "place"}))
    plant = getattr(step, "plant", None)
    if dest is not None and plant:
        parts.append(Part(f"plant {plant}", {}))
    elif dest is not None and "+" in changes[dest] and "+" not in before.get(dest, EMPTY) \
            and parse_piece(before.get(dest, EMPTY)).kind == "empty":
        parts.append(Part(f"plant {parse_piece(changes[dest]).colour}", {}))
    puts = [c for c, p in changes.items()
            if c not in (origin, dest) and c not in discs and p != EMPTY]
    for cell in puts:
        parts.append(Part(f"put {changes[cell]} on {cell}", {cell: "place"}))
    die = getattr(step, "die", None)
    if isinstance(die, int):
        parts.append(Part(f"{'discard' if not changes else 'use'} die {die}", {}))
    if rules.name == "uranus" and _claims(step):
        parts.append(Part("shows the Hexagon card and wins", {}))
    mission = getattr(step, "mission", None)
    if isinstance(mission, str):
        from companion.referee.uranus import card_text

        deck = getattr(step, "draw", None)
        verb = "score" if deck is not None else "show"
        parts.append(Part(f"{verb} {card_text(mission)}"
                          + (f", draw from deck {deck}" if deck is not None else ""), {}))
    if not parts:
        parts.append(Part(rules.format_step(state, step), dict.fromkeys(changes, "place")))
    return parts


class SeatedRules:
    """A rules core as the referee sees it with the companion at some seats: at a seat whose
    step is announced (:meth:`Seats.announce`), the legal steps and candidates are that step
    alone (with any chance outcome of it: the tube's flowers, the card drawn), and ``apply``
    and ``advance`` refuse any other step with the announcement as the reason; a companion's
    state not announced yet has no step.  Everything else is the core's own."""

    def __init__(self, rules: SomeRules, seats: Seats) -> None:
        self.core = rules
        self.seats = seats
        self.name = rules.name
        self._family: dict[Seated, list[Hashable]] = {}

    def __getattr__(self, name: str) -> object:
        # The rest of GameRules, as the core has it: a SeatedRules is used as SomeRules.
        return getattr(self.core, name)

    def _only(self, state: Seated) -> Hashable | None:
        return self.seats.announced(state)

    def _steps(self, state: Seated, only: Hashable) -> list[Hashable]:
        """The legal steps that carry out ``only``: itself, or one step for each chance
        outcome it may have (found among the core's candidates for the cells it changes)."""
        found = self._family.get(state)
        if found is None:
            cells = frozenset(self.core.changes(state, only))
            chosen = decision(self.core, state, only)
            found = self._family[state] = [
                s for s in self.core.candidates(state, cells, None, False)
                if decision(self.core, state, s) == chosen]
        return found

    def legal_steps(self, state: Seated) -> Iterable[Hashable]:
        only = self._only(state)
        if only is None:
            if self.seats.waiting(self.core, state):
                return iter(())
            return self.core.legal_steps(state)
        return iter(self._steps(state, only))

    def candidates(self, state: Seated, touched: frozenset[Cell],
                   within: frozenset[Cell] | None = None, distinct: bool = False
                   ) -> Iterator[Hashable]:
        only = self._only(state)
        if only is None:
            if self.seats.waiting(self.core, state):
                return iter(())
            return self.core.candidates(state, touched, within, distinct)
        steps = self._steps(state, only)
        if not distinct:
            return iter(steps)
        by_changes = {frozenset(self.core.changes(state, s).items()): s for s in steps}
        return iter(by_changes.values())

    def moves_from(self, state: Seated, cell: Cell) -> list[Move] | None:
        # At a seat whose step is announced, or waiting, only the candidates tell.
        if self._only(state) is not None or self.seats.waiting(self.core, state):
            return None
        return self.core.moves_from(state, cell)

    def apply(self, state: Seated, step: Hashable) -> Seated:
        self._announced(state, step)
        after: Seated = self.core.apply(state, step)
        return after

    def advance(self, state: Seated, step: Hashable) -> Seated:
        self._announced(state, step)
        after: Seated = self.core.advance(state, step)
        return after

    def _announced(self, state: Seated, step: Hashable) -> None:
        """Raise :class:`IllegalMoveError` unless ``step`` carries out the step announced for
        ``state``, if one is (or claims the Hexagon, out of turn)."""
        only = self._only(state)
        if (only is not None
                and decision(self.core, state, step) != decision(self.core, state, only)
                and step != self.seats.claim(self.core, state)):
            said = self.core.format_step(state, only)
            raise IllegalMoveError(f"the companion plays {said} here",
                                   rule=RULE_SEAT, step=self.core.format_step(state, step))

    def outcome(self, state: Seated) -> Outcome | None:
        return self.core.outcome(state)


def _head(piece: Piece) -> Piece:
    return piece.partition("+")[0]


def _claims(step: Hashable) -> TypeGuard[Claim]:
    """Whether ``step`` is the Hexagon claimed (Gardens of Uranus)."""
    from companion.rules.uranus import Claim

    return isinstance(step, Claim)


def _ready(referee: Referee) -> bool:
    """The board shows the expected position, the game goes on and nothing is asked."""
    return bool(referee.have_board and referee.question is None and referee.outcome is None
                and not referee.diff())
