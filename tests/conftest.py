"""What many test modules share: gpiozero mock pins (the ``pin_factory`` fixture), the
daemon run in a thread of the test process (:class:`DaemonThread`) and ``companion rules
check`` run on case files (:func:`rules_check`), the benchmark scripts loaded as modules
(:func:`load_bench`), and a real Mosquitto broker on a loopback port (the ``broker``
fixture, :class:`Broker`) with a client that records what it hears (:class:`Listener`).

Every wait here is bounded and ends on a condition the code under test notifies, never on
the machine's speed.
"""

from __future__ import annotations

import contextlib
import getpass
import importlib.util
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from companion.events import Button
from companion.referee.timers import Timers

# A suite started in the background by a shell without job control inherits SIGINT ignored,
# and so would every companion it starts: the tests that press Ctrl-C need it to reach them.
# A handler (not an ignored signal) is reset to the default in each child process.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def rules_check(*files: Path) -> subprocess.CompletedProcess[str]:
    """``companion rules check FILES...`` in a child process, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "companion.cli", "rules", "check", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def load_bench(name: str) -> ModuleType:
    """``bench/<name>.py`` imported as the module ``bench_<name>`` (bench/ is no package)."""
    path = Path(__file__).resolve().parent.parent / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"bench_{name}"] = module
    spec.loader.exec_module(module)
    return module


WAIT_S = 30.0
"""The longest any one wait on the daemon lasts: reached only when something is broken."""


class WatchedPin(MockPin):
    """gpiozero's mock pin, whose changes can be awaited: a buzzer or an LED blinks on
    gpiozero's own thread."""

    changed = threading.Condition()

    def _change_state(self, value: bool) -> bool:
        with WatchedPin.changed:
            moved: bool = super()._change_state(value)
            WatchedPin.changed.notify_all()
        return moved

    def wait_states(self, count: int, timeout: float = 5.0) -> bool:
        """Block until the pin has gone through ``count`` states (``len(states)``, its first
        included) or ``timeout`` seconds pass; whether it has."""
        with WatchedPin.changed:
            return WatchedPin.changed.wait_for(lambda: len(self.states) >= count, timeout)


def mock_pins() -> MockFactory:
    """A new gpiozero ``MockFactory`` of :class:`WatchedPin` pins; the caller closes it."""
    return MockFactory(pin_class=WatchedPin)


@contextlib.contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """This process's largest file (``RLIMIT_FSIZE``) at ``size`` bytes inside the block: a
    write past it fails with EFBIG as on a full disk (SIGXFSZ ignored so that it fails
    instead of killing the process).  Restored on leaving, before pytest writes its report."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, before[1]))
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)
        signal.signal(signal.SIGXFSZ, handler)


@pytest.fixture
def pin_factory() -> Iterator[MockFactory]:
    """A gpiozero ``MockFactory`` for the test alone, closed after it (its pins given back)."""
    factory = mock_pins()
    yield factory
    factory.close()


class DaemonThread:
    """``companion run`` in a thread of the test process: ``service.run`` of a built
    :class:`companion.daemon.service.Service`, its commits (``commits``: notations) and screens
    (``screens``, with ``shown_at``: the daemon's clock when each was shown) recorded; the
    timers it arms are recorded too (``armed``: ``(name, at, when)``, ``when`` the daemon's
    clock as it armed it), and the debounced button changes the controls put on its queue, as
    its loop takes them (``buttons``).

    As a context manager: started, and entered once the daemon has the board in sync; on
    exit stopped, joined and ``stack`` (which holds what the service opened, if given) closed.
    """

    def __init__(self, service: Any, stack: ExitStack | None = None) -> None:
        self.service = service
        self.stack = stack
        self.commits: list[str] = []
        self.screens: list[Any] = []
        self.shown_at: list[float] = []
        self.armed: list[tuple[str, float, float]] = []
        self.buttons: list[Button] = []
        self.changed = threading.Condition()
        service.commit_listeners.append(self._commit)
        service.screen_listeners.append(self._screen)
        service.timers = _Timers(self)
        handle = service._handle  # the loop's way in, watched for the controls' button changes

        def watched(event: Any) -> None:
            if isinstance(event, Button):
                with self.changed:
                    self.buttons.append(event)
                    self.changed.notify_all()
            handle(event)

        service._handle = watched
        self.thread = threading.Thread(target=service.run, name="test-daemon", daemon=True)

    def _commit(self, committed: Any) -> None:
        with self.changed:
            self.commits.append(committed.step)
            self.changed.notify_all()

    def _screen(self, screen: Any) -> None:
        with self.changed:
            self.screens.append(screen)
            self.shown_at.append(self.service.clock())
            self.changed.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        """Block until ``predicate()`` (checked at each commit, screen and timer armed) or
        ``timeout`` seconds pass; whether it came true."""
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def press_pin(self, pin: Any, name: str, *, then: Callable[[], bool] | None = None) -> None:
        """Press and release button ``name`` on its mock ``pin`` as a person does: each
        edge held until the controls have taken it (past the debounce), ``then`` awaited
        while it is held down (what the press should bring about)."""
        for drive, down in ((pin.drive_low, True), (pin.drive_high, False)):
            seen = sum(1 for b in self.buttons if (b.name, b.pressed) == (name, down))
            drive()
            assert self.wait(lambda down=down, seen=seen: sum(
                1 for b in self.buttons if (b.name, b.pressed) == (name, down)) > seen, 5.0), \
                f"{name} {'pressed' if down else 'released'} never reached the daemon"
            if down and then is not None:
                assert self.wait(then, 5.0)

    def synced(self) -> bool:
        referee = self.service.referee
        return bool(referee.have_board and not referee.syncing)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.service.stop("test over")
        self.thread.join(10)
        if self.stack is not None:
            self.stack.close()
        assert not self.thread.is_alive()

    def __enter__(self) -> DaemonThread:
        self.start()
        assert self.wait(self.synced), "the daemon never saw the board"
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Timers(Timers):
    """The service's timers, each one armed recorded and notified to the test."""

    def __init__(self, daemon: DaemonThread) -> None:
        super().__init__()
        self._daemon = daemon

    def __setitem__(self, name: str, at: float) -> None:
        super().__setitem__(name, at)
        with self._daemon.changed:
            self._daemon.armed.append((name, at, self._daemon.service.clock()))
            self._daemon.changed.notify_all()


MOSQUITTO = Path("/usr/sbin/mosquitto")
"""Debian's Mosquitto, which ``make test`` installs."""


def free_port() -> int:
    """A TCP port free on the loopback interface just now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def certificates(folder: Path) -> Path:
    """A certificate authority of the test's own (``ca.pem``) and a server certificate it
    signed for 127.0.0.1 (``server.pem``, ``server.key``), made in ``folder`` with the
    ``openssl`` command; ``folder`` is returned."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=Test venue CA", "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
            "server.key", "-out", "server.csr")
    (folder / "san").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san", "-out", "server.pem")
    return folder


