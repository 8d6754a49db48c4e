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
(:mod:`companion.daemon.notify`); a repeated error is logged once per burst with a count; a
display or GPIO pins that cannot be opened leave the game refereed without them while they are
tried again (:meth:`Service.open_later`).
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from companion import journal as journal_mod
from companion.board import protocol
from companion.bursts import BurstLog
from companion.config import RELOADABLE, Config, DisplayConfig
from companion.daemon.collector import IdleCollector
from companion.daemon.controls import StatusLight
from companion.daemon.games import (
    StartingGame,
    game_extensions,
    make_referee,
    new_game,
    new_or_resumed_game,
    referee_settings,
)
from companion.daemon.health import BoardStatus, Health
from companion.daemon.matrix import MatrixSlot
from companion.daemon.notify import Notifier
from companion.daemon.record import ERROR_BURST_S, JOURNAL_ALARM, JOURNAL_RETRY_S, Record
from companion.daemon.retry import RETRY_FIRST_S, RETRY_MAX_S, Retries
from companion.daemon.seams import GameJournal, Link, Matrix, Panel
from companion.errors import (
    CompanionError,
    ConfigError,
    JournalBusyError,
    JournalError,
    MisuseError,
)
from companion.events import (
    AnyEvent,
    BadLine,
    BoardMessage,
    Button,
    Fault,
    Hint,
    LinkState,
    Reload,
    StartGame,
    Stop,
    Timer,
    TimerName,
)
from companion.referee.effects import (
    Adopted,
    Buzz,
    Committed,
    Dealt,
    Effect,
    Effects,
    GameOver,
    Hinted,
    NewGame,
    Note,
    Send,
    SetTimer,
    Show,
    Undone,
)
from companion.referee.referee import Referee
from companion.referee.screen import Screen
from companion.referee.timers import Timers
from companion.rules import load as load_rules
from companion.rules.base import Outcome

if TYPE_CHECKING:
    from companion.board.pins import PinFactory
    from companion.display.device import LumaDevice
    from companion.web.server import WebView

__all__ = [
    "JOURNAL_ALARM", "JOURNAL_RETRY_S", "RETRY_FIRST_S", "RETRY_MAX_S", "Reload", "Service",
    "StartingGame", "build", "game_extensions", "new_or_resumed_game", "referee_settings",
]

log = logging.getLogger("companion")


def _wrong_cells(screen: Screen | None) -> list[str]:
    """The cells ``screen`` shows as wrong, sorted."""
    highlights = screen.highlights if screen is not None else {}
    return sorted(cell for cell, role in highlights.items() if role == "wrong")


