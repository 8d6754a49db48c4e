"""The daemon: one composition root, one event queue, one referee thread.

:func:`build` makes every part from the configuration in dependency order (journal, rules and
game, display, controls, board link) and :meth:`Service.run` runs the loop: it blocks on the
queue until an event arrives or the next referee timer is due (no polling), hands the event to
the referee and carries out the effects in order: a committed step is written to the journal
(fsync'd) before the matrix shows it.  :meth:`Service.close` stops the parts in reverse order;
SIGTERM and Ctrl-C share that one shutdown path.
"""

from __future__ import annotations

import importlib
import logging
import queue
import random
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion import journal as journal_mod
from companion.config import Config
from companion.errors import CompanionError, JournalError
from companion.events import Event, Stop, Timer
from companion.referee.effects import Buzz, Committed, GameOver, Note, Send, SetTimer, Show, Undone
from companion.referee.referee import Referee, RefereeSettings
from companion.rules import load as load_rules
from companion.rules.base import GameRules

log = logging.getLogger("companion")


def layout_name(config: Config) -> str:
    """The board layout the board controller must announce for this configuration."""
    name = config.game.name
    return f"uranus-{config.game.board}" if name == "uranus" else name


def game_options(config: Config) -> dict[str, Any]:
    """The options for the rules core's ``new_game``: ``[game.options]``, plus the board for
    Gardens of Uranus (chosen per game, CLARIFICATIONS.md Uranus #7)."""
    options = dict(config.game.options)
    if config.game.name == "uranus":
        options.setdefault("board", config.game.board)
    return options


def referee_settings(config: Config) -> RefereeSettings:
    """The referee's timings (seconds) from ``[board]``."""
    board = config.board
    return RefereeSettings(
        debounce_s=board.debounce_ms / 1000,
        settle_s=board.settle_ms / 1000,
        grace_s=board.grace_ms / 1000,
        tray=board.tray,
        heartbeat_timeout_s=board.heartbeat_timeout_s,
    )


