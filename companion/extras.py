"""The optional parts: whether a library an extra brings (or the system provides) is here.

The parts that need one (the pin factories, the display devices, the live page, the broker)
say which is missing before they would fail on import, in a sentence naming what to install.
"""

from __future__ import annotations

import importlib.util


def installed(module: str) -> bool:
    """Whether ``module`` (a dotted name, ``"luma.emulator"``) can be imported here, found
    without importing it; ``False`` also when a parent package is missing."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False
