"""The serial link, on real pseudo-terminals (the test is the board on the master side) and on
pyserial's loop://: events on the queue, garbage, lost lines, pulled cables, reconnects, faults."""

from __future__ import annotations

import errno
import logging
import os
import random
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from queue import Empty, Queue
from typing import Any, TypeVar

import pytest
import serial

from companion import events
from companion.board.link import Backoff, BoardLink, open_problem, port_users
from companion.board.protocol import (
    LAYOUTS,
    Dump,
    Heartbeat,
    Hello,
    LineParser,
    SetLed,
    Unknown,
    encode,
)
from companion.bursts import BurstLog

WAIT = 10.0  # seconds: generous bounds on waiting for threads, never asserted as durations
CONNECT_REQUESTS = b"\nHELLO?*7D\nDUMP?*33\n"


class Pty:
    """A pseudo-terminal: the link opens the slave path, the test is the board on the master."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        os.close(slave)  # the pts stays while the master is open; pyserial opens it by path
        self.pulled = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.master, view) :]

    def read_until(self, expected: bytes) -> bytes:
        """Everything the link wrote, up to and including ``expected``."""
        data = b""
        deadline = time.monotonic() + WAIT
        while expected not in data:
            assert time.monotonic() < deadline, f"the link never wrote {expected!r}: {data!r}"
            data += self._read(0.05)
        return data

    def read_available(self) -> bytes:
        """What the link has written and the test not read yet."""
        return self._read(0.0)

    def _read(self, timeout: float) -> bytes:
        if not select.select([self.master], [], [], timeout)[0]:
            return b""
        try:
            return os.read(self.master, 4096)
        except OSError as error:  # EIO until the link has opened the slave side
            if error.errno != errno.EIO:
                raise
            return b""

    def pull(self) -> None:
        """Pull the cable: close the master side."""
        if not self.pulled:
            self.pulled = True
            os.close(self.master)


class Clock:
    """A clock the test sets; read from the reader thread."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


E = TypeVar("E", bound=events.Event)


def until(queue: Queue[events.Event], kind: type[events.Event]) -> list[events.Event]:
    """The events up to and including the next one of type ``kind``; fails on a Fault or
    after WAIT seconds."""
    seen: list[events.Event] = []
    deadline = time.monotonic() + WAIT
    while not seen or not isinstance(seen[-1], kind):
        try:
            seen.append(queue.get(timeout=max(0.0, deadline - time.monotonic())))
        except Empty:
            pytest.fail(f"no {kind.__name__} event after {seen}")
        if isinstance(seen[-1], events.Fault) and kind is not events.Fault:
            pytest.fail(f"unexpected fault: {seen[-1]}")
    return seen


def next_event(queue: Queue[events.Event], kind: type[E]) -> E:
    """The next event of type ``kind``, skipping others."""
    event = until(queue, kind)[-1]
    assert isinstance(event, kind)
    return event


def drain(queue: Queue[events.Event]) -> list[events.Event]:
    out = []
    while not queue.empty():
        out.append(queue.get_nowait())
    return out


@pytest.fixture
def queue() -> Queue[events.Event]:
    return Queue()


@pytest.fixture
def ptys() -> Iterator[list[Pty]]:
    made: list[Pty] = []
    yield made
    for pty in made:
        pty.pull()


@pytest.fixture
def pty(ptys: list[Pty]) -> Pty:
    ptys.append(Pty())
    return ptys[-1]


@pytest.fixture
def make_link(queue: Queue[events.Event]) -> Iterator[Callable[..., BoardLink]]:
    links: list[BoardLink] = []

    def make(port: str, **options: Any) -> BoardLink:
        link = BoardLink(port, queue, **options)
        links.append(link)
        link.start()
        return link

    yield make
    for link in links:
        link.close()


# --- pure parts ---------------------------------------------------------------------------


def test_backoff_doubles_from_a_quarter_second_to_five() -> None:
    backoff = Backoff()
    assert [backoff.next() for _ in range(7)] == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    backoff.reset()
    assert backoff.next() == 0.25


def test_backoff_refuses_impossible_delays() -> None:
    with pytest.raises(ValueError, match="0 < first <= limit"):
        Backoff(0, 1)
    with pytest.raises(ValueError, match="0 < first <= limit"):
        Backoff(2, 1)


