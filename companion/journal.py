"""The game journal: an append-only record of a game that survives a power cut.

One file per game, JSON Lines, in the journal directory (systemd's ``StateDirectory``):

- line 1, the header: ``{"journal": 2, "game": "enceladus", "layout": "enceladus",
  "players": 2, "seed": 7, "options": {...}, "setup": "<position notation>",
  "started": "2026-11-29T16:40:00+00:00", "seq": 1, "crc": "5d0f3a21"}``;
- one line per committed step: ``{"n": 3, "player": 1, "step": "f5/f6", ...}`` (the step in
  its game's notation, chance outcomes included);
- ``{"undo": 3, ...}`` when step 3 is taken back (a step corrected by hand, its piece moved
  on before anything else happened, is step 3 taken back and the corrected step 3 made,
  both lines in one write: a kill between them cannot leave the step taken back alone);
- ``{"hint": 2, "n": 5, ...}`` when player 2 asked for a hint before step 5
  (:mod:`companion.referee.seats`); hints are counted, never replayed;
- ``{"dealt": 2, "card": "U07", ...}`` when the Gardens of Uranus card U07 was read face down
  for the companion at seat 2 (its hand, for a restart; never replayed);
- ``{"over": {"winners": [1], "termination": "...", "ranking": [[1, "3-4-5-5-6", 1], ...]}}``.

Every line carries ``seq``, its place in the file (the header is 1), and ``crc``, the CRC-32
(8 hex digits) of the line's canonical JSON without ``crc`` (keys sorted, no spaces), chained:
the computation starts from the previous line's CRC (0 for the header).  A changed line fails
its own check; a line deleted, repeated or moved is out of sequence.  A step is also checked
against the rules when the game is resumed or replayed (:meth:`GameRecord.checked`).

Every line is written, flushed and ``fsync``'d before the caller goes on (the referee's commit is
shown on the matrix only after that).  A line that cannot be written (a full SD card) stays
queued in the open :class:`Journal` and is written, in order, before the next one: the file
never holds a later step without the earlier ones, and nothing is lost once there is room.

Reading (:func:`read`) never changes a file.  A torn last line (the power went mid-write) is
left out; the first damaged line ends what is read, and the record says where and why
(:class:`Damage`), so a game resumes after its last good line: :func:`cut_to_good` keeps a
damaged file whole beside the journal as ``<name>.damaged`` and cuts the journal back to its
good lines.  A damaged header cannot be resumed (:class:`JournalDamagedError`); a journal from
a newer companion is refused with a clear message.  Finished games are kept.

The game in progress is named in the folder's pointer file ``.current`` (one line: the
journal's file name; empty once the game has ended), so a start reads that one journal
whatever the number of finished games beside it (:func:`latest_unfinished`).  The pointer is
replaced whole (a temporary file, ``fsync``, rename, the folder ``fsync``'d) after the
journal's header is durable, and emptied after its end line is; a power cut leaves the old
pointer or the new, and between a durable header and its pointer the game has no step to lose.
A pointer that cannot be written (a full card) is removed instead, which needs no space.  A
folder without a pointer (written by an older companion, or so) is scanned once, and the
pointer written.

Journals of version 1 (no ``seq``/``crc``) are still read, replayed and resumed; a resumed one
goes on in version 1, so that a file keeps one format.  In them only what the lines show is
found: a line that is no journal entry, a step out of order, a step the rules refuse.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import zlib
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import NotRequired, TypeAlias, TypedDict, cast

from companion.errors import (
    CompanionError,
    JournalBusyError,
    JournalDamagedError,
    JournalError,
    UnreadableJournalError,
)
from companion.files import reason_of, special_kind
from companion.rules.base import Outcome, Seated, SomeRules

VERSION = 2
"""The journal format version this companion writes and the newest it reads."""

CHECKED = 2
"""The first format version whose lines carry ``seq`` and ``crc``."""

log = logging.getLogger("companion.journal")

POINTER = ".current"
"""The file in a journal folder that names the journal of the game in progress."""

_OWN_KEYS = frozenset({"journal", "started", "seq", "crc"})
"""Keys of a header line that the journal adds, not the game."""

Entry: TypeAlias = dict[str, object]
"""One line of a journal as read back, a JSON object without ``seq`` and ``crc``.  The
header's keys are the game's, each checked by whoever reads it (:attr:`GameRecord.setup`);
:func:`read` checks the keys of every other line, which :class:`GameRecord` then gives as
:class:`Step` and :class:`Over`."""


class Header(TypedDict):
    """A new game's header as the daemon writes it (:meth:`Journal.create` adds ``journal``
    and ``started``): the ``game`` and its board ``layout``, the ``players``, the ``seats``
    when not all are people, the ``seed``, the rules ``options``, the ``setup`` in position
    notation and the seats' ``names`` when any is named."""

    game: str
    layout: str
    players: int
    seats: NotRequired[list[str]]
    seed: int
    options: Mapping[str, object]
    setup: str
    names: NotRequired[list[str]]


