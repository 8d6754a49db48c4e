"""A table's MQTT messages, made from its game journals (no network here).

Every journal line becomes messages in journal order (``docs/MQTT.md`` has the topics and
the payloads): the header a retained ``game`` message, each line after it a ``step``
message (a step, a step taken back, the end) carrying the line's ``seq``; every line is
followed by the table's retained ``state`` (scores, ranks, whose turn) as it stands after
it.  A consumer keys on ``(table, game_id, seq)``, so a line sent twice is seen once.

:class:`GameFeed` reads one journal as it grows and gives each new line's messages;
:func:`discovery` gives the Home Assistant discovery messages of a table.
"""

from __future__ import annotations

import json
import logging
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from companion import journal as journal_mod
from companion.errors import CompanionError, ConfigError, JournalError
from companion.rules import load as load_rules
from companion.rules.base import Outcome, SomeRules

log = logging.getLogger("companion.mqtt")

VERSION = 1
"""The ``v`` of every JSON payload; a consumer ignores a message of a version it does not
know."""

MAX_SEATS = 5
"""The most players a game has: Home Assistant gets a score sensor for each seat up to the
game's count, and those above it are removed."""

ONLINE, OFFLINE = "online", "offline"
"""The payloads of the ``status`` topic (``offline`` is the last will)."""

_TABLE = re.compile(r"[A-Za-z0-9_-]{1,40}")
_POINTS = re.compile(r"(-?\d+) pts")


def table_name(configured: str) -> str:
    """The table's name in the topics: ``[mqtt] table``, or this machine's host name (its
    first label) when that is ``""``.  Raises :class:`ConfigError` for a host name that
    cannot be one (letters, digits, ``_`` and ``-``, 1 to 40)."""
    if configured:
        return configured
    host = socket.gethostname().split(".")[0]
    if not _TABLE.fullmatch(host):
        raise ConfigError(f"[mqtt] table is empty and this machine's host name {host!r} cannot "
                          "name a table (1 to 40 letters, digits, \"_\" or \"-\"); set [mqtt] "
                          "table")
    return host


@dataclass(frozen=True, slots=True)
class Topics:
    """The topics of table ``table`` under ``prefix``; ``discovery``: Home Assistant's
    discovery prefix, ``""`` for none."""

    prefix: str
    table: str
    discovery: str = ""

    def of(self, leaf: str) -> str:
        """``<prefix>/<table>/<leaf>``: ``status``, ``game``, ``step`` or ``state``."""
        return f"{self.prefix}/{self.table}/{leaf}"


@dataclass(frozen=True, slots=True)
class Message:
    """One MQTT message, sent with QoS 1: ``topic``, ``payload`` (UTF-8), ``retain``;
    ``mark`` ``(game_id, seq)`` on the last message of a journal line, so that its
    acknowledgement says the line has reached the broker; ``again``: sent again on a new
    connection (the status, the discovery, the last game and state)."""

    topic: str
    payload: bytes
    retain: bool = False
    mark: tuple[str, int] | None = None
    again: bool = False


