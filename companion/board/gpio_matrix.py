"""A presence board with no microcontroller: a diode switch matrix scanned from the Pi's GPIO.

For makers without a board controller: one reed or hall switch per cell, each in series with a
diode, wired in a matrix of ``rows`` x ``columns`` (``hardware/WIRING.md``).
:class:`GpioMatrix` drives one row low at a time and reads the columns, which have the Pi's
pull-ups: a closed switch on the driven row pulls its column low. Each cell is debounced on its
own; the scanner then puts on the daemon's queue exactly what
:class:`~companion.board.link.BoardLink` puts there for a serial board (a ``LinkState``, a
``HELLO`` and a ``DUMP`` at start, a field update per settled change, a heartbeat every second,
a dump on ``DUMP?``), so the referee cannot tell which it has.

Cell ``n`` of the layout's dump order is the switch at row ``n // len(columns)``, column
``n % len(columns)``.  Pins are gpiozero pin names from ``[switches]``; the pin factory is
passed in, the one the buttons use too (gpiozero's ``MockFactory`` in tests).
:class:`MatrixCircuit` is the matrix in software for those tests, the way gpiozero's
``pins/mock.py`` models its own circuits: column pins whose level follows the closed switches
and the driven rows.

Scanning runs on its own thread; :attr:`GpioMatrix.scan_rate` (full scans per second) and
:attr:`GpioMatrix.latency` (switch change to field update, in seconds) are measured as it goes.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from queue import SimpleQueue
from typing import Final

from gpiozero import InputDevice, OutputDevice
from gpiozero.pins import PinInfo
from gpiozero.pins.mock import MockFactory, MockPin

from companion import events
from companion.board import protocol
from companion.board.debounce import Debounce
from companion.board.pins import Device, PinFactory, claim
from companion.config import Config, layout_name, matrix_too_small
from companion.errors import ConfigError, MisuseError
from companion.rules.base import EMPTY, Cell, Piece

log = logging.getLogger("companion.board")

OCCUPIED: Final = "occupied"
HEARTBEAT_S: Final = 1.0


class MatrixCircuit:
    """A switch matrix on gpiozero mock pins: ``closed`` holds the ``(row, column)`` switches
    that are closed.  ``rows``/``columns``: pin names, as :class:`GpioMatrix` gets them.

    A column pin reads low while some driven-low row has a closed switch to it (the diodes
    keep current from flowing any other way), else high through its pull-up.
    """

    def __init__(self, factory: MockFactory, rows: Sequence[str], columns: Sequence[str]) -> None:
        self.closed: set[tuple[int, int]] = set()
        self.rows = [factory.pin(name) for name in rows]
        self.columns = [factory.pin(name, pin_class=MatrixColumnPin, circuit=self, column=c)
                        for c, name in enumerate(columns)]

    def low(self, column: int) -> bool:
        """Whether column ``column`` is pulled low now."""
        return any(
            (r, column) in self.closed and pin.function == "output" and not pin.state
            for r, pin in enumerate(self.rows)
        )

    def set_board(self, layout: Sequence[Cell], board: Mapping[Cell, Piece]) -> None:
        """Close the switch of every occupied cell of ``board`` (cells in ``layout`` order)."""
        width = len(self.columns)
        self.closed = {divmod(n, width) for n, cell in enumerate(layout)
                       if board.get(cell, EMPTY) != EMPTY}


class MatrixColumnPin(MockPin):  # type: ignore[misc]
    """A mock input pin wired to a column of a :class:`MatrixCircuit`."""

    def __init__(self, factory: PinFactory, info: PinInfo, circuit: MatrixCircuit,
                 column: int) -> None:
        super().__init__(factory, info)
        self.circuit = circuit
        self.column = column

    def _get_state(self) -> bool:
        return bool(self._state) and not self.circuit.low(self.column)


class GpioMatrix:
    """A presence board scanned from GPIO, feeding the daemon's queue like a serial board.

    ``queue``: the daemon's event queue.  ``layout``: the layout name announced in the hello
    (its cells give the dump order).  ``rows``/``columns``: gpiozero pin names; there must be
    at least as many switches as cells.  ``pin_factory``: a gpiozero pin factory (the
    caller's, left open by :meth:`close`).  ``debounce_s``: how long a new reading must hold,
    in seconds; ``scan_interval_s``: pause between two full scans.  ``clock``: time of the
    events, in seconds.

    Raises :class:`companion.errors.ConfigError` (a ``ValueError``) for a matrix smaller than
    the layout and for a pin that cannot be used (one another part holds is named with it,
    :func:`companion.board.pins.claim`).  Nothing is scanned until :meth:`start`; :meth:`close`
    stops and releases the pins.
    """

    def __init__(self, queue: SimpleQueue[events.AnyEvent], *, layout: str, rows: Sequence[str],
                 columns: Sequence[str], pin_factory: PinFactory, debounce_s: float = 0.02,
                 scan_interval_s: float = 0.002,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cells = protocol.LAYOUTS[layout]
        small = matrix_too_small(len(rows), len(columns), layout)
        if small:
            raise ConfigError(small)
        self.layout = layout
        self.port = f"gpio:{len(rows)}x{len(columns)}"
        self.debounce_s = debounce_s
        self.scan_interval_s = scan_interval_s
        self.clock = clock
        self.scan_rate = 0.0
        """Full scans per second, measured over the last second."""
        self.latency = 0.0
        """Seconds from a switch's first new reading to its field update, for the last one."""
        self._queue = queue
        self._seq = itertools.count()
        self._stop = threading.Event()
        self._dump_wanted = threading.Event()
        self._thread: threading.Thread | None = None
        self._rows: list[Device] = []
        self._columns: list[Device] = []
        try:
            # A row is "on" when driven low: the switches on it conduct into it.
            for n, pin in enumerate(rows, 1):
                self._rows.append(claim(OutputDevice, pin, part=f"[switches] rows (row {n})",
                                        pin_factory=pin_factory, active_high=False,
                                        initial_value=False))
            for n, pin in enumerate(columns, 1):
                self._columns.append(claim(InputDevice, pin,
                                           part=f"[switches] columns (column {n})",
                                           pin_factory=pin_factory, pull_up=True))
        except BaseException:
            self._release()
            raise

    @classmethod
    def from_config(cls, config: Config, queue: SimpleQueue[events.AnyEvent], *,
                    pin_factory: PinFactory,
                    clock: Callable[[], float] = time.monotonic) -> GpioMatrix:
        """The matrix of ``config.switches`` for the configured game's layout, on
        ``pin_factory`` (the one the buttons use)."""
        switches = config.switches
        return cls(queue, layout=layout_name(config), rows=switches.rows,
                   columns=switches.columns, pin_factory=pin_factory,
                   debounce_s=switches.debounce_ms / 1000,
                   scan_interval_s=switches.scan_interval_ms / 1000, clock=clock)

    @property
    def up(self) -> bool:
        """True while the scanner runs."""
        return self._thread is not None and self._thread.is_alive()

    def read(self) -> list[Piece]:
        """One scan: ``"occupied"`` or ``""`` per cell, in dump order."""
        readings: list[Piece] = []
        for row in self._rows:
            if len(readings) >= len(self.cells):
                break
            row.on()
            readings += [OCCUPIED if column.is_active else EMPTY for column in self._columns]
            row.off()
        return readings[: len(self.cells)]

    def start(self) -> None:
        """Start scanning on a thread of its own.  Raises :class:`MisuseError` when called twice."""
        if self._thread is not None:
            raise MisuseError("the GPIO matrix is already scanning")
        self._thread = threading.Thread(target=self._run, name="companion-gpio-matrix",
                                        daemon=True)
        self._thread.start()

    def send(self, message: protocol.Message) -> bool:
        """A Pi command, as to a serial board: ``DUMP?`` and ``HELLO?`` are answered; the
        matrix has no LEDs, so ``LED`` commands return False."""
        if isinstance(message, protocol.RequestDump | protocol.RequestHello):
            self._dump_wanted.set()
            return True
        return False

    def _post(self, now: float, message: protocol.BoardToPi) -> None:
        seq = next(self._seq) % protocol.SEQ_MODULO
        self._queue.put(events.BoardMessage(now, replace(message, seq=seq)))

    def _hello(self) -> protocol.Hello:
        return protocol.Hello(0, str(protocol.VERSION), self.layout, "presence", "gpio-matrix",
                              "companion-gpio")

    def _run(self) -> None:
        try:
            self._scan_loop()
        except Exception as error:  # report, as the serial link does, and stop scanning
            log.exception("the GPIO matrix stopped scanning")
            self._queue.put(events.Fault(self.clock(), "the GPIO matrix", str(error),
                                         {"type": type(error).__name__}))

    def _scan_loop(self) -> None:
        self.begin(self.clock())
        while not self._stop.wait(self.scan_interval_s):
            self.scan(self.clock())

    def begin(self, now: float) -> None:
        """The first scan (at ``now``, seconds) is the settled board: link up, hello, dump.
        The scanning thread calls this and :meth:`scan`; tests call them on a virtual clock."""
        self._settled = self.read()
        self._pending: Debounce[int, Piece] = Debounce(self.debounce_s)
        self._queue.put(events.LinkState(now, True, f"scanning {self.port}"))
        self._post(now, self._hello())
        self._post(now, protocol.Dump(0, tuple(self._settled)))
        self._beat = self._window = now
        self._scans = 0

    def scan(self, now: float) -> None:
        """One full scan at ``now``: a field update for each cell whose new reading has held
        ``debounce_s``; a dump if one was asked for; a heartbeat when one is due."""
        settled, pending = self._settled, self._pending
        for index, piece in enumerate(self.read()):
            pending.read(index, piece, settled[index], now)
        for index, piece, since in sorted(pending.due(now)):
            settled[index] = piece
            self.latency = now - since
            self._post(now, protocol.FieldUpdate(0, self.cells[index], piece))
        if self._dump_wanted.is_set():
            self._dump_wanted.clear()
            self._post(now, self._hello())
            self._post(now, protocol.Dump(0, tuple(settled)))
        self._scans += 1
        if now - self._window >= 1.0:
            self.scan_rate = self._scans / (now - self._window)
            self._scans, self._window = 0, now
        if now - self._beat >= HEARTBEAT_S:
            self._beat = now
            self._post(now, protocol.Heartbeat(0, int(now * 1000) % protocol.UPTIME_MODULO))

    def close(self) -> None:
        """Stop scanning and release the pins.  Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._queue.put(events.LinkState(self.clock(), False, "closed"))
            self._thread = None
        self._release()

    def _release(self) -> None:
        for device in itertools.chain(self._rows, self._columns):
            device.close()
        self._rows, self._columns = [], []


def occupancy(board: Mapping[Cell, Piece], cells: Iterable[Cell]) -> dict[Cell, Piece]:
    """What a presence board reads for ``board``: ``"occupied"`` or ``""`` per cell."""
    return {cell: OCCUPIED if board.get(cell, EMPTY) != EMPTY else EMPTY for cell in cells}
