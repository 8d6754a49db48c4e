"""The game the daemon referees: the one in progress resumed from its journal, or a new one
from the configuration, and its referee, built in one place (:func:`make_referee`) for the
first game and for every next one at the same table."""

from __future__ import annotations

import importlib
import logging
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from companion import journal as journal_mod
from companion.config import Config, layout_name
from companion.errors import CompanionError, JournalDamagedError, JournalError
from companion.referee.referee import Extension, Referee, RefereeSettings
from companion.referee.seats import Seats
from companion.rules.base import Seated, SomeRules

log = logging.getLogger("companion")


def referee_settings(config: Config) -> RefereeSettings:
    """The referee's timings (seconds) from ``[board]``, and the parts fitted for the games'
    own inputs (``[board] dice``, ``cards`` and ``missions``, ``[buttons] roll``)."""
    board = config.board
    return RefereeSettings(
        debounce_s=board.debounce_ms / 1000,
        settle_s=board.settle_ms / 1000,
        grace_s=board.grace_ms / 1000,
        tray=board.tray,
        heartbeat_timeout_s=board.heartbeat_timeout_s,
        presence=board.sensing == "presence",
        dice=board.dice,
        roll_button=config.buttons.pins.roll is not None,
        cards=board.cards,
        missions=board.missions,
        dealt_by_hand=config.game.setup == "board",
    )


def game_extensions(config: Config,
                    settings: RefereeSettings | None = None) -> list[Extension]:
    """The referee extensions of the configured game (dice, cards...) for ``settings``
    (:func:`referee_settings` of ``config`` by default): a game that has inputs besides its
    cells has a module ``companion.referee.<game>`` with ``extensions(settings:
    RefereeSettings, seed: int) -> list[Extension]``.  Raises
    :class:`companion.errors.ConfigError` for a part it cannot use (a broken card
    catalogue)."""
    try:
        module = importlib.import_module(f"companion.referee.{config.game.name}")
    except ModuleNotFoundError:
        return []
    extensions: list[Extension] = module.extensions(settings or referee_settings(config),
                                                    config.game.seed)
    return extensions


def make_referee(config: Config, rules: SomeRules, start: StartingGame, *,
                 reserves_entered: bool = False) -> Referee:
    """The referee of ``start``, a game of ``rules`` at the table ``config`` describes: it
    waits for the board to match the game before it recognises a step; with ``[game] setup =
    "board"`` a game not begun takes the garden laid out by hand.  ``reserves_entered``: the
    reserves dealt by hand are known already (typed in on the live page), so none is asked
    at the table."""
    settings = referee_settings(config)
    if reserves_entered:
        settings = replace(settings, dealt_by_hand=False)
    return Referee(rules, start.state, layout_name(config), settings,
                   history=start.history, syncing=True, resumed=start.in_flight,
                   extensions=game_extensions(config, settings),
                   adopt=config.game.setup == "board" and not start.history,
                   seats=game_seats(config, start.hints, start.dealt))


def game_seats(config: Config, hints: Mapping[int, int] | None = None,
               dealt: Mapping[int, Sequence[str]] | None = None) -> Seats:
    """The seats of ``[players] seats`` (people everywhere when it is empty: they may still
    ask for hints), with the mission cards of ``[board] missions`` and the card source of
    ``[board] cards`` for a Gardens of Uranus companion, the hints already asked and the
    cards already read for the companion (a resumed game's, per player).  Raises
    :class:`ConfigError` for a broken card catalogue."""
    seats = config.players.seats or ("person",) * config.game.players
    catalogue: dict[str, str] = {}
    if config.game.name == "uranus" and any(seat != "person" for seat in seats):
        from companion.referee.uranus import load_catalogue

        catalogue = load_catalogue(config.board.missions)
    return Seats(seats, seed=config.game.seed, catalogue=catalogue,
                 reader=config.board.cards == "reader",
                 dealt={p: list(ids) for p, ids in (dealt or {}).items()},
                 hints=dict(hints or {}))


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

    state: Seated
    history: list[tuple[Seated, Hashable]]
    journal: journal_mod.Journal | None
    resumed: bool = False
    in_flight: bool = False
    note: str = ""
    hints: dict[int, int] = field(default_factory=dict)
    dealt: dict[int, list[str]] = field(default_factory=dict)


