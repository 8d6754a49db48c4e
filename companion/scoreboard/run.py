"""``companion scoreboard --broker URL``: follow every table of an event until Ctrl-C.

The page is served on ``listen`` (its address and the organiser's PIN printed first); the
terminal table is written to standard output with ``terminal``, and always when standard
output is not a terminal (appended there, redrawn in place on a terminal) at most every
:data:`REDRAW_S`.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from companion.errors import UsageError
from companion.extras import installed
from companion.mqtt import MQTT_INSTALL
from companion.scoreboard.model import Scoreboard

REDRAW_S = 0.2
"""The shortest time between two writes of the terminal table, in seconds."""

TOPIC = re.compile(r"[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*")
"""What a topic prefix may be (``[mqtt] topic``): no wildcards, no empty level."""


def run_scoreboard(*, broker: str, topic: str = "gardens", listen: str = "",
                   terminal: bool = False, client_id: str = "", username: str = "",
                   password_file: Path | None = None,
                   ca_file: Path | None = None, pin: str = "", keep: Path | None = None,
                   out: TextIO | None = None) -> None:
    """Follow the tables at ``broker`` (see :func:`companion.scoreboard.client.parse_broker`)
    under ``topic``, logged in as ``username`` (its password in ``password_file``), until
    Ctrl-C or SIGTERM (raised as ``KeyboardInterrupt`` once the
    client and the page are closed), writing to ``out`` (standard output); ``keep``: the
    file the scoreboard is kept in and read back from
    (:class:`~companion.scoreboard.kept.KeptScoreboard`).  Raises
    :class:`UsageError` for a bad broker URL, topic, ``listen`` address, or a missing extra
    (paho-mqtt; Tornado for the page); :class:`~companion.errors.InputFileError` (or, for
    one that is there but not what it should be, :class:`~companion.errors.CompanionError`)
    for a password file or CA file that cannot be read;
    :class:`~companion.errors.OutputFileError` when ``keep`` cannot be written."""
    from companion.scoreboard.client import Feed, parse_broker
    from companion.scoreboard.terminal import TerminalBoard

    out = out or sys.stdout
    where = parse_broker(broker, username)
    if not TOPIC.fullmatch(topic):
        raise UsageError(f"the topic {topic!r} is not a prefix such as gardens or "
                         "club/gardens (letters, digits, _ and -, levels split by /)")
    if not installed("paho"):
        raise UsageError(f"the scoreboard needs paho-mqtt, which is not installed "
                         f"({MQTT_INSTALL})")
    kept = None
    if keep is not None:
        from companion.scoreboard.kept import KeptScoreboard

        kept = KeptScoreboard(keep, topic)
    board = kept or Scoreboard(topic)
    changed = threading.Event()
    page = None
    if listen:
        if not installed("tornado"):
            raise UsageError("the scoreboard's page needs Tornado, which is not installed "
                             "(pip install 'gardens-companion[web]'); or give --listen ''")
        from companion.scoreboard.server import ScoreboardPage

        page = ScoreboardPage(listen, board, pin=pin)

    def on_change() -> None:
        changed.set()
        if page is not None:
            page.changed()

    try:
        feed = Feed(where, board, on_change, client_id=client_id, password_file=password_file,
                    ca_file=ca_file)
        if page is not None:
            print(f"Scoreboard page: {page.address} (organiser's PIN {page.guard.pin})",
                  file=out, flush=True)
        feed.start()
        try:
            shown = None
            if terminal or not out.isatty():
                shown = TerminalBoard(out, in_place=out.isatty())
                shown.show(board)
            while True:
                changed.wait()
                changed.clear()
                if shown is not None:
                    shown.show(board)
                    time.sleep(REDRAW_S)  # changes meanwhile are drawn together
        finally:
            feed.stop()
    finally:
        if page is not None:
            page.close()
        if kept is not None:
            kept.close()