class Step(TypedDict):
    """A committed step: its number ``n`` (from 1), the ``player`` who made it and the
    ``step`` in its game's notation, chance outcomes included."""

    n: int
    player: int
    step: str


class Over(TypedDict):
    """The end of a game (:class:`companion.rules.base.Outcome`): the ``winners``, the
    ``termination`` and the ``ranking``, best first, as ``[player, result, rank points]``."""

    winners: list[int]
    termination: str
    ranking: list[list[int | str]]


def _canonical(entry: Mapping[str, object]) -> bytes:
    return json.dumps(entry, separators=(",", ":"), sort_keys=True).encode()


def _crc(entry: Mapping[str, object], previous: int) -> int:
    """The chained check of ``entry`` (without its ``crc`` key) after a line checked
    ``previous``."""
    return zlib.crc32(_canonical(entry), previous)


@dataclass(frozen=True, slots=True)
class Damage:
    """Where a journal stops being readable: ``line`` (1 is the header) and ``reason``, a few
    words (``"checksum"``, ``"out of sequence"``, ``"not a journal entry"``,
    ``"illegal step 'f5/f6'"``)."""

    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class Line:
    """One good line of a journal: its ``number`` in the file, the byte offset of its ``end``
    (after the newline), its chained ``crc`` (0 in version 1) and its ``entry`` (without
    ``seq`` and ``crc``)."""

    number: int
    end: int
    crc: int
    entry: Entry


