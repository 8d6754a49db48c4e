"""Gardens of Mars seats: track points, and the whole turn played ahead over the pool's dice.

``steady``: the step with the best :func:`evaluate` one ply ahead: the player's track points
against the best other player's, a little for the flowers planted (the tiebreak) and for the
dice the gardener would roll at its next turn (hexes without a flower around it).

``strong``: expectimax.  The dice in the pool are known and the players use them in turn
(docs/RULINGS.md Mars #8), so the next plies are searched: the seat's own steps (each
landing, the two colours that score most there), the others' steady steps, and a roll once
the pool is empty as a chance node (the average over rolls sampled from the seat's own
``rng``); the leaves are valued by :func:`evaluate`.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Hashable, Iterator

from companion.opponent import Spend
from companion.rules.hexes import Hex
from companion.rules.mars import (
    GRID,
    RULES,
    Discard,
    Move,
    Phase,
    Roll,
    State,
    Step,
    dice_to_roll,
)

DICE_WEIGHT = 0.6
"""Points a die to roll at the next turn is worth to :func:`evaluate`."""

PLANTED_WEIGHT = 0.05
"""Points a flower planted is worth to :func:`evaluate` (the tiebreak at the end)."""

ROLL_SAMPLES = 3
"""Rolls sampled at a chance node of the strong search."""

ROOTS = 8
"""Steps the strong search looks into, the best one ply ahead first."""

WIDTH = 3
"""Steps the strong search follows at each of the seat's own later steps."""

DEPTH = 8
"""Plies the strong search looks on after the step it weighs: each other player's reply is
a ply, so that with four players the seat still sees its own next turns."""


def chance_next(state: State) -> bool:
    """The pool is empty and the gardeners are placed: the dice are rolled next."""
    return state.phase is Phase.ROLL


def decision(state: State, step: Step) -> Hashable:
    """A Mars step is all decision: the dice come as their own step."""
    return step


def own_steps(state: State, known: Collection[str] | None) -> Iterator[Step]:
    """Every legal step: Mars hides nothing."""
    return RULES.legal_steps(state)


def interrupt(state: State, player: int, known: Collection[str] | None) -> None:
    """Nothing is played out of turn in Gardens of Mars."""
    return None


def evaluate(state: State, player: int) -> float:
    """``state`` for ``player``: points ahead of the best other player, plus
    :data:`PLANTED_WEIGHT` a flower planted and :data:`DICE_WEIGHT` a die to roll next turn;
    a finished game is +-1000 for a win or a loss."""
    outcome = RULES.outcome(state)
    if outcome is not None:
        if player in outcome.winners:
            return 1000.0 + state.scores[player - 1]
        return -1000.0 + state.scores[player - 1]
    best_other = max(s for p, s in enumerate(state.scores, 1) if p != player)
    gardener = state.gardeners[player - 1]
    dice = 0
    if gardener is not None:
        dice = sum(1 for n in GRID.neighbours[gardener] if state.at(n) in ("", "peak"))
    return (state.scores[player - 1] - best_other + PLANTED_WEIGHT * state.planted[player - 1]
            + DICE_WEIGHT * dice)


def _ranked(state: State, steps: list[Step], spend: Spend) -> list[tuple[float, int, Step]]:
    """``(value, index, step)`` for each step while the budget lasts, best first."""
    player = state.to_move
    ranked: list[tuple[float, int, Step]] = []
    for i, step in enumerate(steps):
        if spend.exhausted and ranked:
            break
        ranked.append((evaluate(spend.apply(state, step), player), i, step))
    ranked.sort(key=lambda t: (-t[0], t[1]))
    return ranked


def steady(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """The best step one ply ahead by :func:`evaluate` (ties: the first listed)."""
    return _ranked(state, steps, spend)[0][2]


def _moves(state: State) -> list[Step]:
    """The steps of the move phase worth searching: onto a flower, or planting one of the
    two colours that score most there (the others differ only in what is left in reserve)."""
    steps = list(RULES.legal_steps(state))
    by_place: dict[tuple[int, Hex], list[Move]] = {}
    rest: list[Step] = []
    for step in steps:
        if isinstance(step, Move) and step.plant is not None:
            by_place.setdefault((step.die, step.to), []).append(step)
        else:
            rest.append(step)
    for options in by_place.values():
        options.sort(key=lambda m: -_group_gain(state, m))
        rest += options[:2]
    return rest


def _group_gain(state: State, move: Move) -> int:
    colour = move.plant
    seen = {move.to}
    frontier = [move.to]
    while frontier:
        cell = frontier.pop()
        for n in GRID.neighbours[cell]:
            if n not in seen and state.at(n) == colour:
                seen.add(n)
                frontier.append(n)
    return len(seen)


def _value(state: State, me: int, spend: Spend, until: int, rng: random.Random,
           depth: int) -> float:
    """The value of ``state`` for ``me`` searched ``depth`` plies on within ``until`` nodes:
    ``me`` takes the best of the :data:`WIDTH` steps that look best one ply ahead, another
    player their steady step, a roll the average over :data:`ROLL_SAMPLES` sampled rolls."""
    if (RULES.outcome(state) is not None or depth == 0 or spend.nodes >= until
            or spend.exhausted):
        return evaluate(state, me)
    if state.phase is Phase.ROLL:  # a chance node
        count = dice_to_roll(state)
        values = []
        for _ in range(ROLL_SAMPLES if count else 1):
            if spend.nodes >= until:
                break
            roll = Roll(tuple(rng.randint(1, 6) for _ in range(count)))
            values.append(_value(spend.apply(state, roll), me, spend, until, rng, depth))
        return sum(values) / len(values) if values else evaluate(state, me)
    mover = state.to_move
    children: list[tuple[float, State]] = []
    for step in _moves(state):
        if spend.nodes >= until and children:
            break
        after = spend.apply(state, step)
        children.append((evaluate(after, mover), after))
    children.sort(key=lambda c: -c[0])
    width = WIDTH if mover == me else 1
    return max(_value(after, me, spend, until, rng, depth - 1) for _, after in children[:width])


def strong(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """The step whose line ends best (see the module docstring): the :data:`ROOTS` best
    steps one ply ahead, each given an equal share of the nodes left; in the placement phase
    and for a discard, the steady choice."""
    if state.phase is not Phase.MOVE or any(isinstance(s, Discard) for s in steps):
        return steady(state, steps, known, spend, rng)
    player = state.to_move
    ranked = _ranked(state, _moves(state), spend)[:ROOTS]
    best_value, best = float("-inf"), ranked[0][2]
    for k, (_, _, step) in enumerate(ranked):
        left = spend.left()
        if left <= 0:
            break
        until = spend.nodes + left // (len(ranked) - k)
        value = _value(spend.apply(state, step), player, spend, until, rng, DEPTH)
        if value > best_value:
            best_value, best = value, step
    return best
