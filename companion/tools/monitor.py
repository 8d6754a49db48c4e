"""``companion monitor PORT``: a live view of what a board reports, and the health of each cell.

Makers run it while they build a board: it prints every message (hellos, dumps, field updates,
heartbeats, dice, cards, the board's errors) and every line the companion refuses (checksum
failures...), and it keeps a health record per cell (:class:`CellHealth`):

- **stuck**: the cell has read a piece for ``stuck_s`` seconds although nothing should be
  there (the *sensor test*: clear the board, then pass a piece or magnet over every cell;
  a reed switch welded shut reads occupied all along).  Cells are judged stuck only once the
  board has been seen clear (at most :data:`CLEAR_SHARE` of them reading a piece): a board
  with a game laid out on it is not a board of stuck cells;
- **flaky**: the cell flickers: a change undone within ``flicker_s``, ``flaky_count`` times
  or more in the last ``window_s`` seconds (the rate is shown per minute);
- **never changed**: no update for the cell since the monitor started (a dead sensor, a
  broken row or column wire, or a cell not tested yet).

With an LED matrix (``--config FILE``, its ``[display]``) the monitor shows the board with
each cell lit as it changes (highlight ``changed``) and stuck or flaky cells marked ``wrong``.

:class:`Monitor` is pure (events in, lines and screens out); :func:`run_monitor` wires it to
a :class:`~companion.board.link.BoardLink` and prints.
"""

from __future__ import annotations

import queue
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TypedDict, Unpack

from companion import events
from companion.board import protocol
from companion.errors import LinkError
from companion.referee.screen import Screen
from companion.rules.base import EMPTY, Cell, Piece

if TYPE_CHECKING:  # the matrix is opened only when asked for
    from companion.display import Display

LIT_S: Final = 2.0
"""Seconds a changed cell stays lit in the sensor-test view."""


@dataclass(frozen=True, slots=True)
class CellHealth:
    """One cell's record.  ``status``: ``"ok"``, ``"stuck"``, ``"flaky"`` or ``"unchanged"``
    (never seen to change).  ``changes``: updates since the start; ``flickers``: changes
    undone within the flicker time in the last window; ``rate``: flickers per minute over
    the window; ``held_s``: seconds since the last change."""

    cell: Cell
    piece: Piece
    status: str
    changes: int
    flickers: int
    rate: float
    held_s: float

    def sentence(self) -> str:
        """The problem as a maker reads it; empty when the cell is fine."""
        if self.status == "stuck":
            return (f"{self.cell} is stuck: it has read {self.piece} for {self.held_s:.1f} s "
                    "where nothing should be")
        if self.status == "flaky":
            return (f"{self.cell} is flaky: {self.flickers} flickers in the last window "
                    f"({self.rate:.0f} a minute)")
        return ""


@dataclass
class _Cell:
    piece: Piece = EMPTY
    since: float = 0.0
    previous: Piece = EMPTY
    changes: int = 0
    flickers: deque[float] = field(default_factory=deque)


CLEAR_SHARE: Final = 0.1
"""The board counts as cleared for the sensor test once at most this share of its cells read a
piece other than what should stand there (the stuck ones among them)."""


