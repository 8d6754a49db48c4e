"""The companion's configuration: a TOML file read into frozen models, checked key by key.

``load_config(path)`` reads ``config/companion.toml`` (or any file in its shape) into a
:class:`Config`; every key has a default, so an empty file is valid.  A broken file raises
:class:`companion.errors.ConfigError` listing *every* problem, each a sentence naming the
file, the line, the key (``[section] key``), what is wrong and what is allowed; every GPIO
pin is used by one part only (:func:`pin_uses`) and a switch matrix has a switch for every
cell.  ``check_config(path)`` gives the same problems as a list for
``companion check-config FILE``, which adds :func:`config_warnings`, what this machine lacks
for it.

Sections (the commented ``config/companion.toml`` documents every key):

- ``[game]`` :class:`GameConfig`, with ``[game.options]`` passed unchanged to the rules core;
- ``[board]`` :class:`BoardConfig`, the board controller and the referee's timings;
- ``[buttons]`` :class:`ButtonsConfig`, the GPIO pins of the buttons, buzzer and status LED;
- ``[display]`` :class:`DisplayConfig`, the ``luma.core.cmdline`` options plus our own;
- ``[journal]`` :class:`JournalConfig`; ``[log]`` :class:`LogConfig`.

Reloading (``SIGHUP``): only ``[display]`` is applied to a running daemon
(:data:`RELOADABLE`, :meth:`Config.replace_display`, :func:`display_changes`); the other
sections are read at start, and :func:`changed_sections` tells the daemon which of them a
reload would ignore, so it can say so in the log.
"""

from __future__ import annotations

import difflib
import errno
import json
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from companion.errors import ConfigError, UnreadableConfigError
from companion.rules import GAMES

Scalar = str | int | float | bool
"""A single TOML value: what ``[game.options]`` may hold."""

LumaValue = str | int | float | bool | None
"""A ``luma.core.cmdline`` option value; ``None`` where luma's default is "unset"."""

URANUS_BOARDS = ("hexagonal", "trapezoid", "rhombus")
"""The Gardens of Uranus boards (docs/RULINGS.md Uranus #2)."""

MAX_SEED = 2**63 - 1
"""The largest ``[game] seed`` (and ``--seed`` of ``companion demo`` and ``sim``)."""

DISPLAYS = (
    "max7219", "ws2812", "neopixel", "neosegment", "apa102", "unicornhathd",
    "capture", "gifanim", "pygame", "asciiart", "asciiblock",
    "linux_framebuffer", "dummy",
)  # fmt: skip
"""Display types: luma.led_matrix's devices, luma.emulator's, luma.core's framebuffer and
luma.core's ``dummy`` (which keeps the last image, for tests)."""

INTERFACES = (
    "i2c", "noop", "spi", "gpio_cs_spi", "bitbang", "ftdi_spi", "ftdi_i2c", "pcf8574",
    "bitbang_6800",
)  # fmt: skip
"""``luma.core.cmdline`` interface types."""

TRANSFORMS = ("identity", "led_matrix", "none", "scale2x", "seven_segment", "smoothscale")
"""luma.emulator's scaling transforms."""

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
# Models


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class GameConfig:
    """``[game]``: which game, how many players, the seed.

    ``name`` is one of :data:`companion.rules.GAMES`; ``players`` 2 to 5 (all three rules
    texts); ``seed`` 0 means "draw one at start", else the setup is reproducible;
    ``board`` is the Uranus board (:data:`URANUS_BOARDS`, ignored by the other games);
    ``options`` is ``[game.options]`` unchanged, for the rules core's ``new_game`` to check.
    """

    name: str = "enceladus"
    players: int = 2
    seed: int = 0
    board: str = "hexagonal"
    options: Mapping[str, Scalar] = field(default_factory=lambda: _frozen({}))

    def rules_options(self) -> dict[str, Any]:
        """The options for the rules core's ``new_game``: ``[game.options]``, plus the board
        for Gardens of Uranus (chosen per game, docs/RULINGS.md Uranus #7)."""
        options = dict(self.options)
        if self.name == "uranus":
            options.setdefault("board", self.board)
        return options


