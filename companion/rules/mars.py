"""Gardens of Mars: the rules core.

Specification: the published rules of Gardens of Mars (the text) and ``docs/RULINGS.md``
(Coordinates, Mars #1-#10).  Pure: no I/O, no randomness outside :meth:`MarsRules.new_game`
(which is seeded); dice rolls arrive from outside as :class:`Roll` steps.

The garden is the 91-hex board ``max(|q|, |r|, |q+r|) <= 5`` in axial coordinates, written
``"q,r"``; the central space is ``0,0`` (Mars #1).  A game is a sequence of steps:

===========================  ===============  ==========================================
step                         notation         meaning
===========================  ===============  ==========================================
``Place((1, -1))``           ``@1,-1``        setup: the player to move puts their gardener
``Roll((3, 5))``             ``roll:3,5``     the dice rolled into the empty pool
``Roll(())``                 ``roll:none``    no empty hex next to the gardener: turn ends
``Move(3, (0, 1), "red")``   ``3>0,1=red``    use die 3, land on an empty hex, plant red
``Move(3, (2, 0))``          ``3>2,0``        use die 3, land on a flower (lose a point)
``Discard(4)``               ``discard:4``    no die can move: discard one, lose a point
===========================  ===============  ==========================================

A position is one line (:meth:`MarsRules.format_position`), space-separated ``key=value``
fields after the word ``mars``::

    mars players=2 to_move=1 extra=no pool=3,5 scores=0,4 planted=0,0
         reserves=5.5.0.0.5.5/5.5.0.0.5.5 cells=1,-1=M1;0,1=M2+red;2,0=peak options=peaks:5

(on one line).  ``reserves`` gives each player's counts in :data:`COLOURS` order, players
separated by ``/``; ``cells`` lists every non-empty hex with its board piece; ``pool``,
``cells`` and ``options`` are ``-`` when empty; ``options`` lists only non-default values.
The phase is not written: it follows from the rest (see :class:`Phase`).

Game options (docs/RULINGS.md Mars #10, defaults first): ``plant_score``
(``group_size`` | ``connected_only``), ``center_blocks_path`` (false | true), ``last_flower``
(``board`` | ``own_reserve``), ``last_flower_extra_turn`` (true | false),
``track_extra_turns`` (true | false), ``peaks`` (0 = off, or a count of 1 to 12).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, TypeAlias

from companion.errors import (
    ConfigError,
    IllegalMoveError,
    InvalidPositionError,
    InvalidStepError,
)
from companion.rules.base import (
    EMPTY,
    PEAK,
    Cell,
    Outcome,
    Piece,
    SetupProblem,
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
from companion.rules.hexes import Hex, hex_name, hexagon, parse_hex

if TYPE_CHECKING:
    from companion.rules.cases import Answer, Case, JsonTree, MarsStep

COLOURS: tuple[str, ...] = ("blue", "yellow", "white", "gray", "red", "green")
"""The six flower colours, in the order reserves are written (Mars #1)."""

FLOWERS_PER_COLOUR = 10
"""Flowers of each colour in the game (Mars #1)."""

GRID = hexagon(5)
"""The 91-hex garden (Mars #1)."""

CENTRE: Hex = (0, 0)
"""The central space: never landed on, passed over unless ``center_blocks_path``."""

TRACK_SPACES = 50
"""Spaces 1-50 of the scoring track; space 0 is the start (Mars #6)."""

EXTRA_TURN_ABOVE = 25
"""A would-be track space above this, already occupied, earns an extra turn (Mars #6)."""

MAX_PEAKS = 12
"""The most peaks the variant places: any greedy placement of non-adjacent peaks on the 90
non-central hexes reaches 13, so up to 12 always fit (Mars #9)."""

_INDEX: Mapping[Hex, int] = {cell: i for i, cell in enumerate(GRID.cells)}
_NEIGHBOUR_PLACES: Mapping[Hex | int, tuple[int, ...]] = {
    key: tuple(_INDEX[n] for n in GRID.neighbours[cell])
    for i, cell in enumerate(GRID.cells)
    for key in (cell, i)
}
"""The places in ``State.cells`` of the neighbours of a hex, by the hex or by its place."""
_NAMES: tuple[Cell, ...] = tuple(GRID.names[c] for c in GRID.cells)


def layout_cells(board: str = "") -> tuple[Cell, ...]:
    """The 91 hexes in dump order (one board: ``board`` is ignored)."""
    return _NAMES

# The rule each refusal names (IllegalMoveError.rule): the text's section, and the settled
# reading in docs/RULINGS.md where there is one.
RULE_SETUP = "Gardens of Mars, Setup"
RULE_ROLL = "Gardens of Mars, Rolling Dice (docs/RULINGS.md Mars #2)"
RULE_MOVE = "Gardens of Mars, Moving and Planting"
RULE_CENTRE = "Gardens of Mars, Moving and Planting (docs/RULINGS.md Mars #3)"
RULE_PEAKS = "Gardens of Mars, Peaks variant (docs/RULINGS.md Mars #9)"
RULE_DIE = "docs/RULINGS.md Mars #4"
RULE_TURN = "docs/RULINGS.md Mars #8"
RULE_END = "Gardens of Mars, Game End"


# --- options -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    """The game options of docs/RULINGS.md Mars #10, each with its default.

    ``plant_score``: ``"group_size"`` (the text: a planted flower scores the size of its
    same-colour group) or ``"connected_only"`` (the rulebook example: size - 1), Mars #5.
    ``center_blocks_path``: the central space blocks paths too (off: passing is allowed), #3.
    ``last_flower``: the extra turn comes with the 10th flower of a colour on the ``"board"``
    or with the planter's ``"own_reserve"`` of that colour running out (as Board Game Arena
    plays it), #7.
    ``last_flower_extra_turn``: that extra turn at all, #7.
    ``track_extra_turns``: leapfrog and the above-25 extra turn on the scoring track, #6.
    ``peaks``: 0 (no Peaks variant) or how many peaks are placed, 1 to :data:`MAX_PEAKS`, #9.
    """

    plant_score: str = "group_size"
    center_blocks_path: bool = False
    last_flower: str = "board"
    last_flower_extra_turn: bool = True
    track_extra_turns: bool = True
    peaks: int = 0

    def non_defaults(self) -> dict[str, object]:
        """``{name: value}`` of the options that differ from their defaults."""
        default = Options()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name)
        }


_CHOICES: Mapping[str, tuple[str, ...]] = {
    "plant_score": ("group_size", "connected_only"),
    "last_flower": ("board", "own_reserve"),
}
"""The options that take a word, and their words (the default first)."""


OptionValue: TypeAlias = Any
"""A checked option's value, of its :class:`Options` field's own type: Python cannot type a
mapping keyed by a dataclass's field names, so the values are erased until ``Options(**)``."""


