"""Gardens of Enceladus seats: hands weighed lowest colour count first, and the next
player's reply.

:func:`evaluate` weighs a hand (the colour counts sorted ascending, the wildflower on a
lowest count; the text, Scoring your hand) by :data:`WEIGHTS`, the lowest count most, as
hands compare; a position is the player's hand against the best other hand (in the
cooperative game, the team hand alone).  A tube action is valued as the average over its
draws, each weighed by its chance from the tube's flowers.

``steady``: the best step one ply ahead by :func:`evaluate`.

``strong``: two plies.  The :data:`ROOTS` best steps one ply ahead are each answered by
the next player's steady step, and the step whose answer leaves the seat best is chosen.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Iterator
from math import comb

from companion.opponent import Spend
from companion.rules.base import rank_points
from companion.rules.enceladus import (
    DRAW,
    PAYMENT,
    RULES,
    Action,
    State,
    Step,
    hands,
)

WEIGHTS = (27.0, 9.0, 3.0, 1.0, 0.3)
"""Worth of one flower in each place of a sorted hand, lowest count first."""

WIN = 1000.0
"""What a won (or, negated, a lost) game is worth to :func:`evaluate`, beyond its hands."""

ROOTS = 6
"""Steps the strong search answers, the best one ply ahead first."""


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


def evaluate(state: State, player: int) -> float:
    """``state`` for ``player``: the worth of their hand less the best other hand's (the
    team hand's worth in the cooperative game); a finished game adds +-:data:`WIN` by rank
    points."""
    all_hands = hands(state)
    mine = _worth(all_hands[player - 1])
    if state.options.mode == "cooperative":
        value = mine
    else:
        value = mine - max(_worth(h) for p, h in enumerate(all_hands, 1) if p != player)
    if RULES.outcome(state) is not None:
        points = rank_points(all_hands)
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


def _ranked(state: State, steps: Iterable[Step], spend: Spend, player: int | None = None,
            until: int | None = None) -> list[tuple[float, int, Step]]:
    """``(value, index, step)`` per decision (a tube action and payment once, its value the
    average over the draws) while the budget lasts, best first, for ``player`` (default
    the player to move)."""
    me = state.to_move if player is None else player
    totals: dict[Hashable, list[float]] = {}  # per decision: weighted values, weights
    first: dict[Hashable, tuple[int, Step]] = {}  # per decision: its first step listed
    for i, step in enumerate(steps):
        if totals and (spend.exhausted or (until is not None and spend.nodes >= until)):
            break
        value = evaluate(spend.apply(state, step), me)
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


def steady(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """The best step one ply ahead by :func:`evaluate` (ties: the first listed)."""
    return _ranked(state, steps, spend)[0][2]


def strong(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """The step the next player's steady answer leaves best (see the module docstring),
    each of the :data:`ROOTS` best steps given an equal share of the nodes left."""
    player = state.to_move
    ranked = _ranked(state, steps, spend, until=spend.limit * 2 // 3)[:ROOTS]
    if len(ranked) == 1 or ranked[0][0] >= WIN / 2:
        return ranked[0][2]
    best_value, best = float("-inf"), ranked[0][2]
    for k, (one_ply, _, step) in enumerate(ranked):
        left = spend.left()
        if left < 3:
            break
        until = spend.nodes + max(left // (len(ranked) - k), 3)
        after = spend.apply(state, step)
        if RULES.outcome(after) is not None or after.to_move == player:
            value = one_ply
        else:
            answers = _ranked(after, RULES.legal_steps(after), spend, until=until - 1)
            answer = answers[0][2]
            value = evaluate(spend.apply(after, answer), player)
        if value > best_value:
            best_value, best = value, step
    return best
