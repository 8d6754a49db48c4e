"""The matrix the service shows its screens on, and the way to open another one (a reload
with new ``[display]`` settings, a display that failed to open at start): the new one is
opened before the old one is closed, and shows the game at once."""

from __future__ import annotations

import logging
from collections.abc import Callable

from companion.config import DisplayConfig
from companion.daemon.retry import sentence
from companion.daemon.seams import Matrix
from companion.errors import MisuseError
from companion.referee.screen import Screen

log = logging.getLogger("companion")


class MatrixSlot:
    """The ``display`` shown now (``None``: none is open) and the ``factory`` that opens one
    for a :class:`DisplayConfig` (``None``: the service was not built from a configuration).
    ``last_screen`` is the last screen shown, which a matrix opened later shows at once."""

    def __init__(self, display: Matrix | None,
                 factory: Callable[[DisplayConfig], Matrix] | None) -> None:
        self.display = display
        self.factory = factory
        self.last_screen: Screen | None = None

    def show(self, screen: Screen) -> None:
        """Show ``screen`` on the matrix, if there is one, and keep it for a later one."""
        self.last_screen = screen
        if self.display is not None:
            self.display.show(screen)

    def open(self, settings: DisplayConfig) -> None:
        """Open the matrix of ``settings`` and show the game on it.  Raises whatever the
        device raises, and :class:`MisuseError` without a factory."""
        if self.factory is None:
            raise MisuseError("this service was not built from a configuration")
        self.attach(self.factory(settings))

    def attach(self, display: Matrix) -> None:
        """Show on ``display`` from now on, the last screen first."""
        self.display = display
        if self.last_screen is not None:
            display.show(self.last_screen)

    def replace(self, before: DisplayConfig, after: DisplayConfig) -> bool:
        """Open the matrix of ``after`` in place of the one of ``before``; whether it opened.
        A device that fails to open keeps the matrix as it was (logged)."""
        if self.factory is None:
            return False
        try:
            display = self.factory(after)
        except Exception as error:  # whatever the new device raises, the old one stays
            keeping = ("keeping the current display" if self.display is not None
                       else "still without a display, the running settings are tried again")
            log.error("display reload failed: %s; %s", sentence(error), keeping)
            return False
        if self.display is not None:
            # A device of the same type drives the same matrix: the old must not switch it off.
            self.display.close(switch_off=before.luma["display"] != after.luma["display"])
        self.attach(display)
        return True

    def abandon(self) -> None:
        """Give up a file the matrix shown now is writing as it closes (a GIF)."""
        if self.display is not None:
            self.display.abandon()

    def close(self) -> None:
        """Close the matrix shown now."""
        if self.display is not None:
            self.display.close()