def test_burst_log_logs_once_per_burst_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock(0.0)
    log = BurstLog(logging.getLogger("test.burst"), "bad line", clock, window=5.0)
    with caplog.at_level(logging.WARNING, "test.burst"):
        for n in range(50):
            clock.now = n * 0.01
            log.report(f"checksum {n}")
        log.quiet()  # still inside the window: nothing yet
        assert caplog.messages == ["bad line: checksum 0"]
        clock.now = 6.0
        log.quiet()
        assert caplog.messages[1] == "bad line: 49 more in 6.0 s, the last: checksum 49"
        log.report("checksum again")
        log.flush()  # a burst of one has no count to log
        assert caplog.messages[2:] == ["bad line: checksum again"]


def test_burst_log_report_after_the_window_logs_the_count_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock(0.0)
    log = BurstLog(logging.getLogger("test.burst"), "bad line", clock, window=5.0)
    with caplog.at_level(logging.WARNING, "test.burst"):
        log.report("a")
        log.report("b")
        clock.now = 5.0
        log.report("c")
    assert caplog.messages == [
        "bad line: a",
        "bad line: 1 more in 5.0 s, the last: b",
        "bad line: c",
    ]


# --- on a real pseudo-terminal --------------------------------------------------------------


def test_link_comes_up_and_asks_for_hello_and_dump(
    pty: Pty, queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    link = make_link(pty.path, clock=Clock(7.0))
    up = next_event(queue, events.LinkState)
    assert up == events.LinkState(7.0, True, f"connected to {pty.path}")
    assert link.up
    assert pty.read_until(b"DUMP?*33\n") == CONNECT_REQUESTS


def test_board_messages_reach_the_queue_in_order(
    pty: Pty, queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    make_link(pty.path, clock=Clock(42.0))
    next_event(queue, events.LinkState)
    sent = [
        Hello(0, "1", "enceladus", "identity", "pico-1", "0.1"),
        Dump(1, ("",) * len(LAYOUTS["enceladus"])),
        Heartbeat(2, 1000),
    ]
    pty.write(b"".join(encode(message) for message in sent))
    got = [next_event(queue, events.BoardMessage) for _ in sent]
    assert got == [events.BoardMessage(42.0, message) for message in sent]


def test_garbage_yields_bad_lines_never_a_crash_and_the_next_good_line_arrives(
    pty: Pty,
    queue: Queue[events.Event],
    make_link: Callable[..., BoardLink],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "companion.board")
    link = make_link(pty.path, clock=Clock(1.0))
    next_event(queue, events.LinkState)
    rng = random.Random(2)
    garbage = [
        bytes(rng.randrange(256) for _ in range(20_000)) + b"\n",  # random bytes
        b"X" * 1_000_000 + b"\n",  # a 1 MB line
        encode(Heartbeat(1, 5))[:6] + b"\n",  # a half line
        b"HB 2 5*00\n",  # a wrong checksum
    ]
    for chunk in garbage:
        pty.write(chunk)
    pty.write(encode(Heartbeat(3, 9)))
    *bad, good = until(queue, events.BoardMessage)
    assert good == events.BoardMessage(1.0, Heartbeat(3, 9))
    reasons = [event.reason for event in bad if isinstance(event, events.BadLine)]
    assert len(reasons) == len(bad) == link.bad_lines >= 4
    assert link.up
    assert "line longer than 1024 bytes, dropped" in reasons
    assert events.BadLine(1.0, "checksum 0D expected, line says 00", "HB 2 5*00") in bad
    # the clock stands still, so this is one burst: logged once; its count comes at close
    bad_line_logs = [m for m in caplog.messages if m.startswith("bad line from the board")]
    assert len(bad_line_logs) == 1
    # each byte that is no printable ASCII as \xNN, once: not escaped again
    assert "\\\\x" not in bad_line_logs[0] and "\\x" in bad_line_logs[0]
    link.close()
    summary = f"bad line from the board: {link.bad_lines - 1} more in 0.0 s, the last: "
    assert [m for m in caplog.messages if m.startswith(summary)]


def test_lost_lines_ask_for_a_dump_once_a_second_until_one_arrives(
    pty: Pty, queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    clock = Clock(0.0)
    make_link(pty.path, clock=clock)
    next_event(queue, events.LinkState)
    assert pty.read_until(b"DUMP?*33\n") == CONNECT_REQUESTS

    def board_says(seq: int, now: float) -> bytes:
        clock.now = now
        pty.write(encode(Heartbeat(seq, 0)))
        next_event(queue, events.BoardMessage)
        return pty.read_available()

    assert board_says(1, 0.5) == b""  # the connection asked for a dump just now
    assert board_says(2, 1.2) == b"DUMP?*33\n"  # no dump yet: asked again, a second later
    assert board_says(3, 1.5) == b""
    pty.write(encode(Dump(4, ("",) * len(LAYOUTS["mars"]))))
    next_event(queue, events.BoardMessage)
    assert board_says(5, 9.0) == b""  # the dump came: nothing wanted
    assert board_says(8, 9.1) == b"DUMP?*33\n"  # 6 and 7 lost
    assert board_says(9, 9.2) == b""
    assert board_says(10, 10.2) == b"DUMP?*33\n"


def test_a_hello_restarts_the_sequence(
    pty: Pty, queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    clock = Clock(0.0)
    make_link(pty.path, clock=clock)
    next_event(queue, events.LinkState)
    pty.read_until(b"DUMP?*33\n")
    pty.write(encode(Dump(500, ("",) * len(LAYOUTS["mars"]))))
    next_event(queue, events.BoardMessage)
    clock.now = 10.0
    pty.write(encode(Hello(0, "1", "mars", "identity", "b", "f")))  # the board was reset
    next_event(queue, events.BoardMessage)
    assert pty.read_available() == b""


def test_a_repeated_or_backward_seq_is_logged_once_per_burst_and_not_as_lost_lines(
    pty: Pty,
    queue: Queue[events.Event],
    make_link: Callable[..., BoardLink],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "companion.board")
    clock = Clock(0.0)
    link = make_link(pty.path, clock=clock)
    next_event(queue, events.LinkState)
    pty.write(b"".join(encode(Heartbeat(2, n)) for n in range(50)))  # a board stuck on seq 2
    for _ in range(50):
        next_event(queue, events.BoardMessage)
    clock.now = 10.0  # a new burst
    pty.write(encode(Heartbeat(500, 0)) + encode(Heartbeat(100, 0)))
    for _ in range(2):
        next_event(queue, events.BoardMessage)
    link.close()
    breaks = [m for m in caplog.messages if m.startswith("sequence numbers from the board")]
    assert breaks == [
        "sequence numbers from the board: seq 2 twice in a row: the board sent a line again "
        "or restarted without a HELLO",
        "sequence numbers from the board: 48 more in 10.0 s, the last: seq 2 twice in a row: "
        "the board sent a line again or restarted without a HELLO",
        "sequence numbers from the board: 497 line(s) lost between seq 2 and seq 500",
        "sequence numbers from the board: 1 more in 0.0 s, the last: seq 100 after seq 500: "
        "the count went back, so the board restarted without a HELLO or sent lines again",
    ]


def test_pulling_the_pty_away_reports_the_link_down(
    pty: Pty, queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    link = make_link(pty.path, backoff=Backoff(0.05, 0.05))
    assert next_event(queue, events.LinkState).up
    pty.pull()
    down = next_event(queue, events.LinkState)
    assert isinstance(down, events.LinkState)
    assert not down.up
    assert down.detail.startswith("lost: ")
    assert not link.up
    assert not link.send(Heartbeat(1, 1))


def test_send_writes_the_line_to_the_board(
    pty: Pty, queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    link = make_link(pty.path)
    next_event(queue, events.LinkState)
    pty.read_until(b"DUMP?*33\n")
    assert link.send(SetLed("e6", "00ff00"))
    assert pty.read_until(b"\n") == encode(SetLed("e6", "00ff00"))


class RecordingBackoff(Backoff):
    def __init__(self) -> None:
        super().__init__(0.01, 0.02)
        self.calls: list[str] = []

    def next(self) -> float:
        self.calls.append("next")
        return super().next()

    def reset(self) -> None:
        self.calls.append("reset")
        super().reset()


def test_a_missing_port_is_said_once_in_words_and_not_logged_by_the_link(
    queue: Queue[events.Event], make_link: Callable[..., BoardLink], tmp_path: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = str(tmp_path / "ttyUSB9")
    caplog.set_level(logging.DEBUG, logger="companion.board")
    link = make_link(port)
    down = next_event(queue, events.LinkState)
    assert down.detail == (f"port {port} not found; trying again "
                           "(plug the board in, or check [board] port)")
    assert link.open_problem == (f"port {port} not found",
                                 "plug the board in, or check [board] port")
    # the event's reader reports it (the referee's log line, the monitor's): the link does not
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


BY_ID = "/dev/serial/by-id/usb-gardens"


@pytest.mark.parametrize(
    ("error", "problem"),
    [
        (serial.SerialException(errno.EACCES, f"could not open port {BY_ID}: [Errno 13] "
                                f"Permission denied: '{BY_ID}'"),
         (f"no permission to open port {BY_ID}", "add the user to the dialout group")),
        (serial.SerialException(errno.EBUSY, f"could not open port {BY_ID}: busy"),
         (f"{BY_ID} is in use by another program", "close it")),
        (serial.SerialException(f"could not open port {BY_ID}: no such board"),
         (f"cannot open port {BY_ID}: no such board", "check [board] port")),
        (ValueError("invalid URL, protocol 'bogus' not known"),
         (f"{BY_ID} is not a port pyserial knows",
          "give a device such as /dev/ttyACM0 or a URL such as socket://127.0.0.1:7777")),
    ],
    ids=["permission", "busy", "other", "not-a-url"],
)
def test_why_a_port_cannot_be_opened_names_the_port_once(
    error: Exception, problem: tuple[str, str]
) -> None:
    found = open_problem(BY_ID, error)
    assert found == problem
    assert " ".join(found).count(BY_ID) == 1


@pytest.mark.parametrize("url", ["socket://nohost", "socket://nohost:", "socket://nohost:x"])
def test_a_socket_url_without_a_port_number_is_said_so(url: str) -> None:
    with pytest.raises(serial.SerialException) as caught:
        serial.serial_for_url(url, timeout=0.1)
    assert open_problem(url, caught.value) == (
        f"socket:// needs host:port, and {url} has no port number",
        "give a URL such as socket://127.0.0.1:7777")


def test_reconnects_with_backoff_and_asks_the_new_board_for_hello_and_dump(
    ptys: list[Pty], queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    opened: list[dict[str, Any]] = []
    failures = 2

    def factory(url: str, **options: Any) -> serial.Serial:
        nonlocal failures
        opened.append(options)
        if failures:
            failures -= 1
            raise serial.SerialException(f"could not open port {url}: no such board")
        ptys.append(Pty())  # the board plugged in again, under another name
        return serial.serial_for_url(ptys[-1].path, **options)

    backoff = RecordingBackoff()
    make_link("/dev/serial/by-id/usb-gardens-board", serial_factory=factory, backoff=backoff)
    down = next_event(queue, events.LinkState)
    assert down == events.LinkState(
        down.t,
        False,
        "cannot open port /dev/serial/by-id/usb-gardens-board: no such board; "
        "trying again (check [board] port)",
    )
    assert next_event(queue, events.LinkState).up
    assert opened[0] == {"baudrate": 115200, "timeout": 0.5, "exclusive": True}
    assert len(opened) == 3  # two failures reported as one outage
    first = ptys[-1]
    assert first.read_until(b"DUMP?*33\n") == CONNECT_REQUESTS
    first.write(encode(Heartbeat(1, 1)))
    next_event(queue, events.BoardMessage)

    first.pull()
    lost = next_event(queue, events.LinkState)
    assert not lost.up
    assert next_event(queue, events.LinkState).up
    assert ptys[-1] is not first
    assert ptys[-1].read_until(b"DUMP?*33\n") == CONNECT_REQUESTS
    # two failed opens, then a board that spoke: the backoff starts again
    assert backoff.calls == ["next", "next", "reset", "next"]


def test_an_unexpected_error_while_opening_becomes_a_fault_and_the_link_retries(
    queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    calls = 0

    def factory(url: str, **options: Any) -> serial.Serial:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("driver bug")
        return serial.serial_for_url(url, **options)

    make_link("loop://", serial_factory=factory, backoff=Backoff(0.01, 0.01))
    fault = next_event(queue, events.Fault)
    assert fault == events.Fault(
        fault.t, "the board link (connecting)", "driver bug", {"type": "RuntimeError"}
    )
    assert next_event(queue, events.LinkState).up


# --- a port another program holds ------------------------------------------------------------

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
if sys.argv[2] == "lock":
    fcntl.flock(fd, fcntl.LOCK_EX)  # as pyserial's exclusive=True, picocom and others do
print("holding", flush=True)
sys.stdin.read()  # until the test closes our standard input
"""


class Holder:
    """Another program with the port open (a terminal left running), in its own process."""

    def __init__(self, port: str, *, lock: bool) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, port, "lock" if lock else "open"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "holding\n"
        self.pid = self.process.pid
        self.name = Path(f"/proc/{self.pid}/comm").read_text().strip()

    def release(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT)


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    made: list[Holder] = []
    yield made
    for holder in made:
        if holder.process.poll() is None:
            holder.release()


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs Linux's /proc")
def test_port_users_leaves_out_the_process_serving_the_pty(holders: list[Holder]) -> None:
    server = subprocess.Popen(  # as the simulator: the master and the slave kept open
        [sys.executable, "-c", "import os, sys; master, slave = os.openpty(); "
         "print(os.ttyname(slave), flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        path = server.stdout.readline().strip()
        assert port_users(path) == []
        holders.append(Holder(path, lock=False))  # a second reader of the slave is named
        assert port_users(path) == [(holders[0].pid, holders[0].name)]
    finally:
        server.communicate("", timeout=WAIT)


def test_port_users_names_the_other_processes_by_the_ports_real_path(
    pty: Pty, holders: list[Holder], tmp_path: Path
) -> None:
    holders.append(Holder(pty.path, lock=False))
    by_id = tmp_path / "usb-Gardens_Companion_Board-if00"
    by_id.symlink_to(pty.path)
    assert port_users(str(by_id)) == [(holders[0].pid, holders[0].name)]
    assert port_users("socket://localhost:1") == []
    holders[0].release()
    assert port_users(pty.path) == []


def test_a_port_another_program_locks_is_named_and_opened_once_it_lets_go(
    pty: Pty,
    queue: Queue[events.Event],
    make_link: Callable[..., BoardLink],
    holders: list[Holder],
) -> None:
    holder = Holder(pty.path, lock=True)
    holders.append(holder)
    make_link(pty.path, backoff=Backoff(0.05, 0.05))
    down = next_event(queue, events.LinkState)
    said = f"{pty.path} is in use by {holder.name} (pid {holder.pid}); close it"
    assert (down.up, down.notice, down.detail) == (False, said, said)
    holder.release()  # the terminal closed: the next attempt opens the port
    assert next_event(queue, events.LinkState).up
    assert pty.read_until(b"DUMP?*33\n") == CONNECT_REQUESTS


def test_a_program_that_locks_the_port_after_an_outage_is_reported_though_the_outage_was(
    pty: Pty,
    queue: Queue[events.Event],
    make_link: Callable[..., BoardLink],
    holders: list[Holder],
) -> None:
    failures = 2

    def factory(url: str, **options: Any) -> serial.Serial:
        nonlocal failures
        if failures:
            failures -= 1
            if not failures:  # the board is back, but a terminal took the port first
                holders.append(Holder(pty.path, lock=True))
            raise serial.SerialException(errno.ENOENT, f"could not open port {url}")
        return serial.serial_for_url(url, **options)

    make_link(pty.path, serial_factory=factory, backoff=Backoff(0.02, 0.02))
    assert next_event(queue, events.LinkState).notice == ""  # no board: the usual outage
    busy = next_event(queue, events.LinkState)
    assert not busy.up and f"(pid {holders[0].pid}); close it" in busy.notice
    holders[0].release()
    assert next_event(queue, events.LinkState).up


def test_lines_lost_while_another_program_reads_the_port_name_it_on_the_log(
    pty: Pty,
    queue: Queue[events.Event],
    make_link: Callable[..., BoardLink],
    holders: list[Holder],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "companion.board")
    holder = Holder(pty.path, lock=False)  # reads without a lock: the open cannot tell
    holders.append(holder)
    make_link(pty.path)
    assert next_event(queue, events.LinkState).up
    pty.write(encode(Heartbeat(1, 1)) + encode(Heartbeat(4, 2)) + encode(Heartbeat(9, 3)))
    for _ in range(3):
        next_event(queue, events.BoardMessage)
    named = [m for m in caplog.messages if f"(pid {holder.pid})" in m]
    assert named == [f"lines from the board are lost and {holder.name} (pid {holder.pid}) "
                     f"also has {pty.path} open, which may be reading them; close it"]


# --- on loop:// (what the link sends comes back to it) ----------------------------------------


def test_loop_url_echoes_of_commands_are_ignored_and_board_lines_arrive(
    queue: Queue[events.Event], make_link: Callable[..., BoardLink]
) -> None:
    link = make_link("loop://", clock=Clock(3.0))
    next_event(queue, events.LinkState)
    assert link.send(Heartbeat(1, 20))  # looped back as if the board had sent it
    assert next_event(queue, events.BoardMessage) == events.BoardMessage(3.0, Heartbeat(1, 20))
    assert drain(queue) == []  # HELLO? and DUMP? came back too, and were not queued


def test_unknown_message_types_are_logged_once_and_not_queued(
    queue: Queue[events.Event],
    make_link: Callable[..., BoardLink],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "companion.board")
    link = make_link("loop://")
    next_event(queue, events.LinkState)
    link.send(Unknown("TILT", ("1", "30")))
    link.send(Unknown("TILT", ("2", "31")))
    link.send(Heartbeat(3, 20))
    assert next_event(queue, events.BoardMessage).message == Heartbeat(3, 20)
    assert drain(queue) == []
    notes = [m for m in caplog.messages if "TILT" in m]
    assert notes == ["ignoring TILT messages, unknown to protocol 1"]


def test_an_error_inside_the_reader_is_logged_becomes_a_fault_and_reading_goes_on(
    queue: Queue[events.Event],
    make_link: Callable[..., BoardLink],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    feed = LineParser.feed
    failed = threading.Event()

    def broken_once(self: LineParser, data: bytes) -> list[Any]:
        if not failed.is_set():
            failed.set()
            raise RuntimeError("sensor table corrupt")
        return feed(self, data)

    monkeypatch.setattr(LineParser, "feed", broken_once)
    link = make_link("loop://")
    fault = next_event(queue, events.Fault)
    assert fault == events.Fault(
        fault.t, "the board link (parsing)", "sensor table corrupt", {"type": "RuntimeError"}
    )
    assert any(record.exc_info for record in caplog.records if record.name == "companion.board")
    link.send(Heartbeat(1, 1))
    assert next_event(queue, events.BoardMessage).message == Heartbeat(1, 1)


def test_send_before_start_and_after_close_returns_false(queue: Queue[events.Event]) -> None:
    link = BoardLink("loop://", queue)
    assert not link.send(Heartbeat(1, 1))
    with link:
        next_event(queue, events.LinkState)
        assert link.send(Heartbeat(1, 1))
    assert not link.send(Heartbeat(2, 1))


def test_close_posts_link_down_and_ends_every_thread(queue: Queue[events.Event]) -> None:
    link = BoardLink("loop://", queue, clock=Clock(5.0))
    link.start()
    next_event(queue, events.LinkState)
    link.close()
    assert next_event(queue, events.LinkState) == events.LinkState(5.0, False, "closed")
    assert not [t for t in threading.enumerate() if t.name.startswith("companion-board")]
    link.close()  # idempotent


def test_start_twice_is_refused(queue: Queue[events.Event]) -> None:
    with BoardLink("loop://", queue) as link, pytest.raises(RuntimeError, match="already"):
        link.start()


def test_a_write_racing_the_reader_closing_a_socket_port_is_a_failed_send_not_a_crash(
    queue: Queue[events.Event],
) -> None:
    import socket

    import serial

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = serial.serial_for_url(f"socket://127.0.0.1:{server.getsockname()[1]}", timeout=0.1)
    peer, _ = server.accept()
    # Freeze the race seen with a socket:// board: pyserial's close() has dropped the socket
    # but the port still says it is open when the referee's dump request is written.
    port._socket.close()
    port._socket = None
    link = BoardLink("socket://x", queue)
    assert link._write(port, b"DUMP?*33\n") is False
    peer.close()
    server.close()
