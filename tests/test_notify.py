"""sd_notify over a datagram socket, received as systemd receives it (notify.py)."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.daemon.notify import Notifier


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(5)
    yield sock
    sock.close()


def test_ready_arrives_as_one_datagram_with_the_status(listener: socket.socket) -> None:
    notifier = Notifier(listener.getsockname())
    assert notifier.ready("enceladus, step 0; board connected")
    assert listener.recv(4096) == b"READY=1\nSTATUS=enceladus, step 0; board connected"
    notifier.close()


def test_watchdog_status_and_stopping_messages(listener: socket.socket) -> None:
    notifier = Notifier(listener.getsockname())
    notifier.watchdog()
    notifier.status("two\nlines")
    notifier.stopping()
    assert [listener.recv(4096) for _ in range(3)] == [
        b"WATCHDOG=1", b"STATUS=two lines", b"STOPPING=1"]
    notifier.close()


def test_an_abstract_socket_is_written_with_an_at_sign() -> None:
    name = f"companion-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert Notifier("@" + name).watchdog()
        assert sock.recv(4096) == b"WATCHDOG=1"


def test_outside_systemd_nothing_is_sent() -> None:
    notifier = Notifier.from_environment({})
    assert not notifier.enabled and notifier.watchdog_s is None
    assert not notifier.ready("no systemd")


def test_the_watchdog_interval_belongs_to_the_process_systemd_named() -> None:
    mine = Notifier.from_environment({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "5000000",
                                      "WATCHDOG_PID": str(os.getpid())})
    other = Notifier.from_environment({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "5000000",
                                       "WATCHDOG_PID": "1"})
    assert mine.watchdog_s == 5.0 and other.watchdog_s is None
    mine.close()
    other.close()


def test_a_missing_socket_is_logged_once_never_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notifier = Notifier(str(tmp_path / "gone"))
    with caplog.at_level(logging.WARNING, logger="companion.notify"):
        assert not notifier.watchdog()
        assert not notifier.watchdog()
    assert caplog.text.count("cannot notify systemd") == 1
    notifier.close()
