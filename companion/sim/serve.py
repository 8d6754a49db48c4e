"""``companion sim``: the simulated board alone, for a daemon (or a monitor) started separately.

- ``companion sim --serve pty`` (or ``--serve socket://127.0.0.1:7777``) runs a
  :class:`~companion.sim.board.VirtualBoard` with a game's setup (or an empty board), prints
  the port to give the daemon (``[board] port``), and optionally plays a scenario file
  (:mod:`companion.sim.scenario`) once the daemon has connected, or plants faulty sensors
  for ``companion monitor`` to find: a stuck cell, a flaky one.
- ``companion sim --serve pty --players 2`` also seats virtual players who play the game
  once the daemon has connected; ``--interactive`` lets a person type the steps instead
  (:mod:`companion.sim.standalone`, :mod:`companion.sim.console`).
- ``companion sim --replay TRACE [--speed 10]`` plays a recorded trace
  (:mod:`companion.tools.trace`) on a pty or a socket, starting when the daemon connects.

A socket address must be on this machine (``localhost``, ``127.0.0.1``): the simulator is a
test tool, not a network service.  Ctrl-C stops it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import random
import select
import socket
import sys
import threading
import tty
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from companion.board import protocol
from companion.errors import LinkError, UsageError
from companion.opponent import DEFAULT_STRENGTH, Strength
from companion.rules.base import EMPTY, Cell, Piece
from companion.sim.board import VirtualBoard
from companion.sim.handsetup import bare_board, draw_setup
from companion.sim.harness import Rehearsal
from companion.sim.perform import Press, Put
from companion.sim.scenario import Expect, Scenario
from companion.sim.standalone import SimGame, VirtualPlayers
from companion.tools.trace import Trace, replay

log = logging.getLogger("companion.sim")

LOCAL_HOSTS: Final = ("localhost", "127.0.0.1", "::1")

Receive = Callable[[bytes], None]


class PtyEndpoint:
    """A pseudo-terminal: the daemon opens ``port``; writes go to it, and what the daemon
    sends is passed to ``on_receive`` (from a reader thread)."""

    def __init__(self, on_receive: Receive | None = None) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)  # bytes pass as they are: no echo, no line editing
        self.port = os.ttyname(self._slave)
        self._on_receive = on_receive
        self._heard = threading.Event()
        self._closed = threading.Event()
        threading.Thread(target=self._read, name="sim-pty-rx", daemon=True).start()

    def _read(self) -> None:
        while not self._closed.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            self._heard.set()
            if self._on_receive is not None:
                self._on_receive(data)

    def wait_for_host(self, timeout: float | None = None) -> bool:
        """Block until the daemon has sent something (its ``HELLO?`` on connecting)."""
        return self._heard.wait(timeout)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self._closed.is_set():
            view = view[os.write(self.master, view):]

    def close(self) -> None:
        self._closed.set()
        for fd in (self.master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)


class SocketEndpoint:
    """A TCP port on this machine; the daemon connects with ``port``
    (``socket://127.0.0.1:7777``).  One client at a time; a new one replaces the last."""

    def __init__(self, host: str, port: int, on_receive: Receive | None = None) -> None:
        if host not in LOCAL_HOSTS:
            hosts = ", ".join(LOCAL_HOSTS)
            raise UsageError(f"the simulator listens on this machine only ({hosts}), not {host}")
        try:
            self._server = socket.create_server((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise LinkError(f"port {port} on {host} is in use (another simulator?): choose "
                                "another, or 0 for any free one") from None
            raise LinkError(f"cannot listen on {host} port {port}: {error.strerror}") from None
        self.port = f"socket://{host}:{self._server.getsockname()[1]}"
        self._on_receive = on_receive
        self._client: socket.socket | None = None
        self._lock = threading.Lock()
        self._heard = threading.Event()
        self._closed = threading.Event()
        threading.Thread(target=self._serve, name="sim-socket", daemon=True).start()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                if self._client is not None:
                    self._client.close()
                self._client = client
            self._heard.set()
            threading.Thread(target=self._read, args=(client,), name="sim-socket-rx",
                             daemon=True).start()

    def _read(self, client: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(4096):
                if self._on_receive is not None:
                    self._on_receive(data)

    def wait_for_host(self, timeout: float | None = None) -> bool:
        """Block until a client (the daemon) has connected."""
        return self._heard.wait(timeout)

    def write(self, data: bytes) -> None:
        with self._lock:
            client = self._client
        if client is not None:
            with contextlib.suppress(OSError):
                client.sendall(data)

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._server.close()
        with self._lock:
            if self._client is not None:
                self._client.close()


Endpoint = PtyEndpoint | SocketEndpoint


def open_endpoint(url: str, on_receive: Receive | None = None) -> Endpoint:
    """``"pty"`` or ``"socket://host:port"`` (port 0: any free one) as an endpoint.

    Raises :class:`companion.errors.UsageError` for anything else or a host not on this
    machine, :class:`companion.errors.LinkError` when the port cannot be listened on (in use).
    """
    if url == "pty":
        return PtyEndpoint(on_receive)
    scheme, _, rest = url.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme != "socket" or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--serve takes pty or socket://host:port (a port 0-65535), not {url!r}")
    return SocketEndpoint(host.strip("[]"), int(port), on_receive)


@dataclass(frozen=True, slots=True)
class Faults:
    """Sensors a maker's board might have wrong, for ``companion monitor`` to find:
    ``stuck`` cells always read a piece; ``flaky`` cells flicker for ``flicker_s`` seconds
    about every ``flicker_every_s`` seconds (randomly, from ``seed``)."""

    stuck: tuple[Cell, ...] = ()
    flaky: tuple[Cell, ...] = ()
    flicker_s: float = 0.05
    flicker_every_s: float = 0.7
    seed: int = 1


class ServedBoard:
    """A :class:`VirtualBoard` reachable at ``port``: its own pty, or relayed to a socket.

    ``layout``/``board``: what it announces and what stands on it at power-on.  Use as a
    context manager; :meth:`wait_for_host` blocks until the daemon has connected.
    """

    def __init__(self, url: str, layout: str, board: dict[Cell, Piece], *,
                 sensing: str = "identity") -> None:
        self.board = VirtualBoard(layout, protocol.LAYOUTS[layout], board, sensing=sensing)
        self._relay: SocketEndpoint | None = None
        self._pty: int | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.port = self.board.port
        if url != "pty":
            self._pty = os.open(self.board.port, os.O_RDWR | os.O_NOCTTY)
            endpoint = open_endpoint(url, self._to_board)
            assert isinstance(endpoint, SocketEndpoint)
            self._relay = endpoint
            self.port = endpoint.port
            self._spawn(self._from_board)

    def _spawn(self, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _to_board(self, data: bytes) -> None:
        assert self._pty is not None
        os.write(self._pty, data)

    def _from_board(self) -> None:
        assert self._pty is not None and self._relay is not None
        while not self._stop.is_set():
            ready, _, _ = select.select([self._pty], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self._pty, 4096)
                except OSError:
                    return
                self._relay.write(data)

    def __enter__(self) -> ServedBoard:
        self.board.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_for_host(self, timeout: float | None = None) -> bool:
        """Block until the daemon has connected (and, on a pty, asked for the board)."""
        if self._relay is not None:
            return self._relay.wait_for_host(timeout)
        return _wait(lambda: bool(self.board.requests), self._stop, timeout)

    def plant(self, faults: Faults) -> None:
        """Make ``faults`` real: stuck cells now, flaky ones from a thread until closed.
        Raises :class:`companion.errors.UsageError` for a cell not on the board."""
        unknown = [cell for cell in (*faults.stuck, *faults.flaky) if cell not in self.board.board]
        if unknown:
            raise UsageError(f"{', '.join(unknown)}: not a cell of the {self.board.layout} board "
                             "(--stuck and --flaky take cells of the served board)")
        piece = "occupied" if self.board.sensing == "presence" else "M1"
        for cell in faults.stuck:
            self.board.put(cell, piece)
        if faults.flaky:
            self._spawn(lambda: self._flicker(faults, piece))

    def _flicker(self, faults: Faults, piece: Piece) -> None:
        rng = random.Random(faults.seed)
        while not self._stop.wait(rng.uniform(0.5, 1.5) * faults.flicker_every_s):
            for cell in faults.flaky:
                steady = self.board.board[cell]
                self.board.put(cell, piece if steady == EMPTY else EMPTY)
                self._stop.wait(faults.flicker_s)
                self.board.put(cell, steady)

    def play(self, scenario: Scenario, *, speed: float = 1.0) -> None:
        """Perform ``scenario``'s actions in real time (``speed`` times faster).  Presses
        are for the daemon's own buttons: they are logged, for a person to press."""
        for action in scenario.actions:
            if isinstance(action, Expect):
                log.info("the companion should commit %s now", action.step)
                continue
            if self._stop.wait(action.wait / speed):
                return
            if isinstance(action, Put):
                self.board.put(action.cell, action.piece)
            elif isinstance(action, Press):
                log.warning("the scenario presses %s: press the daemon's %s button",
                            action.name.upper(), action.name.upper())
            else:
                self.board.send(action.message)

    def close(self) -> None:
        self._stop.set()
        if self._relay is not None:
            self._relay.close()
        for thread in self._threads:
            thread.join(timeout=2)
        if self._pty is not None:
            with contextlib.suppress(OSError):
                os.close(self._pty)
        self.board.close()


def _wait(condition: Callable[[], bool], stop: threading.Event, timeout: float | None) -> bool:
    waited = 0.0
    while not condition():
        if stop.wait(0.02) or (timeout is not None and waited >= timeout):
            return condition()
        waited += 0.02
    return True


def replay_trace(url: str, trace: Trace, *, speed: float = 1.0,
                 stop: threading.Event | None = None,
                 on_ready: Callable[[str], None] = print) -> None:
    """Play ``trace`` on ``url`` (``"pty"`` or ``"socket://host:port"``) once the daemon has
    connected, at ``speed`` times the recorded pace; ``on_ready`` is told the port first.
    What the daemon sends is read and dropped: a trace answers nothing."""
    stop = stop or threading.Event()
    endpoint = open_endpoint(url)
    try:
        on_ready(endpoint.port)
        while not endpoint.wait_for_host(0.1):
            if stop.is_set():
                return
        replay(trace.chunks, endpoint.write, speed=speed, stop=stop)
        stop.wait()
    finally:
        endpoint.close()


def ask_at_terminal(sentence: str, rehearsal: Rehearsal) -> bool:
    """Ask the person at this terminal to do what ``sentence`` says at the companion, and
    wait for Enter; False at the end of input (nobody is there)."""
    log.warning("%s, then press Enter here", sentence)
    return sys.stdin.readline() != ""


def run_sim(*, serve: str | None, replay_file: str | None, speed: float, game: str,
            players: int | None, seed: int, board: str, scenario_file: str | None, empty: bool,
            sensing: str, faults: Faults, interactive: bool = False, pace: float = 2.0,
            hand_setup: bool = False, strength: str = DEFAULT_STRENGTH,
            stop: threading.Event | None = None,
            on_ready: Callable[[str], None] = print) -> int:
    """``companion sim``: serve a board (``serve``) or replay a trace (``replay_file``, on
    ``serve`` or a pty) until Ctrl-C or ``stop``; the port is passed to ``on_ready``.

    The served board has the setup of ``game`` / ``players`` (2 when ``None``) / ``seed`` /
    ``board`` (or the scenario file's own), nothing at all with ``empty``, and ``faults``
    planted.  With ``players`` that many virtual players play the game once the daemon has
    connected (:class:`companion.sim.standalone.VirtualPlayers` at ``strength``, a step about
    every ``pace`` seconds, their hands ``speed`` times as fast as people's; a button only a
    person at the companion can press is asked for on this terminal); with ``interactive`` a
    person types the steps on standard input (:mod:`companion.sim.console`) until ``quit``
    or its end.
    Returns the exit status.  Raises :class:`companion.errors.UsageError` for a bad address,
    a fault cell or options that do not go together,
    :class:`companion.errors.InputFileError` for a file that cannot be read, another
    :class:`companion.errors.CompanionError` for one that is not a trace or scenario.
    """
    from companion.sim.scenario import read_scenario
    from companion.tools.trace import read_trace

    playing = players is not None or interactive
    if playing and (replay_file or scenario_file or empty):
        other = "--replay" if replay_file else "--scenario" if scenario_file else "--empty"
        raise UsageError(f"--players and --interactive play the game's setup, so they do not "
                          f"go with {other}")
    if hand_setup and interactive:  # the console follows the seed's setup, not a bare board
        raise UsageError("--hand-setup: the virtual players lay the garden out by hand, so it "
                         "does not go with --interactive, where you play the seed's setup")
    if hand_setup and players is None:
        raise UsageError("--hand-setup: the virtual players lay the garden out by hand, so "
                         "give --players too")
    if hand_setup and sensing == "presence":
        raise UsageError("--hand-setup needs --sensing identity: a presence board cannot "
                         "tell the daemon which flower stands where")
    planted = faults.stuck or faults.flaky
    if replay_file is not None and (scenario_file or empty or planted):
        other = ("--scenario" if scenario_file else "--empty" if empty
                 else "--stuck or --flaky")
        raise UsageError(f"--replay plays a recorded trace as it was, so it does not go with "
                         f"{other}")
    stop = stop or threading.Event()
    if replay_file is not None:
        trace = read_trace(replay_file)
        replay_trace(serve or "pty", trace, speed=speed, stop=stop,
                     on_ready=lambda port: on_ready(f"replaying {replay_file} on {port}"))
        return 0
    script = read_scenario(scenario_file) if scenario_file else None
    setup = script or Scenario(game, players or 2, seed, board)
    pieces = ({} if empty else bare_board(setup.rules(), setup.setup()) if hand_setup
              else setup.rules().board(setup.setup()))
    with ServedBoard(serve or "pty", setup.layout, pieces, sensing=sensing) as served:
        served.plant(faults)
        on_ready(f"simulated {setup.layout} board ({sensing}) on {served.port}")
        try:
            if interactive:
                from companion.sim.console import BoardConsole

                BoardConsole(SimGame(setup, served.board, speed=speed, stop=stop),
                             seed=seed).cmdloop()
                return 0
            if script is not None or players is not None:
                while not served.wait_for_host(0.2):
                    if stop.is_set():
                        return 0
            if script is not None:
                served.play(script, speed=speed)
            elif players is not None:
                followed = SimGame(setup, served.board, speed=speed, stop=stop)
                garden = None
                if hand_setup:  # the simulator's own draw, never the daemon's seed
                    garden = draw_setup(followed.rules, followed.state,
                                        random.Random(f"hand setup {seed}"))
                VirtualPlayers(followed, seed=seed, ask=ask_at_terminal, pace=pace,
                               setup=garden, strength=Strength(strength)).start()
            stop.wait()
        finally:
            stop.set()
    return 0
