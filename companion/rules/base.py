"""What every rules core offers: pieces, cells, outcomes and the :class:`GameRules` seam.

A rules core is pure: frozen, hashable states; ``legal_steps(state)`` is lazy (a generator,
or a sequence that makes a step only when it is read) or a sequence of steps made once;
``apply(state, step)`` returns a new state or raises :class:`IllegalMoveError`; chance
(dice, tube draws, card draws) arrives as parameters of steps, never drawn inside.

The *physical board* of a state (:meth:`GameRules.board`) is what the sensors should report:
one :data:`Piece` for every sensed cell of the layout, garden and side zones alike.  The
referee compares it with what the board controller reports.

Piece names (canonical, also used by the case files)
----------------------------------------------------
``""`` empty · a colour name (``"blue"``) a flower · ``"wild"`` the Enceladus wildflower ·
``"peak"`` · ``"tree"`` · ``"M1"`` the Martian/gardener of player 1 · ``"M1+red"`` the
gardener of player 1 standing on a red flower · ``"D1"`` player 1's disc on an action slot
(``"D0"`` the neutral cover of an action that is off in this game) · ``"occupied"`` what a
presence-only sensor reports for any piece.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from operator import attrgetter
from typing import Any, ClassVar, Generic, Protocol, TypeAlias, TypeVar, cast

from companion.errors import InvalidArgumentError, InvalidPositionError, InvalidStepError

Cell = str
"""A cell name: ``"e6"``, ``"L3"``, ``"A4"``, ``"T1"`` (Enceladus) or ``"-3,2"`` (hex boards)."""

Piece = str
"""A canonical piece name, see the module docstring."""

Board = Mapping[Cell, Piece]
"""A physical board: every cell of a layout mapped to its piece (``EMPTY`` included)."""

Move: TypeAlias = tuple[Cell, Cell | None, Piece]
"""A normal move of a piece as :meth:`GameRules.moves_from` lists it: ``(landing, the other
cell it empties or None, what the cell it left shows after)``."""

EMPTY: Piece = ""
PEAK: Piece = "peak"
TREE: Piece = "tree"
WILD: Piece = "wild"
OCCUPIED: Piece = "occupied"


def martian(player: int) -> Piece:
    """The piece of player ``player``'s Martian or gardener, e.g. ``martian(1) == "M1"``."""
    return f"M{player}"


def martian_on(player: int, colour: str) -> Piece:
    """A gardener standing on a flower: ``martian_on(1, "red") == "M1+red"``."""
    return f"M{player}+{colour}"


def top_and_under(piece: Piece) -> tuple[Piece, str]:
    """A piece as what stands on top and the flower under it: ``("M1", "red")`` for
    ``"M1+red"``, ``(piece, "")`` for any piece that is not a gardener on a flower.  Cheaper
    than :func:`parse_piece` where only the two parts matter (recognition, the simulator)."""
    top, _, under = piece.partition("+")
    return top, under


def disc(player: int) -> Piece:
    """Player ``player``'s disc on an Enceladus action slot; ``disc(0)`` is the neutral cover."""
    return f"D{player}"


class CaseWarning(UserWarning):
    """A case position a real game cannot reach but whose question can still be answered
    (more flowers of a colour than the game has): ``rules check`` answers it and says so on
    standard error.  A warning, not an error: nothing is refused."""


@dataclass(frozen=True, slots=True)
class PieceInfo:
    """A piece name taken apart: ``player`` (0 when none), ``kind`` and ``colour``.

    ``kind`` is one of ``empty flower wild peak tree martian disc occupied``; ``colour``
    is the flower's colour (also of the flower under a gardener), else ``""``.
    """

    kind: str
    player: int = 0
    colour: str = ""


