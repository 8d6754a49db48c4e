"""Build the luma device of the LED matrix from configuration (``luma.core.cmdline`` options).

The options are those of luma's command line, written with underscores (``display``,
``width``, ``height``, ``interface``, ``block_orientation``, ``rotate``, ``spi_port``,
``spi_device``, ``gpio``, ``mode``, ``transform``, ``scale``, ``duration``, ``loop``,
``max_frames``...), so a MAX7219 chain, a WS2812 or Unicorn HAT HD matrix and the
luma.emulator devices are all set up the way luma users know.  Besides them:

* ``display = "dummy"``: ``luma.core.device.dummy`` (keeps the last image; tests, benchmarks);
* ``contrast`` (0-255): the brightness of the LEDs, set on the device once built; the
  luma.emulator devices always draw at full brightness, so their pictures show the colours
  the matrix is drawn in (luma dims them by blending with black);
* the options luma.emulator's devices take that luma's command line has not: ``filename``
  (``gifanim``: where the GIF goes), ``file_template`` (``capture``: the PNG names, e.g.
  ``"frame_{0:06}.png"``) and ``frame_rate`` (``pygame``: most frames a second);
* ``gifanim`` keeps each frame for as long as it was on the matrix
  (:class:`~companion.display.recorder.GifRecorder`), so luma's ``duration`` is not used;
* ``frame_interval_ms`` is read by whoever builds the :class:`~companion.display.Display` and
  ignored here.

:func:`missing` tells, without opening the device, what this machine lacks for it (a Python
package, the SPI device node, a framebuffer, a desktop, a terminal), for
``companion check-config``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.config import DISPLAYS
from companion.errors import ConfigError

_EMULATOR_KWARGS = ("filename", "file_template", "frame_rate")  # luma.emulator's, not its cmdline's
_OURS = ("contrast", "frame_interval_ms", *_EMULATOR_KWARGS)
_TTY_ONLY = ("asciiart", "asciiblock")
_NO_BUS = ("ws2812", "neopixel", "neosegment")  # driven by rpi_ws281x (PWM/DMA), not a serial bus
_SPI = ("max7219", "apa102", "unicornhathd")
# Options luma's parser has only when luma.emulator is installed; a real device ignores them.
_EMULATOR_CMDLINE = ("transform", "scale", "duration", "loop", "max_frames")

EMULATORS = ("capture", "gifanim", "pygame", *_TTY_ONLY)
"""The display types of luma.emulator, which the ``emulator`` extra installs."""

EMULATOR_INSTALL = "pip install 'gardens-companion[emulator]'"
"""The command that installs luma.emulator alongside the companion."""


def needs_emulator(display: str) -> bool:
    """Whether ``display`` is one of :data:`EMULATORS` and luma.emulator is not installed."""
    return display in EMULATORS and not _installed("luma.emulator")


class _Parser(argparse.ArgumentParser):
    """luma's option parser, raising instead of printing usage and exiting."""

    def error(self, message: str) -> Any:  # argparse's signature returns NoReturn
        raise ConfigError(f"Display settings: {message}.")


def _int(options: Mapping[str, object], key: str, default: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"Display option {key} must be a whole number of pixels, not {value!r}.")
    return value


def _dummy(options: Mapping[str, object]) -> Any:
    from luma.core.device import dummy

    mode = options.get("mode", "RGB")
    if mode not in ("1", "RGB", "RGBA"):
        raise ConfigError(f"Display option mode must be 1, RGB or RGBA, not {mode!r}.")
    rotate = options.get("rotate", 0)
    if rotate not in (0, 1, 2, 3):
        raise ConfigError(f"Display option rotate must be 0, 1, 2 or 3, not {rotate!r}.")
    return dummy(width=_int(options, "width", 32), height=_int(options, "height", 8),
                 rotate=rotate, mode=mode)


