"""Gardens of Enceladus seats: hands weighed lowest colour count first, and the turns
that follow.

:func:`evaluate` weighs a hand (the colour counts sorted ascending, the wildflower on a
lowest count; the text, Scoring your hand) by :data:`WEIGHTS`, the lowest count most, as
hands compare; a position is the player's hand against the best other hand (in the
cooperative game, the team hand alone).  A tube action is valued as the average over its
draws, each weighed by its chance from the tube's flowers.

``steady``: the best step one ply ahead by :func:`evaluate`.

``strong``: the best steps one ply ahead (:data:`ROOTS` at most) are each played on:
the seat ends its turn with its best move (after a special action), every other player in
turn makes their best move, and the seat makes its best move of its next turn.  A player
left with no normal move must pay for special actions until one gives a move, or the game
ends at their turn (the text, Game end): the line stops there, that player charged
:data:`STUCK_PAYMENTS` payments of 3 flowers of the colour they hold most, or, if they
cannot pay, the game ended.  A line is valued by the seat's hand against the average other
hand (each other seat is one to finish ahead of), and the step whose line is best is
chosen: the seat sees the turns that strand another player, or would strand itself, which
one ply does not.

Nodes: a position whose end-of-game test ran (its player to move has no normal move, and
the rules looked for special actions that would give one; milliseconds to tens of them, a
hundred times a plain position) counts as :data:`END_TEST_NODES` nodes, and a decision
builds at most :data:`END_TESTS` of them, so that the node budget bounds the time too.  A
player without a normal move weighs first the special actions that put a flower in its
Martian's lines (:func:`_weighed`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Iterator, Sequence
from functools import lru_cache
from math import comb

from companion.opponent import Spend
from companion.rules.base import rank_points
from companion.rules.enceladus import (
    DRAW,
    ENTRY_RAYS,
    PAYMENT,
    PEAK_SQUARE,
    RULES,
    Action,
    Move,
    Phase,
    State,
    Step,
    _move_steps,
    hand,
    hands,
)
from companion.rules.squares import ORTHOGONAL_RAYS, SQUARE_NAMES

WEIGHTS = (27.0, 9.0, 3.0, 1.0, 0.3)
"""Worth of one flower in each place of a sorted hand, lowest count first."""

WIN = 1000.0
"""What a won (or, negated, a lost) game is worth to :func:`evaluate`, beyond its hands."""

ROOTS, MIN_ROOTS = 12, 10
"""The most and the fewest steps the strong search plays on, the best one ply ahead
first (see :func:`strong`)."""

MIN_MOVES, MOVES_SEEN = 10, 200
"""What :func:`strong` takes a player's turn to cost at least, in nodes, and the most
steps it counts the moves among."""

END_TEST_NODES = 50
"""Nodes a position counts when its end-of-game test ran (see the module docstring)."""

END_TESTS = 6
"""Positions whose end-of-game test ran a decision builds at most (the test can take some
tens of milliseconds when few flowers are left)."""

END_TEST_FLOWERS = 60
"""Flowers in the garden below which a position is checked for an end-of-game test run;
with more, a Martian without a flower in its lines is too rare to pay for the check."""

LISTED_PER_NODE = 25
"""Normal moves listed by the strong search (for a position's next turn, or to see whether
its player has one) that cost as much as a node: with many flowers a position has many
moves, and their listing would otherwise cost the search half its time unbounded."""

STUCK_PAYMENTS = 2
"""Payments the strong search charges a player left without a normal move: one seldom
gives a move, and the game seldom ends at once."""

STUCK_ORDER = ("jump", "diagonal", "swap_martian", "move_flower", "swap_peak_flower",
               "move_peak", "swap_flowers", "tube", "pick", "wildflower")
"""The order a seat without a normal move weighs the special actions in: those that can
move its Martian, then those that can bring a flower into its line."""


def chance_next(state: State) -> bool:
    """Never: the tube's draw is part of the tube action."""
    return False


