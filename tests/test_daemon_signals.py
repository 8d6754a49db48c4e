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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def _catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGTERM (``SigCgt`` in its status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & SIGTERM_BIT)
    return False


RUN = "import sys; from companion.cli import main; sys.exit(main())"


@contextmanager
def _daemon(config: Path, program: str = RUN, **env: str) -> Iterator[subprocess.Popen[str]]:
    """``companion run --config config`` in a child Python running ``program``, its output
    read through pipes; killed on the way out if a failed test left it running."""
    daemon = subprocess.Popen(
        [sys.executable, "-c", program, "run", "--config", str(config)],
        env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock", **env},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield daemon
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


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
    with _daemon(config, NOTIFY_SOCKET=str(tmp_path / "notify")) as daemon:
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
    assert daemon.returncode == 0, err
    assert notify.recv(4096) == b"STOPPING=1"
    assert not journals.exists() or not list(journals.iterdir())


def test_a_flood_of_reloads_never_keeps_a_stop_from_stopping(tmp_path: Path) -> None:
    # Each SIGHUP's handler puts a Reload on the loop's queue.  A handler that runs while the
    # loop itself is inside that queue's get or put must not wait for the loop: ten thousand
    # of them make that moment all but certain, and a stop after them must still be heard.
    # (With queue.Queue the handler waited for the lock the loop held: the stop was lost.)
    config = tmp_path / "companion.toml"
    config.write_text(f'[board]\nport = "loop://"\n[display]\ndisplay = "dummy"\n'
                      f'[journal]\ndirectory = "{tmp_path / "journals"}"\n')
    with _daemon(config) as daemon:
        assert daemon.stderr is not None
        for line in daemon.stderr:  # the loop is built once the board link is up
            if "board connected" in line:
                break
        for _ in range(10000):
            daemon.send_signal(signal.SIGHUP)
            time.sleep(0.0001)  # one at a time: signals sent while one is pending are one
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=60)
    assert daemon.returncode == 0, err
    assert "Traceback" not in err
    assert "reload: the display settings are unchanged" in err


WRAPPER = """
import sys
from pathlib import Path
from companion.cli import main
status = main()
for line in Path("/proc/self/status").read_text().splitlines():
    if line.startswith("SigIgn:"):
        print(line, flush=True)
sys.exit(status)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_second_stop_while_the_daemon_exits_is_ignored(tmp_path: Path) -> None:
    """Python restores the default handlers while it finalizes, so a second SIGINT or SIGTERM
    then (Ctrl-C pressed twice, timeout(1) signalling the process and then its group) would
    kill the interpreter: exit 130 or 143, not the clean 0.  Once stopped, run ignores both."""
    config = tmp_path / "companion.toml"
    config.write_text(f'[board]\nport = "{tmp_path / "ttyUSB9"}"\n[display]\n'
                      f'display = "dummy"\n[journal]\ndirectory = "{tmp_path / "journals"}"\n')
    with _daemon(config, WRAPPER) as daemon:
        assert daemon.stderr is not None
        deadline = time.monotonic() + 30
        while "not found" not in daemon.stderr.readline():  # built, its board missing
            assert daemon.poll() is None and time.monotonic() < deadline
        daemon.send_signal(signal.SIGINT)
        out, err = daemon.communicate(timeout=30)
    assert daemon.returncode == 0, err
    ignored = int(out.split()[1], 16)
    for stop in (signal.SIGINT, signal.SIGTERM):
        assert ignored & 1 << (stop - 1), f"{stop.name} is not ignored once run has stopped"
