"""How a person performs a step on the physical board: one piece at a time, with noise.

:func:`perform` turns a step's changes into a timed script of physical operations: lift a
piece, put a piece down, show flowers on the tray, press a button.  Noise, drawn from the
player's own ``random.Random``, is what sensors and hands really do: a 3 ms contact glitch on a
steady cell, a piece lifted and put back while the player hesitates, a Martian slid slowly over
empty cells before it is set down, pick-ups in any order.  People do more (:data:`PEOPLE`): a
piece held in the air for seconds, a piece set down on the wrong cell and moved on, a step
begun and put back by hand before it is made; some stop to think for seconds in the middle of
a step (:data:`THINKING`).  The script is data, so the same script drives the
pseudo-terminal board (real time) and the fast virtual-time harness.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from companion.board import protocol
from companion.referee.recognition import on_the_way
from companion.rules import hexes
from companion.rules.base import EMPTY, Cell, Piece, parse_piece, top_and_under


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
    message: protocol.Dice | protocol.Card


Op = Put | Press | Signal

GLITCH_S = 0.003
"""How long a contact glitch lasts: a steady cell's sensor reads empty, then its piece again."""


@dataclass(frozen=True, slots=True)
class Noise:
    """How noisy a player's hands and the board's sensors are, and what else people do.

    Probabilities per step.  ``glitch``: a 3 ms contact glitch on a steady cell.
    ``hesitate``: the moving piece is lifted and put back once first.  ``slide``: a Martian
    touches empty cells on its way.  ``pace``: seconds between two operations (min, max).

    Behaviours, off unless asked for: ``hold``, the moving piece is held in the air for
    ``hold_s`` seconds (min, max) before it is set down; ``misplace``, a piece is set down on
    a wrong cell next to its own first and moved on after ``misplace_s`` seconds (shorter
    than any settle time: a piece left longer on a cell it may legally go to is a step);
    ``take_back``, the step is begun (up to half its operations), put back as it was by
    hand, then made; ``think``, a pause of ``think_s`` seconds somewhere in the middle of the
    step, while every piece moved so far is lifted or where the step takes it;
    ``reach_in``, the next player reaches in while this step settles (played by
    :class:`companion.sim.harness.VirtualTable`, which knows whose piece is whose).  Each
    draws from the player's ``random.Random`` only when its probability is above 0, so a
    script without them replays as it always did.
    """

    glitch: float = 0.3
    hesitate: float = 0.2
    slide: float = 0.3
    pace: tuple[float, float] = (0.12, 0.35)
    hold: float = 0.0
    hold_s: tuple[float, float] = (0.8, 3.0)
    misplace: float = 0.0
    misplace_s: tuple[float, float] = (0.05, 0.2)
    take_back: float = 0.0
    think: float = 0.0
    think_s: tuple[float, float] = (2.0, 8.0)
    reach_in: float = 0.0

    @classmethod
    def none(cls) -> Noise:
        return cls(glitch=0.0, hesitate=0.0, slide=0.0)


PEOPLE = Noise(hold=0.15, misplace=0.1, take_back=0.08, reach_in=0.15)
"""People at a real table, the simulator's default: sensor glitches, hesitations, slides, a
piece held in the air, a piece set on the wrong cell, a step begun and put back, the next
player reaching in early; every pause within a step shorter than the settle time but the
holds."""

THINKING = replace(PEOPLE, think=0.3)
"""People who also stop to think for seconds in the middle of a step (a disc on an action
slot, then a long look at the garden): the referee must not take the half-made step for one
that is finished."""


def chance(rng: random.Random, probability: float) -> bool:
    """Whether a behaviour of ``probability`` happens; no draw for one that is off."""
    return probability > 0 and rng.random() < probability


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


def _near(cell: Cell, board: Mapping[Cell, Piece]) -> list[Cell]:
    """The cells of ``board`` next to ``cell``: the six hexes around it, the eight squares
    around a garden square, the slots before and after a numbered slot (``L3``: ``L2``, ``L4``)."""
    if "," in cell:
        q, r = hexes.parse_hex(cell)
        near = [hexes.hex_name(hexes.add((q, r), d)) for d in hexes.DIRECTIONS]
    elif cell[1:].isdigit():
        letter, number = cell[0], int(cell[1:])
        if letter.islower():
            near = [f"{chr(ord(letter) + dc)}{number + dr}" for dc in (-1, 0, 1)
                    for dr in (-1, 0, 1) if dc or dr]
        else:
            near = [f"{letter}{number - 1}", f"{letter}{number + 1}"]
    else:
        return []
    return [c for c in near if c in board]


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
        ops.append(Put(GLITCH_S, cell, now[cell]))

    avoid = frozenset(tray_cells)
    if chance(rng, noise.take_back):
        ops += _begun_and_put_back(now, changes, rng, noise, avoid)
    start = dict(now)
    hands = _hands(now, changes, rng, noise, avoid)
    if chance(rng, noise.think):
        inside = _resting_points(start, changes, hands)
        if inside:
            n = rng.choice(inside)
            hands[n] = replace(hands[n], wait=hands[n].wait + rng.uniform(*noise.think_s))
    return ops + hands


