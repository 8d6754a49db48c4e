"""The table on a real Mosquitto (the ``broker`` fixture): every journal line reaches a
subscriber, in journal order, exactly once after dropping the seqs seen before, whatever
happens to the broker, the network or the companion.

Most tests write a real journal (:class:`Table`, legal steps of a seeded game) and publish it
with :class:`companion.mqtt.publisher.Publisher`; the daemon's own tests are in
tests/test_mqtt_daemon.py.  Waits are bounded and end on what the listener receives or the
broker acknowledges, never on the machine's speed.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import random
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import WAIT_S, Broker, Listener, certificates

from companion import journal as journal_mod
from companion.config import MqttConfig
from companion.errors import ConfigError
from companion.mqtt.messages import GameFeed, Topics, ranks, score
from companion.mqtt.publisher import ACKED, Publisher
from companion.rules import load as load_rules

FAST = (0.05, 0.2)
"""Reconnect waits for the tests (seconds): the broker is on this machine."""


LAYOUTS = {"enceladus": "enceladus", "mars": "mars", "uranus": "uranus-hexagonal"}


class Table:
    """A game journal in ``directory`` written as the daemon writes it: a seeded game
    (Gardens of Enceladus unless ``game`` says) whose steps are drawn from the legal ones."""

    def __init__(self, directory: Path, seed: int = 3, players: int = 2,
                 game: str = "enceladus") -> None:
        self.rules = load_rules(game).RULES
        options = {"board": "hexagonal"} if game == "uranus" else {}
        self.state = self.rules.new_game(players, seed, options)
        self.history: list[Any] = []
        self.rng = random.Random(seed)
        header = {"game": game, "layout": LAYOUTS[game], "players": players, "seed": seed,
                  "options": options, "setup": self.rules.format_position(self.state)}
        self.journal = journal_mod.Journal.create(directory, header, fsync=False)
        self.game_id = self.journal.path.name.removesuffix(".jsonl")

    @property
    def seq(self) -> int:
        """The seq of the journal's last line."""
        return len(journal_mod.read(self.journal.path).lines)

    def step(self) -> None:
        steps = list(self.rules.legal_steps(self.state))
        step = self.rng.choice(steps)
        player = self.rules.to_move(self.state)
        self.journal.step(len(self.history) + 1, player, self.rules.format_step(self.state, step))
        self.history.append(self.state)
        self.state = self.rules.apply(self.state, step)

    def undo(self) -> None:
        self.journal.undo(len(self.history))
        self.state = self.history.pop()

    def play_out(self) -> None:
        """Steps until the game is over, then its end line."""
        while (outcome := self.rules.outcome(self.state)) is None:
            self.step()
        self.journal.finish(outcome)


class Acks:
    """The ``(game_id, seq)`` the broker has acknowledged, awaited with a bound."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []
        self.changed = threading.Condition()

    def __call__(self, game_id: str, seq: int) -> None:
        with self.changed:
            self.seen.append((game_id, seq))
            self.changed.notify_all()

    def wait_for(self, game_id: str, seq: int) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: (game_id, seq) in self.seen, WAIT_S)


def settings(broker: Broker, **keys: Any) -> MqttConfig:
    return MqttConfig(broker=broker.url, table=keys.pop("table", "t1"), **keys)


@pytest.fixture
def listener(broker: Broker) -> Iterator[Listener]:
    heard = Listener(broker.url)
    yield heard
    heard.close()


def steps_heard(heard: Listener, table: str = "t1") -> list[dict[str, Any]]:
    """The step messages of ``table``, each seq kept the first time it came (the dedup every
    consumer does)."""
    seen: set[tuple[str, int]] = set()
    kept = []
    for payload in heard.on(f"gardens/{table}/step"):
        step = json.loads(payload)
        if (step["game_id"], step["seq"]) not in seen:
            seen.add((step["game_id"], step["seq"]))
            kept.append(step)
    return kept


def journal_steps(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(seq, entry)`` of every line after the header of the journal at ``path``."""
    return list(enumerate((line.entry for line in journal_mod.read(path).lines[1:]), 2))


