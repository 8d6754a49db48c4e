"""The serial link to the board controller: pyserial, a reader thread, reconnects, events.

:class:`BoardLink` opens the port with pyserial (a device path such as
``/dev/serial/by-id/usb-...`` or a pyserial URL: ``loop://``, ``socket://host:port``,
``spy://...``), runs a :class:`serial.threaded.ReaderThread` whose protocol feeds a
:class:`~companion.board.protocol.LineParser`, and puts events on the daemon's one queue:

- :class:`companion.events.BoardMessage` for every good message from the board
  (``HELLO``, ``DUMP``, ``F``, ``HB``, ``ERR``, ``DICE``, ``CARD``);
- :class:`companion.events.BadLine` for *every* refused line (the monitor shows them all);
  the log gets the first line of a burst and then one summary with a count per
  :data:`BURST_WINDOW` seconds, and :attr:`BoardLink.bad_lines` counts them all;
- :class:`companion.events.LinkState` when the link comes up or goes down (once per
  outage, however many reconnection attempts fail);
- :class:`companion.events.Fault` when code inside the reader or link thread raised: the
  error is logged with its traceback and the link goes on.

A lost link (the USB cable pulled: pyserial's reader ends with the exception) is reopened
by the link's own thread after :class:`Backoff` delays, 0.25 s doubling to 5 s.

The port is opened exclusively (pyserial's ``exclusive=True``: an ``flock`` on POSIX), so
that two programs never share the board's lines: a second reader steals bytes, and every
stolen line looks like a bad cable.  When another program holds the port, the link names it
(:func:`port_users`) on the log and, through :attr:`companion.events.LinkState.notice`, on the
matrix (``"/dev/ttyACM0 is in use by minicom (pid 1234); close it"``), and tries again with
the same backoff.  Programs that read without a lock (ModemManager probing a new USB modem,
a terminal left open) cannot be kept out that way: lines lost on a connection name them on
the log, and ``systemd/99-companion-board.rules`` shows how to keep ModemManager away.  On every
connection the Pi asks for ``HELLO?`` and ``DUMP?``; a break in the board's sequence numbers
(a gap: a lost or garbled line; a number repeated or going back: a board that restarted
without a ``HELLO`` or sent lines again) asks for a dump again, at most once per
:data:`DUMP_REQUEST_INTERVAL` seconds until one arrives, and is logged once per burst as bad
lines are.  Commands echoed back to the Pi
(``loop://``) are ignored; message types from a newer minor protocol version are logged
once per type and otherwise ignored.

Logging goes to the ``companion.board`` logger.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from queue import SimpleQueue
from types import TracebackType
from typing import Any, Final, Protocol, TypeAlias

import serial
import serial.threaded

from companion import events
from companion.board.protocol import (
    SEQ_MODULO,
    VERSION,
    BoardToPi,
    Dump,
    Hello,
    LedsOff,
    LineParser,
    LineRefused,
    Message,
    RequestDump,
    RequestHello,
    SequenceCheck,
    SetLed,
    Unknown,
    encode,
)
from companion.bursts import BurstLog
from companion.errors import InvalidArgumentError, MisuseError

LOG: Final = logging.getLogger("companion.board")

BAUDRATE: Final = 115200
"""Default line speed in baud (ignored by USB CDC boards, which run at USB speed)."""

READ_TIMEOUT: Final = 0.5
"""Serial read timeout in seconds: how long a blocked read may delay :meth:`BoardLink.close`
on ports that cannot cancel a read."""

BURST_WINDOW: Final = 5.0
"""Seconds during which repeated bad lines, or repeated breaks in the board's sequence
numbers, are counted instead of logged one by one."""

DUMP_REQUEST_INTERVAL: Final = 1.0
"""Seconds between two ``DUMP?`` requests while a dump is wanted and none has arrived."""

_PI_COMMANDS: Final = (RequestDump, RequestHello, SetLed, LedsOff)

_BUSY: Final = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EBUSY})
"""Errors of an open that another program's hold on the port causes: its ``flock``
(``EWOULDBLOCK``), or its ``TIOCEXCL`` (``EBUSY``)."""

SerialPort: TypeAlias = Any
"""An open pyserial port (``serial.Serial``, or what ``serial.serial_for_url`` opens): pyserial
ships no types."""


class SerialFactory(Protocol):
    """``serial.serial_for_url`` or anything called like it: ``(url, baudrate=, timeout=,
    exclusive=)`` returning an open pyserial port."""

    def __call__(self, url: str, *, baudrate: int, timeout: float | None,
                 exclusive: bool = False) -> SerialPort: ...

Clock = Callable[[], float]
"""Seconds from an arbitrary start, like ``time.monotonic``."""


def port_users(port: str, *, proc: str = "/proc") -> list[tuple[int, str]]:
    """The other processes that have ``port`` open: ``[(pid, command name), ...]`` by pid.

    Reads the links in ``/proc/<pid>/fd`` and compares them with the port's real path (a
    ``/dev/serial/by-id`` name is a symlink).  Processes whose descriptors this user may not
    read (another user's, without privileges) are left out; this process is never listed,
    nor, for a pseudo-terminal, the process that holds its master side (``/dev/ptmx`` with
    the pty's ``tty-index`` in ``/proc/<pid>/fdinfo``): that is the board's end, a
    simulator serving the pty, not a second reader.  ``[]`` for a pyserial URL or where
    there is no ``/proc``.
    """
    if "://" in port:
        return []
    real = os.path.realpath(port)
    pts = re.fullmatch(r"/dev/pts/(\d+)", real)
    users = []
    try:
        pids = [int(name) for name in os.listdir(proc) if name.isdigit()]
    except OSError:
        return []
    for pid in sorted(pids):
        if pid == os.getpid():
            continue
        folder = os.path.join(proc, str(pid), "fd")
        try:
            links = {fd: os.readlink(os.path.join(folder, fd)) for fd in os.listdir(folder)}
            if real not in links.values():
                continue
            if pts and any(_masters(os.path.join(proc, str(pid), "fdinfo", fd), pts[1])
                           for fd, target in links.items() if target in _PTMX):
                continue  # the pty's other end: the board (a simulator), not a reader
            with open(os.path.join(proc, str(pid), "comm"), encoding="utf-8") as comm:
                users.append((pid, comm.read().strip()))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return users


_PTMX: Final = ("/dev/ptmx", "/dev/pts/ptmx")


def _masters(fdinfo: str, index: str) -> bool:
    """Whether the ``/dev/ptmx`` descriptor of ``fdinfo`` is the master of pty ``index``."""
    with open(fdinfo, encoding="ascii") as info:
        return any(line.split() == ["tty-index:", index] for line in info)


def _users_text(users: list[tuple[int, str]]) -> str:
    """``"minicom (pid 1234)"``, ``"a (pid 1) and b (pid 2)"``; ``"another program"``."""
    names = [f"{name} (pid {pid})" for pid, name in users]
    if not names:
        return "another program"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


OPEN_ERRORS: Final = (OSError, ValueError, KeyError)
"""What pyserial raises for a port it cannot open (``serial.SerialException`` is an
``OSError``; a URL it cannot parse gives ``ValueError``, a bad URL option ``KeyError``)."""

_MISSING: Final = frozenset({errno.ENOENT, errno.ENODEV, errno.ENXIO})
_NOT_A_PORT: Final = frozenset({errno.EISDIR, errno.ENOTTY, errno.EINVAL})


def _errno(error: BaseException) -> int | None:
    """The errno under pyserial's wrapping: its own, its cause's or its context's (a termios
    error, not an ``OSError``, carries it as its first argument)."""
    for link in (error, error.__cause__, error.__context__):
        code = getattr(link, "errno", None)
        if code is None and link is not None and link.args and isinstance(link.args[0], int):
            code = link.args[0]
        if code is not None:
            return int(code)
    return None


def open_problem(port: str, error: BaseException, *,
                 setting: str = "[board] port") -> tuple[str, str]:
    """Why ``port`` cannot be opened (``error``, one of :data:`OPEN_ERRORS`), and what to do,
    in words: ``("port /dev/ttyUSB9 not found", "plug the board in, or check [board] port")``.
    ``setting`` names where the port was given."""
    code = _errno(error)
    if not port:
        return "no port given", f"set {setting}"
    if code in _MISSING:
        return f"port {port} not found", f"plug the board in, or check {setting}"
    if code in (errno.EACCES, errno.EPERM):
        return f"no permission to open port {port}", "add the user to the dialout group"
    if code in _BUSY:
        return f"{port} is in use by {_users_text(port_users(port))}", "close it"
    if code in _NOT_A_PORT:
        return f"{port} is not a serial port", f"check {setting}"
    if code == errno.ECONNREFUSED:
        return f"nothing answers at {port}", "start the board's server or the simulator first"
    if port.lower().startswith("socket://") and _url_port(port) is None:
        return (f"socket:// needs host:port, and {port} has no port number",
                "give a URL such as socket://127.0.0.1:7777")
    malformed = isinstance(error.__context__, TypeError | ValueError)  # socket://x, no port
    if malformed or (isinstance(error, ValueError | KeyError) and not isinstance(error, OSError)):
        return (f"{port} is not a port pyserial knows",
                "give a device such as /dev/ttyACM0 or a URL such as socket://127.0.0.1:7777")
    inner = error.__context__
    reason = getattr(inner, "strerror", None) if isinstance(inner, OSError) else None
    if not reason:  # pyserial's own text, without the port it names again
        reason = re.sub(rf"^(\[Errno -?\d+\] )?could not open port {re.escape(port)}: ", "",
                        str(error), flags=re.IGNORECASE)
    return f"cannot open port {port}: {reason}", f"check {setting}"


def _url_port(url: str) -> int | None:
    """The port number of a URL, ``None`` when it has none or a wrong one."""
    try:
        return urllib.parse.urlsplit(url).port
    except ValueError:
        return None


class Backoff:
    """Delays between reconnection attempts, in seconds: ``first``, doubling up to ``limit``.

    >>> backoff = Backoff(0.25, 5.0)
    >>> [backoff.next() for _ in range(7)]
    [0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0]

    Raises :class:`InvalidArgumentError` unless ``0 < first <= limit``.
    """

    def __init__(self, first: float = 0.25, limit: float = 5.0) -> None:
        if not 0 < first <= limit:
            raise InvalidArgumentError(f"backoff needs 0 < first <= limit, not first={first}, "
                                       f"limit={limit}")
        self.first = first
        self.limit = limit
        self._next = first

    def next(self) -> float:
        """The delay before the next attempt; the one after it doubles (up to ``limit``)."""
        delay, self._next = self._next, min(self._next * 2, self.limit)
        return delay

    def reset(self) -> None:
        """Start again from ``first`` (after a connection that worked)."""
        self._next = self.first


class _BoardProtocol(serial.threaded.Protocol):  # type: ignore[misc]
    """One connection's reader side: parser, sequence check, dump requests.

    Runs on the reader thread.  Every callback is guarded: an exception is logged and becomes
    a :class:`companion.events.Fault`; it never ends the reader.
    """

    def __init__(self, link: BoardLink) -> None:
        self._link = link
        self._parser = LineParser()
        self._sequence = SequenceCheck()
        self._bad_lines = BurstLog(LOG, "bad line from the board", link.clock, BURST_WINDOW)
        self._breaks = BurstLog(LOG, "sequence numbers from the board", link.clock, BURST_WINDOW)
        self._unknown: set[str] = set()
        self._transport: _ReaderThread | None = None
        self._users_named = False  # the other readers named once per connection
        self._dump_wanted = False
        self._dump_requested = 0.0
        self.spoke = False
        """True once a good message arrived on this connection."""

    def connection_made(self, transport: _ReaderThread) -> None:
        with self._link._guard("the board link (connecting)"):
            self._transport = transport
            self._link._connected()
            # A newline first ends whatever half line a reset board left in its input.
            self._link._write(transport, b"\n" + encode(RequestHello()))
            self._dump_wanted = True
            self._ask_for_dump(self._link.clock(), force=True)

    def data_received(self, data: bytes) -> None:
        items: list[Message | LineRefused] = []
        with self._link._guard("the board link (parsing)"):
            items = self._parser.feed(data)
        for item in items:
            with self._link._guard("the board link (handling a message)"):
                self._handle(item)

    def connection_lost(self, exc: BaseException | None) -> None:
        with self._link._guard("the board link (disconnecting)"):
            self._bad_lines.flush()
            self._breaks.flush()
            self._link._disconnected(f"lost: {exc}" if exc else "port closed")

    def _handle(self, item: Message | LineRefused) -> None:
        now = self._link.clock()
        if isinstance(item, LineRefused):
            self._link.bad_lines += 1
            # the excerpt is printable already (\xNN for a byte): quoted, not escaped again
            self._bad_lines.report(f'{item.reason}: "{item.excerpt}"')
            self._link._post(events.BadLine(now, item.reason, item.excerpt))
            return
        self._bad_lines.quiet()
        if isinstance(item, _PI_COMMANDS):
            LOG.debug("ignored a command coming back from the port (an echo?): %r", item)
            return
        self._check_sequence(item)
        if isinstance(item, Dump):
            self._dump_wanted = False
        elif self._dump_wanted:
            self._ask_for_dump(now)
        if isinstance(item, Unknown):
            if item.kind not in self._unknown:
                self._unknown.add(item.kind)
                LOG.info("ignoring %s messages, unknown to protocol %d", item.kind, VERSION)
            return
        self.spoke = True
        self._link._post(events.BoardMessage(now, item))

    def _check_sequence(self, item: BoardToPi | Unknown) -> None:
        """A break in the sequence numbers wants a dump, and is logged once per burst.

        A gap of less than half the count's range (5000) is lines lost on the way; a number
        repeated, or one that went back, is a board that restarted without a ``HELLO`` or sent
        lines again: nothing was lost, but what the Pi knows of the board may be stale.
        """
        if isinstance(item, Hello):
            self._sequence.restart()
        if item.seq is None:
            return
        lost = self._sequence.observe(item.seq)
        if not lost:
            self._breaks.quiet()
            return
        self._dump_wanted = True
        last = (item.seq - lost - 1) % SEQ_MODULO
        if lost < SEQ_MODULO // 2:
            self._breaks.report(f"{lost} line(s) lost between seq {last} and seq {item.seq}")
            self._name_other_readers()
        elif last == item.seq:
            self._breaks.report(f"seq {item.seq} twice in a row: the board sent a line again "
                                "or restarted without a HELLO")
        else:
            self._breaks.report(f"seq {item.seq} after seq {last}: the count went back, so "
                                "the board restarted without a HELLO or sent lines again")

    def _name_other_readers(self) -> None:
        """Lost lines may be another program reading the port without a lock: name it."""
        if self._users_named:
            return
        self._users_named = True
        users = port_users(self._link.port)
        if users:
            LOG.warning("lines from the board are lost and %s also has %s open, which may be "
                        "reading them; close it", _users_text(users), self._link.port)

    def _ask_for_dump(self, now: float, *, force: bool = False) -> None:
        # The transport is set (connection_made) before anything asks for a dump.
        if self._transport is not None and (
                force or now - self._dump_requested >= DUMP_REQUEST_INTERVAL):
            self._dump_requested = now
            self._link._write(self._transport, encode(RequestDump()))


class _ReaderThread(serial.threaded.ReaderThread):  # type: ignore[misc]
    """pyserial's reader thread, which lets the ``OSError`` of ``in_waiting`` on a vanished
    device (a USB board unplugged, a pty closed) escape without ``connection_lost``: here that
    error ends the connection like any other loss."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            self.alive = False
            self.protocol.connection_lost(error)


class BoardLink:
    """The board controller on a serial port, feeding the daemon's event queue.

    ``port``: a device path or pyserial URL.  ``queue``: the daemon's one event queue.
    ``clock``: timestamps of events, in seconds (default ``time.monotonic``).
    ``baudrate`` in baud; ``read_timeout`` in seconds.  ``serial_factory`` opens the port
    (default ``serial.serial_for_url``, asked for an exclusive port; tests pass their own).
    ``backoff``: delays between reconnection attempts (default :class:`Backoff`
    ``(0.25, 5.0)``).  ``setting`` names where the port was given, for the advice when it
    cannot be opened (:func:`open_problem`).

    The link does not log its ups and downs: its ``LinkState`` events carry them, in
    words, to whoever reports them (the referee, the monitor).

    Nothing happens until :meth:`start`; :meth:`close` stops everything.  Also a context
    manager (start on enter, close on exit)::

        with BoardLink("/dev/ttyACM0", events) as link:
            link.send(SetLed("e6", "00ff00"))
    """

    def __init__(
        self,
        port: str,
        queue: SimpleQueue[events.AnyEvent],
        *,
        clock: Clock = time.monotonic,
        baudrate: int = BAUDRATE,
        read_timeout: float = READ_TIMEOUT,
        serial_factory: SerialFactory = serial.serial_for_url,
        backoff: Backoff | None = None,
        setting: str = "[board] port",
    ) -> None:
        self.port = port
        self.setting = setting
        self.open_problem: tuple[str, str] | None = None
        """Why the last attempt to open the port failed and what to do (see
        :func:`open_problem`); ``None`` once it opened."""
        self.clock = clock
        self.baudrate = baudrate
        self.read_timeout = read_timeout
        self.bad_lines = 0
        """Lines refused since the link was made (all connections)."""
        self._queue = queue
        self._serial_factory = serial_factory
        self._backoff = backoff or Backoff()
        self._lock = threading.Lock()  # link state: _up, _down_reported
        self._port_lock = threading.Lock()  # the reader's start and stop, the port's close
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._reader: _ReaderThread | None = None
        self._up = False
        self._down_reported: str | None = None  # the notice of the outage reported, if any

    @property
    def up(self) -> bool:
        """True while a port is open and its reader runs."""
        return self._up

    def start(self) -> None:
        """Start the link thread: it opens the port, and reopens it whenever it is lost.

        Raises :class:`MisuseError` when called twice.
        """
        if self._thread is not None:
            raise MisuseError("the board link is already started")
        self._thread = threading.Thread(target=self._run, name="companion-board-link")
        self._thread.daemon = True
        self._thread.start()

    def send(self, message: Message) -> bool:
        """Send one message (a Pi command: ``DUMP?``, ``LED ...``); safe from any thread.

        Returns False, after logging why, when the link is down or the write failed (the
        board is asked for a fresh dump on reconnection, so nothing needs resending then).
        Raises :class:`companion.errors.ProtocolError` for a message that cannot be encoded.
        """
        data = encode(message)
        reader = self._reader
        if reader is None or not self._up:
            LOG.debug("not sent, the board link is down: %r", message)
            return False
        return self._write(reader, data)

    def close(self) -> None:
        """Stop reading, close the port and end the link thread.  Idempotent."""
        self._stopping.set()
        with self._port_lock:
            if self._reader is not None:
                self._reader.stop()  # the link thread then closes the port
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> BoardLink:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- for the reader's protocol (same module) -----------------------------------------------

    def _post(self, event: events.AnyEvent) -> None:
        """Put ``event`` on the daemon's queue."""
        self._queue.put(event)

    def _write(self, transport: _ReaderThread, data: bytes) -> bool:
        """Write ``data`` through a reader thread (its write is thread-safe); False on failure."""
        try:
            transport.write(data)
        except (OSError, TypeError, ValueError, AttributeError) as error:
            # serial.SerialException is an OSError; a port the reader thread closed a moment
            # ago fails in pyserial with TypeError (socket://) or AttributeError/ValueError
            # (a closed file): all mean the link is going down, which the reader reports.
            LOG.warning("could not write to the board on %s: %s", self.port, error)
            return False
        return True

    def _connected(self) -> None:
        """A port is open and its reader runs: post ``LinkState(up=True)``."""
        with self._lock:
            self._up = True
            self._down_reported = None
            self.open_problem = None
        LOG.debug("board link up on %s", self.port)
        self._post(events.LinkState(self.clock(), True, f"connected to {self.port}"))

    def _disconnected(self, detail: str, notice: str = "") -> None:
        """The link is down (``detail`` says why, ``notice`` what to do, for the matrix): post
        ``LinkState(up=False)`` once per outage, and again when the notice changes (the
        board is back but another program holds the port)."""
        with self._lock:
            report = self._up or self._down_reported != notice
            self._up = False
            self._down_reported = notice
        if not report:
            LOG.debug("board link still down: %s", detail)
            return
        if self._stopping.is_set():  # we closed it: nothing is wrong
            detail = "closed"
        LOG.debug("board link down on %s: %s", self.port, detail)
        self._post(events.LinkState(self.clock(), False, detail, notice))

    @contextlib.contextmanager
    def _guard(self, where: str) -> Iterator[None]:
        """Run a block whose exception must not end a thread: log it, post a ``Fault``."""
        try:
            yield
        except Exception as error:
            LOG.exception("error in %s", where)
            self._post(
                events.Fault(self.clock(), where, str(error), {"type": type(error).__name__})
            )

    # --- the link thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            with self._guard("the board link (connecting)"):
                self._session()
            self._stopping.wait(self._backoff.next())

    def _session(self) -> None:
        """Open the port, read until the reader ends (lost or closed), close the port."""
        try:
            port = self._serial_factory(
                self.port, baudrate=self.baudrate, timeout=self.read_timeout, exclusive=True
            )
        except OPEN_ERRORS as error:
            what, remedy = open_problem(self.port, error, setting=self.setting)
            if _errno(error) in _BUSY:
                busy = f"{what}; {remedy}"
                self._disconnected(busy, busy)
                return
            self.open_problem = what, remedy
            self._disconnected(f"{what}; trying again ({remedy})")
            return
        protocol = _BoardProtocol(self)
        reader = _ReaderThread(port, lambda: protocol)
        reader.name = "companion-board-reader"
        with self._port_lock:
            if self._stopping.is_set():
                port.close()
                return
            self._reader = reader
            reader.start()
        reader.join()
        with self._port_lock:
            self._reader = None
            with contextlib.suppress(OSError):
                port.close()
        if protocol.spoke:
            self._backoff.reset()
