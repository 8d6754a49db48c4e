"""``companion``: the command line.

``companion run`` (the daemon; SIGHUP reloads the display settings), ``demo`` (a whole game
against the simulated board), ``rules check FILE...`` (rule case files, or folders of them),
``check-config FILE``, ``replay FILE`` (a journaled game, printed and drawn as a GIF),
``scoreboard`` (every table of an event from the MQTT broker); for makers of boards,
``monitor PORT`` (a live view with per-cell health), ``record PORT TRACE`` and ``sim`` (the
simulated board alone, or a trace replayed).  Errors reach the user as one sentence on
stderr and an exit status (:data:`EXIT_STATUSES`, listed by ``companion --help``), never a
traceback; output is written line by line, and a reader that stops reading (``| head``) ends
the command quietly.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TextIO, cast

from companion import __version__
from companion.errors import (
    CompanionError,
    ConfigError,
    InputFileError,
    LinkError,
    OutputFileError,
    UnreadableConfigError,
    UsageError,
)

if TYPE_CHECKING:
    from companion.daemon.service import Service

EX_USAGE = 2
"""A wrong command line (argparse's own status)."""

EX_NOINPUT = 66
"""sysexits.h: an input file is missing or cannot be read."""

EX_UNAVAILABLE = 69
"""sysexits.h: the board's port cannot be opened, or the board was lost."""

EX_CANTCREAT = 73
"""sysexits.h: an output file cannot be written."""

EX_CONFIG = 78
"""sysexits.h: a configuration error."""

EX_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT, as the shell reports it) to a command other than ``run``."""

EX_TERMINATED = 143
"""SIGTERM (128 + SIGTERM, as the shell reports it) to a command other than ``run``."""

EX_PIPE = 141
"""The reader of the output went away (128 + SIGPIPE, as the shell reports it)."""

EXIT_STATUSES = (
    (1, "a check failed (a rule case, a cell of the board), an input file is not what it "
        "should be (an empty trace, a damaged journal), or another error"),
    (EX_USAGE, "a wrong command line"),
    (EX_NOINPUT, "an input file, the config too, cannot be read: missing, a folder, no "
                 "permission, not text"),
    (EX_UNAVAILABLE, "the board's port cannot be opened, or the board was lost"),
    (EX_CANTCREAT, "an output file cannot be written"),
    (EX_CONFIG, "a configuration problem (check-config found one)"),
    (EX_INTERRUPTED, "Ctrl-C, after the command has tidied up (run stops cleanly: 0)"),
    (EX_TERMINATED, "SIGTERM, after the same tidying up (run stops cleanly: 0)"),
    (EX_PIPE, "the reader of the output stopped reading (| head)"),
)
"""``companion``'s exit statuses besides 0 and what each means.  The daemon ``run`` stopped
by SIGTERM or SIGINT exits 0, the clean stop systemd expects; every other command, which a
person started and stops, exits 130 for Ctrl-C and 143 for SIGTERM once it has tidied up
(``record`` keeps its trace, ``monitor`` prints its summary, ``sim`` closes its port)."""

_ERROR_STATUS: tuple[tuple[type[CompanionError], int], ...] = (
    (UnreadableConfigError, EX_NOINPUT),
    (UsageError, EX_USAGE),
    (InputFileError, EX_NOINPUT),
    (LinkError, EX_UNAVAILABLE),
    (OutputFileError, EX_CANTCREAT),
    (ConfigError, EX_CONFIG),
)

log = logging.getLogger("companion")


class JournalFormatter(logging.Formatter):
    """Log lines for systemd's journal: a ``<N>`` syslog priority prefix (sd-daemon(3)), so
    ``journalctl -p warning`` works, and no time stamp (the journal adds its own)."""

    PRIORITIES = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3}

    def format(self, record: logging.LogRecord) -> str:
        priority = self.PRIORITIES.get(record.levelno, 2 if record.levelno > logging.ERROR else 6)
        return f"<{priority}>{super().format(record)}"


def _setup_logging(level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    if os.environ.get("JOURNAL_STREAM"):  # started by systemd, stderr goes to the journal
        handler.setFormatter(JournalFormatter("%(name)s: %(message)s"))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), handlers=[handler])


def _rules_check(args: argparse.Namespace) -> int:
    from companion.rules.cases import check_files

    return check_files([Path(p) for p in args.files])


def _check_config(args: argparse.Namespace) -> int:
    from companion.config import check_config, config_warnings

    problems = check_config(args.file)
    for problem in problems:
        print(problem)
    if problems:
        return EX_CONFIG
    warnings = config_warnings(args.file)
    for warning in warnings:
        print(warning)
    print(f"{args.file}: no problems" + (" in the file" if warnings else ""))
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM to a command other than ``run``: raised in the main thread as Ctrl-C raises
    :class:`KeyboardInterrupt`, so that the tidying up a command does for Ctrl-C is done
    for SIGTERM too; :func:`main` then exits with :data:`EX_TERMINATED`."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


class _Signals:
    """The daemon's signal handlers, installed before anything else so that a SIGTERM or
    SIGINT during start-up (systemd stopping a unit that is still starting) is a clean stop,
    exit 0, not a death by the signal: a stop asked for before the service exists is kept
    and carried out as soon as it does (:meth:`attach`), or at once by :meth:`stopped_early`.
    (A signal while the interpreter itself starts, before :func:`main`, is Python's own: a
    death by the signal, which systemd counts as a clean stop too.)"""

    def __init__(self, config_path: str) -> None:
        self.config_path = config_path
        self.service: Service | None = None
        self.early_stop: str | None = None
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGHUP, self._reload)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.service is None:
            self.early_stop = self.early_stop or name
        else:
            self.service.stop(name)

    def _reload(self, signum: int, frame: FrameType | None) -> None:
        if self.service is not None:  # before start the configuration is read afresh anyway
            self.service.reload(self.config_path)  # only queues an event: the loop reloads

    def stopped_early(self) -> bool:
        """Whether a stop came before the service was built; if so, tells systemd
        ``STOPPING=1`` and logs it."""
        if self.early_stop is None:
            return False
        from companion.daemon.notify import Notifier

        notifier = Notifier.from_environment()
        notifier.stopping()
        notifier.close()
        logging.getLogger("companion").info("stopping: %s during start-up", self.early_stop)
        return True

    def done(self) -> None:
        """The daemon is on its way out: a further SIGTERM or SIGINT (Ctrl-C pressed twice,
        timeout(1) signalling the process and then its group) is ignored from now on.
        Python puts the default handlers back while it finalizes, so such a signal would
        otherwise kill the interpreter and turn the clean exit into a death by the signal."""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def attach(self, service: Service) -> Service:
        """From now on signals go to ``service``; a stop that came before is passed on."""
        self.service = service
        if self.early_stop is not None:
            service.stop(self.early_stop)
        return service


def _run(args: argparse.Namespace) -> int:
    signals = _Signals(str(args.config))
    from companion.config import load_config
    from companion.daemon.service import build

    try:
        config = load_config(args.config)
        _setup_logging(args.log_level or config.log.level)
        if signals.stopped_early():
            return 0
        with ExitStack() as stack:
            signals.attach(build(config, stack)).run()
        return 0
    finally:
        signals.done()


def _replay(args: argparse.Namespace) -> int:
    from companion.tools.replay import replay

    _setup_logging(args.log_level or "warning")
    gif = None if args.no_gif else Path(args.gif or Path(args.file).with_suffix(".gif").name)
    for line in replay(Path(args.file), gif=gif, width=args.width, height=args.height,
                       mode=args.mode, scale=args.scale,
                       html=Path(args.html) if args.html else None):
        print(line)
    return 0


def _scoreboard(args: argparse.Namespace) -> int:
    from companion.scoreboard.run import run_scoreboard

    _setup_logging(args.log_level or "warning")
    run_scoreboard(broker=args.broker, topic=args.topic, listen=args.listen,
                   terminal=args.terminal, client_id=args.client_id, username=args.username,
                   password_file=Path(args.password_file) if args.password_file else None,
                   ca_file=Path(args.ca_file) if args.ca_file else None, pin=args.pin or "",
                   keep=Path(args.keep) if args.keep else None)
    return 0  # only ever reached by a test that stops it otherwise


def _demo(args: argparse.Namespace) -> int:
    from companion.config import display_config
    from companion.sim.demo import run_demo

    _setup_logging(args.log_level or "warning")
    try:  # a wrong command line, not the [display] of a file
        display_config({"display": args.display})
    except ConfigError as error:
        allowed = error.problems[0].partition(" must be ")[2].rstrip(".")
        raise UsageError(f"--display must be {allowed}") from None
    return run_demo(game=args.game, players=args.players, seed=args.seed, display=args.display,
                    board=_board(args), out=Path(args.out), speed=args.speed,
                    sensing=args.sensing, strength=args.strength, seats=_seats(args))


def _seats(args: argparse.Namespace) -> tuple[str, ...]:
    """The seats of ``--opponent`` (the companion in the last seats, people before them);
    ``()`` without it.  Raises :class:`UsageError` when it names more seats than players."""
    strengths: tuple[str, ...] = tuple(args.opponent or ())
    players = int(args.players)
    if len(strengths) > players:
        raise UsageError(f"--opponent names {len(strengths)} seats but the game has "
                         f"{players} players; give at most one strength per player")
    return ("person",) * (players - len(strengths)) + strengths if strengths else ()


def _board(args: argparse.Namespace) -> str:
    """``--board``, which only Uranus has (default hexagonal).  Raises :class:`UsageError`
    when it is given for another game."""
    if args.board is not None and args.game != "uranus":
        raise UsageError(f"--board is the Uranus board: Gardens of {args.game.capitalize()} has "
                         "one board only, leave --board out or play --game uranus")
    return str(args.board or "hexagonal")


def _monitor(args: argparse.Namespace) -> int:
    from companion.tools.monitor import run_monitor

    _setup_logging(args.log_level or "warning")
    display = None
    with ExitStack() as stack:
        if args.config:
            from companion.config import load_config
            from companion.display import Display, make_device

            display = Display(make_device(dict(load_config(args.config).display.luma)))
            stack.callback(display.close)
        problems = run_monitor(args.port, seconds=args.seconds, display=display,
                               stuck_s=args.stuck_after, flicker_s=args.flicker_ms / 1000)
    return 1 if problems else 0


def _record(args: argparse.Namespace) -> int:
    from companion.tools.trace import record

    _setup_logging(args.log_level or "warning")
    try:
        chunks = record(args.port, args.trace, seconds=args.seconds)
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the trace is kept; say so
        for note in getattr(stop, "__notes__", ()):
            print(note, file=sys.stderr)
        raise
    print(f"{chunks} chunk{'' if chunks == 1 else 's'} recorded in {args.trace}", file=sys.stderr)
    return 0


def _sim(args: argparse.Namespace) -> int:
    from companion.sim.serve import Faults, run_sim

    _setup_logging(args.log_level or "info")
    return run_sim(serve=args.serve, replay_file=args.replay, speed=args.speed, game=args.game,
                   players=args.players, seed=args.seed, board=_board(args),
                   scenario_file=args.scenario, empty=args.empty, sensing=args.sensing,
                   faults=Faults(tuple(args.stuck), tuple(args.flaky)),
                   interactive=args.interactive, pace=args.pace, hand_setup=args.hand_setup,
                   strength=args.strength)


def _positive(text: str) -> float:
    """A number above 0 (seconds, a speed), for the argument parser."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0")
    return value