class HealthTracker:
    """Per-cell health from the board's readings.

    ``expected``: what should stand on each cell (default: nothing, the sensor test's
    cleared board).  ``stuck_s``, ``flicker_s`` and ``window_s`` in seconds;
    ``flaky_count``: flickers in a window that make a cell flaky.
    """

    def __init__(self, cells: tuple[Cell, ...], *, expected: Mapping[Cell, Piece] | None = None,
                 stuck_s: float = 5.0, flicker_s: float = 0.25, window_s: float = 10.0,
                 flaky_count: int = 3, start: float = 0.0) -> None:
        self.cells = cells
        self.expected = dict(expected or {})
        self.stuck_s = stuck_s
        self.flicker_s = flicker_s
        self.window_s = window_s
        self.flaky_count = flaky_count
        self._cells = {cell: _Cell(since=start) for cell in cells}
        self.cleared = False
        """Whether the board has been seen clear, so that a cell still reading a piece is
        stuck rather than a piece nobody has taken off yet."""

    def _check_cleared(self) -> None:
        if not self.cleared:
            extra = sum(1 for cell, record in self._cells.items()
                        if record.piece != self.expected.get(cell, EMPTY))
            self.cleared = extra <= CLEAR_SHARE * len(self._cells)

    def dump(self, t: float, board: Mapping[Cell, Piece]) -> None:
        """A full reading: cells that differ from the last one count as changes."""
        for cell, piece in board.items():
            self._record(t, cell, piece)
        self._check_cleared()

    def change(self, t: float, cell: Cell, piece: Piece) -> None:
        """``cell`` now reads ``piece``; a change back within ``flicker_s`` is a flicker."""
        self._record(t, cell, piece)
        self._check_cleared()

    def _record(self, t: float, cell: Cell, piece: Piece) -> None:
        record = self._cells.get(cell)
        if record is None or record.piece == piece:
            return
        if record.changes and piece == record.previous and t - record.since <= self.flicker_s:
            record.flickers.append(t)
        record.previous, record.piece, record.since = record.piece, piece, t
        record.changes += 1

    def health(self, now: float) -> dict[Cell, CellHealth]:
        """Every cell's record at ``now``."""
        out: dict[Cell, CellHealth] = {}
        for cell, record in self._cells.items():
            while record.flickers and record.flickers[0] < now - self.window_s:
                record.flickers.popleft()
            flickers = len(record.flickers)
            held = now - record.since
            if flickers >= self.flaky_count:
                status = "flaky"
            elif (self.cleared and record.piece != self.expected.get(cell, EMPTY)
                  and held >= self.stuck_s):
                status = "stuck"
            elif not record.changes:
                status = "unchanged"
            else:
                status = "ok"
            out[cell] = CellHealth(cell, record.piece, status, record.changes, flickers,
                                   flickers * 60 / self.window_s, held)
        return out

    def problems(self, now: float) -> list[CellHealth]:
        """The stuck and flaky cells at ``now``, in layout order."""
        return [h for h in self.health(now).values() if h.status in ("stuck", "flaky")]

    def board(self) -> dict[Cell, Piece]:
        """The last reading of every cell."""
        return {cell: record.piece for cell, record in self._cells.items()}

    def changed_since(self, t: float) -> list[Cell]:
        """Cells whose last change came at ``t`` or later."""
        return [c for c, r in self._cells.items() if r.changes and r.since >= t]


class Thresholds(TypedDict, total=False):
    """The thresholds of a :class:`HealthTracker`, any of them left at its default."""

    stuck_s: float
    flicker_s: float
    window_s: float
    flaky_count: int


class Monitor:
    """What a board says, as lines for a terminal, and the health of its cells.

    ``handle(event)`` returns the lines to print for one event of the link's queue; the
    tracker starts with the first ``HELLO`` (which names the layout) or ``layout``.
    Thresholds are passed on to :class:`HealthTracker`.
    """

    def __init__(self, layout: str | None = None, **thresholds: Unpack[Thresholds]) -> None:
        self.thresholds = thresholds
        self.layout: str | None = None
        self.tracker: HealthTracker | None = None
        self.bad_lines = 0
        self.board_errors = 0
        self.start: float | None = None
        if layout is not None:
            self._track(layout, 0.0)

    def _track(self, layout: str, t: float) -> None:
        if layout != self.layout:
            self.layout = layout
            self.tracker = HealthTracker(protocol.LAYOUTS[layout], start=t, **self.thresholds)

    def handle(self, event: events.AnyEvent) -> list[str]:
        """Take one event; return what to print about it."""
        if self.start is None:
            self.start = event.t
        stamp = f"{event.t - self.start:8.3f}"
        if isinstance(event, events.BadLine):
            self.bad_lines += 1
            return [f"{stamp}  refused: {event.reason}: {event.line!r}"]
        if isinstance(event, events.LinkState):
            return [f"{stamp}  link {'up' if event.up else 'down'}: {event.detail}"]
        if not isinstance(event, events.BoardMessage):
            return []
        message = event.message
        if isinstance(message, protocol.Hello):
            self._track(message.layout, event.t)
            return [f"{stamp}  HELLO board {message.board_id}, firmware {message.firmware}, "
                    f"protocol {message.version}, {message.layout}, {message.sensing}"]
        if self.tracker is None or self.layout is None:
            return [f"{stamp}  {message!r} (no HELLO yet: layout unknown)"]
        if isinstance(message, protocol.Dump):
            self.tracker.dump(event.t, message.board(self.layout))
            occupied = sum(1 for piece in message.pieces if piece != EMPTY)
            lines = [f"{stamp}  DUMP {len(message.pieces)} cells, {occupied} occupied"]
            if not self.tracker.cleared:
                lines.append("   (sensor test: clear the board, then pass a piece over every "
                             "cell; stuck cells are looked for once it is clear)")
            return lines
        if isinstance(message, protocol.FieldUpdate):
            self.tracker.change(event.t, message.cell, message.piece)
            return [f"{stamp}  F {message.cell} {message.piece or 'empty'}"]
        if isinstance(message, protocol.Heartbeat):
            return []  # once a second: shown only in the summary
        if isinstance(message, protocol.BoardErrorMessage):
            self.board_errors += 1
            return [f"{stamp}  ERR {message.code} {message.text}"]
        if isinstance(message, protocol.Dice):
            return [f"{stamp}  DICE {' '.join(map(str, message.values)) or '(tray empty)'}"]
        if isinstance(message, protocol.Card):
            return [f"{stamp}  CARD {message.card_id}"]
        return [f"{stamp}  {message!r}"]

    def problems(self, now: float) -> list[str]:
        """Sentences for the stuck and flaky cells at ``now``."""
        return [h.sentence() for h in self.tracker.problems(now)] if self.tracker else []

    def summary(self, now: float) -> list[str]:
        """The closing report: problems, cells never seen to change, refused lines."""
        if self.tracker is None:
            return ["no HELLO from the board: nothing to report"]
        health = self.tracker.health(now)
        unchanged = [c for c, h in health.items() if h.status == "unchanged"]
        lines = self.problems(now) or ["no stuck or flaky cell"]
        if unchanged:
            shown = " ".join(unchanged[:40]) + (" ..." if len(unchanged) > 40 else "")
            lines.append(f"{len(unchanged)} of {len(health)} cells never seen to change: {shown}")
        lines.append(f"{self.bad_lines} refused lines, {self.board_errors} board errors")
        return lines

    def screen(self, now: float) -> Screen | None:
        """The sensor-test view: the board, cells changed in the last :data:`LIT_S` seconds
        lit (``changed``), stuck and flaky cells ``wrong``; ``None`` before the first HELLO."""
        if self.tracker is None or self.layout is None:
            return None
        highlights = dict.fromkeys(self.tracker.changed_since(now - LIT_S), "changed")
        bad = self.tracker.problems(now)
        highlights.update((h.cell, "wrong") for h in bad)
        message = ", ".join(f"{h.cell} {h.status}" for h in bad) or "Sensor test"
        return Screen(self.layout.partition("-")[0], self.layout, self.tracker.board(),
                      highlights=highlights, message=message, urgent=bool(bad))


