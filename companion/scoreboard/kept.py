"""The scoreboard kept in a file, so that a scoreboard started again has the evening's rounds.

The broker keeps only each table's last game (retained) and, for a persistent session, the
steps sent while the scoreboard was away; the games of earlier rounds are the scoreboard's
own to keep.  :class:`KeptScoreboard` appends every message that changed the board, and every
name an organiser set, to a JSON Lines file (``--keep``), one whole line at a time; started
again with the same file it reads them back first, in order, which rebuilds the same tables,
standings and names.  A line cut off by a power loss, or any line that is not one of these,
is skipped; a cut line is ended before the next line is kept.
"""

from __future__ import annotations

import errno
import json
import logging
from pathlib import Path
from typing import IO

from companion.errors import CompanionError, UsageError
from companion.files import output_error
from companion.scoreboard.model import Scoreboard

log = logging.getLogger("companion.scoreboard")


class KeptScoreboard(Scoreboard):
    """A :class:`Scoreboard` of ``prefix`` kept in ``path`` (see the module docstring).
    Raises :class:`companion.errors.OutputFileError` when the file is there but cannot be
    read, or is not there and its folder is not either, and
    :class:`companion.errors.UsageError` when it holds whole lines and not one a scoreboard
    keeps (another file given by mistake, left as it is); one that cannot be written later is
    said once on the log, and not written again."""

    def __init__(self, path: Path, prefix: str = "gardens") -> None:
        super().__init__(prefix)
        self.path = path
        self._file: IO[str] | None = None
        self._cut = False  # the file ends in a line cut off, to be ended before the next
        read = skipped = 0
        if path.exists():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                raise output_error(path, "scoreboard file", error) from None
            lines = text.splitlines()
            self._cut = bool(text) and not text.endswith("\n")
            for line in lines:
                read += 1
                skipped += not self._replay(line)
            if skipped == read and read > (0 if text.endswith("\n") else 1):
                # whole lines and none of them kept by a scoreboard: another file given by
                # mistake (a configuration, a journal), which is not to be appended to
                raise UsageError(f"{path} is not a scoreboard file (no line of it is one), so "
                                 "--keep does not write in it: give another file name")
            log.info("%s: %d messages and names read back%s", path, read - skipped,
                     f", {skipped} lines skipped" if skipped else "")
        elif not path.parent.is_dir():  # the file is made with its first line: say it now
            raise output_error(path, "scoreboard file", FileNotFoundError(errno.ENOENT, ""))
        self._broken = False  # the file could not be written: nothing more is tried

    def _replay(self, line: str) -> bool:
        try:
            kept = json.loads(line)
            if "name" in kept:
                table, seat, name = kept["name"]
                super().set_name(str(table), int(seat), str(name))
            else:
                super().receive(str(kept["topic"]), str(kept["payload"]).encode())
        except (ValueError, TypeError, KeyError, CompanionError):  # not a line this file holds
            return False
        return True

    def receive(self, topic: str, payload: bytes | bytearray) -> bool:
        changed = super().receive(topic, payload)
        if changed:
            self._keep({"topic": topic, "payload": payload.decode("utf-8", "replace")})
        return changed

    def set_name(self, table: str, seat: int, name: str) -> None:
        super().set_name(table, seat, name)
        self._keep({"name": [table, seat, name]})

    def _keep(self, entry: dict[str, object]) -> None:
        if self._broken:
            return
        try:  # opened with the first line to keep: a scoreboard that fails to start leaves none
            if self._file is None:
                self._file = self.path.open("a", encoding="utf-8")
                if self._cut:  # the next line of its own, not the end of the one cut off
                    self._file.write("\n")
            self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
            self._file.flush()
        except OSError as error:
            log.error("%s; the scoreboard goes on without keeping what comes",
                      output_error(self.path, "scoreboard file", error))
            self._broken = True

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None