@dataclass(frozen=True, slots=True)
class BoardConfig:
    """``[board]``: the board controller and the referee's timings.

    ``port``: a device path or a pyserial URL (``loop://``, ``socket://host:port``,
    ``spy://...``, ``hwgrep://VID:PID``); ``baudrate`` in bit/s; ``sensing``
    ``"identity"`` or ``"presence"``; ``tray``: a show-tray is fitted; ``dice`` (Mars)
    ``"tray"``, ``"buttons"`` or ``"virtual"``; ``cards`` (Uranus) ``"reader"`` or
    ``"buttons"``; ``debounce_ms``: how long a cell must hold a reading; ``settle_ms``: how
    long a piece set down where it may only be on its way must stand before its step is
    committed; ``grace_ms``: how long a board
    that matches no legal step is left before it is shown as wrong (how a turn flows:
    :mod:`companion.referee.referee`); ``heartbeat_timeout_s``: silence after which the board
    counts as lost; ``ready_timeout_s``: how long the start waits for the board before
    showing *no board*.
    ``missions`` (Uranus): the path of the card catalogue (relative: from the config file's
    folder), ``""`` for the one shipped with the companion.
    """

    port: str = "/dev/ttyACM0"
    baudrate: int = 115200
    sensing: str = "identity"
    tray: bool = True
    dice: str = "tray"
    cards: str = "reader"
    missions: str = ""
    debounce_ms: int = 20
    settle_ms: int = 400
    grace_ms: int = 1500
    heartbeat_timeout_s: float = 2.0
    ready_timeout_s: float = 10.0


@dataclass(frozen=True, slots=True)
class ButtonPins:
    """The GPIO wiring of the controls.

    Pins are BCM names, ``"GPIO17"`` (the config also accepts every name gpiozero gives a pin
    of the 40-pin header, ``17``, ``"BCM17"``, ``"BOARD11"``, ``"J8:11"``, and stores the
    ``GPIOn`` name); ``None`` for a part that is not fitted (``roll``, ``buzzer`` and
    ``status_led`` are optional).  ``pull_up``: buttons connect their pin to ground and the
    Pi's pull-up holds it high; ``False`` for buttons to 3V3 with a pull-down.
    """

    ok: str = "GPIO17"
    undo: str = "GPIO27"
    select: str = "GPIO22"
    roll: str | None = None
    buzzer: str | None = "GPIO23"
    status_led: str | None = None
    pull_up: bool = True


@dataclass(frozen=True, slots=True)
class ButtonsConfig:
    """``[buttons]``: ``pins`` (the wiring) and ``bounce_ms``, how long a contact must stay
    put before a press or release counts, in milliseconds."""

    pins: ButtonPins = field(default_factory=ButtonPins)
    bounce_ms: int = 30


@dataclass(frozen=True, slots=True)
class DisplayConfig:
    """``[display]``: the LED matrix.

    ``luma`` maps every ``luma.core.cmdline`` option (underscored: ``block_orientation``) and
    the options of luma.emulator's devices (``filename``, ``file_template``, ``frame_rate``) to
    its value, ready for ``companion.display.make_device(options)``; our defaults drive a
    32x8 MAX7219 chain on SPI.  ``contrast`` 0 to 255; ``frame_interval_ms`` is the time
    between frames while something scrolls or blinks.
    """

    luma: Mapping[str, LumaValue] = field(default_factory=lambda: LUMA_DEFAULTS)
    contrast: int = 64
    frame_interval_ms: int = 50


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

    rows: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    debounce_ms: int = 20
    scan_interval_ms: int = 2


@dataclass(frozen=True, slots=True)
class JournalConfig:
    """``[journal]``: where game journals go (systemd's ``StateDirectory``; a relative
    ``directory`` is from the config file's folder) and whether every committed step is
    fsync'd (so a power cut loses no committed step)."""

    directory: str = "/var/lib/companion"
    fsync: bool = True