def decision(state: State, step: Step) -> Hashable:
    """The step, or for a tube action the action and its payment without the draw."""
    if isinstance(step, Action) and step.name == "tube":
        return step._replace(drawn=())
    return step


def own_steps(state: State, known: Collection[str] | None) -> Iterator[Step]:
    """Every legal step: Enceladus hides nothing."""
    return iter(RULES.legal_steps(state))


def interrupt(state: State, player: int, known: Collection[str] | None) -> None:
    """Nothing is played out of turn in Gardens of Enceladus."""
    return None


def _worth(hand: tuple[int, ...]) -> float:
    return sum(w * n for w, n in zip(WEIGHTS, hand, strict=False))


@lru_cache(maxsize=1 << 16)
def _reserve_worth(reserve: tuple[int, ...]) -> float:
    """The :func:`_worth` of the hand of ``reserve`` (six counts), kept: a search weighs the
    same few reserves again and again."""
    return _worth(hand(reserve))


def evaluate(state: State, player: int) -> float:
    """``state`` for ``player``: the worth of their hand less the best other hand's (the
    team hand's worth in the cooperative game); a finished game adds +-:data:`WIN` by rank
    points."""
    if state.options.mode == "cooperative":
        value = _worth(hands(state)[player - 1])
    else:
        worths = list(map(_reserve_worth, state.reserves))
        value = worths.pop(player - 1) - max(worths)
    if RULES.outcome(state) is not None:
        points = rank_points(hands(state))
        value += WIN if points[player - 1] == max(points) else -WIN
    return value


def _draw_chance(state: State, step: Action) -> float:
    """The chance of the tube action's draw, from the tube after the payment went in."""
    colours = state.options.colours
    tube = list(state.tube)
    tube[colours.index(step.pay)] += PAYMENT
    drawn = Counter(colours.index(c) for c in step.drawn)
    ways = 1
    for colour, count in drawn.items():
        ways *= comb(tube[colour], count)
    return ways / comb(sum(tube), DRAW)


def _flowers(state: State) -> int:
    return sum(map((0).__le__, state.garden))


def _normal_moves(state: State) -> Sequence[Move]:
    """The normal moves of the player to move, the steps ``legal_steps`` lists first (none
    outside a turn), without listing the special actions, which cost most of a listing."""
    return _move_steps(state) if state.phase is Phase.TURN else []


def _stuck(state: State, steps: list[Step]) -> bool:
    """Whether the player to move, in their turn, has no normal move among ``steps`` (the
    rules list moves first)."""
    return state.phase is Phase.TURN and not isinstance(steps[0], Move)


def _weighed(state: State, steps: list[Step]) -> Sequence[Step]:
    """``steps`` in the order a seat weighs them: as the rules list them (moves first) while
    it has a normal move; with none, first the special actions that put a flower on a
    square its Martians see along their rows and columns (or move or swap the peak that
    stops one), then by :data:`STUCK_ORDER`, each paid with the colour held most first."""
    if not _stuck(state, steps):
        return steps
    reserve = state.reserves[state.to_move - 1]
    colours = state.options.colours
    order = {name: i for i, name in enumerate(STUCK_ORDER)}
    seen = _lines(state)

    def rank(action: Action) -> tuple[bool, int, int]:
        return (seen.isdisjoint(action.cells), order[action.name],
                -reserve[colours.index(action.pay)])

    actions = sorted((step for step in steps if isinstance(step, Action)), key=rank)
    return actions


def _lines(state: State) -> frozenset[str]:
    """The squares the Martians of the player to move see along their rows and columns (a
    Martian outside the garden: its way in), each line up to and with its first peak."""
    seen = set()
    for cell in state.martians[state.to_move - 1]:
        rays = ORTHOGONAL_RAYS[cell] if cell < len(SQUARE_NAMES) else (
            ENTRY_RAYS[cell - len(SQUARE_NAMES)],)
        for ray in rays:
            for square in ray:
                seen.add(SQUARE_NAMES[square])
                if state.garden[square] == PEAK_SQUARE:
                    break
    return frozenset(seen)


