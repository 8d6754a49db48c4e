"""The companion as an opponent: which step a seat makes, at three strengths, for each game.

:func:`choose` gives the step a seat makes in a position; :func:`decide` gives it with the
nodes spent.  Both are pure apart from ``rng`` (and the optional wall-clock cap), so a seat
replays from its seed.

Strengths (:class:`Strength`)
-----------------------------
``quick``
    a random legal step, first a kind of step (a move, a special action, a card scored...)
    then a step of that kind, so that rare kinds with thousands of variants do not crowd out
    the moves that make a game progress (:data:`KIND_WEIGHTS`).
``steady``
    one ply on an evaluation built from the game's scoring (the best step by
    ``evaluate(after)`` for the player to move), see the game's module:
    :mod:`companion.opponent.enceladus` (hands: the lowest colour count first),
    :mod:`companion.opponent.mars` (track points), :mod:`companion.opponent.uranus` (points,
    the cards in hand on the board as it stands, the flowers left; there a step drawn among
    those within a margin of the best, as one ply played exactly was hardly weaker than the
    strong search).
``strong``
    a search within a budget of nodes, see the game's module: Mars searches the next plies
    over the dice in the pool (which the players use in turn; with four players up to the
    replies to the seat's next step) and takes the expectation over the next roll
    (expectimax), only the seat's own steps branching; Gardens of Uranus
    answers each of its best steps with the next player's steady reply, then its own next
    step, and holding the Hexagon card plants towards a hexagon it can still complete;
    Enceladus plays each of its best steps on to its next turn (its own best move, then
    every other player's) and sees who is left without a normal move.

Budget
------
A *node* is one position the engine builds with ``rules.apply`` (an Enceladus position
whose end-of-game test ran counts as more, see :mod:`companion.opponent.enceladus`); the
strong searches of Mars and Enceladus also count the steps they list, some tens of them a
node (:meth:`Spend.listed`), so that a position with many steps spends more of the budget.
``budget`` is the most nodes a step may spend (at least one is spent whenever there is a
choice to weigh); the default (:data:`BUDGETS`) is calibrated so that a step takes at most
about 0.2 s on a desktop core, 2 s on a Raspberry Pi Zero 2 W (about ten times slower).
The count, not the clock, bounds the work, so a seed gives the same step on every machine;
``time_cap`` (seconds, read from ``clock``) only stops a search early as a safety.

Chance
------
The engine chooses a player's decisions, never chance's: dice and tube draws come from the
same sources as for people (the dice tray or buttons, the tube).  So:

* Gardens of Mars: when :func:`chance_next` is true (the pool is empty, the dice are to be
  rolled) the next step is the :class:`~companion.rules.mars.Roll` the dice source reports;
  ask :func:`choose` only once the dice are in the pool (the move phase), then again for
  every die.  :func:`choose` raises :class:`InvalidArgumentError` at a roll.
* Gardens of Enceladus: the tube action's three flowers are drawn after it is chosen.  The
  step :func:`choose` returns for a tube action carries one possible draw (the engine weighed
  every draw by its chance); the decision is :func:`decision` of it (the action and the
  colour paid), and the step made at the table is any legal step with the same decision
  (:func:`same_decision`), whatever the tube gives.
* Gardens of Uranus: a card scored draws its replacement face down; the seat learns it and
  passes it in ``known`` next time.

Hidden cards
------------
``known`` is what the seat alone knows: in Gardens of Uranus the canonical names of every
mission card in its hand (``state.hands`` holds only the cards shown).  The engine scores and
shows only cards of ``known`` and never sees another player's hidden cards: the state holds
only how many each hand has, and a card not known is valued as the average of the cards
nobody has shown and the seat does not hold.  With ``known=None`` (no private hand given) the engine
picks among all legal steps, as the rules core sees them (a simulator that decides a hidden
card when it is shown).  An out-of-turn step (the Hexagon card shown while a hexagon stands)
is :func:`interrupt`.
"""

from __future__ import annotations