class Service:
    """The running daemon around one :class:`Referee`: the loop, its timers and the dispatch
    of events to the referee and of effects to the parts.

    ``display``, ``controls``, ``link`` and ``journal`` are optional so that tools and tests
    can run the loop with only some parts; ``screen_listeners`` are called with every screen
    shown (the live view of ``companion monitor``, the live page, tests, the demo's players
    reading the matrix) and ``commit_listeners`` with every step committed.

    ``notifier`` speaks to systemd (:mod:`companion.daemon.health`): ``READY=1`` once the
    board has answered, or after ``ready_timeout_s`` seconds with a *no board* screen;
    ``WATCHDOG=1`` from the loop every half watchdog interval (the loop wakes for it);
    ``STATUS=`` lines when the game or the board changes.  ``config`` and ``display_factory``
    (a ``DisplayConfig`` to a new :class:`companion.display.Display`) let a :class:`Reload`
    event rebuild the matrix without touching the game (:mod:`companion.daemon.matrix`).
    ``journal_error`` (games are not saved) and ``note`` (a damaged journal,
    :class:`StartingGame`) are told on the matrix (:mod:`companion.daemon.record`).

    A part that cannot be opened (:meth:`open_later`: the display without SPI or a desktop,
    the GPIO pins without a pin factory) does not stop the referee: the game goes on without
    it (the log, and the buzzer and status LED or the matrix, whichever is there, say what
    happens) and it is tried again from the loop (:mod:`companion.daemon.retry`).
    """

    def __init__(
        self,
        referee: Referee,
        events: queue.SimpleQueue[AnyEvent],
        *,
        clock: Callable[[], float] = time.monotonic,
        display: Matrix | None = None,
        controls: Panel | None = None,
        link: Link | None = None,
        journal: GameJournal | None = None,
        stop_when_over: bool = False,
        notifier: Notifier | None = None,
        ready_timeout_s: float = 10.0,
        config: Config | None = None,
        display_factory: Callable[[DisplayConfig], Matrix] | None = None,
        port: str = "",
        journal_error: str = "",
        note: str = "",
    ) -> None:
        self.referee = referee
        self.events = events
        self.clock = clock
        self.controls = controls
        self.link = link
        self.stop_when_over = stop_when_over
        self.config = config
        self.port = port
        self.screen_listeners: list[Callable[[Screen], None]] = []
        self.commit_listeners: list[Callable[[Committed], None]] = []
        self.journal_listeners: list[Callable[[Path], None]] = []
        """Called with the journal's path after each line is durable there (the publisher of
        ``[mqtt]`` reads the journal as its outbox)."""
        self.web: WebView | None = None
        """The live page when ``[web] listen`` is set."""
        self.timers = Timers()
        self.outcome: Outcome | None = None
        self.running = False
        self.handled = 0
        self.games = 0
        """Games started by OK after an end since the configured or chosen game (the next
        seed counts from its seed)."""
        self.health = Health(notifier or Notifier(), self._status_led,
                             ready_timeout_s=ready_timeout_s)
        self.record = Record(journal, clock, error=journal_error, note=note)
        self.matrix = MatrixSlot(display, display_factory)
        self.retries = Retries(clock)
        self._plain_screen: Screen | None = None
        self._out_of_step = False
        self._errors = BurstLog(log, "internal error (the game goes on)", clock, ERROR_BURST_S)

    # ------------------------------------------------------------------ what the parts know
    @property
    def notifier(self) -> Notifier:
        """What speaks to systemd for this service."""
        return self.health.notifier

    @property
    def board(self) -> BoardStatus:
        """What the service knows of the board (:class:`BoardStatus`)."""
        return self.health.board

    @property
    def ready(self) -> bool:
        """Whether start-up is over (``READY=1`` was sent)."""
        return self.health.ready

    @property
    def journal(self) -> GameJournal | None:
        """The journal of the game in progress, ``None`` when it is not recorded."""
        return self.record.journal

    @property
    def journal_error(self) -> str:
        """Why games are not saved, ``""`` when they are."""
        return self.record.error

    @property
    def display(self) -> Matrix | None:
        """The matrix shown now."""
        return self.matrix.display

    @display.setter
    def display(self, display: Matrix | None) -> None:
        self.matrix.display = display

    @property
    def last_screen(self) -> Screen | None:
        """The last screen shown, as the matrix shows it."""
        return self.matrix.last_screen

    # ------------------------------------------------------------------ the loop
    def run(self) -> Outcome | None:
        """Run until a :class:`Stop` event (or the end of the game with ``stop_when_over``).

        Returns the game's outcome, or ``None`` when it did not end.
        """
        self.running = True
        self.health.start(self.clock())
        self._execute(self.referee.start(self.clock()))
        self._report_status()
        # Automatic collection is off while the loop runs and what start-up made is out of the
        # collector's sight: the loop collects when no event waits (IdleCollector), not in the
        # middle of a field update, and a full collection walks only what the game made.
        with IdleCollector(self.clock) as collector:
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
                    if self._idle():
                        collector.idle()
            finally:
                self.running = False
                self.health.stopping()
        return self.outcome

    def _next_event(self) -> AnyEvent | None:
        """The next event, or ``None`` when a timer, the readiness wait, the watchdog or a
        part to open again is due first.  Blocks without polling."""
        due = self._deadlines()
        timeout = max(0.0, min(due) - self.clock()) if due else None
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def _deadlines(self) -> list[float]:
        """When the referee's timers, the readiness wait, the watchdog and the parts to open
        again are due (seconds on the loop's clock)."""
        return [*self.timers.values(), *self.health.deadlines(), *self.retries.deadlines()]

    def _idle(self) -> bool:
        """Whether no event waits and no timer, readiness wait, watchdog or part to open
        again is due now."""
        due = self._deadlines()
        return self.events.empty() and not (due and min(due) <= self.clock())

    def _housekeeping(self) -> None:
        """What is due whatever the event: the watchdog, the readiness wait, the timers, a
        journal that fell behind, a part to try opening again."""
        now = self.clock()
        if self.health.tick(now):
            self._no_board(now)
        self._fire_timers()
        if self.record.retry(now):
            self._journal_written()
            self._show_again()
        self.retries.run(now)

    def _fire_timers(self) -> None:
        now = self.clock()
        while (due := self.timers.pop_due(now)) is not None:
            name, _ = due
            self._handle(Timer(now, name))
            if name == TimerName.HEARTBEAT:
                self._silent()

    # ------------------------------------------------------------------ dispatch
    def _handle(self, event: AnyEvent) -> None:
        self.handled += 1
        match event:
            case Reload():
                self._reload(event.path)
                return
            case StartGame():
                self._new_game(event)
                return
            case BoardMessage() | LinkState():
                self.health.saw(event)
            case Button() | Hint() | Timer() | BadLine() | Fault() | Stop():
                pass
            case _:
                assert_never(event)
        try:
            effects = self.referee.handle(event)
        except Exception as error:  # a bug must not end the game: log it and go on
            log.debug("internal error while handling %r", event, exc_info=True)
            self._errors.report(f"{type(event).__name__}: {error!r}")
            return
        self._execute(effects)
        if isinstance(event, BoardMessage) and not self.ready:
            self.health.ready_now(self._status_text())

    def _execute(self, effects: Effects) -> None:
        for effect in effects:
            try:
                self._effect(effect)
            except CompanionError as error:
                log.error("%s", error)

    def _effect(self, effect: Effect) -> None:
        match effect:
            case SetTimer():
                self.timers.arm(effect)
            case Committed() if effect.corrects is not None:
                log.info("step %d, player %d: %s, in place of %s", effect.number,
                         effect.player, effect.step, effect.corrects)
                self._journal(lambda j: j.correct(effect.number, effect.player, effect.step))
                for listener in self.commit_listeners:
                    listener(effect)
            case Committed():
                log.info("step %d, player %d: %s", effect.number, effect.player, effect.step)
                self._journal(lambda j: j.step(effect.number, effect.player, effect.step))
                for listener in self.commit_listeners:
                    listener(effect)
            case Hinted():
                log.info("player %d asked for a hint before step %d: %s", effect.player,
                         effect.number, effect.step)
                self._journal(lambda j: j.hint(effect.number, effect.player))
            case Dealt():
                log.info("a card was read for the companion at seat %d", effect.player)  # not which
                self._journal(lambda j: j.dealt(effect.player, effect.card))
            case Undone():  # logged by the referee's note
                self.outcome = None  # the step that ended the game may be the one taken back
                self._journal(lambda j: j.undo(effect.number))
            case GameOver():
                self.outcome = effect.outcome
                ranking = ", ".join(f"P{p} {text} ({points})"
                                    for p, text, points in effect.outcome.ranking)
                log.info("game over (%s): %s", effect.outcome.termination, ranking)
                self._journal(lambda j: j.finish(effect.outcome))
                if self.stop_when_over:
                    self.running = False
            case Adopted():
                self._adopted(effect.position)
            case NewGame():
                self._new_game()
            case Show():
                self._show(effect.screen)
            case Buzz():
                if self.controls is not None:
                    self.controls.buzz(effect.pattern)
            case Send():
                if self.link is not None:
                    self.link.send(effect.message)
            case Note():
                log.log(effect.level.logging_level, "%s", effect.text)
            case _:
                assert_never(effect)

    def _adopted(self, position: str) -> None:
        """The setup is the players' (a garden laid out, reserves dealt by hand): the journal
        begins again with it in its header, so that a restart and a replay start from it as
        from a seeded setup."""
        log.info("the setup is the players': %s", position)
        journal = self.record.journal
        if journal is not None:
            try:
                self.record.journal = journal.with_setup(position)
                self._journal_written()  # the new file, its header
            except JournalError as error:
                log.error("%s; the game goes on, but a restart would not find its setup", error)

    def _log_refused(self, wrong: list[str]) -> None:
        """Log a board refused, with its ``wrong`` cells and why: no legal step explains it,
        or the step it shows is legal but not the one the companion announced at its seat."""
        referee, seats = self.referee, self.referee.seats
        other = seats.instead(referee) if seats is not None else None
        if seats is None or other is None:
            log.info("no legal step explains the board: %s shown as wrong", ", ".join(wrong))
            return
        state, said = referee.state, referee.rules.format_step
        log.info("the board shows %s, which differs from the companion's step %s: %s shown as "
                 "wrong", said(state, other), said(state, seats.announced(state)),
                 ", ".join(wrong))

    def _show(self, screen: Screen) -> None:
        """Show ``screen`` with what the record adds (:meth:`Record.overlay`: players must
        know that a power cut now would lose steps).  A board refused (cells shown as wrong)
        is logged once, and again when other cells become wrong, so that a daemon whose
        matrix nobody sees tells what it refuses."""
        wrong = _wrong_cells(screen)
        if wrong and wrong != _wrong_cells(self._plain_screen):
            self._log_refused(wrong)
        # Out of step (a setup not made, steps made while the companion was down): said once
        # until the board matches, not at every piece the players put right.
        restore = sorted(screen.highlights) if self.referee.syncing and screen.highlights else []
        if restore and not self._out_of_step:
            more = f" and {len(restore) - 8} more" if len(restore) > 8 else ""
            log.info("the board does not show the game as it stands: %d cells to set up or put "
                     "back (%s%s)", len(restore), ", ".join(restore[:8]), more)
        self._out_of_step = bool(restore)
        self._plain_screen = screen
        screen = self.record.overlay(screen, syncing=self.referee.syncing)
        if self.web is not None:
            screen = self.web.mark(screen)  # the control PIN, for whoever reads the matrix
        self.matrix.show(screen)
        for listener in self.screen_listeners:
            listener(screen)

    def _show_again(self) -> None:
        """Show the screen of now again (the record's part of it changed)."""
        if self._plain_screen is not None:
            self._show(self._plain_screen)

    def _journal(self, write: Callable[[GameJournal], None]) -> None:
        """Write to the journal (:meth:`Record.write`): the game goes on whatever happens."""
        whole_again = self.record.write(write)
        self._journal_written()
        if whole_again:
            self._show_again()

    def _journal_written(self) -> None:
        journal = self.record.journal
        if journal is not None and not journal.behind:
            for listener in self.journal_listeners:
                listener(journal.path)

    # ------------------------------------------------------------------ the board and systemd
    def _silent(self) -> None:
        """No heartbeat for ``heartbeat_timeout_s``: the referee shows it; a stalled board that
        recovers is asked for a fresh dump so that the referee resyncs."""
        self.health.silent()
        if self.link is not None:
            self.link.send(protocol.RequestDump())

    def _no_board(self, now: float) -> None:
        """The board did not answer within ``ready_timeout_s``: say so, and tell systemd that
        the start is over (the link keeps trying)."""
        where = f" on {self.port}" if self.port else ""
        log.warning("no board answered%s within %g s; still trying", where,
                    self.health.ready_timeout_s)
        # A port another program holds is no cable fault: keep the link's notice naming it.
        text = self.health.down_notice or f"No board{where}: check the USB cable"
        self._effect(self.referee.notice(text, now, urgent=True))
        self.health.no_board()
        self.health.ready_now(self._status_text())

    def _status_text(self) -> str:
        """One line for ``systemctl status``: the game, the step, the board, the journal."""
        referee = self.referee
        game = f"{referee.rules.name}, step {referee.steps_committed}"
        if self.outcome is not None:
            game += ", game over"
        elif referee.steps_committed or referee.have_board:
            game += f", P{referee.rules.to_move(referee.state)} to move"
        parts = [game, self.health.board.words, self.record.status(),
                 *(f"no {what} (trying again)" for what in self.retries.names())]
        return "; ".join(part for part in parts if part)

    def _report_status(self) -> None:
        self.health.report(self._status_text())

    def _status_led(self, state: StatusLight) -> None:
        if self.controls is not None:
            self.controls.status(state)

    # ------------------------------------------------------------------ parts opened later
    def open_later(self, what: str, open_part: Callable[[], None], error: BaseException) -> None:
        """Referee without ``what`` (``"display"``, ``"GPIO pins"``), which failed to open
        with ``error``: say so, and call ``open_part`` from the loop after
        :data:`RETRY_FIRST_S` seconds, then after twice as long each time it raises, up to
        :data:`RETRY_MAX_S`, until it returns (it attaches the part itself)."""
        self.retries.later(what, open_part, error)

    def open_display(self) -> None:
        """Open the matrix of ``config.display``; one that cannot be opened is tried again
        later (:meth:`open_later`) while the game goes on without it."""
        try:
            self._open_display()
        except Exception as error:  # no SPI, no framebuffer, no desktop for pygame...
            self.open_later("display", self._open_display, error)

    def _open_display(self) -> None:
        """Open the matrix of the running display settings and show the screen of the game."""
        if self.config is None:
            raise MisuseError("this service was not built from a configuration")
        self.matrix.open(self.config.display)

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
        if not display_changes(self.config, new) or self.matrix.factory is None:
            log.info("reload: the display settings are unchanged")
            if "display" in self.retries:
                self.retries.now("display")
            return
        if self.matrix.replace(self.config.display, new.display):
            self.config = self.config.replace_display(new.display)
            self.retries.drop("display")
            log.info("reload: display settings applied")

    # ------------------------------------------------------------------ the next game
    def _new_game(self, chosen: StartGame | None = None) -> None:
        """The next game at the same table: a new setup (the next seed, or the players,
        seed, options and seats ``chosen`` on the page, which the games after it keep), a new
        journal, a new referee with the same settings; the board is asked for a dump, and the
        matrix shows what to lay out until it matches."""
        if self.config is None:
            return
        rules = self.referee.rules
        if chosen is None:
            self.games += 1
            seed = self.config.game.seed + self.games if self.config.game.seed else 0
            config = replace(self.config, game=replace(self.config.game, seed=seed))
        else:
            config = replace(self.config, game=replace(
                self.config.game, players=chosen.players, seed=chosen.seed,
                options=dict(chosen.options)), players=replace(
                self.config.players, names=chosen.names or self.config.players.names,
                seats=tuple(chosen.seats)))
        directory = None if self.journal_error else Path(config.journal.directory)
        try:
            state, journal = new_game(config, rules, directory, fsync=config.journal.fsync,
                                      reserves=chosen.reserves if chosen is not None else ())
        except CompanionError as error:
            log.error("cannot start a new game: %s", error)
            return
        self.record.replace(journal)
        self._journal_written()  # its header
        if chosen is not None:  # the next games count their seeds from the chosen one
            self.config, self.games = config, 0
        self.outcome = None
        self.timers.clear()
        self.referee = make_referee(config, rules, StartingGame(state, [], journal),
                                    reserves_entered=chosen is not None and bool(chosen.reserves))
        log.info("new game (seed %d)", config.game.seed)
        self._execute(self.referee.start(self.clock()))
        if self.link is not None:
            self.link.send(protocol.RequestDump())

    # ------------------------------------------------------------------ from other threads
    def stop(self, reason: str = "") -> None:
        """Ask the loop to end (thread-safe: it goes through the queue, and safe from a
        signal handler); a GIF the matrix is writing now (a reload's, or the stop's own
        after an earlier stop) is given up, so that the stop comes at once."""
        self.matrix.abandon()
        self.events.put(Stop(self.clock(), reason))

    def close_display(self) -> None:
        """Close the matrix shown now (the one built at start, or by the last reload)."""
        self.matrix.close()

    def reload(self, path: str) -> None:
        """Ask the loop to apply the display settings of ``path`` (thread-safe, and safe from
        a signal handler: it only puts an event on the queue)."""
        self.events.put(Reload(self.clock(), path))


