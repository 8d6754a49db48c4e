"""``companion sim --serve pty --interactive``: a person plays on the standalone simulated board.

Each line is a step in the game's notation (what the rules cores read: ``@L4``, ``f5/f6``,
``3>0,1=red``, ``score:triangle:yellow/2``) or one physical change: ``lift e5``, ``put e5 M1``
(a piece name or its wire code, ``1r``), ``dice 3 5`` (the Mars dice tray now reads 3 and 5),
``card U17`` (a Uranus card held to the reader).  The board carries it out piece by piece over
the wire protocol, so the daemon referees it as it would a real board.

The console follows the game as the daemon will: after every line it rehearses what the
board has shown since the last committed step against the real referee
(:meth:`companion.sim.standalone.SimGame.rehearse`) and says what the companion should do:
commit a step, ask a question (answered at the companion, and here with ``answer``), or show
cells as wrong.  A step in notation that the rules forbid is still carried out as its notation
says (:func:`companion.sim.forbidden.forbidden_changes`), so a maker can watch the companion
refuse it.
``help`` lists the commands; ``quit`` or end of input ends.
"""

from __future__ import annotations

import cmd
import random
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import IO

from companion.board import protocol
from companion.errors import CompanionError, IllegalMoveError, InvalidStepError, ProtocolError
from companion.rules.base import EMPTY, Cell, Piece
from companion.rules.hexes import parse_hex
from companion.sim.forbidden import forbidden_changes
from companion.sim.harness import Answer
from companion.sim.perform import Noise, Op, Put, Signal
from companion.sim.scenario import read_piece
from companion.sim.standalone import SimGame, press_sentence

HANDS = Noise.none()
"""A person's steps are carried out exactly as typed: no hesitation, no slide, no glitch."""
DIE_FACES = ("1", "2", "3", "4", "5", "6")
"""What a die of the Mars dice tray shows, as typed."""

_SQUARE = re.compile(r"[a-j](?:10|[1-9])")
_ZONE = re.compile(r"[A-Z]+")

COMMANDS = (
    ("STEP", "a step in the game's notation, e.g. @L4, f5/f6, 3>0,1=red"),
    ("lift CELL", "take the piece off CELL"),
    ("put CELL PIECE", "put PIECE on CELL (a tray cell too): M1, M1+red, red, D1... or a "
                       "wire code (1r)"),
    ("dice V...", "the Mars dice tray now reads these dice (none: it is empty)"),
    ("card ID", "hold the Uranus mission card ID to the card reader"),
    ("answer LABEL", "tell the simulator what you chose at the companion's question"),
    ("restore", "put the board back as the game stands"),
    ("steps", "list legal steps"),
    ("board", "print the board (wire codes: . empty, r red, 1 M1, 1r M1 on red, ^ peak)"),
    ("quit", "end (so does end of input)"),
)


def board_lines(cells: Sequence[Cell], board: Mapping[Cell, Piece]) -> list[str]:
    """``board`` as text, one wire code per cell (``.`` empty, ``r`` a red flower, ``1r``
    player 1's gardener on red): the garden squares as a grid (row 10 on top), hexes as
    offset rows (each labelled with its first hex), every other zone on a line of its own."""

    def code(cell: Cell) -> str:
        return protocol.CODES.get(board.get(cell, EMPTY), "?")

    lines: list[str] = []
    squares = {c for c in cells if _SQUARE.fullmatch(c)}
    if squares:
        columns = sorted({c[0] for c in squares})
        lines.append("    " + " ".join(f"{x:>2}" for x in columns))
        for row in sorted({int(c[1:]) for c in squares}, reverse=True):
            codes = (code(f"{x}{row}") if f"{x}{row}" in squares else "" for x in columns)
            lines.append(f"{row:>3} " + " ".join(f"{c:>2}" for c in codes))
    hexes = {c: parse_hex(c) for c in cells if "," in c}
    if hexes:
        left = min(2 * q + r for q, r in hexes.values())
        for row in sorted({r for _, r in hexes.values()}):
            in_row = sorted((q, c) for c, (q, r) in hexes.items() if r == row)
            text = [" "] * (4 * len(hexes))
            for q, cell in in_row:
                at = 2 * (2 * q + row - left)
                text[at:at + 2] = f"{code(cell):>2}"
            lines.append(f"{in_row[0][1]:>6} " + "".join(text).rstrip())
    zones: dict[str, list[Cell]] = {}
    for cell in cells:
        if cell not in squares and cell not in hexes:
            match = _ZONE.match(cell)
            zones.setdefault(match[0] if match else cell, []).append(cell)
    lines += ["  ".join(f"{cell} {code(cell)}" for cell in zone) for zone in zones.values()]
    return lines


