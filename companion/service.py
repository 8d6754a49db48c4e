"""The daemon: one composition root, one event queue, one referee thread.

:func:`build` makes every part from the configuration in dependency order (journal, rules and
game, display, controls, board link) and :meth:`Service.run` runs the loop: it blocks on the
queue until an event arrives or the next referee timer, the readiness wait or the watchdog is
due (no polling), hands the event to the referee and carries out the effects in order: a
committed step is written to the journal (fsync'd) before the matrix shows it.
:meth:`Service.close` stops the parts in reverse order; SIGTERM and Ctrl-C share that one
shutdown path, and SIGHUP becomes a :class:`Reload` event on the queue.

What keeps a game alive: the journal of the game in progress is resumed at start (the one the
journal folder's pointer names, so a start reads one journal however many are kept), up to its
last good line when it is damaged (logged once, and told on the matrix until the board
matches), and the referee stays out of sync until the board matches it or shows a legal step
made while the companion was down; a journal that cannot be written (a full card) keeps its
lines and the matrix says so while the game goes on; a board that falls silent is asked for a
fresh dump; systemd hears ``READY=1``, ``WATCHDOG=1`` and ``STATUS=`` lines
(:mod:`companion.notify`); a repeated error is logged once per burst with a count; a display or
GPIO pins that cannot be opened leave the game refereed without them while they are tried again
(:meth:`Service.open_later`).
"""

from __future__ import annotations

import importlib
import logging
import queue
import random
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from companion import journal as journal_mod
from companion.board import protocol
from companion.board.link import BurstLog
from companion.config import RELOADABLE, Config, DisplayConfig, layout_name
from companion.errors import (
    CompanionError,
    ConfigError,
    JournalBusyError,
    JournalDamagedError,
    JournalError,
)
from companion.events import BoardMessage, Event, LinkState, StartGame, Stop, Timer
from companion.notify import Notifier
from companion.referee.effects import (
    Buzz,
    Committed,
    GameOver,
    NewGame,
    Note,
    Send,
    SetTimer,
    Show,
    Undone,
)
from companion.referee.referee import Referee, RefereeSettings
from companion.referee.seats import Dealt, Hinted, game_seats
from companion.rules import load as load_rules
from companion.rules.base import GameRules

log = logging.getLogger("companion")

ERROR_BURST_S = 60.0
"""Seconds during which a repeated error is counted instead of logged again."""

JOURNAL_RETRY_S = 5.0
"""Seconds between two attempts to write a journal that fell behind, while no step comes."""

JOURNAL_ALARM = "Journal write failed: the game goes on"
"""The matrix's words when the journal cannot be written."""

RETRY_FIRST_S = 2.0
"""Seconds before a part that failed to open (the display, the GPIO pins) is tried again."""

RETRY_MAX_S = 60.0
"""The longest wait between two tries; the wait doubles from :data:`RETRY_FIRST_S` up to it."""


def referee_settings(config: Config) -> RefereeSettings:
    """The referee's timings (seconds) from ``[board]``."""
    board = config.board
    return RefereeSettings(
        debounce_s=board.debounce_ms / 1000,
        settle_s=board.settle_ms / 1000,
        grace_s=board.grace_ms / 1000,
        tray=board.tray,
        heartbeat_timeout_s=board.heartbeat_timeout_s,
        presence=board.sensing == "presence",
    )


@dataclass(slots=True)
class _Retry:
    """A part that failed to open: ``open`` is tried again at ``at`` (seconds), after ``wait``
    seconds; ``error`` is the last failure's sentence."""

    open: Callable[[], None]
    at: float
    wait: float
    error: str
    tries: int = 1


def _sentence(error: BaseException) -> str:
    """An error in words, to go inside a log line: ours are sentences already (their full stop
    is dropped), anything else gets its type named."""
    if isinstance(error, CompanionError | OSError) and str(error):
        return str(error).rstrip(".")
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _wrong_cells(screen: Any) -> list[str]:
    """The cells ``screen`` (a :class:`companion.display.screen.Screen` or ``None``) shows as
    wrong, sorted."""
    highlights = screen.highlights if screen is not None else {}
    return sorted(cell for cell, role in highlights.items() if role == "wrong")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True, slots=True)
class Reload(Event):
    """Re-read the configuration file at ``path`` and apply its ``[display]`` (``SIGHUP``)."""

    path: str = ""


