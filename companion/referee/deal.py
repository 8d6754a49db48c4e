"""Reserves dealt by hand, entered with Select and OK (Gardens of Mars and Uranus).

At a real table the flowers are dealt from the bag at random (Gardens of Mars, Setup; Gardens
of Uranus, Setup), so with ``[game] setup = "board"`` the companion cannot know the reserves
from its seed: before the first gardener is placed, :class:`DealTable` asks each player in
turn how many flowers of each colour they were dealt.  Select adds one (past the most there
can be, the bag's or what is left of the player's deal, it wraps to 0), OK takes the count
and asks the next colour; a player's last colour is the rest of their deal, never asked.
Once every player has answered, the rules core checks the deal
(:meth:`companion.rules.base.GameRules.reserve_problems`): what does not add up is said in a
sentence and the entry starts again from P1; a deal that adds up becomes the game's
reserves and is written to the journal's header with the setup.  The live page's New game
takes the same counts typed in.  Placing a gardener before the entry is done keeps the seed's
deal.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace

from companion.events import BoardMessage, Button
from companion.referee.effects import Effects, Note, NoteLevel
from companion.referee.referee import Referee
from companion.referee.screen import Screen
from companion.rules.base import Seated


@dataclass
class DealTable:
    """The referee extension (:class:`companion.referee.referee.Extension`) that takes the
    reserves dealt by hand: ``colours`` the game's flower colours in reserve order,
    ``each`` the flowers dealt to each player by number of players, ``per_colour`` the
    flowers of a colour in the bag."""

    colours: Sequence[str]
    each: dict[int, int]
    per_colour: int
    entered: list[dict[str, int]] = field(default_factory=list)
    """The reserves of the players who have answered, P1 first."""
    current: dict[str, int] = field(default_factory=dict)
    """The counts of the player answering now, so far."""
    value: int = 0
    done: bool = False

    # ------------------------------------------------------------------ events
    def handle(self, referee: Referee, event: Button | BoardMessage) -> Effects | None:
        """Select and OK while the deal is being entered; ``None`` for anything else."""
        if not isinstance(event, Button) or event.name not in ("select", "ok"):
            return None
        if not self._asking(referee):
            return None
        if event.name == "select":
            self.value = (self.value + 1) % (self._most(referee) + 1)
            return [referee.notice(self._prompt(), event.t)]
        return self._take(referee, event.t)

    def _take(self, referee: Referee, now: float) -> Effects:
        players = referee.rules.players(referee.state)
        self.current[self.colours[len(self.current)]] = self.value
        self.value = 0
        if len(self.current) == len(self.colours) - 1:  # the last colour: the rest of the deal
            self.current[self.colours[-1]] = self.each[players] - sum(self.current.values())
        if len(self.current) == len(self.colours):
            self.entered.append(self.current)
            self.current = {}
        if len(self.entered) < players:
            return [referee.notice(self._prompt(), now)]
        dealt, self.entered = self.entered, []
        problems = referee.rules.reserve_problems(referee.state, dealt)
        if problems:
            text = " ".join(problems)
            return [Note(NoteLevel.INFO, f"the reserves entered do not add up: {text}"),
                    referee.notice(f"{text} Again: {self._prompt()}", now, urgent=True)]
        self.done = True
        effects = referee.replace_setup(referee.rules.deal_reserves(referee.state, dealt), now)
        return [*effects, Note(NoteLevel.INFO, "the reserves dealt by hand are entered")]

    def settled(self, referee: Referee, now: float) -> Effects:
        return []

    def held(self, referee: Referee, state: Seated) -> Hashable | None:
        return None

    # ------------------------------------------------------------------ screens
    def decorate(self, referee: Referee, screen: Screen) -> Screen:
        """While the deal is being entered, the prompt asks for the next count."""
        if not self._asking(referee):
            return screen
        return replace(screen, message=self._prompt(), highlights={})

    def _asking(self, referee: Referee) -> bool:
        """Whether the deal is still to be entered: before the first step, once the setup is
        in place and the board shows it, nothing asked."""
        if self.done or referee.history or referee.adopt or referee.question is not None:
            return False
        diff = referee.diff()
        return referee.have_board and not diff and referee.rules.outcome(referee.state) is None

    def _most(self, referee: Referee) -> int:
        """The most the colour asked may count: the bag's, or what is left of the player's
        deal (so the rest, their last colour, never goes below 0)."""
        left = self.each[referee.rules.players(referee.state)] - sum(self.current.values())
        return min(self.per_colour, left)

    def _prompt(self) -> str:
        player, colour = len(self.entered) + 1, self.colours[len(self.current)]
        return f"Reserves dealt by hand: P{player} {colour}? {self.value} (Select +1, OK next)"
