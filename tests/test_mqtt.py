"""The table on a real Mosquitto (the ``broker`` fixture): every journal line reaches a
subscriber, in journal order, exactly once after dropping the seqs seen before, whatever
happens to the broker, the network or the companion.

Most tests write a real journal (:class:`Table`, legal steps of a seeded game) and publish it
with :class:`companion.mqtt.publisher.Publisher`; the daemon's own tests are in
tests/test_mqtt_daemon.py.  Waits are bounded and end on what the listener receives or the
broker acknowledges, never on the machine's speed.
"""

from __future__ import annotations

import json
import random
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import WAIT_S, Broker, Listener

from companion import journal as journal_mod
from companion.config import MqttConfig
from companion.mqtt.publisher import ACKED, Publisher
from companion.rules import load as load_rules

FAST = (0.05, 0.2)
"""Reconnect waits for the tests (seconds): the broker is on this machine."""


class Table:
    """A game journal in ``directory`` written as the daemon writes it: a seeded Gardens of
    Enceladus game whose steps are drawn from the legal ones."""

    def __init__(self, directory: Path, seed: int = 3, players: int = 2) -> None:
        self.rules = load_rules("enceladus").RULES
        self.state = self.rules.new_game(players, seed, {})
        self.history: list[Any] = []
        self.rng = random.Random(seed)
        header = {"game": "enceladus", "layout": "enceladus", "players": players,
                  "seed": seed, "options": {}, "setup": self.rules.format_position(self.state)}
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