def build(
    config: Config,
    stack: ExitStack,
    *,
    pin_factory: PinFactory | None = None,
    device: LumaDevice | None = None,
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
    from companion.board.pins import make_pin_factory

    # SimpleQueue, not Queue: the signal handlers put Stop and Reload on it, and only
    # SimpleQueue.put is reentrant; a handler running while the loop held Queue's lock
    # waited for that lock for ever.
    events: queue.SimpleQueue[AnyEvent] = queue.SimpleQueue()
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
        # Refereeing without a record beats no referee: the matrix says games are not saved,
        # and the game in progress there, if it can be read, goes on.
        log.error("%s; games are not saved", error)
        journal_error = str(error)
        start = new_or_resumed_game(config, rules, directory, saved=False)
    if start.journal is not None:
        stack.callback(start.journal.close)
    with ExitStack() as refused:
        if start.journal is not None and not start.resumed:
            # A start refused after this leaves no journal of a game that never began.
            refused.callback(start.journal.path.unlink, missing_ok=True)
        referee = make_referee(config, rules, start)
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

        def open_gpio(factory: PinFactory, *, owned: bool) -> None:
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
            link = BoardLink(config.board.port, events, baudrate=config.board.baudrate,
                             clock=clock)
            stack.callback(link.close)
            service.link = link
            link.start()
        if config.mqtt.broker:
            _open_mqtt(service, config, stack)
        refused.pop_all()
    return service


def _make_display(settings: DisplayConfig, clock: Callable[[], float],
                  device: LumaDevice | None = None) -> Matrix:
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
                                                          service.config.players)
    view = WebView(listen, title=f"Gardens of {service.referee.rules.name.capitalize()}",
                   events=service.events, clock=service.clock, journals=journals,
                   choices=choices)
    stack.callback(view.close)
    service.web = view
    service.commit_listeners.append(view.commit)

    def publish(screen: Screen) -> None:
        referee = service.referee
        view.publish(screen, service.board, referee.steps_committed,
                     (referee.rules, referee.layout_name, tuple(referee.history), referee.state))

    service.screen_listeners.append(publish)
    log.info("live page: %s", view.address)