class _Search:
    """The positions of one decision: each ``(state, step)`` applied once (a step weighed at
    the root is met again when its turn is played on) and counted on ``spend`` (a position
    whose end-of-game test ran as :data:`END_TEST_NODES`, and with ``listings`` the
    normal moves listed, :data:`LISTED_PER_NODE` a node); no more once ``spend`` is spent
    or has reached :attr:`until` nodes."""

    def __init__(self, spend: Spend, listings: bool = False) -> None:
        self.spend = spend
        self.listings = listings
        self.until = spend.limit
        self.end_tests = 0
        self._after: dict[tuple[State, Step], State] = {}
        self._moves: dict[State, bool] = {}

    @property
    def exhausted(self) -> bool:
        return (self.spend.exhausted or self.spend.nodes >= self.until
                or self.end_tests >= END_TESTS)

    def can_move(self, state: State) -> bool:
        """Whether the player to move in ``state`` (in their turn) has a normal move."""
        moves = self._moves.get(state)
        if moves is None:
            moves = self._moves[state] = bool(self.moves(state))
        return moves

    def moves(self, state: State) -> Sequence[Move]:
        """:func:`_normal_moves` of ``state``, counted on ``spend`` with ``listings``."""
        moves = _normal_moves(state)
        if self.listings:
            self.spend.listed(len(moves), LISTED_PER_NODE)
        return moves

    def apply(self, state: State, step: Step) -> State:
        key = (state, step)
        after = self._after.get(key)
        if after is None:
            after = self._after[key] = self.spend.apply(state, step)
            if after.phase is Phase.OVER or (
                    after.phase is Phase.TURN and _flowers(after) < END_TEST_FLOWERS
                    and not self.can_move(after)):
                self.end_tests += 1
                self.spend.charge(END_TEST_NODES - 1)
        return after

    def ranked(self, state: State, steps: Iterable[Step],
               until: int | None = None) -> list[tuple[float, int, Step]]:
        """``(value, index, step)`` per decision (a tube action and payment once, its value
        the average over the draws) for the player to move, best first, weighing ``steps``
        in order while the nodes last (at least one step; no more once ``spend`` has
        reached ``until`` nodes)."""
        me = state.to_move
        totals: dict[Hashable, list[float]] = {}  # per decision: weighted values, weights
        first: dict[Hashable, tuple[int, Step]] = {}  # per decision: its first step listed
        for i, step in enumerate(steps):
            if totals and (self.exhausted or (until is not None and self.spend.nodes >= until)):
                break
            value = evaluate(self.apply(state, step), me)
            key = decision(state, step)
            weight = _draw_chance(state, step) if isinstance(step, Action) and key is not step \
                else 1.0
            entry = totals.setdefault(key, [0.0, 0.0])
            first.setdefault(key, (i, step))
            entry[0] += weight * value
            entry[1] += weight
        ranked = [(total / weight, *first[key]) for key, (total, weight) in totals.items()]
        ranked.sort(key=lambda t: (-t[0], t[1]))
        return ranked

    def greedy(self, state: State) -> State:
        """``state`` after the player to move makes the normal move that leaves them best by
        :func:`evaluate` (the steady choice among moves; the first best of those weighed);
        ``state`` itself when there is no move or no node left."""
        me = state.to_move
        best: tuple[float, State] | None = None
        for step in self.moves(state):
            if self.spend.exhausted or (best is not None and self.exhausted):
                break
            after = self.apply(state, step)
            value = evaluate(after, me)
            if best is None or value > best[0]:
                best = (value, after)
        return state if best is None else best[1]

    def line(self, state: State, player: int) -> float:
        """``state`` (after a step of ``player``) for ``player`` once the turn is played on
        to ``player``'s next move (see the module docstring)."""
        if RULES.outcome(state) is None and state.to_move == player:
            if not self.can_move(state):
                return _stranded(state, player)
            state = self.greedy(state)
        while RULES.outcome(state) is None and state.to_move != player:
            if not self.can_move(state):
                return _stranded(state, player)
            if self.exhausted:
                break
            state = self.greedy(state)
        if RULES.outcome(state) is None and state.to_move == player:
            if not self.can_move(state):
                return _stranded(state, player)
            if not self.exhausted:
                state = self.greedy(state)
        return _standing(state, player)


