"""The table published to an MQTT broker with paho-mqtt, on threads of its own.

The referee never waits for the broker: after every journal line it calls
:meth:`Publisher.journal_written`, which only puts the journal's path on a queue.  The
publisher's thread reads the new lines (:class:`companion.mqtt.messages.GameFeed`) and sends
their messages one at a time, QoS 1, the next once the broker has acknowledged the last
(``PUBACK``): whatever paho resends after a reconnect, nothing overtakes what came before, so
the steps reach the broker in journal order.  paho's own thread keeps the connection and
reconnects (waiting 1 s, then twice as long each time up to 30 s).

The journal is the outbox.  The last ``seq`` the broker acknowledged of each game is kept in
the journal folder's :data:`ACKED` file; on (re)start every line after it is published, so a
companion cut off by a power cut, or a broker or a network that was away, leaves nothing
unsent; a line sent again (acknowledged, but the companion went down before it noted it) is
recognised by its ``seq`` and ignored by the consumers.  On every connection the status
(``online``, the last will being ``offline``), Home Assistant's discovery and the last game and
state acknowledged are sent again, for a broker that restarted without its retained messages.

A companion never acts on anything it receives: it subscribes to nothing.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import queue
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Literal

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from companion import journal as journal_mod
from companion.bursts import BurstLog
from companion.config import MqttConfig, broker_address
from companion.errors import ConfigError, JournalError
from companion.files import reason_of
from companion.mqtt import LOGIN_REFUSED
from companion.mqtt.messages import (
    OFFLINE,
    ONLINE,
    GameFeed,
    Message,
    Topics,
    discovery,
    table_name,
)

log = logging.getLogger("companion.mqtt")

_Event = (tuple[Literal["journal", "earlier"], Path] | tuple[Literal["connected", "stop"], None]
          | tuple[Literal["lost"], str] | tuple[Literal["acked"], int])
"""What the publisher's thread is told: a journal written (the game in progress, or an
earlier one with lines the broker lacks), the broker connected, lost (why), a message of
paho's id acknowledged, or stop."""

ACKED = ".mqtt-acked"
"""The file in the journal folder that holds, per game, the last ``seq`` the broker
acknowledged: ``{"v": 1, "games": {"<game_id>": seq, ...}}``, the latest games last."""

KEEP_GAMES = 20
"""How many games :data:`ACKED` remembers (a restart looks at those for lines not sent)."""

KEEPALIVE_S = 30
"""Seconds of silence after which paho pings the broker; a connection whose answer has not
come as long again after is taken as lost (a network gone without a word)."""

RECONNECT_S = (1.0, 30.0)
"""The first and the longest wait before paho connects again, in seconds."""

ERROR_BURST_S = 60.0
"""Seconds during which a repeated connection failure is counted instead of logged again."""

CLOSE_WAIT_S = 2.0
"""How long a clean shutdown waits for the broker to take the ``offline`` status."""