import importlib
import random
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType, ModuleType
from typing import Required, TypedDict, TypeVar, Unpack

from companion.errors import InvalidArgumentError
from companion.rules.base import SomeRules

T = TypeVar("T")
S = TypeVar("S", bound=Hashable)


class Strength(StrEnum):
    """How well a seat plays; see the module docstring."""

    QUICK = "quick"
    STEADY = "steady"
    STRONG = "strong"


DEFAULT_STRENGTH = Strength.STEADY
"""The strength of virtual players and of a seat given none."""

KIND_WEIGHTS: Mapping[str, float] = MappingProxyType({"Action": 0.2, "Score": 0.15})
"""``quick``: chance weight of a step kind (by class name) against 1.0 for every other kind:
special actions (Enceladus) and scoring a card instead of moving (Uranus) now and then."""

BUDGETS: Mapping[str, Mapping[Strength, int]] = MappingProxyType({
    "enceladus": MappingProxyType({Strength.QUICK: 0, Strength.STEADY: 500,
                                   Strength.STRONG: 3400}),
    "mars": MappingProxyType({Strength.QUICK: 0, Strength.STEADY: 500,
                              Strength.STRONG: 1800}),
    "uranus": MappingProxyType({Strength.QUICK: 0, Strength.STEADY: 1000,
                                Strength.STRONG: 900}),
})
"""Default nodes a step may spend, by game and strength (see Budget in the module docstring).
``steady`` looks at every step once and stops at its budget (the steps left unseen are
skipped); ``strong`` looks at the steps ``steady`` ranks best first, then searches."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A step chosen: ``step`` (one of ``rules.legal_steps(state)``) and ``nodes``, the
    positions built to choose it (at most the budget)."""

    step: Hashable
    nodes: int


