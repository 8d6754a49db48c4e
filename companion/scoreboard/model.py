"""The scoreboard as data: every table of an event and the standings, rebuilt from MQTT messages.

Pure and without a network: :meth:`Scoreboard.receive` takes one message (topic and payload
bytes, as the broker delivers it) and :meth:`Scoreboard.set_name` an organiser's name for a
seat; everything else is read back as views (:meth:`Scoreboard.tables`,
:meth:`Scoreboard.table`, :meth:`Scoreboard.standings`, :meth:`Scoreboard.finished`).  The
methods take a lock, so the MQTT client's thread may feed it while a server or a terminal
reads it.

What is trusted: nothing in a message.  Each table's game is rebuilt from its ``game`` header
(the setup) and its ``step`` messages with the game's own rules core, as ``companion replay``
replays a journal; the scores, whose turn and the end come from that position, never from the
message.  A step message is keyed by ``(table, game_id, seq)``: a seq already applied is a
copy (delivery is at least once) and dropped; one ahead of the next expected waits for the
ones before it.  The retained ``state`` message fills in a table whose steps this scoreboard
did not see (it started after the game began, or a broker restarted without its sessions
lost them): its ``history``, the steps in force, is replayed as the steps are, and a state
whose history the rules refuse is ignored; without one its scores are shown as sent, and the
board is not.

Bad input -- not JSON, over :data:`MAX_PAYLOAD_BYTES`, wrong types, an unknown game, a setup
or step the rules refuse, a seq gone backwards or seen before -- is ignored and said once per
table and kind of problem in one sentence on the log; a game whose steps cannot be replayed
shows why and does not count in the standings.

Standings: every finished game gives each seat the rank points of its game's own ranking
(:meth:`companion.rules.base.GameRules.outcome`): in a game of N players the best gets N-1,
the next N-2, down to 0 for the last; players still tied after the game's tie-breaks share
the higher points, as the Gardens of Enceladus rules score hands (the Mars and Uranus cores
rank the same way).  Points add up per player name, so standings follow the players from
table to table.  A seat's name is, in order: the organiser's name set on this scoreboard for
that game, the name the table sent in its header (``[players] names`` or the table page's new
game form), the organiser's name for that table and seat in an earlier game, else the table
and seat (``"t3 seat 2"``).  Names are compared without regard to case or spacing.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Literal

import msgspec

from companion.config import MAX_NAME
from companion.errors import CompanionError
from companion.referee.screen import Screen
from companion.rules import GAMES, LAYOUTS
from companion.rules import load as load_rules
from companion.rules.base import Outcome, SomeRules

log = logging.getLogger("companion.scoreboard")

MAX_PAYLOAD_BYTES = 64 * 1024
"""The largest message read; a table's biggest, the state of a long game with its history, is
a few KiB."""

MAX_TABLES = 1000
"""Tables kept; a message naming one more is ignored."""

MAX_WAITING = 2000
"""Step messages kept per table while the ones before them (or their header) have not come."""

MAX_GAMES = 500
"""Games kept per table (an evening is a few rounds); the oldest unfinished ones go first."""

TABLE_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""What a table may be called (``[mqtt] table``); a topic with another name is ignored."""

# Reading the rules core's notation from a message is reading hostile text: besides the core's
# own refusal (CompanionError) a malformed setup can trip the parser anywhere.
_PARSE_ERRORS = (CompanionError, ValueError, IndexError, KeyError, TypeError, AttributeError)


def _cut(text: str, limit: int = 200) -> str:
    """``text`` (a rules core's refusal of hostile text) cut to ``limit`` characters, marked
    as cut: long enough that the core's own sentence, with the value it names, fits whole."""
    return text if len(text) <= limit else text[: limit - 3] + "..."