def _resting_points(board: Mapping[Cell, Piece], changes: Mapping[Cell, Piece],
                    ops: list[Put]) -> list[int]:
    """The operations (by index, never the first) before which a person may stop to think:
    every piece moved so far is lifted or where the step takes it, none resting on a cell
    on its way or on a wrong cell (a Martian left there seconds is a board no step explains)."""
    now = dict(board)
    points = []
    for n, op in enumerate(ops):
        if n and all(cell in changes and on_the_way(piece, changes[cell])
                     for cell, piece in now.items() if piece != board[cell]):
            points.append(n)
        now[op.cell] = op.piece
    return points


def _hands(now: dict[Cell, Piece], changes: Mapping[Cell, Piece], rng: random.Random,
           noise: Noise, avoid: frozenset[Cell]) -> list[Put]:
    """The pieces moved one at a time from ``now`` (updated as they go) to ``changes``; a
    piece may be set on a wrong cell first, but never on a cell of ``avoid`` (the tray)."""
    pace = noise.pace
    ops: list[Put] = []
    held = 0.0  # seconds the piece in the hand is held in the air before it goes down

    def put(cell: Cell, piece: Piece, wait: tuple[float, float] = pace) -> None:
        nonlocal held
        ops.append(Put(rng.uniform(*wait) + held, cell, piece))
        now[cell] = piece
        held = 0.0

    def set_down(cell: Cell, piece: Piece) -> None:
        """Put ``piece`` on ``cell``, maybe on a wrong empty cell next to it first (empty:
        a presence board sees nothing of a Martian set on a flower, only a longer wait)."""
        if chance(rng, noise.misplace):
            wrong = [c for c in _near(cell, now)
                     if now[c] == EMPTY and c not in changes and c not in avoid]
            if wrong:
                stray = rng.choice(wrong)
                put(stray, top_and_under(piece)[0])
                put(stray, EMPTY, noise.misplace_s)
        put(cell, piece)

    # Pieces that travel: a Martian/disc that leaves one cell and arrives at another.
    arrivals = {c: p for c, p in changes.items() if p != EMPTY}
    moves: list[tuple[Cell, Cell]] = []
    for dest, piece in arrivals.items():
        info = parse_piece(piece)
        if info.kind != "martian":
            continue
        for src, was in now.items():
            if src != dest and src in changes and top_and_under(was)[0] == top_and_under(piece)[0]:
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
        martian_piece, under = top_and_under(now[src])
        left_behind = changes[src]
        # Lifting a gardener off the flower it stands on leaves that flower; anything else
        # that ends up here (a flower swapped with the Martian) comes after the Martian left.
        stays = under == left_behind and left_behind != EMPTY
        lifted = left_behind if stays else EMPTY
        if rng.random() < noise.hesitate:
            original = now[src]
            put(src, lifted)
            put(src, original)
        put(src, lifted)
        if chance(rng, noise.hold):
            held = rng.uniform(*noise.hold_s)
        if rng.random() < noise.slide:
            for cell in _between(src, dest, now)[:3]:
                put(cell, martian_piece)
                put(cell, EMPTY)
        target = changes[dest]
        if now[dest] != EMPTY and now[dest] != target:
            put(dest, EMPTY)  # take the flower the Martian lands on
        colour = top_and_under(target)[1]
        if colour and now[dest] != colour:
            put(dest, colour)  # the flower first, then the gardener on it
        set_down(dest, target)
        if now[src] != left_behind:
            put(src, left_behind)
    for cell in others:
        if now[cell] == changes[cell]:
            continue  # already down: the flower swapped with a Martian, set where it left
        if now[cell] != EMPTY:
            put(cell, EMPTY)
        set_down(cell, changes[cell])
    for cell in removals:
        if now[cell] != EMPTY:
            put(cell, EMPTY)
    return ops


def _begun_and_put_back(now: dict[Cell, Piece], changes: Mapping[Cell, Piece],
                        rng: random.Random, noise: Noise, avoid: frozenset[Cell]) -> list[Put]:
    """A first go at the step, stopped after at most half of its operations and undone by
    hand, last piece first, so that ``now`` is as it was; nothing when the step has fewer
    than two operations or the part made would already be the whole step."""
    trial = dict(now)
    first = _hands(trial, changes, rng, noise, avoid)
    if len(first) < 2:
        return []
    stop = rng.randint(1, len(first) // 2)
    made = first[:stop]
    board = dict(now)
    before: list[Piece] = []
    for op in made:
        before.append(board[op.cell])
        board[op.cell] = op.piece
    if all(board.get(cell, EMPTY) == piece for cell, piece in changes.items()):
        return []
    # The first piece goes back when the next would have moved (quickly off a wrong cell).
    waits = [first[stop].wait] + [rng.uniform(*noise.pace) for _ in made[1:]]
    back = [Put(wait, op.cell, piece)
            for wait, op, piece in zip(waits, reversed(made), reversed(before), strict=True)]
    return made + back


def unseen_by_presence(board: Mapping[Cell, Piece], changes: Mapping[Cell, Piece]) -> bool:
    """Whether a step that changes pieces leaves every occupancy reading as it was (a
    gardener from one flower to another): a presence board cannot see it at all."""
    return bool(changes) and all(bool(board.get(c, EMPTY)) == bool(p) for c, p in changes.items())