@dataclass
class Service:
    """The running daemon around one :class:`Referee`.

    ``display``, ``controls``, ``link`` and ``journal`` are optional so that tools and tests
    can run the loop with only some parts; ``screen_listeners`` are called with every screen
    shown (the live view of ``companion monitor``, tests, the demo's players reading the matrix).

    ``notifier`` speaks to systemd (:mod:`companion.notify`): ``READY=1`` once the board has
    answered, or after ``ready_timeout_s`` seconds with a *no board* screen; ``WATCHDOG=1``
    from the loop every half watchdog interval (the loop wakes for it); ``STATUS=`` lines when
    the game or the board changes.  ``config`` and ``display_factory`` (a ``DisplayConfig``
    to a new :class:`companion.display.Display`) let a :class:`Reload` event rebuild the
    matrix without touching the game.  ``note`` (a damaged journal, :class:`StartingGame`)
    comes before the message of every screen until the referee is in step with the board.

    A part that cannot be opened (:meth:`open_later`: the display without SPI or a desktop,
    the GPIO pins without a pin factory) does not stop the referee: the game goes on without
    it (the log, and the buzzer and status LED or the matrix, whichever is there, say what
    happens) and it is tried again from the loop, the wait doubling from
    :data:`RETRY_FIRST_S` to :data:`RETRY_MAX_S` seconds.
    """

    referee: Referee
    events: queue.Queue[Event]
    clock: Callable[[], float] = time.monotonic
    display: Any = None
    controls: Any = None
    link: Any = None
    journal: journal_mod.Journal | None = None
    screen_listeners: list[Callable[[Any], None]] = field(default_factory=list)
    commit_listeners: list[Callable[[Committed], None]] = field(default_factory=list)
    stop_when_over: bool = False
    notifier: Notifier = field(default_factory=Notifier)
    ready_timeout_s: float = 10.0
    config: Config | None = None
    display_factory: Callable[[DisplayConfig], Any] | None = None
    port: str = ""
    journal_error: str = ""
    note: str = ""
    web: Any = None
    """The live page (:class:`companion.web.server.WebView`) when ``[web] listen`` is set."""

    def __post_init__(self) -> None:
        self.timers: dict[str, float] = {}
        self.outcome: Any = None
        self.running = False
        self.last_screen: Any = None
        self.handled = 0
        self.games = 0
        """Games started by OK after an end since the configured or chosen game (the next
        seed counts from its seed)."""
        self.ready = False
        self.board = "waiting"
        """What the service knows of the board: ``waiting``, ``up``, ``down``, ``silent``."""
        self._down_notice = ""  # what the link said to do about the outage, if anything
        self._ready_at: float | None = None
        self._ping_at: float | None = None
        self._retry_at = 0.0
        self._status = ""
        self._plain_screen: Any = None
        self._out_of_step = False
        self._journal_alarm = bool(self.journal_error) or (
            self.journal is not None and self.journal.behind > 0)
        self._errors = BurstLog(log, "internal error (the game goes on)", self.clock, ERROR_BURST_S)
        self._journal_errors = BurstLog(log, "journal", self.clock, ERROR_BURST_S)
        self._retries: dict[str, _Retry] = {}

    # ------------------------------------------------------------------ the loop
    def run(self) -> Any:
        """Run until a :class:`Stop` event (or the end of the game with ``stop_when_over``).

        Returns the game's outcome, or ``None`` when it did not end.
        """
        self.running = True
        now = self.clock()
        self._ready_at = now + self.ready_timeout_s
        if self.notifier.watchdog_s is not None:
            self._ping_at = now
        self._execute(self.referee.start(now))
        self._report_status()
        try:
            while self.running:
                event = self._next_event()
                self._housekeeping()
                if isinstance(event, Stop):
                    log.info("stopping: %s", event.reason or "asked to")
                    break
                if event is not None:
                    self._handle(event)
                self._report_status()
        finally:
            self.running = False
            self.notifier.stopping()
        return self.outcome

    def _next_event(self) -> Event | None:
        """The next event, or ``None`` when a timer, the readiness wait or the watchdog is due
        first.  Blocks without polling."""
        own = (t for t in (self._ready_at, self._ping_at) if t is not None)
        due = [*self.timers.values(), *own, *(r.at for r in self._retries.values())]
        timeout = max(0.0, min(due) - self.clock()) if due else None
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def _housekeeping(self) -> None:
        """What is due whatever the event: the watchdog, the readiness wait, the timers, a
        journal that fell behind, a part to try opening again."""
        now = self.clock()
        if self._ping_at is not None and now >= self._ping_at and self.notifier.watchdog_s:
            self.notifier.watchdog()
            self._ping_at = now + self.notifier.watchdog_s / 2
        if self._ready_at is not None and now >= self._ready_at:
            self._ready_at = None
            self._no_board(now)
        self._fire_timers()
        if self.journal is not None and self.journal.behind and now >= self._retry_at:
            self._retry_at = now + JOURNAL_RETRY_S
            self._journal(lambda j: j.flush())
        self._retry_parts(now)

    def _fire_timers(self) -> None:
        now = self.clock()
        for name, at in sorted(self.timers.items(), key=lambda item: item[1]):
            if at <= now and self.timers.get(name) == at:
                del self.timers[name]
                self._handle(Timer(now, name))
                if name == "heartbeat":
                    self._silent()

    def _handle(self, event: Event) -> None:
        self.handled += 1
        if isinstance(event, Reload):
            self._reload(event.path)
            return
        if isinstance(event, StartGame):
            self._new_game(event)
            return
        if isinstance(event, BoardMessage) and self.board != "up":
            self.board = "up"
            self._status_led("ready")
        elif isinstance(event, LinkState) and not event.up:
            self.board = "down"
            self._status_led("error")
        if isinstance(event, LinkState):
            self._down_notice = "" if event.up else event.notice
        try:
            effects = self.referee.handle(event)
        except Exception as error:  # a bug must not end the game: log it and go on
            log.debug("internal error while handling %r", event, exc_info=True)
            self._errors.report(f"{type(event).__name__}: {error!r}")
            return
        self._execute(effects)
        if isinstance(event, BoardMessage) and not self.ready:
            self._ready_now()

    # ------------------------------------------------------------------ the board and systemd
    def _ready_now(self) -> None:
        """Start-up is over (the board answered, or the wait for it ran out): ``READY=1``."""
        self._ready_at = None
        self.ready = True
        self._status = self._status_text()
        self.notifier.ready(self._status)

    def _silent(self) -> None:
        """No heartbeat for ``heartbeat_timeout_s``: the referee shows it; a stalled board that
        recovers is asked for a fresh dump so that the referee resyncs."""
        self.board = "silent"
        self._status_led("error")
        if self.link is not None:
            self.link.send(protocol.RequestDump())

    def _no_board(self, now: float) -> None:
        """The board did not answer within ``ready_timeout_s``: say so, and tell systemd that
        the start is over (the link keeps trying)."""
        if self.ready:
            return
        where = f" on {self.port}" if self.port else ""
        log.warning("no board answered%s within %g s; still trying", where, self.ready_timeout_s)
        # A port another program holds is no cable fault: keep the link's notice naming it.
        text = self._down_notice or f"No board{where}: check the USB cable"
        self._effect(self.referee.notice(text, now, urgent=True))
        self.board = "down"
        self._ready_now()

    def _status_text(self) -> str:
        """One line for ``systemctl status``: the game, the step, the board, the journal."""
        referee = self.referee
        game = f"{referee.rules.name}, step {referee.steps_committed}"
        if self.outcome is not None:
            game += ", game over"
        elif referee.steps_committed or referee.have_board:
            game += f", P{referee.rules.to_move(referee.state)} to move"
        board = {"waiting": "waiting for the board", "up": "board connected",
                 "down": "board disconnected", "silent": "board silent"}[self.board]
        text = f"{game}; {board}"
        if self.journal is not None and self.journal.behind:
            text += f"; journal NOT saved ({self.journal.behind} lines waiting)"
        for what in self._retries:
            text += f"; no {what} (trying again)"
        return text

    def _report_status(self) -> None:
        text = self._status_text()
        if text != self._status:
            self._status = text
            self.notifier.status(text)

    def _status_led(self, state: str) -> None:
        if self.controls is not None:
            self.controls.status(state)

    # ------------------------------------------------------------------ parts opened later
    def open_later(self, what: str, open_part: Callable[[], None], error: BaseException) -> None:
        """Referee without ``what`` (``"display"``, ``"GPIO pins"``), which failed to open
        with ``error``: say so, and call ``open_part`` from the loop after
        :data:`RETRY_FIRST_S` seconds, then after twice as long each time it raises, up to
        :data:`RETRY_MAX_S`, until it returns (it attaches the part itself)."""
        log.error("the %s cannot be opened: %s; refereeing on and trying again in %g s",
                  what, _sentence(error), RETRY_FIRST_S)
        self._retries[what] = _Retry(open_part, self.clock() + RETRY_FIRST_S, RETRY_FIRST_S,
                                     _sentence(error))

    def _retry_parts(self, now: float) -> None:
        for what, retry in list(self._retries.items()):
            if now < retry.at:
                continue
            retry.tries += 1
            try:
                retry.open()
            except Exception as error:  # whatever a device raises, the game goes on
                retry.wait = min(2 * retry.wait, RETRY_MAX_S)
                retry.at = now + retry.wait
                same = _sentence(error) == retry.error
                retry.error = _sentence(error)
                log.log(logging.DEBUG if same else logging.WARNING,
                        "the %s still cannot be opened: %s; trying again in %g s",
                        what, retry.error, retry.wait, exc_info=log.isEnabledFor(logging.DEBUG))
            else:
                del self._retries[what]
                log.info("the %s opened at the %s try", what, _ordinal(retry.tries))

    def open_display(self) -> None:
        """Open the matrix of ``config.display``; one that cannot be opened is tried again
        later (:meth:`open_later`) while the game goes on without it."""
        try:
            self._open_display()
        except Exception as error:  # no SPI, no framebuffer, no desktop for pygame...
            self.open_later("display", self._open_display, error)

    def _open_display(self) -> None:
        """Open the matrix of the running display settings and show the screen of the game."""
        if self.config is None or self.display_factory is None:
            raise RuntimeError("this service was not built from a configuration")
        self._attach_display(self.display_factory(self.config.display))

    def _attach_display(self, display: Any) -> None:
        self.display = display
        if self.last_screen is not None:
            display.show(self.last_screen)

    # ------------------------------------------------------------------ SIGHUP
    def _reload(self, path: str) -> None:
        """Apply the ``[display]`` of the file at ``path``; the game is not touched, the other
        sections take effect at the next start.  The new matrix is opened before the old one is
        closed: a bad file or a device that fails to open keeps the matrix as it was (logged).
        Without a matrix (it failed to open), a reload tries to open it at once."""
        from companion.config import changed_sections, display_changes, load_config

        if self.config is None:
            log.warning("reload ignored: this service was not built from a configuration")
            return
        try:
            new = load_config(path)
        except ConfigError as error:
            log.error("reload refused, the running settings stay:\n%s", error)
            return
        later = [name for name in changed_sections(self.config, new) if name not in RELOADABLE]
        if later:
            log.warning("reload: %s changed; that takes effect at the next start",
                        ", ".join(f"[{name}]" for name in later))
        if not display_changes(self.config, new) or self.display_factory is None:
            log.info("reload: the display settings are unchanged")
            if "display" in self._retries:
                self._retries["display"].at = self.clock()
            return
        try:
            display = self.display_factory(new.display)
        except Exception as error:  # whatever the new device raises, the old one stays
            keeping = ("keeping the current display" if self.display is not None
                       else "still without a display, the running settings are tried again")
            log.error("display reload failed: %s; %s", _sentence(error), keeping)
            return
        old, before = self.display, self.config.display
        self.config = self.config.replace_display(new.display)
        self._retries.pop("display", None)
        if old is not None:
            # A device of the same type drives the same matrix: the old must not switch it off.
            old.close(switch_off=before.luma["display"] != new.display.luma["display"])
        self._attach_display(display)
        log.info("reload: display settings applied")

    # ------------------------------------------------------------------ effects
    def _execute(self, effects: list[Any]) -> None:
        for effect in effects:
            try:
                self._effect(effect)
            except CompanionError as error:
                log.error("%s", error)

    def _effect(self, effect: Any) -> None:
        if isinstance(effect, SetTimer):
            if effect.at is None:
                self.timers.pop(effect.name, None)
            else:
                self.timers[effect.name] = effect.at
        elif isinstance(effect, Committed):
            log.info("step %d, player %d: %s", effect.number, effect.player, effect.step)
            self._journal(lambda j: j.step(effect.number, effect.player, effect.step))
            for listener in self.commit_listeners:
                listener(effect)
        elif isinstance(effect, Hinted):
            log.info("player %d asked for a hint before step %d: %s", effect.player,
                     effect.number, effect.step)
            self._journal(lambda j: j.hint(effect.number, effect.player))
        elif isinstance(effect, Dealt):
            log.info("a card was read for the companion at seat %d", effect.player)  # not which
            self._journal(lambda j: j.dealt(effect.player, effect.card))
        elif isinstance(effect, Undone):
            log.info("step %d (%s) taken back", effect.number, effect.step)
            self._journal(lambda j: j.undo(effect.number))
        elif isinstance(effect, GameOver):
            self.outcome = effect.outcome
            ranking = ", ".join(f"P{p} {text} ({points})"
                                for p, text, points in effect.outcome.ranking)
            log.info("game over (%s): %s", effect.outcome.termination, ranking)
            self._journal(lambda j: j.finish(effect.outcome))
            if self.stop_when_over:
                self.running = False
        elif isinstance(effect, NewGame):
            self._new_game()
        elif isinstance(effect, Show):
            self._show(effect.screen)
        elif isinstance(effect, Buzz):
            if self.controls is not None:
                self.controls.buzz(effect.pattern)
        elif isinstance(effect, Send):
            if self.link is not None:
                self.link.send(effect.message)
        elif isinstance(effect, Note):
            log.log(logging.getLevelName(effect.level.upper()), "%s", effect.text)

    def _show(self, screen: Any) -> None:
        """Show ``screen``, marked while the journal is behind (players must know that a power
        cut now would lose steps); the first screen after a failed write says so in words.
        A board refused (cells shown as wrong) is logged once, and again when other cells
        become wrong, so that a daemon whose matrix nobody sees tells what it refuses."""
        wrong = _wrong_cells(screen)
        if wrong and wrong != _wrong_cells(self._plain_screen):
            log.info("no legal step explains the board: %s shown as wrong", ", ".join(wrong))
        # Out of step (a setup not made, steps made while the companion was down): said once
        # until the board matches, not at every piece the players put right.
        restore = sorted(screen.highlights) if self.referee.syncing and screen.highlights else []
        if restore and not self._out_of_step:
            more = f" and {len(restore) - 8} more" if len(restore) > 8 else ""
            log.info("the board does not show the game as it stands: %d cells to set up or put "
                     "back (%s%s)", len(restore), ", ".join(restore[:8]), more)
        self._out_of_step = bool(restore)
        self._plain_screen = screen
        if self.note and not self.referee.syncing:
            self.note = ""  # the board matches: the players have seen where the game stands
        if self.note:
            screen = replace(screen, message=f"{self.note}. {screen.message}")
        if self.journal_error:
            screen = replace(screen, extra={**screen.extra, "journal": "NOT saved"})
            if self._journal_alarm:
                self._journal_alarm = False
                screen = replace(screen, message=f"Games are not saved: {self.journal_error}",
                                 urgent=True)
        elif self.journal is not None and self.journal.behind:
            screen = replace(screen, extra={**screen.extra, "journal": "NOT saved"})
            if self._journal_alarm:
                self._journal_alarm = False
                screen = replace(screen, message=JOURNAL_ALARM, urgent=True)
        if self.web is not None:
            screen = self.web.mark(screen)  # the control PIN, for whoever reads the matrix
        self.last_screen = screen
        if self.display is not None:
            self.display.show(screen)
        for listener in self.screen_listeners:
            listener(screen)

    def _journal(self, write: Callable[[journal_mod.Journal], None]) -> None:
        """Write to the journal; a failure is logged once per burst and shown on the matrix,
        and the game goes on (the journal keeps the lines and writes them when it can)."""
        if self.journal is None:
            return
        was_behind = self.journal.behind
        try:
            write(self.journal)
        except JournalError as error:
            self._journal_errors.report(str(error))
            self._journal_alarm = self._journal_alarm or not was_behind
            return
        if was_behind:
            self._journal_errors.flush()
            log.warning("the journal is whole again: %d waiting lines written", was_behind)
            if self._plain_screen is not None:
                self._show(self._plain_screen)

    def _new_game(self, chosen: StartGame | None = None) -> None:
        """The next game at the same table: a new setup (the next seed, or the players,
        seed, options and seats ``chosen`` on the page, which the games after it keep), a new
        journal, a new referee with the same settings; the board is asked for a dump, and the
        matrix shows what to lay out until it matches."""
        if self.config is None:
            return
        old = self.referee
        if chosen is None:
            self.games += 1
            seed = self.config.game.seed + self.games if self.config.game.seed else 0
            config = replace(self.config, game=replace(self.config.game, seed=seed))
        else:
            config = replace(self.config, game=replace(
                self.config.game, players=chosen.players, seed=chosen.seed,
                options=dict(chosen.options)),
                players=replace(self.config.players, seats=tuple(chosen.seats)))
        directory = None if self.journal_error else Path(config.journal.directory)
        try:
            state, journal = new_game(config, old.rules, directory, fsync=config.journal.fsync)
        except CompanionError as error:
            log.error("cannot start a new game: %s", error)
            return
        if self.journal is not None:
            self.journal.close()
        if chosen is not None:  # the next games count their seeds from the chosen one
            self.config, self.games = config, 0
        self.journal = journal
        self.outcome = None
        self.timers.clear()
        self.referee = Referee(old.rules, state, old.layout_name, old.settings, syncing=True,
                               extensions=game_extensions(config), seats=game_seats(config))
        log.info("new game (seed %d)", config.game.seed)
        self._execute(self.referee.start(self.clock()))
        if self.link is not None:
            self.link.send(protocol.RequestDump())

    def stop(self, reason: str = "") -> None:
        """Ask the loop to end (thread-safe: it goes through the queue)."""
        self.events.put(Stop(self.clock(), reason))

    def close_display(self) -> None:
        """Close the matrix shown now (the one built at start, or by the last reload)."""
        if self.display is not None:
            self.display.close()

    def reload(self, path: str) -> None:
        """Ask the loop to apply the display settings of ``path`` (thread-safe, and safe from
        a signal handler: it only puts an event on the queue)."""
        self.events.put(Reload(self.clock(), path))