@dataclass
class GameRecord:
    """A journal read back: its good lines (the header first), where it is damaged if it is,
    and whether a torn last line was left out.

    ``steps`` are the step entries still in force (undos applied), ``over`` the end.
    """

    path: Path
    lines: list[Line]
    damage: Damage | None = None
    dropped_torn_line: bool = False

    @property
    def header(self) -> Entry:
        return self.lines[0].entry

    @property
    def version(self) -> int:
        return cast(int, self.header["journal"])  # checked by read

    @property
    def setup(self) -> str:
        """The header's setup, in position notation.  Raises ``KeyError`` when it has none
        and :class:`JournalError` when it is not text."""
        setup = self.header["setup"]
        if not isinstance(setup, str):
            raise JournalError("it is not text")
        return setup

    @property
    def steps(self) -> list[Step]:
        return [cast(Step, line.entry) for line in self._in_force()]  # checked by read

    @property
    def over(self) -> Over | None:
        """The end of the game, or ``None`` while it goes on: an end line followed by an
        undo (the step that ended the game taken back) is no end any more."""
        over: Over | None = None
        for line in self.lines[1:]:
            if "over" in line.entry:
                over = cast(Over, line.entry["over"])  # checked by read
            elif "step" in line.entry or "undo" in line.entry:
                over = None
        return over

    @property
    def hints(self) -> dict[int, int]:
        """Hints asked, per player (those asked before a step taken back count too)."""
        counts: dict[int, int] = {}
        for line in self.lines[1:]:
            player = line.entry.get("hint")
            if isinstance(player, int):
                counts[player] = counts.get(player, 0) + 1
        return counts

    @property
    def dealt(self) -> dict[int, list[str]]:
        """The card ids read for the companion, per seat, in order."""
        cards: dict[int, list[str]] = {}
        for line in self.lines[1:]:
            player = line.entry.get("dealt")
            if isinstance(player, int):
                cards.setdefault(player, []).append(cast(str, line.entry["card"]))
        return cards

    @property
    def ends_with_undo(self) -> bool:
        """Whether the last good line takes a step back (the board may still show it)."""
        return "undo" in self.lines[-1].entry

    def _in_force(self) -> list[Line]:
        steps: list[Line] = []
        for line in self.lines[1:]:
            if "step" in line.entry:
                steps.append(line)
            elif "undo" in line.entry:
                steps.pop()
        return steps

    def cut(self, number: int, reason: str) -> GameRecord:
        """This record without line ``number`` and the ones after it, damaged there."""
        return replace(self, lines=[line for line in self.lines if line.number < number],
                       damage=Damage(number, reason))

    def checked(self, rules: SomeRules) -> GameRecord:
        """This record cut before its first line that ``rules`` cannot play (a line changed
        into another legal-looking one in a journal without checks, or a journal of another
        rules version): a step they refuse, or an end line where the game, as its steps
        leave it, has not ended.  Raises :class:`JournalError` when the header's setup cannot
        be read, or its players, seed (a whole number, 0 or more) and options (the game's
        own, of the right types) are not a game the rules could have dealt."""
        self._check_header(rules)
        try:
            states = [rules.parse_position(self.setup)]
        except (CompanionError, KeyError) as error:
            raise JournalError(f"{self.path}: the setup cannot be read: {error}") from error
        for line in self.lines[1:]:
            if "step" in line.entry:
                text = cast(Step, line.entry)["step"]  # checked by read
                try:
                    states.append(rules.apply(states[-1], rules.parse_step(states[-1], text)))
                except CompanionError:
                    return self.cut(line.number, f"illegal step {text!r}")
            elif "undo" in line.entry:
                states.pop()  # read checked that it takes back a step in force
            elif "over" in line.entry and rules.outcome(states[-1]) is None:
                return self.cut(line.number, "game over before the game has ended")
        return self

    def _check_header(self, rules: SomeRules) -> None:
        header, name = self.header, self.path
        players, seed = header.get("players", 2), header.get("seed", 0)
        options = header.get("options", {})
        if not _whole(seed) or cast(int, seed) < 0:
            raise JournalError(f"{name}: the header's seed {seed!r} is not a whole number, 0 "
                               "or more")
        if not _whole(players) or not isinstance(options, dict):
            raise JournalError(f"{name}: the header's players {players!r} and options "
                               f"{options!r} are not a number and a table")
        try:
            rules.new_game(cast(int, players), cast(int, seed), options)
        except CompanionError as error:
            raise JournalError(f"{name}: the header's players and options are not a game's: "
                               f"{error}") from error

    def replay(self, rules: SomeRules) -> Iterator[tuple[Seated, Hashable, Seated]]:
        """``(state_before, step, state_after)`` for every step, from the recorded setup.

        Raises :class:`JournalError` when a recorded step is not legal (see :meth:`checked`)
        or cannot be read.
        """
        state = rules.parse_position(self.setup)
        for entry in self.steps:
            try:
                step = rules.parse_step(state, entry["step"])
                after = rules.apply(state, step)
            except CompanionError as error:
                raise JournalError(
                    f"{self.path}: step {entry.get('n')} ({entry.get('step')!r}) cannot be "
                    f"replayed: {error}"
                ) from error
            yield state, step, after
            state = after