@dataclass
class Service:
    """The running daemon around one :class:`Referee`.

    ``display``, ``controls``, ``link`` and ``journal`` are optional so that tools and tests
    can run the loop with only some parts; ``screen_listeners`` are called with every screen
    shown (the live view of ``companion monitor``, tests, the demo's players reading the matrix).
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

    def __post_init__(self) -> None:
        self.timers: dict[str, float] = {}
        self.outcome: Any = None
        self.running = False
        self.last_screen: Any = None
        self.handled = 0

    # ------------------------------------------------------------------ the loop
    def run(self) -> Any:
        """Run until a :class:`Stop` event (or the end of the game with ``stop_when_over``).

        Returns the game's outcome, or ``None`` when it did not end.
        """
        self.running = True
        self._execute(self.referee.start(self.clock()))
        while self.running:
            timeout = None
            if self.timers:
                timeout = max(0.0, min(self.timers.values()) - self.clock())
            try:
                event: Event | None = self.events.get(timeout=timeout)
            except queue.Empty:
                event = None
            self._fire_timers()
            if event is None:
                continue
            if isinstance(event, Stop):
                log.info("stopping: %s", event.reason or "asked to")
                break
            self._handle(event)
        self.running = False
        return self.outcome

    def _fire_timers(self) -> None:
        now = self.clock()
        for name, at in sorted(self.timers.items(), key=lambda item: item[1]):
            if at <= now and self.timers.get(name) == at:
                del self.timers[name]
                self._handle(Timer(now, name))

    def _handle(self, event: Event) -> None:
        self.handled += 1
        try:
            effects = self.referee.handle(event)
        except Exception:  # a bug must not end the game: log it and go on with the next event
            log.exception("internal error while handling %s; the game goes on", type(event).__name__)
            return
        self._execute(effects)

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
        elif isinstance(effect, Undone):
            log.info("step %d (%s) taken back", effect.number, effect.step)
            self._journal(lambda j: j.undo(effect.number))
        elif isinstance(effect, GameOver):
            self.outcome = effect.outcome
            ranking = ", ".join(f"P{p} {text} ({points})" for p, text, points in effect.outcome.ranking)
            log.info("game over (%s): %s", effect.outcome.termination, ranking)
            self._journal(lambda j: j.finish(effect.outcome))
            if self.stop_when_over:
                self.running = False
        elif isinstance(effect, Show):
            self.last_screen = effect.screen
            if self.display is not None:
                self.display.show(effect.screen)
            for listener in self.screen_listeners:
                listener(effect.screen)
        elif isinstance(effect, Buzz):
            if self.controls is not None:
                self.controls.buzz(effect.pattern)
        elif isinstance(effect, Send):
            if self.link is not None:
                self.link.send(effect.message)
        elif isinstance(effect, Note):
            log.log(logging.getLevelName(effect.level.upper()), "%s", effect.text)

    def _journal(self, write: Callable[[journal_mod.Journal], None]) -> None:
        if self.journal is None:
            return
        try:
            write(self.journal)
        except JournalError as error:
            # The game goes on; the players are told their record is incomplete.
            log.error("%s", error)
            if self.display is not None and self.last_screen is not None:
                from dataclasses import replace

                self.display.show(replace(self.last_screen, message="Journal write failed: "
                                          "the game goes on", urgent=True))

    def stop(self, reason: str = "") -> None:
        """Ask the loop to end (thread-safe: it goes through the queue)."""
        self.events.put(Stop(self.clock(), reason))


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


def new_or_resumed_game(
    config: Config, rules: GameRules[Any, Any], directory: Path | None, *, fsync: bool = True
) -> tuple[Any, list[tuple[Any, Any]], journal_mod.Journal | None, bool]:
    """The game to referee: the latest unfinished journal in ``directory`` resumed, else a new
    game from the configuration (seed 0 draws one).

    Returns ``(state, history, journal, resumed)``.  Raises :class:`JournalError` when the
    journal cannot be created.
    """
    if directory is not None:
        path = journal_mod.latest_unfinished(directory)
        if path is not None:
            try:
                record = journal_mod.read(path)
                if record.header.get("game") == config.game.name:
                    history = [(before, step) for before, step, _ in record.replay(rules)]
                    state = rules.apply(*history[-1]) if history else rules.parse_position(record.header["setup"])
                    log.info("resuming %s after step %d", path.name, len(history))
                    return state, history, journal_mod.Journal(path, fsync=fsync), True
                log.warning("%s is a %s game; starting a new %s game", path.name,
                            record.header.get("game"), config.game.name)
            except CompanionError as error:
                log.error("cannot resume %s: %s; starting a new game", path.name, error)
    seed = config.game.seed or random.SystemRandom().randrange(1, 2**31)
    state = rules.new_game(config.game.players, seed, game_options(config))
    journal = None
    if directory is not None:
        header = {"game": config.game.name, "layout": layout_name(config), "players": config.game.players,
                  "seed": seed, "options": game_options(config),
                  "setup": rules.format_position(state)}
        journal = journal_mod.Journal.create(directory, header, fsync=fsync)
    return state, [], journal, False


def build(
    config: Config,
    stack: ExitStack,
    *,
    pin_factory: Any = None,
    device: Any = None,
    clock: Callable[[], float] = time.monotonic,
) -> Service:
    """Make every part from ``config`` (dependency order) and register their ``close`` on
    ``stack`` (reverse order on exit).  ``pin_factory``/``device`` override the configured
    GPIO pin factory and luma device (the demo and tests pass gpiozero's MockFactory and an
    emulator).

    Raises :class:`companion.errors.ConfigError` for a configuration the parts refuse and
    :class:`JournalError` when the journal cannot be written.
    """
    from companion.board.link import BoardLink
    from companion.controls import Controls
    from companion.display import Display, make_device

    events: queue.Queue[Event] = queue.Queue()
    rules = load_rules(config.game.name).RULES
    directory = Path(config.journal.directory)
    state, history, journal, resumed = new_or_resumed_game(config, rules, directory,
                                                           fsync=config.journal.fsync)
    if journal is not None:
        stack.callback(journal.close)
    referee = Referee(rules, state, layout_name(config), referee_settings(config),
                      history=history, syncing=True, extensions=game_extensions(config))

    if device is None:
        device = make_device(dict(config.display.luma))
    display = Display(device, clock=clock, frame_interval=config.display.frame_interval_ms / 1000)
    stack.callback(display.close)

    controls = Controls(events, pins=config.buttons.pins, pin_factory=pin_factory, clock=clock,
                        bounce_s=config.buttons.bounce_ms / 1000)
    stack.callback(controls.close)

    link = BoardLink(config.board.port, events, baudrate=config.board.baudrate, clock=clock)
    stack.callback(link.close)
    link.start()

    return Service(referee, events, clock=clock, display=display, controls=controls, link=link,
                   journal=journal)
