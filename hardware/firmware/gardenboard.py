"""Reference board controller for the Gardens Companion: scan, debounce, speak protocol v1.

Runs unchanged on a Raspberry Pi Pico under MicroPython (``main.py`` wires it to the pins and
the USB serial port) and on a PC under CPython (the companion's host tests drive it with a
simulated switch matrix and read its lines with the daemon's own parser).  So it uses only
what both have: no ``dataclasses``, no ``typing`` imports, no ``from __future__`` (MicroPython
has none); annotations are ignored by MicroPython and plain builtins under CPython.

The protocol is ``hardware/PROTOCOL.md``; this module implements a board's side of it:

- :func:`layout_cells`: the cells of each layout in dump order (PROTOCOL.md, Layouts);
- :class:`SwitchMatrix`: a diode switch matrix (reed or hall switches, one per cell), rows
  driven low one at a time, columns read with pull-ups: a *presence* sensor (``#`` / ``.``);
- :class:`Debouncer`: a cell's new reading counts once it has held ``debounce_ms``;
- :class:`Controller`: hello and dump on power-up, a field update per settled change, a
  heartbeat every second, answers to ``HELLO?`` and ``DUMP?``, ``LED``/``LEDS`` passed on.

Times are milliseconds from the caller's clock (``time.ticks_ms()`` on the Pico);
``ticks_diff`` (``time.ticks_diff`` there) subtracts two readings across the counter's wrap.
"""

VERSION = "1"
"""The protocol version announced in ``HELLO``."""

FIRMWARE = "gardenboard-1.0"
"""This firmware's name and version, as the ``HELLO`` announces it."""

SEQ_MODULO = 10000
UPTIME_MODULO = 1 << 32
MAX_LINE = 1024

EMPTY = "."
OCCUPIED = "#"


def checksum(body: str) -> str:
    """The XOR of the bytes of ``body`` as two upper-case hex digits (PROTOCOL.md, Framing)."""
    value = 0
    for byte in body.encode():
        value ^= byte
    return "%02X" % value


def frame(body: str) -> bytes:
    """``body`` as a line on the wire: ``<body>*HH\\n``."""
    return ("%s*%s\n" % (body, checksum(body))).encode()


def _hex_cells(cells: list) -> list:
    """Axial ``(q, r)`` pairs as names ``"q,r"``, sorted by ``r`` then ``q`` (dump order)."""
    return ["%d,%d" % (q, r) for r, q in sorted((r, q) for q, r in cells)]


def _hexagon(radius: int) -> list:
    span = range(-radius, radius + 1)
    return [(q, r) for q in span for r in span if abs(q + r) <= radius]


def layout_cells(layout: str) -> list:
    """The cell names of ``layout`` in dump order (PROTOCOL.md, Layouts): 146 for
    ``enceladus``, 91 for ``mars``, 61/63/64 for ``uranus-hexagonal``/``-trapezoid``/
    ``-rhombus``.  Raises ``ValueError`` for another name."""
    if layout == "enceladus":
        columns = "abcdefghij"
        cells = ["%s%d" % (c, row) for row in range(1, 11) for c in columns]
        cells += ["L%d" % n for n in range(1, 11)] + ["R%d" % n for n in range(1, 11)]
        cells += ["B" + c for c in columns] + ["A%d" % n for n in range(1, 11)]
        return cells + ["T%d" % n for n in range(1, 7)]
    if layout == "mars":
        return _hex_cells(_hexagon(5))
    if layout == "uranus-hexagonal":
        return _hex_cells(_hexagon(4))
    if layout == "uranus-trapezoid":
        return _hex_cells([(q, r) for q in range(7) for r in range(-(5 + q), 1)])
    if layout == "uranus-rhombus":
        return _hex_cells([(q, r) for q in range(8) for r in range(-q, 8 - q)])
    raise ValueError("unknown layout %r" % layout)


def _diff(later: int, earlier: int) -> int:
    return later - earlier


