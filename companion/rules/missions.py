"""Gardens of Uranus mission cards: names, the card catalogue and their values on a garden.

Pure functions, no I/O.  A mission is named canonically as in ``docs/CASES.md``:
``biggest_group:C groups:C longest_line:C triangle:C edge_trees:C pairs:C1-C2 hexagon``
(``C`` one of :data:`COLOURS`; a pair is written with its colours in :data:`COLOURS` order,
so ``pairs:red-blue`` is read as ``pairs:blue-red``).  The 36 cards are one of each of the
25 single-colour missions, the 10 pairs and the Hexagon (docs/RULINGS.md Uranus #3).

Values follow docs/RULINGS.md Uranus #5 (six-way adjacency; lines along the three axes):

========================  ============================================================
``biggest_group:C``       size of the largest connected group of C
``groups:C``              number of connected groups of C (isolated flowers count)
``longest_line:C``        ``2 * (L - 1)`` for the longest run of L consecutive C along an axis
``triangle:C``            the largest triangle (side s, either orientation) with C on its
                          three corners: ``3 * s`` (``triangle_points="perimeter"``, the
                          text) or ``s + 1`` (``"one_side"``, Board Game Arena)
``edge_trees:C``          C flowers on an edge spot or next to a tree, each counted once
``pairs:C1-C2``           adjacent (C1, C2) spot pairs
``hexagon``               0 points: it wins at once (see :func:`hexagon_stands`)
========================  ============================================================

A flower under a gardener is a flower like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from companion.errors import ConfigError, InvalidStepError
from companion.rules.hexes import AXES, DIRECTIONS, Hex, HexGrid, add

COLOURS: tuple[str, ...] = ("blue", "red", "yellow", "green", "purple")
"""The five flower colours, 12 of each (docs/RULINGS.md Uranus #1)."""

SINGLE_KINDS: tuple[str, ...] = (
    "biggest_group",
    "groups",
    "longest_line",
    "triangle",
    "edge_trees",
)
"""The mission kinds with one card per colour."""

HEXAGON = "hexagon"

TRIANGLE_POINTS: tuple[str, ...] = ("perimeter", "one_side")
"""Values of the ``triangle_points`` option, the default first (docs/RULINGS.md Uranus #5)."""

ALL_MISSIONS: tuple[str, ...] = (
    *(f"{kind}:{colour}" for kind in SINGLE_KINDS for colour in COLOURS),
    *(f"pairs:{a}-{b}" for a, b in combinations(COLOURS, 2)),
    HEXAGON,
)
"""The 36 cards' canonical mission names (docs/RULINGS.md Uranus #3)."""

_CANONICAL = frozenset(ALL_MISSIONS)


def parse_mission(text: str) -> str:
    """The canonical name of a mission written ``kind:colour``, ``pairs:c1-c2`` (either
    order) or ``hexagon``; surrounding spaces and case are ignored.

    Raises :class:`InvalidStepError` naming the missions that exist.
    """
    if text in _CANONICAL:
        return text  # the common case: steps and hands built from canonical names
    name = text.strip().lower()
    kind, _, arg = name.partition(":")
    if kind == "pairs":
        first, _, second = arg.partition("-")
        if first in COLOURS and second in COLOURS and first != second:
            a, b = sorted((first, second), key=COLOURS.index)
            return f"pairs:{a}-{b}"
    elif name == HEXAGON or (kind in SINGLE_KINDS and arg in COLOURS):
        return name
    raise InvalidStepError(
        f"{text!r} is not a mission card; missions are {', '.join(SINGLE_KINDS)} or pairs "
        f"with a colour ({', '.join(COLOURS)}), e.g. triangle:yellow or pairs:blue-red, "
        f"or hexagon"
    )


_CARD_ID = re.compile(r"[!-)+-~]{1,32}")  # a token of the board's protocol: no space, no '*'


def parse_catalogue(text: str, source: str = "missions.toml") -> dict[str, str]:
    """The card catalogue: TOML text with a ``[cards]`` table of ``card id = "mission"``
    (``config/missions.toml``), as ``{card id: canonical mission}``.

    Every one of the 36 missions must appear exactly once, and every card id must be one the
    board's ``CARD <seq> <card-id>`` can carry: 1-32 printable ASCII characters without spaces
    or ``*``.  Raises :class:`ConfigError` listing every problem found (bad TOML, a card id
    the board cannot send, an unknown mission, a mission twice or missing), each naming
    ``source``.
    """
    import tomllib  # the catalogue is read once, by the daemon: the rules cores never need it

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML ({error})") from None
    except RecursionError:
        raise ConfigError(f"{source}: not valid TOML (its lists or tables nest too deeply to "
                          "read)") from None
    cards = data.get("cards")
    if not isinstance(cards, dict):
        raise ConfigError(f'{source}: a [cards] table of card id = "mission" is needed')
    problems: list[str] = []
    catalogue: dict[str, str] = {}
    seen: dict[str, str] = {}
    for card_id, value in cards.items():
        if not _CARD_ID.fullmatch(card_id):
            problems.append(f"{source}: card {card_id!r}: a card id is 1-32 printable characters "
                            "without spaces or '*', as the board's CARD message carries it")
            continue
        try:
            mission = parse_mission(value if isinstance(value, str) else "")
        except InvalidStepError:
            problems.append(f"{source}: card {card_id}: {value!r} is not a mission")
            continue
        if mission in seen:
            problems.append(f"{source}: card {card_id}: {mission} is already card {seen[mission]}")
            continue
        seen[mission] = card_id
        catalogue[card_id] = mission
    missing = [m for m in ALL_MISSIONS if m not in seen]
    if missing:
        problems.append(f"{source}: no card for {', '.join(missing)}")
    if problems:
        raise ConfigError(problems)
    return catalogue


@dataclass(frozen=True, slots=True, eq=False)
class Garden:
    """What the mission cards look at.

    ``grid``: the board's spots; ``flowers``: ``{spot: colour}`` for every spot holding a
    flower (with or without a gardener on it); ``trees``: the tree spots.
    """

    grid: HexGrid
    flowers: Mapping[Hex, str]
    trees: frozenset[Hex]

    def spots_of(self, colour: str) -> set[Hex]:
        """F(colour): the spots holding a flower of ``colour``."""
        return {spot for spot, c in self.flowers.items() if c == colour}


def biggest_group(garden: Garden, colour: str) -> int:
    """Size of the largest connected group of ``colour`` (0 when there is none)."""
    groups = garden.grid.components(garden.spots_of(colour))
    return len(groups[0]) if groups else 0


def groups(garden: Garden, colour: str) -> int:
    """The number of connected groups of ``colour``; an isolated flower is a group."""
    return len(garden.grid.components(garden.spots_of(colour)))


def longest_line(garden: Garden, colour: str) -> int:
    """L, the longest run of consecutive ``colour`` spots along one of the three axes."""
    spots = garden.spots_of(colour)
    best = 0
    for axis in AXES:
        for spot in spots:
            if add(spot, axis, -1) in spots:
                continue  # not the start of a run
            length = 1
            while add(spot, axis, length) in spots:
                length += 1
            best = max(best, length)
    return best


def largest_triangle(garden: Garden, colour: str) -> int:
    """The side s of the largest grid-aligned equilateral triangle whose three corners hold
    ``colour`` (0 when there is none).

    Every such triangle is ``A, A + s*(1,0), A + s*(0,1)`` or ``A, A + s*(1,0), A + s*(1,-1)``
    for one corner A, so both orientations are found from each spot.
    """
    spots = garden.spots_of(colour)
    best = 0
    for corner in spots:
        reach = len(garden.grid.rays[corner][0])
        for other in (DIRECTIONS[1], DIRECTIONS[5]):
            for side in range(best + 1, reach + 1):
                if add(corner, DIRECTIONS[0], side) in spots and add(corner, other, side) in spots:
                    best = side
    return best


def edge_trees(garden: Garden, colour: str) -> int:
    """``colour`` flowers on an edge spot or next to a tree, each counted once."""
    near_trees = {n for tree in garden.trees for n in garden.grid.neighbours[tree]}
    return sum(1 for s in garden.spots_of(colour) if s in garden.grid.edge or s in near_trees)


def pairs(garden: Garden, first: str, second: str) -> int:
    """The adjacent spot pairs holding ``first`` and ``second`` (one pair per connection)."""
    seconds = garden.spots_of(second)
    return sum(
        1 for spot in garden.spots_of(first) for n in garden.grid.neighbours[spot] if n in seconds
    )


@lru_cache(maxsize=4096)
def _hexagons_at(
    grid: HexGrid, corner: Hex, index: int
) -> tuple[tuple[Hex, tuple[Hex, ...]], ...]:
    """``(centre, corners)`` of the regular hexagons of ``grid`` with ``corner`` at
    ``centre + s * DIRECTIONS[index]``, smallest first (memoised: every listing of steps asks
    whether a hexagon stands)."""
    found: list[tuple[Hex, tuple[Hex, ...]]] = []
    spots, (q, r), (dq, dr) = grid.cell_set, corner, DIRECTIONS[index]
    side = 1
    while True:
        centre = (q - side * dq, r - side * dr)
        corners = tuple((centre[0] + side * d[0], centre[1] + side * d[1]) for d in DIRECTIONS)
        if not spots.issuperset(corners):
            return tuple(found)  # the boards are convex: a larger hexagon leaves them too
        found.append((centre, corners))
        side += 1


def _hexagons_with_corner(garden: Garden, corner: Hex, index: int) -> Iterator[Hex]:
    """Centres of the one-colour hexagons with ``corner`` at ``centre + s * DIRECTIONS[index]``."""
    flowers = garden.flowers
    colour = flowers.get(corner)
    if colour is None:
        return
    for centre, corners in _hexagons_at(garden.grid, corner, index):
        if all(flowers.get(c) == colour for c in corners):
            yield centre


def hexagon_stands(garden: Garden) -> bool:
    """Whether six flowers of one colour stand on the corners ``centre + s*d`` (s >= 1, d the
    six directions) of some regular hexagon (docs/RULINGS.md Uranus #5).

    Every such hexagon has exactly one corner at ``centre + s*(1,0)``, so each spot is tried
    as that corner only.
    """
    return any(next(_hexagons_with_corner(garden, spot, 0), None) for spot in garden.flowers)


def hexagons_through(grid: HexGrid, spot: Hex) -> tuple[tuple[Hex, ...], ...]:
    """The corners of every regular hexagon of ``grid`` (see :func:`hexagon_stands`) with a
    corner on ``spot``, each hexagon once."""
    return tuple(corners for i in range(6) for _, corners in _hexagons_at(grid, spot, i))


def mission_value(garden: Garden, mission: str, triangle_points: str = "perimeter") -> int:
    """The points ``mission`` (a canonical name) scores on ``garden`` now, per the table in the
    module docstring (docs/RULINGS.md Uranus #5, option ``triangle_points`` of #7).

    Raises :class:`InvalidStepError` for a name that is not a mission.
    """
    mission = parse_mission(mission)
    if mission == HEXAGON:
        return 0
    kind, _, colour = mission.partition(":")
    if kind == "pairs":
        first, _, second = colour.partition("-")
        return pairs(garden, first, second)
    if kind == "biggest_group":
        return biggest_group(garden, colour)
    if kind == "groups":
        return groups(garden, colour)
    if kind == "longest_line":
        return 2 * max(longest_line(garden, colour) - 1, 0)
    if kind == "edge_trees":
        return edge_trees(garden, colour)
    side = largest_triangle(garden, colour)
    if side == 0:
        return 0
    return 3 * side if triangle_points == "perimeter" else side + 1
