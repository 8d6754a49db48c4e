"""The Gardens of Uranus rules core: three boards, gardeners, planting, mission cards.

Sources: the published rules of Gardens of Uranus (the text) and ``docs/RULINGS.md``
(Coordinates, Uranus #1-#8).  Spots are axial hexes (:mod:`companion.rules.hexes`), named
``"q,r"``.  Mission values live in :mod:`companion.rules.missions`.

A game is a frozen :class:`State`; steps are :class:`Place` (setup: a gardener onto an empty
spot), :class:`Move` (slide and plant), :class:`Score` (score a card, discard it, draw a
replacement), :class:`Claim` (show the Hexagon card while a hexagon stands) and, once the game
has ended, :class:`Reveal` (show a card still in hand for the final scores).

Secret hands (the text, Setup: "secret mission cards").  The companion does not see the cards
a player holds until they are shown, so a hand is the cards known to be in it plus a count of
unknown ones: a real table starts with five unknown cards each (:meth:`UranusRules.new_game`),
a replacement is drawn unknown (``Score.drawn`` is ``None``) and learned when it is shown
later.  A player may show a card they are known to hold, or, while they hold unknown cards,
any card nobody has shown yet.  Known hands (the case files, :func:`table_setup`, a simulator
that deals open hands with :func:`deal_missions`) work as before: a step may name the card
drawn, and a known Hexagon holder wins the moment a hexagon stands.  The rules track how many
cards each deck still holds.  ``RULES`` implements
:class:`companion.rules.base.GameRules`; ``CASES`` is the case adapter of
:mod:`companion.rules.cases`.

Options (docs/RULINGS.md Uranus #7): ``board`` (``hexagonal`` | ``trapezoid`` | ``rhombus``,
default ``hexagonal``) and ``triangle_points`` (``perimeter`` | ``one_side``, default
``perimeter``).

Notation: ``@0,0`` place; ``0,3=red`` move to 0,3 and plant red; ``0,3`` move onto a flower;
``score:triangle:yellow/2:groups:red`` score triangle:yellow, draw groups:red from deck 2
(``score:triangle:yellow/2`` draws an unknown card); ``claim:2`` player 2 shows the Hexagon
card; ``show:groups:red`` the player revealing shows groups:red at the end.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from functools import lru_cache
from itertools import chain, compress, filterfalse
from operator import itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar, TypeAlias

from companion.errors import ConfigError, IllegalMoveError, InvalidPositionError, InvalidStepError
from companion.rules import missions
from companion.rules.base import (
    EMPTY,
    TREE,
    Cell,
    Outcome,
    Piece,
    SetupProblem,
    evolved,
    listed,
    martian,
    parse_piece,
    ranked,
    replaced,
    setup_refused,
)
from companion.rules.gardeners import (
    FLOWERS_EACH,
    GardenerRules,
    deal_flowers,
    gardener,
    move_changes,
    overdealt,
)
from companion.rules.hexes import DIRECTIONS, Hex, HexGrid, hex_name, hexagon, parse_hex
from companion.rules.missions import ALL_MISSIONS, COLOURS, HEXAGON, Garden, parse_mission

if TYPE_CHECKING:
    from companion.rules.cases import Answer, Case, JsonTree, Position, UranusStep

RULE_SETUP = "Gardens of Uranus, Setup"
RULE_TURN = "Gardens of Uranus, Your turn"
RULE_SCORE = "Gardens of Uranus, Your turn (Score a mission card)"
RULE_END = "Gardens of Uranus, End of the game"
RULE_HEXAGON = "Gardens of Uranus, Mission cards (Hexagon)"

FLOWERS_PER_COLOUR = 12
"""Flowers of each colour in the game (docs/RULINGS.md Uranus #1)."""

HAND_SIZE = 5
"""Mission cards each player holds after the draft (the text, Setup)."""

ENDINGS: Mapping[str, str] = MappingProxyType(
    {
        "hexagon": "the Hexagon was completed",
        "no_flowers": "a player had no flowers left at the start of their turn",
        "no_planting": "every player in succession moved without planting",
        "last_card": "the last card was drawn from the board",
    }
)
"""The four end conditions (docs/RULINGS.md Uranus #6): code -> phrase for players."""

class Phase(StrEnum):
    """Where the game stands: gardeners being placed, turns being played, ``reveal`` (the game
    has ended and players still show the cards left in their hands) or over."""

    PLACEMENT = "placement"
    TURN = "turn"
    REVEAL = "reveal"
    OVER = "over"


PHASES = tuple(Phase)
"""Every :class:`Phase`, in the order a game goes through them."""

# The phases by name, for the steps: a member read through its class goes through the enum's
# attribute hook, written in Python (3.11), ten times the cost of a module name, steps apiece.
_PLACEMENT, _TURN, _REVEAL, _OVER = PHASES

UNKNOWN_CARD = "?"
"""An unknown card in a hand, in the position notation."""


@dataclass(frozen=True, slots=True, eq=False)
class BoardShape:
    """One of the three boards (docs/RULINGS.md Uranus #2): ``name``, its spots (``grid``,
    in layout order), how many ``trees`` and mission ``decks`` it has, and ``index``, each
    spot's position in ``grid.cells``."""

    name: str
    grid: HexGrid
    trees: int
    decks: int
    index: Mapping[Hex, int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "index", MappingProxyType({c: i for i, c in enumerate(self.grid.cells)})
        )


def _trapezoid() -> HexGrid:
    """``0 <= q <= 6, -(5 + q) <= r <= 0``: 63 spots."""
    return HexGrid((q, r) for q in range(7) for r in range(-(5 + q), 1))


def _rhombus() -> HexGrid:
    """``0 <= q <= 7, 0 <= q + r <= 7``: 64 spots."""
    return HexGrid((q, s - q) for q in range(8) for s in range(8))


BOARDS: Mapping[str, BoardShape] = MappingProxyType(
    {
        "hexagonal": BoardShape("hexagonal", hexagon(4), trees=1, decks=4),
        "trapezoid": BoardShape("trapezoid", _trapezoid(), trees=2, decks=2),
        "rhombus": BoardShape("rhombus", _rhombus(), trees=3, decks=3),
    }
)
"""The three boards by name, built once (docs/RULINGS.md Uranus #2)."""


def layout_cells(board: str) -> tuple[Cell, ...]:
    """The spots of ``board`` (``hexagonal``, ``trapezoid``, ``rhombus``) in dump order,
    named ``"q,r"``.  Raises ``KeyError`` for another name."""
    grid = BOARDS[board].grid
    return tuple(grid.names[c] for c in grid.cells)


@dataclass(frozen=True, slots=True)
class Options:
    """The game options (docs/RULINGS.md Uranus #7); see :func:`read_options`."""

    board: str = "hexagonal"
    triangle_points: str = "perimeter"


_OPTION_VALUES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"board": tuple(BOARDS), "triangle_points": missions.TRIANGLE_POINTS}
)


def read_options(options: Mapping[str, object]) -> Options:
    """:class:`Options` from ``{name: value}``; missing names take their defaults.

    Raises :class:`ConfigError` naming every unknown option and every bad value.
    """
    problems = [
        f"{name!r} is not a Gardens of Uranus option; the options are {', '.join(_OPTION_VALUES)}"
        for name in options
        if name not in _OPTION_VALUES
    ]
    problems += [
        f"option {name}: {options[name]!r} is not one of {', '.join(allowed)}"
        for name, allowed in _OPTION_VALUES.items()
        if name in options and options[name] not in allowed
    ]
    if problems:
        raise ConfigError(problems)
    return Options(**{name: str(value) for name, value in options.items()})


@dataclass(frozen=True, slots=True)
class Place:
    """Setup: the player to move puts their gardener on the empty spot ``cell``."""

    cell: Hex


@dataclass(frozen=True, slots=True)
class Move:
    """Slide the gardener in a straight line to ``to``; ``plant`` names the colour planted
    there (required on an empty spot, ``None`` on a flower)."""

    to: Hex
    plant: str | None = None


@dataclass(frozen=True, slots=True)
class Score:
    """Score the card ``mission`` instead of moving, discard it and draw a replacement from
    deck ``draw`` (numbered from 1): ``drawn`` names it when it is known, ``None`` when it is
    not (a real table: learned when it is shown later).  Mission names are made canonical on
    construction, which raises :class:`InvalidStepError` for a name that is not a mission."""

    mission: str
    draw: int
    drawn: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mission", parse_mission(self.mission))
        if self.drawn is not None:
            object.__setattr__(self, "drawn", parse_mission(self.drawn))


@dataclass(frozen=True, slots=True)
class Claim:
    """Player ``player`` shows the Hexagon card while a one-colour hexagon stands and wins at
    once, whoever is to move (the text, Mission cards: "at any moment")."""

    player: int


@dataclass(frozen=True, slots=True)
class Reveal:
    """After the end, the player to move shows ``mission``, one of the cards still in their
    hand, so that it counts in the final scores (the text, End of the game).  The name is
    made canonical; :class:`InvalidStepError` for a name that is not a mission."""

    mission: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "mission", parse_mission(self.mission))


