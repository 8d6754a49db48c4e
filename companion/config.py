"""The companion's configuration: a TOML file read into frozen models, checked key by key.

``load_config(path)`` reads ``config/companion.toml`` (or any file in its shape) into a
:class:`Config`; every key has a default, so an empty file is valid.  A broken file raises
:class:`companion.errors.ConfigError` listing *every* problem, each a sentence naming the
file, the line, the key (``[section] key``), what is wrong and what is allowed; every GPIO
pin is used by one part only (:func:`pin_uses`) and a switch matrix has a switch for every
cell.  ``check_config(path)`` gives the same problems as a list for
``companion check-config FILE``, which adds :func:`config_warnings`, what this machine lacks
for it.

Each key is declared once, as a field of its section's model with its type, its range or
choices and its default (``Annotated[int, Meta(ge=0, le=10000, ...)]``); msgspec checks the
values against those types, and the sentence saying what a key allows is read from the same
declaration.  The ``[display]`` options of luma's command line are not declared here: their
names, types, choices and defaults come from luma's own parser
(``luma.core.cmdline.create_parser``), which ``companion.display.make_device`` checks its
options with too (:func:`display_config`).

Sections (the commented ``config/companion.toml`` documents every key):

- ``[game]`` :class:`GameConfig`, with ``[game.options]`` passed unchanged to the rules core;
- ``[players]`` :class:`PlayersConfig`, who sits at the table;
- ``[board]`` :class:`BoardConfig`, the board controller and the referee's timings;
- ``[buttons]`` :class:`ButtonPins` and :class:`ButtonsConfig`, the GPIO pins of the buttons,
  buzzer and status LED;
- ``[display]`` :class:`DisplayConfig`, the ``luma.core.cmdline`` options plus our own;
- ``[switches]`` :class:`SwitchMatrixConfig`; ``[journal]`` :class:`JournalConfig`;
  ``[log]`` :class:`LogConfig`; ``[web]`` :class:`WebConfig`; ``[mqtt]`` :class:`MqttConfig`;
- ``[players]`` :class:`PlayersConfig`, who sits in each seat (a person or the companion) and
  their names.

Reloading (``SIGHUP``): only ``[display]`` is applied to a running daemon
(:data:`RELOADABLE`, :meth:`Config.replace_display`, :func:`display_changes`); the other
sections are read at start, and :func:`changed_sections` tells the daemon which of them a
reload would ignore, so it can say so in the log.
"""

from __future__ import annotations

import codecs
import difflib
import errno
import json
import math
import os
import re
import stat
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    TypeAlias,
    TypeVar,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

import msgspec
import msgspec.inspect
from msgspec import Meta

from companion.errors import ConfigError, InvalidArgumentError, UnreadableConfigError
from companion.extras import installed
from companion.rules import BOARDS, GAMES

Scalar = str | int | float | bool
"""A single TOML value: what ``[game.options]`` may hold."""

LumaValue = str | int | float | bool | None
"""A ``luma.core.cmdline`` option value; ``None`` where luma's default is "unset"."""

KeyType: TypeAlias = Any
"""A key's declared type as an object at run time (``int``, ``Annotated[int, Meta(...)]``,
``Literal[...]``, ``str | None``), as ``typing.get_type_hints`` gives it and
``msgspec.convert`` and ``msgspec.inspect`` take it: Python has no static type for a type
written as a value."""

if TYPE_CHECKING:
    from gpiozero.pins.pi import PiBoardInfo

URANUS_BOARDS = BOARDS["uranus"]
"""The Gardens of Uranus boards (docs/RULINGS.md Uranus #2)."""

MAX_SEED = 2**63 - 1
"""The largest ``[game] seed`` (and ``--seed`` of ``companion demo`` and ``sim``)."""

EMULATORS = ("capture", "gifanim", "pygame", "asciiart", "asciiblock")
"""The display types of luma.emulator, which the ``emulator`` extra installs; known by name
even where it is not installed, so that such a file is told what to install."""

RELOADABLE = frozenset({"display"})
"""The sections a running daemon applies on ``SIGHUP``; the others need a restart."""

CONTACT_GLITCH_MS = 3
"""The contact glitch recognition is built for, in milliseconds: a cell's reading that flips
and comes back this soon (the glitch the simulator's sensors make, companion.sim.perform)."""

READER_WAIT_MS = 5
"""How much later than it arrived a line may be stamped, in milliseconds: the board link's
reader thread may wait for Python's other threads up to the interpreter's switch interval
(``sys.getswitchinterval()``), so a glitch can look that much longer than it was."""

MIN_DEBOUNCE_MS = CONTACT_GLITCH_MS + READER_WAIT_MS
"""The shortest ``[board] debounce_ms`` recognition works with (8 ms).  A glitch must be
dropped, never taken for a piece lifted: a lift that finishes a step commits it at once, and
a glitch on a flower of the garden finishes a step nobody made (6 of 60 virtual games of
people at a table with 0 ms; none from 4 ms up in virtual time, where lines are stamped when
they come).  A board that follows the protocol debounces its own cells (the reference
firmware 20 ms, the default here), a board or simulator that passes glitches on relies on
this one."""

# The BCM pins of each SPI port by function.  With SPI on, the kernel holds the clock, MOSI,
# MISO and the chip selects its overlay enables (both on SPI0 with dtparam=spi=on, CE0 up to
# the display's own on SPI1 with dtoverlay=spi1-<n>cs): a button there would fail to open.
_SPI_BUS = MappingProxyType({0: {11: "SCLK", 10: "MOSI", 9: "MISO"},
                             1: {21: "SCLK", 20: "MOSI", 19: "MISO"}})
_SPI_CHIP_SELECTS = MappingProxyType({0: (8, 7), 1: (18, 17, 16)})
_SPI_DISPLAYS = frozenset({"max7219", "apa102", "unicornhathd"})
_WS2812_DISPLAYS = frozenset({"ws2812", "neopixel", "neosegment"})
_WS2812_DATA = 18  # luma.led_matrix's ws2812 drives its data line from PWM0 on GPIO18
# Serial ports that are the Pi's own UART, on GPIO14 (TXD) and GPIO15 (RXD).
_UART_PORTS = frozenset({"/dev/serial0", "/dev/ttyAMA0", "/dev/ttyS0"})


# --------------------------------------------------------------------------------------------
# Checks msgspec cannot declare: each reads the value as the file writes it and returns the
# model's value, or raises _Bad saying what is allowed.


class _Bad(ValueError):
    """A value refused: ``allowed`` says what the key takes, ``why`` (optional) why a value
    that looks reasonable is not, ``shown`` (optional) the part of the value that is wrong."""

    def __init__(self, allowed: str, why: str = "", shown: str = "") -> None:
        super().__init__(allowed)
        self.allowed = allowed
        self.why = why
        self.shown = shown


