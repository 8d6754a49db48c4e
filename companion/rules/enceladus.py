"""The Gardens of Enceladus rules core: a 10 x 10 garden, Martians that pick flowers, ten
special actions, hands scored from sorted colour counts.

Sources: the published rules of Gardens of Enceladus (the text) and ``docs/RULINGS.md``
(Coordinates, Enceladus #1-#10).  ``RULES`` implements
:class:`companion.rules.base.GameRules`; ``CASES`` is the case adapter of
:mod:`companion.rules.cases`.  Everything is pure: a game is a frozen :class:`State`, chance
(the tube draws) arrives inside the steps.

Functions: :func:`new_game`, :func:`setup_valid`, :func:`legal_steps`, :func:`apply`,
:func:`changes`, :func:`candidates`, :func:`board`, :func:`outcome`, :func:`hands`,
:func:`hand`, :func:`rank_points`, :func:`status`, :func:`tray_filter`, :func:`choice_path`,
:func:`notation` / :func:`parse_step`, :func:`format_position` / :func:`parse_position`,
:func:`read_options`.

Options (docs/RULINGS.md Enceladus #10, #1): ``mode`` (``competitive`` | ``cooperative``),
``martians_per_player`` (1 | 2, two players only), ``tube`` (true | false: false is the
combinatorial game, the tube action covered at the start), ``colours`` (five names, default
``blue red yellow green purple``).

Physical layout (dump order, 146 cells)
---------------------------------------
The garden ``a1..j1, a2..j2, ..., a10..j10``; the start squares ``L1..L10``, ``R1..R10``,
``Ba..Bj``; the action slots ``A1..A10`` in the order of the text's table (``A1`` tube ...
``A10`` wildflower); the show-tray ``T1..T6``.

Steps and their notation
------------------------
==============================  ======================================================
``@L3``                         :class:`Place`: a Martian onto start square L3
``f5/f6``                       :class:`Move` to f5, then pick the adjacent f6
``f5``                          a move with no flower next to f5 to pick
``e5-f5/f6``                    the Martian on e5 moves (two-Martian variant)
``pick:blue:f5``                :class:`Action` pick, paying 3 blue, taking f5
``jump:blue:g6``                jump landing on g6; ``jump:blue:e6-g6`` names the Martian
``diagonal:blue:f5``            likewise ``swap_martian:blue:c3`` (swap with c3)
``swap_flowers:purple:a1,d7``   likewise ``swap_peak_flower:red:e6,c3``
``move_flower:red:c3>c9``       likewise ``move_peak``
``tube:blue:red2,yellow1``      pay 3 blue, draw 2 red and 1 yellow from the tube
``wildflower:green``            take the wildflower, paying 3 green
==============================  ======================================================

Position notation (:func:`format_position`), seven fields separated by spaces::

    <garden> <martians> <reserves> <tube> <slots> <turn> <options>

``garden``: ten rows from row 10 down to row 1 separated by ``/``, one character a square:
``1``-``5`` a flower of the n-th colour, ``^`` a peak, ``.`` empty (a flower under a Martian
is written as a flower).  ``martians``: per player, separated by ``/``, the cells of their
Martians joined by ``,`` (``-`` for none).  ``reserves``: per player ``/``, six counts joined
by ``.`` (the five colours, then the wildflower).  ``tube``: five counts joined by ``.``.
``slots``: ten characters, ``-`` an unused action, else the digit of the player whose disc
covers it (``0`` the neutral cover).  ``turn``: ``<player>:<phase>`` with ``:<cell>`` when a
Martian is bound (two-Martian variant).  ``options``: ``key=value`` joined by ``,``.

Readings of ours where the texts are silent
-------------------------------------------
* "Any flower" in swap flowers and move flower includes a flower under a Martian; only swap
  peak and flower may not use it (docs/RULINGS.md Enceladus #8b).
* Once a Martian is bound (#8a), the other Martian may not move this turn, so only the bound
  one counts for the end test.
* A game has two to five players (five Martian types, the text's Setup).
"""

from __future__ import annotations