def same_as_journal(heard: Listener, path: Path, table: str = "t1") -> bool:
    """Whether the steps heard, once each, are the journal's lines after its header, in
    order."""
    kinds = {"step": "step", "undo": "undo", "over": "over"}
    want = [(seq, next(kinds[k] for k in entry if k in kinds))
            for seq, entry in journal_steps(path)]
    return [(s["seq"], s["kind"]) for s in steps_heard(heard, table)] == want


def last_state(heard: Listener, table: str = "t1") -> dict[str, Any]:
    payloads = heard.on(f"gardens/{table}/state")
    return json.loads(payloads[-1]) if payloads else {}


def test_every_journal_line_reaches_the_broker_once_and_in_order(
    tmp_path: Path, broker: Broker, listener: Listener
) -> None:
    table = Table(tmp_path)
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(table.journal.path)
    try:
        for _ in range(4):
            table.step()
            publisher.journal_written(table.journal.path)
        table.undo()
        publisher.journal_written(table.journal.path)
        table.play_out()
        publisher.journal_written(table.journal.path)
        assert acks.wait_for(table.game_id, table.seq)
    finally:
        publisher.close()
    assert listener.wait(lambda: listener.on("gardens/t1/status")[-1:] == [b"offline"])
    assert same_as_journal(listener, table.journal.path)
    heard = steps_heard(listener)
    assert [s["kind"] for s in heard[:6]] == ["step"] * 4 + ["undo", "step"]
    assert heard[4]["n"] == 4 and heard[5]["n"] == 4  # step 4 taken back, then made again
    assert all(s["v"] == 1 and s["table"] == "t1" and s["game_id"] == table.game_id
               for s in heard)
    game = json.loads(listener.on("gardens/t1/game")[0])
    assert game["players"] == 2 and game["names"] == ["", ""] and game["game"] == "enceladus"
    assert game["setup"] == journal_mod.read(table.journal.path).header["setup"]
    state = last_state(listener)
    outcome = table.rules.outcome(table.state)
    assert state["over"] and state["to_move"] is None and state["seq"] == table.seq
    assert state["winners"] == list(outcome.winners)
    assert state["scores"] == [text for _, text in table.rules.status(table.state)]
    assert state["steps"] == len(table.history)
    record = journal_mod.read(table.journal.path)
    assert state["history"] == [entry["step"] for entry in record.steps]  # undos taken off
    assert json.loads(acks_file(tmp_path))["games"] == {table.game_id: table.seq}


def acks_file(directory: Path) -> str:
    return (directory / ACKED).read_text()


def test_the_retained_messages_tell_a_late_subscriber_where_the_table_stands(
    tmp_path: Path, broker: Broker
) -> None:
    table = Table(tmp_path)
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(table.journal.path)
    try:
        for _ in range(3):
            table.step()
            publisher.journal_written(table.journal.path)
        assert acks.wait_for(table.game_id, table.seq)
        late = Listener(broker.url, "gardens/#")
        try:
            assert late.wait(lambda: len({t for t, _, retained in late.messages if retained})
                             == 3)
            retained = {t: p for t, p, r in late.messages if r}
        finally:
            late.close()
    finally:
        publisher.close()
    assert retained["gardens/t1/status"] == b"online"
    assert json.loads(retained["gardens/t1/state"])["seq"] == table.seq == 4
    assert json.loads(retained["gardens/t1/state"])["to_move"] == table.rules.to_move(table.state)
    assert json.loads(retained["gardens/t1/game"])["game_id"] == table.game_id


def test_a_broker_killed_mid_game_gets_every_step_once_it_is_back(
    tmp_path: Path, broker: Broker, listener: Listener
) -> None:
    table = Table(tmp_path)
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(table.journal.path)
    try:
        for _ in range(3):
            table.step()
            publisher.journal_written(table.journal.path)
        assert acks.wait_for(table.game_id, table.seq)
        listener.close()
        broker.kill()
        for _ in range(5):  # the steps wait in the journal
            table.step()
            publisher.journal_written(table.journal.path)
        broker.start()
        back = Listener(broker.url)
        try:
            table.step()
            publisher.journal_written(table.journal.path)
            assert acks.wait_for(table.game_id, table.seq)
            assert back.wait(lambda: last_state(back).get("seq") == table.seq)
            before = {seq for seq, _ in journal_steps(table.journal.path)[:3]}
            after = [s["seq"] for s in steps_heard(back) if s["seq"] not in before]
            assert after == [seq for seq, _ in journal_steps(table.journal.path)[3:]]
            # the broker lost its retained messages: the game is published again
            assert json.loads(back.on("gardens/t1/game")[-1])["game_id"] == table.game_id
            assert back.on("gardens/t1/status")[-1] == b"online"
        finally:
            back.close()
    finally:
        publisher.close()


