"""Gardens of Mars seats: track points, and the whole turn played ahead over the pool's dice.

``steady``: the step with the best :func:`evaluate` one ply ahead: the player's track points
against the best other player's, a little for the flowers planted (the tiebreak) and for the
dice the gardener would roll at its next turn (hexes without a flower around it).

``strong``: expectimax.  The dice in the pool are known and the players use them in turn
(docs/RULINGS.md Mars #8), so the next plies are searched (:data:`DEPTH`; with four
players :data:`DEPTH_FOUR`, up to the replies to the seat's next step): its own steps (each
landing, the two colours that score most there), the others' steady steps, and a roll once
the pool is empty as a chance node (the average over rolls sampled from the seat's own
``rng``); the leaves are valued by :func:`evaluate` against the others' average
(``field``: the seat is measured against each other player alike).  Only the seat
branches: another player's step is the one that gains them most by the group it joins and
the dice it leaves (:func:`_weighed`, what ``steady`` mostly chooses), found without
building a position for each of their steps, so that the nodes go to the seat's own
next turns even with three others between them.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Hashable, Iterable

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

LISTED_PER_NODE = 20
"""Steps of a listing weighed by :func:`_weighed` that cost the strong search as much as a
node (a position built and evaluated): a listing's cost grows with the dice in the pool and
the empty hexes the gardeners reach, so it is counted by its length."""

DEPTH = 8
"""Plies the strong search looks on after the step it weighs: each other player's reply is
a ply, so that with three players the seat still sees its own next turns."""

DEPTH_FOUR = 6
"""The plies of :data:`DEPTH` with four players or more: the seat's next step and the
replies to it; the nodes of deeper lines are better spent on more of the seat's own steps
(in seeded four-player samples eight plies beat steady less often, twelve still less)."""


def chance_next(state: State) -> bool:
    """The pool is empty and the gardeners are placed: the dice are rolled next."""
    return state.phase is Phase.ROLL


def decision(state: State, step: Step) -> Hashable:
    """A Mars step is all decision: the dice come as their own step."""
    return step


def own_steps(state: State, known: Collection[str] | None) -> Iterable[Step]:
    """Every legal step: Mars hides nothing."""
    return RULES.legal_steps(state)


def interrupt(state: State, player: int, known: Collection[str] | None) -> None:
    """Nothing is played out of turn in Gardens of Mars."""
    return None


def evaluate(state: State, player: int, *, field: bool = False) -> float:
    """``state`` for ``player``: points ahead of the best other player (``field``: of the
    others' average), plus :data:`PLANTED_WEIGHT` a flower planted and :data:`DICE_WEIGHT` a
    die to roll next turn; a finished game is +-1000 for a win or a loss (``field``: 1000
    times the share of the others finished behind less the share ahead, plus the points
    ahead of their average)."""
    outcome = RULES.outcome(state)
    if outcome is not None and field:
        rank = {p: points for p, _, points in outcome.ranking}
        others = [p for p in rank if p != player]
        ahead = sum((rank[player] > rank[p]) - (rank[player] < rank[p]) for p in others)
        return (1000.0 * ahead / len(others) + state.scores[player - 1]
                - sum(state.scores[p - 1] for p in others) / len(others))
    if outcome is not None:
        if player in outcome.winners:
            return 1000.0 + state.scores[player - 1]
        return -1000.0 + state.scores[player - 1]
    others = [s for p, s in enumerate(state.scores, 1) if p != player]
    best_other = sum(others) / len(others) if field else max(others)
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


def _moves(state: State, spend: Spend) -> list[Step]:
    """The steps of the move phase worth searching: onto a flower, or planting one of the
    two colours that score most there (the others differ only in what is left in reserve)."""
    return [step for step, _ in _weighed(state, spend)]


def _weighed(state: State, spend: Spend, best: bool = False) -> list[tuple[Step, float]]:
    """The steps of :func:`_moves`, each with what it gains its player by :func:`evaluate`,
    about, without building the position: the group a flower planted joins (a point lost on
    a flower or for a discard), and the dice the landing spot would roll.  ``best``: only
    the first of those that gain most.  The listing is counted on ``spend``
    (:data:`LISTED_PER_NODE`)."""
    pieces = dict(zip(GRID.cells, state.cells, strict=True))
    gains: dict[Hex, dict[str, int]] = {}
    rolls: dict[Hex, float] = {}
    by_place: dict[tuple[int, Hex], list[tuple[Step, float]]] = {}
    rest: list[tuple[Step, float]] = []
    top: tuple[Step, float] | None = None
    listed = 0
    for step in RULES.legal_steps(state):
        listed += 1
        if not isinstance(step, Move):
            weighed: tuple[Step, float] = (step, -1.0)
        else:
            dice = rolls.get(step.to)
            if dice is None:
                dice = rolls[step.to] = DICE_WEIGHT * sum(
                    1 for n in GRID.neighbours[step.to] if pieces[n] in ("", "peak"))
            if step.plant is None:
                weighed = (step, dice - 1.0)
            else:
                if step.to not in gains:
                    gains[step.to] = _plant_gains(pieces, step.to)
                gain = gains[step.to].get(step.plant, 0) + 1 + PLANTED_WEIGHT + dice
                weighed = (step, gain)
                if not best:
                    by_place.setdefault((step.die, step.to), []).append(weighed)
                    continue
        if best:
            if top is None or weighed[1] > top[1]:
                top = weighed
        else:
            rest.append(weighed)
    spend.listed(listed, LISTED_PER_NODE)
    if best:
        return [] if top is None else [top]
    for options in by_place.values():
        options.sort(key=lambda m: -m[1])
        rest += options[:2]
    return rest


def _plant_gains(pieces: dict[Hex, str], spot: Hex) -> dict[str, int]:
    """``{colour: flowers}`` of the groups next to the empty ``spot`` that a flower of that
    colour planted there joins."""
    joined: dict[str, int] = {}
    seen = {spot}
    for start in GRID.neighbours[spot]:
        colour = pieces[start]
        if start in seen or colour in ("", "peak"):
            continue
        seen.add(start)
        frontier, size = [start], 0
        while frontier:
            cell = frontier.pop()
            size += 1
            for n in GRID.neighbours[cell]:
                if n not in seen and pieces[n] == colour:
                    seen.add(n)
                    frontier.append(n)
        joined[colour] = joined.get(colour, 0) + size
    return joined


def _value(state: State, me: int, spend: Spend, until: int, rng: random.Random,
           depth: int) -> float:
    """The value of ``state`` for ``me`` searched ``depth`` plies on within ``until`` nodes:
    ``me`` takes the best of the :data:`WIDTH` steps that look best one ply ahead, another
    player the step :func:`_weighed` puts first (one node), a roll the average over
    :data:`ROLL_SAMPLES` sampled rolls."""
    if (RULES.outcome(state) is not None or depth == 0 or spend.nodes >= until
            or spend.exhausted):
        return evaluate(state, me, field=True)
    if state.phase is Phase.ROLL:  # a chance node
        count = dice_to_roll(state)
        values = []
        for _ in range(ROLL_SAMPLES if count else 1):
            if spend.nodes >= until:
                break
            roll = Roll(tuple(rng.randint(1, 6) for _ in range(count)))
            values.append(_value(spend.apply(state, roll), me, spend, until, rng, depth))
        return sum(values) / len(values) if values else evaluate(state, me, field=True)
    mover = state.to_move
    if mover != me:  # the other player's steady step, weighed without building each
        reply = _weighed(state, spend, best=True)[0][0]
        if spend.exhausted:  # the listing spent the last nodes
            return evaluate(state, me, field=True)
        return _value(spend.apply(state, reply), me, spend, until, rng, depth - 1)
    moves = _moves(state, spend)
    if spend.exhausted:
        return evaluate(state, me, field=True)
    children: list[tuple[float, State]] = []
    for step in moves:
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
    ranked = _ranked(state, _moves(state, spend), spend)[:ROOTS]
    depth = DEPTH if state.players < 4 else DEPTH_FOUR
    best_value, best = float("-inf"), ranked[0][2]
    for k, (_, _, step) in enumerate(ranked):
        left = spend.left()
        if left <= 0:
            break
        until = spend.nodes + left // (len(ranked) - k)
        value = _value(spend.apply(state, step), player, spend, until, rng, depth)
        if value > best_value:
            best_value, best = value, step
    return best