class SwitchMatrix:
    """A presence sensor: one switch per cell, in a matrix of ``rows`` x ``columns`` wires.

    ``rows``: output pins, idle high, driven low one at a time.  ``columns``: input pins with
    pull-ups.  Each cell is a reed or hall switch in series with a diode (cathode to the row):
    a closed switch on the driven row pulls its column low, and the diodes stop the current
    sneaking through three closed switches into a fourth cell (a "ghost").  A pin is anything
    with MicroPython's ``value()`` / ``value(v)``.

    Cell ``n`` of the layout's dump order is the switch at row ``n // len(columns)``, column
    ``n % len(columns)``; ``cells`` of them are read (default all).  ``settle``: called after
    a row is driven, before its columns are read (``lambda: time.sleep_us(10)`` on the Pico:
    the wires' capacitance needs a few microseconds).

    Raises ``ValueError`` when the matrix has fewer switches than ``cells``.
    """

    def __init__(self, rows: list, columns: list, cells: int = 0, settle=None) -> None:
        self.rows = list(rows)
        self.columns = list(columns)
        self.cells = cells or len(self.rows) * len(self.columns)
        if self.cells > len(self.rows) * len(self.columns):
            raise ValueError(
                "%d cells need more than %d rows x %d columns"
                % (self.cells, len(self.rows), len(self.columns))
            )
        self.settle = settle
        for row in self.rows:
            row.value(1)

    def read(self) -> list:
        """One scan: a code per cell, ``#`` where the switch is closed, ``.`` where open."""
        codes = []
        width = len(self.columns)
        for index, row in enumerate(self.rows):
            if index * width >= self.cells:
                break
            row.value(0)
            if self.settle is not None:
                self.settle()
            for column in self.columns:
                codes.append(OCCUPIED if column.value() == 0 else EMPTY)
            row.value(1)
        return codes[: self.cells]


class Debouncer:
    """Per-cell debounce: a reading different from a cell's settled code becomes the settled
    code once it has been read unchanged for ``debounce_ms``; a shorter glitch is forgotten.

    ``settled``: the codes at power-on (one per cell).
    """

    def __init__(self, settled: list, debounce_ms: int, ticks_diff=_diff) -> None:
        self.settled = list(settled)
        self.debounce_ms = debounce_ms
        self.ticks_diff = ticks_diff
        self._candidate = [None] * len(self.settled)
        self._since = [0] * len(self.settled)

    def update(self, readings: list, now: int) -> list:
        """Take one scan read at ``now`` (ms); return ``[(index, code), ...]`` settled now."""
        changed = []
        for index, code in enumerate(readings):
            if code == self.settled[index]:
                self._candidate[index] = None
            elif code != self._candidate[index]:
                self._candidate[index] = code
                self._since[index] = now
            elif self.ticks_diff(now, self._since[index]) >= self.debounce_ms:
                self.settled[index] = code
                self._candidate[index] = None
                changed.append((index, code))
        return changed


