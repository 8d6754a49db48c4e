"""Trace record and replay (companion.tools.trace, companion sim --replay): the file format, the
corpus in tests/traces replayed with its committed steps asserted, and the acceptance test:
a recorded trace replays through a pty into the daemon to exactly the same steps at 1x and 10x.
"""

from __future__ import annotations

import fcntl
import io
import os
import re
import threading
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion.board import protocol
from companion.daemon.service import build
from companion.errors import LinkError, OutputFileError, ProtocolError, UsageError
from companion.events import BadLine, BoardMessage
from companion.sim.demo import demo_config
from companion.sim.scenario import drive, read_scenario, scenario_referee
from companion.sim.serve import ServedBoard, replay_trace
from companion.tools.trace import (
    HEADER,
    Chunk,
    Trace,
    board_events,
    escape,
    parse_trace,
    read_trace,
    record,
    replay,
    unescape,
    write_trace,
)
from tests.conftest import file_size_limit

HERE = Path(__file__).parent
TRACES = sorted((HERE / "traces").glob("*.trace"))


def scenario_of(trace: Path) -> Path:
    """Each trace was recorded from the scenario of the same name."""
    return HERE / "scenarios" / trace.with_suffix(".scenario").name


def test_escape_keeps_lines_readable_and_round_trips_every_byte() -> None:
    assert escape(b"F 3 L4 1*1C\n") == "F 3 L4 1*1C\\n"
    assert escape(b"a\\b\r\x00\xff") == "a\\\\b\\r\\x00\\xff"
    every = bytes(range(256))
    assert unescape(escape(every)) == every


@pytest.mark.parametrize("text", ["a\\", "\\q", "é"])
def test_unescape_refuses_what_escape_never_writes(text: str) -> None:
    with pytest.raises(ValueError):
        unescape(text)


def test_trace_file_round_trips() -> None:
    trace = Trace((Chunk(0.0, b"\n"), Chunk(0.25, b"HB 2 1000*39\n"), Chunk(1.5, b"\x07")),
                  ("port=/dev/ttyACM0", "a note"))
    out = io.StringIO()
    write_trace(trace, out)
    assert out.getvalue().splitlines()[:3] == [
        "# companion trace 1 port=/dev/ttyACM0", "# a note", "0.000000 \\n"]
    assert parse_trace(out.getvalue()) == trace


@pytest.mark.parametrize(
    ("text", "problem"),
    [("0.1 HB\n", "not a trace"),
     ("# companion trace 1\n0.5 a\\n\nsoon b\n", "t.trace, line 3: a line is <seconds> <bytes>"),
     ("# companion trace 1\n0.5 a\n0.4 b\n", "line 3: time 0.4 is before the line above"),
     ("# companion trace 1\n0.5 a\\z\n", "line 2: 'a\\\\z' is not an escaped chunk")],
)
def test_a_broken_trace_file_is_named_line_by_line(text: str, problem: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(problem)):
        parse_trace(text, "t.trace")


def test_replay_writes_each_chunk_at_its_time_divided_by_the_speed() -> None:
    now = [0.0]
    written: list[tuple[float, bytes]] = []

    class Clock:
        """A virtual clock: waiting moves it on."""

        def wait(self, seconds: float) -> bool:
            now[0] += seconds
            return False

    stop = threading.Event()
    stop.wait = Clock().wait  # type: ignore[method-assign]
    chunks = (Chunk(0.0, b"a"), Chunk(1.0, b"b"), Chunk(3.0, b"c"))
    replay(chunks, lambda data: written.append((now[0], data)), speed=10, stop=stop,
           clock=lambda: now[0])
    assert written == [(0.0, b"a"), (pytest.approx(0.1), b"b"), (pytest.approx(0.3), b"c")]


def test_board_events_parse_the_stream_as_the_link_does() -> None:
    trace = Trace((Chunk(0.5, b"HB 2 10"), Chunk(0.6, b"00*39\nDUMP?*33\nHB 3 x*00\n")))
    events = board_events(trace, start=10.0)
    assert events[0] == BoardMessage(10.6, protocol.Heartbeat(2, 1000))
    assert isinstance(events[1], BadLine) and len(events) == 2


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_corpus_trace_commits_its_scenarios_steps(path: Path) -> None:
    scenario = read_scenario(scenario_of(path))
    events = board_events(read_trace(path))
    run = drive(scenario_referee(scenario), events, events[-1].t + 3.0)
    assert run.committed == scenario.expected


