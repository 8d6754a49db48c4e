"""systemd's service notification protocol (``sd_notify``): readiness, watchdog, status.

Under ``Type=notify`` systemd passes ``$NOTIFY_SOCKET``, a datagram socket (a path, or an
abstract socket written ``@name``), and waits for ``READY=1``; with ``WatchdogSec=`` it also
passes ``$WATCHDOG_USEC`` and restarts the service when no ``WATCHDOG=1`` arrives in time;
``STATUS=...`` lines appear in ``systemctl status``.  Each message is one datagram of
``KEY=value`` lines (sd_notify(3)).

Why not python-systemd: it wraps libsystemd in C and needs a compiler and the libsystemd
headers on the Pi; the pure-Python ``sdnotify`` package has not been updated since 2017 and
ignores abstract sockets.  The protocol is one ``sendto`` on a datagram socket, so the standard
library suffices.  Outside systemd (no ``$NOTIFY_SOCKET``) every call does nothing.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger("companion.notify")


class Notifier:
    """Sends notifications to the socket at ``address`` (``$NOTIFY_SOCKET``'s form), or
    nowhere when ``address`` is empty.

    ``watchdog_s`` is the watchdog interval in seconds (``$WATCHDOG_USEC`` / 10^6), ``None``
    when systemd runs no watchdog for the service.  A failed send is logged once, never raised:
    systemd's view of the daemon must not be able to stop the game.
    """

    def __init__(self, address: str = "", *, watchdog_s: float | None = None) -> None:
        self.address = address
        self.watchdog_s = watchdog_s
        self._socket: socket.socket | None = None
        self._failed = False
        if address:
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """The notifier systemd asked for through ``$NOTIFY_SOCKET`` and ``$WATCHDOG_USEC``
        (honoured only when ``$WATCHDOG_PID``, if set, is this process, as sd_watchdog_enabled(3)
        says).  ``environ`` defaults to ``os.environ``."""
        env = os.environ if environ is None else environ
        watchdog_s = None
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            watchdog_s = int(usec) / 1_000_000
        return cls(env.get("NOTIFY_SOCKET", ""), watchdog_s=watchdog_s)

    @property
    def enabled(self) -> bool:
        """Whether there is a socket to notify."""
        return self._socket is not None

    def notify(self, **fields: str) -> bool:
        """Send one datagram of ``KEY=value`` lines (``notify(READY="1", STATUS="...")``).

        Returns whether it was sent.  Newlines in a value are turned into spaces (a newline
        would start another field).
        """
        if self._socket is None:
            return False
        text = "\n".join(f"{key}={value.replace(chr(10), ' ')}" for key, value in fields.items())
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            self._socket.sendto(text.encode(), target)
        except OSError as error:
            if not self._failed:
                log.warning("cannot notify systemd on %s: %s", self.address, error)
            self._failed = True
            return False
        self._failed = False
        return True

    def ready(self, status: str) -> bool:
        """``READY=1`` with a ``STATUS=`` line: start-up is over."""
        return self.notify(READY="1", STATUS=status)

    def status(self, text: str) -> bool:
        """A ``STATUS=`` line for ``systemctl status``."""
        return self.notify(STATUS=text)

    def watchdog(self) -> bool:
        """``WATCHDOG=1``: the event loop is alive."""
        return self.notify(WATCHDOG="1")

    def stopping(self) -> bool:
        """``STOPPING=1``: the shutdown has begun."""
        return self.notify(STOPPING="1")

    def close(self) -> None:
        """Close the socket; later calls do nothing.  Idempotent."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
