"""Gardens of Mars at the table: the dice, the turn's prompts, the scoring track, the penalties.

The referee recognises on its own what the cells show (Gardens of Mars, Setup and Moving and
Planting): a gardener placed; a gardener moved a pool die's distance, the die inferred from the
distance, with the flower planted under it (its colour read from the cell, ``"M1+red"``) or
onto a flower (the one-point penalty).  :class:`MarsTable` does the rest of a turn:

* **Dice** (Gardens of Mars, Rolling Dice), from the source ``[board] dice`` names:
  ``"tray"``: the board reports the dice in its tray (``DICE`` messages, ``hardware/PROTOCOL.md``);
  a reading of exactly :func:`~companion.rules.mars.dice_to_roll` dice, each 1 to 6, is the
  roll.  A reading with an impossible value (0, 7...), more dice than the game has (6), or a count
  that is not the dice to roll is refused with a log line and a notice; nothing changes.  While
  dice are in the pool the tray may only lose dice (a used die goes back into the case).  A
  reading that arrives while the board is not settled (the last step still settling, asked
  about, or a piece lifted) is held and weighed once the board is, or as soon as the board
  shows the roller's move under way: the next player may roll while the last step settles.
  ``"buttons"``: no tray; the matrix shows a menu 1-6 for each die: Select cycles, OK confirms
  the die; the roll is committed with the last die.  ``"virtual"``: the companion rolls with its
  own ``random.Random`` on the Roll button (``[buttons] roll``) or OK; the roll is committed (so
  journaled) like any other and the values show as the pool.
* **No dice to roll** (the gardener is surrounded by flowers): the matrix says so and OK ends the
  turn (``Roll(())``).  Asking for OK rather than ending the turn unprompted lets the players
  see why their turn is over; it is the same in all three sources.
* **No legal move** (docs/RULINGS.md Mars #4): the matrix says so; a menu names the discards
  (``discard 3``, one per pool value, as the rules core's ``choice_path`` does), Select picks
  the die, OK discards it and the player loses a point.  The value matters (the pool passes on).
* **The scoring track is not sensed**: after every score change the message tells the player
  where their scoring Martian goes: its space on the 0-50 track and, past 50, its lap
  (docs/RULINGS.md Mars #6); the ``track`` extra always shows every scoring Martian's space.
* **Setup**: the flowers are dealt by the rules core (a seeded deal); each player is shown their
  colour counts (``b5 y5 w5 a5 r5 g5``, the wire protocol's colour letters) when they are to place
  their gardener.

Prompts replace the referee's plain "your turn" only while the board shows exactly the expected
position and nothing is being asked; guidance, warnings and notices are left as they are.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from companion.board import protocol
from companion.errors import IllegalMoveError, InvalidArgumentError
from companion.events import BoardMessage, Button
from companion.referee.deal import DealTable
from companion.referee.effects import Buzz, BuzzPattern, Effects, Note, NoteLevel, Show
from companion.referee.referee import Extension, Referee, RefereeSettings
from companion.referee.screen import Screen
from companion.rules import mars
from companion.rules.base import Seated, own_state
from companion.rules.gardeners import FLOWERS_EACH
from companion.rules.hexes import hex_name
from companion.rules.mars import (
    COLOURS,
    Discard,
    Phase,
    Roll,
    State,
    destinations,
    dice_to_roll,
    track_space,
)

DIE_VALUES: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
"""What a die shows (Gardens of Mars, Components: six-sided dice)."""

DICE_IN_GAME = 6
"""The dice the game has, so the most a pool or the tray can hold (Gardens of Mars,
Components)."""

SOURCES: tuple[str, ...] = ("tray", "buttons", "virtual")
"""The dice sources of ``[board] dice``."""

COLOUR_LETTERS: dict[str, str] = {
    "blue": "b", "yellow": "y", "white": "w", "gray": "a", "red": "r", "green": "g",
}
"""The one-letter colour codes of the wire protocol, for the reserve counts on the matrix."""

R_DICE = "Gardens of Mars, Rolling Dice"


def extensions(settings: RefereeSettings, seed: int) -> list[Extension]:
    """The referee extensions of a Gardens of Mars game: one :class:`MarsTable` with the dice
    source ``settings.dice``; virtual dice are seeded from the game's ``seed`` (0: from the
    operating system), and roll on the Roll button when ``settings.roll_button``; with
    ``settings.dealt_by_hand``, a :class:`~companion.referee.deal.DealTable` after it for
    the reserves dealt by hand."""
    table: list[Extension] = [MarsTable(settings.dice, rng=random.Random(seed or None),
                                        roll_button=settings.roll_button)]
    if settings.dealt_by_hand:  # the flowers dealt from the bag by hand, too
        table.append(DealTable(mars.COLOURS, dict(FLOWERS_EACH), mars.FLOWERS_PER_COLOUR))
    return table


@dataclass
class _Entry:
    """Input in progress for one state: dice entered so far (buttons) and the menu's choice."""

    state: State | None = None
    values: tuple[int, ...] = ()
    index: int = 0