class Journal:
    """An open journal file, appended to with ``fsync`` after every line.

    ``version`` is the format its lines are written in; ``lines`` and ``crc`` say where the
    file stands (its good lines and the last one's check), for a journal that goes on
    (:meth:`continuing`).  ``fsync=False`` is for tests and benchmarks only.  Write errors (a
    full SD card) raise :class:`JournalError` with the reason; the file is left as it was
    before the failed line, which stays queued (:attr:`behind`) and is written first by the
    next :meth:`append` or :meth:`flush`.
    """

    def __init__(self, path: Path, *, fsync: bool = True, version: int = VERSION, lines: int = 0,
                 crc: int = 0) -> None:
        self.path = path
        self.fsync = fsync
        self.version = version
        self._seq = lines
        self._crc = crc
        try:
            # A raw descriptor: no buffer that could hold half a line after a failed write.
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as error:
            raise JournalError(
                f"cannot open the game journal {path}: {reason_of(error)}") from error
        self._backlog: list[bytes] = []
        self._pointer: str | None = None  # what the folder's pointer is yet to say
        self._ended = False  # an end line written, no undo since
        self._pointer_failed = False  # said once until it is written
        self.header: Mapping[str, object] = {}
        """The game's header as given to :meth:`create` (or read back by :meth:`continuing`),
        without the lines' own keys."""

    @classmethod
    def continuing(cls, record: GameRecord, *, fsync: bool = True) -> Journal:
        """The journal of ``record`` opened to go on after its last good line, in its own
        format (cut the file to those lines first: :func:`cut_to_good`).  Raises
        :class:`JournalError` if the file cannot be opened."""
        last = record.lines[-1]
        journal = cls(record.path, fsync=fsync, version=record.version,
                      lines=len(record.lines), crc=last.crc)
        journal.header = {key: value for key, value in record.header.items()
                          if key not in _OWN_KEYS}
        journal._ended = record.over is not None
        return journal

    @classmethod
    def create(cls, directory: Path, header: Mapping[str, object], *,
               fsync: bool = True) -> Journal:
        """Start a new game's journal in ``directory`` with ``header`` (``journal``,
        ``started`` are added).  Raises :class:`JournalError` if the file cannot be created;
        a header that cannot be written yet (a full card) stays queued, with a warning, so the
        game can start all the same (:attr:`behind` tells)."""
        make_folder(directory)
        started = datetime.now(UTC).replace(microsecond=0)
        name = f"{started:%Y%m%d-%H%M%S}-{header.get('game', 'game')}.jsonl"
        path = directory / name
        counter = 1
        while path.exists():
            counter += 1
            path = directory / f"{name.removesuffix('.jsonl')}-{counter}.jsonl"
        journal = cls(path, fsync=fsync)
        journal.header = dict(header)
        journal._pointer = path.name
        try:
            journal.append({"journal": VERSION, **header, "started": started.isoformat()})
        except JournalError as error:
            log.warning("%s; it will be written with the first step", error)
        return journal

    @property
    def behind(self) -> int:
        """Lines accepted but not yet durable (their writes failed); 0 when the file is whole."""
        return sum(chunk.count(b"\n") for chunk in self._backlog)

    def append(self, *entries: Mapping[str, object]) -> None:
        """Write ``entries``, one line each, and make them durable in one write, after any
        line still queued from a failed write.

        Then the folder's pointer is brought up to date: it names a new journal once its
        header is durable, is emptied once a line ending the game (``over``) is, and names
        the journal again once an undo takes back the step that ended it; a pointer that
        cannot be written is logged, removed (a restart then looks through the
        folder for the game) and tried again after the next line.

        Raises :class:`JournalError` when a write fails; those lines and the ones after them
        stay queued, in order.
        """
        lines = b""
        for entry in entries:
            if self.version >= CHECKED:
                self._seq += 1
                numbered: Entry = {**entry, "seq": self._seq}
                self._crc = _crc(numbered, self._crc)
                numbered["crc"] = f"{self._crc:08x}"
                entry = numbered
            lines += _canonical(entry) + b"\n"
        self._backlog.append(lines)
        self.flush()
        if any("over" in entry for entry in entries):
            self._pointer, self._ended = "", True
        elif self._ended and any("undo" in entry for entry in entries):
            # the step that ended the game taken back: the game is in progress again
            self._pointer, self._ended = self.path.name, False
        if self._pointer is not None:
            try:
                point_to(self.path.parent, self._pointer, fsync=self.fsync)
            except OSError as error:
                # A stale pointer would make a restart begin a new game (or resume an ended
                # one); without a pointer a restart looks through the folder instead, and
                # removing a file needs no free space.
                removed = _remove_pointer(self.path.parent, fsync=self.fsync)
                if not self._pointer_failed:
                    log.warning("the journal folder's pointer %s could not be written (%s); %s",
                                POINTER, reason_of(error),
                                "it is removed: a restart looks through the folder for the "
                                "game" if removed else "a restart now would not find the game")
                self._pointer_failed = True
            else:
                if self._pointer_failed:
                    log.info("the journal folder's pointer %s is written", POINTER)
                self._pointer, self._pointer_failed = None, False

    def flush(self) -> None:
        """Write the queued lines, oldest first.  Raises :class:`JournalError` at the first
        that fails (it and the later ones stay queued)."""
        while self._backlog:
            self._write(self._backlog[0])
            del self._backlog[0]

    def _write(self, line: bytes) -> None:
        try:
            position = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                written = os.write(self._fd, line)
                if written != len(line):
                    raise OSError(28, "the line was only partly written")
                if self.fsync:
                    os.fsync(self._fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, position)  # never leave half a line behind
                raise
        except OSError as error:
            raise JournalError(
                f"the game journal {self.path.name} could not be written: {reason_of(error)}"
            ) from error

    def step(self, number: int, player: int, step: str) -> None:
        self.append(Step(n=number, player=player, step=step))

    def undo(self, number: int) -> None:
        self.append({"undo": number})

    def correct(self, number: int, player: int, step: str) -> None:
        """Step ``number`` taken back and ``step`` made in its place by ``player``, both lines
        durable together or neither."""
        self.append({"undo": number}, Step(n=number, player=player, step=step))

    def hint(self, number: int, player: int) -> None:
        """Player ``player`` asked for a hint before step ``number``."""
        self.append({"hint": player, "n": number})

    def dealt(self, player: int, card: str) -> None:
        """The card ``card`` was read face down for the companion at seat ``player``."""
        self.append({"dealt": player, "card": card})

    def finish(self, outcome: Outcome) -> None:
        over = Over(winners=list(outcome.winners), termination=outcome.termination,
                    ranking=[list(r) for r in outcome.ranking])
        self.append({"over": over})

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def with_setup(self, setup: str) -> Journal:
        """The journal of this game begun again with ``setup`` (position notation) as its
        setup, before the first step: the garden laid out or the reserves dealt by hand.  The
        new file's header is written and the folder's pointer moved to it before this file,
        which holds only the old header, is removed, so a power cut leaves one or the other
        as the game in progress.  Raises :class:`JournalError` when the new file cannot be
        created (this one is kept, still open)."""
        journal = Journal.create(self.path.parent, {**self.header, "setup": setup},
                                 fsync=self.fsync)
        self.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        return journal