def _quoted(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters: an option's value may be any text."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_options(options: Mapping[str, object]) -> Options:
    """:class:`Options` from a config table; missing keys take their defaults.

    Raises :class:`ConfigError` naming every unknown key and every bad value at once.
    """
    problems: list[str] = []
    values: dict[str, OptionValue] = {}
    known = {f.name: f for f in fields(Options)}
    for key, value in options.items():
        if key not in known:
            problems.append(
                f"Gardens of Mars has no option {_quoted(key)}; the options are "
                + ", ".join(known)
                + "."
            )
        elif key in _CHOICES:
            if value not in _CHOICES[key]:
                choices = " or ".join(repr(c) for c in _CHOICES[key])
                problems.append(f"Option {key!r} must be {choices}, not {_quoted(value)}.")
            values[key] = value
        elif key == "peaks":
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(
                    f"Option 'peaks' is a count (0 for no peaks, 5 is usual), not "
                    f"{_quoted(value)}."
                )
            elif not 0 <= value <= MAX_PEAKS:
                problems.append(
                    f"Option 'peaks' must be from 0 to {MAX_PEAKS}, not {value}."
                )
            values[key] = value
        else:
            if not isinstance(value, bool):
                problems.append(f"Option {key!r} must be true or false, not {_quoted(value)}.")
            values[key] = value
    if problems:
        raise ConfigError(problems)
    return Options(**values)


# --- steps -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place:
    """Setup: the player to move puts their gardener on ``cell`` (Gardens of Mars, Setup)."""

    cell: Hex


@dataclass(frozen=True, slots=True)
class Roll:
    """The values (1-6) of the dice just rolled into the empty pool, kept sorted; ``()`` when
    the player rolls none and the turn ends (Gardens of Mars, Rolling Dice)."""

    values: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(sorted(self.values)))


@dataclass(frozen=True, slots=True)
class Move:
    """Use the pool die of value ``die``: the gardener moves ``die`` hexes in a straight line
    to ``to``; ``plant`` is the colour planted there, ``None`` when ``to`` holds a flower
    (Gardens of Mars, Moving and Planting)."""

    die: int
    to: Hex
    plant: str | None = None


@dataclass(frozen=True, slots=True)
class Discard:
    """No pool die gives a legal move: discard one of value ``die`` and lose a point
    (docs/RULINGS.md Mars #4)."""

    die: int


Step = Place | Roll | Move | Discard
"""Every Mars step."""

_PLACES: Mapping[Hex, Place] = {cell: Place(cell) for cell in GRID.cells}
"""``_PLACES[cell]``: the placement there, built once (steps are values)."""

_MOVES: Mapping[tuple[int, Hex], tuple[Move, tuple[Move, ...]]] = {
    (die, cell): (Move(die, cell), tuple(Move(die, cell, colour) for colour in COLOURS))
    for die in range(1, 7)
    for cell in GRID.cells
}
"""``_MOVES[die, cell]``: the move onto a flower there, and the moves planting each colour of
:data:`COLOURS`, built once."""

_ROLLS: tuple[tuple[Roll, ...], ...] = tuple(
    tuple(Roll(values) for values in itertools.combinations_with_replacement(range(1, 7), n))
    for n in range(7)
)
"""``_ROLLS[n]``: every sorted roll of ``n`` dice, built once (up to 462 a roll phase)."""


# --- state -------------------------------------------------------------------------------


class Phase(StrEnum):
    """Where the game stands; it follows from the rest of the state.

    ``placement`` while a gardener is not on the board; ``over`` once a reserve is empty or at
    the stalemate (the pool is empty and every player would roll 0 dice, Mars #8/#8a);
    otherwise ``roll`` with an empty pool and ``move`` with dice in it.  The flowers are dealt
    by :meth:`MarsRules.new_game` itself (a seeded setup), so a game starts in ``placement``.
    """

    PLACEMENT = "placement"
    ROLL = "roll"
    MOVE = "move"
    OVER = "over"


# The phases by name, for the steps: a member read through its class goes through the enum's
# attribute hook, written in Python (3.11), ten times the cost of a module name, steps apiece.
_PLACEMENT, _ROLL, _MOVE, _OVER = Phase


class TrackSpace(NamedTuple):
    """Where a score stands on the scoring track: ``space`` 0-50 and ``laps`` completed."""

    space: int
    laps: int


@dataclass(frozen=True, slots=True)
class State:
    """A Mars position; frozen and hashable.  Build one with :func:`position` or
    :meth:`MarsRules.new_game`, never by hand (the phase must agree with the rest).

    ``cells``: the piece under any gardener for every hex in ``GRID.cells`` order: ``""``,
    a colour or ``"peak"``.  ``gardeners[p - 1]``: player ``p``'s hex, ``None`` before
    placement.  ``reserves[p - 1]``: counts in :data:`COLOURS` order.  ``scores``: track
    scores, laps included.  ``planted``: flowers planted (the tiebreak).  ``pool``: the dice
    values on the table, sorted.  ``to_move``: from 1.  ``extra_turn``: the player to move
    is playing an extra turn (Mars #6, #7).  ``peaks``: the places in ``cells`` holding a
    peak, as the bits of one number (``1 << place``), worked out from ``cells`` (peaks never
    move, so a step hands it on).  ``on_board``: the flowers of each colour in ``cells``, in
    :data:`COLOURS` order, worked out from ``cells`` and kept up by each flower planted (a
    flower never leaves the board).
    """

    options: Options
    cells: tuple[str, ...]
    gardeners: tuple[Hex | None, ...]
    reserves: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    planted: tuple[int, ...]
    pool: tuple[int, ...]
    to_move: int
    phase: Phase
    extra_turn: bool = False
    peak_bits: int = field(init=False, repr=False, compare=False)
    on_board: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "peak_bits", _peak_bits(self.cells))
        object.__setattr__(self, "on_board", tuple(map(self.cells.count, COLOURS)))

    @property
    def players(self) -> int:
        """The number of players, 2 to 5."""
        return len(self.gardeners)

    def at(self, cell: Hex) -> str:
        """The piece on ``cell`` without gardeners: ``""``, a colour or ``"peak"``."""
        return self.cells[_INDEX[cell]]

    def reserve(self, player: int) -> dict[str, int]:
        """``{colour: count}`` of player ``player``'s reserve, zeros included."""
        return dict(zip(COLOURS, self.reserves[player - 1], strict=True))


def _peak_bits(cells: Sequence[str]) -> int:
    return sum(1 << place for place, piece in enumerate(cells) if piece == PEAK)


(_SET_OPTIONS, _SET_CELLS, _SET_GARDENERS, _SET_RESERVES, _SET_SCORES, _SET_PLANTED,
 _SET_POOL, _SET_TO_MOVE, _SET_PHASE, _SET_EXTRA_TURN, _SET_PEAK_BITS, _SET_ON_BOARD) = (
    getattr(State, f.name).__set__ for f in fields(State))


def _made(
    state: State,
    cells: tuple[str, ...],
    gardeners: tuple[Hex | None, ...],
    reserves: tuple[tuple[int, ...], ...],
    scores: tuple[int, ...],
    planted: tuple[int, ...],
    pool: tuple[int, ...],
    phase: Phase,
    to_move: int,
    extra_turn: bool,
    on_board: tuple[int, ...] | None = None,
) -> State:
    """The :class:`State` after a step from ``state``, with these parts, its options and peaks
    (which no step changes) and its flowers of each colour (``on_board``, when the step
    plants none): set through its slots, ``peak_bits`` and ``on_board`` handed on rather
    than worked out again from the cells, a third of the time of ``State(...)``, on every
    step."""
    new = object.__new__(State)
    _SET_OPTIONS(new, state.options)
    _SET_CELLS(new, cells)
    _SET_GARDENERS(new, gardeners)
    _SET_RESERVES(new, reserves)
    _SET_SCORES(new, scores)
    _SET_PLANTED(new, planted)
    _SET_POOL(new, pool)
    _SET_TO_MOVE(new, to_move)
    _SET_PHASE(new, phase)
    _SET_EXTRA_TURN(new, extra_turn)
    _SET_PEAK_BITS(new, state.peak_bits)
    _SET_ON_BOARD(new, state.on_board if on_board is None else on_board)
    return new