@lru_cache(maxsize=512)
def parse_piece(piece: Piece) -> PieceInfo:
    """Take a canonical piece name apart (see the module docstring); memoised, since a
    handful of names are read on every field update and every frame.

    Raises :class:`companion.errors.InvalidStepError` for a name that is not a piece.
    """
    if piece == EMPTY:
        return PieceInfo("empty")
    if piece in (PEAK, TREE, WILD, OCCUPIED):
        return PieceInfo(piece)
    if piece[0] in "MD" and len(piece) >= 2 and piece[1].isdigit():
        head, _, colour = piece.partition("+")
        if head[1:].isdigit() and len(head) == 2:
            kind = "martian" if head[0] == "M" else "disc"
            if colour and (kind == "disc" or not colour.isalpha()):
                raise InvalidStepError(f"{piece!r} is not a piece")
            return PieceInfo(kind, int(head[1:]), colour)
    if piece.isalpha() and piece.islower():
        return PieceInfo("flower", 0, piece)
    raise InvalidStepError(f"{piece!r} is not a piece")


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game, as data.

    ``winners``: the players (numbered from 1) who share the win, best first.
    ``termination``: a short phrase for players, e.g. ``"no flower in reach"``.
    ``ranking``: every player with a display string of their result (``"3-4-5-5-6"``,
    ``"27 pts"``) and their rank points, best first.
    """

    winners: tuple[int, ...]
    termination: str
    ranking: tuple[tuple[int, str, int], ...] = ()


class Seated(Hashable, Protocol):
    """What every game's state tells: how many play and whose step is next."""

    @property
    def players(self) -> int:
        """The number of players."""
        ...

    @property
    def to_move(self) -> int:
        """The player (from 1) whose step comes next."""
        ...


State = TypeVar("State", bound=Seated)
Step = TypeVar("Step", bound=Hashable)


