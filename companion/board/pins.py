"""The Pi's GPIO pins, shared by every part wired to them (the buttons, buzzer and status LED,
a switch matrix): one gpiozero pin factory for all (:func:`make_pin_factory`), and every device
made through :func:`claim`, so that a pin two parts want is refused in a sentence naming both.
"""

from __future__ import annotations

import os
import sys
import weakref
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any, Protocol, TypeAlias

from gpiozero import GPIOPinInUse, GPIOZeroError

from companion.errors import ConfigError
from companion.extras import installed

PinFactory: TypeAlias = Any
"""A gpiozero pin factory (``MockFactory``, ``LGPIOFactory``, ...): gpiozero ships no types."""

Device: TypeAlias = Any
"""A gpiozero device (``DigitalInputDevice``, ``OutputDevice``, ``Buzzer``, ``LED``, ...)."""


class DeviceKind(Protocol):
    """A gpiozero device class: called with a pin name, ``pin_factory=`` and its own
    options."""

    def __call__(self, pin: str, *, pin_factory: PinFactory, **options: object) -> Device: ...


_PLATFORM_FACTORIES = ("lgpio", "rpigpio", "pigpio", "native")  # gpiozero's own order
# The library each platform factory drives, and its Raspberry Pi OS package.  "native" needs
# none, but only knows the older Pis' GPIO registers.
_FACTORY_LIBRARIES = MappingProxyType({
    "lgpio": ("lgpio", "python3-lgpio"),
    "rpigpio": ("RPi.GPIO", "python3-rpi.gpio"),
    "pigpio": ("pigpio", "python3-pigpio"),
})  # fmt: skip


def make_pin_factory(name: str | None = None) -> PinFactory:
    """A new gpiozero pin factory, for every part on the Pi's GPIO to share; the caller
    closes it.

    ``name`` is a gpiozero factory name (``lgpio``, ``rpigpio``, ``pigpio``, ``native``,
    ``mock``); by default ``$GPIOZERO_PIN_FACTORY``, else the first of lgpio, rpigpio,
    pigpio and native that works here, as gpiozero itself chooses.

    Raises :class:`companion.errors.ConfigError` naming why each factory failed.
    """
    name = name or os.environ.get("GPIOZERO_PIN_FACTORY")
    factories = {ep.name: ep for ep in entry_points(group="gpiozero_pin_factories")}
    failures = []
    for candidate in (name.lower(),) if name else _PLATFORM_FACTORIES:
        if candidate not in factories:
            failures.append(f"{candidate} is not installed")
            continue
        try:
            return factories[candidate].load()()
        except Exception as error:  # each factory fails in its own way off a Pi
            failures.append(f"{candidate}: {error}")
    raise ConfigError(
        f"No GPIO pin factory works here ({'; '.join(failures)}); without GPIO hardware "
        "set GPIOZERO_PIN_FACTORY=mock"
    )


def pin_factory_missing() -> str | None:
    """Why :func:`make_pin_factory` would find no pin factory here, told without opening
    one (for ``companion check-config``): ``$GPIOZERO_PIN_FACTORY`` names a factory that is
    not installed or whose library is missing, or none is named and none of lgpio, RPi.GPIO
    and pigpio is installed.  ``None`` when one may work."""
    name = (os.environ.get("GPIOZERO_PIN_FACTORY") or "").lower()
    factories = {ep.name for ep in entry_points(group="gpiozero_pin_factories")}
    if name and name not in factories:
        return f"GPIOZERO_PIN_FACTORY={name} is not a gpiozero pin factory installed here"
    if name in _FACTORY_LIBRARIES:
        module, package = _FACTORY_LIBRARIES[name]
        if not installed(module):
            return (f"GPIOZERO_PIN_FACTORY={name} needs {module} ({package} on Raspberry Pi "
                    "OS), which is not installed")
    elif not name and not any(installed(module) for module, _ in _FACTORY_LIBRARIES.values()):
        return ("no GPIO library is installed here (lgpio, RPi.GPIO or pigpio; python3-lgpio "
                "on Raspberry Pi OS)")
    return None



# Which part holds which pin of each pin factory, to name it when another part asks for the pin.
_HOLDERS: weakref.WeakKeyDictionary[PinFactory, dict[str, str]] = weakref.WeakKeyDictionary()


def _platform_errors() -> tuple[type[Exception], ...]:
    """What opening a pin raises besides gpiozero's own errors: the platform libraries' (lgpio's
    "GPIO busy" for a pin the kernel holds, RPi.GPIO's RuntimeError) and the OS's."""
    errors: list[type[Exception]] = [OSError, RuntimeError]
    lgpio = sys.modules.get("lgpio")
    if lgpio is not None and isinstance(getattr(lgpio, "error", None), type):
        errors.append(lgpio.error)
    return tuple(errors)


def claim(kind: DeviceKind, pin: str, *, part: str, pin_factory: PinFactory,
          **options: object) -> Device:
    """The gpiozero ``kind`` device on ``pin`` (``"GPIO17"``) for ``part`` (``"[buttons] ok"``:
    how messages name it), made with ``pin_factory``.

    Raises :class:`companion.errors.ConfigError` with a sentence when the pin cannot be used:
    another part made through ``claim`` on the same factory holds it (both are named), the pin
    does not exist, or the platform refuses it (the kernel holds it for SPI, I2C or the UART).
    """
    holders = _HOLDERS.setdefault(pin_factory, {})
    try:
        device = kind(pin, pin_factory=pin_factory, **options)
    except GPIOPinInUse as error:
        holder = holders.get(pin, "another part")
        raise ConfigError(f"{part} and {holder} both use {pin}; each needs its own pin") from error
    except GPIOZeroError as error:
        raise ConfigError(f"{part}: {pin} cannot be used ({error})") from error
    except _platform_errors() as error:
        raise ConfigError(f"{part}: {pin} cannot be used ({error}); is it taken by SPI, I2C or "
                          "the UART (raspi-config), or by another program?") from error
    holders[pin] = part
    return device