def game_extensions(config: Config) -> list[Any]:
    """The referee extensions of the configured game (dice, cards...): a game that has inputs
    besides its cells has a module ``companion.referee.<game>`` with
    ``extensions(config) -> list[Extension]``."""
    try:
        module = importlib.import_module(f"companion.referee.{config.game.name}")
    except ModuleNotFoundError:
        return []
    extensions: list[Any] = module.extensions(config)
    return extensions


@dataclass
class StartingGame:
    """The game the daemon starts with: its ``state``, the ``history`` of ``(state_before,
    step)`` pairs already committed and its ``journal`` (``None`` without a journal folder).

    ``resumed``: it goes on from a journal.  ``in_flight``: a step may have been made, or been
    settling, while the companion was down (a resumed journal that does not end by taking a
    step back), so a board showing a legal step is that step (:class:`Referee`'s
    ``resumed``).  ``note``: what the matrix tells the players about a damaged journal, ``""``
    when there is nothing to tell.  ``hints``: the hints asked so far, per player; ``dealt``: the
    card ids read for the companion so far, per seat.
    """

    state: Any
    history: list[tuple[Any, Any]]
    journal: journal_mod.Journal | None
    resumed: bool = False
    in_flight: bool = False
    note: str = ""
    hints: dict[int, int] = field(default_factory=dict)
    dealt: dict[int, list[str]] = field(default_factory=dict)


