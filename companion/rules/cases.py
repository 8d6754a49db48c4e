"""``companion rules check``: run rule case files (``docs/CASES.md``).

Each case is a position, one query and the answer the rules require.  The runner is generic;
each game supplies a :class:`CaseAdapter` (its module's ``CASES``) that reads the case's
position and steps into rules objects and answers queries in the case format.

Output: one ``PASS id`` / ``FAIL id: expected ..., got ...`` (or ``SKIP id: ...`` for a game
whose rules core is not built) line per case, then ``N passed, M failed`` alone on the last
line.  A malformed file is one ``FAIL file: ...`` line; a case of the wrong shape, of an
impossible position or with an id an earlier case has fails naming every problem, each by its
field (``position.to_move``, ``query.apply step 2``) and what is expected, in words.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import (
    Any,
    NoReturn,
    Protocol,
    Required,
    TypeAlias,
    TypedDict,
    TypeGuard,
    TypeVar,
    cast,
)

from companion import rules as rules_pkg
from companion.errors import (
    CompanionError,
    IllegalMoveError,
    InputFileError,
    InvalidStepError,
    RulesError,
)
from companion.files import read_text, reason_of
from companion.rules.base import CaseWarning, Cell, Piece

JsonTree: TypeAlias = Any
"""A JSON value as the json library reads and writes it (it has no type of its own): the
argument of a query, which the game's adapter reads, and the expectations and answers, which
:func:`_mismatches` compares as trees, key by key."""

JsonObject: TypeAlias = dict[str, object]
"""A case as :func:`load_cases` reads it, before :func:`case_problems` has checked it."""

Answer: TypeAlias = dict[str, JsonTree]
"""What an adapter answers, in the shape of the case's ``expect``."""


class Position(TypedDict, total=False):
    """A case's ``position``, once :func:`case_problems` found it of this shape; the keys
    beside ``players`` and ``to_move`` are those of the case's game (see ``_POSITION``)."""

    players: Required[int]
    to_move: Required[int]
    cells: dict[Cell, Piece]
    reserves: dict[str, dict[str, int]]
    tube: dict[str, int]
    used_actions: list[str]
    pool: list[int]
    scores: dict[str, int]
    planted: dict[str, int]
    board: str
    hands: dict[str, list[str]]
    decks: list[int]
    no_plant_run: int


class Case(TypedDict, total=False):
    """A case once :func:`case_problems` found it of this shape."""

    id: Required[str]
    game: Required[str]
    rule: str
    source: str
    options: dict[str, object]
    position: Required[Position]
    query: Required[dict[str, JsonTree]]
    expect: Required[dict[str, JsonTree]]


class MarsStep(TypedDict, total=False):
    """A Mars step of a case, once checked (the keys and checks of ``_STEP``)."""

    place: str
    to: str
    plant: str
    roll: list[int]
    die: int
    discard: int


class UranusStep(TypedDict, total=False):
    """A Uranus step of a case, once checked (the keys and checks of ``_STEP``)."""

    place: str
    to: str
    plant: str
    score: str
    drawn: str
    draw: int


CaseState = TypeVar("CaseState")
CaseMove = TypeVar("CaseMove", covariant=True)
CaseStep = TypeVar("CaseStep", contravariant=True)


class CaseAdapter(Protocol[CaseState, CaseMove, CaseStep]):
    """What a game gives the case runner, of its own ``State`` and ``Step`` and the shape of
    its case steps.

    ``position(case)`` builds the state from ``case["position"]`` and ``case["options"]``;
    ``step(state, step_json)`` reads one ``apply`` step; ``snapshot(state)`` answers in the
    shape of an ``apply`` expectation (``cells`` with every occupied cell, ``reserves``,
    ``tube``, ``scores``, ``to_move``, ``hands``, ``over``: whatever the game has);
    ``query(state, name, arg)`` answers every other query in the shape of its expectation.
    Errors: :class:`InvalidStepError` / :class:`IllegalMoveError` for a step the rules refuse.
    """

    def position(self, case: Case) -> CaseState: ...

    def step(self, state: CaseState, step: CaseStep) -> CaseMove: ...

    def snapshot(self, state: CaseState) -> Answer: ...

    def query(self, state: CaseState, name: str, arg: JsonTree) -> Answer: ...