def make_folder(directory: Path) -> None:
    """Create the journal folder (and its parents) if needed.  Raises :class:`JournalError`
    naming the problem (a file in the way, no permission, a read-only card)."""
    if directory.exists() and not directory.is_dir():
        raise JournalError(f"the journal folder {directory} is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise JournalError(
            f"cannot create the journal folder {directory}: {reason_of(error)}"
        ) from error


class FolderLock:
    """An exclusive lock on a journal folder, held while a companion referees with it, so that
    two daemons never append to one game (``flock`` on ``.lock``; released on close or when
    the process dies, even by ``kill -9``).

    Raises :class:`JournalBusyError` when another process holds it and :class:`JournalError`
    when the folder cannot be written.
    """

    def __init__(self, directory: Path) -> None:
        make_folder(directory)
        try:
            self._fd = os.open(directory / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise JournalError(
                f"cannot write in the journal folder {directory}: {reason_of(error)}"
            ) from error
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise JournalBusyError(
                f"another companion is already refereeing with the journal folder {directory}; "
                "stop it first"
            ) from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def read(path: Path) -> GameRecord:
    """Read a journal without changing it: its good lines up to the first damaged one.

    A torn last line (no newline after it) is left out (``dropped_torn_line``): a write cut
    short keeps the start of its line, so a line with its newline was written whole.  A line
    that is not a journal entry (junk at the end too), fails its check, is out of sequence (a
    line deleted, repeated or moved; in version 1, a step number out of order) or takes back
    a step that is not the last ends the good lines (``damage``).

    Raises :class:`JournalDamagedError` when the header itself is damaged (or the file is not
    a journal at all) and :class:`JournalError` for a missing or empty file or a journal of a
    newer version (:class:`UnreadableJournalError` for one that cannot be read, a named pipe
    or a device included: its open could wait for ever).
    """
    try:
        special = special_kind(os.stat(path).st_mode)  # before opening: a pipe's open waits
        data = b"" if special else path.read_bytes()
    except OSError as error:
        raise UnreadableJournalError(
            f"cannot read the journal {path}: {reason_of(error)}") from error
    if special:
        raise UnreadableJournalError(f"cannot read the journal {path}: it is {special}, not a "
                                     "file")
    if not data.strip():
        raise JournalError(f"{path} is empty: no game header")
    raws = data.split(b"\n")
    lines: list[Line] = []
    in_force: list[int] = []  # the step numbers in force, to check each next one
    damage: Damage | None = None
    torn = False
    version = VERSION
    offset = 0
    for index, raw in enumerate(raws):
        number, end = index + 1, offset + len(raw) + 1
        offset = end
        if not raw.strip():
            continue
        entry = _parse(raw) if index < len(raws) - 1 else None  # a whole line ends with \n
        if entry is None and index == len(raws) - 1:
            torn = True
            if not lines:
                raise JournalDamagedError(f"{path} is not a game journal: its first line "
                                          "is not a journal header", number, "cut off")
            break
        if not lines:
            version = _header_version(path, entry, number)
        reason = "not a journal entry"
        if entry is not None:
            reason, crc = _verify(entry, version, len(lines) + 1, lines[-1].crc if lines else 0)
            if not reason and lines:
                reason = _follows(entry, in_force, lines[0].entry.get("players"))
            if not reason:
                lines.append(Line(number, end, crc, entry))
                continue
        if not lines:
            raise JournalDamagedError(f"{path} is damaged at line {number} ({reason})",
                                      number, reason)
        damage = Damage(number, reason)
        break
    return GameRecord(path, lines, damage=damage, dropped_torn_line=torn)


def _parse(raw: bytes) -> Entry | None:
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):  # nested too deep to read: no entry either
        return None
    return entry if isinstance(entry, dict) else None