class BoardConsole(cmd.Cmd):
    """The console over ``game`` (:class:`companion.sim.standalone.SimGame`), reading
    ``stdin`` and answering on ``stdout``; ``seed`` draws the order in which a step's pieces
    are handled."""

    def __init__(self, game: SimGame, *, seed: int = 1, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None) -> None:
        super().__init__(stdin=stdin, stdout=stdout)
        interactive = self.stdin.isatty()
        self.use_rawinput = interactive and stdin is None
        self.prompt = "sim> " if interactive else ""
        self.game = game
        self.rng = random.Random(seed)
        self.base = dict(game.board.board)  # the board when the game stood as it stands now
        self.pending: list[Op] = []  # what the board has shown since then
        self.answers: list[str] = []  # what the person chose at the companion's questions
        self.question: tuple[str, ...] = ()

    # ------------------------------------------------------------------ plumbing
    def say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def preloop(self) -> None:
        self.say(f"Gardens of {self.game.rules.name.capitalize()}: "
                 f"P{self.game.rules.to_move(self.game.state)} to move; type help for the "
                 "commands.")

    def emptyline(self) -> bool:
        return False  # not cmd's default, which repeats the last command

    def onecmd(self, line: str) -> bool:
        try:
            return super().onecmd(line)
        except CompanionError as error:  # a step the rules core cannot read, a bad message
            self.say(str(error))
            return False

    def _carry_out(self, ops: list[Op], answer: Answer | None = None) -> None:
        self.game.carry_out(ops)
        self.pending += ops
        self._follow(answer)

    def _answer_given(self, options: tuple[str, ...], level: int) -> str | None:
        return self.answers[level] if level < len(self.answers) else None

    def _follow(self, answer: Answer | None = None) -> None:
        """Say what the companion should make of the board now, and follow its commits."""
        game = self.game
        rehearsal = game.rehearse(self.base, self.pending, answer or self._answer_given)
        self.question = rehearsal.question
        given = self.answers if answer is None else []
        answers = rehearsal.answers[len(given):]  # not chosen by the person yet
        if rehearsal.presses or answers:
            why = rehearsal.committed[-1] if rehearsal.committed else "this step"
            sentence = press_sentence(rehearsal.presses, answers, why)
            self.say(sentence[0].upper() + sentence[1:] + ".")
        if rehearsal.committed:
            game.state = rehearsal.state
            self._settled()
            steps = ", ".join(rehearsal.committed)
            outcome = game.outcome
            after = (f"the game is over: {outcome.termination}" if outcome is not None
                     else f"P{game.rules.to_move(game.state)} to move")
            self.say(f"The companion should commit {steps}; {after}.")
        if rehearsal.question:
            options = ", ".join(rehearsal.question)
            self.say(f"The companion asks which: {options}; choose at the companion with "
                     "Select and OK, then type answer and your choice here.")
        elif rehearsal.wrong and not rehearsal.committed:
            self.say("No legal step explains the board: the companion shows "
                     f"{', '.join(sorted(rehearsal.wrong))} as wrong (put them right, or "
                     "restore).")
        elif not self._differs():
            self._settled()  # put back as the game stands: nothing is under way

    def _settled(self) -> None:
        self.base = dict(self.game.board.board)
        self.pending = []
        self.answers = []

    def _differs(self) -> dict[Cell, Piece]:
        """Cells (tray excluded) where the board differs from the game: cell -> expected."""
        expected = self.game.expected()
        tray = set(self.game.tray)
        return {c: p for c, p in expected.items()
                if c not in tray and self.game.board.board[c] != p}

    def _cell(self, text: str) -> Cell | None:
        if text in self.game.board.board:
            return text
        self.say(f"{text} is not a cell of the {self.game.layout} board; board shows them.")
        return None

    # ------------------------------------------------------------------ steps
    def default(self, line: str) -> None:
        """A step in the game's notation."""
        game = self.game
        text = line.strip()
        try:
            step = game.rules.parse_step(game.state, text)
        except InvalidStepError as error:
            self.say(f"{text} is neither a command nor a step ({error}); type help for the "
                     "commands, or make the step cell by cell with lift and put.")
            return
        try:
            game.rules.apply(game.state, step)
        except IllegalMoveError as error:
            self._wrong_step(text, step, error)
            return
        self._carry_out(game.script(step, self.rng, HANDS), game.step_answer(step))

    def _wrong_step(self, text: str, step: Hashable, error: IllegalMoveError) -> None:
        game = self.game
        try:
            changes = forbidden_changes(game.rules.name, game.board.board,
                                        game.rules.to_move(game.state), step)
        except InvalidStepError as unclear:
            self.say(f"{text} is not legal here ({error.reason}), and the simulator cannot "
                     f"carry it out: {unclear}; make it cell by cell with lift and put.")
            return
        self.say(f"{text} is not legal here ({error.reason}); carried out all the same, so "
                 "the companion should refuse it.")
        self._carry_out(game.script(step, self.rng, HANDS, changes))

    def do_lift(self, arg: str) -> bool:
        """lift CELL: take the piece off CELL."""
        words = arg.split()
        if len(words) != 1:
            self.say("lift takes one cell, e.g. lift e5.")
        elif (cell := self._cell(words[0])) is not None:
            if self.game.board.board[cell] == EMPTY:
                self.say(f"{cell} is empty already.")
            else:
                self._carry_out([Put(0.0, cell, EMPTY)])
        return False

    def do_put(self, arg: str) -> bool:
        """put CELL PIECE: put PIECE on CELL (M1, M1+red, red, peak, tree, wild, D1, or a wire
        code such as 1r); what stood there is taken off first."""
        words = arg.split()
        if len(words) != 2:
            self.say("put takes a cell and a piece, e.g. put e5 M1 or put f6 red.")
            return False
        cell = self._cell(words[0])
        if cell is None:
            return False
        try:
            piece = read_piece(words[1])
        except InvalidStepError as error:
            self.say(f"{error}.")
            return False
        if self.game.board.board[cell] == piece:
            self.say(f"{cell} shows {words[1]} already.")
            return False
        ops: list[Op] = []
        if self.game.board.board[cell] != EMPTY:
            ops.append(Put(0.0, cell, EMPTY))
        ops.append(Put(0.1 / self.game.speed if ops else 0.0, cell, piece))
        self._carry_out(ops)
        return False

    def do_dice(self, arg: str) -> bool:
        """dice V...: the Mars dice tray now reads these dice (1 to 6; none: empty)."""
        values = arg.split()
        if not self._fitted("mars", "dice tray", "dice"):
            return False
        if not all(v in DIE_FACES for v in values) or len(values) > protocol.MAX_DICE:
            self.say(f"dice takes up to {protocol.MAX_DICE} die values from 1 to 6, "
                     "e.g. dice 3 5.")
            return False
        self._signal(protocol.Dice(0, tuple(int(v) for v in values)))
        return False

    def do_card(self, arg: str) -> bool:
        """card ID: hold the Uranus mission card ID to the card reader."""
        words = arg.split()
        if not self._fitted("uranus", "card reader", "card"):
            return False
        if len(words) != 1:
            self.say("card takes one card id, e.g. card U17.")
            return False
        self._signal(protocol.Card(0, words[0]))
        return False

    def _fitted(self, game: str, part: str, command: str) -> bool:
        """Whether this game's board has ``part`` (only Gardens of ``game``'s has), said when
        not: what ``command`` sends would reach a companion that has no use for it."""
        name = self.game.rules.name
        if name != game:
            self.say(f"A Gardens of {name.capitalize()} board has no {part}: {command} is for "
                     f"Gardens of {game.capitalize()}.")
        return name == game

    def _signal(self, message: protocol.Dice | protocol.Card) -> None:
        try:
            protocol.encode(message)
        except ProtocolError as error:
            self.say(f"{error}.")
            return
        self._carry_out([Signal(0.0, message)])

    def do_answer(self, arg: str) -> bool:
        """answer LABEL: what you chose at the companion's question (so the simulator
        follows the same step)."""
        label = arg.strip()
        if not self.question:
            self.say("The companion is asking nothing now.")
        elif label not in self.question:
            self.say(f"{label or 'Nothing'} is not one of {', '.join(self.question)}.")
        else:
            self.answers.append(label)
            self._follow()
        return False

    def do_restore(self, arg: str) -> bool:
        """restore: put the board back as the game stands (the tray emptied)."""
        board = self.game.board.board
        changes = {c: p for c, p in self.game.expected().items() if board[c] != p}
        if not changes:
            self.say("The board already shows the game as it stands.")
            return False
        self._carry_out(self.game.hands(changes, self.rng, HANDS))
        self.say(f"Put back as the game stands: {', '.join(sorted(changes))}.")
        return False

    # ------------------------------------------------------------------ looking
    def do_board(self, arg: str) -> bool:
        """board: print the board, and where it differs from the game as it stands."""
        game = self.game
        for line in board_lines(game.board.cells, game.board.board):
            self.say(line)
        differs = self._differs()
        if differs:
            where = ", ".join(f"{c} ({protocol.CODES.get(p, '?')} in the game)"
                              for c, p in sorted(differs.items()))
            self.say(f"Differs from the game at {where}.")
        return False

    def do_steps(self, arg: str) -> bool:
        """steps: list legal steps (the first 20)."""
        game = self.game
        steps = [game.rules.format_step(game.state, s)
                 for _, s in zip(range(21), game.rules.legal_steps(game.state), strict=False)]
        if not steps:
            self.say("No legal step: the game is over.")
        else:
            more = " and more" if len(steps) > 20 else ""
            self.say(f"P{game.rules.to_move(game.state)} may play {', '.join(steps[:20])}{more}.")
        return False

    def do_help(self, arg: str) -> bool:
        """help [COMMAND]: the commands, or one of them."""
        if arg.strip():
            super().do_help(arg)
            return False
        width = max(len(name) for name, _ in COMMANDS)
        for name, text in COMMANDS:
            self.say(f"  {name:<{width}}  {text}")
        return False

    def do_quit(self, arg: str) -> bool:
        """quit: end the simulator."""
        return True

    def do_EOF(self, arg: str) -> bool:  # noqa: N802 - cmd's name for the end of input
        """End of input ends the simulator."""
        if self.prompt:
            self.say("")  # the shell's prompt on a line of its own after Ctrl-D
        return True

