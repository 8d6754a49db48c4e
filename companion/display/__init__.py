"""The LED matrix: screens (what to show), rendering (pixels), the display thread, devices.

``Screen`` describes a screenful; ``render`` turns it into a PIL image for a matrix size and
colour mode; ``Display`` is the one thread that draws on a luma device; ``make_device`` builds
that device from ``luma.core.cmdline`` options.

May import the referee's screens, the rules (cells and pieces), the configuration (the
display settings) and the shared modules; never the daemon.
"""

from __future__ import annotations

from companion.display.device import make_device
from companion.display.display import Display
from companion.display.render import render, render_frame
from companion.referee.screen import ROLES, Screen

__all__ = ["ROLES", "Display", "Screen", "make_device", "render", "render_frame"]