def _parse(options: Mapping[str, object]) -> argparse.Namespace:
    """The options through luma's own parser: its choices and types check every value."""
    from luma.core.cmdline import create_parser

    parser = create_parser("companion display", parser=_Parser(exit_on_error=False),
                           autocomplete=False)
    known = vars(parser.parse_args([]))
    options = {k: v for k, v in options.items() if k in known or k not in _EMULATOR_CMDLINE}
    unknown = sorted(k for k in options if k not in known and k not in _OURS)
    if unknown:
        raise ConfigError([f"Unknown display option {k!r}: not a luma.core.cmdline option "
                           f"(written with underscores, e.g. block_orientation)." for k in unknown])
    argv: list[str] = []
    flags: dict[str, bool] = {}
    for key, value in options.items():
        if key in _OURS or value is None:
            continue
        if isinstance(value, bool):  # luma's flags take no value; set them after parsing
            flags[key] = value
        else:
            argv += ["--" + key.replace("_", "-"), str(value)]
    try:
        args: argparse.Namespace = parser.parse_args(argv)
    except argparse.ArgumentError as error:
        name = (error.argument_name or "").split("/")[0].lstrip("-").replace("-", "_")
        raise ConfigError(f"Display option {name}: {error.message}.") from None
    for key, value in flags.items():
        setattr(args, key, value)
    return args