Step = Place | Move | Score | Claim | Reveal

_MOVES: Mapping[Hex, tuple[Move, tuple[Move, ...]]] = {
    cell: (Move(cell), tuple(Move(cell, colour) for colour in COLOURS))
    for shape in BOARDS.values()
    for cell in shape.grid.cells
}
"""``_MOVES[spot]``: the move onto a flower there, and the moves planting each colour of
:data:`~companion.rules.missions.COLOURS`, built once (steps are values)."""

_SCORES: Mapping[str, tuple[Score, ...]] = {
    mission: tuple(
        Score(mission, deck) for deck in range(1, max(shape.decks for shape in BOARDS.values()) + 1)
    )
    for mission in ALL_MISSIONS
}
"""``_SCORES[mission][deck - 1]``: the score of a card drawing its replacement unknown from
that deck, built once (naming a card checks it)."""

@lru_cache(maxsize=64)  # one for each set of decks still holding cards
def _scores_drawing(decks: tuple[bool, ...]) -> Mapping[str, tuple[Score, ...]]:
    """Per mission, its :data:`_SCORES` from the decks that hold cards (``decks[i]``: deck
    i + 1 does)."""
    return {mission: tuple(compress(scores, decks)) for mission, scores in _SCORES.items()}


def _cards_showable(seen: frozenset[str] | None, hand: tuple[str, ...]) -> list[str]:
    """The cards a player holding ``hand`` and, unless ``seen`` is ``None``, unknown cards
    may show (:func:`may_hold`), in :data:`ALL_MISSIONS` order: with unknown cards, any not
    in :func:`seen` but their own; else those of the hand."""
    if seen is not None:
        elsewhere = seen.difference(hand)  # in another hand, or scored
        return list(filterfalse(elsewhere.__contains__, ALL_MISSIONS))
    return list(filter(frozenset(hand).__contains__, ALL_MISSIONS))


def _unseen(state: State, player: int) -> frozenset[str] | None:
    """The cards seen (:func:`seen`) when ``player`` holds unknown cards, else ``None``: what
    :func:`_cards_showable` and :func:`_score_steps` take."""
    return seen(state) if state.unknown[player - 1] > 0 else None


@lru_cache(maxsize=256)  # a listing a turn, the same until a card is scored or drawn
def _score_steps(seen: frozenset[str] | None, hand: tuple[str, ...], decks: tuple[bool, ...],
                 standing: bool) -> tuple[Score, ...]:
    """:meth:`UranusRules._scores` of a player holding ``hand`` and, unless ``seen`` is
    ``None``, unknown cards too (any card not in :func:`seen` but their own may be one),
    the decks holding cards ``decks`` (:func:`_scores_drawing`), a hexagon ``standing``."""
    showable = _cards_showable(seen, hand)
    if standing and HEXAGON in showable:
        showable.remove(HEXAGON)
    drawable = _scores_drawing(decks)
    return tuple(chain.from_iterable(map(drawable.__getitem__, showable)))


_REVEALS: Mapping[str, Reveal] = {mission: Reveal(mission) for mission in ALL_MISSIONS}
"""``_REVEALS[mission]``: the card shown at the end, built once."""

_PLACES: Mapping[Hex, Place] = {cell: Place(cell) for cell in _MOVES}
"""``_PLACES[spot]``: the gardener placed there, built once."""

_RAY_MOVES: Mapping[str, Mapping[Hex, tuple[tuple[tuple[Hex, int, Move, tuple[Move, ...]], ...],
                                           ...]]] = {
    name: {
        start: tuple(
            tuple((cell, shape.index[cell], *_MOVES[cell]) for cell in ray)
            for ray in shape.grid.rays[start]
        )
        for start in shape.grid.cells
    }
    for name, shape in BOARDS.items()
}
"""``_RAY_MOVES[board][start]``: per direction, the spots from ``start`` outwards, each as
itself, its place in ``State.flowers`` and the moves there (:data:`_MOVES`)."""


@dataclass(frozen=True, slots=True)
class State:
    """A Gardens of Uranus position, frozen and hashable.

    ``flowers[i]`` is the colour on spot ``shape.grid.cells[i]`` (``""`` for none; a flower
    under a gardener is still there); ``gardeners[p - 1]`` the spot of player p's gardener
    (``None`` before placement); ``reserves[p - 1]`` flower counts in
    :data:`~companion.rules.missions.COLOURS` order; ``hands[p - 1]`` the sorted canonical
    names of the cards player p is known to hold and ``unknown[p - 1]`` how many more they
    hold unseen; ``decks`` cards left per board deck (identities unknown until drawn);
    ``discarded`` the cards scored so far; ``no_plant_run`` consecutive moves without
    planting; ``phase`` one of :data:`PHASES` (in ``reveal`` the player to move is the one
    showing their cards); once ended, ``ending`` is a key of :data:`ENDINGS` and
    ``hexagon_winner`` the Hexagon holder who won (0 otherwise).  ``standing_hexagon``: six
    flowers of one colour stand on the corners of a hexagon (:func:`hexagon_standing`),
    worked out from the flowers, then kept up by each flower planted (flowers never leave).
    """

    options: Options
    trees: frozenset[Hex]
    flowers: tuple[str, ...]
    gardeners: tuple[Hex | None, ...]
    reserves: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    hands: tuple[tuple[str, ...], ...]
    unknown: tuple[int, ...]
    decks: tuple[int, ...]
    discarded: frozenset[str] = frozenset()
    no_plant_run: int = 0
    to_move: int = 1
    phase: Phase = _PLACEMENT
    ending: str = ""
    hexagon_winner: int = 0
    standing_hexagon: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        grid = BOARDS[self.options.board].grid if self.options.board in BOARDS else None
        object.__setattr__(self, "standing_hexagon", grid is not None and len(grid) == len(
            self.flowers) and _hexagon_standing(self.options.board, self.flowers))

    @property
    def shape(self) -> BoardShape:
        """The board this game is played on."""
        return BOARDS[self.options.board]

    @property
    def players(self) -> int:
        """The number of players."""
        return len(self.scores)


(_SET_OPTIONS, _SET_TREES, _SET_FLOWERS, _SET_GARDENERS, _SET_RESERVES, _SET_SCORES, _SET_HANDS,
 _SET_UNKNOWN, _SET_DECKS, _SET_DISCARDED, _SET_RUN, _SET_TO_MOVE, _SET_PHASE, _SET_ENDING,
 _SET_WINNER, _SET_STANDING) = (getattr(State, f.name).__set__ for f in fields(State))


def _made(
    state: State,
    flowers: tuple[str, ...],
    gardeners: tuple[Hex | None, ...],
    reserves: tuple[tuple[int, ...], ...],
    scores: tuple[int, ...],
    hands: tuple[tuple[str, ...], ...],
    unknown: tuple[int, ...],
    decks: tuple[int, ...],
    discarded: frozenset[str],
    no_plant_run: int,
    to_move: int,
    phase: Phase,
    ending: str,
    hexagon_winner: int,
    standing_hexagon: bool,
) -> State:
    """The :class:`State` after a step from ``state``, with these parts and its options and
    trees (which no step changes): set through its slots, ``standing_hexagon`` handed on
    rather than worked out again, in a third of the time of :func:`evolved`, on every step."""
    new = object.__new__(State)
    _SET_OPTIONS(new, state.options)
    _SET_TREES(new, state.trees)
    _SET_FLOWERS(new, flowers)
    _SET_GARDENERS(new, gardeners)
    _SET_RESERVES(new, reserves)
    _SET_SCORES(new, scores)
    _SET_HANDS(new, hands)
    _SET_UNKNOWN(new, unknown)
    _SET_DECKS(new, decks)
    _SET_DISCARDED(new, discarded)
    _SET_RUN(new, no_plant_run)
    _SET_TO_MOVE(new, to_move)
    _SET_PHASE(new, phase)
    _SET_ENDING(new, ending)
    _SET_WINNER(new, hexagon_winner)
    _SET_STANDING(new, standing_hexagon)
    return new


def garden(state: State) -> Garden:
    """The :class:`~companion.rules.missions.Garden` the mission cards of ``state`` look at."""
    grid = state.shape.grid
    spots = zip(grid.cells, state.flowers, strict=True)
    flowers = dict(compress(spots, state.flowers))  # the spots with a flower, picked out in C
    return Garden(grid, flowers, state.trees)


def mission_value(state: State, mission: str) -> int:
    """The points ``mission`` would score on the board of ``state`` now (docs/RULINGS.md
    Uranus #5, with the game's ``triangle_points``).  Raises :class:`InvalidStepError` for a
    name that is not a mission."""
    return missions.mission_value(garden(state), mission, state.options.triangle_points)


def unused_flower_penalty(unused: int) -> int:
    """The points lost for ``unused`` flowers left at the end: ``n(n+1)/2`` (1 -> 1, 4 -> 10,
    12 -> 78), continuing past 12 (the text, End of the game; docs/RULINGS.md Uranus #6)."""
    return unused * (unused + 1) // 2