def _header_version(path: Path, entry: Entry | None, number: int) -> int:
    """The format version of a journal whose first line, line ``number``, is ``entry``.
    Raises :class:`JournalDamagedError` for no header and :class:`JournalError` for a newer
    one."""
    version = entry.get("journal") if entry is not None else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise JournalDamagedError(f"{path} is not a game journal: its first line is not a "
                                  "journal header", number, "not a journal header")
    if version > VERSION:
        raise JournalError(
            f"{path} was written by a newer companion (journal version "
            f"{version}; this one reads up to {VERSION}); update the companion"
        )
    return version


def _verify(entry: Entry, version: int, seq: int,
            previous: int) -> tuple[str, int]:
    """``(reason, crc)``: why the line holding ``entry`` is damaged (``""`` when it is not)
    and its chained check.  ``seq`` is its place, ``previous`` the last good line's check;
    ``seq`` and ``crc`` are taken out of ``entry``."""
    if version < CHECKED:
        return "", 0
    written, place = entry.pop("crc", None), entry.get("seq")
    if not isinstance(written, str) or not isinstance(place, int):
        return "no checksum", 0
    if place != seq:
        return "out of sequence", 0
    crc = _crc(entry, previous)
    del entry["seq"]
    return ("" if written == f"{crc:08x}" else "checksum"), crc