class Spend:
    """The budget of one decision: :meth:`apply` counts a node, :meth:`listed` a listing;
    :attr:`exhausted` once the nodes are spent or the wall-clock cap has passed."""

    def __init__(self, rules: SomeRules, nodes: int,
                 deadline: float | None, clock: Callable[[], float]) -> None:
        self.rules = rules
        self.limit = nodes
        self.nodes = 0
        self._listed = 0
        self._deadline = deadline
        self._clock = clock

    def apply(self, state: S, step: Hashable) -> S:
        """``rules.apply(state, step)``, counted: the game's own state after ``step``."""
        self.nodes += 1
        after: S = self.rules.apply(state, step)
        return after

    def charge(self, nodes: int) -> None:
        """Count ``nodes`` more (never past the budget) for a position that cost as much
        more than most: the game's engine says which."""
        self.nodes = max(self.nodes, min(self.nodes + nodes, self.limit))

    def listed(self, steps: int, per_node: int) -> None:
        """Count a listing of ``steps`` steps (the steps a position has, whether or not each
        is then built), ``per_node`` of them a node (the game's engine says how many cost as
        much as one), never past the budget: a position with many steps spends more of the
        budget, so that the count bounds the time there too."""
        before = self._listed // per_node
        self._listed += steps
        self.charge(self._listed // per_node - before)

    def left(self) -> int:
        """Nodes still to spend (0 once the wall-clock cap has passed)."""
        if self._deadline is not None and self._clock() >= self._deadline:
            return 0
        return max(self.limit - self.nodes, 0)

    @property
    def exhausted(self) -> bool:
        return self.left() <= 0


def _game(rules: SomeRules) -> ModuleType:
    return importlib.import_module(f"companion.opponent.{rules.name}")


def chance_next(rules: SomeRules, state: Hashable) -> bool:
    """Whether the next step is chance's alone (Gardens of Mars with an empty pool: the
    dice are rolled), so that the dice source gives it, not the engine."""
    return bool(_game(rules).chance_next(state))


def decision(rules: SomeRules, state: Hashable, step: Hashable) -> Hashable:
    """What the player decides of ``step`` in ``state``: the step itself, apart from an
    Enceladus tube action, whose draw is the tube's (the action and the colour paid)."""
    key: Hashable = _game(rules).decision(state, step)
    return key


def same_decision(rules: SomeRules, state: Hashable, chosen: Hashable, made: Hashable) -> bool:
    """Whether the step ``made`` at the table carries out the step ``chosen`` by the engine:
    the same :func:`decision`, whatever chance gave."""
    return decision(rules, state, chosen) == decision(rules, state, made)


def own_steps(rules: SomeRules, state: Hashable,
              known: Collection[str] | None = None) -> list[Hashable]:
    """The legal steps the player to move may make knowing ``known`` (their hidden cards):
    every legal step when ``known`` is ``None``; else, in Gardens of Uranus, only cards of
    their hand scored or shown, and only their own Hexagon claim."""
    return list(_game(rules).own_steps(state, known))


def quick(steps: Sequence[T], rng: random.Random) -> T:
    """The ``quick`` choice among ``steps`` (see :data:`KIND_WEIGHTS`).  Raises
    :class:`InvalidArgumentError` for no steps."""
    by_kind: dict[str, list[T]] = defaultdict(list)
    for step in steps:
        by_kind[type(step).__name__].append(step)
    if not by_kind:
        raise InvalidArgumentError("no legal step: the game is over")
    kinds = sorted(by_kind)
    weights = [KIND_WEIGHTS.get(kind, 1.0) for kind in kinds]
    kind = rng.choices(kinds, weights)[0]
    return rng.choice(by_kind[kind])


class Ask(TypedDict, total=False):
    """What :func:`decide` and :func:`choose` take beside the position: ``rng`` (required),
    ``budget`` (nodes, default :data:`BUDGETS`), ``known``, ``time_cap`` (seconds, read
    from ``clock``, default ``time.monotonic``); see the module docstring."""

    rng: Required[random.Random]
    budget: int | None
    known: Collection[str] | None
    time_cap: float | None
    clock: Callable[[], float]


def decide(rules: SomeRules, state: Hashable, strength: Strength | str,
           **ask: Unpack[Ask]) -> Decision:
    """The step the player to move makes at ``strength`` (a :class:`Strength` or its name)
    and the nodes spent; see :class:`Ask` for the keywords.

    Raises :class:`InvalidArgumentError` when the game is over, when the next step is chance's
    (:func:`chance_next`) and for an unknown strength.
    """
    strength = Strength(strength)
    game = _game(rules)
    if rules.outcome(state) is not None:
        raise InvalidArgumentError("no legal step: the game is over")
    if game.chance_next(state):
        raise InvalidArgumentError("the next step is chance's: take it from the dice source")
    known, budget, time_cap = ask.get("known"), ask.get("budget"), ask.get("time_cap")
    clock = ask.get("clock", time.monotonic)
    steps = list(game.own_steps(state, known))
    if not steps:
        raise InvalidArgumentError("no legal step: the game is over")
    if strength is Strength.QUICK or len(steps) == 1:
        return Decision(quick(steps, ask["rng"]) if len(steps) > 1 else steps[0], 0)
    nodes = BUDGETS[rules.name][strength] if budget is None else budget
    deadline = None if time_cap is None else clock() + time_cap
    spend = Spend(rules, nodes, deadline, clock)
    play = game.steady if strength is Strength.STEADY else game.strong
    step = play(state, steps, known, spend, ask["rng"])
    return Decision(step, spend.nodes)


def choose(rules: SomeRules, state: Hashable, strength: Strength | str,
           **ask: Unpack[Ask]) -> Hashable:
    """The step of :func:`decide`: one of ``rules.legal_steps(state)``."""
    return decide(rules, state, strength, **ask).step


def interrupt(rules: SomeRules, state: Hashable, player: int,
              known: Collection[str] | None) -> Hashable | None:
    """The step seat ``player`` makes out of turn now, or ``None``: in Gardens of Uranus the
    Hexagon card shown (it wins) while a hexagon stands and ``known`` holds it."""
    step: Hashable | None = _game(rules).interrupt(state, player, known)
    return step
