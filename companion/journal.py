"""The game journal: an append-only record of a game that survives a power cut.

One file per game, JSON Lines, in the journal directory (systemd's ``StateDirectory``):

- line 1, the header: ``{"journal": 1, "game": "enceladus", "layout": "enceladus",
  "players": 2, "seed": 7, "options": {...}, "setup": "<position notation>",
  "started": "2026-11-29T16:40:00+00:00"}``;
- one line per committed step: ``{"n": 3, "player": 1, "step": "f5/f6"}`` (the step in its
  game's notation, chance outcomes included);
- ``{"undo": 3}`` when step 3 is taken back;
- ``{"over": {"winners": [1], "termination": "...", "ranking": [[1, "3-4-5-5-6", 1], ...]}}``.

Every line is written, flushed and ``fsync``'d before the caller goes on (the referee's commit is
shown on the matrix only after that).  A line that cannot be written (a full SD card) stays
queued in the open :class:`Journal` and is written, in order, before the next one: the file
never holds a later step without the earlier ones, and nothing is lost once there is room.
A torn last line (the power went mid-write) is dropped with a warning on load and cut off the
file, never a crash; a journal from a newer version is refused with a clear message.  Finished
games are kept.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from companion.errors import (
    CompanionError,
    JournalBusyError,
    JournalError,
    UnreadableJournalError,
)
from companion.rules.base import GameRules

VERSION = 1
"""The journal format version this companion writes and the newest it reads."""

log = logging.getLogger("companion.journal")


@dataclass
class GameRecord:
    """A journal read back: the header, the steps still in force (undos applied) and the end."""

    path: Path
    header: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    over: dict[str, Any] | None = None
    dropped_torn_line: bool = False

    def replay(self, rules: GameRules[Any, Any]) -> Iterator[tuple[Any, Any, Any]]:
        """``(state_before, step, state_after)`` for every step, from the recorded setup.

        Raises :class:`JournalError` when a recorded step is no longer legal (a journal of
        another rules version) or cannot be read.
        """
        state = rules.parse_position(self.header["setup"])
        for entry in self.steps:
            try:
                step = rules.parse_step(state, entry["step"])
                after = rules.apply(state, step)
            except CompanionError as error:
                raise JournalError(
                    f"{self.path.name}: step {entry.get('n')} ({entry.get('step')!r}) cannot be "
                    f"replayed: {error}"
                ) from error
            yield state, step, after
            state = after


class Journal:
    """An open journal file, appended to with ``fsync`` after every line.

    ``fsync=False`` is for tests and benchmarks only.  Write errors (a full SD card) raise
    :class:`JournalError` with the reason; the file is left as it was before the failed line,
    which stays queued (:attr:`behind`) and is written first by the next :meth:`append` or
    :meth:`flush`.
    """

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync
        try:
            # A raw descriptor: no buffer that could hold half a line after a failed write.
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as error:
            raise JournalError(f"cannot open the game journal {path}: {error.strerror}") from error
        self._backlog: list[bytes] = []

    @classmethod
    def create(cls, directory: Path, header: dict[str, Any], *, fsync: bool = True) -> Journal:
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
        try:
            journal.append({"journal": VERSION, **header, "started": started.isoformat()})
        except JournalError as error:
            log.warning("%s; it will be written with the first step", error)
        return journal

    @property
    def behind(self) -> int:
        """Lines accepted but not yet durable (their writes failed); 0 when the file is whole."""
        return len(self._backlog)

    def append(self, entry: dict[str, Any]) -> None:
        """Write one line and make it durable, after any line still queued from a failed write.

        Raises :class:`JournalError` when a write fails; that line and the ones after it stay
        queued, in order.
        """
        line = json.dumps(entry, separators=(",", ":"), sort_keys=True) + "\n"
        self._backlog.append(line.encode())
        self.flush()

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
                f"the game journal {self.path.name} could not be written: {error.strerror or error}"
            ) from error

    def step(self, number: int, player: int, step: str) -> None:
        self.append({"n": number, "player": player, "step": step})

    def undo(self, number: int) -> None:
        self.append({"undo": number})

    def finish(self, outcome: Any) -> None:
        self.append(
            {
                "over": {
                    "winners": list(outcome.winners),
                    "termination": outcome.termination,
                    "ranking": [list(r) for r in outcome.ranking],
                }
            }
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def make_folder(directory: Path) -> None:
    """Create the journal folder (and its parents) if needed.  Raises :class:`JournalError`
    naming the problem (a file in the way, no permission, a read-only card)."""
    if directory.exists() and not directory.is_dir():
        raise JournalError(f"the journal folder {directory} is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise JournalError(
            f"cannot create the journal folder {directory}: {error.strerror}"
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
                f"cannot write in the journal folder {directory}: {error.strerror}"
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


def read(path: Path, *, repair: bool = True) -> GameRecord:
    """Read a journal.  A torn last line is dropped with a warning (and cut off the file when
    ``repair``).  Raises :class:`JournalError` for a missing file, a bad header or a journal of
    a newer version."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UnreadableJournalError(f"cannot read the journal {path}: {error.strerror}") from error
    lines = data.split(b"\n")
    good_end = 0
    entries: list[dict[str, Any]] = []
    torn = False
    offset = 0
    for number, raw in enumerate(lines):
        last = number == len(lines) - 1
        end = offset + len(raw) + (0 if last else 1)
        if raw.strip():
            try:
                if last:
                    raise ValueError("no newline")  # a complete line always ends with one
                entry = json.loads(raw)
                if not isinstance(entry, dict):
                    raise ValueError("not an object")
            except ValueError:
                if last or all(not rest.strip() for rest in lines[number + 1 :]):
                    torn = True
                    break
                raise JournalError(f"{path.name}, line {number + 1}: not a journal entry") from None
            entries.append(entry)
            good_end = end
        offset = end
    if not entries:
        # Nothing whole in it: not a journal (or one cut before its header); never touched.
        what = "is empty" if not data.strip() else "is not a game journal"
        raise JournalError(f"{path.name} {what}: no game header")
    header = entries[0]
    version = header.get("journal")
    if not isinstance(version, int):
        raise JournalError(f"{path.name} is not a game journal (no version in its first line)")
    if version > VERSION:
        raise JournalError(
            f"{path.name} was written by a newer companion (journal version "
            f"{version}; this one reads up to {VERSION}); update the companion"
        )
    if torn:
        log.warning("%s: the last line was cut off (power loss?) and is dropped", path.name)
        if repair:
            with open(path, "r+b") as file:
                file.truncate(good_end)
    record = GameRecord(path, header, dropped_torn_line=torn)
    for entry in entries[1:]:
        if "step" in entry:
            record.steps.append(entry)
        elif "undo" in entry:
            if record.steps and record.steps[-1].get("n") == entry["undo"]:
                record.steps.pop()
        elif "over" in entry:
            record.over = entry["over"]
    return record


def latest_unfinished(directory: Path) -> Path | None:
    """The newest journal in ``directory`` whose game has not ended, if any."""
    if not directory.is_dir():
        return None
    for path in sorted(directory.glob("*.jsonl"), reverse=True):
        try:
            if read(path, repair=False).over is None:
                return path
        except JournalError as error:
            log.warning("%s", error)
    return None
