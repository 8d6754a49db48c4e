"""``companion scoreboard`` against a real Mosquitto (the ``broker`` fixture): the command as
an organiser runs it, fed by a client publishing tables' messages as companions do, through
a broker restarted mid-game; and its command line's refusals.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import WAIT_S, Broker
from test_scoreboard import messages, play

from companion.cli import EX_NOINPUT, EX_TERMINATED, EX_USAGE, main


class Lines:
    """A process's output read line by line on a thread; :meth:`until` waits for a line."""

    def __init__(self, stream: Any) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []

        def read() -> None:
            for line in stream:
                self.lines.put(line.rstrip("\n"))
            self.lines.put(None)  # the end

        threading.Thread(target=read, daemon=True).start()

    def until(self, wanted: str, timeout: float = WAIT_S) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {wanted!r} in {self.seen}") from None
            assert line is not None, f"the output ended before {wanted!r}: {self.seen}"
            self.seen.append(line)
            if wanted in line:
                return line


class Publisher:
    """A table's side of the broker: paho, QoS 1, every message acknowledged before the next."""

    def __init__(self, url: str, username: str = "", password: str = "") -> None:
        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion

        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"test-{username}")
        if username:
            self.client.username_pw_set(username, password)
        self.connected = threading.Event()
        self.disconnected = threading.Event()
        self.client.on_connect = lambda *_: (self.disconnected.clear(), self.connected.set())
        self.client.on_disconnect = lambda *_: (self.connected.clear(), self.disconnected.set())
        host, port = url.removeprefix("mqtt://").split(":")
        self.client.reconnect_delay_set(0.1, 0.5)
        self.client.connect(host, int(port))
        self.client.loop_start()
        assert self.connected.wait(WAIT_S)

    def send(self, sent: list[tuple[str, bytes]]) -> None:
        for topic, payload in sent:
            self.client.publish(topic, payload, qos=1,
                                retain=not topic.endswith("/step")).wait_for_publish(WAIT_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def run_scoreboard(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "companion.cli", "--log-level", "info", "scoreboard", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def scoreboard(broker: Broker) -> Iterator[tuple[subprocess.Popen[str], Lines]]:
    process = run_scoreboard("--broker", broker.url, "--listen", "127.0.0.1:0",
                             "--client-id", "test-scoreboard", "--pin", "2468")
    try:
        yield process, Lines(process.stdout)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(WAIT_S)


def test_the_scoreboard_follows_the_tables_through_a_broker_restart_and_stops_on_sigterm(
        broker: Broker, scoreboard: tuple[subprocess.Popen[str], Lines]) -> None:
    process, out = scoreboard
    assert "(organiser's PIN 2468)" in out.until("Scoreboard page: http://127.0.0.1:")
    out.until("Standings after 0 finished games")
    setup, steps, outcome = play("enceladus", 2, 9)
    sent = messages("t1", "g1", "enceladus", 2, setup, steps, ["Ann", "Bob"], states=True)
    half = 2 * (len(steps) // 2) + 1  # the header and half the steps, each with its state
    table = Publisher(broker.url)
    try:
        table.send(sent[:half])
        out.until(f"t1  unknown  enceladus  {len(steps) // 2} steps")
        broker.kill()  # mid-game; it comes back without the retained messages or sessions
        assert table.disconnected.wait(WAIT_S)
        broker.start()
        assert table.connected.wait(WAIT_S)
        table.send(sent)  # the table sends again all it is not sure of: copies are dropped
        last = out.until("-- over,")
        assert last.startswith(f"t1  unknown  enceladus  {len(steps)} steps  ")
        winner = ["Ann", "Bob"][outcome.winners[0] - 1]
        out.until("Standings after 1 finished game")
        assert out.until(f"  1. {winner}").endswith("1 played  1 won")
    finally:
        table.close()
    process.send_signal(signal.SIGTERM)
    assert process.wait(WAIT_S) == EX_TERMINATED
    errors = process.stderr.read() if process.stderr else ""
    assert "lost the broker" in errors and "Traceback" not in errors


def test_a_broker_not_up_at_start_is_said_once_and_followed_once_it_is(
        broker: Broker) -> None:
    broker.kill()
    process = run_scoreboard("--broker", broker.url, "--listen", "", "--client-id", "test-late")
    try:
        errors, out = Lines(process.stderr), Lines(process.stdout)
        assert "cannot reach the broker " + broker.url in errors.until("cannot reach")
        broker.start()
        errors.until("following the tables")  # tried again until it came
        assert not any("cannot reach" in line for line in errors.seen[1:])
        table = Publisher(broker.url)
        try:
            setup, steps, _ = play("enceladus", 2, 9)
            table.send(messages("t1", "g1", "enceladus", 2, setup, steps[:2], over=False))
            out.until("t1  unknown  enceladus  2 steps")
        finally:
            table.close()
        process.send_signal(signal.SIGTERM)
        assert process.wait(WAIT_S) == EX_TERMINATED
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(WAIT_S)


ACL = Path(__file__).resolve().parent.parent / "systemd" / "mosquitto-gardens.acl"


def test_with_the_documented_acl_the_scoreboard_logs_in_and_no_table_writes_for_another(
        tmp_path: Path) -> None:
    folder = tmp_path / "broker"
    folder.mkdir()
    secured = Broker(folder, users={"t1": "pw-1", "t2": "pw-2", "scoreboard": "pw-s"},
                     acl=ACL.read_text())
    secured.start()
    (tmp_path / "wrong").write_text("not it\n")
    (tmp_path / "secret").write_text("pw-s\n")
    refused = run_scoreboard("--broker", secured.url, "--listen", "", "--username",
                             "scoreboard", "--password-file", str(tmp_path / "wrong"))
    process = run_scoreboard("--broker", secured.url, "--listen", "", "--username",
                             "scoreboard", "--password-file", str(tmp_path / "secret"))
    out = Lines(process.stdout)
    try:
        out.until("Standings after 0 finished games")
        setup, steps, _ = play("enceladus", 2, 9)
        sent = messages("t1", "g1", "enceladus", 2, setup, steps, ["Ann", "Bob"])
        table, other = Publisher(secured.url, "t1", "pw-1"), Publisher(secured.url, "t2", "pw-2")
        try:
            table.send(sent[:3])
            other.send([("gardens/t1/step", json.dumps(  # the next line, forged: dropped
                {"v": 1, "table": "t1", "game_id": "g1", "seq": 4, "kind": "step", "n": 3,
                 "step": "z1/z2"}).encode())])
            table.send(sent[3:])
            line = out.until("-- over,")
            assert line.startswith(f"t1  unknown  enceladus  {len(steps)} steps  ")
        finally:
            table.close()
            other.close()
    finally:
        for running in (process, refused):
            running.send_signal(signal.SIGTERM)
            running.wait(WAIT_S)
        secured.kill()
    errors = refused.stderr.read() if refused.stderr else ""
    assert errors.count(f"the broker {secured.url} refused the scoreboard's login (Not "
                        "authorized): bad user name or password, see --username and "
                        "--password-file; trying again") == 1, errors
    assert errors.count("refused") == 1 and "Traceback" not in errors


@pytest.mark.parametrize(("argv", "said"), [
    (["--broker", "http://example.org"], "is not a URL such as mqtt://host:1883"),
    (["--broker", "mqtt://host:99999"], "is not a URL such as mqtt://host:1883"),
    (["--broker", "mqtt://127.0.0.1", "--topic", "gardens/#"], "is not a prefix such as"),
    (["--broker", "mqtt://127.0.0.1", "--listen", "256.1.1.1:80"], "cannot be listened on"),
    (["--broker", "mqtt://127.0.0.1", "--listen", "127.0.0.1:99999"],
     "--listen '127.0.0.1:99999' is not HOST:PORT with a port from 0 to 65535"),
    (["--broker", "mqtt://127.0.0.1", "--listen", "localhost:8x"], "is not HOST:PORT"),
    (["--broker", "mqtt://127.0.0.1", "--listen", "8090"], "is not HOST:PORT"),
    (["--broker", "mqtt://u@127.0.0.1"], "is not a URL such as mqtt://host:1883"),
])
def test_a_wrong_scoreboard_command_line_is_one_sentence(
        argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scoreboard", *argv]) == EX_USAGE
    error = capsys.readouterr().err
    assert said in error and error.count("\n") == 1 and "Traceback" not in error


@pytest.mark.parametrize(("option", "content", "status", "said"), [
    ("--password-file", None, EX_NOINPUT,
     "the password file {path} cannot be read: there is no such file"),
    ("--password-file", b"\xff\xfe", EX_NOINPUT, "the password file {path} cannot be read: "
     "it is not text"),
    ("--password-file", b"", 1, "the password file {path} cannot be read: it is empty"),
    ("--ca-file", None, EX_NOINPUT, "the CA file {path} cannot be read as a certificate"),
    ("--ca-file", b"[web]\n", 1, "the CA file {path} cannot be read as a certificate"),
])
def test_a_scoreboard_file_that_cannot_be_read_exits_as_any_input_file(
        option: str, content: bytes | None, status: int, said: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """66 for a file missing or not text, as for every input file; 1 for one that is there
    but is not what it should be (empty, not a certificate)."""
    path = tmp_path / "given"
    if content is not None:
        path.write_bytes(content)
    argv = ["--broker", "mqtts://127.0.0.1", "--username", "u", "--listen", "", option,
            str(path)]
    assert main(["scoreboard", *argv]) == status
    error = capsys.readouterr().err
    assert said.format(path=path) in error and error.count("\n") == 1