def new_or_resumed_game(
    config: Config, rules: GameRules[Any, Any], directory: Path | None, *, fsync: bool = True
) -> StartingGame:
    """The game to referee: the game in progress in ``directory``
    (:func:`companion.journal.latest_unfinished`) resumed, up to its last good line, else a
    new game from the configuration (seed 0 draws one).

    A damaged journal is kept beside the resumed one as ``<name>.damaged``; one whose header
    is damaged is renamed so and a new game starts.  Either is logged once, as a warning, and
    told on the matrix (``note``).  Raises :class:`JournalError` when the journal cannot be
    repaired or created.
    """
    note = ""
    if directory is not None:
        path = journal_mod.latest_unfinished(directory)
        if path is not None:
            resumed = _resume(config, rules, path, fsync=fsync)
            if isinstance(resumed, StartingGame):
                return resumed
            note = resumed
    state, journal = new_game(config, rules, directory, fsync=fsync)
    return StartingGame(state, [], journal, note=note)


def _resume(config: Config, rules: GameRules[Any, Any], path: Path, *,
            fsync: bool) -> StartingGame | str:
    """The game of the journal at ``path``, or the note for the new game that replaces it."""
    try:
        record = journal_mod.read(path)
    except JournalDamagedError as error:
        aside = journal_mod.set_aside(path)
        log.warning("journal %s is damaged at line %d (%s); kept as %s; a new game starts",
                    path.name, error.line, error.reason, aside.name)
        return f"Journal damaged at line {error.line}: a new game starts"
    except JournalError as error:
        log.error("cannot resume %s: %s; starting a new game", path.name, error)
        return ""
    if record.header.get("game") != config.game.name:
        log.warning("%s is a %s game; starting a new %s game", path.name,
                    record.header.get("game"), config.game.name)
        return ""
    try:
        record = record.checked(rules)
        history = [(before, step) for before, step, _ in record.replay(rules)]
    except CompanionError as error:
        log.error("cannot resume %s: %s; starting a new game", path.name, error)
        return ""
    kept = journal_mod.cut_to_good(record, fsync=fsync)
    state = rules.apply(*history[-1]) if history else rules.parse_position(record.header["setup"])
    damage, note = record.damage, ""
    if damage is not None and kept is not None:
        log.warning("journal %s is damaged at line %d (%s); the game resumes after step %d; "
                    "the damaged file is kept as %s", path.name, damage.line, damage.reason,
                    len(history), kept.name)
        note = f"Journal damaged at line {damage.line}: the game resumes after step {len(history)}"
    else:
        if record.dropped_torn_line:
            log.warning("%s: the last line was cut off (power loss?) and is dropped", path.name)
        log.info("resuming %s after step %d", path.name, len(history))
    return StartingGame(state, history, journal_mod.Journal.continuing(record, fsync=fsync),
                        resumed=True, in_flight=not record.ends_with_undo, note=note,
                        hints=record.hints, dealt=record.dealt)