def _show(value: object) -> str:
    """A value as the TOML file spells it, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _words(values: tuple[object, ...]) -> str:
    shown = [_show(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


_PIN_ALLOWED = 'a GPIO pin such as "GPIO17" (also 17, "BCM17", "BOARD11" or "J8:11")'


@cache
def _header() -> PiBoardInfo:
    """The 40-pin header as gpiozero knows it: every name of every pin (the same header on
    every Raspberry Pi since the Model B+; the Pi 3 Model B's data stands for them all)."""
    from gpiozero.pins.pi import PiBoardInfo

    return PiBoardInfo.from_revision(0xA02082)


def _gpio_name(value: object) -> str:
    """The ``GPIOn`` name of a pin written as gpiozero names it (17, "GPIO17", "BCM17",
    "BOARD11", "J8:11", any case), found by gpiozero's own ``find_pin``."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _Bad(_PIN_ALLOWED)
    spec = value.strip().upper() if isinstance(value, str) else value
    found = [info for _, info in _header().find_pin(spec)]
    if not found:
        gpios = sorted(int(pin.name[4:]) for header in _header().headers.values()
                       for pin in header.pins.values() if pin.name.startswith("GPIO"))
        raise _Bad(f"{_PIN_ALLOWED}; the header has GPIO{gpios[0]} to GPIO{gpios[-1]}")
    if not found[0].name.startswith("GPIO"):
        raise _Bad(f"{_PIN_ALLOWED}; header pin {found[0].number} is {found[0].name}, "
                   "not a GPIO pin")
    return str(found[0].name)


def _gpio_names(value: object) -> list[str]:
    if not isinstance(value, list):
        raise _Bad('a list of GPIO pins such as ["GPIO5", "GPIO6"]')
    names = []
    for n, pin in enumerate(value, 1):
        try:
            names.append(_gpio_name(pin))
        except _Bad as bad:
            raise _Bad(bad.allowed, shown=f"{_show(pin)} (pin {n} of the list)") from None
    return names


_URL_SCHEMES = ("loop", "socket", "rfc2217", "spy", "alt", "hwgrep", "cp2110")
_NEEDS_HOST = ("socket", "rfc2217")
_HOST_PORT = re.compile(r"[^/:?]+:(\d{1,5})([/?].*)?")


def _port(value: object) -> object:
    if isinstance(value, str):
        scheme, sep, rest = value.partition("://")
        if not sep and value.startswith("/") and len(value) > 1:
            return value
        host = _HOST_PORT.fullmatch(rest)
        has_host = host is not None and 1 <= int(host[1]) <= 65535
        if sep and scheme in _URL_SCHEMES and (scheme not in _NEEDS_HOST or has_host):
            return value
    raise _Bad(
        'a device path such as "/dev/serial/by-id/usb-..." or a pyserial URL '
        f"({', '.join(s + '://' for s in _URL_SCHEMES)}; socket:// and rfc2217:// "
        "need host:port)"
    )


def _file_template(value: object) -> object:
    try:
        if isinstance(value, str) and value.format(1) != value.format(2):
            return value
    except (IndexError, KeyError, ValueError):
        pass
    raise _Bad('a file name with {} where the frame number goes, such as "frame_{0:06}.png"')


# Metadata of the declarations below: "unit" names what a number counts (for messages),
# "read" is a check of the value as written (_gpio_name...) run before msgspec's, "below" why
# a value under the minimum is refused.
_MS = {"unit": "milliseconds"}
_S = {"unit": "seconds"}
_PIN = {"read": _gpio_name}
_TEXT = r"\S"  # a pattern: text that is not blank

# The choices of the keys that take one of a few words.  Code that builds a model passes
# plain text (a simulator's game, a command's argument), so for the type checker they are
# str; the file's values are checked against the Literal.
if TYPE_CHECKING:
    _GameName: TypeAlias = str
    _UranusBoard: TypeAlias = str
    _Setup: TypeAlias = str
    _Sensing: TypeAlias = str
    _Dice: TypeAlias = str
    _Cards: TypeAlias = str
    _Level: TypeAlias = str
else:
    _GameName = Literal[GAMES]
    _UranusBoard = Literal[URANUS_BOARDS]
    _Setup = Literal["seed", "board"]
    _Sensing = Literal["identity", "presence"]
    _Dice = Literal["tray", "buttons", "virtual"]
    _Cards = Literal["reader", "buttons"]
    _Level = Literal["debug", "info", "warning", "error"]


# --------------------------------------------------------------------------------------------
# Models: each field is a key of the file, declared once with its type, range and default.


_Value = TypeVar("_Value")


def _frozen(mapping: Mapping[str, _Value]) -> Mapping[str, _Value]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class GameConfig:
    """``[game]``: which game, how many players, the seed.

    ``name`` is one of :data:`companion.rules.GAMES`; ``players`` 2 to 5 (all three rules
    texts); ``seed`` 0 means "draw one at start", else the setup is reproducible;
    ``board`` is the Uranus board (:data:`URANUS_BOARDS`, ignored by the other games);
    ``options`` is ``[game.options]`` unchanged, for the rules core's ``new_game`` to check;
    ``setup``: ``"seed"``, the players lay out the seed's setup as the companion shows it, or
    ``"board"``, the companion adopts the garden the players laid out by hand once it meets
    the rules' setup conditions (an identity board only).
    """

    name: _GameName = "enceladus"
    players: Annotated[int, Meta(ge=2, le=5, extra={"unit": "players"})] = 2
    seed: Annotated[int, Meta(ge=0, le=MAX_SEED)] = 0
    board: _UranusBoard = "hexagonal"
    options: Mapping[str, object] = field(default_factory=lambda: _frozen({}))
    setup: _Setup = "seed"

    def rules_options(self) -> dict[str, object]:
        """The options for the rules core's ``new_game``: ``[game.options]``, plus the board
        for Gardens of Uranus (chosen per game, docs/RULINGS.md Uranus #7)."""
        options = dict(self.options)
        if self.name == "uranus":
            options.setdefault("board", self.board)
        return options


_SHORT_DEBOUNCE = (f"a shorter one lets a {CONTACT_GLITCH_MS} ms sensor glitch through as a "
                   "piece lifted, and steps nobody made get committed")


@dataclass(frozen=True, slots=True)
class BoardConfig:
    """``[board]``: the board controller and the referee's timings.

    ``port``: a device path or a pyserial URL (``loop://``, ``socket://host:port``,
    ``spy://...``, ``hwgrep://VID:PID``); ``baudrate`` in bit/s; ``sensing``
    ``"identity"`` or ``"presence"``; ``tray``: a show-tray is fitted; ``dice`` (Mars)
    ``"tray"``, ``"buttons"`` or ``"virtual"``; ``cards`` (Uranus) ``"reader"`` or
    ``"buttons"``; ``debounce_ms``: how long a cell must hold a reading, at least
    :data:`MIN_DEBOUNCE_MS`; ``settle_ms``: how long a piece set down where it may only be on
    its way must stand before a step that ends the game is committed (any other such step is
    committed at once and corrected if the piece moves on); ``grace_ms``: how long a board that
    matches no legal step is left before it is shown as wrong (how a turn flows:
    :mod:`companion.referee.referee`); ``heartbeat_timeout_s``: silence after which the board
    counts as lost; ``ready_timeout_s``: how long the start waits for the board before
    showing *no board*.
    ``missions`` (Uranus): the path of the card catalogue (relative: from the config file's
    folder), ``""`` for the one shipped with the companion.
    """

    port: Annotated[str, Meta(extra={"read": _port})] = "/dev/ttyACM0"
    baudrate: Annotated[int, Meta(ge=50, le=4_000_000, extra={"unit": "bits per second"})] = (
        115200)
    sensing: _Sensing = "identity"
    tray: bool = True
    dice: _Dice = "tray"
    cards: _Cards = "reader"
    missions: Annotated[str, Meta(pattern=r"^(\S(.*\S)?)?$", description=(
        'the path of a card catalogue, such as "/etc/companion/missions.toml" (a relative '
        'one from this file\'s folder), or "" for the one shipped with the companion'))] = ""
    debounce_ms: Annotated[int, Meta(ge=MIN_DEBOUNCE_MS, le=1000, extra={
        **_MS, "below": _SHORT_DEBOUNCE})] = 20
    settle_ms: Annotated[int, Meta(ge=0, le=10000, extra=_MS)] = 400
    grace_ms: Annotated[int, Meta(ge=0, le=60000, extra=_MS)] = 1500
    heartbeat_timeout_s: Annotated[float, Meta(ge=0.1, le=60, extra=_S)] = 2.0
    ready_timeout_s: Annotated[float, Meta(ge=0, le=3600, extra=_S)] = 10.0


@dataclass(frozen=True, slots=True)
class ButtonPins:
    """The GPIO wiring of the controls.

    Pins are BCM names, ``"GPIO17"`` (the config also accepts every name gpiozero gives a pin
    of the 40-pin header, ``17``, ``"BCM17"``, ``"BOARD11"``, ``"J8:11"``, and stores the
    ``GPIOn`` name); ``None`` (``""`` in the file) for a part that is not fitted (``roll``,
    ``buzzer`` and ``status_led`` are optional).  ``pull_up``: buttons connect their pin to
    ground and the Pi's pull-up holds it high; ``False`` for buttons to 3V3 with a pull-down.
    """

    ok: Annotated[str, Meta(extra=_PIN)] = "GPIO17"
    undo: Annotated[str, Meta(extra=_PIN)] = "GPIO27"
    select: Annotated[str, Meta(extra=_PIN)] = "GPIO22"
    roll: Annotated[str | None, Meta(extra=_PIN)] = None
    buzzer: Annotated[str | None, Meta(extra=_PIN)] = "GPIO23"
    status_led: Annotated[str | None, Meta(extra=_PIN)] = None
    pull_up: bool = True


@dataclass(frozen=True, slots=True)
class ButtonsConfig:
    """``[buttons]``: ``pins`` (the wiring, whose keys are written in ``[buttons]`` itself)
    and ``bounce_ms``, how long a contact must stay put before a press or release counts,
    in milliseconds."""

    pins: ButtonPins = field(default_factory=ButtonPins)
    bounce_ms: Annotated[int, Meta(ge=0, le=1000, extra=_MS)] = 30


@dataclass(frozen=True, slots=True)
class DisplayConfig:
    """``[display]``: the LED matrix.

    ``luma`` maps every ``luma.core.cmdline`` option (underscored: ``block_orientation``,
    :func:`luma_defaults`) and the options of luma.emulator's devices
    (:class:`EmulatorOptions`) to its value, ready for
    ``companion.display.make_device(options)``; our defaults drive a 32x8 MAX7219 chain on
    SPI.  ``contrast`` 0 to 255; ``frame_interval_ms`` is the time between frames while
    something scrolls or blinks.
    """

    luma: Mapping[str, LumaValue] = field(default_factory=lambda: luma_defaults())
    contrast: Annotated[int, Meta(ge=0, le=255)] = 64
    frame_interval_ms: Annotated[int, Meta(ge=10, le=1000, extra=_MS)] = 50


@dataclass(frozen=True, slots=True)
class EmulatorOptions:
    """The options luma.emulator's devices take beside ``luma.core.cmdline``'s, written in
    ``[display]`` and kept in :attr:`DisplayConfig.luma`: ``file_template`` (``capture``:
    the PNG names, with ``{}`` for the frame number), ``filename`` (``gifanim``: where the GIF
    goes), ``frame_rate`` (``pygame``: most frames a second); the defaults are luma's."""

    file_template: Annotated[str, Meta(extra={"read": _file_template})] = "luma_{0:06}.png"
    filename: Annotated[str, Meta(pattern=_TEXT, description='a file path such as '
                                  '"matrix.gif"')] = "luma_anim.gif"
    frame_rate: Annotated[int, Meta(ge=1, le=1000, extra={"unit": "frames per second"})] = 60


@dataclass(frozen=True, slots=True)
class SwitchMatrixConfig:
    """``[switches]``: a presence board's diode switch matrix scanned from the Pi's GPIO
    instead of a board controller on ``[board] port`` (``hardware/WIRING.md``).

    ``rows``: the pins driven low one at a time; ``columns``: the pins read with pull-ups
    (both as BCM names, like ``[buttons]``); empty ``rows``: no matrix, the serial board is
    used; the matrix needs at least a switch per cell of the game's board and ``[board]
    sensing = "presence"``.  ``debounce_ms``: how long a switch must hold a new reading;
    ``scan_interval_ms``: the pause between two scans.
    """

    rows: Annotated[tuple[str, ...], Meta(extra={"read": _gpio_names})] = ()
    columns: Annotated[tuple[str, ...], Meta(extra={"read": _gpio_names})] = ()
    debounce_ms: Annotated[int, Meta(ge=0, le=1000, extra=_MS)] = 20
    scan_interval_ms: Annotated[int, Meta(ge=0, le=1000, extra=_MS)] = 2


@dataclass(frozen=True, slots=True)
class JournalConfig:
    """``[journal]``: where game journals go (systemd's ``StateDirectory``; a relative
    ``directory`` is from the config file's folder) and whether every committed step is
    fsync'd (so a power cut loses no committed step)."""

    directory: Annotated[str, Meta(pattern=_TEXT, description="a directory path")] = (
        "/var/lib/companion")
    fsync: bool = True


@dataclass(frozen=True, slots=True)
class LogConfig:
    """``[log]``: ``level`` is ``"debug"``, ``"info"``, ``"warning"`` or ``"error"``."""

    level: _Level = "info"


SEATS = ("person", "quick", "steady", "strong")
"""What a seat of ``[players] seats`` holds: a person, or the companion playing at one of
its strengths (:mod:`companion.opponent`)."""


def _seats(value: object) -> tuple[str, ...]:
    allowed = (f'a list with one seat per player, each {_words(SEATS)}, such as '
               '["person", "strong"], or [] for people in every seat')
    if not isinstance(value, list):
        raise _Bad(allowed)
    for n, seat in enumerate(value, 1):
        if seat not in SEATS:
            raise _Bad(allowed, shown=f"{_show(seat)} (seat {n} of the list)")
    return tuple(value)


def _listen(value: object) -> object:
    if isinstance(value, str):
        host, colon, port = value.rpartition(":")
        if not value or (colon and host and port.isdigit() and int(port) <= 65535):
            return value
    raise _Bad('"host:port", such as "0.0.0.0:8080", or "" for no web page')


@dataclass(frozen=True, slots=True)
class WebConfig:
    """``[web]``: the live page of the table for phones (:mod:`companion.web`).

    ``listen``: ``"host:port"`` to serve it on (``"0.0.0.0:8080"``: every network of the Pi;
    port 0: any free port), ``""`` (the default) for no page and no web server at all.
    """

    listen: Annotated[str, Meta(extra={"read": _listen})] = ""


MAX_NAME = 40
"""The longest player name, in characters."""


def _player_names(value: object) -> list[str]:
    allowed = (f'a list of at most 5 names of at most {MAX_NAME} letters, digits, spaces or '
               'signs each, seat 1 first, such as ["Ann", "Bob"]')
    if not isinstance(value, list) or len(value) > 5:
        raise _Bad(allowed)
    for n, name in enumerate(value, 1):
        if not isinstance(name, str) or len(name) > MAX_NAME or not name.isprintable():
            raise _Bad(allowed, shown=f"{_show(name)} (name {n} of the list)")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayersConfig:
    """``[players]``: who sits at the table.

    ``names``: the players' names, seat 1 first, at most :data:`MAX_NAME` characters each
    (``""`` for a seat without one; seats past the list have none).  They go into each game's
    journal header, and from there to the scoreboard (``[mqtt]``), so that an event's
    standings follow the players from table to table.  A list of more names than ``[game]
    players`` (blank ones at its end aside) is refused.

    ``seats``: one entry per player, in turn order, each one of :data:`SEATS`: ``"person"``
    for a person, else the companion at that strength, whose steps the matrix announces and
    a person carries out on the board (:mod:`companion.referee.seats`); empty (the default):
    people in every seat.  A list that is not empty has ``[game] players`` entries.
    """

    names: Annotated[tuple[str, ...], Meta(extra={"read": _player_names})] = ()
    seats: Annotated[tuple[str, ...], Meta(extra={"read": _seats})] = ()

    def seat(self, player: int) -> str:
        """The seat of ``player`` (from 1): ``"person"`` past the list's end."""
        return self.seats[player - 1] if player <= len(self.seats) else "person"

    def seat_names(self, players: int) -> list[str]:
        """A name for each of ``players`` seats (``""`` for a seat without one)."""
        return [" ".join(self.names[i].split()) if i < len(self.names) else ""
                for i in range(players)]


_BROKER = re.compile(r"(mqtts?)://([^/:?#@\s]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?/?")
MQTT_PORTS = MappingProxyType({"mqtt": 1883, "mqtts": 8883})
"""The broker's port when ``[mqtt] broker`` names none, by scheme (IANA's MQTT ports)."""


def _broker(value: object) -> object:
    if isinstance(value, str):
        found = _BROKER.fullmatch(value)
        if not value or (found and (found[3] is None or 1 <= int(found[3]) <= 65535)):
            return value
    raise _Bad('"mqtt://host:port" or "mqtts://host:port" (TLS), such as '
               '"mqtt://192.168.1.10:1883", or "" for no publishing')


def broker_address(url: str) -> tuple[bool, str, int]:
    """``(tls, host, port)`` of a ``[mqtt] broker`` URL the configuration accepted
    (``"mqtts://host"`` -> ``(True, "host", 8883)``)."""
    found = _BROKER.fullmatch(url)
    if found is None:
        raise InvalidArgumentError(f"not a broker URL: {url!r}")
    port = int(found[3]) if found[3] else MQTT_PORTS[found[1]]
    return found[1] == "mqtts", found[2].strip("[]"), port


_TOPIC_LEVELS = r"[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*"
_PATH_OR_NONE = r"^(\S(.*\S)?)?$"


@dataclass(frozen=True, slots=True)
class MqttConfig:
    """``[mqtt]``: publishing the table to an MQTT broker (:mod:`companion.mqtt`,
    ``docs/MQTT.md``).

    ``broker``: ``"mqtt://host:port"`` or ``"mqtts://host:port"`` (TLS; the port defaults to
    1883 and 8883), ``""`` (the default) for no publishing and no client at all; ``table``:
    the table's name in the topics, letters, digits, ``_`` and ``-``, 1 to 40 of them (``""``:
    this machine's host name); ``topic``: the topics' prefix; ``username`` with ``password``
    or ``password_file`` (a file holding the password, so that the configuration can be
    readable by all), for a broker that asks for them; ``ca_file``: the certificate
    authority that signed an ``mqtts://`` broker's certificate (``""``: the system's);
    ``discovery``: the Home Assistant discovery prefix, ``""`` for none.  Relative paths are
    from the configuration file's folder.
    """

    broker: Annotated[str, Meta(extra={"read": _broker})] = ""
    table: Annotated[str, Meta(pattern=r"^[A-Za-z0-9_-]{0,40}$", description=(
        'a name of 1 to 40 letters, digits, "_" or "-", such as "table-3", or "" for this '
        "machine's host name"))] = ""
    topic: Annotated[str, Meta(pattern=f"^{_TOPIC_LEVELS}$", description=(
        'a topic prefix of letters, digits, "_" and "-" with "/" between levels, such as '
        '"gardens" or "club/gardens"'))] = "gardens"
    username: str = ""
    password: str = ""
    password_file: Annotated[str, Meta(pattern=_PATH_OR_NONE, description=(
        'the path of a file holding the password, such as "/etc/companion/mqtt-password", or '
        '"" for none'))] = ""
    ca_file: Annotated[str, Meta(pattern=_PATH_OR_NONE, description=(
        'the path of a CA certificate (PEM), such as "/etc/companion/venue-ca.pem", or "" '
        "for the system's"))] = ""
    discovery: Annotated[str, Meta(pattern=f"^({_TOPIC_LEVELS})?$", description=(
        'a topic prefix such as "homeassistant", or "" for no Home Assistant '
        "discovery"))] = "homeassistant"


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration; ``Config()`` is the built-in defaults."""

    game: GameConfig = field(default_factory=GameConfig)
    players: PlayersConfig = field(default_factory=PlayersConfig)
    board: BoardConfig = field(default_factory=BoardConfig)
    buttons: ButtonsConfig = field(default_factory=ButtonsConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    switches: SwitchMatrixConfig = field(default_factory=SwitchMatrixConfig)
    journal: JournalConfig = field(default_factory=JournalConfig)
    log: LogConfig = field(default_factory=LogConfig)
    web: WebConfig = field(default_factory=WebConfig)
    mqtt: MqttConfig = field(default_factory=MqttConfig)

    def replace_display(self, display: DisplayConfig) -> Config:
        """This configuration with ``display`` instead of its own: what ``SIGHUP`` applies
        (the game and everything else stay as they were at start)."""
        return replace(self, display=display)


def layout_name(config: Config) -> str:
    """The board layout of the configured game (``HELLO``'s layout): the game's name, and
    for Gardens of Uranus its board (``"uranus-hexagonal"``)."""
    name = config.game.name
    return f"uranus-{config.game.board}" if name == "uranus" else name


def display_changes(old: Config, new: Config) -> bool:
    """Whether a reload from ``old`` to ``new`` changes the display (so the device must be
    rebuilt)."""
    return old.display != new.display


def changed_sections(old: Config, new: Config) -> tuple[str, ...]:
    """The names of the sections that differ between ``old`` and ``new``, in file order;
    those not in :data:`RELOADABLE` take effect only after a restart."""
    return tuple(f.name for f in fields(Config) if getattr(old, f.name) != getattr(new, f.name))


# --------------------------------------------------------------------------------------------
# luma's options, from luma's own parser.

# Our defaults where they differ from luma's: a 32x8 MAX7219 chain on SPI, and the first
# framebuffer (luma's "/dev/fd0" is the floppy drive).
_OUR_LUMA_DEFAULTS: Mapping[str, LumaValue] = MappingProxyType({
    "display": "max7219", "width": 32, "height": 8, "interface": "spi",
    "block_orientation": -90, "framebuffer_device": "/dev/fb0",
})  # fmt: skip

# What luma checks only when it opens the device, checked here already so that
# check-config finds it: a size in pixels, the SPI clock rates its spi interface asserts
# (in hertz), an I2C address (7 bits, written in hexadecimal as i2cdetect shows it), the
# reset line's times, which it sleeps as they are, the emulators' scale, which they assert
# at every frame, a GIF's repeat count, 16 bits in the file written at the stop, and the
# buses and pins of a Raspberry Pi: the N of /dev/i2c-N, the B.C of /dev/spidevB.C, SPI's
# four modes, a BCM GPIO of the 40-pin header, and a controller's RAM offsets.
_SPI_SPEEDS = tuple(int(mhz * 1_000_000) for mhz in (
    0.5, 1, 2, 4, 8, 16, 20, 24, 28, 32, 36, 40, 44, 48, 50, 52))
_PIXELS = Annotated[int, Meta(ge=1, le=4096, extra={"unit": "pixels"})]
_RESET_SECONDS = Annotated[float, Meta(ge=0, le=3600, extra={"unit": "seconds"})]
_GPIO_PIN = Annotated[int, Meta(ge=0, le=27, description=(
    "a BCM GPIO number of the 40-pin header, from 0 to 27"))]
_OFFSET = Annotated[int, Meta(ge=0, le=255, extra={"unit": "pixels"})]
_LUMA_OPENING: Mapping[str, KeyType] = MappingProxyType({
    "width": _PIXELS, "height": _PIXELS,
    "gpio_reset_hold_time": _RESET_SECONDS, "gpio_reset_release_time": _RESET_SECONDS,
    "scale": Annotated[int, Meta(ge=1, le=64, extra={
        "unit": "emulator pixels per matrix pixel"})],
    "loop": Annotated[int, Meta(ge=0, le=65535, extra={"unit": "repeats"})],
    "spi_bus_speed": Literal[_SPI_SPEEDS],
    "i2c_address": Annotated[str, Meta(pattern=r"^0[xX][0-7]?[0-9A-Fa-f]$", description=(
        'an I2C address written as text, such as "0x3C"'))],
    "i2c_port": Annotated[int, Meta(ge=0, le=255, description=(
        "an I2C bus number from 0 to 255 (the N of /dev/i2c-N)"))],
    "spi_port": Annotated[int, Meta(ge=0, le=6, description=(
        "an SPI bus number from 0 to 6 (the B of /dev/spidevB.C)"))],
    "spi_device": Annotated[int, Meta(ge=0, le=3, description=(
        "an SPI chip select from 0 to 3 (the C of /dev/spidevB.C)"))],
    "spi_transfer_size": Annotated[int, Meta(ge=1, le=65536, extra={"unit": "bytes"})],
    "spi_mode": Annotated[int, Meta(ge=0, le=3, description="an SPI mode from 0 to 3")],
    "gpio_data_command": _GPIO_PIN, "gpio_chip_select": _GPIO_PIN, "gpio_reset": _GPIO_PIN,
    "gpio_backlight": _GPIO_PIN,
    "h_offset": _OFFSET, "v_offset": _OFFSET,
})  # fmt: skip

# The options luma's parser has only when luma.emulator is installed.  Without it they are
# accepted unchecked and left out, as no device here could use them.
_EMULATOR_CMDLINE = ("transform", "scale", "duration", "loop", "max_frames")


@cache
def _luma_options() -> Mapping[str, tuple[KeyType, LumaValue]]:
    """Every ``luma.core.cmdline`` option: its type (a choice, a flag, a whole number, a
    number or text, ``None`` allowed where luma's default is unset) and our default, read
    from luma's parser."""
    from luma.core.cmdline import create_parser

    options: dict[str, tuple[KeyType, LumaValue]] = {}
    for action in create_parser("companion", autocomplete=False)._actions:
        if action.dest in ("help", "config"):  # not options of the device
            continue
        kind: KeyType
        if action.dest == "display":  # luma's types, its dummy, and the emulators by name
            kind = Literal[(*action.choices, "dummy", *EMULATORS)]
        elif action.choices:
            kind = Literal[tuple(action.choices)]
        elif action.nargs == 0 or action.type is bool:  # --bgr, --debug, --spi-cs-high
            kind = bool
        else:
            kind = action.type if action.type in (int, float) else str
        default = _OUR_LUMA_DEFAULTS.get(action.dest, action.default)
        kind = _LUMA_OPENING.get(action.dest, kind)
        if default is None:
            kind = kind | None
        options[action.dest] = kind, msgspec.convert(default, kind)
    return MappingProxyType(options)


def luma_defaults() -> Mapping[str, LumaValue]:
    """Our default for every ``luma.core.cmdline`` option (luma's, but for a 32x8 MAX7219
    chain on SPI and the framebuffer ``/dev/fb0``; ``None``: unset, luma decides) and every
    option of luma.emulator's devices (:class:`EmulatorOptions`).  Reading luma's parser
    imports luma's device modules, so this is done once, when first needed."""
    return _luma_defaults()


@cache
def _luma_defaults() -> Mapping[str, LumaValue]:
    emulator = EmulatorOptions()
    return MappingProxyType({
        **{name: default for name, (_, default) in _luma_options().items()},
        **{f.name: getattr(emulator, f.name) for f in fields(EmulatorOptions)},
    })


# --------------------------------------------------------------------------------------------
# Reading a key: msgspec checks the value against the key's declared type; what the type
# allows is said from the same declaration.


@cache
def _keys(model: type) -> Mapping[str, KeyType]:
    """The declared type of each field of ``model`` (a section's model), by name."""
    return MappingProxyType(get_type_hints(model, include_extras=True))


def _choices(kind: KeyType) -> tuple[object, ...]:
    """The choices of the ``Literal`` in the type ``kind``, in the order declared."""
    origin: object = get_origin(kind)
    if origin is Literal:
        return get_args(kind)
    return next((found for arg in get_args(kind) if (found := _choices(arg))), ())


def _allowed(info: msgspec.inspect.Type, unit: str = "", choices: tuple[object, ...] = ()) -> str:
    """What a value of the type ``info`` (msgspec's description of a declared type) is, in
    words: "a whole number of milliseconds from 0 to 10000", "one of "a" or "b"" (the
    ``choices`` in their declared order: msgspec sorts them)."""
    of = f" of {unit}" if unit else ""
    i = msgspec.inspect

    def num(bound: float) -> str:
        return f"{bound:g}" if isinstance(bound, float) else str(bound)

    if isinstance(info, i.Metadata):
        description = (info.extra_json_schema or {}).get("description")
        return description or _allowed(info.type, (info.extra or {}).get("unit", ""), choices)
    if isinstance(info, i.IntType | i.FloatType):
        what = "a whole number" if isinstance(info, i.IntType) else "a number"
        if info.ge is not None and info.le is not None:
            return f"{what}{of} from {num(info.ge)} to {num(info.le)}"
        return f"{what}{of}, at least {num(info.ge)}" if info.ge is not None else what + of
    if isinstance(info, i.BoolType):
        return "true or false"
    if isinstance(info, i.LiteralType):
        return f"one of {_words(choices or info.values)}"
    if isinstance(info, i.UnionType):
        (kind,) = [t for t in info.types if not isinstance(t, i.NoneType)]
        return f'{_allowed(kind, unit, choices)}, or "" for none'
    return "text"


_type_info = cache(msgspec.inspect.type_info)  # the same few dozen types, file after file


def _read_value(kind: KeyType, written: object) -> object:
    """``written`` (a TOML value) as a value of the declared type ``kind``; ``""`` stands for
    ``None`` where the type allows it.  Raises _Bad saying what the type allows."""
    info = _type_info(kind)
    extra = (info.extra or {}) if isinstance(info, msgspec.inspect.Metadata) else {}
    plain = info.type if isinstance(info, msgspec.inspect.Metadata) else info
    nullable = isinstance(plain, msgspec.inspect.UnionType) and any(
        isinstance(t, msgspec.inspect.NoneType) for t in plain.types)
    value = None if nullable and written == "" else written
    try:
        if value is not None and "read" in extra:
            value = extra["read"](value)
        return msgspec.convert(value, kind)
    except _Bad as bad:
        if nullable:
            raise _Bad(f'{bad.allowed}, or "" when none is fitted', bad.why, bad.shown) from None
        raise
    except msgspec.ValidationError:
        low = getattr(plain, "ge", None)
        short = isinstance(written, int) and not isinstance(written, bool) and low is not None \
            and written < low
        raise _Bad(_allowed(info, choices=_choices(kind)),
                   extra.get("below", "") if short else "") from None


# --------------------------------------------------------------------------------------------
# Where keys are in the text: tomllib gives no line numbers, so the file is scanned for
# `[table]` headers and `key =` lines.

_KEY_PART = r"""[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'"""
_DOTTED = rf"(?:{_KEY_PART})(?:\s*\.\s*(?:{_KEY_PART}))*"
_HEADER = re.compile(rf"\s*\[\[?\s*({_DOTTED})\s*\]\]?")
_KEY = re.compile(rf"\s*({_DOTTED})\s*=(.*)")
_PARTS = re.compile(_KEY_PART)


def _split_key(dotted: str) -> tuple[str, ...]:
    return tuple(p[1:-1] if p[0] in "\"'" else p for p in _PARTS.findall(dotted))


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line (from 1) of every table header and ``key =`` line, by dotted path."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    in_string = ""  # the delimiter of the multi-line string being skipped
    for number, line in enumerate(text.splitlines(), 1):
        if in_string:
            if line.count(in_string) % 2:
                in_string = ""
            continue
        if header := _HEADER.match(line):
            table = _split_key(header[1])
            lines.setdefault(table, number)
        elif key := _KEY.match(line):
            lines.setdefault(table + _split_key(key[1]), number)
            in_string = next((d for d in ('"""', "'''") if key[2].count(d) % 2), "")
    return lines


class _Problems:
    """Problems found so far, each turned into a sentence with the file and the line."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.sentences: list[str] = []
        self._lines = _key_lines(text)

    def add(self, path: tuple[str, ...], sentence: str) -> None:
        # The key's own line, else its table's header, else no line (e.g. an inline table).
        found = [self._lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in self._lines]
        line = found[0] if found else None
        where = f"{self.source}, line {line}" if line else self.source
        self.sentences.append(f"{where}: {sentence}")


# The models whose fields are the keys of each section; [buttons] holds ButtonPins' keys and
# ButtonsConfig's bounce_ms, [display] DisplayConfig's own, EmulatorOptions' and luma's.
_SECTIONS: Mapping[str, tuple[type, ...]] = MappingProxyType({
    "game": (GameConfig,), "players": (PlayersConfig,), "board": (BoardConfig,),
    "buttons": (ButtonPins, ButtonsConfig),
    "display": (DisplayConfig, EmulatorOptions), "switches": (SwitchMatrixConfig,),
    "journal": (JournalConfig,), "log": (LogConfig,), "web": (WebConfig,),
    "mqtt": (MqttConfig,),
})  # fmt: skip
_NESTED = frozenset({"pins", "luma"})  # fields that are not keys of the file


def _section_keys(section: str) -> dict[str, KeyType]:
    """Every key of ``section`` and its declared type."""
    keys = {name: kind for model in _SECTIONS[section] for name, kind in _keys(model).items()
            if name not in _NESTED}
    if section == "display":
        keys |= {name: kind for name, (kind, _) in _luma_options().items()}
    return keys


def known_keys() -> dict[str, tuple[str, ...]]:
    """Every key the file may hold, by section; ``[game]``'s ``options`` is the table
    ``[game.options]``, whose names are the rules core's to check."""
    keys = {section: tuple(_section_keys(section)) for section in _SECTIONS}
    keys["display"] += tuple(k for k in _EMULATOR_CMDLINE if k not in keys["display"])
    return keys


def _unknown_key(section: str, key: str) -> str:
    known = known_keys()
    owners = [s for s, keys in known.items() if key in keys and s != section]
    if owners:
        return f"[{section}] {key} is not a key of [{section}]; it belongs in [{owners[0]}]"
    close = difflib.get_close_matches(key, known[section], n=1)
    hint = f"did you mean {close[0]}?" if close else "config/companion.toml lists the keys"
    return f"[{section}] {key} is not a known key; {hint}"


def _read_keys(section: str, table: Mapping[str, object],
               problems: _Problems) -> dict[str, object]:
    """The values of ``table``'s keys read as their declared types; every bad key is added
    to ``problems``.  luma.emulator's options where it is not installed are left out."""
    kinds = _section_keys(section)
    values: dict[str, object] = {}
    for key, written in table.items():
        if key not in kinds:
            if not (section == "display" and key in _EMULATOR_CMDLINE):
                problems.add((section, key), _unknown_key(section, key))
            continue
        try:
            values[key] = _read_value(kinds[key], written)
        except _Bad as bad:
            wrong = (f"[{section}] {key} must be {bad.allowed}, "
                     f"not {bad.shown or _show(written)}")
            if bad.why:
                wrong += f"; {bad.why}"
            problems.add((section, key), wrong)
    return values


_Model = TypeVar("_Model")


def _model(model: type[_Model], values: Mapping[str, object]) -> _Model:
    """``model`` with the ``values`` of its own fields, the others at their defaults."""
    own = _keys(cast(type, model))
    return model(**{k: v for k, v in values.items() if k in own})


def _read_options(value: object, problems: _Problems) -> Mapping[str, Scalar]:
    if not isinstance(value, dict):
        problems.add(
            ("game", "options"),
            f"[game] options must be a table [game.options] of names and values, "
            f"not {_show(value)}",
        )
        return _frozen({})
    for key, option in value.items():
        if not isinstance(option, str | int | float | bool):
            problems.add(
                ("game", "options", key),
                f"[game.options] {key} must be a single value (text, a number, true or false), "
                f"not {_show(option)}",
            )
    return _frozen(value)


def _read_game(table: Mapping[str, object], problems: _Problems) -> GameConfig:
    values = _read_keys("game", {k: v for k, v in table.items() if k != "options"}, problems)
    if "options" in table:
        values["options"] = _read_options(table["options"], problems)
    return _model(GameConfig, values)


def _read_buttons(table: Mapping[str, object], problems: _Problems) -> ButtonsConfig:
    values = _read_keys("buttons", table, problems)
    return _model(ButtonsConfig, {**values, "pins": _model(ButtonPins, values)})


def _read_display(table: Mapping[str, object], problems: _Problems) -> DisplayConfig:
    values = _read_keys("display", table, problems)
    ours = _keys(DisplayConfig)
    luma = {**luma_defaults(), **{k: v for k, v in values.items() if k not in ours}}
    if (luma.get("display") in EMULATORS and luma.get("transform") == "scale2x"
            and luma.get("scale", 2) != 2):
        # luma.emulator asserts it at every frame: not one frame would be drawn
        problems.add(("display", "scale" if "scale" in table else "transform"),
                     f'[display] scale {luma["scale"]} needs a transform other than '
                     '"scale2x" (the default), which draws at scale 2 only; set transform = '
                     '"identity"')
    return _model(DisplayConfig, {**values, "luma": _frozen(luma)})


def display_config(options: Mapping[str, object]) -> DisplayConfig:
    """The display settings of ``options``, a ``[display]`` table (luma's options, luma's
    emulators', ``contrast`` and ``frame_interval_ms``; those left out take their defaults),
    checked as the configuration file's are: ``companion.display.make_device`` checks its
    options with this.  Raises :class:`ConfigError` naming every bad option, each
    ``"Display settings: [display] <key> must be ..., not ..."``."""
    problems = _Problems("Display settings", "")
    display = _read_display(options, problems)
    if problems.sentences:
        raise ConfigError([s if s.endswith("?") else f"{s}." for s in problems.sentences])
    return display


_Section: TypeAlias = Any
"""One section's model, of the class :data:`_SECTIONS` gives for its name (``[game]``: a
:class:`GameConfig`): a reader is chosen by the section's name, which no static type ties to
the class, and :class:`Config` takes each by its name."""

_Reader = Callable[[Mapping[str, object], _Problems], _Section]
"""How a section is read: its table, the problems found so far -> its model."""


def _plain(model: type[_Section], section: str) -> _Reader:
    def read(table: Mapping[str, object], problems: _Problems) -> _Section:
        return _model(model, _read_keys(section, table, problems))

    return read


# Each section of _SECTIONS read by its own reader, or by its one model's keys.
_READERS: Mapping[str, _Reader] = MappingProxyType({
    section: {"game": _read_game, "buttons": _read_buttons, "display": _read_display}.get(
        section, _plain(models[0], section))
    for section, models in _SECTIONS.items()
})


@dataclass(frozen=True, slots=True)
class PinUse:
    """One GPIO pin one part of the configuration needs.

    ``pin``: its ``GPIOn`` name; ``part``: the part in words (``"[buttons] ok"``,
    ``"[switches] rows (row 2)"``, ``"the display"``); ``key``: where it is set, as
    ``(section, key)``; ``role``: what a part that needs the pin whatever the file says does
    with it (``"SPI0 MOSI"``, ``"UART TXD"``), empty for a pin the file chooses.
    """

    pin: str
    part: str
    key: tuple[str, ...]
    role: str = ""


def pin_uses(config: Config) -> list[PinUse]:
    """Every GPIO pin ``config`` needs, those it cannot move first: the display's SPI port
    (clock, MOSI, MISO and the chip selects the kernel holds while SPI is on) or its WS2812
    data line (GPIO18), the board's UART (GPIO14 and GPIO15 for ``/dev/serial0``,
    ``/dev/ttyAMA0``, ``/dev/ttyS0``), then the buttons, the buzzer and the status LED, then
    the switch matrix's rows and columns."""
    luma = config.display.luma
    uses: list[PinUse] = []
    port = luma["spi_port"]
    if luma["display"] in _SPI_DISPLAYS and luma["interface"] in ("spi", "gpio_cs_spi") \
            and isinstance(port, int) and port in _SPI_BUS:
        device = luma["spi_device"] if isinstance(luma["spi_device"], int) else 0
        selects = _SPI_CHIP_SELECTS[port]
        held = selects if port == 0 else selects[: device + 1]
        roles = {**_SPI_BUS[port], **{pin: f"CE{n}" for n, pin in enumerate(held)}}
        uses += [PinUse(f"GPIO{pin}", "the display", ("display", "spi_port"), f"SPI{port} {role}")
                 for pin, role in sorted(roles.items())]
        chip_select = luma["gpio_chip_select"]
        if luma["interface"] == "gpio_cs_spi" and isinstance(chip_select, int):
            uses.append(PinUse(f"GPIO{chip_select}", "[display] gpio_chip_select",
                               ("display", "gpio_chip_select")))
    elif luma["display"] in _WS2812_DISPLAYS:
        uses.append(PinUse(f"GPIO{_WS2812_DATA}", "the display", ("display", "display"),
                           "the WS2812 data line"))
    if config.board.port in _UART_PORTS and not config.switches.rows:
        uses += [PinUse(f"GPIO{pin}", f"the board on {config.board.port}", ("board", "port"),
                        f"UART {role}") for pin, role in ((14, "TXD"), (15, "RXD"))]
    for key in (f.name for f in fields(ButtonPins) if f.name != "pull_up"):
        pin = getattr(config.buttons.pins, key)
        if pin is not None:
            uses.append(PinUse(pin, f"[buttons] {key}", ("buttons", key)))
    for key, each in (("rows", "row"), ("columns", "column")):
        uses += [PinUse(pin, f"[switches] {key} ({each} {n})", ("switches", key))
                 for n, pin in enumerate(getattr(config.switches, key), 1)]
    return uses


def pin_clash(use: PinUse, holder: PinUse) -> str:
    """The sentence for ``use`` wanting the pin ``holder`` already has."""
    if holder.role:
        return (f"{use.part} uses {use.pin} ({holder.role}), which {holder.part} needs; "
                "choose another pin")
    return f"{use.part} and {holder.part} both use {use.pin}; each needs its own pin"


def matrix_too_small(rows: int, columns: int, layout: str) -> str | None:
    """The sentence for a switch matrix of ``rows`` x ``columns`` with fewer switches than
    ``layout`` has cells (one switch per cell), with the smallest near-square matrix that
    fits; ``None`` when it fits."""
    from companion.rules import layout_cells

    cells = len(layout_cells(layout))
    if rows * columns >= cells:
        return None
    wide = math.isqrt(cells - 1) + 1
    return (f"[switches] {rows} rows x {columns} columns make {rows * columns} switches, but "
            f"the {layout} board has {cells} cells, one switch each; wire at least "
            f"{-(-cells // wide)} rows x {wide} columns")


def _check_pins(config: Config, problems: _Problems) -> None:
    """Each pin used by one part only, and a switch matrix with a switch for every cell."""
    holders: dict[str, PinUse] = {}
    for use in pin_uses(config):
        holder = holders.setdefault(use.pin, use)
        if holder is not use:
            problems.add(use.key, pin_clash(use, holder))
    switches = config.switches
    if switches.columns and not switches.rows:
        problems.add(("switches", "columns"),
                     "[switches] columns are set but rows are empty; list the row pins too, "
                     "or leave both empty for a board controller on [board] port")
    if not switches.rows:
        return
    small = matrix_too_small(len(switches.rows), len(switches.columns), layout_name(config))
    if small:
        problems.add(("switches", "rows"), small)
    if config.board.sensing != "presence":
        problems.add(("switches", "rows"),
                     '[switches] a switch matrix only tells whether a cell is occupied; set '
                     '[board] sensing = "presence"')


def _check_setup(config: Config, problems: _Problems) -> None:
    """A setup taken from the board needs a board that sees which flower is where."""
    if config.game.setup == "board" and config.board.sensing == "presence":
        problems.add(("game", "setup"),
                     '[game] setup = "board" needs a board that tells the flowers apart, but '
                     '[board] sensing = "presence" sees only where pieces stand; set setup = '
                     '"seed" and lay out the setup the companion shows')


def _syntax_problem(source: str, text: str, error: tomllib.TOMLDecodeError) -> str:
    message = str(error)
    if m := re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", message):
        return f"{source}, line {m[2]}: this is not valid TOML ({m[1].lower()} at column {m[3]})"
    what = message.removesuffix(" (at end of document)")
    last = len(text.splitlines()) or 1
    return f"{source}, line {last}: this is not valid TOML ({what.lower()} at the end of the file)"


def parse_config(text: str, source: str = "<config>", folder: Path | None = None) -> Config:
    """The configuration in ``text`` (TOML); ``source`` names it in messages.

    Keys left out take their defaults.  A relative ``[journal] directory`` or ``[board]
    missions`` is taken from ``folder`` (:func:`load_config` gives the file's own folder, as
    for any config file); with no ``folder``, from the working directory.  Raises
    :class:`companion.errors.ConfigError` whose ``problems`` name every bad key, unknown key
    (with the nearest known one) and unknown section, each as
    ``"<source>, line <n>: [section] key must be ..., not ..."``.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(_syntax_problem(source, text, error)) from None
    except RecursionError:
        raise ConfigError(f"{source}: this is not valid TOML (its lists or tables nest too "
                          "deeply to read)") from None
    problems = _Problems(source, text)
    sections: dict[str, _Section] = {}
    for name, table in data.items():
        reader = _READERS.get(name)
        if reader is not None and isinstance(table, dict):
            sections[name] = reader(table, problems)
        elif reader is not None:
            problems.add((name,), f"{name} must be a section [{name}], not {_show(table)}")
        elif owners := [s for s, keys in known_keys().items() if name in keys]:
            problems.add((name,), f"{name} is outside any section; it belongs in [{owners[0]}]")
        else:
            close = difflib.get_close_matches(name, list(_READERS), n=1)
            hint = (f"did you mean [{close[0]}]?" if close
                    else "the sections are " + ", ".join(f"[{s}]" for s in _READERS))
            problems.add((name,), f"[{name}] is not a known section; {hint}")
    config = Config(**sections)
    if folder is not None:
        config = _from_folder(config, folder)
    _check_pins(config, problems)
    _check_setup(config, problems)
    _check_mqtt(config.mqtt, problems)
    if not problems.sentences:
        _check_game(config, problems)
    if problems.sentences:
        raise ConfigError(problems.sentences)
    return config


def _from_folder(config: Config, folder: Path) -> Config:
    """``config`` with its relative paths (the journal folder, the card catalogue, the MQTT
    password and CA files) made absolute from ``folder``; an absolute path stays as it is."""
    board, journal, mqtt = config.board, config.journal, config.mqtt

    def path(value: str) -> str:
        return str(folder / value) if value else ""

    return replace(config, board=replace(board, missions=path(board.missions)),
                   journal=replace(journal, directory=str(folder / journal.directory)),
                   mqtt=replace(mqtt, password_file=path(mqtt.password_file),
                                ca_file=path(mqtt.ca_file)))


def _check_mqtt(mqtt: MqttConfig, problems: _Problems) -> None:
    """The ``[mqtt]`` keys that only make sense together, and the password and CA files that
    ``run`` reads at start, missing or a folder (one this user may not see is left to it)."""
    if mqtt.password and mqtt.password_file:
        problems.add(("mqtt", "password_file"), "[mqtt] password and password_file are both "
                     "set; keep one of them")
    if (mqtt.password or mqtt.password_file) and not mqtt.username:
        key = "password" if mqtt.password else "password_file"
        problems.add(("mqtt", key), f"[mqtt] {key} is set but username is empty; the broker "
                     "takes a password only with a username")
    if mqtt.ca_file and not mqtt.broker.startswith("mqtts://"):
        problems.add(("mqtt", "ca_file"), '[mqtt] ca_file is for a broker reached over TLS; '
                     'write the broker as "mqtts://host:port"')
    files = {"password_file": mqtt.password_file} if mqtt.broker else {}
    if mqtt.broker.startswith("mqtts://"):
        files["ca_file"] = mqtt.ca_file
    for key, name in files.items():
        try:
            folder = name and stat.S_ISDIR(os.stat(name).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            problems.add(("mqtt", key), f"[mqtt] {key} {name} does not exist")
            continue
        except OSError:  # not this user's to see: the service's user may
            continue
        if folder:
            problems.add(("mqtt", key), f"[mqtt] {key} {name} is a folder, not a file")


def _check_game(config: Config, problems: _Problems) -> None:
    """Ask the game's rules core whether it can set up this game (``[game.options]`` and the
    player count are the rules' to judge) and, for Gardens of Uranus, load the card catalogue,
    so that ``check-config`` finds what ``run`` would."""
    from companion.errors import CompanionError
    from companion.rules import load

    game = config.game
    seats = config.players.seats
    if seats and len(seats) != game.players:
        problems.add(("players", "seats"),
                     f"[players] seats lists {len(seats)} seats but [game] players is "
                     f"{game.players}; give one seat per player")
    named = len(config.players.names)
    while named and not config.players.names[named - 1].strip():  # blank seats at the end
        named -= 1
    if named > game.players:
        problems.add(("players", "names"),
                     f"[players] names lists {named} names but [game] players is "
                     f"{game.players}; give at most one name per player")
    try:
        load(game.name).RULES.new_game(game.players, 1, game.rules_options())
    except CompanionError as error:
        for sentence in getattr(error, "problems", None) or [str(error)]:
            keys = [k for k in game.options if re.search(rf"\b{re.escape(k)}\b", sentence)]
            path = ("game", "options", keys[0]) if keys else ("game", "options")
            problems.add(path, f"[game] {sentence}")
    if game.name == "uranus":  # the card catalogue, which run loads at start
        from companion.referee.uranus import load_catalogue

        try:
            load_catalogue(config.board.missions)
        except ConfigError as error:
            for sentence in error.problems:
                problems.add(("board", "missions"), sentence)


def load_config(path: str | os.PathLike[str]) -> Config:
    """The configuration in the TOML file at ``path``.

    Raises :class:`companion.errors.UnreadableConfigError` for a file that cannot be read
    (missing, a folder, no permission, not UTF-8 text, UTF-8 with a byte order mark),
    :class:`companion.errors.ConfigError` for one that is not TOML and every problem
    :func:`parse_config` finds.
    """
    source = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise UnreadableConfigError(f"{source}: there is no configuration file here") from None
    except IsADirectoryError:
        raise UnreadableConfigError(
            f"{source}: this is a directory, not a configuration file") from None
    except OSError as error:
        raise UnreadableConfigError(
            f"{source}: the file cannot be read ({error.strerror})") from None
    if data.startswith(codecs.BOM_UTF8):  # TOML readers refuse it with "invalid statement"
        raise UnreadableConfigError(
            f'{source}, line 1: the file begins with a byte order mark (saved as "UTF-8 with '
            'BOM"); save it as plain UTF-8')
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UnreadableConfigError(f"{source}, line {line}: this is not UTF-8 text") from None
    return parse_config(text, source, Path(path).absolute().parent)


def check_config(path: str | os.PathLike[str]) -> list[str]:
    """Every problem of the configuration file at ``path`` (see :func:`load_config`), as
    sentences; empty when the file is fine.  Then the extras the file asks for that are not
    installed here (:data:`EXTRAS`), which ``companion run`` refuses to start without, and a
    ``[web] listen`` host it could not listen on (:func:`listen_problem`).
    ``companion check-config FILE`` prints them and exits with 78 (EX_CONFIG) when there are
    any.  Raises :class:`companion.errors.UnreadableConfigError` for a file that cannot be
    read (66)."""
    try:
        config = load_config(path)
    except UnreadableConfigError:
        raise
    except ConfigError as error:
        return error.problems
    notes = _Problems(os.fspath(path), Path(path).read_text(encoding="utf-8"))
    for (section, key), (module, package, extra, what) in EXTRAS.items():
        if getattr(getattr(config, section), key) and not installed(module):
            notes.add((section, key), f"[{section}] {key} is set but {what}: {package} is not "
                      f"installed (pip install 'gardens-companion[{extra}]')")
    if config.web.listen and installed("tornado"):
        reason = listen_problem(config.web.listen)
        if reason:
            notes.add(("web", "listen"),
                      f"[web] listen {config.web.listen!r} cannot be listened on: {reason}")
    return notes.sentences


def listen_problem(listen: str) -> str:
    """Why the live page could not be served on ``listen`` (``"host:port"``, ``"[::1]:8080"``)
    as ``companion run`` binds it, in words (``"Cannot assign requested address"``: a host
    that is not this machine's; ``"Name or service not known"``); ``""`` when it could.  The
    host is bound on a free port and let go at once: the port itself is not tried, since the
    companion being checked may be serving on it."""
    import socket

    import tornado.netutil

    host = listen.rpartition(":")[0].strip("[]")
    try:
        bound = tornado.netutil.bind_sockets(0, host or None, family=socket.AF_UNSPEC)
    except (OSError, ValueError) as error:
        return getattr(error, "strerror", None) or str(error)
    for each in bound:
        each.close()
    return ""


EXTRAS: Mapping[tuple[str, str], tuple[str, str, str, str]] = MappingProxyType({
    ("web", "listen"): ("tornado", "tornado", "web", "the web page cannot be served"),
    ("mqtt", "broker"): ("paho.mqtt", "paho-mqtt", "mqtt", "the table cannot be published"),
})
"""The keys that need an extra: ``(section, key)`` -> the module it brings, its package, the
extra's name and what ``companion run`` could not do without it."""



def config_warnings(path: str | os.PathLike[str]) -> list[str]:
    """What this machine lacks for the configuration at ``path``, found without opening any
    part: no GPIO library for the pin factory (:func:`companion.board.pins.pin_factory_missing`),
    the display's driver package, SPI device node, framebuffer, desktop or terminal
    (:func:`companion.display.device.missing`), and a journal folder that cannot be used
    (:func:`journal_folder_problem`).  Each is a sentence ``"<file>, line <n>: warning: ..."``.
    They are warnings, not problems, because the file is right and ``companion run`` still
    referees: without such a part, trying to open it again, or without saving the games.
    Raises :class:`ConfigError` as :func:`load_config` does."""
    from companion.board.pins import pin_factory_missing
    from companion.display.device import missing

    config = load_config(path)
    notes = _Problems(os.fspath(path), Path(path).read_text(encoding="utf-8"))
    gpio = pin_factory_missing()
    if gpio:
        parts = "the buttons, the buzzer and the status LED"
        if config.switches.rows:
            parts += ", and without the switch matrix: without a board"
        notes.add(("buttons",), f"warning: {gpio}; run would referee without {parts} until "
                  "one is (off a Raspberry Pi, set GPIOZERO_PIN_FACTORY=mock)")
    for key, sentence in missing(config.display.luma):
        notes.add(("display", key), f"warning: [display] {sentence}; run would referee "
                  "without the matrix and try it again")
    journal = journal_folder_problem(Path(config.journal.directory))
    if journal:
        notes.add(("journal", "directory"), f"warning: [journal] {journal}; run would referee "
                  "without saving the games")
    return notes.sentences


def journal_folder_problem(directory: Path) -> str:
    """What ``companion run`` would meet making its journal folder ``directory`` and writing
    in it, found without making it: a file in the way, a folder that takes no new file (read
    only, no permission, or not a real folder such as ``/proc/1``), or a parent in which it
    cannot be made (the same, ``/proc`` even for root).  ``""`` when nothing is in the way.
    An existing folder is tried with a file made and removed at once, the nearest existing
    parent of a missing one with a folder made and removed at once."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        if existing == directory:
            return f"the journal folder {directory} is a file, not a folder"
        return f"the journal folder {directory} cannot be made: {existing} is a file"
    if existing != directory:
        try:
            os.rmdir(tempfile.mkdtemp(dir=existing))
        except OSError as error:
            reason = ("it is not a folder for files" if error.errno == errno.ENOENT
                      else "it is not writable" if error.errno in (errno.EACCES, errno.EPERM)
                      else error.strerror or str(error))
            return f"the journal folder {directory} cannot be made in {existing}: {reason}"
        return ""
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        # ENOENT in a folder that is there: a kernel's folder (/proc, /sys), not one for files
        reason = ("it is not a folder for files" if error.errno == errno.ENOENT
                  else error.strerror or str(error))
        return f"the journal folder {directory} takes no new file ({reason})"
    return ""