import random
import re
import warnings
from abc import abstractmethod
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import (
    Callable,
    Hashable,
    ItemsView,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache, lru_cache, partial
from itertools import (
    accumulate,
    chain,
    combinations,
    combinations_with_replacement,
    compress,
    cycle,
    filterfalse,
    permutations,
    product,
    repeat,
)
from math import isqrt
from struct import Struct
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeAlias, cast, overload

from companion.errors import (
    ConfigError,
    IllegalMoveError,
    InvalidPositionError,
    InvalidStepError,
    MisuseError,
)
from companion.rules import base
from companion.rules.base import Item, rank_points, replaced
from companion.rules.squares import (
    COLUMNS,
    DIAGONAL_RAYS,
    NEIGHBOURS,
    NOT_FIRST_COLUMN,
    NOT_LAST_COLUMN,
    ORTHOGONAL_RAYS,
    SIZE,
    SQUARE_NAMES,
    SQUARES,
    Square,
    board_connected,
    is_connected,
    parse_square,
)

if TYPE_CHECKING:
    from companion.rules.cases import Answer, Case, JsonTree

RULE_SETUP = "Gardens of Enceladus, Setup"
RULE_MOVE = "Gardens of Enceladus, Your turn, step 2 (Move your Martian)"
RULE_ACTIONS = "Gardens of Enceladus, Special actions"
RULE_NOTES = "Gardens of Enceladus, Notes on the rules"
RULE_END = "Gardens of Enceladus, Game end"
RULE_VARIANTS = "Gardens of Enceladus, Variants (game options)"
RULE_START = "docs/RULINGS.md Enceladus #3"
RULE_PICK = "docs/RULINGS.md Enceladus #5"
RULE_TUBE = "docs/RULINGS.md Enceladus #7"
RULE_BOUND = "docs/RULINGS.md Enceladus #8a"
RULE_UNDER = "docs/RULINGS.md Enceladus #8b"

DEFAULT_COLOURS = ("blue", "red", "yellow", "green", "purple")
"""The five flower colours (docs/RULINGS.md Enceladus #1)."""

FLOWERS_PER_COLOUR = 19
PEAKS = 5
PAYMENT = 3
"""Flowers of one colour a special action costs (the text, Special actions)."""
DRAW = 3
"""Flowers the tube action draws; also the least the tube must hold before paying (#7)."""
MIN_PLAYERS, MAX_PLAYERS = 2, 5

ACTIONS = (
    "tube",
    "jump",
    "diagonal",
    "pick",
    "swap_martian",
    "swap_peak_flower",
    "swap_flowers",
    "move_flower",
    "move_peak",
    "wildflower",
)
"""The ten special actions in the order of the text's table (slots ``A1``..``A10``)."""

MARTIAN_ACTIONS = frozenset({"jump", "diagonal", "swap_martian"})
"""Actions that move a Martian: unavailable outside the garden, binding in the two-Martian
variant (the text, Special actions; docs/RULINGS.md Enceladus #8a)."""

_ARITY = {
    "tube": (0,),
    "jump": (0, 1),
    "diagonal": (1,),
    "pick": (1,),
    "swap_martian": (1,),
    "swap_peak_flower": (2,),
    "swap_flowers": (2,),
    "move_flower": (2,),
    "move_peak": (2,),
    "wildflower": (0,),
}
_SWAPS = frozenset({"swap_peak_flower", "swap_flowers"})
_TUBE, _WILD = 0, 9

START_SQUARES: tuple[str, ...] = (
    tuple(f"L{n}" for n in range(1, SIZE + 1))
    + tuple(f"R{n}" for n in range(1, SIZE + 1))
    + tuple(f"B{c}" for c in COLUMNS)
)
"""The start squares outside the garden (docs/RULINGS.md, Coordinates)."""

ACTION_SLOTS: tuple[str, ...] = tuple(f"A{k}" for k in range(1, len(ACTIONS) + 1))
TRAY_CELLS: tuple[str, ...] = tuple(f"T{k}" for k in range(1, 7))
LAYOUT: tuple[str, ...] = SQUARE_NAMES + START_SQUARES + ACTION_SLOTS + TRAY_CELLS


def layout_cells(board: str = "") -> tuple[str, ...]:
    """The 146 cells in dump order (one board: ``board`` is ignored)."""
    return LAYOUT
"""Every sensed cell in dump order (146 cells)."""

# Cells are indices into LAYOUT: 0..99 garden squares, 100..129 start squares, 130..139 slots.
_STARTS_FROM = len(SQUARE_NAMES)
_SLOTS_FROM = _STARTS_FROM + len(START_SQUARES)
_TRAY_FROM = _SLOTS_FROM + len(ACTION_SLOTS)
_CELL = {name: i for i, name in enumerate(LAYOUT)}

EMPTY_SQUARE = -1
PEAK_SQUARE = -2
"""Garden values besides flowers (a flower is its colour's index, 0..4)."""


def _entry_ray(start: int) -> tuple[Square, ...]:
    side, n = divmod(start - _STARTS_FROM, SIZE)
    if side == 0:  # L: along row n, left to right
        return tuple(n * SIZE + c for c in range(SIZE))
    if side == 1:  # R: along row n, right to left
        return tuple(n * SIZE + c for c in reversed(range(SIZE)))
    return tuple(r * SIZE + n for r in range(SIZE))  # B: up column n


ENTRY_RAYS: tuple[tuple[Square, ...], ...] = tuple(
    _entry_ray(s) for s in range(_STARTS_FROM, _SLOTS_FROM)
)
"""``ENTRY_RAYS[i]``: the garden squares start square ``START_SQUARES[i]`` looks into,
nearest first (docs/RULINGS.md Enceladus #3)."""

_NEAR: tuple[frozenset[Square], ...] = tuple(
    frozenset(
        t for t in SQUARES if abs(t % SIZE - s % SIZE) + abs(t // SIZE - s // SIZE) <= 2
    )
    for s in SQUARES
)
"""Squares within two orthogonal steps: where a move's landing, pick and new soliflowers lie."""

class Phase(StrEnum):
    """Where the game stands: Martians being placed, turns being played, or over."""

    PLACEMENT = "placement"
    TURN = "turn"
    OVER = "over"


_PLACEMENT, _TURN, _OVER = Phase.PLACEMENT, Phase.TURN, Phase.OVER
"""The phases as plain names: Python 3.11 reads an enum's member through its class at some
ten times the cost of a global, and every step asks for them a few times."""


# ----------------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class Options:
    """The game options (docs/RULINGS.md Enceladus #10); see :func:`read_options`."""

    mode: str = "competitive"
    martians_per_player: int = 1
    tube: bool = True
    colours: tuple[str, ...] = DEFAULT_COLOURS


_RESERVED_NAMES = frozenset({"wild", "peak", "tree", "occupied"})


def read_options(options: Mapping[str, object]) -> Options:
    """Options from a mapping; missing keys take the defaults.

    Raises :class:`ConfigError` listing every unknown option and every bad value, each naming
    the option and what is allowed.
    """
    problems = [
        f"unknown Enceladus option {key!r}; the options are mode, martians_per_player, tube "
        "and colours"
        for key in options
        if key not in Options.__dataclass_fields__
    ]
    mode = options.get("mode", "competitive")
    if mode not in ("competitive", "cooperative"):
        problems.append(f"option mode is {mode!r}; use \"competitive\" or \"cooperative\"")
    martians = options.get("martians_per_player", 1)
    if isinstance(martians, bool) or martians not in (1, 2):
        problems.append(f"option martians_per_player is {martians!r}; use 1 or 2")
    tube = options.get("tube", True)
    if not isinstance(tube, bool):
        problems.append(f"option tube is {tube!r}; use true or false")
    colours = options.get("colours", DEFAULT_COLOURS)
    if (
        isinstance(colours, str)
        or not isinstance(colours, Sequence)
        or len(colours) != len(DEFAULT_COLOURS)
        or len(set(colours)) != len(colours)
        or not all(isinstance(c, str) and c.isalpha() and c.islower() for c in colours)
        or _RESERVED_NAMES & set(colours)
    ):
        problems.append(
            f"option colours is {colours!r}; give five different lower-case names such as "
            "[\"blue\", \"red\", \"yellow\", \"green\", \"purple\"]"
        )
    if problems:
        raise ConfigError(problems)
    # every value checked above: martians 1 or 2, colours five names
    return Options(str(mode), 2 if martians == 2 else 1, bool(tube),
                   tuple(cast("Sequence[str]", colours)))


def _check_players(players: int, options: Options) -> None:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidPositionError(
            f"{players} players cannot play Gardens of Enceladus; it is for {MIN_PLAYERS} to "
            f"{MAX_PLAYERS} players"
        )
    if options.martians_per_player == 2 and players != 2:
        raise ConfigError(
            f"option martians_per_player = 2 is the two-player variant; this game has "
            f"{players} players"
        )


# ----------------------------------------------------------------------------- state, steps


@dataclass(frozen=True, slots=True)
class State:
    """A position of Gardens of Enceladus: frozen, hashable, everything the rules need.

    * ``garden``: 100 values in square order (:mod:`companion.rules.squares`): a flower is its
      colour's index into ``options.colours``; ``EMPTY_SQUARE`` or ``PEAK_SQUARE``.  A flower
      under a Martian stays here (docs/RULINGS.md Enceladus #8b).
    * ``martians``: per player, the sorted cells of their Martians: ``0..99`` a garden square,
      ``100..129`` a start square (``START_SQUARES``).
    * ``reserves``: per player, six counts: the five colours, then the wildflower.
    * ``tube``: five colour counts in the carrying tube.
    * ``discs``: per action (``ACTIONS`` order) ``None`` while unused, else the player whose
      disc covers it (``0``: the neutral cover of the tube action in the combinatorial game).
    * ``to_move``: the player (from 1) whose step comes next; when ``phase`` is over, the
      player who could not move.
    * ``bound``: the cell of the only Martian that may act or move for the rest of this turn
      (two-Martian variant, after jump, diagonal or swap Martian, #8a), else ``None``.
    """

    options: Options
    garden: tuple[int, ...]
    martians: tuple[tuple[int, ...], ...]
    reserves: tuple[tuple[int, ...], ...]
    tube: tuple[int, ...]
    discs: tuple[int | None, ...]
    to_move: int
    phase: Phase
    bound: int | None = None

    @property
    def players(self) -> int:
        """The number of players."""
        return len(self.reserves)


@dataclass(frozen=True, slots=True)
class Place:
    """Setup: the player to move puts a Martian on start square ``cell`` (``"L3"``)."""

    cell: str


@dataclass(frozen=True, slots=True)
class Move:
    """The normal move (the text, Your turn, steps 2-3): to the flower on ``to``, then pick
    the adjacent flower ``pick`` (``None`` when there is none next to ``to``); the
    soliflowers follow inside :func:`apply`.  ``martian`` is the cell of the Martian that
    moves: given by :func:`legal_steps` in the two-Martian variant, optional otherwise."""

    to: str
    pick: str | None = None
    martian: str | None = None


class Action(NamedTuple):
    """A special action ``name`` (see ``ACTIONS``), paid with 3 flowers of colour ``pay``.

    ``cells`` by action: ``jump``/``diagonal`` ``(landing,)`` (jump may leave it out when only
    one landing exists); ``pick`` ``(flower,)``; ``swap_martian`` ``(peak or flower,)``;
    ``swap_peak_flower``/``swap_flowers`` the two squares, either order;
    ``move_flower``/``move_peak`` ``(from, to)``; none for ``tube`` and ``wildflower``.
    ``drawn``: the three colours the tube action drew (a chance outcome), sorted in colour
    order.  ``martian``: the cell of the acting Martian for jump, diagonal and swap Martian
    (given by :func:`legal_steps` in the two-Martian variant, optional otherwise).

    A named tuple, where the other steps are frozen dataclasses: a position lists thousands
    of actions, and a tuple is made in C (:func:`_made`) where a dataclass costs a Python
    call.  It compares equal, as a tuple, to a plain tuple of the same fields; never to
    another step.
    """

    name: str
    pay: str
    cells: tuple[str, ...] = ()
    drawn: tuple[str, ...] = ()
    martian: str | None = None


Step = Place | Move | Action

_PLACES = tuple(Place(cell) for cell in START_SQUARES)
"""The placements (frozen), made once."""

# ----------------------------------------------------------------------------- setup


def setup_valid(peaks: Iterable[str]) -> bool:
    """Whether a garden with peaks on ``peaks`` (square names) and flowers everywhere else is
    valid: the non-peak squares form one orthogonally connected region (the text, Setup;
    docs/RULINGS.md Enceladus #2).  Raises :class:`InvalidStepError` for a bad name."""
    blocked = {parse_square(name) for name in peaks}
    return is_connected([s for s in SQUARES if s not in blocked])


def new_game(players: int, seed: int, options: Mapping[str, object]) -> State:
    """A seeded random setup before any Martian is placed (the text, Setup; #2).

    95 flowers (19 of each colour) and 5 peaks are shuffled with ``random.Random(seed)`` and
    drawn again until the 95 non-peak squares are orthogonally connected.  With
    ``tube = false`` the tube action starts covered (the text, Variants).  Raises
    :class:`ConfigError` for a bad option and :class:`InvalidPositionError` for a number of
    players outside 2..5.
    """
    opts = read_options(options)
    _check_players(players, opts)
    rng = random.Random(seed)
    pieces = [PEAK_SQUARE] * PEAKS + [
        c for c in range(len(opts.colours)) for _ in range(FLOWERS_PER_COLOUR)
    ]
    while True:
        rng.shuffle(pieces)
        if board_connected(_ALL_SQUARES & ~_bit_boards(pieces)[1]):
            break
    return State(
        options=opts,
        garden=tuple(pieces),
        martians=((),) * players,
        reserves=((0,) * 6,) * players,
        tube=(0,) * 5,
        discs=(None if opts.tube else 0,) + (None,) * (len(ACTIONS) - 1),
        to_move=1,
        phase=Phase.PLACEMENT,
    )


# ----------------------------------------------------------------------------- setup by hand


def setup_problems(state: State, observed: base.Board) -> list[base.SetupProblem]:
    """The setup conditions a garden laid out by hand breaks (the text, Setup; docs/RULINGS.md
    Enceladus #2), each with the cells to blame; ``[]`` for a legal setup.

    ``state`` is a fresh game (:func:`new_game`: its colours and players); ``observed`` maps
    every cell of ``LAYOUT`` to its piece (a missing cell reads empty).  The conditions, in
    order: every garden square holds a flower or a peak (the squares that do not); 19 flowers
    of each colour (too many: that colour's squares; too few: the squares where one could go,
    those of a colour or of peaks in excess and the empty ones); 5 peaks (likewise); the peaks
    fence off no part of the garden (the squares cut off from its largest region); the start
    squares are empty (those that are not); the action strip is as a game starts, the
    wildflower on A10 and, in the combinatorial game, the cover on A1 (the slots that differ);
    the show tray is empty (the tray cells that hold a piece).
    """
    colours = state.options.colours
    garden = {name: observed.get(name, base.EMPTY) for name in SQUARE_NAMES}
    problems: list[base.SetupProblem] = []
    stray = tuple(name for name, piece in garden.items()
                  if piece != base.PEAK and piece not in colours)
    if stray:
        problems.append(base.SetupProblem(
            f"Every square of the garden holds a flower or a peak: {base.listed(stray)} "
            f"{'does' if len(stray) == 1 else 'do'} not.", stray))
    wanted = {**dict.fromkeys(colours, FLOWERS_PER_COLOUR), base.PEAK: PEAKS}
    found = Counter(garden.values())
    surplus = tuple(name for name, piece in garden.items()
                    if piece in wanted and found[piece] > wanted[piece])
    for piece, want in wanted.items():
        have = found[piece]
        what = "peaks" if piece == base.PEAK else f"{piece} flowers"
        if have > want:
            cells = tuple(name for name, p in garden.items() if p == piece)
            problems.append(base.SetupProblem(
                f"The garden has {have} {what}, {have - want} too many: it takes {want}.", cells))
        elif have < want:
            cells = tuple(sorted(surplus + stray, key=SQUARE_NAMES.index))
            problems.append(base.SetupProblem(
                f"The garden has {have} {what}, {want - have} too few: it takes {want}.", cells))
    cut_off = _fenced_off([parse_square(n) for n, p in garden.items() if p != base.PEAK])
    if cut_off:
        names = tuple(SQUARE_NAMES[s] for s in cut_off)
        problems.append(base.SetupProblem(
            f"Peaks fence off {base.listed(names)} from the rest of the garden: move a peak.",
            names))
    fresh = board(state)
    taken = tuple(name for name in START_SQUARES if observed.get(name, base.EMPTY))
    if taken:
        problems.append(base.SetupProblem(
            f"The start squares are empty before the Martians are placed: clear "
            f"{base.listed(taken)}.", taken))
    slots = tuple(name for name in ACTION_SLOTS
                  if observed.get(name, base.EMPTY) != fresh[name])
    if slots:
        covered = " and the cover on A1" if fresh["A1"] else ""
        problems.append(base.SetupProblem(
            f"The action strip holds only the wildflower on A10{covered} at the start: "
            f"put {base.listed(slots)} right.", slots))
    shown = tuple(name for name in TRAY_CELLS if observed.get(name, base.EMPTY))
    if shown:
        problems.append(base.SetupProblem(
            f"The show tray is empty at the start: clear {base.listed(shown)}.", shown))
    return problems


def adopt_setup(state: State, observed: base.Board) -> State:
    """``state`` (a fresh game) with the garden of ``observed`` in place of its seeded one.
    Raises :class:`InvalidPositionError` naming every problem :func:`setup_problems` finds."""
    problems = setup_problems(state, observed)
    if problems:
        raise base.setup_refused(problems)
    index = {colour: i for i, colour in enumerate(state.options.colours)}
    garden = tuple(PEAK_SQUARE if observed[name] == base.PEAK else index[observed[name]]
                   for name in SQUARE_NAMES)
    return replace(state, garden=garden)


def _fenced_off(open_squares: Sequence[Square]) -> list[Square]:
    """The squares of ``open_squares`` outside its largest orthogonally connected region
    (the first found of two as large), in square order."""
    left = set(open_squares)
    regions: list[set[Square]] = []
    while left:
        start = min(left)
        region, stack = {start}, [start]
        while stack:
            for n in NEIGHBOURS[stack.pop()]:
                if n in left and n not in region:
                    region.add(n)
                    stack.append(n)
        left -= region
        regions.append(region)
    if len(regions) < 2:
        return []
    largest = max(regions, key=len)
    return sorted(s for region in regions if region is not largest for s in region)


# ----------------------------------------------------------------------------- geometry


def _for_the_last_state(work: Callable[[State], Item]) -> Callable[[State], Item]:
    """``work`` memoised for the last state it was asked about, known by identity: the end
    test after a step, the listing of the position it leaves and the next step ask about the
    same state in turn, and a garden of 100 squares would be hashed each time."""
    last: list[tuple[State | None, Item | None]] = [(None, None)]

    def memo(state: State) -> Item:
        held = last[0]
        if held[0] is state:
            return cast(Item, held[1])
        value = work(state)
        last[0] = (state, value)  # one item, replaced at once
        return value

    return memo


def _occupancy(state: State) -> Mapping[int, int]:
    """Cell -> player, for every Martian (a :class:`Mapping`, never changed: one is shared
    by every state with these Martians)."""
    martians = state.martians
    held = _last_occupancy[0]
    if held[0] is not martians:  # known by identity: a step shares them unchanged
        held = _last_occupancy[0] = (martians, _occupancy_of(martians))
    return held[1]


_last_occupancy: list[tuple[object, Mapping[int, int]]] = [((), {})]
"""The Martians :func:`_occupancy` was last asked about, with their occupancy."""


@lru_cache(maxsize=256)  # asked by the listing, the step and the end test of every state
def _occupancy_of(martians: tuple[tuple[int, ...], ...]) -> Mapping[int, int]:
    return {cell: p for p, cells in enumerate(martians, 1) for cell in cells}


def _movers(state: State) -> tuple[int, ...]:
    """The cells of the Martians that may act or move now (#8a)."""
    if state.bound is not None:
        return (state.bound,)
    return state.martians[state.to_move - 1]


def _rays(origin: int) -> tuple[tuple[Square, ...], ...]:
    if origin < _STARTS_FROM:
        return ORTHOGONAL_RAYS[origin]
    return (ENTRY_RAYS[origin - _STARTS_FROM],)


def _destinations(garden: Sequence[int], occ: Mapping[int, int], origin: int) -> Iterator[Square]:
    """Where the Martian on ``origin`` may move: a flower in a straight line, passing flowers,
    empty squares and Martians, never a peak; not a flower under a Martian (#3, #4, #8b)."""
    for ray in _rays(origin):
        for sq in ray:
            value = garden[sq]
            if value == PEAK_SQUARE:
                break
            if value >= 0 and sq not in occ:
                yield sq


def _has_move(state: State) -> bool:
    occ = _occupancy(state)
    return any(next(_destinations(state.garden, occ, m), None) is not None for m in _movers(state))


def _soliflowers(garden: Sequence[int]) -> list[Square]:
    """Flowers with no flower orthogonally next to them (the text, step 3; #6), in square
    order (:func:`_alone` on the garden's flowers)."""
    return _squares_of(_alone(_bit_boards(garden)[0]))


def _alone(flowers: int) -> int:
    """The soliflowers of a bit board of flowers (bit ``sq`` for square ``sq``): the board
    shifted a square left, right, up and down (the row ends masked off) says which have a
    flower beside them, so that no square is visited in Python."""
    beside = (
        ((flowers << 1) & NOT_FIRST_COLUMN) | ((flowers >> 1) & NOT_LAST_COLUMN)
        | (flowers << SIZE) | (flowers >> SIZE)
    )
    return flowers & ~beside


def _squares_of(board: int) -> list[Square]:
    """The squares of a bit board, in square order."""
    out: list[Square] = []
    while board:
        low = board & -board
        out.append(low.bit_length() - 1)
        board ^= low
    return out


def _bit_boards(garden: Sequence[int]) -> tuple[int, int]:
    """A garden's flowers and its peaks as bit boards (bit ``sq`` for square ``sq``): its
    values as one byte a square, each made a binary digit in C and the digits read as one
    number (reversed, square 0 last)."""
    values = _garden_bytes(*garden)
    return (int(values.translate(_FLOWER_DIGITS)[::-1], 2),
            int(values.translate(_PEAK_DIGITS)[::-1], 2))


def _boards(garden: tuple[int, ...]) -> tuple[int, int]:
    """:func:`_bit_boards` of a state's garden (a tuple, never changed), kept for the last
    garden asked about, known by identity; a normal move hands the boards of the garden it
    leaves on (:meth:`_Draft.result`), worked out from the boards before it."""
    held = _last_boards[0]
    if held[0] is not garden:
        held = _last_boards[0] = (garden, _bit_boards(garden))
    return held[1]


_last_boards: list[tuple[object, tuple[int, int]]] = [((), (0, 0))]
"""The garden :func:`_boards` last gave, with its boards."""


_garden_bytes: Callable[..., bytes] = Struct(f"{len(SQUARES)}b").pack
"""A garden's 100 values as signed bytes, one a square (``_garden_bytes(*garden)``: a
quarter of the time ``array("b", garden)`` takes from a tuple)."""
_PIECE_BYTES = bytes(int(value != (EMPTY_SQUARE & 0xFF)) for value in range(256))
"""A square's value as a signed byte -> 1 for a flower or a peak, 0 for ``EMPTY_SQUARE``
(-1, the byte 255)."""


def _jump_landings(garden: Sequence[int], occ: Mapping[int, int], m: Square) -> Iterator[Square]:
    for ray in ORTHOGONAL_RAYS[m]:
        over_a_peak = len(ray) >= 2 and garden[ray[0]] == PEAK_SQUARE
        if over_a_peak and garden[ray[1]] != PEAK_SQUARE and ray[1] not in occ:
            yield ray[1]


def _diagonal_landings(
    garden: Sequence[int], occ: Mapping[int, int], m: Square
) -> Iterator[Square]:
    for ray in DIAGONAL_RAYS[m]:
        for sq in ray:
            if garden[sq] == PEAK_SQUARE:
                break
            if sq not in occ:
                yield sq


def _swap_partners(
    garden: Sequence[int], occ: Mapping[int, int], m: Square, among: Iterable[Square] = SQUARES
) -> Iterator[Square]:
    if garden[m] >= 0:  # a Martian standing on a flower cannot swap (#8b)
        return iter(())
    pieces = (
        compress(SQUARES, _garden_bytes(*garden).translate(_PIECE_BYTES)) if among is SQUARES
        else (sq for sq in among if garden[sq] != EMPTY_SQUARE)
    )  # the whole garden picked out in C, as the listing asks
    return iter(list(filterfalse(occ.__contains__, pieces)))


_MARTIAN_TARGETS = {
    "jump": _jump_landings,
    "diagonal": _diagonal_landings,
    "swap_martian": _swap_partners,
}


def _listed_jumps(
    garden: Sequence[int], flowers: int, peaks: int, under: int, m: Square
) -> list[Square]:
    """:func:`_jump_landings` from bit boards (``under``: the squares under a Martian)."""
    return [to for over, to, at in _JUMPS[m] if peaks & over and not (peaks | under) & at]


def _listed_diagonals(
    garden: Sequence[int], flowers: int, peaks: int, under: int, m: Square
) -> list[Square]:
    """:func:`_diagonal_landings` from bit boards: each ray cut at its nearest peak."""
    out: list[Square] = []
    for ray, outwards_up in _DIAGONAL_MASKS[m]:
        blockers = ray & peaks
        if blockers:
            if outwards_up:
                ray &= (blockers & -blockers) - 1
            else:
                past = blockers.bit_length()
                ray = ray >> past << past
        out += _nearest_first(ray & ~under, outwards_up)
    return out


def _listed_swaps(
    garden: Sequence[int], flowers: int, peaks: int, under: int, m: Square
) -> list[Square]:
    """:func:`_swap_partners` from bit boards: the pieces under no Martian."""
    if garden[m] >= 0:  # a Martian standing on a flower cannot swap (#8b)
        return []
    return _squares_in((flowers | peaks) & ~under)


_LISTED_TARGETS: dict[str, Callable[[Sequence[int], int, int, int, Square], list[Square]]] = {
    "jump": _listed_jumps,
    "diagonal": _listed_diagonals,
    "swap_martian": _listed_swaps,
}
"""Per Martian action, its targets from the Martian's cell ``m`` in the order of
:data:`_MARTIAN_TARGETS`, worked out from bit boards of the garden (its flowers, its peaks,
the squares under a Martian) for a listing."""
_JUMPS = tuple(
    tuple((1 << ray[0], ray[1], 1 << ray[1]) for ray in rays if len(ray) >= 2)
    for rays in ORTHOGONAL_RAYS
)
"""Per square, a jump's ``(bit of the square jumped over, landing, bit of the landing)``."""
_DIGITS = bytes(int(value == ord("1")) for value in range(256))
"""The binary digits ``0`` and ``1`` as the flags 0 and 1."""


def _pairs(
    first: Callable[[Square], bool], second: Callable[[Square], bool], focus: frozenset[Square]
) -> Iterator[tuple[Square, Square]]:
    """Pairs ``(a, b)``, ``a != b``, ``first(a)`` and ``second(b)``, with ``focus <= {a, b}``
    (one or two squares): only the squares in it are tested on one side (no scan of the
    garden); without a focus, :func:`_operands` gives them all."""
    if len(focus) > 2:
        return iter(())
    if len(focus) == 2:
        x, y = sorted(focus)
        tries: Iterable[tuple[Square, Square]] = ((x, y), (y, x))
    else:
        (x,) = focus
        tries = [(x, b) for b in SQUARES] + [(a, x) for a in SQUARES]
    return ((a, b) for a, b in tries if a != b and first(a) and second(b))


def _uses(
    state: State, occ: Mapping[int, int], name: str, focus: frozenset[Square]
) -> Iterator[tuple[int | None, tuple[Square, ...]]]:
    """The legal uses of action ``name`` apart from the payment, as ``(acting Martian's cell or
    None, cells)``, restricted to uses whose garden changes may cover ``focus``.

    Availability and payment are the caller's; the rules of each action are the text's
    Special actions table and docs/RULINGS.md Enceladus #7, #8a, #8b.
    """
    garden = state.garden
    if name in MARTIAN_ACTIONS:
        targets = _MARTIAN_TARGETS[name]
        # a Martian outside the garden cannot use them (the text)
        inside = [m for m in _movers(state) if m < _STARTS_FROM]
        if not focus:
            return iter([(m, (t,)) for m in inside for t in targets(garden, occ, m)])
        return iter([
            (m, (t,))
            for m in inside
            for t in (
                targets(garden, occ, m) if name != "swap_martian" or not focus - {m}
                else _swap_partners(garden, occ, m, focus - {m})
            )
            if focus <= {m, t}
        ])
    if name in ("tube", "wildflower"):
        return iter(() if focus else [(None, ())])

    if not focus:
        return zip(repeat(None), _combined(name, *_operands(state, name)))

    def flower(sq: Square) -> bool:
        return garden[sq] >= 0

    def peak(sq: Square) -> bool:
        return garden[sq] == PEAK_SQUARE

    def empty(sq: Square) -> bool:  # no flower, peak or Martian (#7)
        return garden[sq] == EMPTY_SQUARE and sq not in occ

    def free_flower(sq: Square) -> bool:  # not under a Martian (#8b)
        return garden[sq] >= 0 and sq not in occ

    if name == "pick":
        return ((None, (s,)) for s in focus if len(focus) <= 1 and flower(s))
    pairs: Iterable[tuple[Square, Square]]
    if name == "swap_peak_flower":
        pairs = _pairs(peak, free_flower, focus)
    elif name == "swap_flowers":
        pairs = ((a, b) for a, b in _pairs(flower, flower, focus) if a < b)
    elif name == "move_flower":
        pairs = _pairs(flower, empty, focus)
    else:
        pairs = _pairs(peak, empty, focus)
    return zip(repeat(None), pairs)


def _operands(state: State, name: str) -> tuple[list[Square], list[Square]]:
    """The squares Pick, the two swaps and the two moves of a piece may take as their first
    and their second square, in square order (no square qualifies as both): a flower, a
    flower not under a Martian (#8b), a peak, an empty square with no Martian (#7)."""
    return _sides(*_operand_boards(state, name))


def _sides(first: int, second: int) -> tuple[list[Square], list[Square]]:
    """The squares of the bit boards ``first`` and ``second`` (:func:`_squares_in`), one list
    for both when they are one board."""
    squares = _squares_in(first)
    return squares, squares if second == first else _squares_in(second)


def _operand_boards(state: State, name: str) -> tuple[int, int]:
    """:func:`_operands` as bit boards, from those of the moves (:func:`_reach`)."""
    reach = _reach(state)
    flowers, peaks, under = reach.flowers, reach.peaks, reach.under
    if name in ("pick", "swap_flowers"):
        return flowers, flowers
    if name == "swap_peak_flower":
        return peaks, flowers & ~under
    return (flowers if name == "move_flower" else peaks), _ALL_SQUARES & ~(flowers | peaks | under)


def _squares_in(board: int) -> list[Square]:
    """The squares of a bit board in square order, picked out in C (its binary digits,
    square 0 first, as flags): a board of dozens of squares."""
    return list(compress(SQUARES, f"{board:0{len(SQUARES)}b}"[::-1].encode().translate(_DIGITS)))


_ALL_SQUARES = (1 << len(SQUARES)) - 1


def _combined(name: str, first: list[Item], second: list[Item]) -> Iterator[tuple[Item, ...]]:
    """The cells of every use of action ``name`` from its :func:`_operands` (squares or their
    names): one square for Pick, two different flowers once for Swap flowers (the first
    before the second), else any first with any second."""
    if name == "pick":
        return zip(first)
    if name == "swap_flowers":
        return combinations(first, 2)
    return product(first, second)


# ----------------------------------------------------------------------------- steps


def legal_steps(state: State) -> Listing:
    """Every legal step, as a :class:`Listing` that makes a step only when it is read:
    placements, then moves, then special actions (every use, payment colour and tube draw);
    nothing once the game is over."""
    if state.phase is _PLACEMENT:
        return Listing([_place_steps(state)])
    if state.phase is _TURN:
        moves = _move_steps(state)
        pays = _affordable(state)
        return Listing([moves, *_listed(state, ACTIONS, pays)] if pays else [moves])
    return Listing([])


class _Made(Sequence[Item]):
    """A sequence whose items are made when read, by :meth:`_at` from an index in range:
    a slice or a negative index reads as a list's would, and an index out of range raises
    :class:`IndexError`."""

    __slots__ = ()

    @abstractmethod
    def _at(self, i: int) -> Item:
        """The item at ``i``, ``0 <= i < len(self)``."""

    @overload
    def __getitem__(self, i: int) -> Item: ...

    @overload
    def __getitem__(self, i: slice) -> list[Item]: ...

    def __getitem__(self, i: int | slice) -> Item | list[Item]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        return self._at(range(len(self))[i])


class Listing(_Made[Step]):
    """The legal steps of one position (:func:`legal_steps`), a sequence that makes only the
    steps read: a position may list thousands of special actions of which a random playout
    takes one.

    ``len()`` is counted from the parts (the moves; each action's uses times its payment
    colours) without making a step; ``listing[i]`` makes the i-th step alone; iteration
    makes every step in order, in C; ``step in listing`` works out where the step would
    stand from its own fields and compares the one step there.  The order: the placements,
    or the moves, then the special actions in ``ACTIONS`` order, each use with every payment
    colour in turn.  Raises :class:`IndexError` for an index out of range.
    """

    __slots__ = ("_parts", "_starts", "_size")

    def __init__(self, parts: list[Sequence[Step]]) -> None:
        # each part's len once, most of them counted, not stored; a part of none is passed
        # over by the search of _at (it starts where the next does)
        self._parts = parts
        self._starts = list(accumulate(map(len, parts), initial=0))
        self._size = self._starts.pop()

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def _at(self, i: int) -> Step:
        # the part found and read at once (a made part without its own range check)
        starts = self._starts
        k = bisect_right(starts, i) - 1
        part = self._parts[k]
        return part._at(i - starts[k]) if isinstance(part, _Made) else part[i - starts[k]]

    @overload
    def __getitem__(self, i: int) -> Step: ...

    @overload
    def __getitem__(self, i: slice) -> list[Step]: ...

    def __getitem__(self, i: int | slice) -> Step | list[Step]:
        if isinstance(i, int) and 0 <= i < self._size:  # a random playout's read
            return self._at(i)
        return super().__getitem__(i)

    def __iter__(self) -> Iterator[Step]:
        return chain.from_iterable(self._parts)

    def __contains__(self, step: object) -> bool:
        return any(step in part for part in self._parts)

    def __repr__(self) -> str:
        return f"<{self._size} legal steps>"


class _Paid(_Made[Action]):
    """Every payment of every use of one special action: use by use (``uses``, their cells
    as square names; ``martians``, the acting Martian's cell of each, else ``None``), each
    with every colour of ``pays``; a step is made when it is read."""

    __slots__ = ("name", "uses", "martians", "pays", "_size")

    def __init__(
        self, name: str, uses: _Uses | Sequence[tuple[str, ...]],
        martians: list[str] | None, pays: list[str],
    ) -> None:
        self.name, self.uses, self.martians, self.pays = name, uses, martians, pays
        self._size = len(uses) * len(pays)

    def __len__(self) -> int:
        return self._size

    def _at(self, i: int) -> Action:
        use, pay = divmod(i, len(self.pays))
        martian = None if self.martians is None else self.martians[use]
        return _new_action((self.name, self.pays[pay], self.uses[use], (), martian))

    def __iter__(self) -> Iterator[Action]:
        martians = repeat(None) if self.martians is None else self.martians
        return _made(self.name, iter(self.uses), martians, self.pays)

    def __contains__(self, step: object) -> bool:
        # an action, or a plain tuple of its fields (equal to it, as a tuple)
        if not isinstance(step, tuple) or len(step) != len(Action._fields):
            return False
        name, pay, cells = step[:3]
        if name != self.name or pay not in self.pays:
            return False
        if isinstance(self.uses, _Uses):
            at = [self.uses.index(cells)]
        else:  # a few dozen uses; with two Martians, two may share their cells
            at = [u for u, used in enumerate(self.uses) if used == cells]
        k = self.pays.index(pay)
        return any(self[u * len(self.pays) + k] == step for u in at if u >= 0)


class _Uses:
    """The cells of every use of an action on squares (pick, the two swaps, the two moves
    of a piece) as square names, from its operands as bit boards (:func:`_operand_boards`),
    in the order of :func:`_combined`, made when read: thousands of pairs of squares,
    counted from the boards; the squares of a board are picked out only when a use is read
    (a random playout reads one action's)."""

    __slots__ = ("name", "_boards", "_sides", "_size")

    def __init__(self, name: str, first: int, second: int) -> None:
        self.name, self._boards = name, (first, second)
        self._sides: tuple[list[Square], list[Square]] | None = None
        n = first.bit_count()
        self._size = (
            n if name == "pick" else n * (n - 1) // 2 if name == "swap_flowers"
            else n * second.bit_count()
        )

    @property
    def sides(self) -> tuple[list[Square], list[Square]]:
        """The first and the second squares of the uses, in square order (shared)."""
        if self._sides is None:
            self._sides = _sides(*self._boards)
        return self._sides

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, use: int) -> tuple[str, ...]:
        first, second = self.sides
        if self.name == "pick":
            return _square_names((first[use],))
        if self.name == "swap_flowers":  # the use-th pair a < b, as combinations() lists
            n = len(first)
            a = n - 2 - (isqrt(8 * (self._size - 1 - use) + 1) - 1) // 2
            return _square_names((first[a], first[use - a * n + a * (a + 1) // 2 + a + 1]))
        a, b = divmod(use, len(second))
        return _square_names((first[a], second[b]))

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        names_of = SQUARE_NAMES.__getitem__
        first_squares, second_squares = self.sides
        first = list(map(names_of, first_squares))
        second = first if second_squares is first_squares else list(map(names_of, second_squares))
        return _combined(self.name, first, second)

    def index(self, cells: object) -> int:
        """Where the use of ``cells`` (square names) stands, or -1 for none."""
        if not isinstance(cells, tuple) or len(cells) != (1 if self.name == "pick" else 2):
            return -1
        first, second = self.sides
        sides = (
            (first,) if self.name == "pick"
            else (first, first) if self.name == "swap_flowers"
            else (first, second)
        )
        at = [_place_in(side, _CELL.get(c, -1) if isinstance(c, str) else -1)
              for side, c in zip(sides, cells, strict=True)]
        if -1 in at:
            return -1
        if self.name == "pick":
            return at[0]
        a, b = at
        if self.name == "swap_flowers":
            return a * len(first) - a * (a + 1) // 2 + b - a - 1 if a < b else -1
        return a * len(second) + b


def _place_in(squares: list[Square], sq: int) -> int:
    """The index of ``sq`` in ``squares`` (in square order), or -1."""
    i = bisect_left(squares, sq)
    return i if i < len(squares) and squares[i] == sq else -1


def _place_steps(state: State) -> list[Place]:
    occ, garden = _occupancy(state), state.garden
    starts = range(_STARTS_FROM, _SLOTS_FROM)
    return [place for cell, ray, place in zip(starts, ENTRY_RAYS, _PLACES, strict=True)
            if cell not in occ and garden[ray[0]] != PEAK_SQUARE]


def _moves(state: State) -> Iterator[tuple[int, Square, Square | None]]:
    """``(origin, landing, pick)`` of every normal move (the text, step 2; #5)."""
    return ((o, to, pick) for (o, to), picks in _reach(state).items() for pick in picks or _NO_PICK)


_NO_PICK = (None,)
"""The pick of a move landing where no flower is next to it to pick."""


@_for_the_last_state  # the end test at a state, its listing and the step ask in turn
def _reach(state: State) -> _Reach:
    """``(origin, landing)`` of every normal move -> the flowers next to the landing it may
    pick, in the order of :func:`_moves`; empty when no Martian of the player can move."""
    flowers, peaks = _boards(state.garden)
    return _Reach(_movers(state), flowers, peaks, _under(state.martians))


def _under(martians: tuple[tuple[int, ...], ...]) -> int:
    """The garden squares under a Martian, as a bit board (each cell's bit summed in C: no two
    Martians share a cell)."""
    return sum(map(_CELL_BITS.__getitem__, chain.from_iterable(martians)))


_CELL_BITS = tuple(1 << cell if cell < _STARTS_FROM else 0 for cell in range(_SLOTS_FROM))
"""Per cell a Martian may stand on, its bit on a board of the garden (none off the garden)."""


class _Reach(Mapping[tuple[int, Square], tuple[Square, ...]]):
    """The normal moves of one position (:func:`_reach`), from bit boards of its garden
    (``flowers``, ``peaks``, ``under``: the squares under a Martian; bit ``sq`` for square
    ``sq``): along each ray the squares short of its first peak are a mask cut at the nearest
    peak's bit, the landings that mask's free flowers.  The flowers a landing may pick are a
    look-up of its neighbours among the pickable ones, made only when asked; ``moves``, the
    number of moves (a landing with each flower it may pick, or alone), is counted from the
    pickable board shifted a square each way, and :meth:`move_at` makes one move alone.
    Iterated, it lists its landings as a dict would, nearest first along each ray."""

    __slots__ = ("flowers", "peaks", "under", "moves", "_origins", "_dict")

    def __init__(self, movers: Iterable[int], flowers: int, peaks: int, under: int) -> None:
        self.flowers, self.peaks, self.under = flowers, peaks, under
        free = flowers & ~under
        origins = []
        moves = 0
        for origin in movers:
            reachable = _ALL_RAYS[origin]
            if reachable & peaks:  # each ray cut from its nearest peak on
                for ray, outwards_up in _RAY_MASKS[origin]:
                    blockers = ray & peaks
                    if not blockers:
                        continue
                    if outwards_up:  # square numbers grow along the ray: the nearest is lowest
                        reachable &= ~(ray & -(blockers & -blockers))
                    else:
                        reachable &= ~(ray & ((1 << blockers.bit_length()) - 1))
            landed = reachable & free
            if not landed:
                continue
            # the moving Martian leaves origin, so a flower it stood on becomes pickable
            pickable = free | (flowers & (1 << origin)) if origin < _STARTS_FROM else free
            # per landing, one move for each pickable neighbour, or one without a pick
            left = landed & (pickable << 1) & NOT_FIRST_COLUMN
            right = landed & (pickable >> 1) & NOT_LAST_COLUMN
            below = landed & (pickable << SIZE)
            above = landed & (pickable >> SIZE)
            sides = (landed & ~(left | right | below | above), left, right, below, above)
            count = (sides[0].bit_count() + left.bit_count() + right.bit_count()
                     + below.bit_count() + above.bit_count())
            moves += count
            origins.append((origin, landed, pickable, count, sides))
        self.moves = moves
        self._origins = origins
        self._dict: dict[tuple[int, Square], tuple[Square, ...]] | None = None

    def __bool__(self) -> bool:
        return bool(self._origins)

    def __len__(self) -> int:
        return sum(landed.bit_count() for _, landed, _, _, _ in self._origins)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        return self.picks(*key) is not None

    def __getitem__(self, key: tuple[int, Square]) -> tuple[Square, ...]:
        picks = self.picks(*key)
        # a key that is no move: the whole mapping's own KeyError, as Mapping.get expects
        return self._landings()[key] if picks is None else picks

    def picks(self, o: int, to: Square) -> tuple[Square, ...] | None:
        """The flowers a move of the Martian on ``o`` landing on ``to`` may pick, or
        ``None`` when that is no move."""
        if 0 <= to < _STARTS_FROM:
            for origin, landed, pickable, _, _ in self._origins:
                if origin == o and landed >> to & 1:
                    return _PICKS[to][_NEIGHBOUR_MASKS[to] & pickable]
        return None

    def __iter__(self) -> Iterator[tuple[int, Square]]:
        return iter(self._landings())

    def items(self) -> ItemsView[tuple[int, Square], tuple[Square, ...]]:
        return self._landings().items()

    def _landings(self) -> dict[tuple[int, Square], tuple[Square, ...]]:
        if self._dict is None:
            self._dict = {
                (origin, to): _PICKS[to][_NEIGHBOUR_MASKS[to] & pickable]
                for origin, landed, pickable, _, _ in self._origins
                for ray, outwards_up in _RAY_MASKS[origin]
                for to in _nearest_first(landed & ray, outwards_up)
            }
        return self._dict

    def move_at(self, i: int) -> tuple[int, Square, Square | None]:
        """``(origin, landing, pick)`` of the i-th move, ``0 <= i < moves``, in the order of
        :func:`_moves`.  Raises :class:`~companion.errors.MisuseError` past the last move."""
        asked = i
        for origin, landed, pickable, count, sides in self._origins:
            if i >= count:
                i -= count
                continue
            alone, left, right, below, above = sides
            for ray, outwards_up in _RAY_MASKS[origin]:
                landings = landed & ray
                count = ((landings & alone).bit_count() + (landings & left).bit_count()
                         + (landings & right).bit_count() + (landings & below).bit_count()
                         + (landings & above).bit_count())
                if i >= count:  # a ray's moves counted as the origin's were
                    i -= count
                    continue
                for to in _nearest_first(landings, outwards_up):
                    picks = _PICKS[to][_NEIGHBOUR_MASKS[to] & pickable]
                    if i < (len(picks) or 1):
                        return origin, to, picks[i] if picks else None
                    i -= len(picks) or 1
        raise MisuseError(f"move_at({asked}) of a position with {self.moves} moves")


def _nearest_first(landings: int, outwards_up: bool) -> list[Square]:
    """The squares of a ray's bit board nearest its origin first: the lowest bit first
    where square numbers grow along the ray."""
    if outwards_up:
        return _squares_of(landings)
    out: list[Square] = []
    while landings:
        to = landings.bit_length() - 1
        out.append(to)
        landings ^= 1 << to
    return out


def _ray_masks(rays: Iterable[tuple[Square, ...]]) -> tuple[tuple[int, bool], ...]:
    return tuple(
        (sum(1 << sq for sq in ray), len(ray) < 2 or ray[1] > ray[0]) for ray in rays if ray
    )


_RAY_MASKS = tuple(_ray_masks(_rays(origin)) for origin in range(_SLOTS_FROM))
"""Per cell a Martian may move from (garden and start squares), its rays in
:func:`_rays` order as ``(bit mask of the squares, whether square numbers grow along it)``."""
_ALL_RAYS = tuple(sum(mask for mask, _ in masks) for masks in _RAY_MASKS)
"""Per cell of :data:`_RAY_MASKS`, the squares of all its rays."""
_DIAGONAL_MASKS = tuple(_ray_masks(rays) for rays in DIAGONAL_RAYS)
"""Per square, its diagonal rays as :data:`_RAY_MASKS` gives the others."""
_NEIGHBOUR_MASKS = tuple(sum(1 << n for n in NEIGHBOURS[sq]) for sq in SQUARES)
_PICKS: tuple[dict[int, tuple[Square, ...]], ...] = tuple(
    {
        sum(1 << n for n in chosen): chosen
        for k in range(len(NEIGHBOURS[sq]) + 1)
        for chosen in combinations(NEIGHBOURS[sq], k)
    }
    for sq in SQUARES
)
"""Per square, each set of its neighbours as a bit mask -> those neighbours in
``NEIGHBOURS`` order (the flowers a move landing there may pick)."""
_FLOWER_DIGITS = bytes(0x31 if value < 5 else 0x30 for value in range(256))
"""A square's value as a signed byte -> the digit ``1`` for a flower, else ``0``: the garden
read as a binary number (after reversing, square 0 last) is its flowers' bit board."""
_PEAK_DIGITS = bytes(0x31 if value == (PEAK_SQUARE & 0xFF) else 0x30 for value in range(256))


def _move_step(state: State, origin: int, to: Square, pick: Square | None) -> Move:
    return _move_made(origin if state.options.martians_per_player == 2 else None, to, pick)


def _move_steps(state: State) -> _Moves:
    return _Moves(_reach(state), state.options.martians_per_player == 2)


class _Moves(_Made[Move]):
    """The normal moves of one position, from its ``reach`` (:func:`_reach`) in its order:
    each landing with each flower it may pick (the acting Martian named when ``named``); a
    move is made when read (:func:`_move_made`: made once, then shared), most of them never
    are: a random playout reads one of the position's steps."""

    __slots__ = ("reach", "named", "_size")

    def __init__(self, reach: _Reach, named: bool) -> None:
        self.reach, self.named = reach, named
        self._size = reach.moves

    def __len__(self) -> int:
        return self._size

    def _at(self, i: int) -> Move:
        origin, to, pick = self.reach.move_at(i)
        return _move_made(origin if self.named else None, to, pick)

    def __iter__(self) -> Iterator[Move]:
        made, named = _move_made, self.named
        return iter([made(o if named else None, to, pick)
                     for (o, to), picks in self.reach.items() for pick in picks or _NO_PICK])


@cache  # a few hundred moves with one Martian a player, some thousands with two
def _move_made(origin: int | None, to: Square, pick: Square | None) -> Move:
    """The move (frozen) listed again whenever it is legal, made once."""
    return Move(
        SQUARE_NAMES[to],
        None if pick is None else SQUARE_NAMES[pick],
        None if origin is None else LAYOUT[origin],
    )


def _affordable(state: State) -> list[int]:
    reserve = state.reserves[state.to_move - 1]
    if max(reserve) < PAYMENT:  # most positions: nothing to pay with, seen in C
        return []
    return [c for c in range(len(state.options.colours)) if reserve[c] >= PAYMENT]


def _action_open(state: State, k: int) -> bool:
    return state.discs[k] is None and (k != _TUBE or sum(state.tube) >= DRAW)


@cache  # at most one entry for each pair of squares
def _square_names(cells: tuple[Square, ...]) -> tuple[str, ...]:
    return tuple(SQUARE_NAMES[c] for c in cells)


def _action_steps(
    state: State,
    occ: Mapping[int, int],
    names: Iterable[str],
    focus: frozenset[Square],
    within: frozenset[int] | None = None,
    distinct: bool = False,
) -> Iterator[Action]:
    """Every payment (and tube draw) of every use of the actions ``names`` whose garden
    changes may cover ``focus``; narrowed as :func:`candidates` says when ``within`` (layout
    cells) or ``distinct`` is given."""
    return chain.from_iterable(_action_groups(state, occ, names, focus, within, distinct))


def _action_groups(
    state: State,
    occ: Mapping[int, int],
    names: Iterable[str],
    focus: frozenset[Square],
    within: frozenset[int] | None,
    distinct: bool,
) -> Iterator[Iterable[Action]]:
    """The steps of :func:`_action_steps`, one group an action.  Unnarrowed (no ``focus``,
    ``within`` or ``distinct``: a listing), each group is a sequence (:class:`_Paid`, made
    when read; the uses of an action on squares too, :class:`_Uses`); iterated, each use is
    crossed with each payment colour in C, so that a listed step costs no Python call of its
    own.  Narrowed, a group is an iterator (:func:`_acted`) that works out a use only when
    its steps are read."""
    pays = _affordable(state)
    if not pays:
        return
    if within is None and not distinct and not focus:
        yield from _listed(state, names, pays)
        return
    colours = state.options.colours
    pay_names = [colours[pay] for pay in (pays[:1] if distinct else pays)]
    two = state.options.martians_per_player == 2
    for name in names:
        k = _ACTION_INDEX[name]
        if not _action_open(state, k) or (within is not None and _SLOTS_FROM + k not in within):
            continue
        uses = (
            _uses(state, occ, name, focus)
            if within is None and not distinct
            else _narrow_uses(state, occ, name, focus, within)
        )
        if k != _TUBE:  # read in turn, often only the first few: made as read
            yield _acted(name, uses, two and name in MARTIAN_ACTIONS, pay_names,
                         _candidate_uses(state))
            continue
        if next(uses, None) is None:  # one use, or none where the focus rules it out
            continue
        for pay in pays[:1] if distinct else pays:
            draws = _paid_draws(colours, state.tube, pay)
            yield _Drawn(colours[pay], draws[:1] if distinct else draws)


def _listed(state: State, names: Iterable[str], pays: list[int]) -> list[Sequence[Action]]:
    """The groups of :func:`_action_groups` unnarrowed (a listing), for the payment colours
    ``pays`` (indices): the uses of an action on squares counted from its operands
    (:class:`_Uses`), the targets of a Martian action from bit boards of the garden
    (:data:`_LISTED_TARGETS`), the tube's draws kept for each content of the tube."""
    colours = state.options.colours
    pay_names = [colours[pay] for pay in pays]
    named = state.options.martians_per_player == 2
    groups: list[Sequence[Action]] = []
    for name in names:
        k = _ACTION_INDEX[name]
        if not _action_open(state, k):
            continue
        if name in _ON_SQUARES:
            groups.append(_Paid(name, _Uses(name, *_operand_boards(state, name)), None, pay_names))
        elif name in MARTIAN_ACTIONS:
            # a Martian outside the garden cannot use them (the text)
            inside = [m for m in _movers(state) if m < _STARTS_FROM]
            if not inside:
                continue
            garden, reach = state.garden, _reach(state)  # its boards: the moves' own
            targets = _LISTED_TARGETS[name]
            cells: list[Square] = []
            martians: list[str] | None = [] if named else None
            for m in inside:
                found = targets(garden, reach.flowers, reach.peaks, reach.under, m)
                cells += found
                if martians is not None:
                    martians += [LAYOUT[m]] * len(found)
            groups.append(_Paid(name, _Cells(cells), martians, pay_names))
        elif k == _TUBE:
            for pay in pays:
                groups.append(_Drawn(colours[pay], _paid_draws(colours, state.tube, pay)))
        else:  # the wildflower: one use, on no square
            groups.append(_Paid(name, _NO_CELLS, None, pay_names))
    return groups


_NO_CELLS = ((),)
"""The one use of an action on no square (the wildflower), as :class:`_Paid` reads uses."""


def _acted(
    name: str, uses: Iterable[tuple[int | None, tuple[Square, ...]]], named: bool,
    pays: Sequence[str], known: dict[Action, tuple[int | None, tuple[Square, ...]]],
) -> Iterator[Action]:
    """The steps of action ``name`` from its ``uses`` (as :func:`_uses` gives them), each use
    with every colour of ``pays`` (the acting Martian named when ``named``), each use worked
    out and named only when its steps are read: the uses of Swap flowers are thousands of
    pairs of flowers.  Each step read is noted in ``known`` with its use, for
    :func:`changes`."""
    for martian, cells in uses:
        who = LAYOUT[martian] if named and martian is not None else None
        names = _square_names(cells)
        for pay in pays:
            step = _new_action((name, pay, names, (), who))
            known[step] = martian, cells
            yield step


class _Cells(_Made[tuple[str, ...]]):
    """The cells of the uses of a Martian action, one square each (``targets``), as square
    names, named when read: a swap of the Martian lists nearly every square of the garden."""

    __slots__ = ("targets",)

    def __init__(self, targets: list[Square]) -> None:
        self.targets = targets

    def __len__(self) -> int:
        return len(self.targets)

    def _at(self, i: int) -> tuple[str, ...]:
        return _square_names((self.targets[i],))

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return map(_square_names, zip(self.targets))


class _Drawn(_Made[Action]):
    """The tube actions paid with ``pay``: one for each of ``draws``, made when read."""

    __slots__ = ("pay", "draws")

    def __init__(self, pay: str, draws: tuple[tuple[str, ...], ...]) -> None:
        self.pay, self.draws = pay, draws

    def __len__(self) -> int:
        return len(self.draws)

    def _at(self, i: int) -> Action:
        return _new_action(("tube", self.pay, (), self.draws[i], None))

    def __iter__(self) -> Iterator[Action]:
        return map(_new_action, zip(repeat("tube"), repeat(self.pay), repeat(()), self.draws,
                                    repeat(None)))

    def __contains__(self, step: object) -> bool:
        return (isinstance(step, tuple) and len(step) == len(Action._fields)
                and step[:3] == ("tube", self.pay, ()) and step[4] is None
                and step[3] in self.draws)


def _paid_draws(
    colours: tuple[str, ...], tube: tuple[int, ...], pay: int
) -> tuple[tuple[str, ...], ...]:
    """The draws of :func:`_draws` once the payment (3 of colour index ``pay``) is in."""
    after = list(tube)
    after[pay] += PAYMENT
    return _draws(colours, tuple(map(min, after, _AT_MOST_A_DRAW)))


_AT_MOST_A_DRAW = (DRAW,) * len(DEFAULT_COLOURS)
"""A draw takes at most 3 of a colour: the tube's counts past that give the same draws."""


@lru_cache(maxsize=256)  # asked with counts of at most 3: some hundred tubes in all
def _draws(colours: tuple[str, ...], tube: tuple[int, ...]) -> tuple[tuple[str, ...], ...]:
    """Every draw of three flowers ``tube`` (colour counts) can give, as colour names, in
    colour order."""
    return tuple(
        tuple([colours[c] for c in drawn]) for drawn, need in _DRAWS
        if all(tube[c] >= n for c, n in need)
    )


_DRAWS = tuple(
    (drawn, tuple(Counter(drawn).items()))
    for drawn in combinations_with_replacement(range(len(DEFAULT_COLOURS)), DRAW)
)
"""Every draw of three colour indices, in colour order, with how many of each it takes."""


def _made(
    name: str, cells: Iterable[tuple[str, ...]], martians: Iterable[str | None],
    pays: Sequence[str],
) -> Iterator[Action]:
    """The steps of action ``name`` from the ``cells`` and acting ``martians`` of its uses:
    each use, then each payment colour, every field laid out in C (``zip``, ``repeat``) and
    every step made there too (``tuple.__new__``), never through a Python call a step."""
    per_use = len(pays)
    if per_use > 1:
        cells = chain.from_iterable(map(repeat, cells, repeat(per_use)))
        martians = chain.from_iterable(map(repeat, martians, repeat(per_use)))
    return map(_new_action, zip(repeat(name), cycle(pays), cells, repeat(()), martians))


_ACTION_INDEX = {name: k for k, name in enumerate(ACTIONS)}
_ON_SQUARES = frozenset({"pick", "swap_peak_flower", "swap_flowers", "move_flower", "move_peak"})

_new_action: Callable[[tuple[str, str, tuple[str, ...], tuple[str, ...], str | None]], Action]
_new_action = partial(tuple.__new__, Action)


def _narrow_uses(
    state: State,
    occ: Mapping[int, int],
    name: str,
    focus: frozenset[Square],
    within: frozenset[int] | None,
) -> Iterator[tuple[int | None, tuple[Square, ...]]]:
    """The uses of :func:`_uses` whose squares lie in ``within`` (``None``: anywhere), with
    one swap of two flowers of one colour standing for all of them outside ``within`` (it
    changes no square).  Pairs are tried among the squares of ``within`` only, never over
    the whole garden."""
    garden = state.garden
    if within is not None and name not in ("tube", "wildflower"):
        inside = sorted(c for c in within if c < _STARTS_FROM)
        if name in MARTIAN_ACTIONS or name == "pick":
            yield from (u for u in _uses(state, occ, name, focus) if u[1][0] in within)
        else:
            for a, b in combinations(inside, 2):
                if focus <= {a, b}:
                    yield from _uses(state, occ, name, frozenset((a, b)))
    else:  # a swap of two flowers of one colour: the representative's below
        yield from (
            u for u in _uses(state, occ, name, focus)
            if name != "swap_flowers" or garden[u[1][0]] != garden[u[1][1]]
        )
    if name == "swap_flowers" and not focus:
        by_colour: dict[int, list[Square]] = {}
        for sq in SQUARES:
            if garden[sq] >= 0:
                by_colour.setdefault(garden[sq], []).append(sq)
        for same in by_colour.values():
            outside = [sq for sq in same if not (within and sq in within)]
            if len(same) > 1 and outside:
                partner = next(sq for sq in same if sq != outside[0])
                yield None, (min(outside[0], partner), max(outside[0], partner))
                return


class _Draft:
    """A state being changed by one step of the player to move; ``touched`` collects the
    layout cells whose piece the step may change."""

    __slots__ = ("state", "garden", "martians", "reserve", "tube", "bound", "touched", "to_move",
                 "phase", "discs", "boards")

    def __init__(self, state: State) -> None:
        self.state = state
        self.garden = list(state.garden)
        self.boards: tuple[int, int] | None = None  # the garden's bit boards, when known
        self.martians = list(state.martians[state.to_move - 1])
        self.reserve = list(state.reserves[state.to_move - 1])
        self.tube = list(state.tube)
        self.bound = state.bound
        self.touched: list[int] = []

    def take(self, *squares: Square) -> None:
        """The flowers on ``squares`` go to the player's reserve."""
        garden, reserve = self.garden, self.reserve
        for sq in squares:
            reserve[garden[sq]] += 1
            garden[sq] = EMPTY_SQUARE
        self.touched += squares

    def set(self, sq: Square, value: int) -> None:
        self.garden[sq] = value
        self.touched.append(sq)

    def relocate(self, origin: int, to: Square) -> None:
        self.martians[self.martians.index(origin)] = to
        self.touched += (origin, to)

    def ends(self, *, to_move: int, phase: Phase, discs: tuple[int | None, ...]) -> _Draft:
        """The step done: the turn and the action discs it leaves (for :meth:`after`)."""
        self.to_move, self.phase, self.discs = to_move, phase, discs
        return self

    def after(self) -> State:
        """The state the step leaves, once :meth:`ends` has said its turn and discs."""
        return self.result(to_move=self.to_move, phase=self.phase, discs=self.discs)

    def result(self, *, to_move: int, phase: Phase, discs: tuple[int | None, ...]) -> State:
        state, p = self.state, self.state.to_move - 1
        martians = tuple(sorted(self.martians))
        tube = tuple(self.tube)
        garden = tuple(self.garden)
        if self.boards is not None:  # the end test asks for them next (_reach)
            _last_boards[0] = (garden, self.boards)
        return _new_state(  # what the step leaves as it was is shared, not copied
            state.options,
            garden,
            (state.martians if martians == state.martians[p]
             else replaced(state.martians, p, martians)),
            replaced(state.reserves, p, tuple(self.reserve)),
            state.tube if tube == state.tube else tube,
            discs,
            to_move,
            phase,
            self.bound,
        )


_SETTERS = {name: getattr(State, name).__set__ for name in State.__dataclass_fields__}
(_set_options, _set_garden, _set_martians, _set_reserves, _set_tube, _set_discs, _set_to_move,
 _set_phase, _set_bound) = (_SETTERS[name] for name in (
    "options", "garden", "martians", "reserves", "tube", "discs", "to_move", "phase", "bound"))


def _new_state(
    options: Options, garden: tuple[int, ...], martians: tuple[tuple[int, ...], ...],
    reserves: tuple[tuple[int, ...], ...], tube: tuple[int, ...], discs: tuple[int | None, ...],
    to_move: int, phase: Phase, bound: int | None,
) -> State:
    """A :class:`State` of these fields, set through the slots one by one: the frozen
    dataclass's ``__init__`` sets each through ``object.__setattr__``, at several times the
    cost, on every step."""
    state = object.__new__(State)
    _set_options(state, options)
    _set_garden(state, garden)
    _set_martians(state, martians)
    _set_reserves(state, reserves)
    _set_tube(state, tube)
    _set_discs(state, discs)
    _set_to_move(state, to_move)
    _set_phase(state, phase)
    _set_bound(state, bound)
    return state


def apply(state: State, step: Step) -> State:
    """The state after ``step``, then the end test at the player's move point (#8, #8a).

    Raises :class:`IllegalMoveError` (reason, rule, step) when the rules forbid the step and
    :class:`InvalidStepError` when it names no cell, colour or action of this game.
    """
    return _settle(advance(state, step))


def advance(state: State, step: Step) -> State:
    """:func:`apply` without the end test: the state after ``step`` in the turn it leaves
    (never over: a step itself ends no game, the end test does).  Raises like :func:`apply`."""
    return _drafted(state, step).after()


def changes(state: State, step: Step) -> dict[str, base.Piece]:
    """The layout cells whose piece ``step`` changes -> their new piece; exactly the diff of
    :func:`board` before and after, computed from the few cells the step touches, on the
    step's draft (no state after it is built).  Raises like :func:`apply`.

    An action :func:`candidates` gave for ``state`` (the last state it was asked about) is
    legal: its draft is made from the use it was listed with, without the legality check."""
    if isinstance(step, Action) and (use := _candidate_uses(state).get(step)) is not None:
        pay = state.options.colours.index(step.pay)
        draft = _used(state, step, _ACTION_INDEX[step.name], pay, *use)
    else:
        draft = _drafted(state, step)
    occ_before = occ_after = _occupancy(state)
    player = state.to_move
    if draft.martians != list(state.martians[player - 1]):  # a Martian moves or is placed
        moved = dict(occ_before)
        for cell in state.martians[player - 1]:
            del moved[cell]
        for cell in draft.martians:
            moved[cell] = player
        occ_after = moved
    garden, discs, colours = state.garden, state.discs, state.options.colours
    out = {}
    for cell in draft.touched:
        piece = _piece(draft.garden, draft.discs, colours, occ_after, cell)
        if piece != _piece(garden, discs, colours, occ_before, cell):
            out[LAYOUT[cell]] = piece
    return out


def _drafted(state: State, step: Step) -> _Draft:
    """The raw effect of ``step`` on a draft (no end test), with the cells it may change."""
    if state.phase is _OVER:
        raise _illegal("the game is over: no more steps", RULE_END, step)
    if isinstance(step, Place):
        return _place(state, step)
    if state.phase is _PLACEMENT:
        raise _illegal("place your Martian on a start square first", RULE_SETUP, step)
    if isinstance(step, Move):
        return _move(state, step)
    return _action(state, step)


def _settle(state: State) -> State:
    """At a player's move point: over when none of their Martians can move and no sequence of
    special actions they can pay for would give one a move (the text, Game end; #8, #8a)."""
    # the moves are worked out whole: the listing of this state asks for them next
    if state.phase is not _TURN or _reach(state) or _move_makeable(state):
        return state
    return replace(state, phase=_OVER)


# ----------------------------------------------------------------------------- the end test
#
# "You can still use special actions first to make a move" (the text, Game end), "as many
# times as you like" (Your turn, step 1): the game goes on while some sequence of unused
# actions, each paid when it is used, with any of its uses and any draw the tube could give,
# leaves one of the player's Martians with a normal move.  The search below decides it
# exactly, and cheaply:
#
# * Sequences are tried shortest first, each cut as soon as it gives a move; positions
#   proved hopeless are remembered, and two quick tests prove many at once (no flower left
#   that could stand free; lines that cannot change and no action left to bring a flower in).
# * Colours matter only for paying.  While the player holds enough to pay for every unused
#   action that moves something (3 of a colour each), colours are forgotten and only those
#   actions are tried.  Otherwise the board is searched that way first (no sequence at all,
#   or one short enough for the flowers held, settles it), then every payment colour and tube
#   draw is tried, Swap flowers and Wildflower too while the tube action is unused (their
#   payment can feed a draw; otherwise they are only a cost), as long as the flowers held
#   could, at best, still pay for the actions that sequence needs.  Which two flowers Swap
#   flowers exchanges is chosen when it matters: when one of them is taken into the reserve.
# * Move flower and Move peak take their piece up into the hand; it is put down where a later
#   action needs it (the peak a jump goes over, the square Swap Martian goes to, the square a
#   jump or diagonal lands on, a square in the Martian's line), or anywhere at the end.  A
#   sequence found that way is then played for real from the position, every square chosen,
#   and only counts if it gives a move.  A piece in the hand is never in the way, so a search
#   that finds nothing that way proves that nothing can be found.
# * Pick is tried only where taking a flower away can help: to free a square (for a piece of
#   the hand, or under a Martian for Swap Martian), or to pay.  The last action of a sequence
#   is tried only where it could reach a Martian's line.

_GEOMETRIC = (
    "swap_peak_flower",
    "move_flower",
    "move_peak",
    "jump",
    "diagonal",
    "swap_martian",
    "pick",
)
"""The actions that change where flowers, peaks and Martians stand, in the order tried."""
_MAKERS = frozenset(_GEOMETRIC) - {"pick"}  # taking a flower away never gives a move
_ECONOMIC = ("tube", "swap_flowers", "wildflower")
"""The actions that move nothing: they draw from the tube, exchange colours or only pay."""
_COMPLETE = 1 << 8
"""The depth recorded for a position whose search needed no cut (more than any sequence)."""


@dataclass(frozen=True, slots=True)
class _Var:
    """The square, not chosen yet, where a piece taken up into the hand is put down."""

    n: int


_Held = tuple[int, _Var]
"""A piece in the hand: ``PEAK_SQUARE`` or a flower's colour, and where it will stand."""
_Ref = int | _Var
"""A square, or where a piece of the hand stands."""
_Entry: TypeAlias = tuple[Any, ...]
"""A line of a sequence found, a tagged tuple (mypy does not narrow a union of tuples by
their first item, so the items are erased here and read by their tag): ``("act", name, pay,
cells, drawn, martian)`` (``pay`` is ``None`` where any colour will do), ``("put", var,
square)`` or ``("swap", a, b)``: Swap flowers, used earlier, exchanged the colours of the
flowers now on ``a`` and ``b``."""


@dataclass(frozen=True, slots=True)
class _Node:
    """A position of the search: the state (colours forgotten when ``free``), the hand, and
    whether Swap flowers was paid for without its two flowers chosen yet."""

    state: State
    held: tuple[_Held, ...] = ()
    swap: bool = False

    def key(self, free: bool) -> tuple[Hashable, ...]:
        state = self.state
        pieces = tuple(sorted(piece for piece, _ in self.held))
        economy = () if free else (state.reserves[state.to_move - 1], state.tube, self.swap)
        return (state.garden, state.martians, state.bound, state.discs, pieces, economy)


_PlanAct = tuple[str, int | None, tuple[_Ref, ...], tuple[int, ...], int | None]
"""An action of a sequence found, as :func:`_acts` gives it: ``(name, pay, cells, drawn,
martian)``, its cells squares or where a piece of the hand stands."""
_Child = tuple[_Node, tuple[_Entry, ...]]
_Change = Callable[["_Draft"], None]


@lru_cache(maxsize=128)
def _move_makeable(state: State) -> bool:
    """Whether some sequence of special actions the player to move can pay for gives one of
    their Martians a normal move (memoised: recognition applies the same step often)."""
    return _EndSearch(state).run()


def _until_peak(garden: Sequence[int], ray: Sequence[Square]) -> Iterator[Square]:
    for sq in ray:
        if garden[sq] == PEAK_SQUARE:
            return
        yield sq


def _first_peaks(state: State) -> Iterator[Square]:
    """The first peak of each line of the Martians that may move, where one stands."""
    garden = state.garden
    for m in _movers(state):
        for ray in _rays(m):
            for sq in ray:
                if garden[sq] == PEAK_SQUARE:
                    yield sq
                    break


def _line_empties(state: State, occ: Mapping[int, int]) -> list[Square]:
    """The empty squares (no Martian) in the lines of the Martians that may move, before the
    first peak: a flower put there gives a move."""
    garden = state.garden
    return [
        sq
        for m in _movers(state)
        for ray in _rays(m)
        for sq in _until_peak(garden, ray)
        if garden[sq] == EMPTY_SQUARE and sq not in occ
    ]


def _goal(node: _Node) -> bool:
    """A move now, or one once a flower in the hand is put down in a Martian's line."""
    state = node.state
    if _has_move(state):
        return True
    return any(piece >= 0 for piece, _ in node.held) and bool(
        _line_empties(state, _occupancy(state))
    )


def _hopeless(node: _Node) -> bool:
    """Whether no move can be made from ``node`` whatever follows, by two quick tests (the
    search would find it too, at length)."""
    return _no_flower_to_free(node) or _lines_shut(node)


def _no_flower_to_free(node: _Node) -> bool:
    """No flower stands free (off the Martians), none is in the hand, and no action left can
    free one: Move flower, or a Martian of the player leaving its flower by Jump or Diagonal."""
    state = node.state
    garden, occ = state.garden, _occupancy(state)
    if any(piece >= 0 for piece, _ in node.held) or any(
        v >= 0 and sq not in occ for sq, v in enumerate(garden)
    ):
        return False
    if _open(state, "move_flower"):
        return all(v < 0 for v in garden)
    leave = _open(state, "jump") or _open(state, "diagonal")
    return not (leave and any(m < _STARTS_FROM and garden[m] >= 0 for m in _movers(state)))


def _lines_shut(node: _Node) -> bool:
    """The Martians that may move cannot move themselves (none in the garden, or Jump,
    Diagonal and Swap Martian used), so their lines stay where they are, and no action left
    can bring a flower into one: Move flower or a flower of the hand onto an empty square
    before the line's first peak, Swap peak and flower on that peak, Move peak taking it away
    (or bringing one in for Swap peak and flower)."""
    state = node.state
    if any(m < _STARTS_FROM for m in _movers(state)) and any(
        _open(state, name) for name in MARTIAN_ACTIONS
    ):
        return False
    empty = bool(_line_empties(state, _occupancy(state)))
    peak = next(_first_peaks(state), None) is not None
    flower_held = any(piece >= 0 for piece, _ in node.held)
    peak_held = any(piece == PEAK_SQUARE for piece, _ in node.held)
    swap = _open(state, "swap_peak_flower")
    return not (
        (empty and (_open(state, "move_flower") or flower_held or (swap and peak_held)))
        or (peak and (swap or _open(state, "move_peak")))
        or (empty and swap and _open(state, "move_peak"))
    )


def _open(state: State, name: str) -> bool:
    return _action_open(state, ACTIONS.index(name))


def _acts(plan: Sequence[_Entry]) -> list[_PlanAct]:
    """The actions of ``plan``: ``(name, pay, cells, drawn, martian)``."""
    return [entry[1:] for entry in plan if entry[0] == "act"]


def _most_payments(state: State, picks: bool = False) -> int:
    """The most actions that move a piece (all but Pick, or with ``picks`` all that change the
    board) the player to move could still pay for, at best: each costs 3 flowers of one
    colour; Jump and Diagonal may bring one flower more, of any colour at best, and so may
    Pick, for its 3; the tube action gives back the 3 it costs, any it holds (after Swap
    flowers or Wildflower paid into it, at best)."""
    unused = sum(_open(state, name) for name in (_GEOMETRIC if picks else _MAKERS))
    inside = any(m < _STARTS_FROM for m in _movers(state))
    gains = inside * sum(_open(state, name) for name in ("jump", "diagonal"))
    tube = state.tube if state.discs[_TUBE] is None else None
    spare = sum(state.discs[ACTIONS.index(name)] is None for name in ("swap_flowers", "wildflower"))
    reserve = state.reserves[state.to_move - 1][:-1]
    pick = _open(state, "pick")
    return _economy(reserve, tube, gains, pick, picks and pick, spare, unused)


@lru_cache(maxsize=4096)
def _economy(
    reserve: tuple[int, ...],
    tube: tuple[int, ...] | None,
    gains: int,
    pick: bool,
    counted: bool,
    spare: int,
    cap: int,
) -> int:
    """:func:`_most_payments` from the colour counts held, the tube (``None`` once the tube
    action is gone), the flowers Jump and Diagonal may still bring, whether Pick is left and
    ``counted``, the payment-only actions left and the most that can count."""
    best = 0
    for c, n in enumerate(reserve):
        if n < PAYMENT or best >= cap:
            continue
        paid = replaced(reserve, c, n - PAYMENT)
        into = None if tube is None else replaced(tube, c, tube[c] + PAYMENT)
        more = [replaced(paid, g, paid[g] + 1) for g in range(len(reserve))]
        best = max(best, 1 + _economy(paid, into, gains, pick, counted, spare, cap - 1))
        for after in more if gains else ():  # the action brought a flower
            best = max(best, 1 + _economy(after, into, gains - 1, pick, counted, spare, cap - 1))
        for after in more if pick else ():
            picked = _economy(after, into, gains, False, False, spare, cap - counted)
            best = max(best, counted + picked)
        if tube is not None and into is not None:
            if spare:
                best = max(best, _economy(paid, into, gains, pick, counted, spare - 1, cap))
            if sum(tube) >= DRAW:
                for drawn in combinations_with_replacement(range(len(reserve)), DRAW):
                    if all(drawn.count(d) <= into[d] for d in set(drawn)):
                        got = tuple(k + drawn.count(d) for d, k in enumerate(paid))
                        best = max(best, _economy(got, None, gains, pick, counted, 0, cap))
    return min(best, cap)


def _payments(state: State) -> int:
    """How many actions the player to move can pay for from the flowers they hold now."""
    return sum(n // PAYMENT for n in state.reserves[state.to_move - 1][:-1])


def _rich(state: State) -> State:
    """``state`` with the player to move holding enough flowers to pay for every action."""
    reserve = (PAYMENT * len(ACTIONS),) * len(state.options.colours) + (0,)
    return replace(state, reserves=replaced(state.reserves, state.to_move - 1, reserve))


def _pays_for_all(state: State) -> bool:
    """Whether the flowers the player holds pay for every unused action that could move
    something (3 of one colour each; those that move a Martian only while one of theirs is in
    the garden): then colours cannot matter."""
    payments = _payments(state)
    inside = any(m < _STARTS_FROM for m in _movers(state))
    unused = sum(
        state.discs[ACTIONS.index(name)] is None and (inside or name not in MARTIAN_ACTIONS)
        for name in _GEOMETRIC
    )
    return payments >= unused


def _picking_can_matter(node: _Node) -> bool:
    """Whether taking a flower away can help when colours do not matter: it frees a square
    for a piece of the hand (or for Move flower or Move peak to take one up), or the square of
    a Martian standing on a flower, which Swap Martian needs empty (#8b)."""
    state = node.state
    if node.held or any(
        _action_open(state, ACTIONS.index(name)) for name in ("move_flower", "move_peak")
    ):
        return True
    return _action_open(state, ACTIONS.index("swap_martian")) and any(
        m < _STARTS_FROM and state.garden[m] >= 0 for m in _movers(state)
    )


def _colourless(node: _Node) -> _Node:
    """``node`` with every flower of colour 0: the colours no longer matter."""
    state = node.state
    garden = tuple(min(v, 0) if v >= 0 else v for v in state.garden)
    held = tuple((min(piece, 0), var) for piece, var in node.held)
    return _Node(replace(state, garden=garden), held)


class _EndSearch:
    """One end test from ``root``, a position where the player to move has no normal move."""

    def __init__(self, root: State) -> None:
        self.root = root
        self.need = (0, 0)  # the fewest actions that move a piece, that change the board,
        # that a sequence needs
        self.hopeless: dict[tuple[Hashable, ...], int] = {}
        self.vars = 0

    def run(self) -> bool:
        """Whether some sequence of special actions gives a move (see the comment above)."""
        root = self.root
        if not _affordable(root) or all(v < 0 for v in root.garden):
            return False  # nothing can be paid, or no flower is left to reach
        if not any(_action_open(root, ACTIONS.index(name)) for name in _MAKERS):
            return False
        if _pays_for_all(root):
            return self.shortest() is not None
        # First the board alone, as if every action could be paid: no sequence at all, or a
        # short one that the flowers held pay for whatever the colours, settles it.
        shortest = _EndSearch(_rich(root)).shortest()
        if shortest is None or shortest <= _payments(root):
            return shortest is not None
        self.need = (shortest - _open(root, "pick"), shortest)  # all but a Pick move a piece
        return self.shortest() is not None

    def shortest(self) -> int | None:
        """The fewest actions of a sequence that gives a move, ``None`` when none does."""
        root = self.root
        free = _pays_for_all(root)
        start = _colourless(_Node(root)) if free else _Node(root)
        for depth in range(1, sum(disc is None for disc in root.discs) + 1):
            found, _, cut = self._solve(start, (), free, depth, self.need)
            if found:
                return depth
            if not cut:
                break
        return None

    def _solve(
        self,
        node: _Node,
        plan: tuple[_Entry, ...],
        free: bool,
        depth: int,
        need: tuple[int, int],
    ) -> tuple[bool, bool, bool]:
        """``(found, uncertain, cut)`` for the sequences of at most ``depth`` actions from
        ``node`` after ``plan`` (which need ``need`` more actions that move a piece, that
        change the board):
        uncertain when one found with pieces in the hand failed when played for real (then
        another way to this node may succeed, so it is not remembered); cut when longer
        sequences were left untried."""
        key = (*node.key(free), () if free else need)
        known = self.hopeless.get(key, 0)
        if known >= depth:
            return False, False, known < _COMPLETE
        most = len(ACTIONS) if free else _most_payments(node.state)
        short = not free and _most_payments(node.state, picks=True) < need[1]
        if _hopeless(node) or most < max(need[0], 1) or short:
            self.hopeless[key] = _COMPLETE
            return False, False, False
        # one more action that moves a piece at most: it must give the move (unless a Pick
        # before it can free a square it needs)
        final = most == 1 and not (_open(node.state, "pick") and _picking_can_matter(node))
        if final:
            depth = 1
        children = []
        uncertain = cut = False
        for child, entries in self._children(node, free, depth == 1):
            if _goal(child):
                if self._verify(plan + entries, child):
                    return True, True, True
                uncertain = True
            children.append((child, entries))
        if depth == 1:
            cut = not final and any(True for _ in self._names(node, free, last=False))
        else:
            for child, entries in children:
                child_free = free or _pays_for_all(child.state)
                if child_free and not free:
                    child = _colourless(child)
                name = _acts(entries)[0][0]
                left = (max(need[0] - (name in _MAKERS), 0), max(need[1] - (name in _GEOMETRIC), 0))
                found, unsure, deeper = self._solve(
                    child, plan + entries, child_free, depth - 1, left
                )
                if found:
                    return True, True, True
                uncertain |= unsure
                cut |= deeper
        if not uncertain:
            self.hopeless[key] = depth if cut else _COMPLETE
        return False, uncertain, cut

    def _children(self, node: _Node, free: bool, last: bool) -> Iterator[_Child]:
        """Every special action worth trying from ``node`` (see :meth:`_names`), paid, with
        the lines it adds to the plan; for the ``last`` action of a sequence, only the uses
        that could give a move."""
        state = node.state
        pays: list[int | None] = [None] if free else list(_affordable(state))
        ends = _Ends(state) if last else None
        for name in self._names(node, free, last):
            if ends is not None and name == "move_flower" and not ends.empties:
                continue  # no square in a line for the flower
            for pay in pays:
                yield from _Use(self, node, name, pay, free, ends).children()

    @staticmethod
    def _names(node: _Node, free: bool, last: bool) -> Iterator[str]:
        """The actions worth trying from ``node``: for the ``last`` one of a sequence, those
        that move a piece; those that only pay or draw only while colours matter."""
        state = node.state
        if not _affordable(state):
            return
        for name in _GEOMETRIC if free else _ECONOMIC + _GEOMETRIC:
            if not _action_open(state, ACTIONS.index(name)) or (last and name not in _MAKERS):
                continue
            if name in ("swap_flowers", "wildflower") and state.discs[_TUBE] is not None:
                continue  # they could only pay, and a payment only matters to a later draw
            if name == "pick" and free and not _picking_can_matter(node):
                continue
            yield name

    def new_var(self) -> _Var:
        self.vars += 1
        return _Var(self.vars)

    # -- playing a sequence for real

    def _verify(self, plan: tuple[_Entry, ...], final: _Node) -> bool:
        """Whether ``plan`` played from the root gives a move, for some choice of the squares
        still open: where the pieces taken up were put down (a piece left in the hand out of
        the Martians' way first; without a move on the board, a flower of the hand in a line)."""
        where = {entry[1]: entry[2] for entry in plan if entry[0] == "put"}
        open_vars: list[_Var] = []
        for entry in plan:
            refs = entry[3] if entry[0] == "act" else entry[1:] if entry[0] == "swap" else ()
            open_vars += [c for c in refs if isinstance(c, _Var) and c not in where]
        state = final.state
        occ = _occupancy(state)
        lines = _line_empties(state, occ)
        seen = {sq for m in _movers(state) for ray in _rays(m) for sq in ray}
        seen |= {sq for m in _movers(state) if m < _STARTS_FROM for sq in _NEAR[m]}
        empties = [sq for sq in SQUARES if state.garden[sq] == EMPTY_SQUARE and sq not in occ]
        quiet = sorted(empties, key=lambda sq: sq in seen)
        flowers: list[_Var | None] = [var for piece, var in final.held if piece >= 0]
        return any(
            _play(self.root, plan, where, {v: lines if v is in_line else quiet for v in open_vars})
            for in_line in ([None] if _has_move(state) else flowers)
        )


def _play(
    root: State,
    plan: tuple[_Entry, ...],
    where: Mapping[_Var, Square],
    choices: Mapping[_Var, Sequence[Square]],
) -> bool:
    """Whether the actions of ``plan`` are legal from ``root`` one after the other and leave a
    normal move, for some choice of its open squares among ``choices``; the choices are
    made step by step, so that a choice whose step is refused is dropped at once."""
    acts = _acts(plan)
    if any(act[0] == "swap_flowers" for act in acts):  # it names flowers found later
        return any(
            _plays(root, plan, {**where, **dict(zip(choices, squares, strict=True))})
            for squares in product(*choices.values())
        )

    def play_on(state: State, i: int, where: Mapping[_Var, Square]) -> bool:
        for j in range(i, len(acts)):
            name, pay, cells, drawn, martian = acts[j]
            missing = next((c for c in cells if isinstance(c, _Var) and c not in where), None)
            if missing is not None:
                return any(play_on(state, j, {**where, missing: sq}) for sq in choices[missing])
            squares = tuple(where[c] if isinstance(c, _Var) else c for c in cells)
            after = _advanced(state, [(name, pay, squares, drawn, martian)])
            if after is None:
                return False
            state = after
        return _has_move(state)

    return play_on(root, 0, where)


def _plays(root: State, plan: tuple[_Entry, ...], where: Mapping[_Var, Square]) -> bool:
    """Whether the actions of ``plan``, its open squares chosen by ``where``, are legal from
    ``root`` one after the other and leave a normal move; Swap flowers exchanges the two
    flowers whose colours a later line of the plan exchanged (or, if none, any two)."""

    def square(ref: _Ref) -> Square:
        return where[ref] if isinstance(ref, _Var) else ref

    acts: list[_Act] = []
    swapped: tuple[int, tuple[Square, Square]] | None = None  # after how many acts, which
    for entry in plan:
        if entry[0] == "act":
            _, name, pay, cells, drawn, martian = entry
            acts.append((name, pay, tuple(square(c) for c in cells), drawn, martian))
        elif entry[0] == "swap":
            swapped = len(acts), (square(entry[1]), square(entry[2]))
    at = next(i for i, act in enumerate(acts) if act[0] == "swap_flowers")
    before = _advanced(root, acts[:at])
    if before is None:
        return False
    if swapped is not None:
        upto, pair = swapped
        pairs = [_origins(before, acts[at + 1 : upto], pair)]
    else:  # its colours never mattered: any two flowers, two of one colour first
        flowers = [sq for sq in SQUARES if before.garden[sq] >= 0]
        pairs = sorted(
            ((a, b) for a in flowers for b in flowers if a < b),
            key=lambda pair: before.garden[pair[0]] != before.garden[pair[1]],
        )
    name, pay, _, drawn, martian = acts[at]
    return any(
        _replay(before, [(name, pay, pair, drawn, martian), *acts[at + 1 :]]) for pair in pairs
    )


_Act = tuple[str, int | None, tuple[Square, ...], tuple[int, ...], int | None]


def _advanced(state: State, acts: Sequence[_Act]) -> State | None:
    """``state`` after ``acts`` (``None`` when one is refused)."""
    colours = state.options.colours
    for name, pay, cells, drawn, martian in acts:
        if pay is None:  # any colour: the player holds enough for every action left
            reserve = state.reserves[state.to_move - 1]
            pay = max(range(len(colours)), key=reserve.__getitem__)
        step = Action(
            name,
            colours[pay],
            tuple(SQUARE_NAMES[c] for c in cells),
            tuple(colours[c] for c in drawn),
            None if martian is None else LAYOUT[martian],
        )
        try:
            state = _drafted(state, step).after()
        except (IllegalMoveError, InvalidStepError):
            return None
    return state


def _replay(state: State, acts: Sequence[_Act]) -> bool:
    after = _advanced(state, acts)
    return after is not None and _has_move(after)


def _origins(
    state: State, acts: Sequence[_Act], pair: tuple[Square, Square]
) -> tuple[Square, Square]:
    """Where the two flowers standing on ``pair`` after ``acts`` stood before them (from
    ``state``): the squares Swap flowers must name when it is used before ``acts``."""
    origin = {sq: sq for sq in SQUARES if state.garden[sq] >= 0}
    for name, _, cells, drawn, martian in acts:
        garden = state.garden
        if name == "move_flower":
            origin[cells[1]] = origin.pop(cells[0])
        elif name == "swap_peak_flower":
            flower, peak = cells if garden[cells[0]] >= 0 else cells[::-1]
            origin[peak] = origin.pop(flower)
        elif name == "swap_martian" and martian is not None and garden[cells[0]] >= 0:
            origin[martian] = origin.pop(cells[0])
        elif name in ("jump", "diagonal", "pick"):
            origin.pop(cells[0], None)
        draft = _Draft(state)
        _perform(draft, name, martian, cells, drawn)
        state = draft.result(to_move=state.to_move, phase=state.phase, discs=state.discs)
    a, b = pair
    return origin.get(a, a), origin.get(b, b)


class _Ends:
    """What a last action must reach to give a move: the empty squares in the lines of the
    Martians that may move (for a flower), and the first peak of each line (to become a
    flower, by Swap peak and flower)."""

    def __init__(self, state: State) -> None:
        self.empties = _line_empties(state, _occupancy(state))
        self.first_peaks = set(_first_peaks(state))


class _Use:
    """The uses of one action, paid with ``pay`` (``None`` when colours do not matter), from
    one node of :class:`_EndSearch`."""

    def __init__(
        self,
        search: _EndSearch,
        node: _Node,
        name: str,
        pay: int | None,
        free: bool,
        ends: _Ends | None,
    ) -> None:
        self.search, self.node, self.name, self.pay, self.free = search, node, name, pay, free
        self.ends = ends  # the action is the last of the sequence: only what reaches these
        self.state = node.state
        self.garden = node.state.garden
        self.occ = _occupancy(node.state)

    def children(self) -> Iterator[_Child]:
        """Every use, as ``(node after, lines for the plan)``."""
        name, garden, occ = self.name, self.garden, self.occ
        if name in ("move_flower", "move_peak"):  # the piece goes up into the hand
            for sq in SQUARES:
                if garden[sq] != EMPTY_SQUARE and (garden[sq] >= 0) == (name == "move_flower"):
                    var = self.search.new_var()
                    hand = (*self.node.held, (garden[sq], var))
                    yield self.child(_put(sq, EMPTY_SQUARE), self.act((sq, var)), held=hand)
        elif name == "tube":
            tube = list(self.state.tube)
            if self.pay is not None:
                tube[self.pay] += PAYMENT
            for drawn in combinations_with_replacement(range(len(tube)), DRAW):
                if all(drawn.count(c) <= tube[c] for c in set(drawn)):
                    yield self.child(self.perform(None, (), drawn), self.act((), None, drawn))
        elif name == "swap_flowers":  # paid now, its two flowers chosen when one is taken
            yield self.child(_nothing, self.act(()), swap=True)
        else:
            for martian, cells in _uses(self.state, occ, name, frozenset()):
                ends = self.ends
                if name == "swap_peak_flower" and ends and cells[0] not in ends.first_peaks:
                    continue  # not the first peak of a line: the flower stays out of reach
                taken = cells[0] if name in ("pick", "jump", "diagonal") else None
                if taken is not None and garden[taken] >= 0:
                    take = self.landed(taken, self.perform(martian, cells))
                    yield from self.taking(taken, garden[taken], take, (self.act(cells, martian),))
                else:
                    yield self.child(self.perform(martian, cells), self.act(cells, martian))
            for h in self.node.held:
                yield from self.from_hand(h)

    def child(
        self,
        change: _Change,
        *entries: _Entry,
        held: tuple[_Held, ...] | None = None,
        swap: bool | None = None,
    ) -> _Child:
        """The node after paying and ``change``, with the hand ``held`` and whether Swap
        flowers still waits (by default as before)."""
        state, node = self.state, self.node
        draft = _Draft(state)
        if self.pay is not None:
            draft.reserve[self.pay] -= PAYMENT
            draft.tube[self.pay] += PAYMENT
        change(draft)
        discs = replaced(state.discs, ACTIONS.index(self.name), state.to_move)
        after = draft.result(to_move=state.to_move, phase=state.phase, discs=discs)
        hand = node.held if held is None else held
        return _Node(after, hand, node.swap if swap is None else swap), entries

    def act(
        self, cells: tuple[_Ref, ...], martian: int | None = None, drawn: tuple[int, ...] = ()
    ) -> _Entry:
        """The plan's line for this use."""
        return ("act", self.name, self.pay, cells, drawn, martian)

    def perform(
        self, martian: int | None, cells: tuple[Square, ...], drawn: tuple[int, ...] = ()
    ) -> _Change:
        """The action's own effect (:func:`_perform`)."""
        name = self.name
        return lambda draft: _perform(draft, name, martian, cells, drawn)

    def taking(
        self,
        ref: _Ref,
        colour: int,
        take: Callable[[int], _Change],
        entries: tuple[_Entry, ...],
        held: tuple[_Held, ...] | None = None,
    ) -> Iterator[_Child]:
        """The use that takes a flower of ``colour`` (on ``ref``) into the reserve; and, while
        Swap flowers waits for its two flowers, the same after it exchanged that colour with
        another flower's (``take(c)``: the use taking a flower of colour ``c``)."""
        yield self.child(take(colour), *entries, held=held)
        if not self.node.swap:
            return
        for w in SQUARES:
            other = self.garden[w]
            if w != ref and other >= 0 and other != colour:
                yield self.child(_then(_put(w, colour), take(other)), ("swap", ref, w),
                                 *entries, held=held, swap=False)
        hand = self.node.held if held is None else held
        for i, (other, var) in enumerate(hand):
            if other >= 0 and other != colour:
                swapped = (*hand[:i], (colour, var), *hand[i + 1 :])
                yield self.child(take(other), ("swap", ref, var), *entries, held=swapped,
                                 swap=False)

    def from_hand(self, h: _Held) -> Iterator[_Child]:
        """The uses that put the piece ``h`` down from the hand where they need it."""
        state, garden, occ, name = self.state, self.garden, self.occ, self.name
        piece, var = h
        rest = tuple(x for x in self.node.held if x is not h)
        paying = not self.free  # the colour of a flower taken pays
        ends = self.ends
        if name == "swap_peak_flower":
            if piece == PEAK_SQUARE:  # the peak stands on var, the flower goes there
                if ends and not ends.empties:
                    return
                for q in SQUARES:
                    if garden[q] >= 0 and q not in occ:
                        yield self.child(_put(q, PEAK_SQUARE), self.act((var, q)),
                                         held=(*rest, (garden[q], var)))
            else:
                for p in SQUARES:
                    if garden[p] == PEAK_SQUARE and not (ends and p not in ends.first_peaks):
                        yield self.child(_put(p, piece), self.act((p, var)),
                                         held=(*rest, (PEAK_SQUARE, var)))
        elif name == "jump":
            for m in (m for m in _movers(state) if m < _STARTS_FROM):
                for a, b in (ray[:2] for ray in ORTHOGONAL_RAYS[m] if len(ray) > 1):
                    if a in occ or b in occ or garden[b] == PEAK_SQUARE:
                        continue
                    jump = self.perform(m, (b,))
                    if piece == PEAK_SQUARE and garden[a] == EMPTY_SQUARE:
                        entries = (("put", var, a), self.act((b,), m))
                        over = _then(_put(a, piece), jump)
                        if garden[b] >= 0 and paying:
                            take = self.landed(b, over)
                            yield from self.taking(b, garden[b], take, entries, rest)
                        else:
                            yield self.child(over, *entries, held=rest)
                    elif piece >= 0 and paying and garden[a] == PEAK_SQUARE and garden[b] < 0:
                        entries = (("put", var, b), self.act((b,), m))
                        yield from self.taking(var, piece, self.landed(b, jump), entries, rest)
        elif name == "diagonal" and piece >= 0 and paying:
            for martian, (to,) in _uses(state, occ, name, frozenset()):
                if garden[to] == EMPTY_SQUARE:
                    entries = (("put", var, to), self.act((to,), martian))
                    take = self.landed(to, self.perform(martian, (to,)))
                    yield from self.taking(var, piece, take, entries, rest)
        elif name == "swap_martian":
            for m in (m for m in _movers(state) if m < _STARTS_FROM):
                if garden[m] != EMPTY_SQUARE:
                    continue
                for to in SQUARES:
                    if garden[to] == EMPTY_SQUARE and to not in occ:
                        yield self.child(_then(_put(to, piece), self.perform(m, (to,))),
                                         ("put", var, to), self.act((to,), m), held=rest)
        elif name == "pick" and piece >= 0 and paying and state.discs[_TUBE] is None:
            # only its payment, fed to a later draw, sets it apart from picking where it was
            yield from self.taking(var, piece, _gain, (self.act((var,)),), rest)

    @staticmethod
    def landed(sq: Square, use: _Change) -> Callable[[int], _Change]:
        """``use`` taking the flower on ``sq``, that flower of colour ``c``."""
        return lambda c: _then(_put(sq, c), use)


def _gain(colour: int) -> _Change:
    def change(draft: _Draft) -> None:
        draft.reserve[colour] += 1

    return change


def _nothing(draft: _Draft) -> None:
    pass


def _put(sq: Square, piece: int) -> _Change:
    return lambda draft: draft.set(sq, piece)


def _then(*changes: _Change) -> _Change:
    def change(draft: _Draft) -> None:
        for step in changes:
            step(draft)

    return change


def _illegal(reason: str, rule: str, step: Step) -> IllegalMoveError:
    return IllegalMoveError(reason, rule=rule, step=notation(step))


def _next_player(state: State) -> int:
    return state.to_move % state.players + 1


def _place(state: State, step: Place) -> _Draft:
    if state.phase is not _PLACEMENT:
        raise _illegal("every Martian is already placed", RULE_SETUP, step)
    cell = _cell(step.cell)
    if not _STARTS_FROM <= cell < _SLOTS_FROM:
        reason = f"{step.cell} is not a start square: Martians start outside the garden"
        raise _illegal(f"{reason}, on L1-L10, R1-R10 or Ba-Bj", RULE_SETUP, step)
    if cell in _occupancy(state):
        reason = f"a Martian already waits on {step.cell}: two Martians never share a start square"
        raise _illegal(reason, RULE_START, step)
    first = ENTRY_RAYS[cell - _STARTS_FROM][0]
    if state.garden[first] == PEAK_SQUARE:
        reason = (
            f"the first garden square from {step.cell} ({SQUARE_NAMES[first]}) is a peak, so a "
            "Martian there could never enter: choose another start square"
        )
        raise _illegal(reason, RULE_START, step)
    draft = _Draft(state)
    draft.martians.append(cell)
    draft.touched.append(cell)
    need = state.options.martians_per_player
    counts = [len(m) for m in state.martians]
    counts[state.to_move - 1] += 1
    waiting = [p for p in range(1, state.players + 1) if counts[p - 1] < need]
    if not waiting:  # the starting player goes first (the text, Setup)
        return draft.ends(to_move=1, phase=_TURN, discs=state.discs)
    later = [p for p in waiting if p > state.to_move]
    return draft.ends(to_move=(later or waiting)[0], phase=_PLACEMENT, discs=state.discs)


def _cell(name: str) -> int:
    cell = _CELL.get(name)
    if cell is None or cell >= _SLOTS_FROM:
        raise InvalidStepError(
            f"{name!r} is not a square of the garden (a1-j10) or a start square (L1-L10, "
            "R1-R10, Ba-Bj)"
        )
    return cell


def _own_martian(state: State, name: str, step: Step) -> int:
    cell = _cell(name)
    if cell not in state.martians[state.to_move - 1]:
        raise _illegal(f"you have no Martian on {name}", RULE_MOVE, step)
    if state.bound is not None and cell != state.bound:
        reason = (
            f"only your Martian on {LAYOUT[state.bound]} may act or move this turn: it used a "
            "special action that moves a Martian"
        )
        raise _illegal(reason, RULE_BOUND, step)
    return cell


def _move(state: State, step: Move) -> _Draft:
    to = parse_square(step.to)
    pick = None if step.pick is None else parse_square(step.pick)
    if step.martian is not None:
        origins: tuple[int, ...] = (_own_martian(state, step.martian, step),)
    else:
        origins = _movers(state)
    reach = _reach(state)  # as the listing made it: the step is not worked out again
    fits = [(o, found) for o in origins if (found := reach.picks(o, to)) is not None]
    if len(fits) > 1:
        reason = (
            f"both your Martians can reach {step.to}: say which one moves, e.g. "
            f"{LAYOUT[fits[0][0]]}-{step.to}"
        )
        raise _illegal(reason, RULE_VARIANTS, step)
    if not fits:
        if len(origins) > 1:
            raise _illegal(f"neither of your Martians can reach {step.to}", RULE_MOVE, step)
        raise _illegal(_unreachable(state, _occupancy(state), origins[0], to), RULE_MOVE, step)
    (origin, picks), = fits
    if picks and pick not in picks:
        names = " or ".join(SQUARE_NAMES[n] for n in picks)
        reason = f"after landing on {step.to} you pick up one flower next to it: {names}"
        raise _illegal(reason, RULE_PICK, step)
    if not picks and pick is not None:
        raise _illegal(f"there is no flower next to {step.to} to pick up", RULE_PICK, step)
    draft = _Draft(state)
    draft.relocate(origin, to)
    flowers = reach.flowers & ~(1 << to)
    if pick is None:
        draft.take(to)
    else:
        draft.take(to, pick)
        flowers &= ~(1 << pick)
    alone = _alone(flowers)
    if alone:  # seldom
        draft.take(*_squares_of(alone))
    draft.boards = (flowers & ~alone, reach.peaks)
    draft.bound = None
    return draft.ends(to_move=_next_player(state), phase=_TURN, discs=state.discs)


def _unreachable(state: State, occ: Mapping[int, int], origin: int, to: Square) -> str:
    """Why the Martian on ``origin`` cannot move to ``to`` (#3, #4, #8b)."""
    ray = next((r for r in _rays(origin) if to in r), None)
    where = LAYOUT[origin]
    if ray is None:
        if origin >= _STARTS_FROM:
            return f"a Martian on {where} enters the garden only straight ahead, along its line"
        return f"{SQUARE_NAMES[to]} is not in a straight line from your Martian on {where}"
    for sq in ray[: ray.index(to)]:
        if state.garden[sq] == PEAK_SQUARE:
            return f"the peak on {SQUARE_NAMES[sq]} blocks the way: a Martian never passes a peak"
    return f"{_describe(state, occ, to)}: a move ends on a flower"


def _describe(state: State, occ: Mapping[int, int], sq: Square) -> str:
    name = SQUARE_NAMES[sq]
    if sq in occ:
        return f"a Martian stands on {name}"
    value = state.garden[sq]
    if value == PEAK_SQUARE:
        return f"{name} is a peak"
    if value == EMPTY_SQUARE:
        return f"{name} is empty"
    return f"{name} holds a {state.options.colours[value]} flower"


def _action(state: State, step: Action) -> _Draft:
    if step.name not in ACTIONS:
        raise InvalidStepError(
            f"{step.name!r} is not a special action; the actions are {', '.join(ACTIONS)}"
        )
    k = ACTIONS.index(step.name)
    label = step.name.replace("_", " ")
    if state.discs[k] is not None:
        if k == _TUBE and state.discs[k] == 0:
            reason = "the tube action is covered in this game (the combinatorial variant)"
            rule = RULE_VARIANTS
        elif k == _WILD:
            reason, rule = "the wildflower has already been taken", RULE_ACTIONS
        else:
            reason, rule = f"the {label} action has already been used in this game", RULE_ACTIONS
        raise _illegal(reason, rule, step)
    if step.pay == base.WILD:
        reason = "the wildflower cannot pay: a payment is 3 flowers of one colour"
        raise _illegal(reason, RULE_NOTES, step)
    pay = _colour(state, step.pay)
    have = state.reserves[state.to_move - 1][pay]
    if have < PAYMENT:
        reason = f"a special action costs 3 flowers of one colour; you have {have} {step.pay}"
        raise _illegal(reason, RULE_ACTIONS, step)
    if k == _TUBE and sum(state.tube) < DRAW:
        reason = (
            "the tube action needs at least 3 flowers in the tube before you pay; it holds "
            f"{sum(state.tube)}"
        )
        raise _illegal(reason, RULE_TUBE, step)
    if step.drawn and k != _TUBE:
        raise InvalidStepError(f"{notation(step)}: only the tube action draws flowers")
    if len(step.cells) not in _ARITY[step.name]:
        raise InvalidStepError(f"{notation(step)}: {label} takes {_ARITY[step.name][-1]} square(s)")
    if step.martian is not None and step.name not in MARTIAN_ACTIONS:
        raise InvalidStepError(f"{notation(step)}: {label} does not use a Martian")
    occ = _occupancy(state)
    martian = None if step.martian is None else _own_martian(state, step.martian, step)
    cells = tuple(parse_square(c) for c in step.cells)
    matches = [
        (m, c)
        for m, c in _uses(state, occ, step.name, frozenset(cells))
        if (martian is None or m == martian)
        and (not cells or c == cells or (step.name in _SWAPS and c == cells[::-1]))
    ]
    if not matches:
        reason, rule = _why_not(state, occ, step.name, martian, cells)
        raise _illegal(reason, rule, step)
    if len(matches) > 1:
        options = " or ".join(
            f"{LAYOUT[m]}-{SQUARE_NAMES[c[0]]}" if m is not None else SQUARE_NAMES[c[0]]
            for m, c in matches
        )
        raise _illegal(f"say which {label} you mean: {options}", RULE_ACTIONS, step)
    (martian, cells), = matches
    return _used(state, step, k, pay, martian, cells)


def _used(
    state: State, step: Action, k: int, pay: int, martian: int | None,
    cells: tuple[Square, ...],
) -> _Draft:
    """The draft of ``step``, the legal use ``(martian, cells)`` of action ``k`` paid with
    colour ``pay``; raises only for a draw the tube cannot give."""
    draft = _Draft(state)
    draft.reserve[pay] -= PAYMENT
    draft.tube[pay] += PAYMENT
    drawn = tuple(_colour(state, c) for c in step.drawn)
    if k == _TUBE:
        _check_draw(draft.tube, drawn, state.options.colours, step)
    _perform(draft, step.name, martian, cells, drawn)
    draft.touched.append(_SLOTS_FROM + k)
    discs = replaced(state.discs, k, state.to_move)
    return draft.ends(to_move=state.to_move, phase=_TURN, discs=discs)


def _colour(state: State, name: str) -> int:
    try:
        return state.options.colours.index(name)
    except ValueError:
        raise InvalidStepError(
            f"{name!r} is not a flower colour of this game; the colours are "
            f"{', '.join(state.options.colours)}"
        ) from None


def _check_draw(
    tube: Sequence[int], drawn: Sequence[int], colours: Sequence[str], step: Step
) -> None:
    if len(drawn) != DRAW:
        reason = f"the tube action draws exactly 3 flowers; the step names {len(drawn)}"
        raise _illegal(reason, RULE_TUBE, step)
    for c, n in Counter(drawn).items():
        if n > tube[c]:
            reason = f"after your payment the tube holds {tube[c]} {colours[c]}, not {n}"
            raise _illegal(reason, RULE_TUBE, step)


def _why_not(
    state: State, occ: Mapping[int, int], name: str, martian: int | None, cells: tuple[Square, ...]
) -> tuple[str, str]:
    """Why no legal use of action ``name`` fits the step's Martian and cells: (reason, rule)."""
    garden, label = state.garden, name.replace("_", " ")
    said = [_describe(state, occ, c) for c in cells]
    if name in MARTIAN_ACTIONS:
        inside = [m for m in ((martian,) if martian is not None else _movers(state)) if m < 100]
        if not inside:
            return (
                f"a Martian still outside the garden cannot use {label}; it enters with its "
                "first move",
                RULE_ACTIONS,
            )
        if len(inside) > 1:
            return f"neither of your Martians can use {label} like this", RULE_ACTIONS
        m = inside[0]
        if name == "swap_martian" and garden[m] >= 0:
            return "your Martian stands on a flower, so it cannot swap", RULE_UNDER
        if not cells:
            return "no peak next to your Martian has a free square straight beyond it", RULE_ACTIONS
        t = cells[0]
        if name == "jump":
            over = {ray[1]: ray[0] for ray in ORTHOGONAL_RAYS[m] if len(ray) >= 2}
            if t not in over or garden[over[t]] != PEAK_SQUARE:
                return (
                    f"a jump goes over a peak right next to your Martian on {SQUARE_NAMES[m]} to "
                    "the square straight beyond it",
                    RULE_ACTIONS,
                )
        elif name == "diagonal":
            ray = next((r for r in DIAGONAL_RAYS[m] if t in r), None)
            if ray is None:
                where = f"{SQUARE_NAMES[t]} is not on a diagonal from {SQUARE_NAMES[m]}"
                return where, RULE_ACTIONS
            for sq in ray[: ray.index(t)]:
                if garden[sq] == PEAK_SQUARE:
                    return f"the peak on {SQUARE_NAMES[sq]} blocks the way", RULE_ACTIONS
        elif garden[t] == EMPTY_SQUARE and t not in occ:
            return f"{said[0]}: your Martian swaps with a peak or a flower", RULE_ACTIONS
        return f"{said[0]}: {label} cannot end there", RULE_ACTIONS
    if name == "pick":
        return f"{said[0]}: pick takes a flower from the garden", RULE_ACTIONS
    a, b = cells
    if a == b:
        return f"{label} needs two different squares", RULE_ACTIONS
    if name == "swap_peak_flower":
        if any(c in occ for c in cells):
            return "a flower under a Martian cannot be swapped with a peak", RULE_UNDER
        return f"{label} needs one peak and one flower: {said[0]}, {said[1]}", RULE_ACTIONS
    if name == "swap_flowers":
        return f"{label} needs two flowers: {said[0]}, {said[1]}", RULE_ACTIONS
    kind = "flower" if name == "move_flower" else "peak"
    movable = garden[a] >= 0 if name == "move_flower" else garden[a] == PEAK_SQUARE
    if not movable:
        return f"{said[0]}: there is no {kind} to move", RULE_ACTIONS
    return f"{said[1]}: a {kind} moves only to an empty square", RULE_ACTIONS


def _perform(
    draft: _Draft, name: str, martian: int | None, cells: tuple[Square, ...], drawn: Sequence[int]
) -> None:
    """The effect of a legal use of action ``name`` on ``draft`` (the text, Special actions)."""
    if martian is not None:  # jump, diagonal, swap Martian
        (to,) = cells
        if name == "swap_martian":
            draft.set(martian, draft.garden[to])  # the Martian stood on an empty square (#8b)
            draft.set(to, EMPTY_SQUARE)
        elif draft.garden[to] >= 0:
            draft.take(to)
        draft.relocate(martian, to)
        if draft.state.options.martians_per_player == 2:
            draft.bound = to
    elif name == "tube":
        for c in drawn:
            draft.tube[c] -= 1
            draft.reserve[c] += 1
    elif name == "wildflower":
        draft.reserve[-1] += 1
    elif name == "pick":
        draft.take(cells[0])
    elif name in _SWAPS:
        a, b = cells
        va, vb = draft.garden[a], draft.garden[b]
        draft.set(a, vb)
        draft.set(b, va)
    else:  # move flower, move peak
        source, to = cells
        draft.set(to, draft.garden[source])
        draft.set(source, EMPTY_SQUARE)


# ----------------------------------------------------------------------------- the board


def board(state: State) -> dict[str, base.Piece]:
    """The physical board (146 cells of ``LAYOUT``): garden squares hold a colour, ``"peak"``,
    ``"M1"`` or ``"M1+red"`` (a Martian on a flower, #8b); start squares ``"M1"`` while a
    Martian waits there; slot ``Ak`` the disc ``"D{p}"`` of the player who used action k
    (``"D0"``: the tube action covered in the combinatorial game), except ``A10``, which holds
    the wildflower ``"wild"`` until it is taken (then ``""``: the text puts no counter there);
    tray cells ``""``."""
    occ = _occupancy(state)
    garden, discs, colours = state.garden, state.discs, state.options.colours
    return {name: _piece(garden, discs, colours, occ, cell) for cell, name in enumerate(LAYOUT)}


def _piece(
    garden: Sequence[int], discs: Sequence[int | None], colours: Sequence[str],
    occ: Mapping[int, int], cell: int,
) -> base.Piece:
    if cell < _STARTS_FROM:
        value, player = garden[cell], occ.get(cell)
        if player is not None:
            if value >= 0:
                return base.martian_on(player, colours[value])
            return base.martian(player)
        if value >= 0:
            return colours[value]
        return base.PEAK if value == PEAK_SQUARE else base.EMPTY
    if cell < _SLOTS_FROM:
        player = occ.get(cell)
        return base.EMPTY if player is None else base.martian(player)
    if cell < _TRAY_FROM:
        k = cell - _SLOTS_FROM
        who = discs[k]
        if k == _WILD:
            return base.WILD if who is None else base.EMPTY
        return base.EMPTY if who is None else base.disc(who)
    return base.EMPTY


def candidates(
    state: State,
    touched: frozenset[str],
    within: frozenset[str] | None = None,
    distinct: bool = False,
) -> Iterator[Step]:
    """A cheap superset of the legal steps whose :func:`changes` cover every cell of
    ``touched`` (cell names) and, when ``within`` is given, lie within those cells (the
    Martian's own square is not checked: a Martian lifted off a flower leaves the flower).

    Every action changes its own slot and no start square, a move changes no slot, and a
    move's changes lie on its Martian's square, its landing, its pick, a flower whose flower
    neighbours it takes all, or a flower that is a soliflower already (:func:`_moved_on`);
    so a touched slot ``Ak`` leaves only action k, and
    touched squares narrow the cells an action may use (never walking the thousands of swap
    flowers steps that cannot explain them).  With ``within``, the squares an action uses
    are tried among those cells only.  One swap of two flowers of one colour stands for all
    (none changes a square) but for those of two cells of ``within``; with ``distinct``,
    one payment colour (and one tube draw) stands for all.
    """
    cells: set[int] = set()
    for name in touched:
        cell = _CELL.get(name)
        if cell is None or cell >= _TRAY_FROM:  # no step changes a tray cell
            return iter(())
        cells.add(cell)
    keep = None if within is None else frozenset(_CELL[n] for n in within if n in _CELL)
    garden = frozenset(c for c in cells if c < _STARTS_FROM)
    starts = {c for c in cells if _STARTS_FROM <= c < _SLOTS_FROM}
    slots = [c - _SLOTS_FROM for c in cells if c >= _SLOTS_FROM]
    if state.phase is Phase.PLACEMENT:
        if not garden and not slots and len(starts) <= 1:
            return (
                s for s in _place_steps(state)
                if starts <= {_CELL[s.cell]} and (keep is None or _CELL[s.cell] in keep)
            )
        return iter(())
    if state.phase is not Phase.TURN or (slots and (starts or len(slots) > 1)):
        return iter(())
    if slots:  # its action's steps alone, drawn in C: every payment and draw of the tube
        return _action_steps(state, _occupancy(state), [ACTIONS[slots[0]]], garden, keep,
                             distinct)
    return _turn_candidates(state, garden, starts, keep, distinct)


def _turn_candidates(
    state: State, garden: frozenset[Square], starts: set[int], keep: frozenset[int] | None,
    distinct: bool,
) -> Iterator[Step]:
    """:func:`candidates` in a turn when no slot is touched: the moves, then the actions."""
    occ = _occupancy(state)
    if len(starts) <= 1:
        for origin, to, pick in _moves_by_square(state).changing(garden):
            if starts <= {origin} and (
                keep is None or (to in keep and (pick is None or pick in keep))
            ):
                yield _move_step(state, origin, to, pick)
    if not starts:
        yield from _action_steps(state, occ, ACTIONS, garden, keep, distinct)


class _MovesBySquare:
    """The normal moves of one state (:func:`_moves`) and, for each garden square asked about,
    which of them may change it (its Martian's own square, or :func:`_moved_on`), worked out
    the first time the square is asked about and kept: while a step is under way the
    referee asks about the same few touched squares on every field update."""

    __slots__ = ("garden", "moves", "lonely", "_on")

    def __init__(self, state: State) -> None:
        self.garden = state.garden
        self.moves = list(_moves(state))
        self.lonely = frozenset(_soliflowers(state.garden))
        self._on: dict[Square, frozenset[int]] = {}

    def on(self, sq: Square) -> frozenset[int]:
        """The positions in :attr:`moves` of the moves that may change square ``sq``."""
        found = self._on.get(sq)
        if found is None:
            garden = self.garden
            found = self._on[sq] = frozenset(
                i for i, (origin, to, pick) in enumerate(self.moves)
                if sq == origin or _moved_on(garden, sq, to, pick))
        return found

    def changing(self, squares: frozenset[Square]) -> list[tuple[int, Square, Square | None]]:
        """The moves that may change every one of ``squares`` but the soliflowers already
        there (a move may leave any of them alone or take it), in the order of :attr:`moves`."""
        need = squares - self.lonely
        if not need:
            return self.moves
        sets = sorted((self.on(sq) for sq in need), key=len)
        return [self.moves[i] for i in sorted(sets[0].intersection(*sets[1:]))]


_moves_by_square = _for_the_last_state(_MovesBySquare)
"""The :class:`_MovesBySquare` of a state, kept for the last state asked about."""

_candidate_uses: Callable[[State], dict[Action, tuple[int | None, tuple[Square, ...]]]]
_candidate_uses = _for_the_last_state(lambda state: {})
"""The actions :func:`candidates` gave for a state (those of one use each, made as read)
with their uses ``(acting Martian's cell or None, squares)``, kept for the last state."""


def _moved_on(garden: Sequence[int], sq: Square, to: Square, pick: Square | None) -> bool:
    """Whether a move landing on ``to`` and picking ``pick`` may change square ``sq`` (other
    than its Martian's own and the soliflowers already there): the landing, the pick, or a
    flower all of whose flower neighbours the move takes, so that it becomes a soliflower."""
    return sq in (to, pick) or (
        garden[sq] >= 0 and all(garden[n] < 0 or n in (to, pick) for n in NEIGHBOURS[sq])
    )


# ----------------------------------------------------------------------------- scoring


def hand(reserve: Sequence[int]) -> tuple[int, ...]:
    """A player's hand from their six reserve counts (five colours, then the wildflower): the
    colour counts sorted ascending, each wildflower added to a lowest count (the text,
    Scoring your hand; docs/RULINGS.md Enceladus #9).  ``(2, 3, 3, 4, 5, 1) -> (3, 3, 3, 4,
    5)``.  Hands compare as tuples: lowest count first."""
    counts = sorted(reserve[:-1])
    for _ in range(reserve[-1]):
        counts[0] += 1
        counts.sort()
    return tuple(counts)


def hands(state: State) -> tuple[tuple[int, ...], ...]:
    """Every player's hand, in player order; in the cooperative game everyone's hand is the
    team hand, the lowest of all hands (the text, Variants; #9)."""
    own = tuple(hand(r) for r in state.reserves)
    if state.options.mode == "cooperative":
        return (min(own),) * len(own)
    return own


def hand_text(counts: Sequence[int]) -> str:
    """``(3, 4, 5, 5, 6) -> "3-4-5-5-6"``, as the player panel shows a hand."""
    return "-".join(str(n) for n in counts)


def status(state: State) -> tuple[tuple[int, str], ...]:
    """Per player, the hand the score line shows now: ``((1, "3-4-5-5-6"), ...)``."""
    return tuple((p, hand_text(h)) for p, h in enumerate(hands(state), 1))


def outcome(state: State) -> base.Outcome | None:
    """``None`` while the game goes on; once over, the players with the best hand win and the
    ranking lists ``(player, hand, rank points)`` best first (the text, Game end, Scoring)."""
    if state.phase is not _OVER:
        return None
    all_hands = hands(state)
    return base.ranked(all_hands, [hand_text(h) for h in all_hands],
                       f"player {state.to_move} cannot reach any flower")


# ----------------------------------------------------------------------------- unseen choices


def tray_filter(steps: Sequence[Step], tray: Mapping[str, int]) -> list[Step]:
    """The steps whose payment (3 flowers) plus tube draw equal the flowers shown on the tray
    (``{colour: count}``); all of ``steps`` when the tray is empty."""
    # Thousands of steps may be weighed on one update: each is looked up by its payment and
    # draw among those the tray shows, every order of the flowers beside the payment's three
    # listed once.
    shown = {colour: n for colour, n in tray.items() if n}
    if not shown:
        return list(steps)
    if sum(shown.values()) > PAYMENT + DRAW:
        return []  # more than a payment and a draw
    paid = {(pay, drawn) for pay, n in shown.items() if n >= PAYMENT
            for drawn in permutations(chain.from_iterable(
                [colour] * (n - PAYMENT if colour == pay else n)
                for colour, n in shown.items()))}
    return [step for step in steps
            if isinstance(step, Action) and (step.pay, step.drawn) in paid]


def choice_path(step: Step) -> tuple[str, ...]:
    """What the sensors cannot see of ``step``: ``("pay blue",)`` for an action, plus
    ``"draw 1: red"``, ``"draw 2: red"``... for the flowers the tube action drew (numbered,
    so that each question names the draw it is about); ``()`` for a move or a placement."""
    if not isinstance(step, Action):
        return ()
    return _paid_path(step.pay, step.drawn)


@lru_cache(maxsize=512)  # every payment and draw a question may label: a few hundred
def _paid_path(pay: str, drawn: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`choice_path` of an action paid with ``pay`` that drew ``drawn``."""
    # Labelled in C (map): a question labels every payment and draw of a tube action, most
    # of them new to the cache.
    return (f"pay {pay}", *map(_DRAW_LABEL, _DRAW_NUMBERS, drawn))


_DRAW_LABEL = "draw {}: {}".format
_DRAW_NUMBERS = range(1, DRAW + 1)


# ----------------------------------------------------------------------------- notation

_HOW = (
    "write a placement like @L3, a move like f5/f6 (e5-f5/f6 names the Martian) or an action "
    "like pick:blue:f5"
)
_DRAWN_ITEM = re.compile(r"([a-z]+)([0-9]+)")
_PAIR_SEPARATOR = {"move_flower": ">", "move_peak": ">"}


def notation(step: Step) -> str:
    """``step`` in the compact notation of the module docstring (round-trips through
    :func:`parse_step`)."""
    if isinstance(step, Place):
        return f"@{step.cell}"
    if isinstance(step, Move):
        head = f"{step.martian}-" if step.martian is not None else ""
        return head + step.to + (f"/{step.pick}" if step.pick is not None else "")
    if step.name == "tube":
        params = ",".join(
            f"{colour}{len(list(run))}" for colour, run in _runs(step.drawn)
        )
    else:
        params = _PAIR_SEPARATOR.get(step.name, ",").join(step.cells)
    if step.martian is not None:
        params = f"{step.martian}-{params}"
    return f"{step.name}:{step.pay}" + (f":{params}" if params else "")


def _runs(colours: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    run: list[str] = []
    for colour in colours:
        if run and run[0] != colour:
            yield run[0], run
            run = []
        run.append(colour)
    if run:
        yield run[0], run


def parse_step(state: State, text: str) -> Step:
    """Read a step in the compact notation.  Raises :class:`InvalidStepError` with a sentence
    saying what is wrong (unknown cell, colour or action, bad shape)."""
    body = text.strip()
    try:
        if body.startswith("@"):
            _cell(body[1:])
            return Place(body[1:])
        if ":" in body or body in ACTIONS:
            return _parse_action(state, body)
        if not body:
            raise InvalidStepError(f"the step is empty; {_HOW}")
        head, dash, rest = body.partition("-")
        to, slash, pick = (rest if dash else head).partition("/")
        if dash:
            _cell(head)
        parse_square(to)
        if slash:
            parse_square(pick)
        return Move(to, pick if slash else None, head if dash else None)
    except InvalidStepError as error:
        raise InvalidStepError(f"cannot read the step {text!r}: {error}") from None


def _parse_action(state: State, body: str) -> Action:
    parts = body.split(":")
    name = parts[0]
    if name not in ACTIONS:
        raise InvalidStepError(
            f"{name!r} is not a special action; the actions are {', '.join(ACTIONS)}")
    if len(parts) not in (2, 3) or not parts[1]:
        raise InvalidStepError(
            f"{body!r} is not a special action step; write name:colour or name:colour:squares")
    pay = parts[1]
    if pay != base.WILD:
        _colour(state, pay)
    head, dash, params = (parts[2] if len(parts) == 3 else "").partition("-")
    if not dash:
        head, params = "", head
    martian = head if dash else None
    if martian is not None:
        _cell(martian)
    if name == "tube":
        drawn: list[str] = []
        for item in params.split(",") if params else ():
            match = _DRAWN_ITEM.fullmatch(item)
            if match is None:
                raise InvalidStepError(f"{item!r} is not a draw; write colour and count, e.g. red2")
            _colour(state, match[1])
            drawn += [match[1]] * int(match[2])
        return Action(name, pay, (), tuple(drawn), martian)
    cells = tuple(params.split(_PAIR_SEPARATOR.get(name, ","))) if params else ()
    if len(cells) not in _ARITY[name]:
        raise InvalidStepError(
            f"{name} names {len(cells)} square(s); it takes "
            f"{' or '.join(map(str, _ARITY[name]))}"
        )
    for cell in cells:
        parse_square(cell)
    return Action(name, pay, cells, (), martian)


_GARDEN_CHARS = {EMPTY_SQUARE: ".", PEAK_SQUARE: "^",
                 **{colour: str(colour + 1) for colour in range(len(DEFAULT_COLOURS))}}
"""A garden square's character in a position: a flower's colour counted from 1 (every game
has five colours)."""
_POSITION_FIELDS = "garden martians reserves tube slots turn options"


def format_position(state: State) -> str:
    """The whole state as one line (see the module docstring); :func:`parse_position` reads
    it back to an equal state."""
    # Each square's character looked up in C: a position is written for every step committed.
    squares = "".join(map(_GARDEN_CHARS.__getitem__, state.garden))
    garden = "/".join([squares[r * SIZE : (r + 1) * SIZE] for r in reversed(range(SIZE))])
    martians = "/".join(",".join(LAYOUT[c] for c in cells) or "-" for cells in state.martians)
    reserves = "/".join(".".join(map(str, r)) for r in state.reserves)
    slots = "".join("-" if who is None else str(who) for who in state.discs)
    turn = f"{state.to_move}:{state.phase.value}"
    if state.bound is not None:
        turn += f":{LAYOUT[state.bound]}"
    o = state.options
    options = (
        f"mode={o.mode},martians_per_player={o.martians_per_player},"
        f"tube={'true' if o.tube else 'false'},colours={'/'.join(o.colours)}"
    )
    tube = ".".join(map(str, state.tube))
    return " ".join((garden, martians, reserves, tube, slots, turn, options))


def parse_position(text: str) -> State:
    """Read :func:`format_position` back.  Raises :class:`InvalidStepError` naming the field
    that is wrong."""
    fields = text.split()
    if len(fields) != 7:
        raise InvalidStepError(
            f"the position has {len(fields)} fields; it has 7 separated by spaces "
            f"({_POSITION_FIELDS})"
        )
    garden_text, martians_text, reserves_text, tube_text, slots_text, turn_text, options_text = (
        fields
    )
    options = _parse_options_field(options_text)
    rows = garden_text.split("/")
    codes = {ch: v for v, ch in _GARDEN_CHARS.items()}
    if len(rows) != SIZE or any(len(row) != SIZE or set(row) - codes.keys() for row in rows):
        raise InvalidStepError(
            f"{garden_text!r} is not a garden field; write 10 rows of 10 characters (1-5 a "
            "flower, ^ a peak, . empty) separated by /"
        )
    garden = tuple(codes[ch] for row in reversed(rows) for ch in row)
    martians = tuple(
        () if part == "-" else tuple(sorted(_cell(name) for name in part.split(",")))
        for part in martians_text.split("/")
    )
    reserves = tuple(_counts(part, 6, "a reserve") for part in reserves_text.split("/"))
    if len(martians) != len(reserves) or not MIN_PLAYERS <= len(reserves) <= MAX_PLAYERS:
        raise InvalidStepError(f"the martians field lists {len(martians)} players and the "
                               f"reserves field {len(reserves)}; both list the same 2-5")
    if len(slots_text) != len(ACTIONS) or set(slots_text) - set("-012345"):
        raise InvalidStepError(f"{slots_text!r} is not a slots field; write 10 characters, - "
                               "unused, else a player digit")
    discs = tuple(None if ch == "-" else int(ch) for ch in slots_text)
    turn = turn_text.split(":")
    if (
        len(turn) not in (2, 3)
        or not turn[0].isdigit()
        or not 1 <= int(turn[0]) <= len(reserves)
        or turn[1] not in set(Phase)
    ):
        raise InvalidStepError(f"{turn_text!r} is not a turn field; write player:phase or "
                               "player:phase:cell, e.g. 1:turn")
    return State(
        options=options,
        garden=garden,
        martians=martians,
        reserves=reserves,
        tube=_counts(tube_text, 5, "the tube"),
        discs=discs,
        to_move=int(turn[0]),
        phase=Phase(turn[1]),
        bound=_cell(turn[2]) if len(turn) == 3 else None,
    )


def _counts(text: str, size: int, what: str) -> tuple[int, ...]:
    parts = text.split(".")
    if len(parts) != size or not all(p.isdigit() for p in parts):
        raise InvalidStepError(f"{text!r} is not {what}; write {size} counts joined by '.'")
    return tuple(int(p) for p in parts)


def _parse_options_field(text: str) -> Options:
    values: dict[str, object] = {}
    for item in text.split(","):
        key, eq, value = item.partition("=")
        if not eq:
            raise InvalidStepError(
                f"{text!r} is not an options field; write key=value joined by ','")
        if key == "martians_per_player":
            values[key] = int(value) if value.isdigit() else value
        elif key == "tube":
            values[key] = {"true": True, "false": False}.get(value, value)
        elif key == "colours":
            values[key] = tuple(value.split("/"))
        else:
            values[key] = value
    try:
        return read_options(values)
    except ConfigError as error:
        raise InvalidStepError(f"the options of the position are wrong: {error}") from None


# ----------------------------------------------------------------------------- the seam


class EnceladusRules(base.Rules[State, Step]):
    """:class:`companion.rules.base.GameRules` for Gardens of Enceladus; stateless.  The
    seam's methods are the module's functions (see them for rules and errors)."""

    name: ClassVar[str] = "enceladus"

    new_game = staticmethod(new_game)
    board = staticmethod(board)
    legal_steps = staticmethod(legal_steps)
    apply = staticmethod(apply)
    advance = staticmethod(advance)
    candidates = staticmethod(candidates)
    changes = staticmethod(changes)
    outcome = staticmethod(outcome)
    status = staticmethod(status)
    parse_step = staticmethod(parse_step)
    format_position = staticmethod(format_position)
    parse_position = staticmethod(parse_position)

    def layout(self, state: State) -> tuple[str, ...]:
        """The 146 cells of the board in dump order (module docstring)."""
        return LAYOUT

    def tray_cells(self, state: State) -> frozenset[str]:
        """The show-tray ``T1..T6``."""
        return _TRAY

    def moves_from(self, state: State, cell: str) -> list[base.Move] | None:
        """The normal moves of the Martian on ``cell`` as the listing works them out: its
        landing, the flower it picks, and what ``cell`` shows after (the flower it stood on,
        or nothing once that flower is picked or left a soliflower); ``[]`` for a cell
        without a Martian that may move.  ``None`` outside a turn and in the two-Martian
        variant (there one Martian's move may take the flower under the other)."""
        if state.phase is not Phase.TURN or state.options.martians_per_player == 2:
            return None
        origin = _CELL.get(cell)
        if origin not in _movers(state):
            return []
        garden = state.garden
        under = garden[origin] if origin < _STARTS_FROM else EMPTY_SQUARE
        stays = base.EMPTY if under < 0 else state.options.colours[under]
        return [
            (SQUARE_NAMES[to], None if pick is None else SQUARE_NAMES[pick],
             base.EMPTY if under < 0 or _moved_on(garden, origin, to, pick) else stays)
            for (start, to), picks in _reach(state).items() if start == origin
            for pick in picks or _NO_PICK
        ]

    def choice_path(self, state: State, step: Step) -> tuple[str, ...]:
        """:func:`choice_path` of ``step``."""
        return choice_path(step)

    def tray_filter(
        self, state: State, steps: Sequence[Step], tray: Mapping[str, int]
    ) -> list[Step]:
        """:func:`tray_filter` of ``steps``."""
        return tray_filter(steps, tray)

    def format_step(self, state: State, step: Step) -> str:
        """:func:`notation` of ``step``."""
        return notation(step)

    # -- setups laid out by hand (the GameRules seam)
    def setup_problems(self, state: State, board: base.Board) -> list[base.SetupProblem]:
        return setup_problems(state, board)

    def adopt_setup(self, state: State, board: base.Board) -> State:
        return adopt_setup(state, board)

    def reserve_problems(self, state: State, reserves: Sequence[Mapping[str, int]]) -> list[str]:
        if any(any(counts.values()) for counts in reserves):
            return ["Gardens of Enceladus deals no flowers: every reserve starts empty."]
        return []

    def deal_reserves(self, state: State, reserves: Sequence[Mapping[str, int]]) -> State:
        problems = self.reserve_problems(state, reserves)
        if problems:
            raise InvalidPositionError(" ".join(problems))
        return state


_TRAY = frozenset(TRAY_CELLS)

RULES = EnceladusRules()


# ----------------------------------------------------------------------------- rule cases


class EnceladusCases:
    """The case adapter (``docs/CASES.md``) for Gardens of Enceladus.

    A case position need not be a full game: Martians are the ``"M1"`` pieces of ``cells``;
    the phase is placement while some player has fewer Martians than the variant asks, else
    turn (then over if the end test of #8 already holds).  ``used_actions`` carry no owner,
    so their slots hold the neutral disc ``"D0"``.
    """

    def position(self, case: Case) -> State:
        """The state of ``case["position"]`` (of the shape docs/CASES.md gives) under
        ``case["options"]``.  Raises :class:`InvalidPositionError` naming every piece, cell,
        colour and count the game cannot have: 5 peaks, one wildflower.  More than 19 flowers
        of a colour in the garden, the reserves and the tube together is a
        :class:`~companion.rules.base.CaseWarning`: no step nor score depends on the supply, so
        the question is answered as the position gives it."""
        options = read_options(case.get("options", {}))
        pos = case["position"]
        players = int(pos["players"])
        _check_players(players, options)
        problems: list[str] = []
        garden = [EMPTY_SQUARE] * len(SQUARES)
        martians: list[list[int]] = [[] for _ in range(players)]
        for name, piece in pos.get("cells", {}).items():
            cell = _CELL.get(name)
            try:
                info = base.parse_piece(piece)
            except InvalidStepError:
                problems.append(f"position.cells.{name}: {piece!r} is not a piece")
                continue
            if cell is None or cell >= _SLOTS_FROM:
                problems.append(f"position.cells: {name!r} is not a garden or start square")
                continue
            if info.kind == "martian":
                if not 1 <= info.player <= players:
                    problems.append(f"position.cells.{name}: {piece!r} is the Martian of no "
                                    f"player; the players are 1 to {players}")
                    continue
                martians[info.player - 1].append(cell)
            elif info.kind not in ("flower", "peak"):
                problems.append(f"position.cells.{name}: {piece!r} cannot stand in this garden")
                continue
            colour = info.colour if info.kind != "peak" else ""
            if (colour or info.kind == "peak") and cell >= _STARTS_FROM:
                problems.append(f"position.cells.{name}: flowers and peaks stand only in the "
                                "garden")
            elif colour and colour not in options.colours:
                problems.append(f"position.cells.{name}: {colour!r} is not a colour of this game")
            elif cell < _STARTS_FROM:
                garden[cell] = PEAK_SQUARE if info.kind == "peak" else (
                    options.colours.index(colour) if colour else EMPTY_SQUARE
                )
        problems += [
            f"position.cells: player {p} has {len(m)} Martians; the game gives each "
            f"{options.martians_per_player}"
            for p, m in enumerate(martians, 1)
            if len(m) > options.martians_per_player
        ]
        colours = (*options.colours, base.WILD)
        reserves = pos.get("reserves", {})
        tube = pos.get("tube", {})
        problems += [
            f"position.reserves.{p}: {c!r} is not a colour of this game ({', '.join(colours)})"
            for p, counts in reserves.items() for c in counts if c not in colours
        ]
        problems += [
            f"position.tube: {c!r} is not a colour of this game ({', '.join(options.colours)})"
            for c in tube if c not in options.colours
        ]
        for index, c in enumerate(options.colours):
            total = garden.count(index) + int(tube.get(c, 0)) + sum(
                int(r.get(c, 0)) for r in reserves.values())
            if total > FLOWERS_PER_COLOUR:  # no rule counts the supply: the answer stands
                warnings.warn(base.CaseWarning(
                    f"position: {total} {c} flowers in the garden, reserves and tube; the game "
                    f"has {FLOWERS_PER_COLOUR} of each colour"), stacklevel=2)
        wild = sum(int(r.get(base.WILD, 0)) for r in reserves.values())
        if wild > 1:
            problems.append(f"position.reserves: {wild} wildflowers; the game has one")
        if garden.count(PEAK_SQUARE) > PEAKS:
            problems.append(f"position.cells: {garden.count(PEAK_SQUARE)} peaks; the game has "
                            f"{PEAKS}")
        used = set(pos.get("used_actions", []))
        if used - set(ACTIONS):
            problems.append(f"position.used_actions: {sorted(used - set(ACTIONS))} are not "
                            f"special actions; they are {', '.join(ACTIONS)}")
        if problems:
            raise InvalidPositionError("; ".join(problems))
        discs = tuple(
            0 if name in used or (name == "tube" and not options.tube) else None
            for name in ACTIONS
        )
        placed = all(len(m) == options.martians_per_player for m in martians)
        state = State(
            options=options,
            garden=tuple(garden),
            martians=tuple(tuple(sorted(m)) for m in martians),
            reserves=tuple(
                tuple(int(reserves.get(str(p), {}).get(c, 0)) for c in colours)
                for p in range(1, players + 1)
            ),
            tube=tuple(int(tube.get(c, 0)) for c in options.colours),
            discs=discs,
            to_move=int(pos["to_move"]),
            phase=Phase.TURN if placed else Phase.PLACEMENT,
        )
        return _settle(state)

    def step(self, state: State, step: Mapping[str, JsonTree]) -> Step:
        """One ``apply`` step of the case format.  Raises :class:`InvalidStepError` for a
        step of no known form."""
        if "place" in step:
            return Place(step["place"])
        if "move" in step:
            return Move(step["move"], step.get("pick"), step.get("martian"))
        if "action" not in step:
            raise InvalidStepError(f"{dict(step)!r} is not a Gardens of Enceladus step")
        name = step["action"]
        if name in ("swap_peak_flower", "swap_flowers"):
            cells = tuple(step.get("cells", ()))
        elif name in ("move_flower", "move_peak"):
            cells = (step["from"], step["to"])
        else:
            key = {"pick": "cell", "swap_martian": "with"}.get(name, "to")
            cells = (step[key],) if key in step else ()
        drawn: Counter[str] = Counter(step.get("drawn", {}))
        order = state.options.colours
        unknown = set(drawn) - set(order)
        if unknown:
            raise InvalidStepError(f"drawn names {', '.join(sorted(unknown))}; the colours are "
                                   f"{', '.join(order)}")
        if not all(type(n) is int and n >= 0 for n in drawn.values()) or drawn.total() > 3:
            raise InvalidStepError(
                f"drawn is {dict(drawn)}; a tube action draws three flowers at most")
        flat = tuple(c for c in order for _ in range(int(drawn[c])))
        return Action(name, str(step.get("pay", "")), cells, flat, step.get("martian"))

    def snapshot(self, state: State) -> Answer:
        """``cells`` (every occupied garden and start square), ``reserves`` (with ``wild``),
        ``tube``, ``to_move`` and ``over``."""
        colours = (*state.options.colours, base.WILD)
        return {
            "cells": _occupied_cells(state),
            "reserves": {
                str(p): dict(zip(colours, r, strict=True)) for p, r in enumerate(state.reserves, 1)
            },
            "tube": dict(zip(state.options.colours, state.tube, strict=True)),
            "to_move": state.to_move,
            "over": state.phase is Phase.OVER,
        }

    def query(self, state: State, name: str, arg: JsonTree) -> Answer:
        """``legal_moves``, ``legal_actions``, ``hands``, ``outcome`` and ``setup_valid``.
        Raises :class:`InvalidStepError` for another query."""
        if name == "legal_moves":
            steps = legal_steps(state)
            return {"destinations": sorted({s.to for s in steps if isinstance(s, Move)})}
        if name == "legal_actions":
            occ = _occupancy(state)
            usable = [
                a for a in ACTIONS if next(_action_steps(state, occ, (a,), frozenset()), None)
            ] if state.phase is Phase.TURN else []
            return {"actions": usable}
        if name == "hands":
            all_hands = hands(state)
            points = rank_points(all_hands)
            return {
                "hands": {str(p): hand_text(h) for p, h in enumerate(all_hands, 1)},
                "rank_points": {str(p): n for p, n in enumerate(points, 1)},
            }
        if name == "outcome":
            result = outcome(state)
            return {"over": result is not None, "winners": list(result.winners if result else ())}
        if name == "setup_valid":
            peaks = [c for c, piece in _occupied_cells(state).items() if piece == base.PEAK]
            return {"valid": setup_valid(peaks)}
        raise InvalidStepError(f"{name!r} is not a query of Gardens of Enceladus cases")


def _occupied_cells(state: State) -> dict[str, base.Piece]:
    """The occupied garden and start squares of ``state`` -> their piece."""
    occ = _occupancy(state)
    garden, discs, colours = state.garden, state.discs, state.options.colours
    return {LAYOUT[c]: p for c in range(_SLOTS_FROM)
            if (p := _piece(garden, discs, colours, occ, c))}


CASES = EnceladusCases()