def run_monitor(port: str, *, seconds: float | None = None, display: Display | None = None,
                out: Callable[[str], None] = print, clock: Callable[[], float] = time.monotonic,
                **thresholds: Unpack[Thresholds]) -> list[str]:
    """Watch the board on ``port`` (a device path or pyserial URL) for ``seconds`` (default:
    until Ctrl-C), printing each message with ``out``, each new problem as it appears and a
    summary at the end; ``display`` (a :class:`companion.display.Display`) gets the
    sensor-test view.  Returns the problems found, one sentence per cell, first seen first.

    Raises :class:`companion.errors.LinkError` when the port cannot be opened at the start,
    and after the summary when no board said ``HELLO`` or the board was lost and not back at
    the end (a board lost meanwhile is waited for, and shown as the link going down and up).
    Ctrl-C (or SIGTERM, as :class:`KeyboardInterrupt`) ends the watch: the summary is printed
    and the interrupt goes on.
    """
    from companion.board.link import BoardLink

    monitor = Monitor(**thresholds)
    inbox: queue.SimpleQueue[events.AnyEvent] = queue.SimpleQueue()
    reported: dict[Cell, str] = {}
    end = None if seconds is None else clock() + seconds
    interrupted: KeyboardInterrupt | None = None
    with BoardLink(port, inbox, clock=clock, setting="the port name") as link:
        try:
            first = True
            while end is None or clock() < end:
                try:
                    event = inbox.get(timeout=0.2)
                except queue.Empty:
                    event = None
                if first and isinstance(event, events.LinkState):
                    first = False
                    if not event.up and link.open_problem is not None:
                        what, remedy = link.open_problem
                        raise LinkError(f"{what} ({remedy})")
                for line in monitor.handle(event) if event else []:
                    out(line)
                now = clock()
                for health in monitor.tracker.problems(now) if monitor.tracker else []:
                    # A cell's sentence changes as its figures grow: report each cell once.
                    if health.cell not in reported:
                        reported[health.cell] = health.sentence()
                        out(f"!! {reported[health.cell]}")
                screen = monitor.screen(now)
                if display is not None and screen is not None:
                    display.show(screen)
        except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the summary, then it goes on
            interrupted = stop
        up = link.up
    for line in monitor.summary(clock()):
        out(line)
    if interrupted is not None:
        raise interrupted
    if monitor.tracker is None:
        raise LinkError(f"no HELLO from a board on {port}: is the board there, with its "
                        "firmware running?")
    if not up:
        raise LinkError(f"the board on {port} was lost, and had not come back at the end")
    return list(reported.values())
