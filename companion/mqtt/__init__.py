"""The table on an MQTT broker (``[mqtt] broker``), for a tournament's scoreboard and for
Home Assistant; the topics and payloads are in ``docs/MQTT.md``.

:mod:`companion.mqtt.messages` turns a game journal into the messages (no network);
:mod:`companion.mqtt.publisher` publishes them with paho-mqtt on a thread of its own,
imported only when ``[mqtt] broker`` is set (the mqtt extra:
``pip install 'gardens-companion[mqtt]'``).
"""

MQTT_INSTALL = "pip install 'gardens-companion[mqtt]'"
"""How to install what publishing to a broker needs."""
