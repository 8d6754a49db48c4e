"""Gardens of Uranus seats: the final score estimated now, and the seat's next step ahead.

The seat's hand is ``known`` (every card it holds, canonical names).  :func:`evaluate` is the
final score the player would have if the game ended now (points scored, every card of their
hand on the board as it stands, less the penalty for the flowers left; the text, End of the
game), a card not known counted at the average value of the cards nobody has shown, against
the best other player's estimate.  Scoring a card is thereby worth the card drawn for it
against the flower not planted, and planting is worth the penalty it saves.

``steady``: a good step one ply ahead by :func:`evaluate`, not always the best: it draws
among the steps within :data:`STEADY_MARGIN` points of the best, as a fair player who weighs
the board well but not exactly does.  (Played exactly, one ply ahead was so close to the strong
search that the strengths were hard to tell apart: the strong seat won 57-61 % of fresh
seeded games, where it wins 86-87 % against this one.)

``strong``: each of the :data:`ROOTS` best steps one ply ahead is answered by the next
player's steady reply (the spot it takes, the flower it plants against the seat's cards), then
followed by the seat's own best step from there (:data:`FOLLOW`), and the step whose line
ends best is chosen: a step the reply cannot spoil, leaving the gardener where it can still
reach empty spots to plant.  It needs no guess at the others' hidden cards: the reply values
them, as the seat does, as any card nobody has shown.  (A determinised search that played the
others' replies with hands sampled from the cards nobody has shown measured no better than
the seat's own follow-up alone; the reply with its own cards valued at the mean, then the
follow-up, measured better than either.)  Holding the Hexagon card, the strong seat also
values the hexagon it can still complete (:func:`hexagon_progress`, :data:`HEXAGON_WEIGHT`):
it plants its corners in one colour and wins at once by showing the card, where the steady
seat values the card at nothing and scores it to draw another.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import compress
from operator import itemgetter

from companion.opponent import Spend
from companion.rules import missions
from companion.rules.missions import ALL_MISSIONS, COLOURS, HEXAGON
from companion.rules.uranus import (
    BOARDS,
    RULES,
    Claim,
    Reveal,
    Score,
    State,
    Step,
    garden,
    seen,
    unused_flower_penalty,
)

ROOTS = 8
"""Steps the strong search looks into, the best one ply ahead first."""

FOLLOW = ("next", "me")
"""The plies after each step the strong search weighs: the next player's steady reply
(``"next"``), then the seat's own best step (``"me"``, its turn again however many play)."""

WIN = 1000.0
"""What a won (or, negated, a lost) game is worth to :func:`evaluate`, beyond its points."""

STEADY_MARGIN = 2.0
"""Points of :func:`evaluate` by which a step may fall short of the best and still be the one
the steady seat takes (drawn at random among those, with the seat's seeded generator)."""


HEXAGON_WEIGHT = 4.0
"""What the strong seat holding the Hexagon card adds to :func:`evaluate` for a hexagon it
can still complete with k of its corners in one colour: ``HEXAGON_WEIGHT * k * k`` (all six:
:data:`WIN`), so that it plants towards the hexagon instead of scoring the card for nothing."""

Hexagons = tuple[Callable[[Sequence[str]], tuple[str, ...]], ...]
"""Regular hexagons of a board, each as what gives the flowers on its six corners from
``State.flowers``."""

_HEXAGONS: dict[str, Hexagons] = {
    name: tuple(itemgetter(*corners) for corners in sorted(
        {tuple(sorted(shape.index[c] for c in corners))
         for spot in shape.grid.cells
         for corners in missions.hexagons_through(shape.grid, spot)}))
    for name, shape in BOARDS.items()
}
"""``_HEXAGONS[board]``: every regular hexagon of the board."""


def live_hexagons(state: State) -> Hexagons:
    """The hexagons of ``state`` that may still be completed: no tree on a corner and flowers
    of one colour at most (flowers never leave, so a hexagon lost stays lost)."""
    trees = {state.shape.index[tree] for tree in state.trees}
    flowers = list(state.flowers)
    for i in trees:
        flowers[i] = "tree"
    live = []
    for corners in _HEXAGONS[state.options.board]:
        kinds = set(corners(flowers)) - {""}
        if len(kinds) <= 1 and "tree" not in kinds:
            live.append(corners)
    return tuple(live)


def hexagon_progress(state: State, player: int, hexagons: Hexagons | None = None) -> int:
    """The most corners (0-6) of a regular hexagon that hold flowers of one colour, among the
    ``hexagons`` (default :func:`live_hexagons`) ``player`` can still complete: enough
    flowers of that colour in their reserve for the empty corners."""
    reserve = state.reserves[player - 1]
    most = max(reserve)
    best = 0
    for corners in live_hexagons(state) if hexagons is None else hexagons:
        colours = corners(state.flowers)
        filled = 6 - colours.count("")
        if filled <= best:
            continue
        kinds = set(colours) - {""}
        if len(kinds) > 1:
            continue
        if filled == 6:
            return 6
        if (reserve[COLOUR_INDEX[kinds.pop()]] if kinds else most) >= 6 - filled:
            best = filled
    return best