def test_a_cut_connection_loses_no_step_and_repeats_none(
    tmp_path: Path, broker: Broker, listener: Listener
) -> None:
    table = Table(tmp_path)
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(table.journal.path)
    try:
        for n in range(12):
            if n in (3, 8):  # connected, a step on its way: the socket is shut under paho
                assert acks.wait_for(table.game_id, table.seq)
                table.step()
                publisher.journal_written(table.journal.path)
                connection = publisher.client.socket()
                assert isinstance(connection, socket.socket)
                connection.shutdown(socket.SHUT_RDWR)
            table.step()
            publisher.journal_written(table.journal.path)
        assert acks.wait_for(table.game_id, table.seq)
    finally:
        publisher.close()
    assert listener.wait(lambda: same_as_journal(listener, table.journal.path))
    assert listener.on("gardens/t1/status").count(b"online") >= 2  # it did connect again


def test_a_publisher_started_again_sends_what_the_broker_never_acknowledged(
    tmp_path: Path, broker: Broker, listener: Listener
) -> None:
    table = Table(tmp_path)
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(table.journal.path)
    for _ in range(2):
        table.step()
        publisher.journal_written(table.journal.path)
    assert acks.wait_for(table.game_id, table.seq)
    broker.kill()
    for _ in range(3):
        table.step()
        publisher.journal_written(table.journal.path)
    publisher.close()  # the companion stops with three steps the broker never had
    assert json.loads(acks_file(tmp_path))["games"] == {table.game_id: 3}
    broker.start()
    heard = Listener(broker.url)
    acks = Acks()
    again = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    again.start(table.journal.path)
    try:
        assert acks.wait_for(table.game_id, table.seq)
        assert heard.wait(lambda: [s["seq"] for s in steps_heard(heard)] == [4, 5, 6])
    finally:
        again.close()
        heard.close()



ACL = Path(__file__).resolve().parent.parent / "systemd" / "mosquitto-gardens.acl"


def test_with_the_documented_acl_a_table_writes_only_its_own_topics(tmp_path: Path) -> None:
    folder = tmp_path / "broker"
    folder.mkdir()
    users = {"t1": "pw-1", "t2": "pw-2", "homeassistant": "pw-h"}
    secured = Broker(folder, users=users, acl=ACL.read_text())
    secured.start()
    try:
        board = Listener(secured.url, "#", username="homeassistant", password="pw-h")
        table = Table(tmp_path / "t1")
        (tmp_path / "secret").write_text("pw-1\n")
        acks = Acks()
        publisher = Publisher.from_config(
            settings(secured, username="t1", password_file=str(tmp_path / "secret")),
            tmp_path / "t1", reconnect_s=FAST, on_acked=acks)
        publisher.start(table.journal.path)
        try:
            table.step()
            publisher.journal_written(table.journal.path)
            assert acks.wait_for(table.game_id, table.seq)
            # t1, logged in as itself, tries table t2's topics and Home Assistant's of t2, then
            # its own: one client's messages arrive in order, so once its own is heard, the
            # others would have been.
            for topic in ("gardens/t2/state", "gardens/t2/status",
                          "homeassistant/sensor/gardens_t2/game/config", "gardens/t1/step"):
                info = publisher.client.publish(topic, b'{"v":1,"hostile":true}', qos=1)
                info.wait_for_publish(WAIT_S)
            assert board.wait(lambda: b'{"v":1,"hostile":true}' in board.on("gardens/t1/step"))
        finally:
            publisher.close()
        heard = {topic for topic, _, _ in board.messages}
        assert not [t for t in heard if "/t2/" in t or "gardens_t2" in t], heard
        assert {"gardens/t1/status", "gardens/t1/game", "gardens/t1/state",
                "homeassistant/sensor/gardens_t1/game/config"} <= heard
        board.close()
    finally:
        secured.kill()


