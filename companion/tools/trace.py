"""Raw serial traces: what a board sent, byte for byte, with the time each chunk arrived.

``companion record PORT TRACE`` saves a board's stream (:func:`record`); ``companion sim
--replay TRACE`` plays it back on a pseudo-terminal or a socket at the recorded pace or
faster (:func:`replay`, :mod:`companion.sim.serve`), so a game seen once on a real board can
be refereed again and again, and a maker can send a trace with a bug report.

A trace file is text, one chunk a line, readable in any editor::

    # companion trace 1 port=/dev/ttyACM0
    0.000000 \\n
    0.003817 HELLO 0 1 mars presence pico-1a2b3c gardenboard-1.0*4E\\n
    1.004112 HB 2 1000*39\\n

Each line is the chunk's time in seconds since the recording started, a space, and the
chunk's bytes with printable ASCII kept and ``\\\\``, ``\\n``, ``\\r`` and ``\\xNN`` escapes for
the rest.  Lines starting with ``#`` are comments.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Final, TextIO

import serial

from companion.board.link import OPEN_ERRORS, SerialFactory, open_problem
from companion.board.protocol import (
    LedsOff,
    LineParser,
    LineRefused,
    RequestDump,
    RequestHello,
    SetLed,
    encode,
)
from companion.errors import InvalidArgumentError, LinkError, ProtocolError, UsageError
from companion.events import BadLine, BoardMessage, Event
from companion.files import open_output, output_error, read_text

HEADER: Final = "# companion trace 1"
"""The first line of every trace file (format version 1)."""

_ESCAPES: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r"}
_ESCAPE = re.compile(r"\\(\\|n|r|x[0-9a-fA-F]{2})")
_LINE = re.compile(r"([0-9]+\.[0-9]+) (.*)")


@dataclass(frozen=True, slots=True)
class Chunk:
    """``data`` arrived ``t`` seconds after the recording started."""

    t: float
    data: bytes


@dataclass(frozen=True, slots=True)
class Trace:
    """A recorded stream: ``chunks`` in time order; ``comments``: the header's words
    (``port=...``) and any ``#`` lines, without the ``#``."""

    chunks: tuple[Chunk, ...]
    comments: tuple[str, ...] = ()

    @property
    def data(self) -> bytes:
        """Every byte of the stream, in order."""
        return b"".join(chunk.data for chunk in self.chunks)

    @property
    def duration(self) -> float:
        """Seconds from the start to the last chunk."""
        return self.chunks[-1].t if self.chunks else 0.0


def escape(data: bytes) -> str:
    """``data`` as one line of text: printable ASCII kept, ``\\\\ \\n \\r \\xNN`` for the rest.

    >>> escape(b"F 3 L4 1*1C\\n")
    'F 3 L4 1*1C\\\\n'
    """
    return "".join(
        _ESCAPES.get(chr(b), chr(b)) if 0x20 <= b <= 0x7E or b in (0x0A, 0x0D) else f"\\x{b:02x}"
        for b in data
    )


def unescape(text: str) -> bytes:
    """The bytes :func:`escape` made ``text`` from.  Raises :class:`ProtocolError` for a lone
    backslash or a character that is not printable ASCII."""
    if _ESCAPE.sub("", text).count("\\") or not all(" " <= c <= "~" for c in text):
        raise ProtocolError(
            f"{text!r} is not an escaped chunk (printable ASCII, \\\\ \\n \\r \\xNN)")

    def one(match: re.Match[str]) -> str:
        code = match[1]
        return {"\\": "\\", "n": "\n", "r": "\r"}.get(code) or chr(int(code[1:], 16))

    return _ESCAPE.sub(one, text).encode("latin-1")


def write_trace(trace: Trace, out: TextIO) -> None:
    """Write ``trace`` in the file format (the header first)."""
    header = " ".join((HEADER, *trace.comments[:1]))
    out.write(header + "\n")
    for comment in trace.comments[1:]:
        out.write(f"# {comment}\n")
    for chunk in trace.chunks:
        out.write(f"{chunk.t:.6f} {escape(chunk.data)}\n")


def parse_trace(text: str, source: str = "<trace>") -> Trace:
    """The trace in ``text`` (the file format).

    Raises :class:`companion.errors.ProtocolError` naming ``source`` and the line for a missing
    header, a line that is not ``<seconds> <chunk>`` or times that go backwards.
    """
    lines = text.splitlines()
    if not lines or not lines[0].startswith(HEADER):
        raise ProtocolError(f"{source}: not a trace (the first line must be {HEADER!r})")
    comments = [lines[0][len(HEADER):].strip()] if lines[0][len(HEADER):].strip() else []
    chunks: list[Chunk] = []
    for number, line in enumerate(lines[1:], 2):
        if line.startswith("#") or not line.strip():
            comments += [line[1:].strip()] if line.startswith("#") else []
            continue
        match = _LINE.fullmatch(line)
        try:
            if match is None:
                raise ProtocolError("a line is <seconds> <bytes>, e.g. 0.250000 HB 2 1000*39\\n")
            chunk = Chunk(float(match[1]), unescape(match[2]))
        except ProtocolError as error:
            raise ProtocolError(f"{source}, line {number}: {error}") from None
        if chunks and chunk.t < chunks[-1].t:
            raise ProtocolError(f"{source}, line {number}: time {chunk.t} is before the line above")
        chunks.append(chunk)
    return Trace(tuple(chunks), tuple(comments))


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """The trace file at ``path``.  Raises :class:`companion.errors.InputFileError` when it
    cannot be read or is not text, :class:`ProtocolError` when it is not a trace."""
    return parse_trace(read_text(path, "trace file", encoding="ascii"), os.fspath(path))