def new_or_resumed_game(
    config: Config, rules: SomeRules, directory: Path | None, *, fsync: bool = True,
    saved: bool = True,
) -> StartingGame:
    """The game to referee: the game in progress in ``directory``
    (:func:`companion.journal.latest_unfinished`) resumed, up to its last good line, else a
    new game from the configuration (seed 0 draws one).

    A damaged journal is kept beside the resumed one as ``<name>.damaged``; one whose header
    is damaged is renamed so and a new game starts; so does one of the game in progress that
    cannot be read (missing, never written).  Each is logged once and told on the matrix
    (``note``).  ``saved=False`` (a folder that cannot be written: a
    read-only file system) only reads it: the game in progress goes on without a journal,
    nothing in the folder repaired or renamed.  Raises :class:`JournalError` when the
    journal cannot be repaired or created.
    """
    note = ""
    if directory is not None:
        path = journal_mod.latest_unfinished(directory)
        if path is not None:
            resumed = _resume(config, rules, path, fsync=fsync, saved=saved)
            if isinstance(resumed, StartingGame):
                return resumed
            note = resumed
    state, journal = new_game(config, rules, directory if saved else None, fsync=fsync)
    return StartingGame(state, [], journal, note=note)


def _resume(config: Config, rules: SomeRules, path: Path, *,
            fsync: bool, saved: bool) -> StartingGame | str:
    """The game of the journal at ``path`` (with its journal when ``saved``), or the note for
    the new game that replaces it."""
    try:
        record = journal_mod.read(path)
    except JournalDamagedError as error:
        aside = f"kept as {journal_mod.set_aside(path).name}" if saved else "left as it is"
        log.warning("journal %s is damaged at line %d (%s); %s; a new game starts",
                    path.name, error.line, error.reason, aside)
        return f"Journal damaged at line {error.line}: a new game starts"
    except JournalError as error:  # the game in progress lost: said on the matrix too
        log.error("cannot resume %s: %s; starting a new game", path.name, error)
        try:
            state = "empty" if path.stat().st_size == 0 else "unreadable"
        except OSError:
            state = "missing"
        return f"Journal of the last game {state}: a new game starts"
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
    kept = journal_mod.cut_to_good(record, fsync=fsync) if saved else None
    state = rules.apply(*history[-1]) if history else rules.parse_position(record.setup)
    damage, note = record.damage, ""
    if damage is not None:
        aside = f"kept as {kept.name}" if kept is not None else "left as it is"
        log.warning("journal %s is damaged at line %d (%s); the game resumes after step %d; "
                    "the damaged file is %s", path.name, damage.line, damage.reason,
                    len(history), aside)
        note = f"Journal damaged at line {damage.line}: the game resumes after step {len(history)}"
    else:
        if record.dropped_torn_line:
            log.warning("%s: the last line was cut off (power loss?) and is dropped", path.name)
        log.info("resuming %s after step %d%s", path.name, len(history),
                 "" if saved else ", its next steps not saved")
    journal = journal_mod.Journal.continuing(record, fsync=fsync) if saved else None
    return StartingGame(state, history, journal,
                        resumed=True, in_flight=not record.ends_with_undo, note=note,
                        hints=record.hints, dealt=record.dealt)


def new_game(
    config: Config, rules: SomeRules, directory: Path | None, *, fsync: bool = True,
    reserves: Sequence[Mapping[str, int]] = (),
) -> tuple[Seated, journal_mod.Journal | None]:
    """A new game from the configuration (seed 0 draws one), with ``reserves`` as dealt by
    hand (each player's ``{colour: count}``) when given, and its journal in ``directory``.
    Raises :class:`JournalError` when the journal cannot be created and
    :class:`companion.errors.InvalidPositionError` for reserves that do not add up."""
    seed = config.game.seed or random.SystemRandom().randrange(1, 2**31)
    state = rules.new_game(config.game.players, seed, config.game.rules_options())
    if reserves:
        state = rules.deal_reserves(state, reserves)
    journal = None
    if directory is not None:
        header = journal_mod.Header(
            game=config.game.name, layout=layout_name(config), players=config.game.players,
            seed=seed, options=config.game.rules_options(), setup=rules.format_position(state))
        if config.players.seats:
            header["seats"] = list(config.players.seats)
        names = config.players.seat_names(config.game.players)
        if any(names):  # who sat where, for the scoreboard's standings
            header["names"] = names
        journal = journal_mod.Journal.create(directory, header, fsync=fsync)
    return state, journal