def _json(payload: Mapping[str, object]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def score(text: str) -> int | str:
    """A score line as published: the number of ``"12 pts"``, else the game's own text (an
    Enceladus hand ``"3-4-5-5-6"``)."""
    found = _POINTS.fullmatch(text)
    return int(found[1]) if found else text


def scores(status: Sequence[tuple[int, str]], outcome: Outcome | None) -> list[int | str]:
    """Each seat's score as published (:func:`score`): once the game is over its final
    result (``outcome.ranking``: Uranus counts its missions only then), before that the
    score line ``status`` shows."""
    final = {player: text for player, text, _ in outcome.ranking} if outcome else {}
    return [score(final.get(player, text)) for player, text in status]


def ranks(status: Sequence[tuple[int, str]], outcome: Outcome | None) -> list[int]:
    """Each seat's rank, 1 the best, ties sharing a rank: once the game is over from its
    rank points (the game's own ranking, ``outcome.ranking``); while it goes on from the
    score lines ``status``: the points (``"12 pts"``), or a hand's counts in order
    (``"3-4-5-5-6"`` -> (3, 4, 5, 5, 6)); more is better, as each game's scoring counts."""
    keys: dict[int, tuple[int, ...]]
    if outcome is not None:
        points = {player: value for player, _, value in outcome.ranking}
        keys = {p: (points.get(p, 0),) for p, _ in status}
    else:
        keys = {}
        for p, text in status:
            shown = score(text)
            keys[p] = ((shown,) if isinstance(shown, int)
                       else tuple(int(n) for n in re.findall(r"\d+", text)))
    return [1 + sum(other > keys[p] for other in keys.values()) for p, _ in status]


class GameFeed:
    """The messages of one game's journal at ``path``, line by line as it grows.

    :meth:`read` reads the journal again and returns the lines not yet given, each as
    ``(seq, messages)``; the last of each line's messages is its ``state``, marked
    ``(game_id, seq)``.  ``seq`` is the line's place in the journal (the header is 1), as
    the journal writes it.  A journal whose steps cannot be replayed stops being fed
    (logged once); a torn or damaged end is left out, as the journal reader leaves it.
    """

    def __init__(self, path: Path, topics: Topics) -> None:
        self.path = path
        self.topics = topics
        self.game_id = path.name.removesuffix(".jsonl")
        self.players = 0
        """The game's player count, once its header is read."""
        self.broken = False
        self._done = 0  # lines already given
        self._rules: SomeRules | None = None
        self._states: list[object] = []  # the setup, then the state after each step in force
        self._movers: list[int] = []  # the player of each step in force
        self._steps: list[str] = []  # the notation of each step in force
        self._header: journal_mod.Entry = {}

    def read(self) -> list[tuple[int, list[Message]]]:
        """The journal's lines after those already given, as ``(seq, messages)`` in order.
        A journal that cannot be read now (gone, a newer version) gives nothing."""
        if self.broken:
            return []
        try:
            record = journal_mod.read(self.path)
        except JournalError as error:
            log.warning("mqtt: %s; its lines are not published", error)
            self.broken = True
            return []
        lines = record.lines
        if len(lines) < self._done:  # cut back (a damaged end repaired): the seqs go on
            log.warning("mqtt: %s is shorter than when it was published; the lines after "
                        "line %d are published as they come", self.path.name, len(lines))
            self._done = len(lines)
        out = []
        for seq, line in enumerate(lines[self._done:], self._done + 1):
            try:
                out.append((seq, self._line(seq, line.entry)))
            except (CompanionError, KeyError, TypeError, ValueError) as error:
                log.warning("mqtt: %s line %d cannot be replayed (%s); the game is no longer "
                            "published", self.path.name, seq, error)
                self.broken = True
                break
            self._done = seq
        return out

    def _line(self, seq: int, entry: journal_mod.Entry) -> list[Message]:
        if seq == 1:
            return [self._game(entry), self._state_message(seq)]
        assert self._rules is not None
        step: dict[str, object] = {"v": VERSION, "table": self.topics.table,
                                "game_id": self.game_id, "seq": seq}
        if "step" in entry:
            made = cast(journal_mod.Step, entry)  # checked by the journal's reader
            text, state = made["step"], self._states[-1]
            self._states.append(self._rules.apply(state, self._rules.parse_step(state, text)))
            self._movers.append(made["player"])
            self._steps.append(text)
            step |= {"kind": "step", "n": made["n"], "player": made["player"], "step": text}
        elif "undo" in entry:
            self._states.pop()
            player = self._movers.pop()
            self._steps.pop()
            step |= {"kind": "undo", "n": entry["undo"], "player": player}
        else:
            step |= {"kind": "over", "n": len(self._movers), "player": None,
                     "over": entry["over"]}
        return [Message(self.topics.of("step"), _json(step)), self._state_message(seq)]

    def _game(self, header: journal_mod.Entry) -> Message:
        self._header = header
        self._rules = load_rules(str(header["game"])).RULES
        setup, players = header["setup"], header["players"]
        if not isinstance(setup, str) or not isinstance(players, int | float | str):
            raise JournalError("the setup is not text or the players not a number")
        self._states = [self._rules.parse_position(setup)]
        self.players = int(players)
        return Message(self.topics.of("game"), _json({
            "v": VERSION, "table": self.topics.table, "game_id": self.game_id,
            "game": header["game"], "layout": header.get("layout", header["game"]),
            "players": self.players, "names": self._names(), "seed": header.get("seed"),
            "options": header.get("options", {}), "setup": header["setup"],
            "started": header.get("started"),
        }), retain=True)

    def _names(self) -> list[str]:
        names = self._header.get("names")
        if isinstance(names, list) and len(names) == self.players:
            return [str(name) for name in names]
        return [""] * self.players

    def _state_message(self, seq: int) -> Message:
        rules, state = self._rules, self._states[-1]
        assert rules is not None
        outcome = rules.outcome(state)
        status = rules.status(state)
        return Message(self.topics.of("state"), _json({
            "v": VERSION, "table": self.topics.table, "game_id": self.game_id, "seq": seq,
            "game": self._header["game"], "layout": self._header.get("layout"),
            "names": self._names(),
            "to_move": None if outcome is not None else rules.to_move(state),
            "scores": scores(status, outcome),
            "ranks": ranks(status, outcome),
            "over": outcome is not None,
            "winners": list(outcome.winners) if outcome is not None else [],
            "steps": len(self._movers),
            "history": list(self._steps),
            "updated": datetime.now(UTC).replace(microsecond=0).isoformat(),
        }), retain=True, mark=(self.game_id, seq))


def discovery(topics: Topics, players: int) -> list[Message]:
    """Home Assistant's discovery messages of the table (retained): one device, the table,
    with sensors for the game, whose turn it is and the score of each of the ``players``
    seats, available while ``status`` says ``online``; the score sensors of the seats above
    ``players`` are removed (an empty retained message).  None without a discovery prefix."""
    if not topics.discovery:
        return []
    node = f"gardens_{topics.table}"
    device = {"identifiers": [node], "name": f"Gardens {topics.table}",
              "manufacturer": "Gardens Companion", "model": "companion"}

    def sensor(key: str, name: str, template: str) -> Message:
        return Message(f"{topics.discovery}/sensor/{node}/{key}/config", _json({
            "name": name, "unique_id": f"{node}_{key}", "object_id": f"{node}_{key}",
            "state_topic": topics.of("state"), "value_template": template,
            "availability_topic": topics.of("status"), "payload_available": ONLINE,
            "payload_not_available": OFFLINE, "device": device,
        }), retain=True)

    messages = [
        sensor("game", "Game", "{{ value_json.game }}"),
        sensor("to_move", "To move", "{{ 'game over' if value_json.over else "
               "'seat %d' % value_json.to_move }}"),
    ]
    for seat in range(1, MAX_SEATS + 1):
        if seat <= players:
            messages.append(sensor(f"seat{seat}_score", f"Seat {seat} score",
                                   f"{{{{ value_json.scores[{seat - 1}] }}}}"))
        else:
            messages.append(Message(f"{topics.discovery}/sensor/{node}/seat{seat}_score/config",
                                    b"", retain=True))
    return messages