class GameRules(Protocol[State, Step]):
    """The seam between a rules core and the referee, the display and the tools.

    Implemented by ``companion.rules.enceladus.RULES`` and the other games.  Every method is
    pure.  The referee finds the step a player made by comparing the observed board with
    ``board(apply(state, step))`` (or the cheaper :meth:`changes`) for the legal steps.
    """

    name: ClassVar[str]
    """``"enceladus"``, ``"mars"`` or ``"uranus"``."""

    def new_game(self, players: int, seed: int, options: Mapping[str, object]) -> State:
        """A random setup (seeded, reproducible) before any player has placed a piece.

        Raises :class:`companion.errors.ConfigError` for an unknown option or a bad value and
        :class:`companion.errors.InvalidPositionError` for an unsupported number of players.
        """
        ...

    def layout(self, state: State) -> tuple[Cell, ...]:
        """Every sensed cell of this game's board, garden and side zones, in dump order."""
        ...

    def tray_cells(self, state: State) -> frozenset[Cell]:
        """Cells where players *show* flowers (the Enceladus tray): never compared with the
        expected board, only read to settle what the board cannot (payment, tube draws)."""
        ...

    def board(self, state: State) -> dict[Cell, Piece]:
        """The physical board of ``state``: every cell of :meth:`layout` to its piece; tray
        cells are ``EMPTY``."""
        ...

    def players(self, state: State) -> int:
        """The number of players."""
        ...

    def to_move(self, state: State) -> int:
        """The player (from 1) whose step comes next."""
        ...

    def legal_steps(self, state: State) -> Iterable[Step]:
        """Every legal step; empty once the game is over.  A generator, a
        :class:`~collections.abc.Sequence` whose ``len``, ``[i]`` and ``in`` make no step
        but the one read (Gardens of Enceladus, thousands of steps a position), or a
        sequence of steps each made once and shared (Mars and Uranus, a hundred or so)."""
        ...

    def apply(self, state: State, step: Step) -> State:
        """The state after ``step``.  Raises :class:`companion.errors.IllegalMoveError` with
        the reason and the rule when the step is not legal in ``state``."""
        ...

    def advance(self, state: State, step: Step) -> State:
        """:meth:`apply` without the end test where a core's is costly (Gardens of Enceladus:
        a search whether special actions may still give a move): the state after ``step`` as
        :meth:`apply` gives it, but for the game yet to be found over there.  Two steps of
        ``state`` advance to equal states exactly when they apply to equal ones, so a question
        whether steps lead to one state asks this.  Raises as :meth:`apply`."""
        ...

    def candidates(
        self,
        state: State,
        touched: frozenset[Cell],
        within: frozenset[Cell] | None = None,
        distinct: bool = False,
    ) -> Iterator[Step]:
        """The legal steps whose :meth:`changes` may cover every cell of ``touched`` (the
        cells where the observed board differs from :meth:`board`) and, when ``within`` is
        given, lie within those cells, apart from a gardener stepping onto or off the flower
        under it (``"red"`` <-> ``"M1+red"``, which a presence sensor cannot see).

        A cheap superset is fine (the referee checks each step exactly); it exists so that
        recognition never walks thousands of steps that cannot explain what the sensors see.
        A step may be left out when a step yielded has the same changes and leads to the same
        state (swapping two flowers of one colour changes no cell, whichever two they are);
        with ``distinct``, whenever a step yielded has the same changes (one payment colour
        stands for all: the referee only asks what the board can still become), so that every
        step the same call yields without ``distinct`` has the changes of one it yields with.
        """
        ...

    def changes(self, state: State, step: Step) -> dict[Cell, Piece]:
        """The cells whose piece ``step`` changes, mapped to their new piece: exactly
        ``{c: p for c, p in board(apply(state, step)).items() if board(state)[c] != p}``."""
        ...

    def moves_from(self, state: State, cell: Cell) -> list[Move] | None:
        """The normal moves of the piece on ``cell`` (no special action), each as ``(landing,
        the other cell it empties or None, what ``cell`` shows after)``, listed without
        working each step out (a Martian's moves: its destinations shown while it is in the
        hand); ``[]`` when that piece has none, ``None`` when the core cannot list them so
        (the referee then asks :meth:`changes` of each candidate)."""
        ...

    def outcome(self, state: State) -> Outcome | None:
        """``None`` while the game goes on, else how it ended."""
        ...

    def choice_path(self, state: State, step: Step) -> tuple[str, ...]:
        """What the sensors may not see of ``step``, as short labels to ask the players
        level by level (``("pay blue",)``, ``("pay red", "draw 1: blue", "draw 2: blue",
        "draw 3: red")``); a label names its level, so no two levels share one.  The referee
        asks only among steps that leave the same board."""
        ...

    def tray_filter(
        self, state: State, steps: Sequence[Step], tray: Mapping[str, int]
    ) -> list[Step]:
        """The steps among ``steps`` whose payment/draws match the flowers shown on the tray
        (``{colour: count}``); ``steps`` unchanged when the tray tells nothing."""
        ...

    def status(self, state: State) -> tuple[tuple[int, str], ...]:
        """Per player, what the score line shows now: ``((1, "3-4-5-5-6"), (2, "0-4-5-5-6"))``."""
        ...

    def format_step(self, state: State, step: Step) -> str:
        """The step in the compact notation (round-trips through :meth:`parse_step`)."""
        ...

    def parse_step(self, state: State, text: str) -> Step:
        """Read a step in the compact notation.  Raises :class:`InvalidStepError` (syntax)."""
        ...

    def format_position(self, state: State) -> str:
        """The whole state in one line of compact text (round-trips)."""
        ...

    def parse_position(self, text: str) -> State:
        """Read :meth:`format_position` back.  Raises :class:`InvalidStepError`."""
        ...

    # -- a setup laid out by hand (at random, as the rules texts say) instead of the seed's
    def setup_problems(self, state: State, board: Board) -> list[SetupProblem]:
        """Every setup condition of the rules that ``board`` (every cell of the layout to
        its piece, as an identity board reports it) breaks, each with its cells; ``[]`` when
        it is a legal setup.  ``state`` is a fresh game of :meth:`new_game` (its players and
        options)."""
        ...

    def adopt_setup(self, state: State, board: Board) -> State:
        """``state`` (a fresh game) with the setup of ``board`` in place of its seeded one;
        what is not on the board (dealt reserves, hands) stays.  Raises
        :class:`companion.errors.InvalidPositionError` with every sentence of
        :meth:`setup_problems` when it finds any (:func:`setup_refused`)."""
        ...

    def reserve_problems(self, state: State, reserves: Sequence[Mapping[str, int]]) -> list[str]:
        """What does not add up in reserves dealt by hand at the table (``reserves[p - 1]``:
        player p's ``{colour: count}``) for the fresh game ``state``: one sentence per
        problem (the rules' flowers per player and of each colour in the bag); ``[]`` when
        the deal adds up."""
        ...

    def deal_reserves(self, state: State, reserves: Sequence[Mapping[str, int]]) -> State:
        """``state`` (a fresh game) with ``reserves`` as dealt by hand in place of its seeded
        deal.  Raises :class:`companion.errors.InvalidPositionError` with every sentence of
        :meth:`reserve_problems` when it finds any."""
        ...


