"""Step recognition: which legal steps explain what the sensors see.

Pure functions over a rules core (:class:`companion.rules.base.GameRules`), an expected board
and an observed board (how a turn flows: :mod:`companion.referee.referee`).

Vocabulary
----------
*diff*: the cells (tray excluded) where the observed board differs from the expected one.
A step *explains* a diff when every differing cell is one the step changes and the observed
piece there is on the way to the step's piece (already there, lifted away, or one part of a
gardener-on-a-flower).  A step *completes* when the diff equals its changes exactly.  A
step that explains a diff but does not complete it *extends* a step the diff completes when
it changes every cell that step changes, and more: the board shows the first, and may still
become the second (a Martian moved, a flower still to pick; a disc on Swap flowers, two
flowers still to swap).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, compress, islice, repeat
from operator import ne
from typing import Generic, TypeVar

from companion.errors import InvalidStepError
from companion.rules import hexes, squares
from companion.rules.base import (
    EMPTY,
    OCCUPIED,
    Board,
    Cell,
    Move,
    Outcome,
    Piece,
    Seated,
    SomeRules,
    parse_piece,
    top_and_under,
)

T = TypeVar("T")


def on_the_way(observed: Piece, target: Piece) -> bool:
    """Whether a cell showing ``observed`` may still become ``target`` as a person works.

    True when it already is the target, when the cell is empty (a piece lifted, or not yet
    placed), or when ``target`` is a gardener on a flower and ``observed`` is one of its two
    parts (the flower put down first, or the gardener before the flower under it).
    """
    if observed in (target, EMPTY):
        return True
    top, under = top_and_under(target)
    return bool(under) and observed in (top, under)


def board_diff(expected: Board, observed: Board, ignore: frozenset[Cell]) -> dict[Cell, Piece]:
    """``{cell: observed piece}`` where ``observed`` differs from ``expected``, except the
    ``ignore`` cells (the show-tray)."""
    # Every cell compared in C (no Python call a cell): asked on every field update.
    differ = compress(observed, map(ne, observed.values(), map(expected.get, observed,
                                                              repeat(EMPTY))))
    return {cell: observed[cell] for cell in differ if cell not in ignore}


def _stacked(before: Piece, after: Piece) -> bool:
    """Whether one piece is the other with a gardener added or taken off (``"red"`` and
    ``"M1+red"``): a change of the top of a stack, not of what stands on the cell."""
    return any(under and under == other
               for (_, under), other in ((top_and_under(before), after),
                                         (top_and_under(after), before)))


def sensed(piece: Piece) -> Piece:
    """What a presence-only sensor reports for ``piece``: ``"occupied"`` or empty."""
    return OCCUPIED if piece else EMPTY


def sensed_board(board: Board) -> dict[Cell, Piece]:
    """``board`` as a presence-only board reports it."""
    return {cell: sensed(piece) for cell, piece in board.items()}


class Handling(Collection[Cell]):
    """The cells the players handled since the last commit (those seen to change), in the
    order of their last change; ``emptied`` holds when each last read empty.

    On a presence board the order tells what occupancy alone cannot: a Martian lands on a
    flower's cell (occupied before and after) only if that cell was set down after the
    Martian last left its own, so a landing begun, put back and made again is not taken for
    the landing made while the cell last changed before the Martian left.
    """

    def __init__(self) -> None:
        self.changed: dict[Cell, int] = {}
        self.emptied: dict[Cell, int] = {}
        self._count = 0

    def note(self, cell: Cell, piece: Piece) -> None:
        """``cell`` was seen to change to ``piece``."""
        self._count += 1
        self.changed[cell] = self._count
        if piece == EMPTY:
            self.emptied[cell] = self._count

    @property
    def version(self) -> int:
        """Changes noted so far: a new value whenever the order may tell something new."""
        return self._count

    def __contains__(self, cell: object) -> bool:
        return cell in self.changed

    def __iter__(self) -> Iterator[Cell]:
        return iter(self.changed)

    def __len__(self) -> int:
        return len(self.changed)

    def set_down_after(self, cell: Cell, origin: Cell) -> bool:
        """Whether ``cell`` last changed after ``origin`` last read empty (True when
        ``origin`` never did: a gardener lifted off its flower is not seen to leave)."""
        left = self.emptied.get(origin)
        return left is None or self.changed.get(cell, 0) > left


class Lazy(Generic[T]):
    """An iterable drawn from ``source`` only as far as it is read, and kept: the next reading
    starts from what was drawn, so asking again for the first match costs nothing."""

    def __init__(self, source: Iterable[T]) -> None:
        self._source: Iterator[T] | None = iter(source)
        self._drawn: list[T] = []

    def __iter__(self) -> Iterator[T]:
        drawn = self._drawn
        i = 0
        while True:
            if i < len(drawn):
                yield drawn[i]
                i += 1
                continue
            if self._source is None:
                return
            try:
                item = next(self._source)
            except StopIteration:
                self._source = None
                return
            drawn.append(item)

    def first(self) -> T | None:
        """The first item, or ``None`` when there is none."""
        return next(iter(self), None)

    def all(self) -> list[T]:
        """Every item, drawn to the end at once (a new list)."""
        if self._source is not None:
            self._drawn.extend(self._source)
            self._source = None
        return list(self._drawn)


def _in_turn(sources: Sequence[Iterable[T]]) -> Iterator[T]:
    """The items of ``sources`` one from each in turn (each drawn only as it is read)."""
    iterators = [iter(source) for source in sources]
    while iterators:
        for it in list(iterators):
            try:
                yield next(it)
            except StopIteration:
                iterators.remove(it)


@dataclass
class StepIndex:
    """The legal steps of one state and their changes, computed lazily and kept for the
    state's lifetime (the referee makes one per committed state).

    ``changes_of(step)`` is what the sensors will see change (``rules.changes``, or on a
    ``presence`` board only the cells that go from empty to occupied or back);
    ``piece_changes(step)`` is ``rules.changes`` itself; ``unseen(step)`` the cells whose
    piece changes where a presence sensor reads the same before and after (a flower swapped
    for another, a Martian landing where a flower stood).

    A diff may be explained by thousands of steps (a disc on the Swap flowers slot), so none
    of the questions below lists them all: :meth:`explaining` draws the steps that explain a
    diff only as far as it is read, one per set of changes; :meth:`completing` asks the rules
    core only for steps that change nothing outside the diff and the handled cells; and
    :meth:`extension` looks for one step that could still be under way.
    """

    rules: SomeRules
    state: Hashable
    expected: Board
    presence: bool = False
    _pieces: dict[Hashable, dict[Cell, Piece]] = field(default_factory=dict)
    _changes: dict[Hashable, dict[Cell, Piece]] = field(default_factory=dict)
    _candidates: dict[tuple[Hashable, ...], Lazy[Hashable]] = field(default_factory=dict)
    _explaining: dict[frozenset[tuple[Cell, Piece]], Lazy[Hashable]] = field(
        default_factory=dict)
    _completing: dict[tuple[Hashable, ...], list[Hashable]] = field(default_factory=dict)
    _after: dict[Hashable, Seated] = field(default_factory=dict)
    _advanced: dict[Hashable, Seated] = field(default_factory=dict)
    _ending: dict[Hashable, Outcome | None] = field(default_factory=dict)
    _guided: dict[frozenset[tuple[Cell, Piece]], dict[Cell, str]] = field(default_factory=dict)
    _listed: dict[Cell, list[Move] | None] = field(default_factory=dict)

    def after(self, step: Hashable) -> Seated:
        """The state ``step`` leads to (``rules.apply``), applied once and kept: the end
        test and the commit read it.  Raises what ``rules.apply`` raises for an illegal step
        (nothing kept then)."""
        found = self._after.get(step)
        if found is None:
            found = self._after[step] = self.rules.apply(self.state, step)
        return found

    def advanced(self, step: Hashable) -> Seated:
        """The state ``step`` leads to before the end test (``rules.advance``), kept: equal
        for two steps exactly when :meth:`after` is, so the question whether steps lead to
        one state reads it, never the end test of each (a search in Gardens of Enceladus).
        Raises as :meth:`after`."""
        found = self._advanced.get(step)
        if found is None:
            found = self._advanced[step] = self.rules.advance(self.state, step)
        return found

    def ending(self, step: Hashable) -> Outcome | None:
        """How the game ends after ``step`` (``rules.outcome`` of :meth:`after`), ``None``
        while it goes on; worked out once and kept."""
        if step in self._ending:
            return self._ending[step]
        found = self._ending[step] = self.rules.outcome(self.after(step))
        return found
    _probes: list[Cell] | None = None
    _standing: dict[Piece, list[Cell]] = field(default_factory=dict)  # a part -> its cells

    def piece_changes(self, step: Hashable) -> dict[Cell, Piece]:
        found = self._pieces.get(step)
        if found is None:
            found = self._pieces[step] = self.rules.changes(self.state, step)
        return found

    def changes_of(self, step: Hashable) -> dict[Cell, Piece]:
        if not self.presence:
            return self.piece_changes(step)
        found = self._changes.get(step)
        if found is None:
            expected = self.expected
            # sensed() inline (an empty piece reads empty, any other occupied): asked of
            # every candidate of a field update.
            found = self._changes[step] = {
                cell: OCCUPIED if piece else EMPTY
                for cell, piece in self.piece_changes(step).items()
                if bool(piece) != bool(expected.get(cell, EMPTY))
            }
        return found

    def unseen(self, step: Hashable) -> set[Cell]:
        """The cells ``step`` changes that a presence board reads the same before and after
        and that a person must lift a piece from to change: not a gardener stepping onto or
        off the flower it stands on (the flower never leaves the cell)."""
        if not self.presence:
            return set()
        changes = self.changes_of(step)
        return {
            cell
            for cell, piece in self.piece_changes(step).items()
            if cell not in changes and not _stacked(self.expected.get(cell, EMPTY), piece)
        }

    def candidates(
        self,
        touched: frozenset[Cell],
        within: frozenset[Cell] | None = None,
        *,
        distinct: bool = False,
    ) -> Lazy[Hashable]:
        """The rules core's candidates for ``touched`` (``GameRules.candidates``: the legal
        steps that may change all of those cells, within ``within`` when given, one per set
        of changes with ``distinct``), drawn lazily and kept."""
        key = (touched, within, distinct)
        found = self._candidates.get(key)
        if found is None:
            found = self._candidates[key] = Lazy(
                self.rules.candidates(self.state, touched, within, distinct))
        return found

    def probed(self, touched: frozenset[Cell]) -> Iterator[Hashable]:
        """When every cell of ``touched`` is off the garden (a disc put on an action slot),
        the candidates that also change one of the first :data:`PROBES` garden cells where a
        flower stands (one per set of changes, one from each cell in turn): a few of the
        steps the slot may begin, drawn without the rules core listing all of them
        (thousands for Swap flowers, every pair of flowers of two colours); none otherwise,
        nor when the first flower's are none.
        Each has the changes of one of the candidates of ``touched`` alone, so a question
        that needs one step, or steps enough to tell that nothing is common to them, reads
        these first."""
        if not touched or any(_point(cell) is not None for cell in touched):
            return iter(())
        if self._probes is None:
            standing = (c for c, p in self.expected.items()
                        if parse_piece(p).kind == "flower" and _point(c) is not None)
            self._probes = [c for _, c in zip(range(PROBES), standing, strict=False)]
        sources = [self.candidates(touched | {cell}, distinct=True) for cell in self._probes]
        if not sources or sources[0].first() is None:
            return iter(())  # the slot's steps change no flower: the probes would tell nothing
        return _in_turn(sources)

    def probing(self, touched: frozenset[Cell]) -> Iterator[Hashable]:
        """The candidates for ``touched``, one per set of changes, those :meth:`probed`
        first (a step may come twice): for a question that needs only one of them."""
        return chain(self.probed(touched), self.candidates(touched, distinct=True))

    def explains(self, step: Hashable, diff: Mapping[Cell, Piece]) -> bool:
        """Whether every cell of ``diff`` is one ``step`` changes, its observed piece on the
        way to the step's (on a presence board any cell whose piece the step changes may read
        empty on the way, though occupancy shows no change there: the flower lifted so a
        Martian can stand there, or lifted and set back under the gardener that lands on
        it)."""
        changes = self.changes_of(step)
        pieces = self.piece_changes(step) if self.presence else changes
        for cell, piece in diff.items():  # a loop, not all(): asked of every candidate
            target = changes.get(cell)
            if target is not None and on_the_way(piece, target):
                continue
            if piece != EMPTY or cell not in pieces:
                return False
        return True

    def completes(
        self, step: Hashable, diff: Mapping[Cell, Piece], handled: Collection[Cell]
    ) -> bool:
        """Whether ``diff`` is exactly what ``step`` changes and, on a presence board, every
        cell it changes unseen is among ``handled`` (the cells seen to change since the last
        commit; with a :class:`Handling`, a Martian's landing there set down after it left
        its own cell)."""
        changes = self.changes_of(step)
        if not (len(changes) == len(diff) and all(diff.get(c) == p for c, p in changes.items())):
            return False
        unseen = self.unseen(step)
        if not all(c in handled for c in unseen):
            return False
        if not unseen or not isinstance(handled, Handling):
            return True
        # A Martian landing unseen must have been set down after it left its own cell.
        pieces = self.piece_changes(step)
        for cell in unseen:
            head = top_and_under(pieces[cell])[0]
            if parse_piece(head).kind != "martian":
                continue
            for origin in pieces:
                if (origin != cell and top_and_under(self.expected.get(origin, EMPTY))[0] == head
                        and not handled.set_down_after(cell, origin)):
                    return False
        return True

    def explaining(self, diff: Mapping[Cell, Piece]) -> Lazy[Hashable]:
        """The legal steps that explain ``diff`` (:meth:`explains`), one per set of changes
        (a payment colour stands for all), drawn only as far as they are read; none for an
        empty diff."""
        key = frozenset(diff.items())
        found = self._explaining.get(key)
        if found is None:
            steps = self.candidates(frozenset(diff), distinct=True) if diff else ()
            found = self._explaining[key] = Lazy(s for s in steps if self.explains(s, diff))
        return found

    def sourced(self, diff: Mapping[Cell, Piece], most: int | None = None
                ) -> Iterator[Hashable]:
        """On an identity board, when a cell of ``diff`` shows a piece, the candidates of
        ``diff``'s cells that lie within them, the cells off the garden and the cells where
        the pieces shown (or their parts) stand now: the steps that bring a piece from
        elsewhere on the board (a peak moved onto an empty square), drawn without the rules
        core listing every step that may change the cell (every flower that could move
        there).  None on a presence board or when every cell of ``diff`` is empty.
        A subset of the candidates of ``diff``'s cells, so a question that needs one step
        reads these first.  With ``most``, none either when the pieces shown stand on more
        than ``most`` cells (a flower's colour on a score of them)."""
        shown = {part for cell, piece in diff.items() if piece and not off_garden(cell)
                 for part in top_and_under(piece) if part}
        if self.presence or not shown:
            return iter(())
        sources = set().union(*map(self._standing_on, shown))
        if most is not None and len(sources) > most:
            return iter(())
        within = frozenset(diff).union(_off_garden(tuple(self.expected)), sources)
        return iter(self.candidates(frozenset(diff), within, distinct=True))

    def _standing_on(self, part: Piece) -> list[Cell]:
        """The cells where ``part`` stands, alone or as a part of a stack; kept."""
        found = self._standing.get(part)
        if found is None:
            found = self._standing[part] = [
                cell for cell, piece in self.expected.items()
                if piece == part or ("+" in piece and part in piece.split("+"))]
        return found

    def explained(self, diff: Mapping[Cell, Piece]) -> bool:
        """Whether some legal step explains ``diff`` (False for an empty diff)."""
        if not diff:
            return False
        touched = frozenset(diff)
        # A few of the candidates first: those of a disc's slot on a few flowers, and those
        # bringing pieces shown from the few cells where they stand (a peak moved, where
        # every flower that may move to its square is a candidate too).
        few = self.sourced(diff, most=SOURCES_FIRST)
        if any(self.explains(s, diff) for s in chain(self.probed(touched), few)):
            return True
        steps = self.candidates(touched, distinct=True)
        if any(self.explains(s, diff) for s in islice(steps, READ_FIRST)):
            return True
        if next(islice(steps, READ_FIRST, None), None) is None:
            return False  # every candidate read: the probe and the sourced are some of them
        if any(self.explains(s, diff) for s in self.sourced(diff)):
            return True
        return self.explaining(diff).first() is not None

    def completing(
        self,
        diff: Mapping[Cell, Piece],
        handled: Collection[Cell] = frozenset(),
        *,
        distinct: bool = False,
        tray: Mapping[str, int] | None = None,
    ) -> list[Hashable]:
        """Every legal step ``diff`` completes (:meth:`completes`), each payment colour and
        draw apart, or with ``distinct`` one per set of changes.  The rules core is asked only
        for steps within the diff's cells (and on a presence board the handled ones), never
        for every step the diff's cells allow; with ``tray`` (``{colour: count}`` shown on the
        tray) only the steps whose payment and draws it shows are weighed, when there are
        such steps (``GameRules.tray_filter``)."""
        if not diff:
            return []
        cells = frozenset(diff)
        within = cells | frozenset(handled) if self.presence else cells
        shown = tuple(sorted(tray.items())) if tray else ()
        # On a presence board the order of handling counts too (Handling.set_down_after).
        order = handled.version if self.presence and isinstance(handled, Handling) else 0
        key = (frozenset(diff.items()), within, distinct, shown, order)
        found = self._completing.get(key)
        if found is None:
            steps = self.candidates(cells, within, distinct=distinct).all()
            done = None  # whether the diff completes them, when all have the same changes
            if not distinct:
                reps = self.candidates(cells, within, distinct=True).all()
                if len(reps) == 1:  # then every step has its changes (GameRules.candidates)
                    # Noted in C (those known kept): every payment and draw of a tube action.
                    self._pieces = dict.fromkeys(steps, self.piece_changes(reps[0])) | self._pieces
                    # Each payment and draw of a tube action: weighed once, not one by one.
                    done = self.completes(reps[0], diff, handled)

            def complete(chosen: Iterable[Hashable]) -> list[Hashable]:
                if done is not None:
                    return list(chosen) if done else []
                # Most candidates change more or fewer cells than the diff: told at a glance.
                changes_of, size = self.changes_of, len(diff)
                return [s for s in chosen
                        if len(changes_of(s)) == size and self.completes(s, diff, handled)]

            found = complete(self.rules.tray_filter(self.state, steps, dict(shown))) \
                if shown else []
            if not found:
                found = complete(steps)
            self._completing[key] = found
        return found

    def extension(
        self, diff: Mapping[Cell, Piece], handled: Collection[Cell], step: Hashable
    ) -> Hashable | None:
        """A legal step that explains ``diff`` but is not complete yet and changes every cell
        where the board shows ``step`` (the cells it changes that the sensors see, and on a
        presence board those a person must handle), and more: a sign that the person making
        ``step`` may still be under way (a Martian moved, a flower still to pick; on a
        presence board, a gardener lifted from an empty hex, which already moves it onto a
        flower the sensors cannot see it reach); ``None`` when there is none."""
        shown = self.changes_of(step).keys() | self.unseen(step)
        for other in self.probing(frozenset(diff) | frozenset(shown)):
            if (
                other != step
                and shown <= self.piece_changes(other).keys()
                and self.explains(other, diff)
                and not self.completes(other, diff, handled)
            ):
                return other
        return None


    def moves_from(self, cell: Cell) -> list[Move] | None:
        """The normal moves of the piece on ``cell`` as the rules core lists them
        (``GameRules.moves_from``), asked once and kept: the piece lifted shows them, and
        put down they tell whether it may still slide on."""
        if cell in self._listed:
            return self._listed[cell]
        found = self._listed[cell] = self.rules.moves_from(self.state, cell)
        return found

    def moves_onto(self, diff: Mapping[Cell, Piece], cells: Collection[Cell]) -> bool:
        """Whether the one piece lifted in ``diff`` (``{its cell: what the cell shows}``) has
        a normal move (:meth:`moves_from`) that explains ``diff`` and lands on one of
        ``cells``; False too when the core does not list that piece's moves."""
        ((origin, seen),) = diff.items()
        moves = self.moves_from(origin)
        return any(to in cells and on_the_way(seen, left) for to, _, left in moves or ())

    def destinations(self, diff: Mapping[Cell, Piece], lifted: set[Piece]) -> dict[Cell, str]:
        """Where the ``lifted`` Martians/gardeners of ``diff`` may go, ``{cell: "dest"}``: the
        cells where a step the board may still become puts one; while nothing has been put
        down, only the steps that need no other piece put down first (:func:`guidance`).
        Worked out once per diff and kept (do not change the mapping returned): a piece
        lifted, put back and lifted again shows the same cells."""
        key = frozenset(diff.items())
        found = self._guided.get(key)
        if found is not None:
            return found
        steps: Iterable[Hashable] = self.explaining(diff)
        if all(on_the_way(piece, self.expected.get(cell, EMPTY)) for cell, piece in diff.items()):
            if len(diff) == 1:  # one piece lifted: its moves, when the core lists them
                # Normal moves only: none needs another piece put down first (a gardener's
                # flower is planted under it as it lands).
                ((origin, seen),) = diff.items()
                moves = self.moves_from(origin)
                if moves is not None:
                    found = self._guided[key] = {
                        to: "dest" for to, _, left in moves if on_the_way(seen, left)}
                    return found
            standing = {c for c, p in self.expected.items() if diff.get(c, p)}
            within = frozenset(diff) | frozenset(standing)
            steps = (
                s for s in self.candidates(frozenset(diff), within, distinct=True)
                if self.explains(s, diff)
            )
        found = self._guided[key] = {}
        for step in steps:
            for cell, piece in self.piece_changes(step).items():
                if cell not in found and diff.get(cell) != piece and \
                        piece.partition("+")[0] in lifted:  # the top of a stack
                    found[cell] = "dest"
        return found


@lru_cache(maxsize=1024)
def _point(cell: Cell) -> tuple[str, int, int] | None:
    """Where a cell lies: ``("hex", q, r)`` for ``"q,r"``, ``("square", column, row)`` for
    ``"e6"`` and for the start squares just outside the square garden (``L3`` left of row 3,
    ``R3`` right of it, ``Bc`` below column c: docs/RULINGS.md, Coordinates); ``None`` for a
    cell no piece moves through (a slot, the tray)."""
    size = squares.SIZE
    side, rest = cell[:1], cell[1:]
    if side in ("L", "R") and rest.isdigit() and 1 <= int(rest) <= size:
        return "square", -1 if side == "L" else size, int(rest) - 1
    if side == "B" and len(rest) == 1 and rest in squares.COLUMNS:
        return "square", squares.COLUMNS.index(rest), -1
    try:
        if "," in cell:
            return ("hex", *hexes.parse_hex(cell))
        square = squares.parse_square(cell)
    except InvalidStepError:
        return None
    return "square", square % size, square // size


@lru_cache(maxsize=8)  # one layout a game
def _off_garden(layout: tuple[Cell, ...]) -> frozenset[Cell]:
    """The cells of ``layout`` that are :func:`off_garden`."""
    return frozenset(filter(off_garden, layout))


def off_garden(cell: Cell) -> bool:
    """Whether ``cell`` is one no piece moves through (an action slot, the tray): what is
    set down there comes from the hand."""
    return _point(cell) is None


def _name(kind: str, x: int, y: int) -> Cell | None:
    """The name of the garden cell at ``(x, y)`` (``None`` off a square garden)."""
    if kind == "hex":
        return hexes.hex_name((x, y))
    if 0 <= x < squares.SIZE and 0 <= y < squares.SIZE:
        return squares.SQUARE_NAMES[squares.square(x, y)]
    return None


def beyond(origin: Cell, cell: Cell) -> list[Cell]:
    """The cells farther along the straight line from ``origin`` through ``cell``, nearest
    first, as far as a garden of its kind can reach (names off the board are left for the
    caller to drop); none when the two lie on no such line."""
    start, over = _point(origin), _point(cell)
    if start is None or over is None or start[0] != over[0]:
        return []
    kind, dx, dy = start[0], over[1] - start[1], over[2] - start[2]
    n = max(abs(dx), abs(dy), abs(dx + dy)) if kind == "hex" else max(abs(dx), abs(dy))
    if not n or dx % n or dy % n:
        return []
    dx, dy = dx // n, dy // n
    if (dx, dy) not in (hexes.DIRECTIONS if kind == "hex" else _SQUARE_STEPS):
        return []
    cells = []
    for k in range(1, 2 * squares.SIZE):
        name = _name(kind, over[1] + k * dx, over[2] + k * dy)
        if name is None:
            break
        cells.append(name)
    return cells


_SQUARE_STEPS = tuple((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)


def neighbours(cell: Cell) -> list[Cell]:
    """The cells next to ``cell`` where a piece meant for it may be set down by mistake: the
    six hexes or eight squares around it, or the numbered side cells before and after it
    (``L3``: ``L2`` and ``L4``; ``A4``: ``A3`` and ``A5``; ``Bc``: ``Bb`` and ``Bd``).  Names
    off the board are left for the caller to drop."""
    side, rest = cell[:1], cell[1:]
    if side.isupper() and rest.isdigit():
        return [f"{side}{n}" for n in (int(rest) - 1, int(rest) + 1) if n > 0]
    if side == "B" and len(rest) == 1 and rest in squares.COLUMNS:
        at = squares.COLUMNS.index(rest)
        return [f"B{squares.COLUMNS[c]}" for c in (at - 1, at + 1) if 0 <= c < squares.SIZE]
    point = _point(cell)
    if point is None:
        return []
    kind, x, y = point
    if kind == "hex":
        return [hexes.hex_name((x + dx, y + dy)) for dx, dy in hexes.DIRECTIONS]
    return [
        squares.SQUARE_NAMES[squares.square(x + dx, y + dy)]
        for dx in (-1, 0, 1) for dy in (-1, 0, 1)
        if (dx or dy) and 0 <= x + dx < squares.SIZE and 0 <= y + dy < squares.SIZE
    ]


def lifted_pieces(expected: Board, diff: Mapping[Cell, Piece]) -> set[Piece]:
    """The Martians/gardeners that left their expected cell and are not yet put down
    anywhere the diff shows (pieces in a player's hand)."""
    gone = set()
    for cell, piece in diff.items():
        before = parse_piece(expected.get(cell, EMPTY))
        if before.kind == "martian" and parse_piece(piece).player != before.player:
            gone.add(f"M{before.player}")
    for piece in diff.values():
        info = parse_piece(piece)
        if info.kind == "martian":
            gone.discard(f"M{info.player}")
    return gone


PROBES = 3
"""The garden cells where a flower stands that :meth:`StepIndex.probed` tries with a slot."""

READ_FIRST = 24
"""The candidates of a diff's cells that :meth:`StepIndex.explained` reads for one that
explains it before it asks the rules core for those that bring its pieces from the board
(:meth:`StepIndex.sourced`): most boards are explained by one of the first few."""

SOURCES_FIRST = 8
"""The most cells the pieces a diff shows may stand on for :meth:`StepIndex.explained` to
read the steps bringing them from there before any other (a peak stands on five, a Martian
on one; a flower's colour on a score, whose steps within them are many)."""

GUIDED = 24
"""The most candidate steps read to find the cells every explaining step still needs (with
more, they are only counted, none read: no cell would be singled out): the
rules core's ``changes`` of each costs tens of microseconds on a desktop core, ten times that
on a Pi Zero 2 W, and a field update must cost less than its time on the wire."""


def guidance(
    index: StepIndex,
    expected: Board,
    diff: Mapping[Cell, Piece],
    handled: Collection[Cell] = frozenset(),
) -> dict[Cell, str]:
    """Cells to highlight while a step is under way: ``{cell: role}``.

    A lifted Martian/gardener: where it may go (``"dest"``), the landings of the steps the
    board may still become; while nothing has been put down, only those that need no other
    piece put down first (its moves, not the special actions whose disc is still in the
    hand), listed by the rules core without working each out when one piece is lifted and
    the core can (``GameRules.moves_from``).  Otherwise, the cells that every explaining
    step not yet complete still needs: ``"pick"`` where a piece must go away (or, on a
    presence board, be lifted to be changed unseen: it is not among ``handled`` yet),
    ``"place"`` where one must be put; read until nothing is common to them, and none when
    more than :data:`GUIDED` candidates are to be read (a flower put on an empty square,
    which dozens of flowers could have been moved to).
    """
    lifted = lifted_pieces(expected, diff)
    if lifted:
        # The same pieces in the hand give the same destinations while the position stands
        # (lifted, put back and lifted again; other cells handled meanwhile and undone).
        return dict(index.destinations(diff, lifted))

    def still(step: Hashable) -> dict[Cell, Piece]:
        """What ``step`` still needs done (nothing when it does not explain the diff)."""
        if not index.explains(step, diff):
            return {}
        remaining = {c: p for c, p in index.changes_of(step).items() if diff.get(c) != p}
        remaining.update((c, EMPTY) for c in index.unseen(step) if c not in handled)
        return remaining

    def common(steps: Iterable[Hashable]) -> dict[Cell, Piece] | None:
        """What the steps still need in common; ``{}`` when nothing, ``None`` when none
        needs anything."""
        todo: dict[Cell, Piece] | None = None
        for step in steps:
            remaining = still(step)
            if not remaining:
                continue
            todo = remaining if todo is None else {
                c: p for c, p in todo.items() if remaining.get(c) == p}
            if not todo:
                break
        return todo

    # A disc on a slot: when a few of its steps need nothing in common, neither do all.
    if common(index.probed(frozenset(diff))) == {}:
        return {}
    steps = index.candidates(frozenset(diff), distinct=True)
    if next(islice(steps, GUIDED, None), None) is not None:
        return {}  # too many ways on, told by counting them: no step's changes worked out
    todo = common(steps)
    return {cell: ("pick" if piece == EMPTY else "place") for cell, piece in (todo or {}).items()}