def new_game(
    config: Config, rules: GameRules[Any, Any], directory: Path | None, *, fsync: bool = True
) -> tuple[Any, journal_mod.Journal | None]:
    """A new game from the configuration (seed 0 draws one) and its journal in
    ``directory``.  Raises :class:`JournalError` when the journal cannot be created."""
    seed = config.game.seed or random.SystemRandom().randrange(1, 2**31)
    state = rules.new_game(config.game.players, seed, config.game.rules_options())
    journal = None
    if directory is not None:
        header = {"game": config.game.name, "layout": layout_name(config),
                  "players": config.game.players,
                  **({"seats": list(config.players.seats)} if config.players.seats else {}),
                  "seed": seed, "options": config.game.rules_options(),
                  "setup": rules.format_position(state)}
        journal = journal_mod.Journal.create(directory, header, fsync=fsync)
    return state, journal


def build(
    config: Config,
    stack: ExitStack,
    *,
    pin_factory: Any = None,
    device: Any = None,
    clock: Callable[[], float] = time.monotonic,
    notifier: Notifier | None = None,
) -> Service:
    """Make every part from ``config`` (dependency order) and register their ``close`` on
    ``stack`` (reverse order on exit).  ``pin_factory``/``device`` override the configured
    GPIO pin factory and luma device (the demo and tests pass gpiozero's MockFactory and an
    emulator); ``notifier`` defaults to the one systemd's environment asks for.

    One pin factory serves the buttons, buzzer, status LED and switch matrix, so gpiozero
    itself refuses a pin two parts want.  A display that cannot be opened, or no pin factory
    working here, leaves the service refereeing without it and trying again
    (:meth:`Service.open_later`).

    Raises :class:`companion.errors.ConfigError` for a configuration the parts refuse (a pin
    two parts want, a pin the kernel holds) and :class:`JournalError` when the journal cannot
    be created; the journal of the game that would have started is then removed.
    """
    from companion.board.link import BoardLink
    from companion.controls import make_pin_factory

    events: queue.Queue[Event] = queue.Queue()
    if notifier is None:
        notifier = Notifier.from_environment()
    stack.callback(notifier.close)
    rules = load_rules(config.game.name).RULES
    directory = Path(config.journal.directory)
    journal_error = ""
    try:
        lock = journal_mod.FolderLock(directory)  # JournalBusyError: another daemon has it
        stack.callback(lock.close)
        start = new_or_resumed_game(config, rules, directory, fsync=config.journal.fsync)
    except JournalBusyError:
        raise
    except JournalError as error:
        # Refereeing without a record beats no referee: the matrix says games are not saved.
        log.error("%s; games are not saved", error)
        journal_error = str(error)
        start = new_or_resumed_game(config, rules, None)
    if start.journal is not None:
        stack.callback(start.journal.close)
    with ExitStack() as refused:
        if start.journal is not None and not start.resumed:
            # A start refused after this leaves no journal of a game that never began.
            refused.callback(start.journal.path.unlink, missing_ok=True)
        referee = Referee(rules, start.state, layout_name(config), referee_settings(config),
                          history=start.history, syncing=True, resumed=start.in_flight,
                          extensions=game_extensions(config),
                          seats=game_seats(config, start.hints, start.dealt))
        service = Service(referee, events, clock=clock, journal=start.journal,
                          journal_error=journal_error, note=start.note, notifier=notifier,
                          ready_timeout_s=config.board.ready_timeout_s, config=config,
                          display_factory=lambda settings: _make_display(settings, clock),
                          port=config.board.port)
        if device is not None:
            service.display = _make_display(config.display, clock, device)
        else:
            service.open_display()
        stack.callback(service.close_display)

        def open_gpio(factory: Any, *, owned: bool) -> None:
            _open_gpio(service, config, factory, owned=owned, stack=stack)

        if pin_factory is not None:
            open_gpio(pin_factory, owned=False)
        else:
            try:
                factory = make_pin_factory()
            except ConfigError as error:  # no GPIO here (yet): referee without the buttons
                service.open_later("GPIO pins",
                                   lambda: open_gpio(make_pin_factory(), owned=True), error)
            else:
                open_gpio(factory, owned=True)
        if config.web.listen:
            _open_web(service, config.web.listen, stack)
        if not config.switches.rows:
            service.link = BoardLink(config.board.port, events, baudrate=config.board.baudrate,
                                     clock=clock)
            stack.callback(service.link.close)
            service.link.start()
        refused.pop_all()
    return service