Name = Annotated[str, msgspec.Meta(max_length=MAX_NAME)]
Text = Annotated[str, msgspec.Meta(max_length=200)]
GameId = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class Header(msgspec.Struct, kw_only=True):
    """A ``game`` message: the journal header of the table's game (fields besides these are
    read past, so a newer companion's are no trouble)."""

    v: int
    table: str
    game_id: GameId
    game: str
    layout: str = ""
    players: Annotated[int, msgspec.Meta(ge=1, le=8)]
    names: Annotated[list[Name], msgspec.Meta(max_length=8)] = []
    setup: Annotated[str, msgspec.Meta(max_length=16 * 1024)]
    started: Text = ""


class StepMessage(msgspec.Struct, kw_only=True):
    """A ``step`` message: one journal line after the header."""

    v: int
    table: str
    game_id: GameId
    seq: Annotated[int, msgspec.Meta(ge=2, le=10**9)]
    kind: Literal["step", "undo", "over"]
    n: Annotated[int, msgspec.Meta(ge=0, le=10**6)] = 0
    step: Text = ""


class StateMessage(msgspec.Struct, kw_only=True):
    """A retained ``state`` message, read only for a table whose steps were missed:
    ``history`` (the steps in force, in notation) rebuilds its game, else its scores are
    shown as they are."""

    v: int
    table: str
    game_id: GameId
    seq: Annotated[int, msgspec.Meta(ge=1, le=10**9)]
    to_move: int | None = None
    scores: Annotated[list[int | float | Text], msgspec.Meta(max_length=8)] = []
    over: bool = False
    winners: Annotated[list[int], msgspec.Meta(max_length=8)] = []
    steps: int = 0
    history: Annotated[list[Text], msgspec.Meta(max_length=10_000)] | None = None


_DECODERS: dict[str, Callable[[bytes | bytearray], Header | StepMessage | StateMessage]] = {
    "game": msgspec.json.Decoder(Header).decode,
    "step": msgspec.json.Decoder(StepMessage).decode,
    "state": msgspec.json.Decoder(StateMessage).decode}


class Refused(Exception):
    """A message that is ignored: ``kind`` of problem (one log line per table and kind) and
    the sentence that says it."""

    def __init__(self, kind: str, sentence: str) -> None:
        super().__init__(sentence)
        self.kind = kind


@dataclass
class _Game:
    """One game of a table, as far as its messages rebuilt it."""

    header: Header
    ordinal: int  # its place among the table's games, for the organiser's names
    rules: SomeRules | None
    layout: str
    position: object = None
    notation: list[str] = field(default_factory=list)  # the steps in force
    positions: list[object] = field(default_factory=list)  # before each step in force
    applied: int = 1  # the last seq applied (the header is line 1 of the journal)
    waiting: dict[int, StepMessage] = field(default_factory=dict)
    broken: str = ""
    outcome: Outcome | None = None


@dataclass
class _Table:
    name: str
    status: str = "unknown"
    current: _Game | None = None
    games: dict[str, _Game] = field(default_factory=dict)
    early: list[StepMessage] = field(default_factory=list)  # steps whose header has not come
    state: StateMessage | None = None
    ignored: int = 0


@dataclass(frozen=True, slots=True)
class TableView:
    """One table as shown: ``table``, ``status`` (``online``, ``offline`` or ``unknown``),
    its current (or last) game: ``game`` (``""`` before any header), ``game_id``,
    ``names`` (one per seat), ``scores`` (``((1, "3-4-5-5-6"), ...)``), ``to_move`` (seat
    from 1, 0 when nobody), ``over``, ``winners`` (seats), ``steps`` (steps in force),
    ``note`` (why the board is not shown or the game cannot be replayed, ``""`` when all is
    well), ``ignored`` (messages ignored so far), ``seq`` (the last journal line applied:
    a position is known by ``(game_id, seq)``) and ``screen``, the position as the table's
    matrix would draw it (``None`` when it is not known)."""

    table: str
    status: str
    game: str
    game_id: str
    names: tuple[str, ...]
    scores: tuple[tuple[int, str], ...]
    to_move: int
    over: bool
    winners: tuple[int, ...]
    steps: int
    note: str
    ignored: int
    seq: int
    screen: Screen | None