def test_record_never_writes_over_a_file_that_is_not_a_trace(tmp_path: Path) -> None:
    """A game journal (or any other file) given as the trace by mistake is kept as it was;
    an earlier trace and an empty file are written over."""
    journal = tmp_path / "game.jsonl"
    journal.write_text('{"journal":2,"game":"enceladus"}\n')
    with pytest.raises(UsageError, match=f"^{re.escape(str(journal))} is not a trace"):
        record("loop://", journal, seconds=0.01)
    assert journal.read_text() == '{"journal":2,"game":"enceladus"}\n'
    for earlier in (f"{HEADER} port=loop://\n", ""):
        trace = tmp_path / "earlier.trace"
        trace.write_text(earlier)
        record("loop://", trace, seconds=0.01)
        assert trace.read_text().startswith(HEADER)


def test_record_refuses_a_port_another_program_has_locked(tmp_path: Path) -> None:
    """A second reader steals lines from the daemon or the monitor that holds the board (and
    records a trace with gaps), so record locks the port as they do and names the holder."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    try:
        fcntl.flock(slave, fcntl.LOCK_EX)  # as the daemon's exclusive open does
        trace = tmp_path / "board.trace"
        with pytest.raises(LinkError) as raised:
            record(path, trace, seconds=0.01)
        assert str(raised.value) == f"{path} is in use by another program (close it)"
        assert not trace.exists()
    finally:
        os.close(slave)
        os.close(master)


def test_record_saves_what_the_board_sends_after_asking_for_hello_and_dump() -> None:
    scenario = read_scenario(HERE / "scenarios" / "enceladus-4-steps.scenario")
    out = io.StringIO()
    stop = threading.Event()
    with ServedBoard("pty", scenario.layout, scenario.rules().board(scenario.setup())) as board:
        recorder = threading.Thread(target=record, args=(board.port, out), kwargs={"stop": stop})
        recorder.start()
        assert board.wait_for_host(10)
        board.play(replace(scenario, actions=scenario.actions[:2]), speed=5)
        board.board.send(protocol.Heartbeat(0, 1))  # the last line: the recording has it all
        for _ in range(200):
            if b"HB" in parse_trace(out.getvalue()).data:
                break
            stop.wait(0.05)
        stop.set()
        recorder.join()
    trace = parse_trace(out.getvalue())
    messages = [e.message for e in board_events(trace) if isinstance(e, BoardMessage)]
    kinds = [type(m).__name__ for m in messages if not isinstance(m, protocol.Heartbeat)]
    assert kinds[:3] == ["Hello", "Dump", "FieldUpdate"]
    assert isinstance(board.board.requests[0], protocol.RequestHello)


@pytest.mark.parametrize("speed", [1.0, 10.0])
def test_recorded_trace_replays_through_a_pty_to_the_same_steps(
    speed: float, tmp_path: Path, pin_factory: Any
) -> None:
    path = HERE / "traces" / "enceladus-4-steps.trace"
    scenario = read_scenario(scenario_of(path))
    expected = scenario.expected
    ports: list[str] = []
    ready = threading.Event()
    stop = threading.Event()

    def on_ready(port: str) -> None:
        ports.append(port)
        ready.set()

    player = threading.Thread(target=replay_trace, args=("pty", read_trace(path)),
                              kwargs={"speed": speed, "stop": stop, "on_ready": on_ready})
    player.start()
    assert ready.wait(10)
    config = demo_config("enceladus", scenario.players, scenario.seed, "hexagonal",
                         tmp_path / "journal")
    # Time itself runs 10 times faster at 10x: so do the daemon's debounce and settle times.
    timings = {"debounce_ms": round(20 / speed), "settle_ms": round(400 / speed)}
    config = replace(config, board=replace(config.board, port=ports[0], **timings))
    committed: list[str] = []
    with ExitStack() as stack:
        stack.callback(player.join)
        stack.callback(stop.set)
        service = build(config, stack, pin_factory=pin_factory)

        def on_commit(effect: object) -> None:
            committed.append(effect.step)  # type: ignore[attr-defined]
            if len(committed) == len(expected):
                service.stop("all steps committed")

        service.commit_listeners.append(on_commit)
        timeout = threading.Timer(read_trace(path).duration / speed + 15, service.stop)
        timeout.start()
        stack.callback(timeout.cancel)
        service.run()
    assert committed == expected


def test_record_on_a_full_disk_says_so_in_a_sentence(tmp_path: Path) -> None:
    trace = tmp_path / "board.trace"
    with file_size_limit(8), pytest.raises(OutputFileError) as raised:
        record("loop://", trace, seconds=0.2)  # not even the header fits
    assert str(raised.value) == f"cannot write the trace file {trace}: file too large"