def final_scores(state: State) -> tuple[int, ...]:
    """Per player (index p - 1): points so far + the value of every card known in hand on the
    board as it stands (the Hexagon scores 0) - :func:`unused_flower_penalty` of the flowers
    left (the text, End of the game; docs/RULINGS.md Uranus #6).  Once the game is over
    every card has been shown, so every card counts."""
    view = garden(state)
    points = state.options.triangle_points
    return tuple(
        score
        + sum(missions.mission_value(view, card, points) for card in hand)
        - unused_flower_penalty(sum(reserve))
        for score, hand, reserve in zip(state.scores, state.hands, state.reserves, strict=True)
    )


def hexagon_holder(state: State) -> int:
    """The player known to hold the Hexagon card, 0 when nobody is."""
    return next((p for p, hand in enumerate(state.hands, 1) if HEXAGON in hand), 0)


def hexagon_standing(state: State) -> bool:
    """Whether six flowers of one colour stand on the corners of a regular hexagon now
    (docs/RULINGS.md Uranus #5): the matrix announces it, its holder wins by showing it."""
    return state.standing_hexagon


def destinations(state: State) -> frozenset[Hex]:
    """The spots the gardener to move may land on, the landings of its legal moves each once,
    no move built: a spot with a flower, or an empty one while the player has a flower to plant
    there; empty outside the turn phase.

    Gardens of Uranus, Your turn; docs/RULINGS.md Uranus #4.
    """
    if state.phase != _TURN:
        return frozenset()
    if any(state.reserves[state.to_move - 1]):
        return frozenset(RULES._destinations(state))
    flowers, index = state.flowers, state.shape.index
    return frozenset(spot for spot in RULES._destinations(state) if flowers[index[spot]])


def _hexagon_standing(board: str, flowers: tuple[str, ...]) -> bool:
    grid = BOARDS[board].grid
    spots = {grid.cells[i]: colour for i, colour in enumerate(flowers) if colour}
    return missions.hexagon_stands(Garden(grid, spots, frozenset()))


_Corners: TypeAlias = Callable[[Sequence[str]], tuple[str, ...]]


def _hexagons_through(shape: BoardShape) -> tuple[tuple[_Corners, ...], ...]:
    """``_HEXAGONS_THROUGH[shape.name]``: every regular hexagon of the board found once, from
    its centre outwards (the boards are convex: a centre lies between two opposite corners,
    and once a side leaves the board so does every larger one), and handed to each of its
    six corners (the hexagons of :func:`missions.hexagons_through`)."""
    grid, index = shape.grid, shape.index
    through: list[list[_Corners]] = [[] for _ in grid.cells]
    for q, r in grid.cells:
        side = 1
        while True:
            corners = [(q + side * dq, r + side * dr) for dq, dr in DIRECTIONS]
            if not grid.cell_set.issuperset(corners):
                break
            places = [index[corner] for corner in corners]
            getter = itemgetter(*places)
            for place in places:
                through[place].append(getter)
            side += 1
    return tuple(map(tuple, through))


_HEXAGONS_THROUGH: Mapping[str, tuple[tuple[_Corners, ...], ...]] = {
    name: _hexagons_through(shape) for name, shape in BOARDS.items()
}
"""``_HEXAGONS_THROUGH[board][place]``: for each regular hexagon with a corner on the spot at
that place of ``State.flowers``, what gives the flowers on its six corners."""


def _hexagon_through(board: str, flowers: tuple[str, ...], place: int) -> bool:
    """Whether six flowers of the colour on ``place`` stand on the corners of a hexagon with
    a corner there: the check after a flower is planted (docs/RULINGS.md Uranus #5)."""
    six = (flowers[place],) * 6
    return any(corners(flowers) == six for corners in _HEXAGONS_THROUGH[board][place])


def seen(state: State) -> frozenset[str]:
    """The cards whose place is known: in someone's known hand, or scored."""
    return _seen(state.hands, state.discarded)


@lru_cache(maxsize=64)  # asked once for every card on every listing of steps
def _seen(hands: tuple[tuple[str, ...], ...], discarded: frozenset[str]) -> frozenset[str]:
    return frozenset(card for hand in hands for card in hand) | discarded


def may_hold(state: State, player: int, mission: str) -> bool:
    """Whether ``player`` may hold the card ``mission`` (canonical): it is known to be in
    their hand, or they hold unknown cards and nobody has shown it yet."""
    return mission in state.hands[player - 1] or (
        state.unknown[player - 1] > 0 and mission not in seen(state)
    )


def card_refusal(state: State, player: int, mission: str) -> str | None:
    """Why ``player`` cannot show ``mission`` now, as a sentence for the players, or ``None``
    when they may hold it: a card scored already (shown twice), a card another player is
    known to hold, or a card that is not in a hand of known cards only."""
    if may_hold(state, player, mission):
        return None
    if mission in state.discarded:
        return f"the {mission} card has been scored already"
    holder = next((p for p, hand in enumerate(state.hands, 1) if mission in hand), 0)
    if holder and holder != player:
        return f"player {holder} holds the {mission} card"
    return f"you do not hold the {mission} card"


@dataclass(frozen=True, slots=True)
class Deal:
    """Mission cards after a draft: ``hands[p - 1]`` player p's five cards (sorted) and
    ``decks[i]`` the cards of board deck i + 1, top card first."""

    hands: tuple[tuple[str, ...], ...]
    decks: tuple[tuple[str, ...], ...]