def _speed(text: str) -> float:
    """A speed, for the argument parser: a factor of 0.01 or more on the pace of people (a
    slower one makes waits too long for the system's clock)."""
    value = _positive(text)
    if value < 0.01:
        raise argparse.ArgumentTypeError(f"{text!r} is not a speed of 0.01 or more "
                                         "(1: as fast as people)")
    return value


def _port(text: str) -> str:
    """A board's port, for the argument parser: not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the port is empty; give a device such as "
                                         "/dev/ttyACM0 or a URL such as socket://127.0.0.1:7777")
    return text


def _strengths(text: str) -> tuple[str, ...]:
    """``--opponent``: one strength or a comma-separated list, for the argument parser."""
    from companion.config import SEATS

    strengths = tuple(part.strip() for part in text.split(","))
    wrong = [s for s in strengths if s not in SEATS or s == "person"]
    if wrong:
        choices = ", ".join(seat for seat in SEATS if seat != "person")
        raise argparse.ArgumentTypeError(
            f"{wrong[0]!r} is not a strength; choose {choices}, or a list such as quick,strong")
    return strengths


def _pin(text: str) -> str:
    """``scoreboard --pin``, for the argument parser: 4 to 8 digits, as the page asks for
    it (a drawn PIN has 4)."""
    if not (4 <= len(text) <= 8 and text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a PIN; give 4 to 8 digits, such "
                                         "as 2718")
    return text


def _whole(low: int, high: int) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high``, for the argument parser."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number {low}-{high}")
        return value

    return whole


def make_parser() -> argparse.ArgumentParser:
    """The ``companion`` argument parser (all subcommands)."""
    from companion.config import MAX_SEED
    from companion.opponent import DEFAULT_STRENGTH, Strength
    from companion.rules import BOARDS, GAMES

    strengths = [strength.value for strength in Strength]

    parser = argparse.ArgumentParser(
        prog="companion",
        description="Gardens Companion: a referee and score keeper beside a physical board of "
        "Gardens of Enceladus, Mars or Uranus.",
        epilog="Exit status: 0 done; "
        + "; ".join(f"{status} {meaning}" for status, meaning in EXIT_STATUSES) + ".",
    )
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="referee games from a board (the daemon)")
    run.add_argument("--config", default="/etc/companion/companion.toml",
                     help="the TOML config file")
    run.set_defaults(func=_run)

    demo = sub.add_parser("demo", help="a whole game against the simulated board, no hardware")
    demo.add_argument("--game", choices=GAMES, default="enceladus")
    demo.add_argument("--players", type=int, default=2, choices=range(2, 6), metavar="2-5")
    demo.add_argument("--seed", type=_whole(1, MAX_SEED), default=1,
                      help="the game's seed (reproducible)")
    demo.add_argument("--board", choices=BOARDS["uranus"], help="the Uranus board (default "
                      "hexagonal; only with --game uranus)")
    demo.add_argument("--display", default="gifanim",
                      help="luma device: gifanim (saves a GIF), capture (PNG frames), dummy")
    demo.add_argument("--out", default="out", help="folder for the GIF and the journal")
    demo.add_argument("--speed", type=_speed, default=4.0,
                      help="how much faster than people play")
    demo.add_argument("--sensing", choices=("identity", "presence"), default="identity",
                      help="what the board's sensors tell: which piece, or only occupied")
    demo.add_argument("--strength", choices=strengths, default=DEFAULT_STRENGTH.value,
                      help="how the virtual players play (default steady)")
    demo.add_argument("--opponent", type=_strengths, metavar="STRENGTH[,STRENGTH...]",
                      help="the companion plays the last seat (or as many last seats as "
                      "strengths are listed) at quick, steady or strong; the virtual person "
                      "there carries out the steps it announces")
    demo.set_defaults(func=_demo)

    rules = sub.add_parser("rules", help="the rules cores")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="COMMAND")
    check = rules_sub.add_parser(
        "check",
        help="run rule case files (docs/CASES.md)",
        description="Run rule case files: each case is a position, one question about it "
        "(legal moves, a sequence of steps, scores, the outcome...) and the answer the rules "
        "require.  Prints PASS or FAIL per case, then 'N passed, M failed'; exits 1 when a "
        "case failed.  The case format is docs/CASES.md in the source tree, the rulings the "
        "cases cite docs/RULINGS.md; tests/cases/ holds examples for every game.",
    )
    check.add_argument("files", nargs="+", metavar="FILE",
                       help="a case file (a JSON list of cases), or a folder: every *.json "
                       "file directly in it, by name")
    check.set_defaults(func=_rules_check)

    replay = sub.add_parser("replay", help="print a journaled game and render it as a GIF")
    replay.add_argument("file", metavar="FILE", help="a game journal (*.jsonl)")
    replay.add_argument("--gif", help="where the GIF goes (default: FILE's name, .gif, here)")
    replay.add_argument("--no-gif", action="store_true", help="print the game only")
    replay.add_argument("--html", metavar="FILE",
                        help="also write the game record as one self-contained web page")
    replay.add_argument("--width", type=_whole(1, 1024), default=16,
                        help="matrix width in pixels")
    replay.add_argument("--height", type=_whole(1, 1024), default=16,
                        help="matrix height in pixels")
    replay.add_argument("--mode", choices=("1", "RGB"), default="RGB", help="matrix colours")
    replay.add_argument("--scale", type=_whole(1, 64), default=8,
                        help="GIF pixels per matrix pixel")
    replay.set_defaults(func=_replay)

    board = sub.add_parser(
        "scoreboard", help="every table of an event and the standings, from the MQTT broker",
        description="Follow every table that publishes to the broker ([mqtt] in each "
        "companion's config): board, players, scores, whose turn, finished games and the "
        "standings over the rounds, as a live web page and as a terminal table.  Ctrl-C stops.")
    board.add_argument("--broker", required=True, metavar="URL",
                       help="mqtt://host[:port], or mqtts://host[:port] for TLS")
    board.add_argument("--topic", default="gardens", help="the tables' topic prefix")
    board.add_argument("--listen", default="0.0.0.0:8090", metavar="HOST:PORT",
                       help="where the page is served ('' for no page)")
    board.add_argument("--terminal", action="store_true",
                       help="also draw the table on this terminal (always when output is "
                       "not a terminal)")
    board.add_argument("--client-id", default="", metavar="ID",
                       help="the broker session's name (default scoreboard-HOSTNAME)")
    board.add_argument("--username", default="", help="the scoreboard's broker user")
    board.add_argument("--password-file", metavar="FILE",
                       help="a file holding that user's password")
    board.add_argument("--ca-file", metavar="FILE",
                       help="the authority of the broker's TLS certificate")
    board.add_argument("--pin", type=_pin, help="the organiser's PIN for naming "
                       "seats, 4 to 8 digits (default: 4 drawn and printed)")
    board.add_argument("--keep", metavar="FILE", help="keep the evening in FILE and read it "
                       "back when started again (the rounds before, the names set)")
    board.set_defaults(func=_scoreboard)

    monitor = sub.add_parser("monitor", help="watch what a board reports, with per-cell health")
    monitor.add_argument("port", type=_port, metavar="PORT",
                         help="device path or pyserial URL")
    monitor.add_argument("--seconds", type=_positive,
                         help="stop after this long (default: Ctrl-C)")
    monitor.add_argument("--config", help="show the sensor test on this config's LED matrix")
    monitor.add_argument("--stuck-after", type=_positive, default=5.0, metavar="S",
                         help="seconds a cell may read a piece on the cleared board")
    monitor.add_argument("--flicker-ms", type=_positive, default=250.0, metavar="MS",
                         help="a change undone within this long is a flicker")
    monitor.set_defaults(func=_monitor)

    record = sub.add_parser("record", help="save a board's raw serial stream with timestamps")
    record.add_argument("port", type=_port, metavar="PORT",
                         help="device path or pyserial URL")
    record.add_argument("trace", metavar="TRACE", help="the trace file to write")
    record.add_argument("--seconds", type=_positive,
                        help="stop after this long (default: Ctrl-C)")
    record.set_defaults(func=_record)

    sim = sub.add_parser(
        "sim", help="the simulated board alone: serve it, or replay a trace",
        description="The simulated board alone, for a daemon started separately: its game's "
        "setup, played by virtual players (--players) or by you (--interactive), a scenario "
        "file, or a recorded trace.  The board cannot see the daemon: give the daemon the "
        "same [game] name, players and seed, [board] sensing, and [board] dice, cards and "
        "tray as by default (tray = false on a presence board).  When a step needs a "
        "button (OK for a step a presence board cannot see, Select and OK for a question), "
        "the simulator says what to press at the companion; mock pins cannot be pressed, so "
        "off a Pi play Enceladus or Uranus on an identity board, where no button is needed.")
    sim.add_argument("--serve", metavar="URL", help="pty (default) or socket://127.0.0.1:PORT")
    sim.add_argument("--replay", metavar="TRACE", help="play a recorded trace instead")
    sim.add_argument("--speed", type=_speed, default=1.0,
                     help="times faster: the recorded pace, or the players' hands")
    sim.add_argument("--scenario", metavar="FILE", help="a scenario file to play once connected")
    sim.add_argument("--game", choices=GAMES, default="enceladus")
    sim.add_argument("--players", type=int, choices=range(2, 6), metavar="2-5",
                     help="the game's players (default 2); given, that many virtual players "
                     "play once the daemon has connected (with --interactive, you play)")
    sim.add_argument("--interactive", action="store_true",
                     help="type the steps on this terminal (help lists the commands)")
    sim.add_argument("--pace", type=_positive, default=2.0, metavar="S",
                     help="seconds the virtual players wait between two steps, for the "
                     "daemon to commit the last one")
    sim.add_argument("--seed", type=_whole(1, MAX_SEED), default=1,
                     help="the setup's seed, as [game] seed in the daemon's config")
    sim.add_argument("--strength", choices=strengths, default=DEFAULT_STRENGTH.value,
                     help="how the virtual players (--players) play (default steady)")
    sim.add_argument("--board", choices=BOARDS["uranus"], help="the Uranus board (default "
                     "hexagonal; only with --game uranus)")
    sim.add_argument("--sensing", choices=("identity", "presence"), default="identity")
    sim.add_argument("--empty", action="store_true", help="start with nothing on the board")
    sim.add_argument("--hand-setup", action="store_true",
                     help="the garden starts in the bag and the virtual players (--players) "
                     "lay out a random setup of their own by hand, for a daemon with [game] "
                     'setup = "board"')
    sim.add_argument("--stuck", action="append", default=[], metavar="CELL",
                     help="plant a stuck sensor (repeatable)")
    sim.add_argument("--flaky", action="append", default=[], metavar="CELL",
                     help="plant a flickering sensor (repeatable)")
    sim.set_defaults(func=_sim)

    config = sub.add_parser("check-config", help="validate a config file")
    config.add_argument("file")
    config.set_defaults(func=_check_config)
    return parser


def _status_of(error: CompanionError) -> int:
    return next((status for kind, status in _ERROR_STATUS if isinstance(error, kind)), 1)


def _message(error: CompanionError) -> str:
    if isinstance(error, ConfigError) and len(error.problems) > 1:
        return "configuration problems:\n" + "\n".join(error.problems)
    return f"configuration problem: {error}" if isinstance(error, ConfigError) else str(error)


class _Watched:
    """Standard output as a command writes it, which remembers whether a write or a flush
    failed (``failed``): an ``OSError`` that escapes a command is then the output's (a full
    disk), not a fault, told without writing anything more to try it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.failed = False

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError:
            self.failed = True
            raise

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError:
            self.failed = True
            raise

    def __getattr__(self, name: str) -> object:  # isatty, fileno, encoding...
        return getattr(self.stream, name)


