"""Scenario files: a readable script of physical actions on a board, for the simulator.

A scenario names a game and its setup, then lists what hands and sensors do, one action a
line, and the steps the companion must commit::

    # Player 1 enters on L4 and moves onto d4, taking the green flower there.
    game enceladus
    players 2
    seed 3
    pace 120 ms          # time between two actions when no wait is written (default 150 ms)

    place L4 M1
    expect L4
    lift L4
    lift d4
    place d4 M1
    wait 300 ms
    expect L4-d4

Header lines (before the first action): ``game``, ``players``, ``seed``, ``board`` (the
Uranus board), ``option <name> <value>`` (``[game.options]``), ``tray on|off`` (a show-tray
is fitted), ``pace <n> ms|s``.  Actions: ``lift <cell>``; ``place <cell> <piece>`` (a piece
name of ``companion.rules.base``, ``M1+red``, or its wire code, ``1r``); ``wait <n> ms|s``;
``press ok|undo|select|roll``; ``dice <v> ...`` (the Mars dice tray; none: emptied);
``card <id>`` (held to the Uranus card reader); ``expect <step>`` (the next step the
companion must commit, in the game's notation).  ``#`` starts a comment.

:func:`run_scenario` plays a scenario against the real referee in virtual time (no threads,
no sleeping; a :class:`companion.referee.timers.Timeline`) and returns what it committed;
``companion sim --serve URL --scenario FILE`` plays it in real time on a simulated board for
a daemon started separately.
"""

from __future__ import annotations

import itertools
import os
import random
import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from typing import Final, TypedDict

from companion.board import protocol
from companion.errors import InvalidStepError
from companion.events import AnyEvent, BoardMessage, Button
from companion.files import read_text
from companion.referee.effects import Committed, Effects, Show, Undone
from companion.referee.referee import Referee, RefereeSettings
from companion.referee.timers import Timeline
from companion.rules import BOARDS, GAMES, load
from companion.rules.base import EMPTY, Cell, Piece, Seated, SomeRules
from companion.sim.perform import Noise, Op, Press, Put, Signal, perform, tray_flowers
from companion.sim.players import chance_ops, choose_step

DEFAULT_PACE: Final = 0.15
"""Seconds between two actions when the script writes no ``wait``."""

BUTTONS: Final = ("ok", "undo", "select", "roll")

_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?) *(ms|s)")


@dataclass(frozen=True, slots=True)
class Expect:
    """The companion must commit ``step`` (notation) next."""

    step: str


Action = Op | Expect
"""One line of a script: a timed operation (:mod:`companion.sim.perform`) or an expectation.
A ``wait`` line adds to the next operation's ``wait``."""


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario: the game and setup, then ``actions`` in order."""

    game: str
    players: int = 2
    seed: int = 1
    board: str = "hexagonal"
    options: dict[str, str | int | bool] = field(default_factory=dict)
    tray: bool = True
    pace: float = DEFAULT_PACE
    actions: tuple[Action, ...] = ()

    @property
    def layout(self) -> str:
        """The layout the board announces (``uranus-rhombus``...)."""
        return f"uranus-{self.board}" if self.game == "uranus" else self.game

    @property
    def expected(self) -> list[str]:
        """The steps the companion must commit, in order."""
        return [a.step for a in self.actions if isinstance(a, Expect)]

    def rules(self) -> SomeRules:
        """The game's rules core."""
        rules: SomeRules = load(self.game).RULES
        return rules

    def setup(self) -> Seated:
        """The position the board starts from."""
        options = dict(self.options)
        if self.game == "uranus":
            options.setdefault("board", self.board)
        state: Seated = self.rules().new_game(self.players, self.seed, options)
        return state

    def ops(self) -> list[Op]:
        """The timed operations, without the expectations."""
        return [a for a in self.actions if not isinstance(a, Expect)]


def _seconds(text: str) -> float:
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise InvalidStepError(f"{text!r} is not a duration such as 300 ms or 1.5 s")
    return float(match[1]) / (1000 if match[2] == "ms" else 1)


