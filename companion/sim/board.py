"""The simulated board controller: protocol v1 over a pseudo-terminal.

A :class:`VirtualBoard` behaves like the reference firmware on a real board: on connect it
says hello and dumps every cell; it sends a field update on every change and a heartbeat every
second; it answers ``DUMP?`` and ``HELLO?``.  It writes to the master side of a real
pseudo-terminal (``os.openpty``); the daemon opens the slave side with pyserial like any USB
serial device, so nothing in the daemon knows the board is simulated.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
import tty
from collections.abc import Mapping, Sequence
from dataclasses import replace

from companion.board import protocol
from companion.referee.recognition import sensed
from companion.rules.base import EMPTY, Cell, Piece

log = logging.getLogger("companion.sim")


class VirtualBoard:
    """A board controller on a pseudo-terminal.

    ``layout``: the layout name it announces; ``cells``: its cells in dump order; ``board``:
    the pieces standing on it at power-on.  ``port`` is the path for the daemon to open.
    ``heartbeat_s``: seconds between heartbeats.  ``sensing="presence"`` reports only
    empty/occupied, like a board of reed switches.  Use as a context manager or call ``close``.
    """

    def __init__(
        self,
        layout: str,
        cells: Sequence[Cell],
        board: Mapping[Cell, Piece],
        *,
        sensing: str = "identity",
        board_id: str = "SIM-0001",
        heartbeat_s: float = 1.0,
    ) -> None:
        self.layout = layout
        self.cells = tuple(cells)
        self.board: dict[Cell, Piece] = {c: board.get(c, EMPTY) for c in self.cells}
        self.sensing = sensing
        self.board_id = board_id
        self.heartbeat_s = heartbeat_s
        self.master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line editing: bytes pass as they are
        self.port = os.ttyname(slave)
        self._slave = slave  # kept open so the pty survives between the daemon's opens
        self._seq = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._wake_read, self._wake_write = os.pipe()  # close() wakes the blocked reader
        self._started = time.monotonic()
        self.requests: list[object] = []
        self._reader = threading.Thread(
            target=self._read_requests, name="sim-board-rx", daemon=True
        )
        self._beat = threading.Thread(target=self._heartbeats, name="sim-board-hb", daemon=True)

    def __enter__(self) -> VirtualBoard:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Power on: hello, a dump, then heartbeats and answers to requests."""
        self.send(self._hello())
        self.send_dump()
        self._reader.start()
        self._beat.start()

    # ------------------------------------------------------------------ board -> Pi
    def _next_seq(self) -> int:
        seq = self._seq
        self._seq = (self._seq + 1) % protocol.SEQ_MODULO
        return seq

    def _hello(self) -> protocol.Hello:
        return protocol.Hello(
            seq=0,
            version=str(protocol.VERSION),
            layout=self.layout,
            sensing=self.sensing,
            board_id=self.board_id,
            firmware="sim-1",
        )

    def send(self, message: object) -> None:
        """Frame and write one message, giving it the next sequence number."""
        with self._lock:
            if hasattr(message, "seq"):
                message = replace(message, seq=self._next_seq())  # type: ignore[type-var]
            self.write_raw(protocol.encode(message))  # type: ignore[arg-type]

    def write_raw(self, data: bytes) -> None:
        """Write bytes as they are (garbage tests use this)."""
        if self._closed.is_set():
            return
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.master, view)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            except OSError:
                return
            view = view[written:]

    def _sense(self, piece: Piece) -> Piece:
        return sensed(piece) if self.sensing == "presence" else piece

    def send_dump(self) -> None:
        self.send(
            protocol.Dump(seq=0, pieces=tuple(self._sense(self.board[c]) for c in self.cells))
        )

    def put(self, cell: Cell, piece: Piece) -> None:
        """A piece arrives on or leaves ``cell``: update the sensor and report the change
        (nothing to report when the sensor reads the same, as a presence sensor does when one
        piece replaces another)."""
        before = self.board.get(cell, EMPTY)
        self.board[cell] = piece
        if self._sense(before) != self._sense(piece):
            self.send(protocol.FieldUpdate(seq=0, cell=cell, piece=self._sense(piece)))

    def put_all(self, pieces: Mapping[Cell, Piece]) -> None:
        """Many pieces arrive or leave at once (a hand sweeping the board back to a
        position): as :meth:`put` for each cell, their field updates in one write, so the
        referee reads them together and no part of them stands long enough to be a step."""
        frames = []
        with self._lock:
            for cell, piece in pieces.items():
                before = self.board.get(cell, EMPTY)
                self.board[cell] = piece
                if self._sense(before) != self._sense(piece):
                    frames.append(protocol.encode(protocol.FieldUpdate(
                        seq=self._next_seq(), cell=cell, piece=self._sense(piece))))
            self.write_raw(b"".join(frames))

    def _heartbeats(self) -> None:
        while not self._closed.wait(self.heartbeat_s):
            uptime = int((time.monotonic() - self._started) * 1000) % protocol.UPTIME_MODULO
            self.send(protocol.Heartbeat(seq=0, uptime_ms=uptime))

    # ------------------------------------------------------------------ Pi -> board
    def _read_requests(self) -> None:
        parser = protocol.LineParser()
        while not self._closed.is_set():
            # Block until the daemon writes or close() wakes us: a read blocked on the master
            # would keep the pseudo-terminal open after close().
            ready, _, _ = select.select([self.master, self._wake_read], [], [])
            if self._wake_read in ready:
                return
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if not data:
                return
            for message in parser.feed(data):
                self.requests.append(message)
                if isinstance(message, protocol.RequestDump):
                    self.send_dump()
                elif isinstance(message, protocol.RequestHello):
                    self.send(self._hello())

    def close(self) -> None:
        """Power off: stop the threads and close the pseudo-terminal."""
        if self._closed.is_set():
            return
        self._closed.set()
        os.write(self._wake_write, b"x")
        if self._reader.is_alive():
            self._reader.join(timeout=2)
        for fd in (self.master, self._slave, self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