def split_evenly(total: int, parts: int) -> tuple[int, ...]:
    """``total`` cards split as evenly as possible into ``parts`` decks, bigger decks first
    (26 into 4 -> ``(7, 7, 6, 6)``; docs/RULINGS.md Uranus #3)."""
    return tuple(total // parts + (1 if i < total % parts else 0) for i in range(parts))


def deal_missions(players: int, board: str, seed: int) -> Deal:
    """A random draft for the simulator, reproducible from ``seed``: each player ends with
    :data:`HAND_SIZE` cards and the rest are split evenly into the board's decks
    (docs/RULINGS.md Uranus #3).

    Players who keep a random card of each passed hand end with a uniformly random five, so
    the draft is dealt as a shuffle.  Raises ``KeyError`` for an unknown board.
    """
    cards = list(ALL_MISSIONS)
    random.Random(f"uranus missions {seed}").shuffle(cards)
    hands = tuple(tuple(sorted(cards[p * HAND_SIZE : (p + 1) * HAND_SIZE])) for p in range(players))
    rest = cards[players * HAND_SIZE :]
    decks: list[tuple[str, ...]] = []
    for size in split_evenly(len(rest), BOARDS[board].decks):
        decks.append(tuple(rest[:size]))
        rest = rest[size:]
    return Deal(hands, tuple(decks))


def _check_players(players: int) -> None:
    if players not in FLOWERS_EACH:
        raise InvalidPositionError(
            f"{players} players cannot play Gardens of Uranus; it is for 2 to 5 players "
            f"({RULE_SETUP})"
        )


def validate(state: State) -> State:
    """``state`` itself if it is a position the rules allow, else
    :class:`InvalidPositionError` naming every problem at once (spots off the board, a
    flower or gardener on a tree, two gardeners on one spot, unknown colours or missions, a
    card in two places, negative counts, a wrong number of decks, a bad turn or phase, a game
    over with cards still unshown)."""
    _check_players(state.players)
    shape = state.shape
    grid = shape.grid
    problems: list[str] = []
    problems += [f"the tree {hex_name(t)} is off the board" for t in state.trees if t not in grid]
    if len(state.flowers) != len(grid):
        problems.append(f"the {shape.name} board has {len(grid)} spots")
    for i, colour in enumerate(state.flowers):
        if colour and colour not in COLOURS:
            problems.append(f"{colour!r} is not a flower colour")
        if colour and i < len(grid) and grid.cells[i] in state.trees:
            problems.append(f"a flower and a tree share {hex_name(grid.cells[i])}")
    placed = [g for g in state.gardeners if g is not None]
    problems += [f"gardener at {hex_name(g)} is off the board" for g in placed if g not in grid]
    problems += [f"a gardener stands on the tree {hex_name(g)}" for g in placed if g in state.trees]
    if len(set(placed)) != len(placed):
        problems.append("two gardeners share a spot")
    if any(len(r) != len(COLOURS) or min(r) < 0 for r in state.reserves):
        problems.append("a reserve must count each of the five colours, never below 0")
    cards = [card for hand in state.hands for card in hand] + list(state.discarded)
    problems += [f"{card!r} is not a mission card" for card in cards if card not in ALL_MISSIONS]
    if len(set(cards)) != len(cards):
        problems.append("a mission card is in two places")
    if len(state.decks) != shape.decks or any(d < 0 for d in state.decks):
        problems.append(f"the {shape.name} board has {shape.decks} decks, none below 0")
    if any(n < 0 for n in state.unknown):
        problems.append("a player cannot hold fewer than no unknown cards")
    lengths = {len(state.gardeners), len(state.reserves), len(state.hands), len(state.unknown)}
    if lengths != {state.players}:
        problems.append("gardeners, reserves, scores and hands must be given for every player")
    elif not 1 <= state.to_move <= state.players or state.phase not in PHASES:
        problems.append(f"player {state.to_move} in phase {state.phase!r} cannot be to move")
    elif state.phase == _TURN and None in state.gardeners:
        problems.append("every gardener must be placed before the turns begin")
    elif state.phase == _PLACEMENT and state.gardeners[state.to_move - 1] is not None:
        problems.append(f"player {state.to_move} has placed their gardener already")
    elif state.phase == _REVEAL and not state.unknown[state.to_move - 1]:
        problems.append(f"player {state.to_move} has no unknown card left to show")
    elif state.phase == _OVER and any(state.unknown):
        problems.append("the game is over only once every card in hand has been shown")
    if (state.phase in (_REVEAL, _OVER)) != (state.ending in ENDINGS) or not (
        0 <= state.hexagon_winner <= state.players
        and (state.hexagon_winner != 0) == (state.ending == "hexagon")
    ):
        problems.append("a finished game names how it ended, and only a Hexagon has a winner")
    if problems:
        raise InvalidPositionError("; ".join(problems))
    return state


def settle(state: State, *, check_hexagon: bool = True) -> State:
    """``state`` with the end conditions applied as a position (docs/RULINGS.md Uranus #6,
    6a): a one-colour hexagon while someone holds the Hexagon card (unless ``check_hexagon``
    is false because the caller has just checked the change that could make one); every
    deck of the board empty (the last card has been drawn, by whoever drew it); a
    no-planting run as long as the number of players; the player to move at the start of a
    turn with no flowers."""
    if state.phase in (_REVEAL, _OVER):
        return state
    holder = hexagon_holder(state) if check_hexagon else 0
    if holder and hexagon_standing(state):
        return end(state, "hexagon", holder)
    if not any(state.decks):
        return end(state, "last_card")
    if state.no_plant_run >= state.players:
        return end(state, "no_planting")
    if state.phase == _TURN and not any(state.reserves[state.to_move - 1]):
        return end(state, "no_flowers")
    return state


def end(state: State, ending: str, hexagon_winner: int = 0) -> State:
    """``state`` ended by ``ending`` (a key of :data:`ENDINGS`): over at once when every card
    in hand is known, else the ``reveal`` phase, in which the first player with unknown cards
    shows them (the text, End of the game: "every player scores the mission cards still in
    their hand")."""
    showing = next((p for p, n in enumerate(state.unknown, 1) if n), 0)
    if showing:
        return evolved(state, ending=ending, hexagon_winner=hexagon_winner, phase=_REVEAL,
                       to_move=showing)
    return evolved(state, ending=ending, hexagon_winner=hexagon_winner, phase=_OVER)


def table_setup(
    state: State,
    *,
    trees: Iterable[Hex] | None = None,
    reserves: Sequence[Mapping[str, int]] | None = None,
    hands: Sequence[Iterable[str]] | None = None,
) -> State:
    """A fresh game (``state`` from :meth:`UranusRules.new_game`) with the random parts
    replaced by what the table did: the ``trees`` as placed (or sensed), each player's
    ``reserves`` as dealt (``{colour: count}``, the text's total for the player count) and,
    for a game with open hands, the ``hands`` after the draft (five missions each, all known;
    the decks are what is left, split evenly) (docs/RULINGS.md Uranus #2, #3).

    Raises :class:`InvalidPositionError` naming every problem (a game already begun, trees
    on the edge or of the wrong count, wrong flower totals, wrong hand sizes, a card twice)
    and :class:`InvalidStepError` for a name that is not a mission.
    """
    shape = state.shape
    problems: list[str] = []
    if state.phase != _PLACEMENT or any(g is not None for g in state.gardeners):
        problems.append("the table setup is given before any gardener is placed")
    if trees is not None:
        tree_set = frozenset(trees)
        if len(tree_set) != shape.trees or not tree_set <= shape.grid.cell_set - shape.grid.edge:
            problems.append(
                f"the {shape.name} board needs {shape.trees} trees on distinct spots off the edge"
            )
        state = evolved(state, trees=tree_set)
    if reserves is not None:
        want = FLOWERS_EACH[state.players]
        counts = tuple(tuple(int(r.get(c, 0)) for c in COLOURS) for r in reserves)
        if len(counts) != state.players or any(sum(c) != want for c in counts):
            problems.append(f"each of {state.players} players is dealt {want} flowers")
        if any(r.keys() - set(COLOURS) for r in reserves):
            problems.append(f"the flower colours are {', '.join(COLOURS)}")
        if any(sum(r[i] for r in counts) > FLOWERS_PER_COLOUR for i in range(len(COLOURS))):
            problems.append(f"there are only {FLOWERS_PER_COLOUR} flowers of each colour")
        state = evolved(state, reserves=counts)
    if hands is not None:
        sorted_hands = tuple(tuple(sorted(parse_mission(m) for m in hand)) for hand in hands)
        if len(sorted_hands) != state.players or any(len(h) != HAND_SIZE for h in sorted_hands):
            problems.append(f"each of {state.players} players holds {HAND_SIZE} mission cards")
        left = len(ALL_MISSIONS) - sum(len(h) for h in sorted_hands)
        state = evolved(
            state,
            hands=sorted_hands,
            unknown=(0,) * len(sorted_hands),
            decks=split_evenly(left, shape.decks),
        )
    if problems:
        raise InvalidPositionError("; ".join(problems))
    return validate(state)


# -- setups laid out by hand, reserves dealt by hand ----------------------------------------


def setup_problems(state: State, observed: Mapping[Cell, Piece]) -> list[SetupProblem]:
    """The setup conditions a board laid out by hand breaks (the text, Setup; docs/RULINGS.md
    Uranus #2), each with the spots to blame; ``[]`` for a legal setup.

    ``state`` is a fresh game (its board); ``observed`` maps spots to pieces (a missing spot
    reads empty).  The board holds nothing but its trees (the spots holding anything else);
    the chosen board's number of trees (too many: the trees); no tree on the edge (those
    that are).
    """
    shape = state.shape
    names = [shape.grid.names[c] for c in shape.grid.cells]
    pieces = {name: observed.get(name, EMPTY) for name in names}
    problems: list[SetupProblem] = []
    stray = tuple(name for name, piece in pieces.items() if piece not in (EMPTY, TREE))
    if stray:
        problems.append(SetupProblem(
            f"The garden holds only its trees at the start: clear {listed(stray)}.", stray))
    trees = tuple(name for name, piece in pieces.items() if piece == TREE)
    have = f"The garden has {len(trees)} tree{'' if len(trees) == 1 else 's'}"
    if len(trees) > shape.trees:
        problems.append(SetupProblem(
            f"{have}, {len(trees) - shape.trees} too many: the {shape.name} board takes "
            f"{shape.trees}.", trees))
    elif len(trees) < shape.trees:
        problems.append(SetupProblem(
            f"{have}, {shape.trees - len(trees)} too few: the {shape.name} board takes "
            f"{shape.trees}, on spots off the edge.", ()))
    edge = tuple(name for name in trees if parse_hex(name) in shape.grid.edge)
    if edge:
        problems.append(SetupProblem(
            f"Trees never stand on the edge of the garden: move {listed(edge)} inwards.", edge))
    return problems


def adopt_setup(state: State, observed: Mapping[Cell, Piece]) -> State:
    """``state`` (a fresh game) with the trees of ``observed`` in place of its seeded ones.
    Raises :class:`InvalidPositionError` naming every problem :func:`setup_problems` finds."""
    problems = setup_problems(state, observed)
    if problems:
        raise setup_refused(problems)
    return evolved(state, trees=frozenset(
        parse_hex(name) for name, piece in observed.items() if piece == TREE))


def register_card(state: State, step: Reveal, text: str = "") -> State:
    """Before the gardeners are all placed, the player to move registers ``step.mission``,
    one of the five cards the draft left them, face down with the card reader: the companion
    knows it from then on (as a card shown later would tell it), the turn stays theirs
    (the text, Setup: the drafted hands are secret).  ``text`` names the step in errors.

    Raises :class:`IllegalMoveError` outside placement, when all the player's cards are
    known, or for a card they cannot hold (:func:`card_refusal`: known in another hand).
    """
    def refuse(reason: str) -> IllegalMoveError:
        return IllegalMoveError(reason, rule=RULE_SETUP, step=text or f"show:{step.mission}")

    if state.phase != _PLACEMENT:
        raise refuse("cards are registered before the gardeners are placed")
    p = state.to_move
    if step.mission in state.hands[p - 1]:
        raise refuse(f"the {step.mission} card is registered already")
    if not state.unknown[p - 1]:
        raise refuse(f"all {HAND_SIZE} of player {p}'s cards are registered")
    refusal = card_refusal(state, p, step.mission)
    if refusal is not None:
        raise refuse(refusal)
    return evolved(state,
                   hands=replaced(state.hands, p - 1, tuple(sorted([*state.hands[p - 1],
                                                                 step.mission]))),
                   unknown=replaced(state.unknown, p - 1, state.unknown[p - 1] - 1))


class UranusRules(GardenerRules[State, Step]):
    """Gardens of Uranus behind the :class:`companion.rules.base.GameRules` seam.

    Pure and stateless: the module-level :data:`RULES` is its one instance.
    """

    name: ClassVar[str] = "uranus"
    colours: ClassVar[tuple[str, ...]] = COLOURS
    flowers_per_colour: ClassVar[int] = FLOWERS_PER_COLOUR

    # -- setup -------------------------------------------------------------------------

    def new_game(self, players: int, seed: int, options: Mapping[str, object]) -> State:
        """A random setup, reproducible from ``seed``: the board's trees on distinct random
        spots off the edge, the 60 flowers dealt by chance (2p 30, 3p 20, 4p 15, 5p 12
        each), five secret cards in each hand (all unknown to the companion) and the other
        cards split evenly into the board's decks; then player 1 places first (the text,
        Setup; docs/RULINGS.md Uranus #1-#3).

        Use :func:`table_setup` to replace the random parts by what the table did (open
        hands: the cards of :func:`deal_missions`).
        Raises :class:`ConfigError` for a bad option and :class:`InvalidPositionError` for a
        player count outside 2-5.
        """
        opts = read_options(options)
        _check_players(players)
        shape = BOARDS[opts.board]
        rng = random.Random(seed)
        inner = [c for c in shape.grid.cells if c not in shape.grid.edge]
        trees = frozenset(rng.sample(inner, shape.trees))
        reserves = deal_flowers(rng, COLOURS, FLOWERS_PER_COLOUR, players, FLOWERS_EACH[players])
        return State(
            options=opts,
            trees=trees,
            flowers=("",) * len(shape.grid),
            gardeners=(None,) * players,
            reserves=reserves,
            scores=(0,) * players,
            hands=((),) * players,
            unknown=(HAND_SIZE,) * players,
            decks=split_evenly(len(ALL_MISSIONS) - HAND_SIZE * players, shape.decks),
        )

    # -- the board -----------------------------------------------------------------------

    def layout(self, state: State) -> tuple[Cell, ...]:
        """The board's spots in :class:`HexGrid` order, named ``"q,r"``."""
        return layout_cells(state.shape.name)

    def board(self, state: State) -> dict[Cell, Piece]:
        """Every spot to ``"tree"``, a colour, ``"M1"`` or ``"M1+red"`` (a gardener on a red
        flower), or ``""``."""
        grid = state.shape.grid
        at = {g: p for p, g in enumerate(state.gardeners, 1) if g is not None}
        out: dict[Cell, Piece] = {}
        for cell, colour in zip(grid.cells, state.flowers, strict=True):
            if cell in state.trees:
                piece = TREE
            elif cell in at:
                piece = gardener(at[cell], colour)
            else:
                piece = colour
            out[grid.names[cell]] = piece
        return out

    # -- steps ---------------------------------------------------------------------------

    def _placeable(self, state: State, cell: Hex) -> bool:
        """``cell`` is an empty spot of the board: no tree, gardener or flower (the text,
        Setup)."""
        index = state.shape.index.get(cell)
        return (
            index is not None
            and not state.flowers[index]
            and cell not in state.trees
            and cell not in state.gardeners
        )

    def _destinations(self, state: State) -> Iterator[Hex]:
        """Where the gardener to move may stop: along each of the six rays up to the first
        tree, skipping spots with a gardener (the text, Your turn; docs/RULINGS.md Uranus #4)."""
        here = state.gardeners[state.to_move - 1]
        assert here is not None  # the turn phase begins once every gardener is placed
        trees, gardeners = state.trees, state.gardeners
        for ray in _RAY_MOVES[state.options.board][here]:
            for spot, _, _, _ in ray:
                if spot in trees:
                    break
                if spot not in gardeners:
                    yield spot

    def _moves(self, state: State) -> list[Step]:
        """Every move of the player to move, as :meth:`_moves_to` gives them for each of
        :meth:`_destinations` (inline: a listing a step), in one list."""
        here = state.gardeners[state.to_move - 1]
        assert here is not None  # the turn phase begins once every gardener is placed
        flowers, gardeners, trees = state.flowers, state.gardeners, state.trees
        reserve = state.reserves[state.to_move - 1]
        every_colour = all(reserve)  # as most of a game: no colour to leave out
        moves: list[Step] = []
        append, extend = moves.append, moves.extend
        for ray in _RAY_MOVES[state.options.board][here]:
            for cell, place, onto_flower, planting in ray:
                if cell in trees:  # a tree ends the ray (the text, Your turn)
                    break
                if cell not in gardeners:
                    if flowers[place]:
                        append(onto_flower)
                    elif every_colour:
                        extend(planting)
                    else:
                        extend(compress(planting, reserve))  # the colours in reserve
        return moves

    def _moves_to(self, state: State, cell: Hex) -> Iterator[Move]:
        onto_flower, planting = _MOVES[cell]
        if state.flowers[state.shape.index[cell]]:
            return iter((onto_flower,))
        reserve = state.reserves[state.to_move - 1]
        return (planting[c] for c, n in enumerate(reserve) if n)

    def _showable(self, state: State, player: int) -> list[str]:
        """The cards ``player`` may show, in :data:`ALL_MISSIONS` order (:func:`may_hold`,
        with the cards seen worked out once)."""
        return _cards_showable(_unseen(state, player), state.hands[player - 1])

    def _scores(self, state: State, standing: bool) -> tuple[Score, ...]:
        """The :class:`Score` steps of the player to move: each card they may show
        (:meth:`_showable`) from each deck holding cards, the Hexagon left out while a
        hexagon stands (it wins: claimed, not scored)."""
        p = state.to_move
        return _score_steps(_unseen(state, p), state.hands[p - 1], tuple(map(bool, state.decks)),
                            standing)

    def legal_steps(self, state: State) -> Sequence[Step]:
        """Placement: every free, flowerless spot.  Turn: every :class:`Move` (each colour
        in reserve on an empty spot), then every :class:`Score` (each card the player may
        hold, each non-empty deck, the replacement unknown, as the companion sees it), then,
        while a hexagon stands, a :class:`Claim` for every player who may hold the Hexagon.
        Reveal: a :class:`Reveal` of each card the player showing may hold.  Nothing once
        over.  (A :class:`Score` naming its drawn card is legal too, see :meth:`apply`, and
        so is a :class:`Reveal` in placement, a card registered face down:
        :func:`register_card`.)

        A dealt game never leaves a player without a step: while it goes on the decks hold
        cards, so a gardener that cannot move can still score a card."""
        if state.phase == _PLACEMENT:
            trees, gardeners = state.trees, state.gardeners
            spots = zip(state.shape.grid.cells, state.flowers, strict=True)
            return [_PLACES[c] for c, flower in spots
                    if not flower and c not in trees and c not in gardeners]
        if state.phase == _TURN:
            standing = HEXAGON not in state.discarded and hexagon_standing(state)
            steps = self._moves(state)
            steps += self._scores(state, standing)
            if standing:
                steps += [Claim(p) for p in range(1, state.players + 1)
                          if may_hold(state, p, HEXAGON)]
            return steps
        if state.phase == _REVEAL:
            hand = state.hands[state.to_move - 1]
            return [_REVEALS[card] for card in self._showable(state, state.to_move)
                    if card not in hand]
        return ()

    def apply(self, state: State, step: Step) -> State:
        """The state after ``step`` (the text, Setup and Your turn; docs/RULINGS.md Uranus
        #4-#6), the end conditions checked after it.

        Raises :class:`IllegalMoveError` with the reason and rule for a step the rules
        forbid now: any step once the game is over, a step of the wrong phase, a spot off
        the board, a move that is not straight, crosses or ends on a tree or ends on a
        gardener, planting on a flower, not planting on an empty spot, a colour not in
        reserve, showing a card the player cannot hold (:func:`card_refusal`: scored
        already, known in another hand), scoring the Hexagon while one stands (it wins:
        :class:`Claim`), drawing from an empty deck or a card already seen, claiming without
        a hexagon, revealing a card already counted.
        """
        if state.phase == _OVER:
            raise IllegalMoveError("the game is over", rule=RULE_END, step=format_step(step))
        if isinstance(step, Reveal) and state.phase == _PLACEMENT:
            return register_card(state, step)
        if isinstance(step, Reveal):
            return self._reveal(state, step)
        if state.phase == _REVEAL:
            raise IllegalMoveError(
                "the game is over: each player shows the cards still in their hand",
                rule=RULE_END,
                step=format_step(step),
            )
        if isinstance(step, Place):
            return self._place(state, step)
        if state.phase != _TURN:
            raise IllegalMoveError("every gardener must be placed on the garden first",
                                   rule=RULE_SETUP, step=format_step(step))
        if isinstance(step, Move):
            return self._move(state, step)
        if isinstance(step, Claim):
            return self._claim(state, step)
        return self._score(state, step)

    def _place(self, state: State, step: Place) -> State:
        def refuse(reason: str) -> IllegalMoveError:
            return IllegalMoveError(reason, rule=RULE_SETUP, step=format_step(step))

        if state.phase != _PLACEMENT:
            raise refuse("the gardeners are all placed; move or score a card")
        if step.cell not in state.shape.grid:
            raise refuse(f"{hex_name(step.cell)} is not a spot of the {state.shape.name} board")
        if not self._placeable(state, step.cell):
            raise refuse(f"the gardener must be placed on an empty spot, {hex_name(step.cell)} "
                         "is not")
        p = state.to_move
        gardeners = replaced(state.gardeners, p - 1, step.cell)
        following = [q for q in range(p + 1, state.players + 1) if gardeners[q - 1] is None]
        if following:
            return evolved(state, gardeners=gardeners, to_move=following[0])
        return settle(evolved(state, gardeners=gardeners, to_move=1, phase=_TURN))

    def _move(self, state: State, step: Move) -> State:
        def refuse(reason: str) -> IllegalMoveError:
            return IllegalMoveError(reason, rule=RULE_TURN, step=format_step(step))

        shape = state.shape
        p = state.to_move
        here = state.gardeners[p - 1]
        assert here is not None  # the turn phase begins once every gardener is placed
        index = shape.index.get(step.to)
        if index is None:
            raise refuse(f"{hex_name(step.to)} is not a spot of the {shape.name} board")
        for ray in shape.grid.rays[here]:
            if step.to in ray:
                break
        else:
            raise refuse("the gardener moves in a straight line along one of the six directions")
        if not state.trees.isdisjoint(ray[: ray.index(step.to)]):  # the spots passed
            raise refuse("a tree blocks the way")
        if step.to in state.trees:
            raise refuse("the gardener cannot stop on a tree")
        if step.to in state.gardeners:
            raise refuse("another gardener stands on that spot")
        flowers, reserves, run = state.flowers, state.reserves, state.no_plant_run + 1
        if state.flowers[index]:
            if step.plant is not None:
                raise refuse("a flower grows there already, so nothing is planted")
        elif step.plant is None:
            raise refuse("stopping on an empty spot, you must plant a flower from your reserve")
        else:
            colour = COLOURS.index(step.plant) if step.plant in COLOURS else -1
            reserve = state.reserves[p - 1]
            if colour < 0 or not reserve[colour]:
                raise refuse(f"you have no {step.plant} flower left to plant")
            flowers = replaced(flowers, index, step.plant)
            reserves = replaced(reserves, p - 1, replaced(reserve, colour, reserve[colour] - 1))
            run = 0
        through = run == 0 and _hexagon_through(shape.name, flowers, index)
        holder = hexagon_holder(state) if through else 0
        return self._next_turn(
            state, holder, flowers, replaced(state.gardeners, p - 1, step.to), reserves,
            state.scores, state.hands, state.unknown, state.decks, state.discarded, run,
            state.standing_hexagon or through)

    def _score(self, state: State, step: Score) -> State:
        def refuse(reason: str) -> IllegalMoveError:
            return IllegalMoveError(reason, rule=RULE_SCORE, step=format_step(step))

        p = state.to_move
        refusal = card_refusal(state, p, step.mission)
        if refusal is not None:
            raise refuse(refusal)
        if step.mission == HEXAGON and hexagon_standing(state):
            raise refuse("a hexagon stands: showing the Hexagon card wins the game")
        if not 1 <= step.draw <= len(state.decks):
            raise refuse(f"the {state.shape.name} board has decks 1 to {len(state.decks)}")
        if not state.decks[step.draw - 1]:
            raise refuse(f"there is no card left in deck {step.draw} to draw")
        if step.drawn is not None:
            if step.drawn == step.mission or step.drawn in state.discarded:
                raise refuse(f"the {step.drawn} card has been scored already, it cannot be drawn")
            if any(step.drawn in other for other in state.hands):
                raise refuse(f"the {step.drawn} card is in a player's hand, it cannot be drawn")
        kept, unknown = _shown(state, p, step.mission)
        if step.drawn is None:
            unknown += 1
        else:
            kept = tuple(sorted([*kept, step.drawn]))
        points = state.scores[p - 1] + mission_value(state, step.mission)
        won = step.drawn == HEXAGON and state.standing_hexagon
        return self._next_turn(  # the last card drawn: the turn's end ends the game
            state, p if won else 0, state.flowers, state.gardeners, state.reserves,
            replaced(state.scores, p - 1, points), replaced(state.hands, p - 1, kept),
            replaced(state.unknown, p - 1, unknown),
            replaced(state.decks, step.draw - 1, state.decks[step.draw - 1] - 1),
            state.discarded | {step.mission}, 0, state.standing_hexagon)

    def _claim(self, state: State, step: Claim) -> State:
        def refuse(reason: str) -> IllegalMoveError:
            return IllegalMoveError(reason, rule=RULE_HEXAGON, step=format_step(step))

        if not 1 <= step.player <= state.players:
            raise refuse(f"there is no player {step.player}")
        refusal = card_refusal(state, step.player, HEXAGON)
        if refusal is not None:
            raise refuse(refusal)
        if not hexagon_standing(state):
            raise refuse("no hexagon of one colour stands on the board, so the card does not win")
        hand, unknown = _shown(state, step.player, HEXAGON)
        shown = evolved(
            state,
            hands=replaced(state.hands, step.player - 1, tuple(sorted([*hand, HEXAGON]))),
            unknown=replaced(state.unknown, step.player - 1, unknown),
        )
        return end(shown, "hexagon", step.player)

    def _reveal(self, state: State, step: Reveal) -> State:
        def refuse(reason: str) -> IllegalMoveError:
            return IllegalMoveError(reason, rule=RULE_END, step=format_step(step))

        if state.phase != _REVEAL:
            raise refuse("cards in hand are shown once the game has ended")
        p = state.to_move
        if step.mission in state.hands[p - 1]:
            raise refuse(f"the {step.mission} card is counted already")
        refusal = card_refusal(state, p, step.mission)
        if refusal is not None:
            raise refuse(refusal)
        hand, left = _shown(state, p, step.mission)
        hands = replaced(state.hands, p - 1, tuple(sorted([*hand, step.mission])))
        unknown = replaced(state.unknown, p - 1, left)
        showing = next((q for q, n in enumerate(unknown, 1) if n), 0)
        return _made(state, state.flowers, state.gardeners, state.reserves, state.scores, hands,
                     unknown, state.decks, state.discarded, state.no_plant_run,
                     showing or p, _REVEAL if showing else _OVER, state.ending,
                     state.hexagon_winner, state.standing_hexagon)

    def _next_turn(
        self,
        state: State,
        hexagon_winner: int,
        flowers: tuple[str, ...],
        gardeners: tuple[Hex | None, ...],
        reserves: tuple[tuple[int, ...], ...],
        scores: tuple[int, ...],
        hands: tuple[tuple[str, ...], ...],
        unknown: tuple[int, ...],
        decks: tuple[int, ...],
        discarded: frozenset[str],
        no_plant_run: int,
        standing_hexagon: bool,
    ) -> State:
        """The state after a turn of ``state`` (in the turn phase) that leaves these parts:
        the Hexagon win, else the next player to move and the end conditions of
        :func:`settle` (the last card drawn, the no-planting run, their flowers;
        docs/RULINGS.md Uranus #6), then :func:`end`'s phase, in one state made once."""
        to_move = state.to_move
        if hexagon_winner:
            ending = "hexagon"
        else:
            # flowers only appear by planting or hexagon cards by drawing: both checked already
            to_move = to_move % len(scores) + 1
            if not any(decks):
                ending = "last_card"
            elif no_plant_run >= len(scores):
                ending = "no_planting"
            elif not any(reserves[to_move - 1]):
                ending = "no_flowers"
            else:
                return _made(state, flowers, gardeners, reserves, scores, hands, unknown, decks,
                             discarded, no_plant_run, to_move, _TURN, "", 0, standing_hexagon)
        showing = next((p for p, n in enumerate(unknown, 1) if n), 0)
        return _made(state, flowers, gardeners, reserves, scores, hands, unknown, decks,
                     discarded, no_plant_run, showing or to_move,
                     _REVEAL if showing else _OVER, ending, hexagon_winner, standing_hexagon)

    # -- recognition ---------------------------------------------------------------------

    def _placements_on(self, state: State, cell: Cell) -> Iterator[Step]:
        if state.phase == _PLACEMENT:
            try:
                spot = parse_hex(cell)
            except InvalidStepError:  # a cell of no hex board: nothing was placed there
                return
            if self._placeable(state, spot):
                yield Place(spot)

    def _moves_onto(self, state: State, landing: Cell | None) -> Iterator[Step]:
        if state.phase == _TURN:
            for cell in self._destinations(state):
                if landing in (None, hex_name(cell)):
                    yield from self._moves_to(state, cell)

    def _landing(self, move: Step) -> Hex:
        assert isinstance(move, Move)  # one of _moves_onto
        return move.to

    def _flower_on(self, state: State, spot: Hex) -> str:
        return state.flowers[state.shape.index[spot]]

    def changes(self, state: State, step: Step) -> dict[Cell, Piece]:
        """The spots ``step`` changes and their new piece, without building the whole board:
        a placed gardener; a gardener's old spot (its flower, if any) and its landing (with
        the flower planted or found there); nothing for a card shown."""
        shape = state.shape
        p = state.to_move
        if isinstance(step, Place):
            return {hex_name(step.cell): martian(p)}
        if isinstance(step, Score | Claim | Reveal):
            return {}
        here = state.gardeners[p - 1]
        assert here is not None  # the turn phase begins once every gardener is placed
        return move_changes(p, here, state.flowers[shape.index[here]], step.to,
                            state.flowers[shape.index[step.to]] or step.plant or "")

    def outcome(self, state: State) -> Outcome | None:
        """``None`` while the game goes on.  Once over: the Hexagon holder alone when the
        Hexagon ended it, else the players with the best :func:`final_scores` (ties share;
        docs/RULINGS.md Uranus #6).  ``ranking``: ``(player, "27 pts", rank points)`` best
        first, rank points ``(N - 1) - (players strictly better)``, the Hexagon winner
        ranked above everyone."""
        if state.phase != _OVER:
            return None
        finals = final_scores(state)
        keys = [(p == state.hexagon_winner, final) for p, final in enumerate(finals, 1)]
        return ranked(keys, [f"{final} pts" for final in finals], ENDINGS[state.ending])

    def choice_path(self, state: State, step: Step) -> tuple[str, ...]:
        """What the sensors cannot see, as menu levels: the colour planted (``("plant
        red",)``, for a presence board); a card shown, by kind then name (without a reader)
        and the deck drawn from: ``("triangle", "triangle:yellow", "deck 2")``, plus
        ``"drew groups:red"`` when the draw is known; a card revealed at the end:
        ``("triangle", "triangle:yellow")``; the Hexagon card shown to win, and whose it is:
        ``("hexagon", "hexagon", "P2")``."""
        if isinstance(step, Move):
            return (f"plant {step.plant}",) if step.plant else ()
        if isinstance(step, Score):
            drew = () if step.drawn is None else (f"drew {step.drawn}",)
            return (*_card_path(step.mission), f"deck {step.draw}", *drew)
        if isinstance(step, Reveal):
            return _card_path(step.mission)
        if isinstance(step, Claim):
            return (*_card_path(HEXAGON), f"P{step.player}")
        return ()

    # -- notation ------------------------------------------------------------------------

    def format_step(self, state: State, step: Step) -> str:
        """``@0,0``, ``0,3=red``, ``0,3``, ``score:triangle:yellow/2:groups:red`` (drawn card
        known) or ``score:triangle:yellow/2`` (unknown), ``claim:2``, ``show:groups:red``."""
        return format_step(step)

    def parse_step(self, state: State, text: str) -> Step:
        """Read :meth:`format_step` notation.  Raises :class:`InvalidStepError` for text that
        is not a step (bad cell, colour, mission or deck number)."""
        text = text.strip()
        if text.startswith("@"):
            return Place(parse_hex(text[1:]))
        if text.startswith("score:"):
            mission, _, drawn = text[len("score:") :].partition("/")
            deck, _, card = drawn.partition(":")
            if not deck.isdigit():
                raise InvalidStepError(
                    f"{text!r}: write a score as score:MISSION/DECK or score:MISSION/DECK:DRAWN, "
                    "e.g. score:triangle:yellow/2:groups:red"
                )
            return Score(mission, int(deck), card or None)
        if text.startswith("claim:"):
            player = text[len("claim:") :]
            if not player.isdigit():
                raise InvalidStepError(f"{text!r}: write a Hexagon claim as claim:PLAYER")
            return Claim(int(player))
        if text.startswith("show:"):
            return Reveal(text[len("show:") :])
        cell, eq, colour = text.partition("=")
        if eq and colour not in COLOURS:
            raise InvalidStepError(f"{colour!r} is not a flower colour of Gardens of Uranus; "
                                   f"the colours are {', '.join(COLOURS)}")
        return Move(parse_hex(cell), colour or None)

    def format_position(self, state: State) -> str:
        """The state as one line of ``key=value`` fields (lists separated by ``/``), e.g.
        ``uranus board=hexagonal triangle_points=perimeter players=2 phase=turn to_move=1
        run=0 trees=1,1 flowers=0,0=red gardeners=-3,3/0,-3 reserves=blue:3,red:2/green:4
        scores=0/0 hands=groups:red,hexagon/?,?,? decks=5/5/5/5 discarded= ending= winner=0``
        (``?`` an unknown card)."""
        cells = state.shape.grid.cells
        fields = {
            "board": state.options.board,
            "triangle_points": state.options.triangle_points,
            "players": str(state.players),
            "phase": state.phase,
            "to_move": str(state.to_move),
            "run": str(state.no_plant_run),
            "trees": "/".join(hex_name(t) for t in sorted(state.trees)),
            "flowers": "/".join(
                f"{hex_name(cells[i])}={c}" for i, c in enumerate(state.flowers) if c
            ),
            "gardeners": "/".join("?" if g is None else hex_name(g) for g in state.gardeners),
            "reserves": "/".join(
                ",".join(f"{c}:{n}" for c, n in zip(COLOURS, r, strict=True) if n)
                for r in state.reserves
            ),
            "scores": "/".join(map(str, state.scores)),
            "hands": "/".join(
                ",".join([*hand, *[UNKNOWN_CARD] * n])
                for hand, n in zip(state.hands, state.unknown, strict=True)
            ),
            "decks": "/".join(map(str, state.decks)),
            "discarded": ",".join(sorted(state.discarded)),
            "ending": state.ending,
            "winner": str(state.hexagon_winner),
        }
        return "uranus " + " ".join(f"{key}={value}" for key, value in fields.items())

    def parse_position(self, text: str) -> State:
        """Read :meth:`format_position` back, with the end conditions of a position applied
        (:func:`settle`: a position whose decks are all empty is over, as in a case file or
        after the step that drew the last card).  Raises :class:`InvalidStepError` for text
        not in that form and :class:`InvalidPositionError` for a position the rules forbid."""
        head, *parts = text.split()
        fields = dict(part.partition("=")[::2] for part in parts)
        keys = ("board", "triangle_points", "players", "phase", "to_move", "run", "trees",
                "flowers", "gardeners", "reserves", "scores", "hands", "decks", "discarded",
                "ending", "winner")  # fmt: skip
        if head != "uranus" or set(fields) != set(keys):
            raise InvalidStepError(
                f"a Gardens of Uranus position is 'uranus' then the fields {', '.join(keys)}"
            )
        try:
            options = read_options(
                {"board": fields["board"], "triangle_points": fields["triangle_points"]}
            )
            players = int(fields["players"])

            def per_player(key: str) -> list[str]:
                values = fields[key].split("/")
                if len(values) != players:
                    raise InvalidStepError(f"{key} gives one entry for each of the {players} "
                                           "players, separated by /")
                return values

            flowers = dict(f.rpartition("=")[::2] for f in _items(fields["flowers"], "/"))
            hands = per_player("hands")
            names = BOARDS[options.board].grid.names
            if flowers.keys() - set(names.values()):
                raise InvalidStepError("a flower of the position is off the board; put every "
                                       "flower on a hex of the board")
            position = State(
                options=options,
                trees=frozenset(parse_hex(t) for t in _items(fields["trees"], "/")),
                flowers=tuple(flowers.get(name, "") for name in names.values()),
                gardeners=tuple(
                    None if g == "?" else parse_hex(g) for g in per_player("gardeners")
                ),
                reserves=tuple(_reserve(r) for r in per_player("reserves")),
                scores=tuple(int(s) for s in per_player("scores")),
                hands=tuple(
                    tuple(sorted(c for c in _items(h, ",") if c != UNKNOWN_CARD))
                    for h in hands
                ),
                unknown=tuple(_items(h, ",").count(UNKNOWN_CARD) for h in hands),
                decks=tuple(int(d) for d in fields["decks"].split("/")),
                discarded=frozenset(_items(fields["discarded"], ",")),
                no_plant_run=int(fields["run"]),
                to_move=int(fields["to_move"]),
                phase=_phase(fields["phase"], fields["to_move"]),
                ending=fields["ending"],
                hexagon_winner=int(fields["winner"]),
            )
            return settle(validate(position))
        except (ValueError, ConfigError) as error:
            if isinstance(error, InvalidPositionError):
                raise
            raise InvalidStepError(f"not a Gardens of Uranus position: {error}") from None

    # -- setups laid out by hand (the GameRules seam)
    def setup_problems(self, state: State, board: Mapping[Cell, Piece]) -> list[SetupProblem]:
        return setup_problems(state, board)

    def adopt_setup(self, state: State, board: Mapping[Cell, Piece]) -> State:
        return adopt_setup(state, board)



def _shown(state: State, player: int, mission: str) -> tuple[tuple[str, ...], int]:
    """Player ``player``'s known hand without ``mission`` and their unknown count, after they
    show ``mission`` (a card they may hold): a known card leaves the hand, else it was one of
    the unknown ones."""
    hand = state.hands[player - 1]
    if mission in hand:
        kept = list(hand)
        kept.remove(mission)
        return tuple(kept), state.unknown[player - 1]
    return hand, state.unknown[player - 1] - 1


def _phase(text: str, to_move: str) -> Phase:
    """The phase named ``text`` in a position.  Raises :class:`InvalidPositionError`."""
    if text not in PHASES:
        raise InvalidPositionError(f"player {to_move} in phase {text!r} cannot be to move")
    return Phase(text)


def _items(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep``; the empty text is the empty list."""
    return text.split(sep) if text else []


def _reserve(text: str) -> tuple[int, ...]:
    """``"blue:3,red:2"`` -> counts in COLOURS order.  Raises :class:`InvalidStepError` for
    an unknown colour and ``ValueError`` for a count that is not a number."""
    counts = dict.fromkeys(COLOURS, 0)
    for item in _items(text, ","):
        colour, _, n = item.partition(":")
        if colour not in counts:
            raise InvalidStepError(f"{colour!r} is not a flower colour of Gardens of Uranus; "
                                   f"the colours are {', '.join(COLOURS)}")
        counts[colour] = int(n)
    return tuple(counts.values())


def format_step(step: Step) -> str:
    """``step`` in the notation of :meth:`UranusRules.format_step` (which needs no state)."""
    if isinstance(step, Place):
        return "@" + hex_name(step.cell)
    if isinstance(step, Move):
        return hex_name(step.to) + (f"={step.plant}" if step.plant else "")
    if isinstance(step, Claim):
        return f"claim:{step.player}"
    if isinstance(step, Reveal):
        return f"show:{step.mission}"
    drawn = "" if step.drawn is None else f":{step.drawn}"
    return f"score:{step.mission}/{step.draw}{drawn}"


def _card_path(mission: str) -> tuple[str, str]:
    """A card's menu levels: its kind, then its canonical name."""
    return mission.partition(":")[0], mission


RULES = UranusRules()
"""The Gardens of Uranus rules core."""


class UranusCases:
    """The case adapter (:class:`companion.rules.cases.CaseAdapter`) for
    ``docs/CASES.md``: positions, steps, snapshots and the Uranus queries."""
    def position(self, case: Case) -> State:
        """The state of ``case["position"]`` under ``case["options"]``: the trees are the
        ``"tree"`` cells; the phase is placement while a gardener is missing; the end
        conditions are applied (:func:`settle`).  Raises :class:`InvalidStepError` for an
        unknown piece and :class:`InvalidPositionError` for an impossible position."""
        pos = case["position"]
        options = read_options({**case.get("options", {}), "board": pos["board"]})
        players = int(pos["players"])
        _check_players(players)
        shape = BOARDS[options.board]
        _check_supply(pos, shape)
        flowers = [""] * len(shape.grid)
        gardeners: list[Hex | None] = [None] * players
        trees = set()
        for name, piece in pos["cells"].items():
            cell, info = parse_hex(name), parse_piece(piece)
            if cell not in shape.grid or info.kind not in ("tree", "flower", "martian"):
                raise InvalidPositionError(
                    f"{name}: {piece!r} cannot stand there; a hex of the board holds a tree, "
                    "a flower or a gardener")
            if info.kind == "tree":
                trees.add(cell)
            if info.kind == "martian":
                if not 1 <= info.player <= players:
                    raise InvalidPositionError(
                        f"{name}: {piece!r} is the gardener of player {info.player}; this "
                        f"game has {players} players")
                gardeners[info.player - 1] = cell
            flowers[shape.index[cell]] = info.colour
        numbers = [str(p) for p in range(1, players + 1)]
        state = State(
            options=options,
            trees=frozenset(trees),
            flowers=tuple(flowers),
            gardeners=tuple(gardeners),
            reserves=tuple(_reserve_of(pos["reserves"].get(p, {})) for p in numbers),
            scores=tuple(int(pos["scores"].get(p, 0)) for p in numbers),
            hands=tuple(
                tuple(sorted(parse_mission(m) for m in pos["hands"].get(p, []))) for p in numbers
            ),
            unknown=(0,) * players,
            decks=tuple(int(d) for d in pos["decks"]),
            no_plant_run=int(pos.get("no_plant_run", 0)),
            to_move=int(pos["to_move"]),
            phase=_PLACEMENT if None in gardeners else _TURN,
        )
        return settle(validate(state))

    def step(self, state: State, step: UranusStep) -> Step:
        """``{"place": c}``, ``{"to": c, "plant": colour}`` (no ``plant`` onto a flower) or
        ``{"score": m, "draw": n, "drawn": m}``.  Raises :class:`InvalidStepError`."""
        keys = set(step)
        if keys == {"place"}:
            return Place(parse_hex(step["place"]))
        if keys in ({"to"}, {"to", "plant"}):
            plant = step.get("plant")
            if plant is not None and plant not in COLOURS:
                raise InvalidStepError(f"{plant!r} is not a flower colour of Gardens of Uranus; "
                                       f"the colours are {', '.join(COLOURS)}")
            return Move(parse_hex(step["to"]), plant)
        if keys == {"score", "draw", "drawn"}:
            return Score(step["score"], int(step["draw"]), step["drawn"])
        raise InvalidStepError(
            f"{dict(step)!r} is not a Gardens of Uranus step: place, to (+ plant) or "
            "score + draw + drawn"
        )

    def snapshot(self, state: State) -> Answer:
        """``cells`` (every occupied spot), ``reserves``, ``scores``, ``hands``, ``to_move``,
        ``over``, keyed by player number as text."""
        return {
            "cells": {c: p for c, p in RULES.board(state).items() if p != EMPTY},
            "reserves": {
                str(p): dict(zip(COLOURS, r, strict=True)) for p, r in enumerate(state.reserves, 1)
            },
            "scores": {str(p): s for p, s in enumerate(state.scores, 1)},
            "hands": {str(p): list(h) for p, h in enumerate(state.hands, 1)},
            "to_move": state.to_move,
            "over": state.phase in (_REVEAL, _OVER),
        }

    def query(self, state: State, name: str, arg: JsonTree) -> Answer:
        """``legal_moves`` (where the gardener to move may go: none while gardeners are
        being placed or once the game is over), ``mission_value``,
        ``final_scores``, ``outcome`` and ``board_info``.  Raises :class:`InvalidStepError`
        for another query."""
        if name == "legal_moves":
            cells = {s.to for s in RULES.legal_steps(state) if isinstance(s, Move)}
            return {"destinations": sorted(hex_name(c) for c in cells)}
        if name == "mission_value":
            return {"value": mission_value(state, arg)}
        if name == "final_scores":
            return {"scores": {str(p): s for p, s in enumerate(final_scores(state), 1)}}
        if name == "outcome":
            outcome = RULES.outcome(state)
            return {
                "over": outcome is not None,
                "winners": list(outcome.winners if outcome else ()),
            }
        if name == "board_info":
            shape = state.shape
            return {
                "spots": len(shape.grid),
                "edge_spots": len(shape.grid.edge),
                "trees": shape.trees,
                "decks": shape.decks,
            }
        raise InvalidStepError(f"{name!r} is not a query of Gardens of Uranus cases")


def _check_supply(pos: Position, shape: BoardShape) -> None:
    """Raise :class:`InvalidPositionError` naming every count of a case position (of the
    shape docs/CASES.md gives) beyond the game's supply: a reserve beyond the deal (2 players
    30, 3: 20, 4: 15, 5: 12), more than 12 flowers of a colour on the board and in the
    reserves, more trees than the board has, more than 5 cards in a hand, more mission cards
    in the decks and hands than the game has (36)."""
    players = int(pos["players"])
    reserves = pos.get("reserves", {})
    problems = overdealt(reserves, players)
    pieces = [piece.split("+")[-1] for piece in pos.get("cells", {}).values()]
    for colour in COLOURS:
        total = pieces.count(colour) + sum(int(r.get(colour, 0)) for r in reserves.values())
        if total > FLOWERS_PER_COLOUR:
            problems.append(f"position: {total} {colour} flowers on the board and in the "
                            f"reserves; the game has {FLOWERS_PER_COLOUR} of each colour")
    if pieces.count(TREE) > shape.trees:
        problems.append(f"position.cells: {pieces.count(TREE)} trees; the {shape.name} board "
                        f"has {shape.trees}")
    problems += [
        f"position.hands.{p} holds {len(hand)} cards; a hand holds at most {HAND_SIZE}"
        for p, hand in pos.get("hands", {}).items()
        if len(hand) > HAND_SIZE
    ]
    cards = sum(int(d) for d in pos.get("decks", [])) + sum(
        len(hand) for hand in pos.get("hands", {}).values())
    if cards > len(ALL_MISSIONS):
        problems.append(f"position: {cards} mission cards in the decks and hands; the game has "
                        f"{len(ALL_MISSIONS)}")
    if problems:
        raise InvalidPositionError("; ".join(problems))


def _reserve_of(counts: Mapping[str, int]) -> tuple[int, ...]:
    """``{"red": 3}`` -> counts in COLOURS order.  Raises :class:`InvalidStepError` for a
    colour that is not one of the five."""
    unknown = counts.keys() - set(COLOURS)
    if unknown:
        raise InvalidStepError(f"{', '.join(sorted(unknown))} is not a flower colour of Gardens "
                               f"of Uranus; the colours are {', '.join(COLOURS)}")
    return tuple(int(counts.get(c, 0)) for c in COLOURS)


CASES = UranusCases()
"""The case adapter of Gardens of Uranus."""