def _create(args: argparse.Namespace, options: Mapping[str, object]) -> Any:
    # every device takes **kwargs: only the emulator that knows one uses it
    for key in _EMULATOR_KWARGS:
        if options.get(key) is not None:
            setattr(args, key, options[key])
    if args.display == "gifanim":
        from companion.display.recorder import GifRecorder

        return GifRecorder(**vars(args))
    from luma.core.cmdline import create_device

    return create_device(args)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def missing(options: Mapping[str, object]) -> list[tuple[str, str]]:
    """What this machine lacks to open the device of ``options`` (as for :func:`make_device`),
    found without opening it: ``(option, sentence)`` pairs naming the option concerned and
    what is missing, empty when nothing is known to be.

    Looked at: the Python package a driver needs (spidev for SPI, rpi_ws281x for the WS2812
    family, luma.emulator and its pygame for the emulators, with the command that installs
    them, :data:`EMULATOR_INSTALL`), the SPI device node (``/dev/spidev<port>.<device>``,
    there once SPI is enabled), the framebuffer, a desktop for ``pygame``, and that
    ``asciiart``/``asciiblock`` draw in a terminal, which a service has not.
    """
    display = options.get("display", "max7219")
    interface = options.get("interface", "noop" if display in _NO_BUS else "spi")
    found: list[tuple[str, str]] = []
    if display in _SPI and interface in ("spi", "gpio_cs_spi"):
        node = f"/dev/spidev{options.get('spi_port', 0)}.{options.get('spi_device', 0)}"
        if not _installed("spidev"):
            found.append(("interface", f'display = "{display}" on SPI needs the Python package '
                          "spidev (python3-spidev on Raspberry Pi OS), which is not installed"))
        elif not Path(node).exists():
            found.append(("spi_port", f"{node} is not here: enable SPI (raspi-config, Interface "
                          "Options) or set spi_port and spi_device to the display's bus"))
    elif display in _NO_BUS and not _installed("rpi_ws281x"):
        found.append(("display", f'display = "{display}" needs the Python package rpi_ws281x, '
                      "which is not installed"))
    elif isinstance(display, str) and needs_emulator(display):
        found.append(("display", f'display = "{display}" is a luma.emulator device, which is '
                      f"not installed: {EMULATOR_INSTALL}"))
    elif display in EMULATORS and not _installed("pygame"):
        found.append(("display", f'display = "{display}" needs the Python package pygame, '
                      f"which is not installed: {EMULATOR_INSTALL}"))
    elif display == "pygame" and not any(
            os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")):
        found.append(("display", 'display = "pygame" opens a window, but there is no desktop '
                      "here ($DISPLAY and $WAYLAND_DISPLAY are not set)"))
    elif display in _TTY_ONLY:
        found.append(("display", f'display = "{display}" draws in the terminal companion is '
                      "started from; started by systemd it has none"))
    elif display == "linux_framebuffer":
        device = str(options.get("framebuffer_device", ""))
        number = re.fullmatch(r"/dev/fb(\d+)", device)
        if number is None:
            found.append(("framebuffer_device", f'framebuffer_device "{device}" is not a '
                          'framebuffer; they are named like "/dev/fb0"'))
        elif not Path(f"/sys/class/graphics/fb{number[1]}").exists():
            found.append(("framebuffer_device", f"there is no framebuffer {device} here"))
    return found


def make_device(options: Mapping[str, object]) -> Any:
    """A luma device built from ``options`` (see the module docstring); ``display`` defaults to
    ``"max7219"``, ``width`` x ``height`` to 32 x 8.  luma.led_matrix and luma.emulator are
    imported only when a device is built (luma's option parser lists every display type).

    ``interface`` defaults to ``"spi"`` (``"noop"`` for the WS2812 family, which needs no bus).
    A MAX7219 on SPI gets ``gpio=noop()`` (it has no reset or data/command line), as luma's
    ``create_device`` does for LED matrices.  Raises :class:`companion.errors.ConfigError`, with a
    sentence naming the option, for an unknown option or display type (naming every type
    :data:`companion.config.DISPLAYS` lists), a bad value, a driver
    whose Python package is missing (an emulator without luma.emulator), SPI (or another bus)
    that is not available, or a terminal emulator (``asciiart``, ``asciiblock``) without a
    terminal on standard output.
    """
    options = dict(options)
    options.setdefault("display", "max7219")
    options.setdefault("width", 32)  # the commonest module: four 8 x 8 MAX7219 blocks
    options.setdefault("height", 8)
    display = options["display"]
    # luma's create_device builds the interface for every LED matrix, WS2812 too: default to
    # the bus each one really uses (luma's own default, i2c, fits none of them)
    options.setdefault("interface", "noop" if display in _NO_BUS else "spi")
    if display not in DISPLAYS:  # luma's own list lacks dummy, and the emulators if absent
        raise ConfigError(f"Display option display={display!r} is not a display type; the "
                          f"types are {', '.join(DISPLAYS)}.")
    if display == "dummy":
        return _dummy(options)
    if isinstance(display, str) and needs_emulator(display):
        raise ConfigError(f"Display option display={display!r} is a luma.emulator device, which "
                          f"is not installed: {EMULATOR_INSTALL}.")
    if display in _TTY_ONLY and not sys.stdout.isatty():
        raise ConfigError(f"Display option display={display!r} draws in a terminal, but standard "
                          "output is not one; use gifanim, capture or pygame instead.")
    contrast = options.get("contrast")
    if contrast is not None and (isinstance(contrast, bool) or not isinstance(contrast, int)
                                 or not 0 <= contrast <= 255):
        raise ConfigError(f"Display option contrast must be 0-255, not {contrast!r}.")
    os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"  # before luma.emulator imports pygame
    args = _parse(options)
    import luma.core.error

    try:
        device = _create(args, options)
    except ImportError as error:
        package = (error.name or str(error)).lstrip("_")  # rpi_ws281x imports _rpi_ws281x
        raise ConfigError(f"Display option display={display!r} needs the Python package "
                          f"{package}, which is not installed.") from error
    except luma.core.error.DeviceNotFoundError as error:
        raise ConfigError(f"Display option interface={args.interface!r} (spi_port={args.spi_port}, "
                          f"spi_device={args.spi_device}): the bus is not available ({error}); "
                          "enable it with raspi-config (Interface Options) and check the "
                          "wiring.") from error
    except luma.core.error.DevicePermissionError as error:
        raise ConfigError(f"Display option interface={args.interface!r}: permission denied "
                          f"({error}); add the user to the spi/gpio groups.") from error
    except luma.core.error.DeviceDisplayModeError as error:
        raise ConfigError(f"Display options width={args.width}, height={args.height}: "
                          f"{error}.") from error
    except (luma.core.error.Error, RuntimeError, OSError) as error:
        raise ConfigError(f"Display option display={display!r}: the device could not be set up "
                          f"({error}).") from error
    if device is None:
        raise ConfigError(f"Display option display={display!r}: luma has no such display.")
    if contrast is not None and display not in EMULATORS:
        device.contrast(contrast)
    return device
