"""``companion scoreboard``: every table of an event and the standings, from the MQTT broker.

Each companion publishes its table (``docs/MQTT.md``): a retained ``game`` header, one
``step`` message per journal line, a retained ``state`` and its ``status``.
:mod:`companion.scoreboard.model` rebuilds every table's game from its header and steps with
the rules core, as ``companion replay`` does a journal, and keeps the standings over the
rounds; it is pure (no network, no clock).  :mod:`companion.scoreboard.client` feeds it from
the broker on paho-mqtt's thread, :mod:`companion.scoreboard.terminal` prints it as a table
and :mod:`companion.scoreboard.server` serves it as a live web page (Tornado, server-sent
events), the board of every table drawn as the table's own page draws it.

May import the rules, the referee's screens, the table page's drawing, the configuration,
the published messages' package and the shared modules; it never imports the daemon.
"""