def _open_mqtt(service: Service, config: Config, stack: ExitStack) -> None:
    """Publish the table to the broker of ``[mqtt]``: the journal is the outbox, read again
    after every line written.  Raises :class:`ConfigError` when the mqtt extra is not
    installed or the password file cannot be read."""
    try:
        from companion.mqtt.publisher import Publisher
    except ImportError:
        from companion.mqtt import MQTT_INSTALL

        raise ConfigError(f"[mqtt] broker is set but the table cannot be published: "
                          f"paho-mqtt is not installed ({MQTT_INSTALL})") from None
    journal = service.journal
    if journal is None:
        log.error("[mqtt] the games are not saved, so nothing is published: the journal is "
                  "what the broker is sent from")
        return
    publisher = Publisher.from_config(config.mqtt, Path(config.journal.directory))
    stack.callback(publisher.close)
    service.journal_listeners.append(publisher.journal_written)
    publisher.start(journal.path)


def _open_gpio(service: Service, config: Config, factory: PinFactory, *, owned: bool,
               stack: ExitStack) -> None:
    """The buttons, buzzer and status LED, and the switch matrix if there is one, all on
    ``factory`` (closed with them when ``owned``); their ``close`` goes on ``stack``.  Raises
    :class:`ConfigError` for a pin that cannot be used, with every part made here closed."""
    from companion.daemon.controls import Controls

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
