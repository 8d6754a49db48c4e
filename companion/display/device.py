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
* ``capture`` writes each PNG whole or raises (:class:`~companion.display.recorder.PngCapture`:
  a full disk is an error, not an empty file);
* ``frame_interval_ms`` is read by whoever builds the :class:`~companion.display.Display` and
  ignored here.

:func:`missing` tells, without opening the device, what this machine lacks for it (a Python
package, the SPI device node, a framebuffer, a desktop, a terminal), for
``companion check-config``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

from companion.config import EMULATORS, display_config
from companion.errors import ConfigError
from companion.extras import installed

LumaDevice: TypeAlias = Any
"""A luma device (``max7219``, ``ws2812``, luma.emulator's ``capture``, ``gifanim``, ...): luma
ships no types."""

_TTY_ONLY = ("asciiart", "asciiblock")
_NO_BUS = ("ws2812", "neopixel", "neosegment")  # driven by rpi_ws281x (PWM/DMA), not a serial bus
_SPI = ("max7219", "apa102", "unicornhathd")

EMULATOR_INSTALL = "pip install 'gardens-companion[emulator]'"
"""The command that installs luma.emulator alongside the companion."""


def needs_emulator(display: str) -> bool:
    """Whether ``display`` is one of :data:`companion.config.EMULATORS` and luma.emulator is
    not installed."""
    return display in EMULATORS and not installed("luma.emulator")


def _create(luma: Mapping[str, object]) -> LumaDevice:
    # every device takes **kwargs: only the one that knows an option uses it
    args = argparse.Namespace(**luma)
    if args.display == "gifanim":
        from companion.display.recorder import GifRecorder

        return GifRecorder(**vars(args))
    if args.display == "capture":
        from companion.display.recorder import PngCapture

        return PngCapture(**vars(args))
    from luma.core.cmdline import create_device

    return create_device(args)



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
        if not installed("spidev"):
            found.append(("interface", f'display = "{display}" on SPI needs the Python package '
                          "spidev (python3-spidev on Raspberry Pi OS), which is not installed"))
        elif not Path(node).exists():
            found.append(("spi_port", f"{node} is not here: enable SPI (raspi-config, Interface "
                          "Options) or set spi_port and spi_device to the display's bus"))
    elif display in _NO_BUS and not installed("rpi_ws281x"):
        found.append(("display", f'display = "{display}" needs the Python package rpi_ws281x, '
                      "which is not installed"))
    elif isinstance(display, str) and needs_emulator(display):
        found.append(("display", f'display = "{display}" is a luma.emulator device, which is '
                      f"not installed: {EMULATOR_INSTALL}"))
    elif display in EMULATORS and not installed("pygame"):
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


def make_device(options: Mapping[str, object]) -> LumaDevice:
    """A luma device built from ``options`` (see the module docstring); the options left out
    take the configuration's defaults (:func:`companion.config.luma_defaults`: a 32 x 8
    MAX7219 chain), but ``interface`` defaults to ``"noop"`` for the WS2812 family, which
    needs no bus.  luma.led_matrix and luma.emulator are imported only when a device is built.

    The options are checked as the ``[display]`` section of the configuration file is
    (:func:`companion.config.display_config`: the names, types and choices of luma's own
    parser).  A MAX7219 on SPI gets ``gpio=noop()`` (it has no reset or data/command line), as
    luma's ``create_device`` does for LED matrices.  Raises
    :class:`companion.errors.ConfigError`, with a sentence naming the option, for an unknown
    option or display type, a bad value, a driver whose Python package is missing (an
    emulator without luma.emulator), SPI (or another bus) that is not available, or a terminal
    emulator (``asciiart``, ``asciiblock``) without a terminal on standard output.
    """
    options = dict(options)
    # luma's create_device builds the interface for every LED matrix, WS2812 too: default to
    # the bus each one really uses (luma's own default, i2c, fits none of them)
    options.setdefault("interface", "noop" if options.get("display") in _NO_BUS else "spi")
    settings = display_config(options)
    chosen = settings.luma
    display = str(chosen["display"])
    if display == "dummy":
        from luma.core.device import dummy

        return dummy(width=chosen["width"], height=chosen["height"], rotate=chosen["rotate"],
                     mode=chosen["mode"])
    if needs_emulator(display):
        raise ConfigError(f"Display option display={display!r} is a luma.emulator device, which "
                          f"is not installed: {EMULATOR_INSTALL}.")
    if display in _TTY_ONLY and not sys.stdout.isatty():
        raise ConfigError(f"Display option display={display!r} draws in a terminal, but standard "
                          "output is not one; use gifanim, capture or pygame instead.")
    os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"  # before luma.emulator imports pygame
    import luma.core.error

    try:
        device = _create(chosen)
    except ImportError as error:
        package = (error.name or str(error)).lstrip("_")  # rpi_ws281x imports _rpi_ws281x
        raise ConfigError(f"Display option display={display!r} needs the Python package "
                          f"{package}, which is not installed.") from error
    except luma.core.error.DeviceNotFoundError as error:
        raise ConfigError(f"Display option interface={chosen['interface']!r} (spi_port="
                          f"{chosen['spi_port']}, spi_device={chosen['spi_device']}): the bus is "
                          f"not available ({error}); enable it with raspi-config (Interface "
                          "Options) and check the wiring.") from error
    except luma.core.error.DevicePermissionError as error:
        raise ConfigError(f"Display option interface={chosen['interface']!r}: permission denied "
                          f"({error}); add the user to the spi/gpio groups.") from error
    except luma.core.error.DeviceDisplayModeError as error:
        raise ConfigError(f"Display options width={chosen['width']}, height={chosen['height']}: "
                          f"{error}.") from error
    except (luma.core.error.Error, RuntimeError, OSError) as error:
        raise ConfigError(f"Display option display={display!r}: the device could not be set up "
                          f"({error}).") from error
    if device is None:
        raise ConfigError(f"Display option display={display!r}: luma has no such display.")
    if "contrast" in options and display not in EMULATORS:
        device.contrast(settings.contrast)
    return device