def read_piece(text: str) -> Piece:
    """A piece written as its name (``M1+red``) or its wire code (``1r``).  Raises
    :class:`InvalidStepError` with a sentence for anything else."""
    if text in protocol.PIECE_CODES:
        return protocol.PIECE_CODES[text]
    if text in protocol.CODES:
        return text
    raise InvalidStepError(f"{text!r} is not a piece (a name such as M1+red or a code such as 1r)")


def _option(text: str) -> str | int | bool:
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.lstrip("-").isdigit() else text


def parse_scenario(text: str, source: str = "<scenario>") -> Scenario:
    """The scenario in ``text``; ``source`` names it in errors.

    Raises :class:`companion.errors.InvalidStepError` naming the line and what is wrong
    (an unknown action, a cell not on the game's board, a bad duration...).
    """
    header: _Header = {"options": {}}
    actions: list[Action] = []
    wait = 0.0
    cells: frozenset[Cell] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.partition("#")[0].split()
        if not words:
            continue
        verb, args = words[0].lower(), words[1:]
        try:
            if verb in ("game", "players", "seed", "board", "option", "tray", "pace"):
                if actions or wait:
                    raise InvalidStepError(f"{verb} belongs in the header, before the first action")
                _header(header, verb, args)
                continue
            if cells is None:
                if "game" not in header:
                    raise InvalidStepError("the header must name the game first (game enceladus)")
                cells = frozenset(protocol.LAYOUTS[Scenario(**header).layout])
            pace = header.get("pace", DEFAULT_PACE)
            if verb == "wait" and args:
                wait += _seconds(" ".join(args))
            elif verb == "lift" and len(args) == 1:
                actions.append(Put(pace + wait, _cell(args[0], cells), EMPTY))
                wait = 0.0
            elif verb == "place" and len(args) == 2:
                actions.append(Put(pace + wait, _cell(args[0], cells), read_piece(args[1])))
                wait = 0.0
            elif verb == "press" and len(args) == 1 and args[0].lower() in BUTTONS:
                actions.append(Press(pace + wait, args[0].lower()))
                wait = 0.0
            elif verb == "dice" and all(len(a) == 1 and a in "123456" for a in args):
                actions.append(Signal(pace + wait, protocol.Dice(0, tuple(int(a) for a in args))))
                wait = 0.0
            elif verb == "card" and len(args) == 1:
                actions.append(Signal(pace + wait, protocol.Card(0, args[0])))
                wait = 0.0
            elif verb == "expect" and args:
                actions.append(Expect(" ".join(args)))
            else:
                raise InvalidStepError(f"{raw.strip()!r} is not an action (lift, place, wait, "
                                       "press, dice, card, expect)")
        except (ValueError, KeyError) as error:
            raise InvalidStepError(f"{source}, line {number}: {error}") from None
    if "game" not in header:
        raise InvalidStepError(f"{source}: the scenario names no game (game enceladus)")
    return Scenario(**header, actions=tuple(actions))


class _Header(TypedDict, total=False):
    """The header lines read so far: the fields of :class:`Scenario` they set."""

    game: str
    players: int
    seed: int
    board: str
    options: dict[str, str | int | bool]
    tray: bool
    pace: float


def _header(header: _Header, verb: str, args: list[str]) -> None:
    if verb == "option" and len(args) == 2:
        header["options"][args[0]] = _option(args[1])
    elif verb == "tray" and args in (["on"], ["off"]):
        header["tray"] = args == ["on"]
    elif verb == "pace" and args:
        header["pace"] = _seconds(" ".join(args))
    elif verb == "players" and len(args) == 1 and args[0].isdigit():
        header["players"] = int(args[0])
    elif verb == "seed" and len(args) == 1 and args[0].isdigit():
        header["seed"] = int(args[0])
    elif verb == "game" and len(args) == 1 and args[0] in GAMES:
        header["game"] = args[0]
    elif verb == "board" and len(args) == 1 and args[0] in BOARDS["uranus"]:
        header["board"] = args[0]
    else:
        raise InvalidStepError(f"{' '.join([verb, *args])!r} is not a header line (game "
                               "enceladus, players 2, seed 3, board rhombus, option tube false, "
                               "tray off, pace 100 ms)")