def _stranded(state: State, player: int) -> float:
    """``state`` for ``player`` when the player to move has no normal move: they pay
    :func:`_stuck_cost` (``player`` shares what another loses with the other players), or
    the game ends at their turn."""
    stranded = state.to_move
    cost = _stuck_cost(state, stranded)
    if cost >= WIN:
        return _standing(state, player, over=True)
    if stranded == player:
        return _standing(state, player) - cost
    return _standing(state, player) + cost / (state.players - 1)


def _standing(state: State, player: int, over: bool = False) -> float:
    """``state`` for ``player`` in the strong search: the worth of their hand less the
    average of the other hands' (the team hand's worth in the cooperative game); a finished
    game (or ``over``: as if it ended now) adds :data:`WIN` for each other player they
    finish ahead of, less as much for each one ahead of them, over the other players."""
    if state.options.mode == "cooperative":
        return evaluate(state, player)
    others = list(map(_reserve_worth, state.reserves))
    value = others.pop(player - 1) - sum(others) / len(others)
    if over or RULES.outcome(state) is not None:
        points = rank_points(hands(state))
        mine_points = points[player - 1]
        value += WIN * sum((mine_points > q) - (mine_points < q) for q in points) / len(others)
    return value


def _stuck_cost(state: State, player: int) -> float:
    """What being left without a normal move costs ``player``: :data:`STUCK_PAYMENTS`
    special actions (as many as they can pay), each paid with 3 flowers of the colour they
    hold most (what the worth of their hand falls by), or :data:`WIN` when they hold no 3
    of a colour (the game ends at their turn)."""
    reserve = list(state.reserves[player - 1])
    before = _worth(hand(reserve))
    for paid in range(STUCK_PAYMENTS):
        most = max(range(len(state.options.colours)), key=lambda c: reserve[c])
        if reserve[most] < PAYMENT:
            return WIN if paid == 0 else before - _worth(hand(reserve))
        reserve[most] -= PAYMENT
    return before - _worth(hand(reserve))


def steady(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """The best step one ply ahead by :func:`evaluate` (ties: the first weighed)."""
    return _Search(spend).ranked(state, _weighed(state, steps))[0][2]


def strong(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """The step whose turn, played on to the seat's next turn, leaves the seat best (see
    the module docstring): the best steps one ply ahead (weighed with a quarter of the
    nodes), as many as the nodes left can play on (a turn of every player costs about as
    many nodes as the seat has moves now), at least :data:`MIN_ROOTS`, at most
    :data:`ROOTS`, each given an equal share of the nodes left."""
    player = state.to_move
    search = _Search(spend, listings=True)
    moves = sum(1 for step in steps[:MOVES_SEEN] if isinstance(step, Move))
    ranked = search.ranked(state, _weighed(state, steps),
                           until=moves + spend.limit // 10)
    if len(ranked) == 1 or ranked[0][0] >= WIN / 2:
        return ranked[0][2]
    per_line = state.players * max(moves, MIN_MOVES)
    ranked = ranked[:min(ROOTS, max(MIN_ROOTS, spend.left() // per_line))]
    best_value, best = float("-inf"), ranked[0][2]
    for k, (_, _, step) in enumerate(ranked):
        left = spend.left()
        if left < 3:
            break
        search.until = spend.nodes + max(left // (len(ranked) - k), 3)
        value = search.line(search.apply(state, step), player)
        if value > best_value:
            best_value, best = value, step
    return best
