"""The table on an MQTT broker (``[mqtt] broker``), for a tournament's scoreboard and for
Home Assistant; the topics and payloads are in ``docs/MQTT.md``.

:mod:`companion.mqtt.messages` turns a game journal into the messages (no network);
:mod:`companion.mqtt.publisher` publishes them with paho-mqtt on a thread of its own,
imported only when ``[mqtt] broker`` is set (the mqtt extra:
``pip install 'gardens-companion[mqtt]'``).

May import the rules, the journal, the configuration and the shared modules; the daemon
opens it, it never imports the daemon, and it acts on nothing it receives.
"""

MQTT_INSTALL = "pip install 'gardens-companion[mqtt]'"
"""How to install what publishing to a broker needs."""

LOGIN_REFUSED = frozenset({134, 135})
"""The reason codes, as paho gives them, of a broker that refuses the login: 134 "Bad user
name or password" and 135 "Not authorized" (MQTT 3.1.1's CONNACK return codes 4 and 5)."""