def _cell(name: str, cells: frozenset[Cell]) -> Cell:
    if name not in cells:
        raise InvalidStepError(f"{name!r} is not a cell of this board")
    return name


def read_scenario(path: str | os.PathLike[str]) -> Scenario:
    """The scenario file at ``path``.  Raises :class:`companion.errors.InputFileError` when it
    cannot be read or is not text, :class:`InvalidStepError` when it is not a scenario."""
    return parse_scenario(read_text(path, "scenario file"), os.fspath(path))


def _duration(seconds: float) -> str:
    return f"{round(seconds * 1000)} ms"


def format_scenario(scenario: Scenario, comment: str = "") -> str:
    """``scenario`` as a file :func:`parse_scenario` reads back equal (times to the ms)."""
    lines = [f"# {comment}"] if comment else []
    lines += [f"game {scenario.game}", f"players {scenario.players}", f"seed {scenario.seed}"]
    if scenario.game == "uranus":
        lines.append(f"board {scenario.board}")
    for name, value in scenario.options.items():
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        lines.append(f"option {name} {shown}")
    lines += [f"tray {'on' if scenario.tray else 'off'}", f"pace {_duration(scenario.pace)}", ""]
    for action in scenario.actions:
        if isinstance(action, Expect):
            lines.append(f"expect {action.step}")
            continue
        if round(action.wait * 1000) != round(scenario.pace * 1000):
            lines.append(f"wait {_duration(action.wait - scenario.pace)}")
        if isinstance(action, Put):
            lines.append(f"place {action.cell} {action.piece}" if action.piece
                         else f"lift {action.cell}")
        elif isinstance(action, Press):
            lines.append(f"press {action.name}")
        elif isinstance(action.message, protocol.Dice):
            lines.append(" ".join(["dice", *map(str, action.message.values)]))
        else:
            lines.append(f"card {action.message.card_id}")
    return "\n".join(lines) + "\n"


STEADY_HANDS = Noise(glitch=0.0)
"""People's hands without the sensor glitches (a scenario file is a script of hands)."""


def random_scenario(game: str, *, players: int = 2, seed: int = 1, steps: int = 10,
                    board: str = "hexagonal", noise: Noise = STEADY_HANDS,
                    pause: float = 0.8) -> Scenario:
    """A scenario of ``steps`` random legal steps performed with ``noise`` (times rounded to
    the millisecond; ``pace`` is the shortest of ``noise.pace``), each followed by its
    ``expect`` and ``pause`` seconds for the companion to commit it before the next player
    moves: the makers' starting point for scripts of their own, and the suite's.

    Steps that would need a question answered (several steps leave the same board) are not
    chosen, so the script runs without a person at the buttons.
    """
    scenario = Scenario(game, players, seed, board, pace=round(noise.pace[0], 3))
    rules, state = scenario.rules(), scenario.setup()
    rng = random.Random(seed)
    physical = rules.board(state)
    tray = sorted(rules.tray_cells(state), key=lambda c: (len(c), c))
    actions: list[Action] = []
    for _ in range(steps):
        if rules.outcome(state) is not None:
            break
        step = _unambiguous_step(rules, state, rng)
        path = rules.choice_path(state, step)
        ops = perform(physical, rules.changes(state, step), rng, noise, tray=tray,
                      tray_show=tray_flowers(path))
        ops += chance_ops(rules, state, step, rng)
        for op in ops:
            if isinstance(op, Put):
                physical[op.cell] = op.piece
        waits = [round(op.wait + (pause if n == 0 and actions else 0.0), 3)
                 for n, op in enumerate(ops)]
        actions += [replace(op, wait=wait) for op, wait in zip(ops, waits, strict=True)]
        actions.append(Expect(rules.format_step(state, step)))
        state = rules.apply(state, step)
    return replace(scenario, actions=tuple(actions))


