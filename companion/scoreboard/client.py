"""The scoreboard's MQTT client: paho-mqtt on its own thread, feeding a :class:`Scoreboard`.

It subscribes to every table's topics (``<prefix>/+/+``, QoS 1) with a persistent session
(a fixed client id, no clean start): while the scoreboard is away the broker keeps the step
messages of its tables for it, and on its return delivers them, the retained ``game`` and
``state`` messages first.  A lost connection is tried again by paho itself (1 s, doubling
up to :data:`RECONNECT_MAX_S`); each loss and each return is said once on the log.
"""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from companion.config import broker_address
from companion.errors import CompanionError, InputFileError, InvalidArgumentError, UsageError
from companion.files import reason_of
from companion.mqtt import LOGIN_REFUSED
from companion.scoreboard.model import Scoreboard

if TYPE_CHECKING:  # paho itself is imported when the client starts
    import paho.mqtt.client as paho
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

log = logging.getLogger("companion.scoreboard")

RECONNECT_MAX_S = 30
"""The longest wait between two tries to reach the broker, in seconds."""

KEEPALIVE_S = 30
"""Seconds between two pings on a quiet connection, so a dead one is found."""


@dataclass(frozen=True, slots=True)
class Broker:
    """Where the broker is: ``host``, ``port``, ``tls`` and the user to log in as
    (``""``: none)."""

    host: str
    port: int
    tls: bool
    username: str = ""

    def __str__(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def parse_broker(url: str, username: str = "") -> Broker:
    """``url`` written as ``[mqtt] broker`` is (``mqtt://host:port``, ``mqtts://host:port``
    for TLS, the port 1883 or 8883 by default) as a :class:`Broker`.  Raises
    :class:`UsageError` for anything else."""
    try:
        tls, host, port = broker_address(url)
    except InvalidArgumentError:
        port = 0
    if not 1 <= port <= 65535:
        raise UsageError(f"the broker {url!r} is not a URL such as mqtt://host:1883 or "
                         "mqtts://host:8883")
    return Broker(host, port, tls, username)


class Feed:
    """The scoreboard ``board`` fed from ``broker`` on paho's thread (started by
    :meth:`start`); ``on_change()`` is called on that thread after each message that
    changed it, and must not block.

    ``client_id``: the persistent session's name (one per scoreboard); ``password_file``
    holds the user's password (its first line); ``ca_file`` the authority
    the broker's certificate is checked against (the system's by default).  Raises, before
    connecting, :class:`companion.errors.InputFileError` when the password file or the CA file
    cannot be read (missing, a folder, not text), and
    :class:`companion.errors.CompanionError` when the password file is empty or the CA file
    holds no certificate.
    """

    def __init__(self, broker: Broker, board: Scoreboard, on_change: Callable[[], None], *,
                 client_id: str = "", password_file: Path | None = None,
                 ca_file: Path | None = None) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.broker = broker
        self.board = board
        self.on_change = on_change
        self.connected = False
        password = ""
        if password_file is not None:
            unread = f"the password file {password_file} cannot be read"
            try:
                password = password_file.read_text(encoding="utf-8").splitlines()[0]
            except OSError as error:
                raise InputFileError(f"{unread}: {reason_of(error)}") from None
            except UnicodeDecodeError:
                raise InputFileError(f"{unread}: it is not text") from None
            except IndexError:
                raise CompanionError(f"{unread}: it is empty") from None
        self._client = mqtt.Client(CallbackAPIVersion.VERSION2,
                                   client_id=client_id or f"scoreboard-{socket.gethostname()}",
                                   clean_session=False, protocol=mqtt.MQTTv311)
        if broker.username:
            self._client.username_pw_set(broker.username, password or None)
        if broker.tls:
            try:
                self._client.tls_set(ca_certs=str(ca_file) if ca_file else None,
                                     cert_reqs=ssl.CERT_REQUIRED)
            except OSError as error:  # ssl.SSLError too: a file that is not a certificate
                reason = getattr(error, "strerror", None) or str(error)
                kind = CompanionError if isinstance(error, ssl.SSLError) else InputFileError
                raise kind(f"the CA file {ca_file} cannot be read as a certificate: "
                             f"{reason}") from None
        self._client.reconnect_delay_set(1, RECONNECT_MAX_S)
        self._client.on_connect = self._connected
        self._client.on_disconnect = self._disconnected
        self._client.on_connect_fail = self._connect_failed  # no connection made at all
        self._client.on_message = self._message
        self._said = ""  # the trouble said last: "", "refused" or "unreachable"
        self._stopping = False

    def start(self) -> None:
        """Connect (in the background: a broker not up yet is tried again) and follow."""
        self._client.connect_async(self.broker.host, self.broker.port, KEEPALIVE_S)
        self._client.loop_start()

    def stop(self) -> None:
        """Disconnect and stop the thread."""
        self._stopping = True
        self._client.disconnect()
        self._client.loop_stop()

    # paho's callbacks, on its thread.  Each kind of trouble is said once until it is over.
    def _connected(self, client: paho.Client, userdata: object, flags: paho.ConnectFlags,
                   reason: ReasonCode, properties: Properties | None) -> None:
        if reason.is_failure:
            if self._said != "refused" and reason.value in LOGIN_REFUSED:
                log.error("the broker %s refused the scoreboard's login (%s): bad user name or "
                          "password, see --username and --password-file; trying again",
                          self.broker, reason)
            elif self._said != "refused":
                log.error("the broker %s refused the scoreboard (%s): trying again", self.broker,
                          reason)
            self._said = "refused"
            return
        self.connected, self._said = True, ""
        log.info("following the tables at %s/%s/", self.broker, self.board.prefix)
        client.subscribe(f"{self.board.prefix}/+/+", qos=1)

    def _disconnected(self, client: paho.Client, userdata: object,
                      flags: paho.DisconnectFlags, reason: ReasonCode,
                      properties: Properties | None) -> None:
        was, self.connected = self.connected, False
        if self._stopping or self._said:
            return
        if was:
            log.warning("lost the broker %s (%s): trying again", self.broker, reason)
        else:
            log.warning("cannot reach the broker %s (%s): trying again", self.broker, reason)
        self._said = "unreachable"

    def _connect_failed(self, client: paho.Client, userdata: object) -> None:
        if not self._said:
            log.warning("cannot reach the broker %s: trying again", self.broker)
        self._said = "unreachable"

    def _message(self, client: paho.Client, userdata: object,
                 message: paho.MQTTMessage) -> None:
        try:
            topic = message.topic
        except UnicodeDecodeError:  # a broker lets nothing but UTF-8 through; still
            topic = "?"
        if self.board.receive(topic, message.payload):
            self.on_change()
