"""The journal of the game in progress as the service keeps it, and what the matrix says of
it: a failed write is logged once per burst and the game goes on (the journal keeps its lines
and writes them when it can); every screen is marked "NOT saved" meanwhile, and the first one
after a failure says so in words (:meth:`Record.overlay`), as does the note about a damaged
journal until the board matches the game.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from companion.bursts import BurstLog
from companion.daemon.seams import GameJournal
from companion.errors import JournalError
from companion.referee.screen import Screen

log = logging.getLogger("companion")

ERROR_BURST_S = 60.0
"""Seconds during which a repeated error is counted instead of logged again."""

JOURNAL_RETRY_S = 5.0
"""Seconds between two attempts to write a journal that fell behind, while no step comes."""

JOURNAL_ALARM = "Journal write failed: the game goes on"
"""The matrix's words when the journal cannot be written."""


class Record:
    """The ``journal`` of the game in progress (``None``: the game is not recorded), on the
    service's ``clock``.

    ``error``: why games are not saved at all (the journal folder cannot be written), ``""``
    when they are.  ``note``: what the matrix tells the players about a damaged journal
    before every message until the board matches the game, ``""`` for nothing.
    """

    def __init__(self, journal: GameJournal | None, clock: Callable[[], float], *,
                 error: str = "", note: str = "") -> None:
        self.journal = journal
        self.error = error
        self.note = note
        self._clock = clock
        self._alarm = bool(error) or (journal is not None and journal.behind > 0)
        self._errors = BurstLog(log, "journal", clock, ERROR_BURST_S)
        self._retry_at = 0.0

    @property
    def behind(self) -> int:
        """Lines the journal keeps but could not write yet."""
        return self.journal.behind if self.journal is not None else 0

    def write(self, write: Callable[[GameJournal], None]) -> bool:
        """Write with ``write``; whether the journal has just become whole again (every line
        kept back written: the screen shown should lose its mark).  A failure is logged once
        per burst and raises nothing."""
        if self.journal is None:
            return False
        was_behind = self.journal.behind
        try:
            write(self.journal)
        except JournalError as error:
            self._errors.report(str(error))
            self._alarm = self._alarm or not was_behind
            return False
        if was_behind:
            self._errors.flush()
            log.warning("the journal is whole again: %d waiting lines written", was_behind)
        return bool(was_behind)

    def retry(self, now: float) -> bool:
        """Try a journal that fell behind again, every :data:`JOURNAL_RETRY_S` seconds; whether
        it has just become whole again."""
        if not self.behind or now < self._retry_at:
            return False
        self._retry_at = now + JOURNAL_RETRY_S
        return self.write(lambda journal: journal.flush())

    def replace(self, journal: GameJournal | None) -> None:
        """A new game: its ``journal`` replaces the one of the game before (closed)."""
        if self.journal is not None:
            self.journal.close()
        self.journal = journal

    def overlay(self, screen: Screen, *, syncing: bool) -> Screen:
        """``screen`` with what the players must know of the record: the note, until the board
        matches the game (``syncing`` false); "NOT saved" while lines wait or games are not
        saved, the first screen after a failure saying so in words, urgently."""
        if self.note and not syncing:
            self.note = ""  # the board matches: the players have seen where the game stands
        if self.note:
            screen = replace(screen, message=f"{self.note}. {screen.message}")
        if not self.error and not self.behind:
            return screen
        screen = replace(screen, extra={**screen.extra, "journal": "NOT saved"})
        if self._alarm:
            self._alarm = False
            message = f"Games are not saved: {self.error}" if self.error else JOURNAL_ALARM
            screen = replace(screen, message=message, urgent=True)
        return screen

    def status(self) -> str:
        """What ``systemctl status`` says of the record, ``""`` when all is written."""
        if not self.behind:
            return ""
        return f"journal NOT saved ({self.behind} lines waiting)"
