"""What many test modules share: gpiozero mock pins (the ``pin_factory`` fixture), the
daemon run in a thread of the test process (:class:`DaemonThread`) and ``companion rules
check`` run on case files (:func:`rules_check`), and the benchmark scripts loaded as modules
(:func:`load_bench`).

Every wait here is bounded and ends on a condition the code under test notifies, never on
the machine's speed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from companion.events import Button


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
    clock as it armed it), and the debounced button changes the controls put on its queue
    (``buttons``).

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
        put = service.events.put  # the controls' way in, watched for their button changes

        def watched(event: Any, *args: Any, **kwargs: Any) -> None:
            put(event, *args, **kwargs)
            if isinstance(event, Button):
                with self.changed:
                    self.buttons.append(event)
                    self.changed.notify_all()

        service.events.put = watched
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


class _Timers(dict[str, float]):
    """The service's timers, each one armed recorded and notified to the test."""

    def __init__(self, daemon: DaemonThread) -> None:
        super().__init__()
        self._daemon = daemon

    def __setitem__(self, name: str, at: float) -> None:
        super().__setitem__(name, at)
        with self._daemon.changed:
            self._daemon.armed.append((name, at, self._daemon.service.clock()))
            self._daemon.changed.notify_all()