COLOUR_INDEX = {colour: i for i, colour in enumerate(COLOURS)}
"""Where a colour's count stands in a reserve."""

_CARD_COLOURS: dict[str, tuple[str, ...]] = {
    card: tuple(c for c in COLOURS if c in card.partition(":")[2].split("-"))
    for card in ALL_MISSIONS
}
"""The colours whose flowers a card's value depends on (none for the Hexagon)."""

MEMO_SIZE = 1 << 16
"""Card values :class:`Values` keeps (the oldest half is dropped when full)."""


class _Memo:
    """Card values by the spots of their colours, for one board, triangle option and trees
    (``context``; another clears them).  The keys hold only strings and integers, so the
    garbage collector leaves them alone."""

    context: Hashable = None
    values: dict[Hashable, int] = {}


class Values:
    """``Values(state)(card)``: what ``card`` (a canonical name) scores on the board of
    ``state`` now, :func:`companion.rules.missions.mission_value`.  A card's value depends
    only on the spots of its colours (the board, the trees and the triangle option fixed),
    and a step plants one flower at most, so each value is kept by those spots
    (:data:`MEMO_SIZE`): most cards of a position searched are not worked out again."""

    __slots__ = ("_state", "_spots", "_garden")

    def __init__(self, state: State) -> None:
        self._state = state
        context = (state.options.board, state.options.triangle_points, state.trees)
        if context != _Memo.context:
            _Memo.context, _Memo.values = context, {}
        flowers = state.flowers
        cells = range(len(flowers))
        self._spots = {c: tuple(compress(cells, map(c.__eq__, flowers))) for c in COLOURS}
        self._garden: missions.Garden | None = None

    def __call__(self, card: str) -> int:
        memo = _Memo.values
        key = (card, *(self._spots[c] for c in _CARD_COLOURS[card]))
        value = memo.get(key)
        if value is None:
            state = self._state
            if self._garden is None:
                self._garden = garden(state)
            value = missions.mission_value(self._garden, card, state.options.triangle_points)
            if len(memo) >= MEMO_SIZE:
                for old in list(memo)[:MEMO_SIZE // 2]:
                    del memo[old]
            memo[key] = value
        return value


def chance_next(state: State) -> bool:
    """Never: a card drawn is the player's to learn, not a step of its own."""
    return False


def decision(state: State, step: Step) -> Hashable:
    """A Uranus step is all decision."""
    return step


def _hand(state: State, player: int, known: Collection[str] | None) -> frozenset[str]:
    """The cards ``player`` holds as far as the seat knows: shown ones, and ``known``."""
    return (frozenset(state.hands[player - 1]) | frozenset(known or ())) - state.discarded


def own_steps(state: State, known: Collection[str] | None) -> Iterator[Step]:
    """The legal steps; with ``known``, only cards of that hand scored or shown and only the
    seat's own Hexagon claim (every legal step if that leaves none: a hand given wrongly
    must not stop the game)."""
    steps = list(RULES.legal_steps(state))
    if known is None:
        return iter(steps)
    hand = _hand(state, state.to_move, known)
    mine = [
        s for s in steps
        if not (isinstance(s, Score | Reveal) and s.mission not in hand)
        and not (isinstance(s, Claim) and (s.player != state.to_move or HEXAGON not in hand))
    ]
    return iter(mine or steps)


def interrupt(state: State, player: int, known: Collection[str] | None) -> Step | None:
    """The Hexagon card shown by ``player`` while a hexagon stands, when ``known`` holds it."""
    if known is None or HEXAGON not in _hand(state, player, known):
        return None
    claim = Claim(player)
    return claim if claim in set(RULES.legal_steps(state)) else None


def unseen_mean(state: State, hand: Iterable[str]) -> float:
    """The average value on the board now of the cards nobody has shown and not in
    ``hand``: what a card not known is worth (0 when there is none)."""
    value = Values(state)
    shown = seen(state)
    pool = [c for c in ALL_MISSIONS if c not in shown and c not in hand]
    if not pool:
        return 0.0
    return sum(map(value, pool)) / len(pool)


def evaluate(state: State, player: int, hands: Sequence[Collection[str]], mean: float,
             hexagons: Hexagons | None = None) -> float:
    """``state`` for ``player``: their estimated final score less the best other player's
    (see the module docstring).  ``hands[p - 1]``: the cards player p is taken to hold
    (the others': the cards they have shown, or a sampled hand); ``mean``: what any other
    card in a hand is worth.  A finished game adds +-:data:`WIN`; ``hexagons`` (the strong
    seat: the hexagons still live, :func:`live_hexagons`) adds the Hexagon card's worth when
    ``player`` holds it (:data:`HEXAGON_WEIGHT`)."""
    outcome = RULES.outcome(state)
    value_of = Values(state)
    estimates = []
    for p in range(1, state.players + 1):
        held = [c for c in hands[p - 1] if c not in state.discarded] if p - 1 < len(hands) \
            else []
        held_set = set(held) | set(state.hands[p - 1])
        size = len(state.hands[p - 1]) + state.unknown[p - 1]
        value = float(sum(map(value_of, held_set)))
        value += max(size - len(held_set), 0) * mean
        estimates.append(state.scores[p - 1] + value
                         - unused_flower_penalty(sum(state.reserves[p - 1])))
    mine = estimates[player - 1]
    lead = mine - max(e for p, e in enumerate(estimates, 1) if p != player)
    if outcome is not None:
        lead += WIN if player in outcome.winners else -WIN
    elif hexagons is not None and HEXAGON in hands[player - 1] \
            and HEXAGON not in state.discarded:
        corners = hexagon_progress(state, player, hexagons)
        lead += WIN if corners == 6 else HEXAGON_WEIGHT * corners * corners
    return lead


def _seat_hands(state: State, player: int, known: Collection[str] | None) -> list[frozenset[str]]:
    """What the seat ``player`` knows of every hand: its own, and the others' shown cards."""
    return [_hand(state, p, known) if p == player else frozenset(state.hands[p - 1])
            for p in range(1, state.players + 1)]


def _ranked(state: State, steps: list[Step], hands: Sequence[Collection[str]],
            spend: Spend, until: int | None = None,
            hexagons: Hexagons | None = None) -> list[tuple[float, int, Step]]:
    """``(value, index, step)`` for each step while the budget lasts, best first."""
    player = state.to_move
    mean = unseen_mean(state, hands[player - 1])
    ranked: list[tuple[float, int, Step]] = []
    for i, step in enumerate(steps):
        if ranked and (spend.exhausted or (until is not None and spend.nodes >= until)):
            break
        after = spend.apply(state, step)
        ranked.append((evaluate(after, player, _after_hands(hands, player, step), mean,
                                hexagons), i, step))
    ranked.sort(key=lambda t: (-t[0], t[1]))
    return ranked


def _after_hands(hands: Sequence[Collection[str]], player: int,
                 step: Step) -> Sequence[Collection[str]]:
    if not isinstance(step, Score):
        return hands
    return [frozenset(h) - {step.mission} if p == player else h
            for p, h in enumerate(hands, 1)]


def steady(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """A step drawn by ``rng`` among those one ply ahead whose :func:`evaluate` is within
    :data:`STEADY_MARGIN` of the best (see the module docstring)."""
    ranked = _ranked(state, steps, _seat_hands(state, state.to_move, known), spend)
    best = ranked[0][0]
    return rng.choice([step for value, _, step in ranked if value >= best - STEADY_MARGIN])


def _one_deck(steps: Iterable[Step]) -> list[Step]:
    """``steps`` with each card scored once, drawing from the first deck listed: which deck
    the replacement comes from changes nothing the seat can weigh (every card drawn is
    unknown to it), so the other decks would only spend nodes."""
    scored: set[str] = set()
    kept: list[Step] = []
    for step in steps:
        if isinstance(step, Score):
            if step.mission in scored:
                continue
            scored.add(step.mission)
        kept.append(step)
    return kept


def _reply(state: State, hands: list[frozenset[str]], spend: Spend, until: int,
           hexagons: Hexagons | None = None) -> Step | None:
    """The steady step of the player to move holding ``hands[to_move - 1]``, within
    ``until`` nodes spent (``hexagons``: weighing the Hexagon card as the strong seat does)."""
    mover = state.to_move
    steps = _one_deck(own_steps(state, hands[mover - 1]))
    if not steps:
        return None
    step: Step = _ranked(state, steps, hands, spend, until, hexagons)[0][2]
    return step


def strong(state: State, steps: list[Step], known: Collection[str] | None, spend: Spend,
           rng: random.Random) -> Step:
    """The step whose follow-up ends best (see the module docstring): the :data:`ROOTS`
    best steps one ply ahead, each given an equal share of the nodes left."""
    player = state.to_move
    seat = _seat_hands(state, player, known)
    live = live_hexagons(state) if HEXAGON in seat[player - 1] else None
    ranked = _ranked(state, _one_deck(steps), seat, spend, hexagons=live)[:ROOTS]
    if state.phase != "turn" or len(ranked) == 1 or ranked[0][0] >= WIN / 2:
        return ranked[0][2]
    best_value, best = float("-inf"), ranked[0][2]
    for k, (_, _, step) in enumerate(ranked):
        left = spend.left()
        if left <= 0:
            break
        until = spend.nodes + left // (len(ranked) - k)
        hands = [frozenset(h) for h in _after_hands(seat, player, step)]
        line = spend.apply(state, step)
        for who in FOLLOW:
            if RULES.outcome(line) is None and line.phase == "turn" and until - spend.nodes > 1:
                if who == "me":  # the others' gardeners where they stand
                    line = replace(line, to_move=player)
                mover = line.to_move
                follow = _reply(line, hands, spend, until - 1,
                                live if mover == player else None)
                if follow is not None:
                    line = spend.apply(line, follow)
                    hands = [frozenset(h) for h in _after_hands(hands, mover, follow)]
        mine = _seat_hands(line, player, hands[player - 1])
        value = evaluate(line, player, mine, unseen_mean(line, mine[player - 1]), live)
        if value > best_value:
            best_value, best = value, step
    return best