def _follows(entry: Entry, in_force: list[int], players: object) -> str:
    """Why ``entry`` cannot come after the steps ``in_force`` (``""`` when it can), in a
    game of ``players`` (the header's; a player an entry names is one of them); a step or
    an undo updates ``in_force``."""
    for key in ("player", "hint", "dealt"):
        player = entry.get(key)
        if isinstance(player, int) and isinstance(players, int) and not 1 <= player <= players:
            return f"no player {player} in a game of {players}"
    if "step" in entry:
        number = entry.get("n")
        if not (isinstance(entry["step"], str) and isinstance(number, int)
                and isinstance(entry.get("player"), int)):
            return "not a journal entry"
        if number != len(in_force) + 1:
            return "out of sequence"
        in_force.append(number)
    elif "undo" in entry:
        if not in_force or entry["undo"] != in_force[-1]:
            return "out of sequence"
        in_force.pop()
    elif "hint" in entry:
        if not (isinstance(entry["hint"], int) and isinstance(entry.get("n"), int)):
            return "not a journal entry"
    elif "dealt" in entry:
        if not (isinstance(entry["dealt"], int) and isinstance(entry.get("card"), str)):
            return "not a journal entry"
    elif not _is_over(entry.get("over")):
        return "not a journal entry"
    return ""