SomeCases: TypeAlias = CaseAdapter[Any, Any, Any]
"""The case adapter of one game or another, as :data:`companion.rules.base.SomeRules` is its
rules core: the runner holds a state only to hand it back to the same game."""


@dataclass(frozen=True)
class CaseResult:
    """One case's verdict: ``status`` is ``PASS``, ``FAIL`` or ``SKIP``."""

    case_id: str
    status: str
    detail: str = ""
    notes: tuple[str, ...] = ()
    """What the position holds that no real game does, answered anyway (CaseWarning)."""

    def line(self) -> str:
        """The verdict as one line: a character that is not printable (a newline, an escape
        code, given in a case's id) is written as its escape, so no case prints a line of
        its own."""
        return _printable(f"{self.status} {self.case_id}"
                          + (f": {self.detail}" if self.detail else ""))

    def note_lines(self) -> list[str]:
        """Each note as one line for standard error, as printable as :meth:`line`."""
        return [_printable(f"companion: {self.case_id}: {text}; answered as given")
                for text in self.notes]


def _printable(line: str) -> str:
    return line if line.isprintable() else "".join(
        c if c.isprintable() else ascii(c)[1:-1] for c in line)


MAX_DEPTH = 32
"""How deep a case file may nest lists and objects; the format itself needs fewer than ten."""

_CASE_KEYS = ("id", "game", "rule", "source", "options", "position", "query", "expect")
_REQUIRED = ("id", "game", "position", "query", "expect")