def track_space(score: int) -> TrackSpace:
    """Where a scoring Martian with ``score`` points stands: space 0 for 0, else
    ``(score - 1) mod 50 + 1``, and the laps completed (``track_space(53) == (3, 1)``).

    docs/RULINGS.md Mars #6.  Raises :class:`InvalidPositionError` for a negative score.
    """
    if score < 0:
        raise InvalidPositionError(f"{score} is not a score; a score is never negative")
    if score == 0:
        return TrackSpace(0, 0)
    return TrackSpace((score - 1) % TRACK_SPACES + 1, (score - 1) // TRACK_SPACES)


def _dice_for(cells: Sequence[str], gardener: Hex) -> int:
    # Mars #2/#9: on-board neighbours with no flower; the centre, a peak and a lone gardener
    # all count.
    return sum(map(_NO_FLOWER.__contains__, map(cells.__getitem__, _NEIGHBOUR_PLACES[gardener])))


_NO_FLOWER = frozenset({EMPTY, PEAK})


def dice_to_roll(state: State) -> int:
    """How many dice the player to move rolls into an empty pool: the on-board hexes next to
    their gardener that hold no flower (0-6; 0 before placement).

    Gardens of Mars, Rolling Dice; docs/RULINGS.md Mars #2 and #9.
    """
    gardener = state.gardeners[state.to_move - 1]
    return 0 if gardener is None else _dice_for(state.cells, gardener)


def _phase(
    cells: Sequence[str],
    gardeners: Sequence[Hex | None],
    reserves: Sequence[Sequence[int]],
    pool: Sequence[int],
) -> Phase:
    if None in gardeners:
        return _PLACEMENT
    if 0 in map(sum, reserves):
        return _OVER
    if pool:
        return _MOVE
    return _roll_or_over(cells, gardeners)


def _roll_or_over(cells: Sequence[str], gardeners: Sequence[Hex | None]) -> Phase:
    """With the pool empty: the roll phase, or over when no gardener has a hex without a
    flower next to it, so that every player would roll 0 dice (Mars #8)."""
    for g in gardeners:
        if g is None or not _NO_FLOWER.isdisjoint(map(cells.__getitem__, _NEIGHBOUR_PLACES[g])):
            return _ROLL
    return _OVER


def _check_players(players: int) -> None:
    if players not in FLOWERS_EACH:
        raise InvalidPositionError(
            f"{players} players cannot play Gardens of Mars; it is for 2 to 5 players")


def position(
    players: int,
    cells: Mapping[Cell, Piece],
    *,
    to_move: int = 1,
    pool: Sequence[int] = (),
    scores: Mapping[int, int] | None = None,
    planted: Mapping[int, int] | None = None,
    reserves: Mapping[int, Mapping[str, int]] | None = None,
    extra_turn: bool = False,
    options: Mapping[str, object] | None = None,
) -> State:
    """A position from its parts, as the case files give them (``docs/CASES.md``).

    ``cells``: ``{"q,r": piece}`` with pieces ``"red"``, ``"peak"``, ``"M1"``, ``"M1+red"``;
    unlisted hexes are empty.  ``scores``/``planted``/``reserves`` are keyed by player (from
    1); missing players and colours are 0.  A player whose gardener is not listed has yet to
    place it.  Raises :class:`InvalidPositionError` naming every problem found, and
    :class:`ConfigError` for bad options.
    """
    opts = read_options(options or {})
    _check_players(players)
    problems: list[str] = []
    board = [EMPTY] * len(GRID)
    gardeners: list[Hex | None] = [None] * players
    for name, piece in cells.items():
        try:
            cell = parse_hex(name)
            info = parse_piece(piece)
        except InvalidStepError as error:
            problems.append(str(error))
            continue
        if cell not in GRID:
            problems.append(f"{name} is off the 91-hex board.")
            continue
        if info.kind == "empty":
            continue
        if cell == CENTRE:
            problems.append("The central space 0,0 never holds a piece.")
            continue
        if info.colour and info.colour not in COLOURS:
            problems.append(f"{piece!r} on {name}: Mars flowers are {', '.join(COLOURS)}.")
            continue
        if info.kind == "martian":
            if not 1 <= info.player <= players:
                problems.append(f"{piece!r} on {name}: there is no player {info.player}.")
            elif gardeners[info.player - 1] is not None:
                problems.append(f"Player {info.player}'s gardener is on the board twice.")
            else:
                gardeners[info.player - 1] = cell
            board[_INDEX[cell]] = info.colour
        elif info.kind in ("flower", "peak"):
            board[_INDEX[cell]] = info.colour or PEAK
        else:
            problems.append(f"{piece!r} on {name} is not a Gardens of Mars piece.")
    reserve_rows: list[tuple[int, ...]] = []
    for player in range(1, players + 1):
        counts = dict((reserves or {}).get(player, {}))
        unknown = set(counts) - set(COLOURS)
        if unknown:
            problems.append(f"Player {player}'s reserve holds unknown colours {sorted(unknown)}.")
        row = tuple(counts.get(c, 0) for c in COLOURS)
        if any(n < 0 for n in row):
            problems.append(f"Player {player}'s reserve has a negative count.")
        reserve_rows.append(row)
    # Only the board is held to the 10 flowers of a colour: case positions give reserves
    # for illustration, not a full deal.
    for colour in COLOURS:
        if board.count(colour) > FLOWERS_PER_COLOUR:
            problems.append(f"The board holds {board.count(colour)} {colour} flowers; "
                            f"the game has only {FLOWERS_PER_COLOUR}.")
    if len(pool) > 6 or any(not 1 <= v <= 6 for v in pool):
        problems.append(f"The pool holds at most 6 dice of 1 to 6, not {list(pool)}.")
    score_row = tuple((scores or {}).get(p, 0) for p in range(1, players + 1))
    planted_row = tuple((planted or {}).get(p, 0) for p in range(1, players + 1))
    if any(n < 0 for n in score_row + planted_row):
        problems.append("Scores and planted counts are never negative.")
    if not 1 <= to_move <= players:
        problems.append(f"Player {to_move} cannot be to move in a {players}-player game.")
    if any(g is None for g in gardeners) and pool:
        problems.append("Dice are rolled only once every gardener is on the board.")
    if problems:
        raise InvalidPositionError(" ".join(problems))
    return State(
        options=opts,
        cells=tuple(board),
        gardeners=tuple(gardeners),
        reserves=tuple(reserve_rows),
        scores=score_row,
        planted=planted_row,
        pool=tuple(sorted(pool)),
        to_move=to_move,
        phase=_phase(board, gardeners, reserve_rows, pool),
        extra_turn=extra_turn,
    )


# --- moves -------------------------------------------------------------------------------


def _obstacle(state: State, path: Sequence[Hex], others: frozenset[Hex]) -> tuple[str, str] | None:
    """Why a gardener cannot travel ``path`` (its last hex the landing) and the rule that
    says so, or ``None`` when it can (Mars #3, #9)."""
    cells = state.cells
    for cell in path:
        if cell in others:
            return f"a gardener on {hex_name(cell)} is in the way", RULE_MOVE
        if cells[_INDEX[cell]] == PEAK:
            return f"the peak on {hex_name(cell)} is in the way", RULE_PEAKS
    if path[-1] == CENTRE:
        return ("0,0 is the central space; a gardener may pass over it but never stop on it",
                RULE_CENTRE)
    if state.options.center_blocks_path and CENTRE in path:
        return "the central space 0,0 is in the way (option center_blocks_path)", RULE_CENTRE
    return None


def _others(state: State) -> frozenset[Hex]:
    mover, gardeners = state.to_move - 1, state.gardeners
    return frozenset(g for g in gardeners[:mover] + gardeners[mover + 1:] if g is not None)


_BIT: Mapping[Hex | None, int] = {None: 0} | {cell: 1 << i for cell, i in _INDEX.items()}
"""``1 << place`` of each hex (its place in ``State.cells``): a set of hexes is the bits of
one number, and whether a path is clear one ``&``.  ``None`` (a gardener not placed) has
none."""

_Route: TypeAlias = tuple[int, int, Move, tuple[Move, ...]]



def _routes_from(start: Hex) -> tuple[tuple[_Route, ...], ...]:
    """``_ROUTES[start]``, walked out along each ray of ``start`` in turn: a path's bits are
    those of the path one hex shorter and its landing's."""
    by_die: list[list[_Route]] = [[] for _ in range(7)]
    for ray in GRID.rays[start]:
        bits = 0
        for die, cell in enumerate(ray[:6], start=1):
            bits |= _BIT[cell]
            if cell != CENTRE:
                by_die[die].append((bits, _INDEX[cell], *_MOVES[die, cell]))
    return tuple(map(tuple, by_die))


_ROUTES: Mapping[Hex, tuple[tuple[_Route, ...], ...]] = {
    start: _routes_from(start) for start in GRID.cells
}
"""``_ROUTES[start][die]``: each path a gardener on ``start`` travels with a ``die``, one per
direction that stays on the board, in :data:`~companion.rules.hexes.DIRECTIONS` order, that
does not end on the central space: the bits of its hexes (:data:`_BIT`, the landing's
included), the landing's place in ``State.cells`` and the moves there (:data:`_MOVES`);
``()`` for a die of 0."""

_ROUTE_TO: Mapping[tuple[Hex, int, Hex], tuple[int, int]] = {
    (start, die, GRID.cells[place]): (bits, place)
    for start, by_die in _ROUTES.items()
    for die, routes in enumerate(by_die)
    for bits, place, _, _ in routes
}
"""``_ROUTE_TO[start, die, landing]``: the bits and the landing's place of that route."""

_CENTRE_BIT = _BIT[CENTRE]


def _blocked(state: State) -> int:
    """The hexes no path of the gardener to move may cross or end on, as bits: the peaks,
    every gardener (its own hex is on none of its paths) and, with the option
    ``center_blocks_path``, the central space (Mars #3, #9)."""
    bits = state.peak_bits | (_CENTRE_BIT if state.options.center_blocks_path else 0)
    for cell in state.gardeners:
        bits |= _BIT[cell]
    return bits


def _group_size(cells: Sequence[str], place: int) -> int:
    """The size of the group of flowers of one colour connected to the flower at ``place``
    (``State.cells`` order), itself included."""
    colour = cells[place]
    if colour not in map(cells.__getitem__, _NEIGHBOUR_PLACES[place]):
        return 1  # alone, the most common case: told in C
    group, stack = {place}, [place]
    while stack:
        for n in _NEIGHBOUR_PLACES[stack.pop()]:
            if n not in group and cells[n] == colour:
                group.add(n)
                stack.append(n)
    return len(group)


def _reach(state: State, die: int, blocked: int | None = None) -> Iterator[Hex]:
    """Where die ``die`` takes the gardener to move (``blocked``: :func:`_blocked`, when
    known): the tests of :func:`_obstacle`, made at once on the bits of each path."""
    start = state.gardeners[state.to_move - 1]
    if start is None:
        return
    if blocked is None:
        blocked = _blocked(state)
    cells = GRID.cells
    for bits, place, _, _ in _ROUTES[start][die]:
        if not bits & blocked:
            yield cells[place]


def destinations(state: State, die: int | None = None) -> frozenset[Hex]:
    """The hexes the player to move may land on with the pool die ``die`` (with any pool
    die when ``None``); empty outside the move phase or for a value not in the pool.

    Gardens of Mars, Moving and Planting; docs/RULINGS.md Mars #3.
    """
    if state.phase is not _MOVE:
        return frozenset()
    dice = set(state.pool) if die is None else {die} & set(state.pool)
    blocked = _blocked(state)
    return frozenset(cell for d in dice for cell in _reach(state, d, blocked))


def _can_move(state: State) -> bool:
    blocked = _blocked(state)
    return any(next(_reach(state, d, blocked), None) is not None for d in set(state.pool))


_PLACEABLE: tuple[int, ...] = tuple(i for i, cell in enumerate(GRID.cells) if cell != CENTRE)
"""The places in ``State.cells`` of every hex but the central space."""
_PLACE_AT: tuple[Place, ...] = tuple(_PLACES[cell] for cell in GRID.cells)
"""``_PLACE_AT[place]``: the placement on the hex at that place of ``State.cells``."""

_PLACEABLE_NAMED: Mapping[Cell, int] = {_NAMES[place]: place for place in _PLACEABLE}
"""The place in ``State.cells`` of every hex but the central space, by its name."""

_DISCARDS: tuple[Discard, ...] = tuple(Discard(die) for die in range(7))
"""``_DISCARDS[die]``: the discard of that die, built once."""


def _placements(state: State) -> list[Place]:
    """The placements of :meth:`MarsRules.legal_steps` in the placement phase: every empty hex
    but the central space (Gardens of Mars, Setup)."""
    cells = state.cells
    taken = {_INDEX[g] for g in state.gardeners if g is not None}
    return [_PLACE_AT[place] for place in _PLACEABLE if not cells[place] and place not in taken]


def _moves(state: State) -> list[Step]:
    """The moves, else the discards, of :meth:`MarsRules.legal_steps` in the move phase, in
    one list of steps made once at import: :func:`_reach` inline, as a listing a step."""
    start = state.gardeners[state.to_move - 1]
    assert start is not None  # the move phase has every gardener placed
    reserve = state.reserves[state.to_move - 1]
    every_colour = all(reserve)  # as most of a game: no colour to leave out
    cells, routes, blocked = state.cells, _ROUTES[start], _blocked(state)
    steps: list[Step] = []
    append, extend, last = steps.append, steps.extend, 0
    for die in state.pool:
        if die == last:  # each value once: the pool is sorted
            continue
        last = die
        for bits, place, onto_flower, planting in routes[die]:
            if not bits & blocked:
                if cells[place]:
                    append(onto_flower)
                elif every_colour:
                    extend(planting)
                else:
                    extend(itertools.compress(planting, reserve))  # the colours in reserve
    if not steps:
        return [_DISCARDS[die] for die in sorted(set(state.pool))]
    return steps


# --- applying steps ----------------------------------------------------------------------


def _gain(state: State, player: int, points: int) -> tuple[int, bool]:
    """The new score after gaining ``points`` and whether the above-25 extra turn is earned.

    docs/RULINGS.md Mars #6: leapfrog over occupied spaces (the jumped spaces count); the
    extra turn when the would-be space is above 25 and occupied.
    """
    scores, i = state.scores, player - 1
    score = scores[i] + points
    if points == 0 or not state.options.track_extra_turns:
        return score, False
    # track_space(s).space, inline: every flower planted asks it of every score
    occupied = {(s - 1) % TRACK_SPACES + 1 for s in scores[:i] + scores[i + 1 :] if s}
    first = (score - 1) % TRACK_SPACES + 1
    while (score - 1) % TRACK_SPACES + 1 in occupied:
        score += 1
    return score, first > EXTRA_TURN_ABOVE and first in occupied


def _lose_point(scores: tuple[int, ...], player: int) -> tuple[int, ...]:
    # Gardens of Mars, Moving and Planting: minus one, never below 0, no leapfrog (Mars #6).
    i = player - 1
    return scores[:i] + (max(0, scores[i] - 1),) + scores[i + 1 :]


def _next_player(state: State) -> int:
    """The player after the one to move in ``state``: the turn passes once a die is used
    with no extra turn (Mars #8: while dice are left, only with one) or no die is rolled."""
    return state.to_move % len(state.gardeners) + 1


def _after_die(cells: Sequence[str], gardeners: Sequence[Hex | None], pool: tuple[int, ...],
               emptied: bool) -> Phase:
    """:func:`_phase` after a move, the move phase's reserves all holding flowers but the
    mover's, which is ``emptied`` or not."""
    if emptied:
        return _OVER
    if pool:
        return _MOVE
    return _roll_or_over(cells, gardeners)


def _illegal(reason: str, rule: str, step: Step) -> IllegalMoveError:
    return IllegalMoveError(reason, rule=rule, step=format_step(step))


def _apply_place(state: State, step: Place) -> State:
    if state.phase is not _PLACEMENT:
        raise _illegal("the dice are rolled already; gardeners are placed only before the first "
                      "roll", RULE_SETUP, step)
    if step.cell not in GRID:
        raise _illegal(f"{hex_name(step.cell)} is off the board", RULE_SETUP, step)
    if step.cell == CENTRE:
        raise _illegal("0,0 is the central space; no gardener may stand on it", RULE_SETUP, step)
    if state.at(step.cell) != EMPTY or step.cell in state.gardeners:
        raise _illegal(f"{hex_name(step.cell)} is not empty; place your gardener on an empty hex",
                      RULE_SETUP, step)
    if state.gardeners[state.to_move - 1] is not None:
        raise _illegal("your gardener is already on the board", RULE_SETUP, step)
    gardeners = replaced(state.gardeners, state.to_move - 1, step.cell)
    # The next player in turn order still to place; after the last placement player 1 rolls.
    order = [(state.to_move + k) % state.players + 1 for k in range(state.players)]
    waiting = [p for p in order if gardeners[p - 1] is None]
    return _made(state, state.cells, gardeners, state.reserves, state.scores, state.planted,
                 state.pool, _phase(state.cells, gardeners, state.reserves, state.pool),
                 waiting[0] if waiting else 1, state.extra_turn)


def _apply_roll(state: State, step: Roll) -> State:
    if state.phase is not _ROLL:
        reason = (
            "there are dice in the pool; use one of them"
            if state.phase is _MOVE
            else "a gardener is still to be placed; dice are rolled once every gardener is"
        )
        raise _illegal(reason, RULE_ROLL, step)
    count = dice_to_roll(state)
    if len(step.values) != count:
        raise _illegal(
            f"{len(step.values)} dice are rolled; roll {count}, one for each hex without a "
            "flower next to your gardener",
            RULE_ROLL,
            step,
        )
    if step.values and not (step.values[0] >= 1 and step.values[-1] <= 6):  # sorted values
        raise _illegal(f"{next(v for v in step.values if not 1 <= v <= 6)} is not a die value; a "
                      "die shows 1 to 6", RULE_ROLL, step)
    if not step.values:
        phase = _roll_or_over(state.cells, state.gardeners)
        return _made(state, state.cells, state.gardeners, state.reserves, state.scores,
                     state.planted, (), phase, _next_player(state), False)
    return _made(state, state.cells, state.gardeners, state.reserves, state.scores,
                 state.planted, step.values, _MOVE, state.to_move, state.extra_turn)


def _pool_without(pool: tuple[int, ...], die: int) -> tuple[int, ...]:
    i = pool.index(die)
    return pool[:i] + pool[i + 1 :]


def _check_die(state: State, step: Move | Discard) -> None:
    if state.phase is not _MOVE:
        reason = (
            "a gardener is still to be placed; place every gardener first"
            if state.phase is _PLACEMENT
            else "the pool is empty; roll the dice first"
        )
        raise _illegal(reason, RULE_TURN, step)
    if step.die not in state.pool:
        raise _illegal(f"there is no {step.die} in the pool", RULE_MOVE, step)


def _apply_move(state: State, step: Move) -> State:
    pool = state.pool
    if state.phase is not _MOVE or step.die not in pool:
        _check_die(state, step)
    player = state.to_move
    start = state.gardeners[player - 1]
    assert start is not None  # the move phase has every gardener placed
    route = _ROUTE_TO.get((start, step.die, step.to))
    if route is None or route[0] & _blocked(state):
        raise _move_refusal(state, step)
    place = route[1]
    cells = state.cells
    under = cells[place]
    pool = _pool_without(pool, step.die)
    i = player - 1
    gardeners = state.gardeners
    gardeners = gardeners[:i] + (step.to,) + gardeners[i + 1 :]
    if under != EMPTY:
        if step.plant is not None:
            raise _illegal(
                f"{hex_name(step.to)} already holds a {under} flower; nothing is planted there",
                RULE_MOVE,
                step,
            )
        phase = _after_die(cells, gardeners, pool, False)
        return _made(state, cells, gardeners, state.reserves, _lose_point(state.scores, player),
                     state.planted, pool, phase, _next_player(state), False)
    if step.plant is None:
        raise _illegal(
            f"{hex_name(step.to)} is empty and nothing is planted; on an empty hex the "
            "gardener plants a flower from your reserve", RULE_MOVE, step
        )
    if step.plant not in COLOURS:
        raise _illegal(f"{step.plant!r} is not a flower colour of Gardens of Mars; the colours "
                      "are " + ", ".join(COLOURS), RULE_MOVE, step)
    colour = COLOURS.index(step.plant)
    row = state.reserves[i]
    if row[colour] == 0:
        raise _illegal(f"you have no {step.plant} flower left", RULE_MOVE, step)
    cells = cells[:place] + (step.plant,) + cells[place + 1 :]
    group = _group_size(cells, place)
    options = state.options
    # Mars #5: the whole group scores; the rulebook reading leaves the new flower out.
    points = group - 1 if options.plant_score == "connected_only" else group
    score, track_extra = _gain(state, player, points)
    row = row[:colour] + (row[colour] - 1,) + row[colour + 1 :]
    on_board = state.on_board
    count = on_board[colour] + 1
    on_board = on_board[:colour] + (count,) + on_board[colour + 1 :]
    if options.last_flower == "board":
        last_flower = count == FLOWERS_PER_COLOUR
    else:
        last_flower = row[colour] == 0
    extra = track_extra or (last_flower and options.last_flower_extra_turn)
    reserves, scores, planted = state.reserves, state.scores, state.planted
    phase = _after_die(cells, gardeners, pool, not any(row))
    keep = extra and phase is _MOVE  # an extra turn while dice are left (Mars #8)
    return _made(
        state,
        cells,
        gardeners,
        reserves[:i] + (row,) + reserves[i + 1 :],
        scores[:i] + (score,) + scores[i + 1 :],
        planted[:i] + (planted[i] + 1,) + planted[i + 1 :],
        pool,
        phase,
        state.to_move if keep else _next_player(state),
        keep,
        on_board,
    )


def _move_refusal(state: State, step: Move) -> IllegalMoveError:
    """Why the gardener cannot go to ``step.to`` with the pool die ``step.die``: off the board,
    not that many hexes away in a straight line, or something in the way."""
    start = state.gardeners[state.to_move - 1]
    assert start is not None  # the move phase has every gardener placed
    if step.to not in GRID:
        return _illegal(f"{hex_name(step.to)} is off the board", RULE_MOVE, step)
    die = step.die  # in the pool: 1 to 6
    path = next((ray[:die] for ray in GRID.rays[start] if ray[die - 1 : die] == (step.to,)),
                None)
    if path is None:
        return _illegal(
            f"{hex_name(step.to)} is not {step.die} hexes away in a straight line; with a "
            f"{step.die} the gardener moves exactly {step.die} hexes in a straight line",
            RULE_MOVE,
            step,
        )
    blocked = _obstacle(state, path, _others(state))
    assert blocked is not None  # the path's bits met a gardener, a peak or the central space
    return _illegal(*blocked, step)


def _apply_discard(state: State, step: Discard) -> State:
    _check_die(state, step)
    if _can_move(state):
        raise _illegal(
            "a die in the pool still gives a legal move; use it, as a die is discarded only "
            "when none can move",
            RULE_DIE,
            step,
        )
    pool = _pool_without(state.pool, step.die)
    phase = _phase(state.cells, state.gardeners, state.reserves, pool)
    return _made(state, state.cells, state.gardeners, state.reserves,
                 _lose_point(state.scores, state.to_move), state.planted, pool, phase,
                 _next_player(state), False)


# --- notation ----------------------------------------------------------------------------


def format_step(step: Step) -> str:
    """A step in the compact notation of the module docstring (``"3>0,1=red"``)."""
    if isinstance(step, Place):
        return "@" + hex_name(step.cell)
    if isinstance(step, Roll):
        return "roll:" + (",".join(map(str, step.values)) or "none")
    if isinstance(step, Discard):
        return f"discard:{step.die}"
    return f"{step.die}>{hex_name(step.to)}" + (f"={step.plant}" if step.plant else "")


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidStepError(f"{text!r} is not {what}") from None


def parse_step(text: str) -> Step:
    """Read a step written by :func:`format_step`.

    Raises :class:`InvalidStepError` with a sentence saying what was expected.
    """
    text = text.strip()
    if text.startswith("@"):
        return Place(parse_hex(text[1:]))
    if text.startswith("roll:"):
        body = text[5:]
        if body == "none":
            return Roll(())
        return Roll(tuple(_int(v, "a die value") for v in body.split(",")))
    if text.startswith("discard:"):
        return Discard(_int(text[8:], "a die value"))
    die, sep, rest = text.partition(">")
    if not sep:
        raise InvalidStepError(
            f"{text!r} is not a Mars step; write @q,r (place), roll:3,5, 3>q,r=colour "
            "(move and plant), 3>q,r (move onto a flower) or discard:4"
        )
    cell, _, plant = rest.partition("=")
    if plant and plant not in COLOURS:
        raise InvalidStepError(f"{plant!r} is not a flower colour of Gardens of Mars; the "
                               "colours are " + ", ".join(COLOURS))
    return Move(_int(die, "a die value"), parse_hex(cell), plant or None)


def _format_fields(state: State, board: Mapping[Cell, Piece]) -> str:
    def ints(values: Sequence[int]) -> str:
        return ",".join(map(str, values)) or "-"

    options = ",".join(
        f"{k}:{str(v).lower() if isinstance(v, bool) else v}"
        for k, v in state.options.non_defaults().items()
    )
    cells = ";".join(f"{c}={p}" for c, p in board.items() if p != EMPTY)
    return " ".join(
        (
            "mars",
            f"players={state.players}",
            f"to_move={state.to_move}",
            f"extra={'yes' if state.extra_turn else 'no'}",
            f"pool={ints(state.pool)}",
            f"scores={ints(state.scores)}",
            f"planted={ints(state.planted)}",
            "reserves=" + "/".join(".".join(map(str, r)) for r in state.reserves),
            f"cells={cells or '-'}",
            f"options={options or '-'}",
        )
    )


def _option_value(text: str) -> bool | int | str:
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isascii() and text.isdigit() else text


def _pairs(body: str, entry_sep: str, pair_sep: str, what: str) -> dict[str, str]:
    """``"a=1;b=2"`` -> ``{"a": "1", "b": "2"}``; ``"-"`` is empty."""
    pairs: dict[str, str] = {}
    for entry in [] if body == "-" else body.split(entry_sep):
        key, sep, value = entry.partition(pair_sep)
        if not sep:
            raise InvalidStepError(f"{entry!r} in {what} is not a pair; write key{pair_sep}value")
        pairs[key] = value
    return pairs


def _parse_fields(text: str) -> State:
    words = text.split()
    if not words or words[0] != "mars":
        raise InvalidStepError(f"{text[:20]!r} is not a Gardens of Mars position; it starts "
                               "with the word 'mars'")
    found = _pairs(" ".join(words[1:]) or "-", " ", "=", "the position")
    needed = ("players", "to_move", "extra", "pool", "scores", "planted", "reserves", "cells",
              "options")
    missing = [k for k in needed if k not in found]
    if missing:
        raise InvalidStepError("the Gardens of Mars position lacks " + ", ".join(missing))

    def ints(field: str) -> list[int]:
        body = found[field]
        return [] if body == "-" else [_int(v, f"a number in {field}") for v in body.split(",")]

    players = _int(found["players"], "a number of players")
    rows = found["reserves"].split("/")
    if {len(ints("scores")), len(ints("planted")), len(rows)} != {players}:
        raise InvalidStepError(
            f"scores, planted and reserves do not give one entry for each of the {players} "
            "players; give one each"
        )
    reserves: dict[int, dict[str, int]] = {}
    for player, row in enumerate(rows, start=1):
        counts = [_int(v, "a reserve count") for v in row.split(".")]
        if len(counts) != len(COLOURS):
            raise InvalidStepError(f"player {player}'s reserve gives {len(counts)} counts; give "
                                   f"{len(COLOURS)}, in colour order")
        reserves[player] = dict(zip(COLOURS, counts, strict=True))
    options = _pairs(found["options"], ",", ":", "options")
    if found["extra"] not in ("yes", "no"):
        raise InvalidStepError(f"extra={found['extra']} is not yes or no; write extra=yes or "
                               "extra=no")
    try:
        return position(
            players,
            _pairs(found["cells"], ";", "=", "cells"),
            to_move=_int(found["to_move"], "a player"),
            pool=ints("pool"),
            scores=dict(enumerate(ints("scores"), start=1)),
            planted=dict(enumerate(ints("planted"), start=1)),
            reserves=reserves,
            extra_turn=found["extra"] == "yes",
            options={key: _option_value(value) for key, value in options.items()},
        )
    except (InvalidPositionError, ConfigError) as error:
        raise InvalidStepError(f"not a Gardens of Mars position: {error}") from error


# --- the GameRules seam ------------------------------------------------------------------


# --- setups laid out by hand, reserves dealt by hand ---------------------------------------


def setup_problems(state: State, observed: Mapping[Cell, Piece]) -> list[SetupProblem]:
    """The setup conditions a board laid out by hand breaks (Gardens of Mars, Setup;
    docs/RULINGS.md Mars #1, #9), each with the hexes to blame; ``[]`` for a legal setup.

    ``state`` is a fresh game (its options); ``observed`` maps hexes to pieces (a missing
    hex reads empty).  The board starts empty (the hexes that hold a piece); with the
    ``peaks`` option it holds that many peaks (too many: the peaks), none on the central
    space, no two next to each other (the peaks that touch another).
    """
    pieces = {name: observed.get(name, EMPTY) for name in _NAMES}
    problems: list[SetupProblem] = []
    allowed = (PEAK,) if state.options.peaks else ()
    stray = tuple(name for name, piece in pieces.items()
                  if piece and (piece not in allowed or name == _NAMES[_INDEX[CENTRE]]))
    if stray:
        but = " but for its peaks, off the central space" if allowed else ""
        problems.append(SetupProblem(
            f"The board is empty at the start{but}: clear {listed(stray)}.", stray))
    if allowed:
        peaks = tuple(name for name, piece in pieces.items()
                      if piece == PEAK and name not in stray)
        want = state.options.peaks
        if len(peaks) > want:
            problems.append(SetupProblem(
                f"The board has {len(peaks)} peaks, {len(peaks) - want} too many: the game "
                f"is set for {want}.", peaks))
        elif len(peaks) < want:
            problems.append(SetupProblem(
                f"The board has {len(peaks)} peaks, {want - len(peaks)} too few: the game "
                f"is set for {want}.", ()))
        at = {parse_hex(name) for name in peaks}
        touching = tuple(name for name in peaks
                         if not at.isdisjoint(GRID.neighbours[parse_hex(name)]))
        if touching:
            problems.append(SetupProblem(
                f"No two peaks stand next to each other: {listed(touching)} do.", touching))
    return problems


def adopt_setup(state: State, observed: Mapping[Cell, Piece]) -> State:
    """``state`` (a fresh game) with the peaks of ``observed`` in place of its seeded ones (a
    board without the variant is empty: the state is unchanged).  Raises
    :class:`InvalidPositionError` naming every problem :func:`setup_problems` finds."""
    problems = setup_problems(state, observed)
    if problems:
        raise setup_refused(problems)
    cells = tuple(PEAK if observed.get(name, EMPTY) == PEAK else EMPTY for name in _NAMES)
    return replace(state, cells=cells)


class MarsRules(GardenerRules[State, Step]):
    """Gardens of Mars behind the :class:`companion.rules.base.GameRules` seam; the one
    instance is :data:`RULES`.  Every method is pure."""

    name: ClassVar[str] = "mars"
    colours: ClassVar[tuple[str, ...]] = COLOURS
    flowers_per_colour: ClassVar[int] = FLOWERS_PER_COLOUR

    def new_game(self, players: int, seed: int, options: Mapping[str, object]) -> State:
        """A fresh game: the 60 flowers dealt at random (2p 30 each, 3p 20, 4p 15, 5p 12) and,
        with the ``peaks`` option, that many peaks on non-adjacent, non-central hexes; then
        the players place their gardeners in turn order.

        Gardens of Mars, Setup; docs/RULINGS.md Mars #1, #9.  Raises :class:`ConfigError`
        for a bad option, :class:`InvalidPositionError` for fewer than 2 or more than 5
        players.
        """
        opts = read_options(options)
        _check_players(players)
        rng = random.Random(seed)
        reserves = deal_flowers(rng, COLOURS, FLOWERS_PER_COLOUR, players, FLOWERS_EACH[players])
        cells = [EMPTY] * len(GRID)
        spots = [c for c in GRID.cells if c != CENTRE] if opts.peaks else []
        rng.shuffle(spots)  # the seed's last draw: skipped without peaks, which changes nothing
        taken: set[Hex] = set()
        for spot in spots:
            if len(taken) == opts.peaks:
                break
            if taken.isdisjoint(GRID.neighbours[spot]):
                taken.add(spot)
                cells[_INDEX[spot]] = PEAK
        return State(
            options=opts,
            cells=tuple(cells),
            gardeners=(None,) * players,
            reserves=reserves,
            scores=(0,) * players,
            planted=(0,) * players,
            pool=(),
            to_move=1,
            phase=_PLACEMENT,
        )

    def layout(self, state: State) -> tuple[Cell, ...]:
        """The 91 hexes as ``"q,r"`` names, in ``GRID.cells`` order."""
        return _NAMES

    def board(self, state: State) -> dict[Cell, Piece]:
        """Every hex to its piece: ``""``, a colour, ``"peak"``, ``"M1"`` (a gardener on an
        empty hex) or ``"M1+red"`` (a gardener on a red flower)."""
        board = dict(zip(_NAMES, state.cells, strict=True))
        for player, cell in enumerate(state.gardeners, start=1):
            if cell is not None:
                board[GRID.names[cell]] = gardener(player, state.at(cell))
        return board

    def legal_steps(self, state: State) -> Sequence[Step]:
        """Every legal step, in one sequence: placements; every sorted roll of :func:`dice_to_roll`
        dice (``Roll(())`` alone when 0); for each distinct pool value its moves (one per
        colour in the reserve onto an empty hex); the discards when no die can move."""
        phase = state.phase
        if phase is _MOVE:
            return _moves(state)
        if phase is _ROLL:
            return _ROLLS[dice_to_roll(state)]
        if phase is _PLACEMENT:
            return _placements(state)
        return ()

    def apply(self, state: State, step: Step) -> State:
        """The state after ``step``: scores, reserves, pool, extra turns and the turn passing
        as the rules say (module docstring for the sources).

        Raises :class:`IllegalMoveError` with the reason and the rule when ``step`` is not
        legal in ``state`` (every step once the game is over).
        """
        if state.phase is _OVER:
            raise _illegal("the game is over", RULE_END, step)
        if isinstance(step, Move):  # the most common first
            return _apply_move(state, step)
        if isinstance(step, Roll):
            return _apply_roll(state, step)
        if isinstance(step, Place):
            return _apply_place(state, step)
        return _apply_discard(state, step)

    def _placements_on(self, state: State, cell: Cell) -> Iterator[Step]:
        # One look-up, not every placement listed: asked for each cell next to a placement.
        place = _PLACEABLE_NAMED.get(cell)
        if (state.phase is _PLACEMENT and place is not None and not state.cells[place]
                and all(g is None or _INDEX[g] != place for g in state.gardeners)):
            yield _PLACE_AT[place]

    def _moves_onto(self, state: State, landing: Cell | None) -> Iterator[Step]:
        # rolls and discards touch nothing: not candidates of a touched hex
        for step in _moves(state) if state.phase is _MOVE else ():
            if isinstance(step, Move) and landing in (None, GRID.names[step.to]):
                yield step

    def _landing(self, move: Step) -> Hex:
        assert isinstance(move, Move)  # one of _moves_onto
        return move.to

    def _flower_on(self, state: State, spot: Hex) -> str:
        return state.at(spot)

    def changes(self, state: State, step: Step) -> dict[Cell, Piece]:
        """The hexes a legal ``step`` changes, with their new pieces: the placed gardener;
        the hex left (its flower stays) and the landing (``"M1+red"``); nothing for rolls
        and discards."""
        player = state.to_move
        if isinstance(step, Place):
            return {GRID.names[step.cell]: martian(player)}
        if isinstance(step, Move):
            start = state.gardeners[player - 1]
            assert start is not None  # a legal move has its gardener placed
            return move_changes(player, start, state.at(start), step.to,
                                step.plant or state.at(step.to))
        return {}

    def outcome(self, state: State) -> Outcome | None:
        """``None`` while the game goes on; else the winners by score, then flowers planted,
        still tied shared, and the ranking ``(player, "27 pts", rank points)`` best first,
        rank points being ``(N - 1) - (players strictly better)``.

        Gardens of Mars, Game End; docs/RULINGS.md Mars #8a.
        """
        if state.phase is not _OVER:
            return None
        keys = list(zip(state.scores, state.planted, strict=True))
        outcome = ranked(keys, [f"{s} pts" for s in state.scores], "no one can move or roll")
        emptied = [p for p, _, _ in outcome.ranking if not any(state.reserves[p - 1])]
        if emptied:
            return Outcome(outcome.winners, f"player {emptied[0]} planted their last flower",
                           outcome.ranking)
        return outcome

    def choice_path(self, state: State, step: Step) -> tuple[str, ...]:
        """What the board cannot show of ``step``: the colour planted (a presence board
        sees only "occupied"), the values rolled, the die discarded.  The die of a move is
        never asked: the distance moved is its value."""
        if isinstance(step, Move) and step.plant:
            return (f"plant {step.plant}",)
        if isinstance(step, Roll):
            return ("roll " + (" ".join(map(str, step.values)) or "none"),)
        if isinstance(step, Discard):
            return (f"discard {step.die}",)
        return ()

    def format_step(self, state: State, step: Step) -> str:
        """``step`` in the notation of the module docstring, e.g. ``"3>0,1=red"``."""
        return format_step(step)

    def parse_step(self, state: State, text: str) -> Step:
        """Read :meth:`format_step`'s notation.  Raises :class:`InvalidStepError`."""
        return parse_step(text)

    def format_position(self, state: State) -> str:
        """The whole state on one line (module docstring)."""
        return _format_fields(state, self.board(state))

    def parse_position(self, text: str) -> State:
        """Read :meth:`format_position` back.  Raises :class:`InvalidStepError` for bad syntax
        and for a position the rules do not allow."""
        return _parse_fields(text)

    # -- setups laid out by hand (the GameRules seam)
    def setup_problems(self, state: State, board: Mapping[Cell, Piece]) -> list[SetupProblem]:
        return setup_problems(state, board)

    def adopt_setup(self, state: State, board: Mapping[Cell, Piece]) -> State:
        return adopt_setup(state, board)



RULES = MarsRules()
"""The Gardens of Mars rules core."""


# --- the case adapter --------------------------------------------------------------------


class MarsCases:
    """The case-file adapter (``companion.rules.cases.CaseAdapter``) for Gardens of Mars."""

    def position(self, case: Case) -> State:
        """The state of ``case["position"]`` (of the shape docs/CASES.md gives) with
        ``case["options"]``.  Raises :class:`InvalidPositionError` naming every problem (see
        :func:`position`; also a reserve beyond the deal, more than 60 flowers in all) or
        :class:`ConfigError`."""
        pos = case["position"]

        def per_player(key: Literal["scores", "planted", "reserves"]) -> dict[int, JsonTree]:
            return {int(p): v for p, v in pos.get(key, {}).items()}

        # The supply: reserves need not be a whole deal, but no player holds more than
        # they were dealt, and board and reserves together hold at most the 60 flowers.
        players = int(pos["players"])
        _check_players(players)
        held = {p: sum(r.values()) for p, r in pos.get("reserves", {}).items()}
        problems = overdealt(pos.get("reserves", {}), players)
        cells = pos.get("cells", {}).values()
        planted = sum(1 for piece in cells if piece.split("+")[-1] in COLOURS)
        if planted + sum(held.values()) > FLOWERS_PER_COLOUR * len(COLOURS):
            problems.append(
                f"position: {planted + sum(held.values())} flowers on the board and in the "
                f"reserves; the game has {FLOWERS_PER_COLOUR * len(COLOURS)}")
        if problems:
            raise InvalidPositionError("; ".join(problems))

        return position(
            players,
            pos.get("cells", {}),
            to_move=int(pos.get("to_move", 1)),
            pool=pos.get("pool", []),
            scores=per_player("scores"),
            planted=per_player("planted"),
            reserves=per_player("reserves"),
            options=case.get("options", {}),
        )

    def step(self, state: State, step: MarsStep) -> Step:
        """A case step: ``{"place"}``, ``{"roll"}``, ``{"die", "to", "plant"?}`` or
        ``{"discard"}``.  Raises :class:`InvalidStepError` for any other shape."""
        if "place" in step:
            return Place(parse_hex(step["place"]))
        if "roll" in step:
            return Roll(tuple(step["roll"]))
        if "discard" in step:
            return Discard(int(step["discard"]))
        if "die" in step and "to" in step:
            return Move(int(step["die"]), parse_hex(step["to"]), step.get("plant"))
        raise InvalidStepError(f"{dict(step)!r} is not a Gardens of Mars step")

    def snapshot(self, state: State) -> Answer:
        """``cells`` (every occupied hex), ``reserves``, ``scores``, ``to_move``, ``over``."""
        players = range(1, state.players + 1)
        return {
            "cells": {c: p for c, p in RULES.board(state).items() if p != EMPTY},
            "reserves": {str(p): state.reserve(p) for p in players},
            "scores": {str(p): state.scores[p - 1] for p in players},
            "to_move": state.to_move,
            "over": state.phase is _OVER,
        }

    def query(self, state: State, name: str, arg: JsonTree) -> Answer:
        """Answer ``legal_moves`` (``{"die": n}`` optional), ``dice_to_roll`` or ``outcome``.
        Raises :class:`InvalidStepError` for another query."""
        if name == "legal_moves":
            cells = destinations(state, arg.get("die"))
            return {"destinations": [GRID.names[c] for c in cells]}
        if name == "dice_to_roll":
            return {"count": dice_to_roll(state)}
        if name == "outcome":
            outcome = RULES.outcome(state)
            winners = list(outcome.winners) if outcome else []
            return {"over": outcome is not None, "winners": winners}
        raise InvalidStepError(f"{name!r} is not a query of Gardens of Mars cases")


CASES = MarsCases()
"""The case-file adapter for Gardens of Mars."""