@pytest.mark.skipif(not shutil.which("openssl"), reason="needs the openssl command")
def test_over_tls_the_broker_is_trusted_through_the_configured_ca_file(tmp_path: Path) -> None:
    folder = tmp_path / "broker"
    folder.mkdir()
    tls = certificates(folder)
    secured = Broker(folder, tls=tls)
    secured.start()
    try:
        heard = Listener(secured.url)
        table = Table(tmp_path)
        other = tmp_path / "other"  # a certificate authority that did not sign the broker's
        other.mkdir()
        certificates(other)
        untrusting = Publisher(MqttConfig(broker=secured.tls_url, table="t1",
                                          ca_file=str(other / "ca.pem")),
                               tmp_path, reconnect_s=FAST)
        with Logged("no connection to") as refused:
            untrusting.start(table.journal.path)
            assert refused.wait(WAIT_S)
        untrusting.close()
        assert "certificate" in refused.message, refused.message
        acks = Acks()
        publisher = Publisher(MqttConfig(broker=secured.tls_url, table="t1",
                                         ca_file=str(tls / "ca.pem")),
                              tmp_path, reconnect_s=FAST, on_acked=acks)
        publisher.start(table.journal.path)
        try:
            table.step()
            publisher.journal_written(table.journal.path)
            assert acks.wait_for(table.game_id, table.seq)
        finally:
            publisher.close()
        assert heard.wait(lambda: same_as_journal(heard, table.journal.path))
        heard.close()
    finally:
        secured.kill()