def _whole(value: object) -> bool:
    """Whether ``value`` is a whole number (JSON's ``true`` is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_over(over: object) -> bool:
    """Whether ``over`` has the shape of :class:`Over`."""
    if not isinstance(over, dict):
        return False
    winners, ranking = over.get("winners"), over.get("ranking")
    return (isinstance(winners, list) and all(isinstance(p, int) for p in winners)
            and isinstance(over.get("termination"), str) and isinstance(ranking, list)
            and all(isinstance(r, list) and len(r) == 3 for r in ranking))


def cut_to_good(record: GameRecord, *, fsync: bool = True) -> Path | None:
    """Make ``record``'s file hold only its good lines, so that the game goes on after them.

    A damaged journal is first kept whole beside it as ``<name>.damaged`` (``-2``, ``-3``...
    when that name is taken), whose path is returned; a torn last line is only cut off
    (``None`` is returned).  Raises :class:`JournalError` when the folder cannot be written.
    """
    path = record.path
    kept = None
    if record.damage is None and not record.dropped_torn_line:
        return None
    try:
        if record.damage is not None:
            kept = _keep(path, path.read_bytes(), fsync=fsync)
        with open(path, "r+b") as file:
            file.truncate(record.lines[-1].end)
            if fsync:
                os.fsync(file.fileno())
    except OSError as error:
        raise JournalError(f"cannot repair the journal {path.name}: {reason_of(error)}") from error
    return kept


def set_aside(path: Path) -> Path:
    """Rename a journal that cannot be resumed to ``<name>.damaged`` (the first free one) and
    return the new path.  Raises :class:`JournalError` when it cannot be renamed."""
    target = _free(path)
    try:
        os.rename(path, target)
    except OSError as error:
        raise JournalError(
            f"cannot set aside the journal {path.name}: {reason_of(error)}") from error
    return target


def _free(path: Path) -> Path:
    target = path.with_name(f"{path.name}.damaged")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.name}.damaged-{counter}")
    return target


def _keep(path: Path, data: bytes, *, fsync: bool) -> Path:
    """Write ``data`` to the first free ``<name>.damaged`` beside ``path``, whole or not at
    all (a temporary file renamed into place)."""
    target = _free(path)
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as file:
        file.write(data)
        if fsync:
            os.fsync(file.fileno())
    os.rename(partial, target)
    return target


def point_to(directory: Path, name: str, *, fsync: bool = True) -> None:
    """Make the pointer of ``directory`` name the journal ``name`` of the game in progress
    (``""``: none), replacing it whole.  Raises ``OSError`` when it cannot be written (the
    pointer as it was, nothing of the new one left)."""
    partial = directory / f"{POINTER}.partial"
    try:
        with open(partial, "w", encoding="utf-8") as file:
            file.write(f"{name}\n")
            if fsync:
                file.flush()
                os.fsync(file.fileno())
        os.replace(partial, directory / POINTER)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    if fsync:
        _sync_folder(directory)


def _remove_pointer(directory: Path, *, fsync: bool) -> bool:
    """Remove the pointer of ``directory`` (durably when ``fsync``); whether it is gone."""
    try:
        (directory / POINTER).unlink(missing_ok=True)
        if fsync:
            _sync_folder(directory)
    except OSError:
        return False
    return True


def _sync_folder(directory: Path) -> None:
    folder = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def latest_unfinished(directory: Path) -> Path | None:
    """The journal of the game in progress in ``directory``, if its game has not ended (as far
    as it can be read); a journal with a damaged header counts (the caller sets it aside).

    It is the one the folder's pointer names (:data:`POINTER`): a start reads that pointer and
    that journal, however many finished games the folder holds.  A pointer that names nothing
    (one line, empty) or a journal whose game has ended gives ``None``; a journal it names
    that cannot be read (no longer there, empty, of a newer version) is returned all the
    same, for the caller to say that the game in progress is lost.  Only a folder with no
    pointer, an empty pointer file (never written: the companion writes a line) or one that
    names no journal file (a companion older than the pointer wrote it) is scanned for its
    newest unfinished journal, and the pointer is written; journals that cannot be read
    there (a newer version, an empty file) are skipped with a warning.
    """
    if not directory.is_dir():
        return None
    try:
        text: str | None = (directory / POINTER).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    name = text.strip() if text else None
    if name is not None and (name == "" or _journal_name(name)):
        return _in_progress(directory / name) if name else None
    found = _scan(directory)
    try:
        point_to(directory, found.name if found else "")
    except OSError as error:
        log.warning("the journal folder's pointer %s could not be written (%s)", POINTER,
                    reason_of(error))
    return found


def _journal_name(name: str) -> bool:
    return name.endswith(".jsonl") and "/" not in name and name not in (".jsonl", "..")


def _in_progress(path: Path) -> Path | None:
    """``path``, the journal the pointer names, unless it is read and its game has ended."""
    try:
        return path if read(path).over is None else None
    except JournalError:
        return path


def _unfinished(path: Path) -> Path | None:
    """``path`` if it is a journal whose game has not ended, or whose header is damaged."""
    try:
        if read(path).over is None:
            return path
    except JournalDamagedError:
        return path
    except JournalError as error:
        if path.exists():  # a journal removed by hand is simply no game in progress
            log.warning("%s", error)
    return None


def _scan(directory: Path) -> Path | None:
    """The newest journal in ``directory`` whose game has not ended."""
    for path in sorted(directory.glob("*.jsonl"), reverse=True):
        if _unfinished(path) is not None:
            return path
    return None