def _unambiguous_step(rules: SomeRules, state: Seated, rng: random.Random) -> Hashable:
    for _ in range(50):
        step = choose_step(rules, state, rng)
        if not rules.choice_path(state, step):
            return step
    return step


# --- playing a scenario in virtual time ------------------------------------------------------


@dataclass
class ScenarioRun:
    """What the referee did with a scenario: ``committed`` the notations of the steps in
    force, in order (one taken back, with Undo or corrected by hand, left out);
    ``menus``: the questions it showed (their options); ``referee``: its end state."""

    committed: list[str]
    menus: list[tuple[str, ...]]
    referee: Referee


def scenario_events(scenario: Scenario, start: float = 0.0) -> list[AnyEvent]:
    """The board and button events a scenario makes, timed from ``start`` (seconds): first a
    dump of the setup, then one event per operation (a press and its release 80 ms later)."""
    rules, state = scenario.rules(), scenario.setup()
    layout = protocol.LAYOUTS[scenario.layout]
    board = rules.board(state)
    seq = itertools.count(1)
    out: list[AnyEvent] = [BoardMessage(start, protocol.Dump(0, tuple(board[c] for c in layout)))]
    t = start
    for op in scenario.ops():
        t += op.wait
        if isinstance(op, Put):
            out.append(BoardMessage(t, protocol.FieldUpdate(next(seq) % 10000, op.cell, op.piece)))
        elif isinstance(op, Signal):
            out.append(BoardMessage(t, replace(op.message, seq=next(seq) % 10000)))
        else:
            out += [Button(t, op.name, True), Button(t + 0.08, op.name, False)]
    return out


def run_scenario(scenario: Scenario, settings: RefereeSettings | None = None,
                 *, tail: float = 3.0) -> ScenarioRun:
    """Play ``scenario`` against a new referee (:func:`scenario_referee`) on a virtual clock
    and return what it committed; the clock runs ``tail`` seconds past the last action so
    late commits count."""
    events = scenario_events(scenario)
    return drive(scenario_referee(scenario, settings), events, events[-1].t + tail)


def scenario_referee(scenario: Scenario, settings: RefereeSettings | None = None) -> Referee:
    """A :class:`Referee` for ``scenario``'s game and setup, with the game's extensions (the
    Mars dice tray...) as ``companion run`` would have them; ``settings`` default to the
    referee's own with the scenario's ``tray``."""
    from companion.config import BoardConfig, Config, GameConfig
    from companion.daemon.service import game_extensions

    config = Config(game=GameConfig(scenario.game, scenario.players, scenario.seed,
                                    scenario.board),
                    board=BoardConfig(tray=scenario.tray))
    return Referee(scenario.rules(), scenario.setup(), scenario.layout,
                   settings or RefereeSettings(tray=scenario.tray),
                   extensions=game_extensions(config))


def drive(referee: Referee, events: Iterable[AnyEvent], until: float) -> ScenarioRun:
    """Hand ``events`` and the referee's own timers to ``referee`` in time order, up to
    ``until`` (seconds on the events' clock), on a virtual clock; what it committed."""
    run = ScenarioRun([], [], referee)

    def record(effects: Effects) -> None:
        for effect in effects:
            if isinstance(effect, Committed):
                if effect.corrects is not None:
                    run.committed.pop()
                run.committed.append(effect.step)
            elif isinstance(effect, Undone):
                run.committed.pop()
            elif isinstance(effect, Show) and effect.screen.menu:
                run.menus.append(effect.screen.menu)

    time = Timeline(referee.handle, on_effects=record)
    for event in events:
        time.post(event)
    time.run(referee.start(0.0))
    time.advance(until)
    return run