@dataclass(frozen=True, slots=True)
class FinishedView:
    """A finished game: ``table``, ``game_id``, ``game`` and ``ranking``, best first, as
    ``(seat, name, result text, rank points)``; ``winners`` are names."""

    table: str
    game_id: str
    game: str
    ranking: tuple[tuple[int, str, str, int], ...]
    winners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the standings: ``rank`` (from 1; equal points share it), ``name``,
    ``points`` (rank points summed), ``games`` finished and ``wins``."""

    rank: int
    name: str
    points: int
    games: int
    wins: int


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


class Scoreboard:
    """Every table under the topic ``prefix`` (``[mqtt] topic``, ``gardens`` by default);
    see the module docstring.  :attr:`version` rises with every change."""

    def __init__(self, prefix: str = "gardens") -> None:
        self.prefix = prefix
        self.version = 0
        self._tables: dict[str, _Table] = {}
        self._said: set[tuple[str, str]] = set()
        self._names: dict[tuple[str, int], list[tuple[int, str]]] = {}  # (ordinal, name)
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ input
    def receive(self, topic: str, payload: bytes | bytearray) -> bool:
        """Take one message; ``True`` when it changed what the scoreboard shows.  Never
        raises for what a message holds: a bad one is ignored and said once (see the module
        docstring)."""
        with self._lock:
            parts = topic.split("/")
            table_name = parts[-2] if len(parts) >= 2 else ""
            try:
                changed = self._receive(parts, payload)
            except Refused as refused:
                if refused.kind != "topic" and table_name in self._tables:
                    self._tables[table_name].ignored += 1
                self._complain(table_name, refused.kind, str(refused))
                return False
            if changed:
                self.version += 1
            return changed

    def set_name(self, table: str, seat: int, name: str) -> None:
        """Name ``seat`` (from 1) of ``table`` for its current game and later ones, unless a
        later game's header names that seat; ``""`` takes the organiser's name away.  Raises
        :class:`CompanionError` with a sentence for an unknown table or seat, or a name
        over :data:`MAX_NAME` characters."""
        name = " ".join(name.split())
        with self._lock:
            found = self._tables.get(table)
            game = found.current if found is not None else None
            if game is None:
                raise CompanionError(f"There is no table {table!r} with a game to name")
            if not 1 <= seat <= game.header.players:
                raise CompanionError(f"Table {table} has seats 1 to {game.header.players}")
            if len(name) > MAX_NAME:
                raise CompanionError(f"A name has at most {MAX_NAME} characters")
            named = [(o, n) for o, n in self._names.get((table, seat), []) if o != game.ordinal]
            self._names[(table, seat)] = [*named, (game.ordinal, name)]
            log.info("table %s seat %d is named %r by the organiser", table, seat, name)
            self.version += 1

    # ------------------------------------------------------------------ views
    def tables(self) -> list[TableView]:
        """Every table, by name."""
        with self._lock:
            return [self._view(self._tables[name]) for name in sorted(self._tables)]

    def table(self, name: str) -> TableView | None:
        """Table ``name`` (``None`` when none of that name was heard from)."""
        with self._lock:
            found = self._tables.get(name)
            return None if found is None else self._view(found)

    def finished(self) -> list[FinishedView]:
        """Every finished game that was replayed whole, table by table in the order they
        began."""
        with self._lock:
            out = []
            for name in sorted(self._tables):
                table = self._tables[name]
                for game in table.games.values():
                    if game.outcome is None or game.broken:
                        continue
                    names = self._seat_names(table.name, game)
                    out.append(FinishedView(
                        name, game.header.game_id, game.header.game,
                        tuple((p, names[p - 1], result, points)
                              for p, result, points in game.outcome.ranking),
                        tuple(names[p - 1] for p in game.outcome.winners)))
            return out

    def standings(self) -> list[Standing]:
        """The standings over every finished game (:func:`rank`)."""
        return rank(self.finished())

    # ------------------------------------------------------------------ reading messages
    def _receive(self, parts: list[str], payload: bytes | bytearray) -> bool:
        if len(parts) < 3 or "/".join(parts[:-2]) != self.prefix or \
                not TABLE_NAME.fullmatch(parts[-2]):
            raise Refused("topic", f"a message on {'/'.join(parts)[:80]!r} was ignored: it "
                          f"is no table's topic under {self.prefix}/")
        name, kind = parts[-2], parts[-1]
        if kind not in ("status", "game", "step", "state"):
            return False  # a topic of a later version, or Home Assistant's: not ours to read
        if len(payload) > MAX_PAYLOAD_BYTES:
            raise Refused("size", f"a {kind} message of table {name} was ignored: it is "
                          f"{len(payload)} bytes, more than {MAX_PAYLOAD_BYTES}")
        table = self._tables.get(name)
        if table is None:
            if len(self._tables) >= MAX_TABLES:
                raise Refused("tables", f"table {name} was ignored: the scoreboard follows "
                              f"{MAX_TABLES} tables at most")
            table = self._tables[name] = _Table(name)
        if kind == "status":
            status = payload.decode("utf-8", "replace").strip()
            if status not in ("online", "offline"):
                raise Refused("status", f"a status of table {name} was ignored: it is "
                              f"{status[:20]!r}, neither online nor offline")
            changed = table.status != status
            table.status = status
            return changed
        try:
            message = _DECODERS[kind](payload)
        except (msgspec.DecodeError, RecursionError) as error:
            raise Refused(f"{kind} json", f"a {kind} message of table {name} was ignored: "
                          f"it is not the JSON the companion sends ({error})") from None
        if message.v != 1 or message.table != name:
            raise Refused(f"{kind} v", f"a {kind} message of table {name} was ignored: it "
                          f"is version {message.v} of table {message.table[:40]!r}, this "
                          "scoreboard reads version 1 of the table of its topic")
        if isinstance(message, Header):
            return self._header(table, message)
        if isinstance(message, StepMessage):
            return self._step(table, message)
        known = table.state
        if known is not None and known.game_id == message.game_id and known.seq >= message.seq:
            return False  # an old one sent again
        game = table.games.get(message.game_id)
        if game is not None and message.history is not None and message.seq > game.applied \
                and not game.broken:
            self._catch_up(table, game, message.seq, message.history)
        table.state = message  # only once its history replayed: a bad one would hide later ones
        return True

    def _header(self, table: _Table, header: Header) -> bool:
        if header.game_id in table.games:
            game = table.games[header.game_id]
            changed = table.current is not game
            table.current = game  # republished on reconnect: the same game
            return changed
        rules, layout, broken = None, "", ""
        if header.game not in GAMES:
            broken = f"its game {header.game[:20]!r} is none this scoreboard knows"
        else:
            rules = load_rules(header.game).RULES
            layout = header.layout if header.layout in LAYOUTS and \
                header.layout.partition("-")[0] == header.game else header.game
            if layout == "uranus":
                layout = "uranus-hexagonal"
        game = _Game(header, len(table.games), rules, layout)
        if rules is not None:
            try:
                game.position = rules.parse_position(header.setup)
                if rules.players(game.position) != header.players:
                    broken = f"its setup is for {rules.players(game.position)} players, not " \
                             f"{header.players}"
            except _PARSE_ERRORS as error:
                broken = f"its setup cannot be read ({_cut(str(error))})"
        game.broken = broken
        if broken:
            table.ignored += 1
            self._complain(table.name, f"setup {header.game_id}", f"game {header.game_id} of "
                           f"table {table.name} cannot be followed: {broken}")
        if len(table.games) >= MAX_GAMES:
            oldest = next((g for g in table.games.values() if g.outcome is None),
                          next(iter(table.games.values())))
            del table.games[oldest.header.game_id]
        table.games[header.game_id] = game
        table.current = game
        early, table.early = table.early, []
        for step in early:
            if step.game_id == header.game_id:
                self._step(table, step)
            else:
                table.early.append(step)
        return True

    def _step(self, table: _Table, step: StepMessage) -> bool:
        game = table.games.get(step.game_id)
        if game is None:
            if len(table.early) >= MAX_WAITING:
                raise Refused("early", f"steps of table {table.name} are ignored: more than "
                              f"{MAX_WAITING} came before their game's header")
            table.early.append(step)
            return False
        if step.seq <= game.applied or step.seq in game.waiting:
            log.debug("table %s game %s line %d was seen before", table.name, step.game_id,
                      step.seq)
            return False  # a copy: at-least-once delivery, or the publisher's retry
        if game.broken:
            table.ignored += 1
            return False
        if step.seq > game.applied + 1:
            if len(game.waiting) >= MAX_WAITING:
                raise Refused("gap", f"table {table.name} game {step.game_id} is missing "
                              f"line {game.applied + 1}: later ones are ignored")
            game.waiting[step.seq] = step
            return False
        self._apply(table, game, step)
        self._drain(table, game)
        return True

    def _drain(self, table: _Table, game: _Game) -> None:
        """Apply the steps that waited for the ones now applied."""
        while game.applied + 1 in game.waiting and not game.broken:
            self._apply(table, game, game.waiting.pop(game.applied + 1))

    def _catch_up(self, table: _Table, game: _Game, seq: int, history: list[str]) -> None:
        """Rebuild ``game`` up to journal line ``seq`` from ``history``, its steps in force
        then (the steps before were missed: the scoreboard came late, or the broker lost
        them), then apply the steps after it that came.  Raises :class:`Refused`, the game
        left as it was, for a history the rules refuse."""
        rules = game.rules
        assert rules is not None  # a game without rules is broken
        try:
            position = rules.parse_position(game.header.setup)
            positions = []
            for text in history:
                positions.append(position)
                position = rules.apply(position, rules.parse_step(position, text))
        except _PARSE_ERRORS as error:
            raise Refused(f"history {game.header.game_id}", f"a state message of table "
                          f"{table.name} was ignored: the steps of game {game.header.game_id} "
                          f"it holds cannot be replayed: {_cut(str(error))}") from None
        game.position, game.positions, game.notation = position, positions, list(history)
        game.applied = seq
        game.waiting = {s: m for s, m in game.waiting.items() if s > seq}
        game.outcome = rules.outcome(position)
        self._drain(table, game)

    def _apply(self, table: _Table, game: _Game, step: StepMessage) -> None:
        game.applied = step.seq
        rules = game.rules
        assert rules is not None  # a game without rules is broken
        if step.kind == "over":
            return  # the end is the rules core's to tell, from the position
        if step.kind == "undo":
            if not game.notation:
                self._break(table, game, f"line {step.seq} takes back a step that was not "
                                         "made")
                return
            game.notation.pop()
            game.position = game.positions.pop()
        else:
            if step.n != len(game.notation) + 1:
                self._break(table, game, f"line {step.seq} is step {step.n} where step "
                                         f"{len(game.notation) + 1} comes")
                return
            try:
                after = rules.apply(game.position, rules.parse_step(game.position, step.step))
            except _PARSE_ERRORS as error:
                self._break(table, game, f"step {step.n} ({step.step[:40]!r}) cannot be "
                                         f"replayed: {_cut(str(error))}")
                return
            game.positions.append(game.position)
            game.notation.append(step.step)
            game.position = after
        game.outcome = rules.outcome(game.position)

    def _break(self, table: _Table, game: _Game, why: str) -> None:
        game.broken = why
        game.outcome = None
        table.ignored += 1
        self._complain(table.name, f"replay {game.header.game_id}",
                       f"game {game.header.game_id} of table {table.name} cannot be replayed: "
                       f"{why}")

    def _complain(self, table: str, kind: str, sentence: str) -> None:
        if (table, kind) in self._said:
            return
        if len(self._said) < 100 * MAX_TABLES:
            self._said.add((table, kind))
        log.warning("%s", sentence)

    # ------------------------------------------------------------------ views
    def _seat_names(self, table: str, game: _Game) -> tuple[str, ...]:
        names = []
        for seat in range(1, game.header.players + 1):
            set_here = self._names.get((table, seat), [])
            own = next((n for o, n in set_here if o == game.ordinal), None)
            sent = game.header.names[seat - 1] if seat <= len(game.header.names) else ""
            earlier = max(((o, n) for o, n in set_here if o < game.ordinal), default=(0, ""))
            names.append(" ".join((own or sent.strip() or earlier[1] or
                                   f"{table} seat {seat}").split()))
        return tuple(names)

    def _view(self, table: _Table) -> TableView:
        game = table.current
        if game is None:
            return TableView(table.name, table.status, "", "", (), (), 0, False, (), 0,
                             "waiting for its game", table.ignored, 0, None)
        names = self._seat_names(table.name, game)
        state = table.state if table.state and table.state.game_id == game.header.game_id \
            else None
        rules = game.rules
        if rules is None or game.broken or (state is not None and state.seq > game.applied):
            return self._from_state(table, game, names, state)
        outcome = game.outcome
        scores = tuple(rules.status(game.position))
        if outcome is not None:  # the final results (Uranus counts its missions only then)
            scores = tuple(sorted((p, r) for p, r, _ in outcome.ranking))
        to_move = 0 if outcome is not None else rules.to_move(game.position)
        message = f"P{to_move}: to move" if to_move else "Game over"
        ranking: tuple[tuple[int, str], ...] = ()
        if outcome is not None:
            ranking = tuple((p, r) for p, r, _ in outcome.ranking)
        screen = Screen(game=rules.name, layout=game.layout, cells=rules.board(game.position),
                        scores=scores, message=message, to_move=to_move, ranking=ranking)
        return TableView(table.name, table.status, game.header.game, game.header.game_id, names,
                         scores, to_move, outcome is not None,
                         outcome.winners if outcome is not None else (), len(game.notation),
                         "", table.ignored, game.applied, screen)

    def _from_state(self, table: _Table, game: _Game, names: tuple[str, ...],
                    state: StateMessage | None) -> TableView:
        if game.broken:
            note = f"cannot be replayed: {game.broken}"
        else:
            note = f"steps missed (waiting for journal line {game.applied + 1}): scores as the " \
                   "table last sent them"
        if state is None:
            return TableView(table.name, table.status, game.header.game, game.header.game_id,
                             names, (), 0, False, (), len(game.notation), note, table.ignored,
                             game.applied, None)
        scores = tuple((seat, str(score)) for seat, score in enumerate(state.scores, 1))
        return TableView(table.name, table.status, game.header.game, game.header.game_id,
                         names, scores, state.to_move or 0, state.over,
                         tuple(state.winners), state.steps, note, table.ignored, game.applied,
                         None)



def rank(finished: Iterable[FinishedView]) -> list[Standing]:
    """The standings over ``finished`` games (see the module docstring): players by rank
    points, then wins, then name; equal points share a rank."""
    totals: dict[str, tuple[str, int, int, int]] = {}  # (name, points, games, wins)
    for game in finished:
        won = set(game.winners)
        for _, name, _, points in game.ranking:
            first, before, games, wins = totals.get(_key(name), (name, 0, 0, 0))
            totals[_key(name)] = (first, before + points, games + 1, wins + (name in won))
    ordered = sorted(totals.values(), key=lambda e: (-e[1], -e[3], _key(e[0])))
    out: list[Standing] = []
    for i, (name, points, games, wins) in enumerate(ordered):
        place = out[-1].rank if out and out[-1].points == points else i + 1
        out.append(Standing(place, name, points, games, wins))
    return out