@dataclass(frozen=True, slots=True)
class LogConfig:
    """``[log]``: ``level`` is ``"debug"``, ``"info"``, ``"warning"`` or ``"error"``."""

    level: str = "info"


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration; ``Config()`` is the built-in defaults."""

    game: GameConfig = field(default_factory=GameConfig)
    board: BoardConfig = field(default_factory=BoardConfig)
    buttons: ButtonsConfig = field(default_factory=ButtonsConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    switches: SwitchMatrixConfig = field(default_factory=SwitchMatrixConfig)
    journal: JournalConfig = field(default_factory=JournalConfig)
    log: LogConfig = field(default_factory=LogConfig)

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
# Checks of single values: each returns the model's value or raises _Bad saying what is allowed.


class _Bad(Exception):
    """A value refused: ``allowed`` says what the key takes, ``why`` (optional) why a value
    that looks reasonable is not."""

    def __init__(self, allowed: str, why: str = "") -> None:
        super().__init__(allowed)
        self.allowed = allowed
        self.why = why


Check = Callable[[object], Any]


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


def _of(unit: str) -> str:
    return f" of {unit}" if unit else ""


def _choice(*allowed: Scalar) -> Check:
    def check(value: object) -> object:
        # type() too: True == 1 in Python, but `rotate = true` is a mistake.
        if any(type(value) is type(a) and value == a for a in allowed):
            return value
        raise _Bad(f"one of {_words(allowed)}")

    return check


def _whole(low: int, high: int, unit: str = "") -> Check:
    def check(value: object) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        raise _Bad(f"a whole number{_of(unit)} from {low} to {high}")

    return check


def _debounce(value: object) -> int:
    """``[board] debounce_ms``: at least :data:`MIN_DEBOUNCE_MS`, saying why to a shorter one."""
    try:
        ms: int = _whole(MIN_DEBOUNCE_MS, 1000, "milliseconds")(value)
    except _Bad as bad:
        if isinstance(value, int) and not isinstance(value, bool) and value < MIN_DEBOUNCE_MS:
            raise _Bad(bad.allowed, f"a shorter one lets a {CONTACT_GLITCH_MS} ms sensor glitch "
                       "through as a piece lifted, and steps nobody made get committed") from None
        raise
    return ms


def _number(low: float, high: float, unit: str) -> Check:
    def check(value: object) -> float:
        if isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high:
            return float(value)
        raise _Bad(f"a number{_of(unit)} from {low:g} to {high:g}")

    return check


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise _Bad("true or false")


def _text(what: str) -> Check:
    def check(value: object) -> str:
        if isinstance(value, str) and value.strip():
            return value
        raise _Bad(what)

    return check


def _catalogue_path(value: object) -> str:
    if isinstance(value, str) and value.strip() == value:
        return value
    raise _Bad('the path of a card catalogue, such as "/etc/companion/missions.toml" (a '
               'relative one from this file\'s folder), or "" for the one shipped with the '
               'companion')


def _i2c_address(value: object) -> str:
    try:
        if isinstance(value, str) and 0 <= int(value, 0) <= 0x7F:
            return value
    except ValueError:
        pass
    raise _Bad('an I2C address written as text, such as "0x3C"')


_PIN_ALLOWED = 'a GPIO pin such as "GPIO17" (also 17, "BCM17", "BOARD11" or "J8:11")'


@cache
def _header() -> Any:
    """The 40-pin header as gpiozero knows it: every name of every pin (the same header on
    every Raspberry Pi since the Model B+; the Pi 3 Model B's data stands for them all)."""
    from gpiozero.pins.pi import PiBoardInfo

    return PiBoardInfo.from_revision(0xA02082)


def _gpio_name(value: object) -> str:
    """The ``GPIOn`` name of a pin written as gpiozero names it (17, "GPIO17", "BCM17",
    "BOARD11", "J8:11", any case)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _Bad(_PIN_ALLOWED)
    spec = value.strip().upper() if isinstance(value, str) else value
    found = [info for _, info in _header().find_pin(spec)]
    if not found:
        raise _Bad(f"{_PIN_ALLOWED}; the header has GPIO0 to GPIO27")
    if not found[0].name.startswith("GPIO"):
        raise _Bad(f"{_PIN_ALLOWED}; header pin {found[0].number} is {found[0].name}, "
                   "not a GPIO pin")
    return str(found[0].name)


def _pins(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Bad('a list of GPIO pins such as ["GPIO5", "GPIO6"]')
    return tuple(_gpio_name(pin) for pin in value)


def _optional_pin(value: object) -> str | None:
    if value == "":
        return None
    try:
        return _gpio_name(value)
    except _Bad as bad:
        raise _Bad(f'{bad.allowed}, or "" when none is fitted') from None


_URL_SCHEMES = ("loop", "socket", "rfc2217", "spy", "alt", "hwgrep", "cp2110")
_NEEDS_HOST = ("socket", "rfc2217")
_HOST_PORT = re.compile(r"[^/:?]+:(\d{1,5})([/?].*)?")


def _port(value: object) -> str:
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


# The SPI clock rates luma's spi interface accepts (it asserts one of them), in hertz.
_SPI_SPEEDS = tuple(int(mhz * 1_000_000) for mhz in (
    0.5, 1, 2, 4, 8, 16, 20, 24, 28, 32, 36, 40, 44, 48, 50, 52))

# The luma.core.cmdline options: name, our default, check.  Defaults are luma's own except
# display, width, height, interface and block_orientation (a 32x8 MAX7219 chain on SPI).
_LUMA_OPTIONS: tuple[tuple[str, LumaValue, Check], ...] = (
    ("display", "max7219", _choice(*DISPLAYS)),
    ("width", 32, _whole(1, 1024, "pixels")),
    ("height", 8, _whole(1, 1024, "pixels")),
    ("rotate", 0, _choice(0, 1, 2, 3)),
    ("interface", "spi", _choice(*INTERFACES)),
    ("i2c_port", 1, _whole(0, 255)),
    ("i2c_address", "0x3C", _i2c_address),
    ("spi_port", 0, _whole(0, 7)),
    ("spi_device", 0, _whole(0, 7)),
    ("spi_bus_speed", 8_000_000, _choice(*_SPI_SPEEDS)),
    ("spi_transfer_size", 4096, _whole(1, 65536, "bytes")),
    ("spi_mode", None, _whole(0, 3)),
    ("spi_cs_high", False, _flag),
    ("ftdi_device", "ftdi://::/1", _text("an FTDI device URL")),
    ("framebuffer_device", "/dev/fb0", _text("a device path")),
    ("gpio", None, _text('a Python module name such as "OPi.GPIO"')),
    ("gpio_mode", None, _text('a Python name such as "OPi.GPIO.BOARD"')),
    ("gpio_data_command", 24, _whole(0, 53, "BCM")),
    ("gpio_chip_select", 24, _whole(0, 53, "BCM")),
    ("gpio_reset", 25, _whole(0, 53, "BCM")),
    ("gpio_backlight", 18, _whole(0, 53, "BCM")),
    ("gpio_reset_hold_time", 0.0, _number(0, 10, "seconds")),
    ("gpio_reset_release_time", 0.0, _number(0, 10, "seconds")),
    ("block_orientation", -90, _choice(0, 90, -90, 180)),
    ("mode", "RGB", _choice("1", "RGB", "RGBA")),
    ("framebuffer", "diff_to_previous", _choice("diff_to_previous", "full_frame")),
    ("num_segments", 4, _whole(1, 1024)),
    ("bgr", False, _flag),
    ("inverse", False, _flag),
    ("h_offset", 0, _whole(-4096, 4096, "pixels")),
    ("v_offset", 0, _whole(-4096, 4096, "pixels")),
    ("backlight_active", "low", _choice("low", "high")),
    ("debug", False, _flag),
    ("transform", "scale2x", _choice(*TRANSFORMS)),
    ("scale", 2, _whole(1, 64)),
    ("duration", 0.01, _number(0, 60, "seconds")),
    ("loop", 0, _whole(0, 65535)),
    ("max_frames", None, _whole(1, 1_000_000)),
)


def _file_template(value: object) -> str:
    try:
        if isinstance(value, str) and value.format(1) != value.format(2):
            return value
    except (IndexError, KeyError, ValueError):
        pass
    raise _Bad('a file name with {} where the frame number goes, such as "frame_{0:06}.png"')


# The options luma.emulator's devices take beside luma.core.cmdline's: name, luma's default,
# check (capture's file_template, gifanim's filename, pygame's frame_rate).
_EMULATOR_OPTIONS: tuple[tuple[str, LumaValue, Check], ...] = (
    ("file_template", "luma_{0:06}.png", _file_template),
    ("filename", "luma_anim.gif", _text('a file path such as "matrix.gif"')),
    ("frame_rate", 60, _whole(1, 1000, "frames per second")),
)
LUMA_DEFAULTS: Mapping[str, LumaValue] = MappingProxyType(
    {name: default for name, default, _ in (*_LUMA_OPTIONS, *_EMULATOR_OPTIONS)}
)
"""Our default for every ``luma.core.cmdline`` option and every option of luma.emulator's
devices (``None``: unset, luma decides)."""

_PIN_KEYS = ("ok", "undo", "select", "roll", "buzzer", "status_led")

_CHECKS: Mapping[str, Mapping[str, Check]] = MappingProxyType({
    "game": {
        "name": _choice(*GAMES),
        "players": _whole(2, 5, "players"),
        "seed": _whole(0, MAX_SEED),
        "board": _choice(*URANUS_BOARDS),
    },
    "board": {
        "port": _port,
        "baudrate": _whole(50, 4_000_000, "bits per second"),
        "sensing": _choice("identity", "presence"),
        "tray": _flag,
        "dice": _choice("tray", "buttons", "virtual"),
        "cards": _choice("reader", "buttons"),
        "missions": _catalogue_path,
        "debounce_ms": _debounce,
        "settle_ms": _whole(0, 10000, "milliseconds"),
        "grace_ms": _whole(0, 60000, "milliseconds"),
        "heartbeat_timeout_s": _number(0.1, 60, "seconds"),
        "ready_timeout_s": _number(0, 3600, "seconds"),
    },
    "buttons": {
        "ok": _gpio_name,
        "undo": _gpio_name,
        "select": _gpio_name,
        "roll": _optional_pin,
        "buzzer": _optional_pin,
        "status_led": _optional_pin,
        "pull_up": _flag,
        "bounce_ms": _whole(0, 1000, "milliseconds"),
    },
    "display": {
        **{name: check for name, _, check in (*_LUMA_OPTIONS, *_EMULATOR_OPTIONS)},
        "contrast": _whole(0, 255),
        "frame_interval_ms": _whole(10, 1000, "milliseconds"),
    },
    "switches": {
        "rows": _pins,
        "columns": _pins,
        "debounce_ms": _whole(0, 1000, "milliseconds"),
        "scan_interval_ms": _whole(0, 1000, "milliseconds"),
    },
    "journal": {
        "directory": _text("a directory path"),
        "fsync": _flag,
    },
    "log": {
        "level": _choice("debug", "info", "warning", "error"),
    },
})  # fmt: skip


def known_keys() -> dict[str, tuple[str, ...]]:
    """Every key the file may hold, by section; ``[game]``'s ``options`` is the table
    ``[game.options]``, whose names are the rules core's to check."""
    keys = {section: tuple(checks) for section, checks in _CHECKS.items()}
    keys["game"] += ("options",)
    return keys


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


def _unknown_key(section: str, key: str) -> str:
    known = known_keys()
    owners = [s for s, keys in known.items() if key in keys and s != section]
    if owners:
        return f"[{section}] {key} is not a key of [{section}]; it belongs in [{owners[0]}]"
    close = difflib.get_close_matches(key, known[section], n=1)
    hint = f"did you mean {close[0]}?" if close else "config/companion.toml lists the keys"
    return f"[{section}] {key} is not a known key; {hint}"


def _read_keys(section: str, table: Mapping[str, object], problems: _Problems) -> dict[str, Any]:
    """The checked values of ``table``'s keys; every bad key is added to ``problems``."""
    checks = _CHECKS[section]
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in checks:
            problems.add((section, key), _unknown_key(section, key))
            continue
        try:
            values[key] = checks[key](value)
        except _Bad as bad:
            wrong = f"[{section}] {key} must be {bad.allowed}, not {_show(value)}"
            if bad.why:
                wrong += f"; {bad.why}"
            problems.add((section, key), wrong)
    return values


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
    return replace(GameConfig(), **values)


def _read_buttons(table: Mapping[str, object], problems: _Problems) -> ButtonsConfig:
    values = _read_keys("buttons", table, problems)
    wiring = {k: v for k, v in values.items() if k != "bounce_ms"}
    default = ButtonsConfig()
    bounce_ms = values.get("bounce_ms", default.bounce_ms)
    return ButtonsConfig(replace(default.pins, **wiring), bounce_ms)


def _read_display(table: Mapping[str, object], problems: _Problems) -> DisplayConfig:
    values = _read_keys("display", table, problems)
    luma = {k: v for k, v in values.items() if k in LUMA_DEFAULTS}
    ours = {k: v for k, v in values.items() if k not in LUMA_DEFAULTS}
    return replace(DisplayConfig(), luma=_frozen({**LUMA_DEFAULTS, **luma}), **ours)


def _plain(model: type[Any], section: str) -> Callable[[Mapping[str, object], _Problems], Any]:
    def read(table: Mapping[str, object], problems: _Problems) -> Any:
        return replace(model(), **_read_keys(section, table, problems))

    return read


_READERS: Mapping[str, Callable[[Mapping[str, object], _Problems], Any]] = MappingProxyType({
    "game": _read_game,
    "board": _plain(BoardConfig, "board"),
    "buttons": _read_buttons,
    "display": _read_display,
    "switches": _plain(SwitchMatrixConfig, "switches"),
    "journal": _plain(JournalConfig, "journal"),
    "log": _plain(LogConfig, "log"),
})  # fmt: skip


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
    for key in _PIN_KEYS:
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
    problems = _Problems(source, text)
    sections: dict[str, Any] = {}
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
    if not problems.sentences:
        _check_game(config, problems)
    if problems.sentences:
        raise ConfigError(problems.sentences)
    return config


def _from_folder(config: Config, folder: Path) -> Config:
    """``config`` with its relative paths (the journal folder, the card catalogue) made
    absolute from ``folder``; an absolute path stays as it is."""
    board, journal = config.board, config.journal
    missions = str(folder / board.missions) if board.missions else ""
    return replace(config, board=replace(board, missions=missions),
                   journal=replace(journal, directory=str(folder / journal.directory)))


def _check_game(config: Config, problems: _Problems) -> None:
    """Ask the game's rules core whether it can set up this game (``[game.options]`` and the
    player count are the rules' to judge) and, for Gardens of Uranus, load the card catalogue,
    so that ``check-config`` finds what ``run`` would."""
    from companion.errors import CompanionError
    from companion.rules import load

    game = config.game
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
    (missing, a folder, no permission, not UTF-8 text), :class:`companion.errors.ConfigError`
    for one that is not TOML and every problem :func:`parse_config` finds.
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
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UnreadableConfigError(f"{source}, line {line}: this is not UTF-8 text") from None
    return parse_config(text, source, Path(path).absolute().parent)


def check_config(path: str | os.PathLike[str]) -> list[str]:
    """Every problem of the configuration file at ``path`` (see :func:`load_config`), as
    sentences; empty when the file is fine.  ``companion check-config FILE`` prints them and
    exits with 78 (EX_CONFIG) when there are any.  Raises
    :class:`companion.errors.UnreadableConfigError` for a file that cannot be read (66)."""
    try:
        load_config(path)
    except UnreadableConfigError:
        raise
    except ConfigError as error:
        return error.problems
    return []


def config_warnings(path: str | os.PathLike[str]) -> list[str]:
    """What this machine lacks for the configuration at ``path``, found without opening any
    part: no GPIO library for the pin factory (:func:`companion.controls.pin_factory_missing`),
    the display's driver package, SPI device node, framebuffer, desktop or terminal
    (:func:`companion.display.device.missing`), and a journal folder that cannot be used
    (:func:`journal_folder_problem`).  Each is a sentence ``"<file>, line <n>: warning: ..."``.
    They are warnings, not problems, because the file is right and ``companion run`` still
    referees: without such a part, trying to open it again, or without saving the games.
    Raises :class:`ConfigError` as :func:`load_config` does."""
    from companion.controls import pin_factory_missing
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
    cannot be made.  ``""`` when nothing is in the way.  An existing folder is tried with a
    file made and removed at once."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        if existing == directory:
            return f"the journal folder {directory} is a file, not a folder"
        return f"the journal folder {directory} cannot be made: {existing} is a file"
    if existing != directory:
        if not os.access(existing, os.W_OK | os.X_OK):
            return (f"the journal folder {directory} cannot be made: {existing} is not "
                    "writable")
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