def _shown(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


_Check: TypeAlias = Callable[[str, object, int], Iterator[str]]
"""The check of one field: its name, its value and the number of players -> a problem each."""


def _anything(field: str, value: object, players: int) -> Iterator[str]:
    return iter(())


def _count(field: str, value: object, players: int) -> Iterator[str]:
    if not _is_int(value) or value < 0:
        yield f"{field} is {_shown(value)}; expected a whole number, 0 or more"


def _player(field: str, value: object, players: int) -> Iterator[str]:
    if not _is_int(value) or not 1 <= value <= max(players, 1):
        yield f"{field} is {_shown(value)}; expected a player from 1 to {players}"


def _text(field: str, value: object, players: int) -> Iterator[str]:
    if not isinstance(value, str):
        yield f"{field} is {_shown(value)}; expected a text in quotes"


def _list_of(
    item: _Check, word: str = "entry"
) -> _Check:
    def check(field: str, value: object, players: int) -> Iterator[str]:
        if not isinstance(value, list):
            yield f"{field} is {_shown(value)}; expected a list"
            return
        for i, v in enumerate(value, 1):
            yield from item(f"{field} {word} {i}", v, players)
    return check


def _object_of(
    item: _Check, *, by_player: bool = False
) -> _Check:
    def check(field: str, value: object, players: int) -> Iterator[str]:
        if not isinstance(value, dict):
            yield f"{field} is {_shown(value)}; expected an object {{...}}"
            return
        for key, v in value.items():
            if by_player and key not in {str(p) for p in range(1, players + 1)}:
                yield f"{field} names player {key!r}; expected a player from \"1\" to \"{players}\""
            else:
                yield from item(f"{field}.{key}", v, players)
    return check


def _hand(field: str, value: object, players: int) -> Iterator[str]:
    """An expected hand: Enceladus a text (``"3-4-5-5-6"``), Uranus a list of cards."""
    return _list_of(_text)(field, value, players) if isinstance(value, list) else _text(
        field, value, players)


_COUNTS = _object_of(_count)
_POSITION: dict[str, tuple[tuple[str, ...], _Check]] = {
    "cells": (rules_pkg.GAMES, _object_of(_text)),
    "reserves": (rules_pkg.GAMES, _object_of(_COUNTS, by_player=True)),
    "tube": (("enceladus",), _COUNTS),
    "used_actions": (("enceladus",), _list_of(_text)),
    "pool": (("mars",), _list_of(_count)),
    "scores": (("mars", "uranus"), _object_of(_count, by_player=True)),
    "planted": (("mars",), _object_of(_count, by_player=True)),
    "board": (("uranus",), _text),
    "hands": (("uranus",), _object_of(_list_of(_text), by_player=True)),
    "decks": (("uranus",), _list_of(_count)),
    "no_plant_run": (("uranus",), _count),
}
"""The position keys of docs/CASES.md beside ``players`` and ``to_move``: the games that
have each, and the check of its value.  Every key of the case's game is required."""

_TEXT_STEP_KEYS = {
    "enceladus": ("place", "move", "pick", "action", "pay", "to", "cell", "with", "from",
                  "martian"),
    "mars": ("place", "to", "plant"),
    "uranus": ("place", "to", "plant", "score", "drawn"),
}
_STEP: dict[str, dict[str, _Check]] = {
    game: dict.fromkeys(keys, _text) for game, keys in _TEXT_STEP_KEYS.items()
}
_STEP["enceladus"].update(cells=_list_of(_text), drawn=_COUNTS)
_STEP["mars"].update(roll=_list_of(_count), die=_count, discard=_count)
_STEP["uranus"].update(draw=_count)
"""The keys of the steps of each game (docs/CASES.md, Steps) and the check of each value."""

_EXPECT: dict[str, _Check] = {
    "destinations": _list_of(_text),
    "actions": _list_of(_text),
    "cells": _object_of(_text),
    "empty": _list_of(_text),
    "reserves": _object_of(_object_of(_anything)),
    "tube": _object_of(_anything),
    "scores": _object_of(_anything),
    "hands": _object_of(_hand),
}
"""The ``expect`` keys compared as more than a plain value, and the shape each must have."""

_ANSWERS = ("destinations", "actions", "legal", "cells", "empty", "reserves", "tube",
            "scores", "to_move", "hands", "over", "rank_points", "count", "value", "winners",
            "valid", "spots", "edge_spots", "trees", "decks")
"""Every key an answer has (docs/CASES.md, Questions and answers)."""

_QUERY_KEYS: dict[tuple[str, str], dict[str, _Check]] = {("legal_moves", "mars"): {"die": _count}}
"""The keys a question's object may hold, by ``(question, game)``; none for the others."""


def case_problems(case: Mapping[str, object]) -> list[str]:
    """Every way ``case`` departs from the shape of docs/CASES.md, each naming the field and
    what is expected, in words; ``[]`` for a well-formed case.  The game's own limits (cells
    that exist, colours, the supply) are its adapter's to check."""
    problems = [f"{key} is not a field of a case; the fields are {', '.join(_CASE_KEYS)}"
                for key in case if key not in _CASE_KEYS]
    problems += [f"{key} is missing" for key in _REQUIRED if key not in case]
    if case.get("id") == "":
        problems.append("id is empty; expected the case's name")
    for key in ("id", "rule", "source"):
        if key in case and not isinstance(case[key], str):
            problems.append(f"{key} is {_shown(case[key])}; expected a text in quotes")
    for key in ("options", "position", "expect"):
        if key in case and not isinstance(case[key], dict):
            problems.append(f"{key} is {_shown(case[key])}; expected an object {{...}}")
    game = case.get("game")
    position = case.get("position")
    if isinstance(position, dict) and game in rules_pkg.GAMES:
        problems += _position_problems(str(game), position)
    query = case.get("query")
    if "query" in case and (not isinstance(query, dict) or len(query) != 1):
        problems.append(f"query is {_shown(query)}; expected one question, such as "
                        "{\"legal_moves\": {}}")
    elif isinstance(query, dict):
        ((name, arg),) = query.items()
        if name == "apply":
            problems += _list_of(_object_of(_anything), "step")("query.apply", arg, 0)
            if isinstance(arg, list) and game in _STEP:
                problems += _steps_problems(str(game), arg)
        elif name == "mission_value":
            problems += _text("query.mission_value", arg, 0)
        elif not isinstance(arg, dict):
            problems.append(f"query.{name} is {_shown(arg)}; expected an object {{...}}")
        else:
            keys = _QUERY_KEYS.get((name, str(game)), {})
            for key, value in arg.items():
                if key in keys:
                    problems += keys[key](f"query.{name}.{key}", value, 0)
                else:
                    takes = ", ".join(keys) or "nothing"
                    problems.append(f"query.{name}.{key} is not a key of that question; it "
                                    f"takes {takes}" + (f" in {game}" if keys else ""))
    expect = case.get("expect")
    if isinstance(expect, dict):
        for key, value in expect.items():
            if key in _EXPECT:
                problems += _EXPECT[key](f"expect.{key}", value, 0)
            elif key not in _ANSWERS:
                problems.append(f"expect.{key} is not a key of any answer; they are "
                                f"{', '.join(_ANSWERS)}")
    return problems


def _position_problems(game: str, position: Mapping[str, object]) -> list[str]:
    problems = [
        f"position.{key} is not a key of a {game} position"
        for key in position
        if key not in ("players", "to_move")
        and (key not in _POSITION or game not in _POSITION[key][0])
    ]
    problems += [
        f"position.{key} is missing"
        for key in ("players", "to_move", *_POSITION)
        if key not in position and (key in ("players", "to_move") or game in _POSITION[key][0])
    ]
    given = position.get("players")
    players: int = given if _is_int(given) and 2 <= given <= 5 else 5
    if "players" in position and players != given:  # then check the rest against 5 players
        problems.append(f"position.players is {_shown(given)}; expected 2 to 5 players")
    if "to_move" in position:
        problems += _player("position.to_move", position["to_move"], players)
    for key, value in position.items():
        if key in _POSITION and game in _POSITION[key][0]:
            problems += _POSITION[key][1](f"position.{key}", value, players)
    return problems


def _steps_problems(game: str, steps: list[object]) -> list[str]:
    problems = []
    for number, step in enumerate(steps, 1):
        for key, value in step.items() if isinstance(step, dict) else ():
            field = f"query.apply step {number}"
            if key not in _STEP[game]:
                problems.append(f"{field}: {key!r} is not a key of a {game} step; they are "
                                f"{', '.join(_STEP[game])}")
            else:
                problems += _STEP[game][key](f"{field} {key}", value, 0)
    return problems


def _depth_exceeds(data: object, limit: int) -> bool:
    """Whether ``data`` nests lists and objects more than ``limit`` deep (walked without
    recursion, since the point is to refuse what would overflow the stack)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, list | dict):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items)
    return False


def _nonzero(counts: Mapping[str, int] | None) -> dict[str, int]:
    return {k: v for k, v in (counts or {}).items() if v}


def _mismatches(
    expect: Mapping[str, JsonTree], got: Mapping[str, JsonTree]
) -> tuple[Answer, Answer]:
    """The parts of ``expect`` that ``got`` does not satisfy, and what ``got`` has there.

    Only what ``expect`` lists is compared; ``cells`` and per-player maps are compared key by
    key; colour counts ignore zeros; lists of cells or names compare as sets.
    """
    want: Answer = {}
    have: Answer = {}
    over = bool(got.get("over", False))
    for key, value in expect.items():
        if key == "to_move" and over:
            continue  # docs/CASES.md: to_move after the end is not compared
        if key == "cells":
            cells = got.get("cells", {})
            bad = {c: p for c, p in value.items() if cells.get(c, "") != p}
            if bad:
                want[key], have[key] = bad, {c: cells.get(c, "") for c in bad}
        elif key == "empty":
            cells = got.get("cells", {})
            bad_cells = [c for c in value if cells.get(c, "")]
            if bad_cells:
                want[key], have[key] = bad_cells, {c: cells[c] for c in bad_cells}
        elif key in ("reserves", "tube", "scores", "hands", "hands_by_player"):
            theirs = got.get(key, {})
            if key == "tube":
                if _nonzero(value) != _nonzero(theirs):
                    want[key], have[key] = value, _nonzero(theirs)
                continue
            bad_players = {}
            for player, v in value.items():
                g = theirs.get(player)
                if key == "reserves":
                    ok = _nonzero(v) == _nonzero(g)
                elif isinstance(v, list):
                    ok = sorted(v) == sorted(g or [])
                else:
                    ok = v == g
                if not ok:
                    bad_players[player] = g
            if bad_players:
                want[key] = {p: value[p] for p in bad_players}
                have[key] = bad_players
        elif key in ("destinations", "actions"):
            if set(value) != set(got.get(key, [])) or len(value) != len(set(value)):
                want[key], have[key] = sorted(value), sorted(got.get(key, []))
        elif value != got.get(key):
            want[key], have[key] = value, got.get(key)
    return want, have


def run_case(
    case: Mapping[str, object], adapter_for: Callable[[str], SomeCases | None]
) -> CaseResult:
    """Run one case.  ``adapter_for(game)`` gives the game's adapter or ``None`` if not built.

    A case of the wrong shape (:func:`case_problems`), or whose position the game cannot have,
    fails with every problem named; so does a step of no form the game knows.
    """
    raw_id = case.get("id")
    case_id = raw_id if isinstance(raw_id, str) and raw_id else "?"
    game = case.get("game")
    if game not in rules_pkg.GAMES:
        known = ", ".join(rules_pkg.GAMES)
        return CaseResult(case_id, "FAIL", f"unknown game {game!r}; a case is of {known}")
    problems = case_problems(case)
    if problems:
        return CaseResult(case_id, "FAIL", "the case is malformed: " + "; ".join(problems))
    adapter = adapter_for(game)
    if adapter is None:
        return CaseResult(case_id, "SKIP", f"the rules of {game!r} are not built yet")
    checked = cast(Case, case)  # case_problems found every field of this shape
    ((name, arg),) = checked["query"].items()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CaseWarning)
            state = adapter.position(checked)
    except CompanionError as error:
        what = "; ".join(str(error).splitlines())
        return CaseResult(case_id, "FAIL", f"the position cannot be played: {what}")
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, CaseWarning))
    return replace(_answered(case_id, game, name, arg, state, checked, adapter), notes=notes)


def _answered(case_id: str, game: str, name: str, arg: JsonTree, state: object, checked: Case,
              adapter: SomeCases) -> CaseResult:
    """The verdict on ``checked``'s question, asked of ``state``, its position."""
    try:
        if name == "apply":
            rules = rules_pkg.load(game).RULES
            try:
                for number, step_json in enumerate(arg, 1):
                    try:
                        step = adapter.step(state, step_json)
                    except (KeyError, ValueError, TypeError) as error:
                        if isinstance(error, RulesError):
                            raise
                        return CaseResult(case_id, "FAIL", (
                            f"query.apply step {number} is {_shown(step_json)}; expected a step "
                            f"of {game} as docs/CASES.md (Steps) gives it"))
                    state = rules.apply(state, step)
            except (IllegalMoveError, InvalidStepError) as error:
                got: Answer = {"legal": False, "reason": str(error)}
            else:
                got = {"legal": True, **adapter.snapshot(state)}
        else:
            got = adapter.query(state, name, arg)
    except CompanionError as error:
        return CaseResult(case_id, "FAIL", f"query.{name} cannot be answered: {error}")
    want, have = _mismatches(checked["expect"], got)
    if not want:
        return CaseResult(case_id, "PASS")
    detail = f"expected {json.dumps(want, sort_keys=True)}, got {json.dumps(have, sort_keys=True)}"
    if "reason" in got and want.get("legal") is True:
        detail += f" ({got['reason']})"
    return CaseResult(case_id, "FAIL", detail)


def default_adapter_for(game: str) -> SomeCases | None:
    """The adapter of a built game, else ``None``."""
    try:
        module = rules_pkg.load(game)
    except (KeyError, ModuleNotFoundError):
        return None
    adapter: SomeCases | None = getattr(module, "CASES", None)
    return adapter


class _NotJsonError(ValueError):
    """A constant Python's reader accepts but JSON has not (``NaN``, ``Infinity``)."""


def _no_constant(name: str) -> NoReturn:
    raise _NotJsonError(f"{name} is not a JSON number")


def _too_deep(path: Path) -> str:
    return (f"{path}: lists and objects nest more than {MAX_DEPTH} levels deep; a case file "
            f"may nest at most {MAX_DEPTH}")


def load_cases(path: Path) -> list[JsonObject]:
    """Read a case file: a JSON list of case objects.  Raises
    :class:`companion.errors.InputFileError` when the file cannot be read or is not text,
    :class:`CompanionError` when it is not such a list."""
    text = read_text(path, "case file")
    if not text.strip():
        raise CompanionError(f"{path} is empty; a case file holds a JSON list of case objects")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise CompanionError(
            f"{path}, line {error.lineno}: not valid JSON ({error.msg})"
        ) from error
    except _NotJsonError as error:
        raise CompanionError(f"{path}: not valid JSON ({error})") from error
    except ValueError as error:  # an integer beyond the digits Python converts
        raise CompanionError(
            f"{path}: a number has more than {sys.get_int_max_str_digits()} digits; a case "
            "file's numbers are shorter"
        ) from error
    except RecursionError as error:
        raise CompanionError(_too_deep(path)) from error
    if _depth_exceeds(data, MAX_DEPTH):
        raise CompanionError(_too_deep(path))
    if not isinstance(data, list) or not all(isinstance(c, dict) for c in data):
        raise CompanionError(f"{path} is not a list of case objects; a case file holds a JSON "
                             "list of case objects")
    return data


def case_files(path: Path) -> list[Path]:
    """The case files ``path`` stands for: ``[path]`` itself, or, when it is a folder, the
    ``*.json`` files directly in it sorted by name (its sub-folders are not searched).
    Raises :class:`companion.errors.InputFileError` when the folder holds no such file or
    cannot be listed."""
    if not path.is_dir():
        return [path]
    try:
        found = sorted(p for p in path.glob("*.json") if not p.is_dir())
    except OSError as error:
        raise InputFileError(f"cannot read the folder {path}: {reason_of(error)}") from None
    if not found:
        raise InputFileError(f"the folder {path} holds no case file (a *.json file)")
    return found


def _each_case_file(paths: Iterable[Path]) -> Iterator[tuple[Path, InputFileError | None]]:
    """The case files of ``paths`` in order, a folder's in its place, each with ``None``; a
    folder that stands for none with its error."""
    for path in paths:
        try:
            yield from ((found, None) for found in case_files(path))
        except InputFileError as error:
            yield path, error


def check_files(paths: Iterable[Path], out: Callable[[str], None] = print,
                note: Callable[[str], None] = lambda text: print(text, file=sys.stderr)) -> int:
    """Run every case of every file, print the verdicts (``out``) and the closing line, and
    what a case's position holds that no real game does (``note``, standard error).

    A folder stands for the ``*.json`` files directly in it (:func:`case_files`).  Returns
    the exit status: 0 when nothing failed, 1 otherwise.  Raises the
    :class:`companion.errors.InputFileError` of the first file that could not be read
    (missing, not text) or folder with no case file, after every other file was run and the
    closing line printed.
    """
    passed = failed = skipped = 0
    seen: dict[str, Path] = {}
    unreadable: InputFileError | None = None
    for path, no_file in _each_case_file(paths):
        try:
            if no_file is not None:
                raise no_file
            cases = load_cases(path)
        except CompanionError as error:
            out(f"FAIL {path}: {error}")
            failed += 1
            if isinstance(error, InputFileError):
                unreadable = unreadable or error
            continue
        for case in cases:
            case_id = case.get("id")
            if isinstance(case_id, str) and case_id in seen:
                result = CaseResult(case_id, "FAIL", (
                    f"id {case_id!r} is the id of an earlier case, in {seen[case_id]}; ids are "
                    "unique across the files given"))
            else:
                if isinstance(case_id, str):
                    seen[case_id] = path
                result = run_case(case, default_adapter_for)
            out(result.line())
            for line in result.note_lines():
                note(line)
            if result.status == "PASS":
                passed += 1
            elif result.status == "FAIL":
                failed += 1
            else:
                skipped += 1
    out(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if unreadable is not None:
        raise unreadable
    return 1 if failed else 0