class Controller:
    """The board's side of protocol v1 over one serial line.

    ``sensor``: has ``read() -> list`` of piece codes, one per cell of ``layout`` in dump order
    (a :class:`SwitchMatrix` for a presence board).  ``write(data: bytes)``: sends on the
    serial line.  ``sensing``: ``"presence"`` or ``"identity"``, as announced.  ``board_id``:
    a token that names this board.  ``debounce_ms``: how long a new reading must hold;
    ``heartbeat_ms``: time between heartbeats.  ``on_led(cell, colour)``: called for the Pi's
    ``LED <cell> <rrggbb>`` (``colour`` six hex digits, ``None`` for off) and with
    ``(None, None)`` for ``LEDS off``; default: the board has no LEDs.

    Call :meth:`start` once at power-up, then :meth:`poll` as often as possible (every
    millisecond or two) and :meth:`receive` with every byte read from the Pi.
    """

    def __init__(self, sensor, write, *, layout: str, sensing: str = "presence",
                 board_id: str = "pico", debounce_ms: int = 20, heartbeat_ms: int = 1000,
                 ticks_diff=_diff, on_led=None) -> None:
        self.sensor = sensor
        self.write = write
        self.layout = layout
        self.cells = layout_cells(layout)
        self.sensing = sensing
        self.board_id = board_id
        self.debounce_ms = debounce_ms
        self.heartbeat_ms = heartbeat_ms
        self.ticks_diff = ticks_diff
        self.on_led = on_led
        self.seq = 0
        self.uptime = 0
        self.debouncer = None
        self._last = 0
        self._beat = 0
        self._input = b""
        self._skipping = False

    def send(self, body: str) -> None:
        """Send a board message: ``body`` starts with its type; the sequence number is added."""
        kind, _, rest = body.partition(" ")
        line = "%s %d %s" % (kind, self.seq, rest) if rest else "%s %d" % (kind, self.seq)
        self.seq = (self.seq + 1) % SEQ_MODULO
        self.write(frame(line))

    def send_hello(self) -> None:
        self.send("HELLO %s %s %s %s %s" % (VERSION, self.layout, self.sensing, self.board_id,
                                            FIRMWARE))

    def send_dump(self) -> None:
        self.send("DUMP " + " ".join(self.debouncer.settled))

    def start(self, now: int) -> None:
        """Power-up: the first scan is the settled board; a bare newline, hello and dump."""
        self.debouncer = Debouncer(self._scan(), self.debounce_ms, self.ticks_diff)
        self._last = self._beat = now
        self.write(b"\n")
        self.send_hello()
        self.send_dump()

    def poll(self, now: int) -> None:
        """Scan once at ``now`` (ms): a field update per settled change, heartbeats on time."""
        self.uptime = (self.uptime + self.ticks_diff(now, self._last)) % UPTIME_MODULO
        self._last = now
        for index, code in self.debouncer.update(self._scan(), now):
            self.send("F %s %s" % (self.cells[index], code))
        if self.ticks_diff(now, self._beat) >= self.heartbeat_ms:
            self._beat = now
            self.send("HB %d" % self.uptime)

    def _scan(self) -> list:
        codes = self.sensor.read()
        if len(codes) != len(self.cells):
            raise ValueError("the sensor reads %d cells, the %s layout has %d"
                             % (len(codes), self.layout, len(self.cells)))
        return codes

    def receive(self, data: bytes) -> None:
        """Bytes from the Pi: each complete line is a command, answered at once."""
        self._input += data
        while True:
            end = self._input.find(b"\n")
            if end < 0:
                if len(self._input) > MAX_LINE:  # no newline in time: skip to the next one
                    self._input = b""
                    self._skipping = True
                return
            line, self._input = self._input[:end], self._input[end + 1:]
            if self._skipping:
                self._skipping = False
                self.send("ERR badline line longer than %d bytes" % MAX_LINE)
                continue
            self._command(line.strip(b"\r "))

    def _command(self, line: bytes) -> None:
        if not line:
            return
        try:
            text = line.decode()
        except UnicodeError:
            self.send("ERR badline not ASCII")
            return
        body, star, given = text.partition("*")
        if not star or given.upper() != checksum(body):
            self.send("ERR badline checksum %s expected" % checksum(body))
            return
        fields = body.split()
        if fields == ["DUMP?"]:
            self.send_dump()
        elif fields == ["HELLO?"]:
            self.send_hello()
        elif fields == ["LEDS", "off"]:
            self._led(None, None)
        elif len(fields) == 3 and fields[0] == "LED" and fields[1] in self.cells:
            self._led(fields[1], None if fields[2] == "off" else fields[2].lower())
        else:
            self.send("ERR unknown %s" % (fields[0] if fields else "?"))

    def _led(self, cell, colour) -> None:
        if self.on_led is not None:
            self.on_led(cell, colour)