class Broker:
    """A Mosquitto of the test's own on a free loopback port (the test is skipped where Mosquitto
    is not installed), its configuration, password file and ACL in ``folder``; ``users``
    (name to password) and ``acl`` (the ACL file's text) make it refuse anonymous clients.
    :meth:`start` returns once it listens (it says so on its log).  With ``tls`` (a folder
    from :func:`certificates`) it also listens over TLS at ``tls_url``.  :meth:`kill` ends it
    with SIGKILL, as a crash would; :meth:`start` again brings it back on the same port,
    without the retained messages (no persistence); :meth:`freeze` and :meth:`thaw` stop and
    resume it (SIGSTOP, SIGCONT).
    """

    def __init__(self, folder: Path, *, users: dict[str, str] | None = None,
                 acl: str = "", tls: Path | None = None) -> None:
        if not MOSQUITTO.exists():
            pytest.skip("needs Mosquitto (make test installs it)")
        self.folder = folder
        self.port = free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.tls_url = ""
        self.process: subprocess.Popen[str] | None = None
        lines = [f"listener {self.port} 127.0.0.1", "persistence false", "log_dest stderr",
                 "log_type error", "log_type warning", "log_type notice",
                 "log_type information",
                 f"user {getpass.getuser()}"]  # as root it would switch to "mosquitto"
        if users:
            passwords = folder / "passwords"
            passwords.touch(mode=0o600)
            for name, password in users.items():
                subprocess.run(["mosquitto_passwd", "-b", str(passwords), name, password],
                               check=True, capture_output=True)
            lines += ["allow_anonymous false", f"password_file {passwords}"]
        else:
            lines.append("allow_anonymous true")
        if acl:
            (folder / "acl").write_text(acl)
            lines.append(f"acl_file {folder / 'acl'}")
        if tls is not None:  # a second listener, over TLS with the certificate in ``tls``
            tls_port = free_port()
            self.tls_url = f"mqtts://127.0.0.1:{tls_port}"
            lines += [f"listener {tls_port} 127.0.0.1", f"certfile {tls / 'server.pem'}",
                      f"keyfile {tls / 'server.key'}"]
        self.config = folder / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n")

    def start(self) -> None:
        assert self.process is None
        self.process = subprocess.Popen([str(MOSQUITTO), "-c", str(self.config)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        heard: queue.Queue[str] = queue.Queue()
        stderr = self.process.stderr
        assert stderr is not None

        def read() -> None:
            for line in stderr:
                heard.put(line)
            heard.put("")  # it has ended

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + WAIT_S
        log = []
        try:
            while True:
                line = heard.get(timeout=max(0.0, deadline - time.monotonic()))
                if " running" in line:
                    break
                log.append(line)
                assert line, f"mosquitto did not start: {''.join(log)}"
        except BaseException:
            self.kill()  # never left running behind a test that failed
            raise

    def freeze(self) -> None:
        """Stop the broker dead (SIGSTOP): connections stay open, nothing is answered."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(WAIT_S)
            self.process = None


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """A Mosquitto for the test alone (anonymous clients welcome), killed after it."""
    folder = tmp_path / "broker"
    folder.mkdir()
    running = Broker(folder)
    running.start()
    yield running
    running.kill()


class Listener:
    """A client of the broker at ``url`` (a :class:`Broker`'s) subscribed to ``topics`` that
    keeps every message it receives, in order, as ``(topic, payload, retained)``; :meth:`wait`
    blocks until a condition on them holds.  ``username``/``password`` for a broker with
    users."""

    def __init__(self, url: str, topics: str = "#", *, username: str = "",
                 password: str = "") -> None:
        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion

        self.messages: list[tuple[str, bytes, bool]] = []
        self.changed = threading.Condition()
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"listener-{os.getpid()}")
        if username:
            self.client.username_pw_set(username, password)
        self.subscribed = threading.Event()
        self.client.on_connect = lambda c, *_: c.subscribe(topics, qos=1)
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        self.client.on_message = self._message
        host, port = url.removeprefix("mqtt://").split(":")
        self.client.connect(host, int(port))
        self.client.loop_start()
        assert self.subscribed.wait(WAIT_S), "the listener never subscribed"

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        with self.changed:
            self.messages.append((message.topic, message.payload, bool(message.retain)))
            self.changed.notify_all()

    def on(self, topic: str) -> list[bytes]:
        """The payloads received on ``topic`` so far, in order."""
        with self.changed:
            return [payload for t, payload, _ in self.messages if t == topic]

    def wait(self, predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