@pytest.mark.parametrize(("content", "problem"), [
    (None, "cannot be read (there is no such file)"),
    ("not a certificate\n", "holds no certificate (a PEM file is wanted)"),
])
def test_a_ca_file_that_is_no_certificate_is_a_config_error(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    ca = tmp_path / "ca.pem"
    if content is not None:
        ca.write_text(content)
    with pytest.raises(ConfigError) as refused:
        Publisher(MqttConfig(broker="mqtts://127.0.0.1:1", table="t1", ca_file=str(ca)),
                  tmp_path)
    assert str(refused.value) == f"[mqtt] ca_file {ca} {problem}"


def test_home_assistant_finds_the_table_with_a_score_sensor_per_seat(
    tmp_path: Path, broker: Broker, listener: Listener
) -> None:
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    three = Table(tmp_path, players=3)
    publisher.start(three.journal.path)
    try:
        node = "homeassistant/sensor/gardens_t1"

        def announced() -> bool:  # the seat 3 sensor, then the last one of the batch
            topics = [t for t, p, _ in listener.messages if p or "seat5" in t]
            three = f"{node}/seat3_score/config"
            return three in topics and f"{node}/seat5_score/config" in topics[
                topics.index(three):]

        assert listener.wait(announced)
        configs = {t: json.loads(p) if p else None for t, p, _ in listener.messages
                   if t.startswith("homeassistant/")}
        sensors = {t.removeprefix(f"{node}/").removesuffix("/config"): c
                   for t, c in configs.items()}
        assert set(sensors) >= {"game", "to_move", "seat1_score", "seat2_score", "seat3_score"}
        assert sensors["seat4_score"] is None and sensors["seat5_score"] is None  # removed
        game = sensors["game"]
        assert game["state_topic"] == "gardens/t1/state"
        assert game["availability_topic"] == "gardens/t1/status"
        assert (game["payload_available"], game["payload_not_available"]) == ("online",
                                                                             "offline")
        assert game["device"]["identifiers"] == ["gardens_t1"]
        assert sensors["seat3_score"]["value_template"] == "{{ value_json.scores[2] }}"
        assert len({c["unique_id"] for c in sensors.values() if c}) == 5
        # the next game has two seats: the third seat's sensor goes
        three.journal.finish(three.rules.outcome(three.state) or _ended(three))
        publisher.journal_written(three.journal.path)
        two = Table(tmp_path, seed=4)
        publisher.journal_written(two.journal.path)
        assert acks.wait_for(two.game_id, 1)
        assert listener.wait(lambda: listener.on(f"{node}/seat3_score/config")[-1:] == [b""])
    finally:
        publisher.close()
    retained = Listener(broker.url, f"{node}/#")
    try:  # what Home Assistant finds when it starts later: the retained configs
        assert retained.wait(lambda: len(retained.messages) == 4)
        assert {t.split("/")[3] for t, _, _ in retained.messages} == {
            "game", "to_move", "seat1_score", "seat2_score"}
    finally:
        retained.close()


def _ended(table: Table) -> Any:
    """An end for a game stopped early (players who leave the table)."""
    from companion.rules.base import Outcome

    return Outcome((1,), "stopped", ((1, "-", 1), (2, "-", 0), (3, "-", 0)))


def test_a_companion_acts_on_nothing_it_receives(
    tmp_path: Path, broker: Broker, listener: Listener
) -> None:
    table = Table(tmp_path)
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(table.journal.path)
    try:
        table.step()
        publisher.journal_written(table.journal.path)
        assert acks.wait_for(table.game_id, table.seq)
        hostile = Listener(broker.url, "nothing/at/all")
        for topic in ("gardens/t1/step", "gardens/t1/state", "gardens/t1/command",
                      "gardens/t1/set", "homeassistant/status", "gardens/t1"):
            hostile.client.publish(topic, b"\xff not json", qos=1).wait_for_publish(WAIT_S)
        hostile.close()
        table.step()
        publisher.journal_written(table.journal.path)
        assert acks.wait_for(table.game_id, table.seq)
    finally:
        publisher.close()
    assert publisher.client.on_message is None  # it subscribed to nothing, handles nothing
    assert json.loads(acks_file(tmp_path))["games"] == {table.game_id: table.seq}


class Logged(logging.Handler):
    """Within ``with``: ``wait()`` blocks until ``companion.mqtt`` logs a line holding
    ``words``, kept as ``message``."""

    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words
        self.message = ""
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage() and not self.seen.is_set():
            self.message = record.getMessage()
            self.seen.set()

    def wait(self, timeout: float) -> bool:
        return self.seen.wait(timeout)

    def __enter__(self) -> Logged:
        logging.getLogger("companion.mqtt").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("companion.mqtt").removeHandler(self)


def test_a_companion_that_may_not_use_the_network_is_told_what_to_allow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = socket.socket

    def sandboxed(family: int = socket.AF_INET, *args: Any, **kwargs: Any) -> socket.socket:
        if family in (socket.AF_INET, socket.AF_INET6):  # as RestrictAddressFamilies=AF_UNIX
            raise OSError(errno.EAFNOSUPPORT, os.strerror(errno.EAFNOSUPPORT))
        return real(family, *args, **kwargs)

    publisher = Publisher(MqttConfig(broker="mqtt://127.0.0.1:1883", table="t1"), tmp_path)
    monkeypatch.setattr(socket, "socket", sandboxed)
    with pytest.raises(ConfigError) as refused:
        publisher.start(None)
    monkeypatch.undo()
    publisher.close()
    assert str(refused.value) == (
        "[mqtt] broker is set but this companion may not use the network (Address family not "
        "supported by protocol); under companion.service allow it with "
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 (sudo systemctl edit companion)")


def test_a_refused_password_is_logged_once_and_nothing_is_noted_as_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "broker"
    folder.mkdir()
    secured = Broker(folder, users={"t1": "right"}, acl=ACL.read_text())
    secured.start()
    try:
        table = Table(tmp_path)
        publisher = Publisher(settings(secured, username="t1", password="wrong"), tmp_path,
                              reconnect_s=FAST)
        answers = threading.Semaphore(0)  # the broker's answers to its connection attempts
        answer = publisher.client.on_connect

        def counted(*args: Any) -> None:
            answer(*args)
            answers.release()

        publisher.client.on_connect = counted
        try:
            with caplog.at_level(logging.WARNING, logger="companion.mqtt"):
                publisher.start(table.journal.path)
                table.step()
                publisher.journal_written(table.journal.path)
                for _ in range(3):  # refused three times, and it tries again
                    assert answers.acquire(timeout=WAIT_S)
        finally:
            publisher.close()
        lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
        assert lines == ["mqtt: the broker refuses the connection: "
                         f"127.0.0.1:{secured.port} refused the login (Not authorized): bad "
                         "user name or password, see [mqtt] username and password_file"], lines
        assert json.loads(acks_file(tmp_path))["games"] == {table.game_id: 0}
    finally:
        secured.kill()


def test_a_game_that_ended_unsent_is_published_before_the_next_one(
    tmp_path: Path, broker: Broker
) -> None:
    first = Table(tmp_path)
    acks = Acks()
    publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(first.journal.path)
    first.step()
    publisher.journal_written(first.journal.path)
    assert acks.wait_for(first.game_id, first.seq)
    broker.kill()
    first.play_out()  # the game ends while the broker is away, and the companion stops
    publisher.journal_written(first.journal.path)
    publisher.close()
    broker.start()
    heard = Listener(broker.url)
    second = Table(tmp_path, seed=8)  # started again: a new game, the last one unsent
    acks = Acks()
    again = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    again.start(second.journal.path)
    try:
        assert acks.wait_for(second.game_id, 1)
    finally:
        again.close()
    assert heard.wait(lambda: json.loads(heard.on("gardens/t1/state")[-1])["game_id"]
                      == second.game_id)
    heard.close()
    games = [json.loads(p)["game_id"] for p in heard.on("gardens/t1/step")]
    assert games == [first.game_id] * (first.seq - 2)  # all but the step the broker had


def test_an_unreadable_acknowledgement_file_sends_the_game_again(
    tmp_path: Path, broker: Broker, listener: Listener, caplog: pytest.LogCaptureFixture
) -> None:
    table = Table(tmp_path)
    table.step()
    (tmp_path / ACKED).write_text('{"v": 1, "games": [')  # cut short
    acks = Acks()
    with caplog.at_level(logging.WARNING, logger="companion.mqtt"):
        publisher = Publisher(settings(broker), tmp_path, reconnect_s=FAST, on_acked=acks)
    publisher.start(table.journal.path)
    try:
        assert acks.wait_for(table.game_id, table.seq)
    finally:
        publisher.close()
    assert f"mqtt: {tmp_path / ACKED} cannot be read" in caplog.text
    assert listener.wait(lambda: same_as_journal(listener, table.journal.path))


@pytest.mark.parametrize("game", ["enceladus", "mars", "uranus"])
def test_the_state_follows_every_line_of_each_game(tmp_path: Path, game: str) -> None:
    table = Table(tmp_path, seed=11, players=3, game=game)
    wanted = []  # what each state message must say, from the rules core itself
    for _ in range(6):
        table.step()
        wanted.append((table.rules.to_move(table.state), len(table.history)))
    table.undo()
    wanted.append((table.rules.to_move(table.state), len(table.history)))
    table.play_out()
    feed = GameFeed(table.journal.path, Topics("gardens", "t1"))
    lines = feed.read()
    assert [seq for seq, _ in lines] == list(range(1, table.seq + 1))
    states = [json.loads(messages[-1].payload) for _, messages in lines]
    assert [messages[-1].mark for _, messages in lines] == [
        (table.game_id, seq) for seq in range(1, table.seq + 1)]
    assert [(s["to_move"], s["steps"]) for s in states[1:8]] == wanted
    assert states[0]["to_move"] == 1 and states[0]["steps"] == 0
    outcome = table.rules.outcome(table.state)
    end = states[-1]
    assert end["over"] and end["to_move"] is None and end["winners"] == list(outcome.winners)
    final = {player: text for player, text, _ in outcome.ranking}
    assert end["scores"] == [score(final[p]) for p in range(1, 4)]
    points = {player: value for player, _, value in outcome.ranking}
    assert end["ranks"] == [1 + sum(q > points[p] for q in points.values()) for p in (1, 2, 3)]
    assert [end["ranks"][w - 1] for w in outcome.winners] == [1] * len(outcome.winners)
    assert feed.read() == []  # nothing new: nothing given twice


def test_ranks_share_ties_and_read_points_and_hands() -> None:
    assert ranks(((1, "12 pts"), (2, "30 pts"), (3, "12 pts")), None) == [2, 1, 2]
    assert ranks(((1, "-3 pts"), (2, "0 pts")), None) == [2, 1]
    assert ranks(((1, "3-4-5-5-6"), (2, "3-4-4-6-6"), (3, "3-4-5-5-6")), None) == [1, 3, 1]
    assert score("12 pts") == 12 and score("-74 pts") == -74
    assert score("3-4-5-5-6") == "3-4-5-5-6"
