"""Gardens of Uranus at the table: mission cards, the decks, the Hexagon and the hands at the end.

The referee recognises on its own what the cells show (Gardens of Uranus, Setup and Your turn):
a gardener placed; a gardener slid in a straight line, with the flower planted under it (its
colour read from the cell, ``"M1+red"``) or onto a flower.  :class:`CardTable` does what no
cell shows: the secret mission cards (the text, Your turn 2, Mission cards, End of the game).

* **Cards**, from the source ``[board] cards`` names.  ``"reader"``: a card held to the card
  reader arrives as a ``CARD`` message (``hardware/PROTOCOL.md``) and is looked up in the
  catalogue (``[board] missions``, :func:`load_catalogue`).  ``"buttons"``: no reader; OK
  (or Select) on a settled board opens a menu on the matrix, the card's kind first, then the
  card, then the deck; Select cycles, OK chooses, Undo closes the menu.  A reader that reports a
  card while the source is ``"buttons"`` is used all the same.
* **Scoring by showing**: the card shown by the player to move is scored on the board as it
  stands (:func:`~companion.rules.uranus.mission_value`), the points added and the replacement
  drawn unknown; with more than one non-empty deck the matrix asks which (a Select/OK menu of
  the decks), with one the step is committed at once.  The next prompt says what was scored:
  ``"P1 scored 6 (triangle yellow). P2: move or show a card"``.  An unknown card id, a card
  scored already (shown twice), a card another player is known to hold, are refused with a
  notice and the buzzer; nothing changes.  A card shown while the last step is made but not yet
  committed (settling, or asked about) is held and counts, for the next player, once that step
  is; shown while a step is under way or on a board no step explains, it is refused.
* **Hands registered face down**: with a reader, before placing their gardener the player to
  move may hold the five cards the draft left them to the reader: each is registered
  (:func:`~companion.rules.uranus.register_card`, journaled as ``show:<mission>``) and the
  matrix counts them (``"P1: 2 of 5 cards registered; ..."``) without naming any.  Cards not
  registered are learned when shown, as ever.
* **Preview** ("what would it score?"): with a reader, Select arms *ask* mode (the prompt says
  so; before the turns begin too) and the next card shown is only valued,
  ``"triangle:yellow would score 6 now"``; a card shown before the turns begin, once the
  player's five are registered, or after the end is valued the same way.  Without a reader
  the card menu shows the value of the card under the cursor
  (``"triangle:yellow would score 6"``) and Undo leaves the menu without scoring.
* **The Hexagon**: while six flowers of one colour stand on a hexagon's corners and the card is
  still unseen, the prompt announces it; whoever shows the Hexagon card wins at once, whoever
  is to move (a menu asks whose card it is when several players may hold it).
* **The end**: each player in turn shows the cards still in their hand (the prompt counts them
  down; the companion knows how many each holds, so no OK is needed), then the final scores are
  computed (points + cards in hand - unused-flower penalty) and shown and journaled with the
  outcome; each player's sum is logged.
* The deck counts are in every screen's ``extra["decks"]``; on a settled board the legal
  destinations of the player to move are highlighted.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from companion.board import protocol
from companion.errors import ConfigError, IllegalMoveError, InvalidArgumentError
from companion.events import BoardMessage, Button
from companion.files import reason_of
from companion.referee.deal import DealTable
from companion.referee.effects import Buzz, BuzzPattern, Effects, Note, NoteLevel, Show
from companion.referee.referee import Extension, Question, Referee, RefereeSettings
from companion.referee.screen import Screen
from companion.rules.base import Seated, own_state
from companion.rules.gardeners import FLOWERS_EACH
from companion.rules.hexes import hex_name
from companion.rules.missions import COLOURS, HEXAGON, parse_catalogue
from companion.rules.uranus import (
    FLOWERS_PER_COLOUR,
    HAND_SIZE,
    RULES,
    Claim,
    Reveal,
    Score,
    State,
    card_refusal,
    destinations,
    final_scores,
    hexagon_standing,
    may_hold,
    mission_value,
    unused_flower_penalty,
)

SOURCES: tuple[str, ...] = ("reader", "buttons")
"""The card sources of ``[board] cards``."""


def load_catalogue(path: str | os.PathLike[str] = "") -> dict[str, str]:
    """``{card id: canonical mission}`` from the TOML file at ``path`` (``[board] missions``),
    or, for ``""``, from the catalogue shipped with the companion (the package's
    ``data/missions.toml``, read with :mod:`importlib.resources`).

    Raises :class:`ConfigError` when the file cannot be read or is not a catalogue of the 36
    cards (:func:`companion.rules.missions.parse_catalogue` names every problem).
    """
    resource: Traversable = (Path(path) if os.fspath(path)
                             else files("companion").joinpath("data", "missions.toml"))
    try:
        text = resource.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{resource}: the mission card catalogue cannot be read "
                          f"({reason_of(error)})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{resource}: the mission card catalogue is not UTF-8 text") from None
    return parse_catalogue(text, str(resource))


def extensions(settings: RefereeSettings, seed: int) -> list[Extension]:
    """The referee extensions of a Gardens of Uranus game: one :class:`CardTable` with the
    card source ``settings.cards`` and the catalogue at ``settings.missions``
    (:func:`load_catalogue`), and with ``settings.dealt_by_hand`` a
    :class:`~companion.referee.deal.DealTable` before it for the reserves dealt by hand; the
    cards draw nothing, so ``seed`` is not used.  Raises :class:`ConfigError` for a missing
    or broken catalogue."""
    table: list[Extension] = [CardTable(load_catalogue(settings.missions),
                                        cards=settings.cards)]
    if settings.dealt_by_hand:  # the flowers dealt from the bag by hand, too
        # First: while the deal is entered, Select adds a flower, never arms ask mode.
        table.insert(0, DealTable(COLOURS, dict(FLOWERS_EACH), FLOWERS_PER_COLOUR))
    return table


def card_text(mission: str) -> str:
    """A mission as players say it: ``"triangle:yellow"`` -> ``"triangle yellow"``,
    ``"pairs:blue-red"`` -> ``"pairs blue-red"``, ``"edge_trees:red"`` -> ``"edge trees red"``."""
    return mission.replace(":", " ").replace("_", " ")


class CardTable:
    """The Gardens of Uranus extension of the referee
    (:class:`companion.referee.referee.Extension`).

    ``catalogue``: ``{card id: canonical mission}`` (:func:`load_catalogue`); ``cards``: the
    source, one of :data:`SOURCES`.  Raises :class:`InvalidArgumentError` for an unknown source
    (the config checks it first).
    """

    def __init__(self, catalogue: Mapping[str, str], *, cards: str = "reader") -> None:
        if cards not in SOURCES:
            raise InvalidArgumentError(
                f"unknown card source {cards!r}; expected one of {', '.join(SOURCES)}")
        self.catalogue = dict(catalogue)
        self.cards = cards
        self._ask_in: State | None = None  # ask mode holds only in the state it was armed in
        self._facts: tuple[State | None, frozenset[str], bool] = (None, frozenset(), False)
        self._held: str | None = None  # a card shown while the last step settled

    # ------------------------------------------------------------------ events
    def handle(self, referee: Referee, event: Button | BoardMessage) -> Effects | None:
        """``CARD`` messages, and Select/OK on a settled board; ``None`` for anything else."""
        if isinstance(event, BoardMessage) and isinstance(event.message, protocol.Card):
            return self._card(referee, event.message.card_id, event.t)
        if isinstance(event, Button) and event.name in ("select", "ok") and _ready(referee):
            return self._press(referee, event.name, event.t)
        return None

    def _card(self, referee: Referee, card_id: str, now: float) -> Effects:
        """A card held to the reader: score it, reveal it, claim the Hexagon, or value it."""
        mission = self.catalogue.get(card_id)
        if mission is None:
            return _refuse(referee, now, f"card {card_id!r} is not in the mission card catalogue",
                           f"Unknown card {card_id}: not a Gardens of Uranus mission")
        state = own_state(referee.state, State)
        if (state.phase == "placement" and state.unknown[state.to_move - 1]
                and self._ask_in is not state and _settled(referee)):
            return self._register(referee, mission, now)
        if self._ask_in is state or state.phase in ("placement", "over"):
            self._ask_in = None
            text = f"{mission} would score {mission_value(state, mission)} now"
            return [Note(NoteLevel.INFO, f"card {card_id} shown to ask: {text}"),
                    referee.notice(text, now)]
        if not _settled(referee):
            if referee.have_board and referee.settling:
                # Shown by the next player while the last step settles or is asked about.
                self._held = card_id
                return [Note(NoteLevel.INFO, f"card {card_id} shown while the last step "
                                             "settles; it counts once the step is committed")]
            return [referee.notice(f"P{state.to_move}: put the board right, then show the card",
                                   now, urgent=True), Buzz(BuzzPattern.ILLEGAL)]
        player = state.to_move
        if state.phase == "reveal":
            if mission in state.hands[player - 1]:
                return [referee.notice(f"{mission} is counted already for P{player}", now)]
            return self._offer(referee, [Reveal(mission)], now, level=0)
        if mission == HEXAGON and _hexagon_open(state):
            order = [player] + [p for p in range(1, state.players + 1) if p != player]
            claims = [Claim(p) for p in order if may_hold(state, p, HEXAGON)]
            if claims:
                return self._offer(referee, claims, now, level=0)
        refusal = card_refusal(state, player, mission)
        if refusal is not None:
            return _refuse(referee, now, f"player {player} showed {mission}: {refusal}",
                           f"P{player}: {refusal}")
        steps = [Score(mission, deck) for deck, left in enumerate(state.decks, 1) if left]
        return self._offer(referee, steps, now, level=0)

    def _register(self, referee: Referee, mission: str, now: float) -> Effects:
        """A card held to the reader before the player to move has placed their gardener:
        one of their five, registered face down (:func:`register_card`); the matrix counts
        them and never names the card."""
        state = own_state(referee.state, State)
        player = state.to_move
        try:
            effects = referee.commit(Reveal(mission), now)
        except IllegalMoveError as error:
            # the whole table reads the matrix: a card of a hand kept secret is not named
            said = (f"P{player}: that card is registered already"
                    if mission in state.hands[player - 1] else f"P{player}: {error.reason}")
            return _refuse(referee, now, f"player {player} registered {mission}: {error.reason}",
                           said)
        return [*effects, Note(NoteLevel.INFO, f"player {player} registered a mission card "
                                               f"face down")]

    def settled(self, referee: Referee, now: float) -> Effects:
        """The board has come to show the expected position: a card shown while the last step
        settled counts now, for the player to move."""
        card_id, self._held = self._held, None
        return [] if card_id is None else self._card(referee, card_id, now)

    def held(self, referee: Referee, state: Seated) -> None:
        """Nothing: a card held back waits for the board to settle (:meth:`settled`)."""
        return None

    def _press(self, referee: Referee, name: str, now: float) -> Effects | None:
        """Select arms ask mode with a reader; without one, Select or OK opens the card menu."""
        state = own_state(referee.state, State)
        if self.cards == "reader":
            if name != "select" or state.phase not in ("turn", "placement"):
                return None
            self._ask_in = None if self._ask_in is state else state
            return [Show(referee.screen(now))]
        steps: list[Hashable] = [
            s for s in RULES.legal_steps(state) if isinstance(s, Score | Claim | Reveal)
        ]
        if not steps:
            return None
        return self._offer(referee, steps, now, level=0)

    def _offer(self, referee: Referee, steps: Sequence[Hashable], now: float, *,
               level: int) -> Effects:
        """Commit the one step of ``steps``, or ask among them from ``level`` on, skipping the
        levels of their choice paths that offer one option only."""
        if len(steps) == 1:
            return self._commit(referee, steps[0], now)
        while True:
            options = list(dict.fromkeys(_path(referee, s)[level] for s in steps))
            if len(options) > 1:
                break
            level += 1
        return referee.ask(steps, options, now, level=level, origin=steps)

    def _commit(self, referee: Referee, step: Hashable, now: float) -> Effects:
        before = own_state(referee.state, State)
        try:
            effects = referee.commit(step, now)
        except IllegalMoveError as error:
            return _refuse(referee, now, str(error), f"P{before.to_move}: {error.reason}")
        after = own_state(referee.state, State)
        if after.phase == "over" and before.phase != "over":
            effects.append(Note(NoteLevel.INFO, final_breakdown(after)))
        return effects

    # ------------------------------------------------------------------ screens
    def decorate(self, referee: Referee, screen: Screen) -> Screen:
        """Add the deck counts (``extra["decks"]``) to every screen; while a card menu is
        open, say what it asks and what the card under the cursor would score; on a settled
        board, replace "your turn" with the turn's prompt (the last card scored, the
        Hexagon, ask mode) and highlight the legal destinations."""
        state = own_state(referee.state, State)
        screen = replace(screen, extra={**screen.extra,
                                        "decks": " ".join(map(str, state.decks))})
        question = referee.question
        if question is not None and all(_is_card_step(s) for s in question.steps):
            return replace(screen, message=_menu_text(referee, question))
        if state.phase == "placement" and self._ask_in is state and _ready(referee):
            return replace(screen, message="Ask: show a card to see what it would score")
        if state.phase == "placement" and _ready(referee) and self.cards == "reader":
            player = state.to_move
            known = HAND_SIZE - state.unknown[player - 1]
            if known:  # cards registered face down: counted, never named
                more = ("hold the next to the reader or place your gardener"
                        if known < HAND_SIZE else "place your gardener")
                return replace(screen, message=f"P{player}: {known} of {HAND_SIZE} cards "
                                               f"registered; {more}")
        if not _ready(referee) or state.phase == "placement":
            return screen
        player = state.to_move
        if state.phase == "reveal":
            left = state.unknown[player - 1]
            how = "show" if self.cards == "reader" else "OK, then pick"
            cards = "the card" if left == 1 else f"the {left} cards"
            return replace(screen, message=f"The end: P{player}, {how} {cards} in your hand")
        landings, hexagon = self._board_facts(state)
        if self._ask_in is state:
            prompt = "Ask: show a card to see what it would score"
        elif self.cards == "reader":
            prompt = f"P{player}: move or show a card"
        else:
            prompt = f"P{player}: move, or OK to score a card"
        if hexagon:
            prompt = f"Hexagon on the board: its holder shows the card to win! {prompt}"
        last = _last_score(referee)
        if last:
            prompt = f"{last}. {prompt}"
        return replace(screen, message=prompt, highlights=dict.fromkeys(landings, "dest"))

    def _board_facts(self, state: State) -> tuple[frozenset[str], bool]:
        """The legal destinations of the player to move and whether an unclaimed hexagon
        stands, worked out once per state (screens are built on every field update)."""
        cached, landings, hexagon = self._facts
        if cached is not state:
            # The landings alone, no move built: on the update that commits a step.
            landings = frozenset(map(hex_name, destinations(state)))
            hexagon = _hexagon_open(state)
            self._facts = (state, landings, hexagon)
        return landings, hexagon


def final_breakdown(state: State) -> str:
    """Each player's final score as a sum, for the log and the journal's notes:
    ``"final scores: P1 12 + cards 9 - unused 3 = 18; P2 ..."`` (the text, End of the game)."""
    parts = []
    for p, total in enumerate(final_scores(state), 1):
        cards = sum(mission_value(state, card) for card in state.hands[p - 1])
        unused = unused_flower_penalty(sum(state.reserves[p - 1]))
        parts.append(f"P{p} {state.scores[p - 1]} + cards {cards} - unused {unused} = {total}")
    return "final scores: " + "; ".join(parts)


def _ready(referee: Referee) -> bool:
    """The board shows exactly the expected position, the game goes on and the referee asks
    nothing: the Uranus prompt may stand on the matrix and OK/Select belong to it."""
    return (referee.question is None and own_state(referee.state, State).phase != "over"
            and _settled(referee))


def _settled(referee: Referee) -> bool:
    """The board is connected and shows exactly the expected position (as its sensors can:
    occupancy only on a presence board)."""
    diff = referee.diff()
    return referee.have_board and not diff




def _hexagon_open(state: State) -> bool:
    """A hexagon stands and the Hexagon card has not been scored away (so someone may still
    show it to win)."""
    return HEXAGON not in state.discarded and hexagon_standing(state)


def _is_card_step(step: object) -> bool:
    return isinstance(step, Score | Claim | Reveal)


def _path(referee: Referee, step: Hashable) -> tuple[str, ...]:
    return referee.rules.choice_path(referee.state, step)


def _menu_text(referee: Referee, question: Question) -> str:
    """What a card menu asks, with the value of the card under the cursor once it is known."""
    state = own_state(referee.state, State)
    chosen = question.options[question.index]
    under = [s for s in question.steps if _path(referee, s)[question.level] == chosen]
    if isinstance(under[0], Claim):
        return "Hexagon! Whose card is it? Select, then OK"
    missions = {s.mission for s in under if isinstance(s, Score | Reveal)}
    if len(missions) != 1:
        return f"P{state.to_move}: which card? Select, then OK (Undo: none)"
    mission = missions.pop()
    value = mission_value(state, mission)
    if isinstance(under[0], Score) and chosen.startswith("deck "):
        return f"P{state.to_move} scores {value} ({card_text(mission)}): draw from which deck?"
    return f"{mission} would score {value}. Select, then OK"


def _last_score(referee: Referee) -> str:
    """``"P1 scored 6 (triangle yellow)"`` when the last step committed scored a card."""
    if not referee.history:
        return ""
    before, step = referee.history[-1]
    if not isinstance(step, Score):
        return ""
    before = own_state(before, State)
    value = mission_value(before, step.mission)
    return f"P{before.to_move} scored {value} ({card_text(step.mission)})"


def _refuse(referee: Referee, now: float, log_text: str, shown: str) -> Effects:
    return [Note(NoteLevel.WARNING, f"refused: {log_text}"), Buzz(BuzzPattern.ILLEGAL),
            referee.notice(shown, now, urgent=True)]