class AckedFile:
    """The :data:`ACKED` file of ``directory``: ``games`` maps a game's id to the last
    ``seq`` the broker acknowledged.  A file that cannot be read counts as empty (the games
    are then published again, which the consumers ignore)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / ACKED
        self.games: dict[str, int] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            games = data["games"]
            self.games = {str(k): int(v) for k, v in games.items()}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            log.warning("mqtt: %s cannot be read (%s); the games are published again",
                        self.path, error)

    def note(self, game_id: str, seq: int) -> None:
        """``seq`` of ``game_id`` acknowledged (a new game with 0): written whole or not at
        all, a temporary file renamed over the old one.  Not fsync'd: a power cut can only
        bring back an older seq, whose lines are then sent again and ignored."""
        self.games.pop(game_id, None)
        self.games[game_id] = seq
        while len(self.games) > KEEP_GAMES:
            del self.games[next(iter(self.games))]
        partial = self.path.with_name(ACKED + ".partial")
        try:
            partial.write_text(json.dumps({"v": 1, "games": self.games}), encoding="utf-8")
            os.replace(partial, self.path)
        except OSError as error:
            log.warning("mqtt: %s cannot be written (%s); a restart would send again what "
                        "the broker has", self.path, error.strerror)


class Publisher:
    """Publishes the games of the journal folder ``directory`` to the broker of ``config``.

    :meth:`start` with the journal of the game in progress, :meth:`journal_written` after
    every line written to a journal (from any thread; it returns at once), :meth:`close` at
    the end (``offline`` is published, waited for at most :data:`CLOSE_WAIT_S`).

    ``password`` is the broker's (:meth:`from_config` reads ``[mqtt] password_file``);
    ``reconnect_s`` the first and the longest wait before connecting again, in seconds;
    ``clock`` (seconds) times the bursts of repeated connection failures logged once;
    ``on_acked`` (tests, measurements) is called from the publisher's thread with
    ``(game_id, seq)`` each time the broker has a journal line.  Raises
    :class:`ConfigError` for a ``ca_file`` that cannot be read or holds no certificate and
    for a host name that cannot name the table.
    """

    def __init__(self, config: MqttConfig, directory: Path, *, password: str = "",
                 reconnect_s: tuple[float, float] = RECONNECT_S,
                 clock: Callable[[], float] = time.monotonic,
                 on_acked: Callable[[str, int], None] | None = None) -> None:
        self.topics = Topics(config.topic, table_name(config.table), config.discovery)
        self.directory = directory
        self.acked = AckedFile(directory)
        self._on_acked = on_acked
        self._events: queue.Queue[_Event] = queue.Queue()
        self._outbox: collections.deque[Message] = collections.deque()
        self._in_flight: int | None = None  # paho's id of outbox[0] once it is sent
        self._online = False
        self._feeds: dict[Path, GameFeed] = {}
        self._feed: GameFeed | None = None  # the game in progress
        self._retained: dict[str, Message] = {}  # the last game and state acknowledged
        self._failures = BurstLog(log, "mqtt: the broker cannot be reached", clock,
                                  ERROR_BURST_S)
        self._refusals = BurstLog(log, "mqtt: the broker refuses the connection", clock,
                                  ERROR_BURST_S)
        self._losses = BurstLog(log, "mqtt: the connection to the broker is lost", clock,
                                ERROR_BURST_S)
        tls, self.host, self.port = broker_address(config.broker)
        client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"gardens-{self.topics.table}",
                             protocol=paho.MQTTv311, clean_session=True)
        if config.username:
            client.username_pw_set(config.username, password or config.password or None)
        if tls:
            try:
                client.tls_set(ca_certs=config.ca_file or None, cert_reqs=ssl.CERT_REQUIRED)
            except ssl.SSLError:
                raise ConfigError(f"[mqtt] ca_file {config.ca_file} holds no certificate (a "
                                  "PEM file is wanted)") from None
            except OSError as error:
                raise ConfigError(f"[mqtt] ca_file {config.ca_file} cannot be read "
                                  f"({reason_of(error)})") from None
        client.will_set(self.topics.of("status"), OFFLINE, qos=1, retain=True)
        client.reconnect_delay_set(*reconnect_s)  # type: ignore[arg-type]  # floats work
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        self.client = client
        self._thread = threading.Thread(target=self._run, name="mqtt-outbox", daemon=True)

    @classmethod
    def from_config(cls, config: MqttConfig, directory: Path, *,
                    reconnect_s: tuple[float, float] = RECONNECT_S,
                    clock: Callable[[], float] = time.monotonic,
                    on_acked: Callable[[str, int], None] | None = None) -> Publisher:
        """The publisher of ``[mqtt]``, with the password of ``password_file`` (its first
        line).  Raises :class:`ConfigError` for a password file that cannot be read or whose
        first line is empty, and as the constructor does."""
        password = ""
        if config.password_file:
            try:
                text = Path(config.password_file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                reason = reason_of(error) if isinstance(error, OSError) else "not UTF-8 text"
                raise ConfigError(f"[mqtt] password_file {config.password_file} cannot be read "
                                  f"({reason})") from None
            password = text.splitlines()[0] if text else ""
            if not password:
                raise ConfigError(f"[mqtt] password_file {config.password_file} holds no "
                                  "password on its first line")
        return cls(config, directory, password=password, reconnect_s=reconnect_s, clock=clock,
                   on_acked=on_acked)

    # ------------------------------------------------------------------ any thread
    def start(self, current: Path | None) -> None:
        """Connect (in the background) and publish what the broker lacks: the lines after the
        last acknowledged of the games :data:`ACKED` remembers, oldest first, then those of
        ``current``, the journal of the game in progress.  Raises :class:`ConfigError` when
        this process may not open network sockets (a sandbox without ``AF_INET``)."""
        for game_id in self.acked.games:
            path = self.directory / f"{game_id}.jsonl"
            if path != current and path.exists():
                self._events.put(("earlier", path))
        if current is not None:
            self._events.put(("journal", current))
        # Asked before paho's thread starts, which would otherwise wait a second for it.
        self.client.connect_async(self.host, self.port, keepalive=KEEPALIVE_S)
        try:
            self.client.loop_start()  # its wake-up pair is a loopback TCP connection
        except OSError as error:
            raise ConfigError(f"[mqtt] broker is set but this companion may not use the network "
                              f"({error.strerror}); under companion.service allow it with "
                              "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 (sudo systemctl "
                              "edit companion)") from None
        self._thread.start()
        log.info("mqtt: publishing table %s to %s:%d", self.topics.table, self.host, self.port)

    def journal_written(self, path: Path) -> None:
        """A line was written to the journal at ``path``: its messages go out as soon as the
        broker takes them.  Only queues; never blocks."""
        self._events.put(("journal", path))

    def close(self) -> None:
        """Stop publishing: the lines not yet acknowledged stay in the journal for the next
        start; ``offline`` is published when connected, then the connection is closed."""
        self._events.put(("stop", None))
        if self._thread.is_alive():
            self._thread.join(10)
        if self._online:
            info = self.client.publish(self.topics.of("status"), OFFLINE, qos=1, retain=True)
            with contextlib.suppress(RuntimeError):  # the connection went while waiting
                info.wait_for_publish(CLOSE_WAIT_S)
        self.client.disconnect()
        self.client.loop_stop()

    # ------------------------------------------------------------------ paho's thread
    def _on_connect(self, client: paho.Client, userdata: object, flags: paho.ConnectFlags,
                    reason: ReasonCode, properties: Properties | None) -> None:
        if reason.is_failure:
            if reason.value in LOGIN_REFUSED:
                self._refusals.report(f"{self.host}:{self.port} refused the login ({reason}): "
                                      "bad user name or password, see [mqtt] username and "
                                      "password_file")
            else:
                self._refusals.report(f"{self.host}:{self.port} refused the connection "
                                      f"({reason})")
            return
        self._events.put(("connected", None))

    def _on_connect_fail(self, client: paho.Client, userdata: object) -> None:
        error = sys.exc_info()[1]  # paho calls this while handling the connection's error
        why = ""
        if isinstance(error, OSError):
            why = f" ({getattr(error, 'verify_message', None) or error.strerror or error})"
        self._failures.report(f"no connection to {self.host}:{self.port}{why}; the steps "
                              "wait in the journal")

    def _on_disconnect(self, client: paho.Client, userdata: object,
                       flags: paho.DisconnectFlags, reason: ReasonCode,
                       properties: Properties | None) -> None:
        self._events.put(("lost", str(reason)))

    def _on_publish(self, client: paho.Client, userdata: object, mid: int, reason: ReasonCode,
                    properties: Properties) -> None:
        self._events.put(("acked", mid))

    # ------------------------------------------------------------------ the publisher's thread
    def _run(self) -> None:
        while True:
            event = self._events.get()
            if event[0] == "stop":
                return
            try:
                self._handle(event)
            except Exception:  # a bug must not stop publishing (nor the referee)
                log.exception("mqtt: internal error handling %s", event[0])

    def _handle(self, event: _Event) -> None:
        match event:
            case ("journal", Path() as path):
                self._read(path)
            case ("earlier", Path() as path):
                self._read_earlier(path)
            case ("connected", None):
                self._connected()
            case ("lost", str() as reason):
                if self._online:
                    self._losses.report(f"{self.host}:{self.port} ({reason}); the steps wait "
                                        "in the journal")
                self._online = False
            case ("acked", int() as mid):
                self._acked(mid)
        self._send()

    def _read(self, path: Path) -> None:
        """Queue the new lines of the journal at ``path``; a new game's journal is noted in
        :data:`ACKED` first, so that a restart finds it even once it has ended."""
        feed = self._feeds.get(path)
        if feed is None:
            if self._feed is not None:  # the game before: its last lines first
                self._read(self._feed.path)
                self._feeds.pop(self._feed.path, None)
            feed = self._feeds[path] = GameFeed(path, self.topics)
            if feed.game_id not in self.acked.games:
                self.acked.note(feed.game_id, 0)
            self._feed = feed
        players = feed.players
        done = self.acked.games.get(feed.game_id, 0)
        for seq, messages in feed.read():
            if seq <= done:  # the broker has it: only what a reconnect sends again
                self._retained.update((m.topic, m) for m in messages if m.retain)
            else:
                self._outbox.extend(messages)
        if feed.players != players and feed is self._feed and self._online:
            self._outbox.extend(discovery(self.topics, feed.players))

    def _read_earlier(self, path: Path) -> None:
        """An earlier game's journal: read only if it has lines the broker lacks (a start
        looks at every game :data:`ACKED` remembers)."""
        try:
            lines = len(journal_mod.read(path).lines)
        except JournalError:
            return
        if lines > self.acked.games.get(path.name.removesuffix(".jsonl"), 0):
            self._read(path)

    def _connected(self) -> None:
        log.info("mqtt: connected to %s:%d", self.host, self.port)
        self._failures.flush()
        self._refusals.flush()
        self._losses.quiet()
        self._online = True
        first = [Message(self.topics.of("status"), ONLINE.encode(), retain=True),
                 *self._retained.values()]
        last = discovery(self.topics, self._feed.players if self._feed else 0)
        # The status and the table first, after the message in flight (paho sends it again
        # first); the discovery, which no step waits for, after the lines waiting.  What a
        # connection lost before it went out had to send again is left out: a flapping link
        # piles none of it up.
        at = 1 if self._in_flight is not None else 0
        queued = list(self._outbox)
        waiting = [m for m in queued[at:] if not m.again]
        self._outbox = collections.deque([
            *queued[:at], *(replace(m, again=True, mark=None) for m in first), *waiting,
            *(replace(m, again=True) for m in last)])

    def _acked(self, mid: int) -> None:
        if mid != self._in_flight:
            return  # the offline status of a shutdown, or an answer to a resend
        message = self._outbox.popleft()
        self._in_flight = None
        if message.mark is not None:
            self._retained.update({message.topic: message})
            self.acked.note(*message.mark)
            if self._on_acked is not None:
                self._on_acked(*message.mark)
        elif message.retain and message.topic == self.topics.of("game"):
            self._retained[message.topic] = message

    def _send(self) -> None:
        """Send the oldest message, if none is waiting for its acknowledgement."""
        while self._online and self._in_flight is None and self._outbox:
            message = self._outbox[0]
            info = self.client.publish(message.topic, message.payload, qos=1,
                                       retain=message.retain)
            if info.rc in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
                self._in_flight = info.mid  # NO_CONN: paho sends it once connected again
                return
            log.error("mqtt: %s cannot be published (%s); it is left out", message.topic,
                      paho.error_string(info.rc))
            self._outbox.popleft()