def _make_display(settings: DisplayConfig, clock: Callable[[], float], device: Any = None) -> Any:
    """A :class:`companion.display.Display` on ``device``, else on the device ``settings``
    configure."""
    from companion.display import Display, make_device

    if device is None:
        device = make_device({**settings.luma, "contrast": settings.contrast})
    return Display(device, clock=clock, frame_interval=settings.frame_interval_ms / 1000)


def _open_web(service: Service, listen: str, stack: ExitStack) -> None:
    """Serve the live page on ``listen``: it follows every screen shown.  Raises
    :class:`ConfigError` when the web extra is not installed or the address is refused."""
    try:
        from companion.web.newgame import Choices
        from companion.web.server import WebView
    except ImportError as error:
        from companion.web import WEB_INSTALL

        raise ConfigError(f"[web] listen is set but the web page cannot be served: "
                          f"{(error.name or 'tornado').split('.')[0]} is not installed "
                          f"({WEB_INSTALL})") from None
    journals = None if service.journal_error or service.config is None else Path(
        service.config.journal.directory)
    choices = None if service.config is None else Choices(service.config.game,
                                                          service.config.players.seats)
    view = WebView(listen, title=f"Gardens of {service.referee.rules.name.capitalize()}",
                   events=service.events, clock=service.clock, journals=journals,
                   choices=choices)
    stack.callback(view.close)
    service.web = view
    service.commit_listeners.append(view.commit)

    def publish(screen: Any) -> None:
        referee = service.referee
        view.publish(screen, service.board, referee.steps_committed,
                     (referee.rules, referee.layout_name, tuple(referee.history), referee.state))

    service.screen_listeners.append(publish)
    log.info("live page: %s", view.address)


def _open_gpio(service: Service, config: Config, factory: Any, *, owned: bool,
               stack: ExitStack) -> None:
    """The buttons, buzzer and status LED, and the switch matrix if there is one, all on
    ``factory`` (closed with them when ``owned``); their ``close`` goes on ``stack``.  Raises
    :class:`ConfigError` for a pin that cannot be used, with every part made here closed."""
    from companion.controls import Controls

    with ExitStack() as parts:
        if owned:
            parts.callback(factory.close)
        controls = Controls(service.events, pins=config.buttons.pins, pin_factory=factory,
                            clock=service.clock, bounce_s=config.buttons.bounce_ms / 1000)
        parts.callback(controls.close)
        matrix = None
        if config.switches.rows:  # a switch matrix on the Pi's GPIO instead of a serial board
            from companion.board.gpio_matrix import GpioMatrix

            matrix = GpioMatrix.from_config(config, service.events, pin_factory=factory,
                                            clock=service.clock)
            parts.callback(matrix.close)
        stack.push(parts.pop_all())
    service.controls = controls
    if matrix is not None:
        service.link = matrix
        matrix.start()