class MarsTable:
    """The Gardens of Mars extension of the referee (:class:`companion.referee.referee.Extension`).

    ``dice``: the source, one of :data:`SOURCES`.  ``rng``: the virtual dice (only used with
    ``"virtual"``; pass a seeded one for a reproducible game).  ``roll_button``: a Roll button is
    wired, so the prompt names it.  Raises :class:`InvalidArgumentError` for an unknown source
    (the config checks it first).
    """

    def __init__(self, dice: str = "tray", *, rng: random.Random | None = None,
                 roll_button: bool = False) -> None:
        if dice not in SOURCES:
            raise InvalidArgumentError(
                f"unknown dice source {dice!r}; expected one of {', '.join(SOURCES)}")
        self.dice = dice
        self.rng = rng if rng is not None else random.Random()
        self.roll_button = roll_button
        self._entry = _Entry()
        self._tray: tuple[int, ...] = ()
        self._held: int | None = None  # steps committed when an unweighed reading came
        self._dests: tuple[State | None, frozenset[str]] = (None, frozenset())

    # ------------------------------------------------------------------ events
    def handle(self, referee: Referee, event: Button | BoardMessage) -> Effects | None:
        """Dice tray readings and button presses; ``None`` for anything else, and for presses
        when no Mars prompt is on the matrix."""
        if isinstance(event, BoardMessage) and isinstance(event.message, protocol.Dice):
            return self._reading(referee, tuple(event.message.values), event.t)
        if isinstance(event, Button) and _ready(referee):
            return self._press(referee, event.name, event.t)
        return None

    def _press(self, referee: Referee, name: str, now: float) -> Effects | None:
        state = own_state(referee.state, State)
        entry = self._entry_for(state)
        if state.phase is Phase.ROLL:
            count = dice_to_roll(state)
            if count == 0:
                return self._commit(referee, Roll(()), now) if name == "ok" else None
            if self.dice == "buttons" and name in ("select", "ok"):
                return self._enter(referee, entry, name, count, now)
            if self.dice == "virtual" and name in ("roll", "ok"):
                values = tuple(self.rng.choice(DIE_VALUES) for _ in range(count))
                shown = " ".join(map(str, values))
                effects = self._commit(referee, Roll(values), now)
                return effects + [referee.notice(f"P{state.to_move} rolled {shown}", now)]
            if self.dice == "tray" and name in ("roll", "ok"):
                if len(self._tray) == count and all(v in DIE_VALUES for v in self._tray):
                    return self._commit(referee, Roll(self._tray), now)
                return [referee.notice(f"P{state.to_move}: roll {_dice(count)} into the tray",
                                       now)]
            return None
        discards = self._discards(state)
        if discards and name in ("select", "ok"):
            self._entry = entry
            if name == "select":
                entry.index = (entry.index + 1) % len(discards)
                return [Show(referee.screen(now))]
            return self._commit(referee, Discard(discards[entry.index]), now)
        return None

    def _enter(self, referee: Referee, entry: _Entry, name: str, count: int,
               now: float) -> Effects:
        """Select cycles the die shown 1-6; OK confirms it and, with the last die, commits."""
        self._entry = entry
        if name == "select":
            entry.index = (entry.index + 1) % len(DIE_VALUES)
            return [Show(referee.screen(now))]
        entry.values += (DIE_VALUES[entry.index],)
        entry.index = 0
        if len(entry.values) < count:
            return [Show(referee.screen(now))]
        return self._commit(referee, Roll(entry.values), now)

    def _reading(self, referee: Referee, values: tuple[int, ...], now: float) -> Effects:
        """A ``DICE`` message: the values of the dice in the tray now."""
        shown = " ".join(map(str, values)) or "no dice"
        if self.dice != "tray":
            return [Note(NoteLevel.INFO, f"the dice tray shows {shown}; ignored, the dice come "
                                         f"from the {self.dice} ([board] dice)")]
        bad = sorted({v for v in values if v not in DIE_VALUES})
        if bad:
            wrong = " and ".join(map(str, bad))
            return self._refuse(referee, now, f"the dice tray reported {shown}: a die shows "
                                f"1 to 6, not {wrong}", f"Dice tray: {wrong} is no die value")
        if len(values) > DICE_IN_GAME:
            return self._refuse(referee, now, f"the dice tray reported {len(values)} dice "
                                f"({shown}) but the game has {DICE_IN_GAME}",
                                f"Dice tray: {len(values)} dice? The game has {DICE_IN_GAME}")
        state = own_state(referee.state, State)
        player = state.to_move
        previous, self._tray = self._tray, values
        self._held = None
        if not values or state.phase is Phase.OVER:
            return []
        if not _ready(referee):
            # Rolled while the last step settles or is asked about: it may be the next
            # player's roll, which only the state after that step can tell.
            self._held = len(referee.history)
            return [Note(NoteLevel.INFO, f"the dice tray shows {shown}; weighed once the board is "
                                 "settled"), *referee.weigh(now)]
        if state.phase is Phase.PLACEMENT:
            return self._refuse(referee, now, f"the dice tray shows {shown} before every "
                                "gardener is placed; ignored",
                                "No dice yet: place the gardeners first")
        if state.phase is Phase.ROLL:
            count = dice_to_roll(state)
            if len(values) != count:
                return self._refuse(
                    referee, now,
                    f"player {player} must roll {_dice(count)} (hexes without a flower next "
                    f"to the gardener), the dice tray shows {len(values)} ({shown}); ignored",
                    f"P{player}: roll {_dice(count)}, not {len(values)}")
            return self._commit(referee, Roll(values), now)
        pool = Counter(state.pool)
        if not Counter(values) - pool:
            return []  # used dice went back into the case: the pool is what the rules say
        self._tray = previous
        pool_text = " ".join(map(str, state.pool))
        return self._refuse(referee, now, f"the dice tray shows {shown} but the pool is "
                            f"{pool_text}; ignored",
                            f"The pool is {pool_text}: put the dice back")

    def settled(self, referee: Referee, now: float) -> Effects:
        """The board has come to show the expected position: a tray reading held back
        meanwhile is weighed now, as if it had just arrived (the roll committed, or refused)."""
        if not self._still_held(referee):
            return []
        self._held = None
        return self._reading(referee, self._tray, now)

    def held(self, referee: Referee, state: Seated) -> Roll | None:
        """The roll a reading held back gives in ``state`` (a roll of the player to move with
        the dice it counts), for the referee to commit when a step under way on the board
        needs it first (the next player rolled and began to move while the last step
        settled); ``None`` otherwise."""
        state = own_state(state, State)
        if not self._still_held(referee) or state.phase is not Phase.ROLL:
            return None
        values = self._tray
        if len(values) != dice_to_roll(state) or not all(v in DIE_VALUES for v in values):
            return None
        return Roll(values)

    def _still_held(self, referee: Referee) -> bool:
        """A reading is held back and still unused: no roll committed since it came, and no
        step it came after taken back."""
        at = self._held
        if at is None:
            return False
        if len(referee.history) < at or any(
                isinstance(step, Roll) for _, step in referee.history[at:]):
            self._held = None
            self._tray = ()  # used: a later OK must not roll the same dice again
            return False
        return True

    def _refuse(self, referee: Referee, now: float, log_text: str, notice: str) -> Effects:
        return [Note(NoteLevel.WARNING, log_text), Buzz(BuzzPattern.ILLEGAL),
                referee.notice(notice, now, urgent=True)]

    def _commit(self, referee: Referee, step: Roll | Discard, now: float) -> Effects:
        try:
            effects = referee.commit(step, now)
        except IllegalMoveError as error:
            return self._refuse(referee, now, str(error), error.reason)
        self._entry = _Entry()
        if isinstance(step, Roll):
            self._tray = ()  # taken: a later OK must not roll the same dice again
        return effects

    def _entry_for(self, state: State) -> _Entry:
        return self._entry if self._entry.state is state else _Entry(state)

    # ------------------------------------------------------------------ screens
    def decorate(self, referee: Referee, screen: Screen) -> Screen:
        """Add the pool (``extra["pool"]``, drawn as dice faces) and the scoring track
        (``extra["track"]``) to every screen; on a settled board, replace "your turn" with the
        turn's prompt, the legal destinations highlighted and any menu."""
        state = own_state(referee.state, State)
        extra = dict(screen.extra)
        if state.pool:
            extra["pool"] = " ".join(map(str, state.pool))
        extra["track"] = track_text(state.scores)
        screen = replace(screen, extra=extra)
        if not _ready(referee):
            return screen
        prompt, menu, index = self._prompt(state)
        dests = dict.fromkeys(self._destinations(state), "dest")
        return replace(screen, message=_prompt_text(referee, prompt), menu=menu,
                       menu_index=index, highlights=dests)

    def _destinations(self, state: State) -> frozenset[str]:
        """The hexes the player to move may land on (:func:`~companion.rules.mars.destinations`),
        worked out once per state: the prompt and its highlights are built on every screen."""
        known, dests = self._dests
        if known is not state:
            dests = frozenset(hex_name(c) for c in destinations(state))
            self._dests = (state, dests)
        return dests

    def _discards(self, state: State) -> list[int]:
        """The pool values one may discard: all of them when no die gives a legal move
        (Mars #4), none otherwise."""
        if state.phase is not Phase.MOVE or self._destinations(state):
            return []
        return sorted(set(state.pool))

    def _prompt(self, state: State) -> tuple[str, tuple[str, ...], int]:
        """The prompt for the player to move, the menu (may be empty) and its choice."""
        player = state.to_move
        entry = self._entry_for(state)
        if state.phase is Phase.PLACEMENT:
            return f"P{player}: take {reserve_text(state, player)}, place your gardener", (), 0
        if state.phase is Phase.ROLL:
            count = dice_to_roll(state)
            if count == 0:
                return f"P{player}: no empty hex next to your gardener, OK ends your turn", (), 0
            if self.dice == "buttons":
                so_far = f" ({' '.join(map(str, entry.values))} so far)" if entry.values else ""
                text = f"P{player}: die {len(entry.values) + 1} of {count}{so_far}, Select, OK"
                return text, tuple(map(str, DIE_VALUES)), entry.index
            if self.dice == "virtual":
                button = "Roll" if self.roll_button else "OK"
                return f"P{player}: press {button} to roll {_dice(count)}", (), 0
            return f"P{player}: roll {_dice(count)}", (), 0
        discards = self._discards(state)
        if discards:
            menu = tuple(f"discard {v}" for v in discards)
            return f"P{player}: no move, discard a die (-1 point)", menu, entry.index
        turn = "extra turn, " if state.extra_turn else ""
        return f"P{player}: {turn}move {_or(sorted(set(state.pool)))}", (), 0