SomeRules: TypeAlias = GameRules[Any, Any]
"""The rules core of one game or another, for the parts that serve every game (the referee,
the journal, the tools).  Python has no existential types: this alias is the one place where
a game's own ``State`` and ``Step`` are erased; the states and steps such a part holds are
``object`` to it and go back only into the same core."""


GameState = TypeVar("GameState", bound=Seated)


def own_state(state: Seated, kind: type[GameState]) -> GameState:
    """``state`` as its game's own ``kind`` of state, for a part that serves one game (a
    referee's extension, a Uranus seat's cards) and is handed the states a game-generic part
    holds as :class:`Seated`."""
    assert isinstance(state, kind), f"a {type(state).__qualname__}, not a {kind.__qualname__}"
    return state


class Rules(Generic[State, Step]):
    """The defaults every rules core shares; each game's class derives from it with its own
    ``State`` and ``Step`` and implements the rest of :class:`GameRules`.

    A game with no flower tray keeps :meth:`tray_cells` and :meth:`tray_filter`.
    """

    name: ClassVar[str]

    def players(self, state: State) -> int:
        """The number of players."""
        return state.players

    def to_move(self, state: State) -> int:
        """The player (from 1) whose step comes next."""
        return state.to_move

    def tray_cells(self, state: State) -> frozenset[Cell]:
        """None: the game has no flower tray."""
        return frozenset()

    def tray_filter(
        self, state: State, steps: Sequence[Step], tray: Mapping[str, int]
    ) -> list[Step]:
        """``steps`` unchanged: the game pays nothing through a flower tray."""
        return list(steps)

    def moves_from(self, state: State, cell: Cell) -> list[Move] | None:
        """``None``: the referee works a piece's moves out from each candidate's changes."""
        return None


Item = TypeVar("Item")


def replaced(values: tuple[Item, ...], index: int, value: Item) -> tuple[Item, ...]:
    """``values`` with ``values[index]`` replaced by ``value``."""
    return values[:index] + (value,) + values[index + 1 :]


Frozen = TypeVar("Frozen")


def evolved(obj: Frozen, **changes: object) -> Frozen:
    """``dataclasses.replace(obj, **changes)`` for a frozen dataclass with slots (a rules
    core's state): the fields read at once and set through their slots, in a fifth of the
    time, for the states made on every step of a search.  ``__post_init__`` is not run: a
    field it works out (one not in ``__init__``) is copied unless ``changes`` gives it anew.
    Raises :class:`InvalidArgumentError` for a name that is not a field."""
    cls = type(obj)
    slots = _SLOTS.get(cls)
    if slots is None:
        names = tuple(f.name for f in fields(cast("type[Any]", cls)))
        read: Callable[[object], tuple[object, ...]] = (
            attrgetter(*names) if len(names) > 1 else lambda o: (getattr(o, names[0]),))
        slots = _SLOTS[cls] = (names, frozenset(names), read,
                               tuple(getattr(cls, name).__set__ for name in names))
    names, known, read, setters = slots
    if not known.issuperset(changes):
        unknown = [name for name in changes if name not in known]
        raise InvalidArgumentError(f"{cls.__name__} has no field {', '.join(unknown)}")
    new = object.__new__(cls)
    given = changes.get
    for name, setter, value in zip(names, setters, read(obj), strict=True):
        setter(new, given(name, value))
    return new


_SLOTS: dict[type, tuple[tuple[str, ...], frozenset[str], Callable[[object], tuple[object, ...]],
                         tuple[Callable[[object, object], None], ...]]] = {}
