"""Signals to ``companion run`` while it is still starting: systemd may stop a unit at any
moment, and a stop during start-up must be as clean as one later (``STOPPING=1``, exit 0,
no journal of a game that never began)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def _catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGTERM (``SigCgt`` in its status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & SIGTERM_BIT)
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_stop_before_the_configuration_is_read_stops_cleanly(
    tmp_path: Path, stop: signal.Signals,
) -> None:
    # The configuration is a FIFO: the daemon blocks reading it, in the middle of its start.
    config = tmp_path / "companion.toml"
    os.mkfifo(config)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(20)
    journals = tmp_path / "journals"
    daemon = subprocess.Popen(
        [sys.executable, "-c", "import sys; from companion.cli import main; sys.exit(main())",
         "run", "--config", str(config)],
        env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify"),
             "GPIOZERO_PIN_FACTORY": "mock"},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not _catches_sigterm(daemon.pid):  # its handlers are in place...
            assert daemon.poll() is None and time.monotonic() < deadline, daemon.stderr
            time.sleep(0.01)
        daemon.send_signal(stop)  # ...and it is still waiting for its configuration
        writer = threading.Thread(target=config.write_text, args=(
            f'[display]\ndisplay = "dummy"\n[journal]\ndirectory = "{journals}"\n',))
        writer.start()
        _, err = daemon.communicate(timeout=30)
        writer.join(10)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert daemon.returncode == 0, err
    assert notify.recv(4096) == b"STOPPING=1"
    assert not journals.exists() or not list(journals.iterdir())
