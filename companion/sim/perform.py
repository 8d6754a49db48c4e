"""How a person performs a step on the physical board: one piece at a time, with noise.

:func:`perform` turns a step's changes into a timed script of physical operations: lift a
piece, put a piece down, show flowers on the tray, press a button.  Noise, drawn from the
player's own ``random.Random``, is what sensors and hands really do: a 3 ms contact glitch on a
steady cell, a piece lifted and put back while the player hesitates, a Martian slid slowly over
empty cells before it is set down, pick-ups in any order.  The script is data, so the same
script drives the pseudo-terminal board (real time) and the fast virtual-time harness.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from companion.rules import hexes
from companion.rules.base import EMPTY, Cell, Piece, parse_piece


@dataclass(frozen=True, slots=True)
class Put:
    """After ``wait`` seconds, the sensor of ``cell`` reads ``piece`` (``""`` = lifted away)."""

    wait: float
    cell: Cell
    piece: Piece


@dataclass(frozen=True, slots=True)
class Press:
    """After ``wait`` seconds, the player presses and releases button ``name``."""

    wait: float
    name: str


@dataclass(frozen=True, slots=True)
class Signal:
    """After ``wait`` seconds, the board sends ``message`` (a protocol message that is not a
    cell: the dice in the Mars dice tray, a Uranus card held to the reader)."""

    wait: float
    message: object


Op = Put | Press | Signal


@dataclass(frozen=True, slots=True)
class Noise:
    """How noisy a player's hands and the board's sensors are (probabilities per step).

    ``glitch``: a 3 ms contact glitch on a steady cell.  ``hesitate``: the moving piece is
    lifted and put back once first.  ``slide``: a Martian touches empty cells on its way.
    ``pace``: seconds between two operations (min, max).
    """

    glitch: float = 0.3
    hesitate: float = 0.2
    slide: float = 0.3
    pace: tuple[float, float] = (0.12, 0.35)

    @classmethod
    def none(cls) -> Noise:
        return cls(glitch=0.0, hesitate=0.0, slide=0.0)


PEOPLE = Noise()
"""The noise of people at a real table: the default of the simulator."""


def _head(piece: Piece) -> Piece:
    return piece.partition("+")[0]


def _between(a: Cell, b: Cell, board: Mapping[Cell, Piece]) -> list[Cell]:
    """Empty garden cells on the straight line from ``a`` to ``b`` (squares or hexes)."""
    if "," in a and "," in b:
        (q1, r1), (q2, r2) = hexes.parse_hex(a), hexes.parse_hex(b)
        n = hexes.distance((q1, r1), (q2, r2))
        if n < 2 or not (q1 == q2 or r1 == r2 or q1 + r1 == q2 + r2):
            return []
        dq, dr = (q2 - q1) // n, (r2 - r1) // n
        path = [f"{q1 + i * dq},{r1 + i * dr}" for i in range(1, n)]
    elif a[0].islower() and b[0].islower() and a[1:].isdigit() and b[1:].isdigit():
        (c1, r1), (c2, r2) = (ord(a[0]), int(a[1:])), (ord(b[0]), int(b[1:]))
        n = max(abs(c2 - c1), abs(r2 - r1))
        if n < 2 or not (c1 == c2 or r1 == r2 or abs(c2 - c1) == abs(r2 - r1)):
            return []
        dc, dr = (c2 - c1) // n, (r2 - r1) // n
        path = [f"{chr(c1 + i * dc)}{r1 + i * dr}" for i in range(1, n)]
    else:
        return []
    return [c for c in path if board.get(c, None) == EMPTY]


def tray_flowers(path: Iterable[str]) -> list[str]:
    """The flowers a player shows on the tray for a step's hidden choices: three of the paid
    colour (``"pay blue"``) and one per flower drawn from the tube (``"draw 1: red"``)."""
    shown: list[str] = []
    for label in path:
        if label.startswith("pay "):
            shown += [label.removeprefix("pay ")] * 3
        elif label.startswith("draw "):
            shown.append(label.partition(": ")[2])
    return shown


def perform(
    board: Mapping[Cell, Piece],
    changes: Mapping[Cell, Piece],
    rng: random.Random,
    noise: Noise,
    *,
    tray: Iterable[Cell] = (),
    tray_show: Iterable[str] = (),
) -> list[Op]:
    """A timed script that takes ``board`` to ``board`` updated with ``changes``.

    ``board``: the physical board now (every cell).  ``changes``: cell -> new piece.
    ``tray``/``tray_show``: the tray cells, and the flowers to show there first (they stay
    until the player clears them at the start of their next step).
    """
    pace = noise.pace
    ops: list[Op] = []
    now = dict(board)

    def put(cell: Cell, piece: Piece) -> None:
        ops.append(Put(rng.uniform(*pace), cell, piece))
        now[cell] = piece

    # Clear flowers left on the tray by an earlier step, then show this step's.
    tray_cells = list(tray)
    for cell in tray_cells:
        if now.get(cell, EMPTY) != EMPTY:
            put(cell, EMPTY)
    for cell, colour in zip(tray_cells, tray_show, strict=False):
        put(cell, colour)

    # Sensor glitch on a steady, occupied cell the step does not touch.
    steady = [c for c, p in now.items() if p != EMPTY and c not in changes and c not in tray_cells]
    if steady and rng.random() < noise.glitch:
        cell = rng.choice(steady)
        ops.append(Put(rng.uniform(*pace), cell, EMPTY))
        ops.append(Put(0.003, cell, now[cell]))

    # Pieces that travel: a Martian/disc that leaves one cell and arrives at another.
    arrivals = {c: p for c, p in changes.items() if p != EMPTY}
    moves: list[tuple[Cell, Cell]] = []
    for dest, piece in arrivals.items():
        info = parse_piece(piece)
        if info.kind != "martian":
            continue
        for src, was in now.items():
            if src != dest and src in changes and _head(was) == _head(piece):
                moves.append((src, dest))
    departures = {src for src, _ in moves}
    removals = [c for c, p in changes.items() if p == EMPTY and c not in departures]
    others = [c for c in arrivals if c not in {d for _, d in moves}]
    rng.shuffle(removals)
    early = removals[: rng.randint(0, len(removals))] if removals else []
    for cell in early:
        if cell not in {d for _, d in moves}:
            put(cell, EMPTY)

    for src, dest in moves:
        martian_piece = _head(now[src])
        left_behind = changes[src]
        # Lifting a gardener off the flower it stands on leaves that flower; anything else
        # that ends up here (a flower swapped with the Martian) comes after the Martian left.
        stays = now[src].partition("+")[2] == left_behind and left_behind != EMPTY
        lifted = left_behind if stays else EMPTY
        if rng.random() < noise.hesitate:
            original = now[src]
            put(src, lifted)
            put(src, original)
        put(src, lifted)
        if rng.random() < noise.slide:
            for cell in _between(src, dest, now)[:3]:
                put(cell, martian_piece)
                put(cell, EMPTY)
        target = changes[dest]
        if now[dest] != EMPTY and now[dest] != target:
            put(dest, EMPTY)  # take the flower the Martian lands on
        head, plus, colour = target.partition("+")
        if plus and now[dest] != colour:
            put(dest, colour)  # the flower first, then the gardener on it
        put(dest, target)
        if now[src] != left_behind:
            put(src, left_behind)
    for cell in others:
        if now[cell] != EMPTY and now[cell] != changes[cell]:
            put(cell, EMPTY)
        put(cell, changes[cell])
    for cell in removals:
        if now[cell] != EMPTY:
            put(cell, EMPTY)
    return ops


def unseen_by_presence(board: Mapping[Cell, Piece], changes: Mapping[Cell, Piece]) -> bool:
    """Whether a step that changes pieces leaves every occupancy reading as it was (a
    gardener from one flower to another): a presence board cannot see it at all."""
    return bool(changes) and all(bool(board.get(c, EMPTY)) == bool(p) for c, p in changes.items())