# ---------------------------------------------------------------------- helpers


def _ready(referee: Referee) -> bool:
    """The board shows exactly the expected position (as its sensors can tell it: presence
    boards see "occupied"), the game goes on and the referee asks nothing: the Mars prompt may
    stand on the matrix and OK/Select belong to it."""
    return (referee.have_board and referee.question is None and referee.outcome is None
            and not referee.diff())


def _prompt_text(referee: Referee, prompt: str) -> str:
    news = score_news(referee)
    return f"{news}. {prompt}" if news else prompt


def _dice(count: int) -> str:
    return "1 die" if count == 1 else f"{count} dice"


def _or(values: Sequence[int]) -> str:
    words = list(map(str, values))
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def reserve_text(state: State, player: int) -> str:
    """Player ``player``'s reserve as the matrix shows it, colours in :data:`COLOURS` order:
    ``"b5 y5 w5 a5 r5 g5"`` (Gardens of Mars, Setup: the dealt flowers)."""
    counts = state.reserve(player)
    return " ".join(f"{COLOUR_LETTERS[c]}{counts[c]}" for c in COLOURS)


def track_text(scores: Sequence[int]) -> str:
    """Every scoring Martian's space on the 0-50 track, the lap past the first:
    ``"P1 15 P2 3 lap 2"`` for scores 15 and 53 (docs/RULINGS.md Mars #6)."""
    return " ".join(f"P{p} {_space(score)}" for p, score in enumerate(scores, start=1))


def _space(score: int) -> str:
    space, laps = track_space(score)
    return f"{space} lap {laps + 1}" if laps else str(space)


def score_news(referee: Referee) -> str:
    """Where the last step sent its player's scoring Martian, when it changed their score:
    ``"P1: scoring Martian to 15"``, ``"P2: scoring Martian back to 3"``; ``""`` otherwise.

    The track is not sensed, so the players move the Martian themselves (Gardens of Mars,
    Moving and Planting; the leapfrog of docs/RULINGS.md Mars #6 is already in the score).
    """
    if not referee.history:
        return ""
    before, after = own_state(referee.history[-1][0], State), own_state(referee.state, State)
    player = before.to_move
    old, new = before.scores[player - 1], after.scores[player - 1]
    if old == new:
        return ""
    return f"P{player}: scoring Martian {'to' if new > old else 'back to'} {_space(new)}"