def _refuse_other_file(path: str) -> None:
    """Raise :class:`companion.errors.UsageError` when ``path`` holds something other than a
    trace (a game journal given by mistake): a recording writes over a trace only."""
    try:
        with open(path, "rb") as existing:
            first = existing.readline(len(HEADER))
    except OSError:  # not there, or not readable: opening it for writing will say
        return
    if first and first != HEADER.encode():
        raise UsageError(f"{path} is not a trace (it does not begin with {HEADER!r}), so "
                         "record does not write over it: give another file name")


def record(
    port: str,
    out: TextIO | str | os.PathLike[str],
    *,
    seconds: float | None = None,
    stop: threading.Event | None = None,
    ask: bool = True,
    serial_factory: SerialFactory = serial.serial_for_url,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Record the board on ``port`` (a device path or pyserial URL) into ``out`` (an open
    text file, or a path: the file is made only once the port is open), one chunk a line as
    it arrives, until ``seconds`` have passed, ``stop`` is set or Ctrl-C (the
    :class:`KeyboardInterrupt` goes on once ``out`` is closed, with a note
    ``"<n> chunks recorded in <out>"``).  What was recorded stays in ``out`` however the
    recording ends.  The port is opened exclusively, as the daemon's link opens it: a second
    reader would steal lines from the program that holds the board, so a port another
    program holds is refused, naming it.

    With ``ask`` the board is first sent ``HELLO?`` and ``DUMP?``, so the trace begins with
    the whole board (and replays from a known state).  Returns the number of chunks.
    Raises :class:`companion.errors.UsageError` when ``out`` is a file that holds something
    other than a trace, :class:`companion.errors.LinkError` when the port cannot be opened or
    is lost (saying how many chunks were kept), :class:`companion.errors.OutputFileError` when the
    trace cannot be written.
    """
    if isinstance(out, str | os.PathLike):
        _refuse_other_file(os.fspath(out))
    try:
        link = serial_factory(port, baudrate=115200, timeout=0.05, exclusive=True)
    except OPEN_ERRORS as error:
        what, remedy = open_problem(port, error, setting="the port name")
        raise LinkError(f"{what} ({remedy})") from None
    chunks = 0
    with ExitStack() as stack:
        stack.callback(link.close)
        name = "the trace"
        if isinstance(out, str | os.PathLike):
            name = os.fspath(out)
            out = open_output(name, "trace file", encoding="ascii")
            stack.callback(_close, out, name)
        file = out

        def save(line: str) -> None:
            try:
                file.write(line)
                file.flush()
            except OSError as error:
                raise output_error(name, "trace file", error) from None

        def lost(error: OSError) -> LinkError:  # serial.SerialException too: unplugged
            return LinkError(f"lost the board on {port} after {chunks} chunks ({error}); "
                             f"what came before is in {name}")

        try:
            start = clock()
            save(f"{HEADER} port={port}\n")
            try:
                if ask:
                    link.write(b"\n" + encode(RequestHello()) + encode(RequestDump()))
            except OSError as error:
                raise lost(error) from None
            while (seconds is None or clock() - start < seconds) and not (stop and stop.is_set()):
                try:
                    data = link.read(max(1, link.in_waiting))
                except OSError as error:
                    raise lost(error) from None
                if data:
                    save(f"{clock() - start:.6f} {escape(data)}\n")
                    chunks += 1
        except KeyboardInterrupt as interrupt:
            interrupt.add_note(f"{chunks} chunk{'' if chunks == 1 else 's'} recorded in {name}")
            raise
    return chunks


def _close(file: TextIO, name: str) -> None:
    """Close the trace ``file``: what it still holds is written first, which may fail as
    the writes before it did (the disk full)."""
    try:
        file.close()
    except OSError as error:
        raise output_error(name, "trace file", error) from None


def replay(
    chunks: Iterable[Chunk],
    write: Callable[[bytes], None],
    *,
    speed: float = 1.0,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Write each chunk when its time comes: ``t / speed`` seconds after the call (``speed``
    10 plays ten times faster).  Returns after the last chunk, or early once ``stop`` is set.
    Raises :class:`InvalidArgumentError` unless ``speed > 0``."""
    if speed <= 0:
        raise InvalidArgumentError(f"the replay speed must be above 0, not {speed}")
    stop = stop or threading.Event()
    start = clock()
    for chunk in chunks:
        if stop.wait(max(0.0, start + chunk.t / speed - clock())):
            return
        write(chunk.data)


def board_events(trace: Trace, start: float = 0.0) -> list[Event]:
    """The events a daemon's link would queue for ``trace``: a ``BoardMessage`` per good line
    and a ``BadLine`` per refused one, stamped ``start`` + the chunk's time (Pi commands
    echoed into the trace are left out, as the link leaves them)."""
    parser = LineParser()
    out: list[Event] = []
    for chunk in trace.chunks:
        t = start + chunk.t
        for item in parser.feed(chunk.data):
            if isinstance(item, LineRefused):
                out.append(BadLine(t, item.reason, item.excerpt))
            elif not isinstance(item, RequestDump | RequestHello | SetLed | LedsOff):
                out.append(BoardMessage(t, item))
    return out