def _drop_output() -> None:
    """Standard output goes to /dev/null from now on, as the Python documentation advises
    for a broken pipe: the interpreter's last flush at exit does not fail again."""
    with suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``companion`` script; returns the exit status (see
    :data:`EXIT_STATUSES`)."""
    with_lines = getattr(sys.stdout, "reconfigure", None)
    if with_lines is not None:
        # line_buffering: a monitor piped into tee or grep shows each line now;
        # backslashreplace: a lone surrogate read from JSON (a case's id) is printed as \ud800
        with_lines(line_buffering=True, errors="backslashreplace")
    watched = None if sys.stdout is None else _Watched(sys.stdout)
    if watched is not None:
        sys.stdout = cast(TextIO, watched)
    daemon = False
    previous = signal.getsignal(signal.SIGTERM)
    try:
        args = make_parser().parse_args(argv)
        daemon = args.command == "run"
        if not daemon:  # tidied up after as for Ctrl-C; the daemon has its own (_Signals)
            signal.signal(signal.SIGTERM, _terminate)
        try:
            status: int = args.func(args)
        except CompanionError as error:
            print(f"companion: {_message(error)}", file=sys.stderr)
            status = _status_of(error)
        if sys.stdout is not None:  # None when started with it closed (>&-)
            sys.stdout.flush()
    except KeyboardInterrupt as stop:
        if daemon:  # stopped before its own handlers were in place: as clean a stop
            return 0
        return EX_TERMINATED if isinstance(stop, Terminated) else EX_INTERRUPTED
    except BrokenPipeError:
        _drop_output()
        return EX_PIPE
    except OSError as error:
        if watched is None or not watched.failed:  # not the output's: a fault
            raise
        from companion.files import reason_of

        print(f"companion: cannot write the standard output: {reason_of(error)}",
              file=sys.stderr)
        _drop_output()
        return EX_CANTCREAT
    finally:
        if not daemon:  # the daemon's stay ignored once it has stopped (_Signals.done)
            signal.signal(signal.SIGTERM, previous)
        if watched is not None:
            sys.stdout = watched.stream
    return status


if __name__ == "__main__":
    sys.exit(main())