"""Per class :func:`evolved` has copied: its fields' names (and as a set), what reads them
all, and the setter of each one's slot."""


def rank_points(keys: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Per player (index p - 1), ``(N - 1) - (players with a strictly better key)``: ties
    share the higher value.  A key is a tuple of numbers compared in order, greater better
    (an Enceladus hand, a score then a tiebreak)."""
    top = len(keys) - 1
    return tuple(top - sum(other > mine for other in keys) for mine in keys)


def ranked(keys: Sequence[tuple[int, ...]], shown: Sequence[str], termination: str) -> Outcome:
    """The :class:`Outcome` of a finished game from each player's ``keys`` (index p - 1,
    greater is better, equal keys tie) and the result ``shown`` for them: the players with
    the best key win together; the ranking lists ``(player, shown, rank points)`` (see
    :func:`rank_points`) best first, a tie in player order."""
    points = rank_points(keys)
    order = sorted(range(len(points)), key=lambda i: (-points[i], i))
    best = max(points)
    return Outcome(
        winners=tuple(i + 1 for i in order if points[i] == best),
        termination=termination,
        ranking=tuple((i + 1, shown[i], points[i]) for i in order),
    )


def board_diff(before: Board, after: Board) -> dict[Cell, Piece]:
    """The cells where ``after`` differs from ``before``, mapped to their piece in ``after``."""
    return {cell: piece for cell, piece in after.items() if before.get(cell, EMPTY) != piece}


def tray_counts(board: Board, tray: Iterable[Cell]) -> dict[str, int]:
    """``{colour: count}`` of the flowers shown on the tray cells of an observed board."""
    counts: dict[str, int] = {}
    for cell in tray:
        info = parse_piece(board.get(cell, EMPTY))
        if info.kind == "flower":
            counts[info.colour] = counts.get(info.colour, 0) + 1
    return counts


# ----------------------------------------------------------------------------- setups by hand


@dataclass(frozen=True, slots=True)
class SetupProblem:
    """One setup condition a board laid out by hand breaks: ``text``, a sentence for the
    players naming the condition and what the board shows instead, and ``cells``, the
    cells that break it, in the layout's order (empty when no cell is to blame, such as
    too few peaks on a garden otherwise full)."""

    text: str
    cells: tuple[Cell, ...] = ()


def setup_refused(problems: Sequence[SetupProblem]) -> InvalidPositionError:
    """The error for a setup with ``problems`` (at least one): every sentence, in order."""
    return InvalidPositionError(" ".join(p.text for p in problems))


def deal_problems(players: int, reserves: Sequence[Mapping[str, int]],
                  colours: Sequence[str], deal: Mapping[int, int], per_colour: int) -> list[str]:
    """What does not add up in reserves dealt by hand from a bag of ``per_colour`` flowers
    of each of ``colours``, ``deal[players]`` to each player (``reserves[p - 1]``: player
    p's ``{colour: count}``): one sentence per problem, ``[]`` when the deal adds up."""
    if len(reserves) != players:
        return [f"{players} players are dealt flowers, not {len(reserves)}."]
    problems: list[str] = []
    want = deal[players]
    for player, counts in enumerate(reserves, start=1):
        unknown = sorted(set(counts) - set(colours))
        if unknown:
            problems.append(f"P{player}'s reserve names {', '.join(unknown)}: the colours are "
                            f"{', '.join(colours)}.")
        if any(n < 0 for n in counts.values()):
            problems.append(f"P{player}'s reserve has a count below 0.")
        total = sum(counts.get(c, 0) for c in colours)
        if total != want:
            problems.append(f"P{player} has {total} flowers: with {players} players each is "
                            f"dealt {want}.")
    for colour in colours:
        total = sum(r.get(colour, 0) for r in reserves)
        if total > per_colour:
            problems.append(f"The reserves hold {total} {colour} flowers: the bag has only "
                            f"{per_colour}.")
    return problems


def listed(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``; past six names, the first five and a count."""
    if len(names) > 6:
        return f"{', '.join(names[:5])} and {len(names) - 5} more"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
