"""Benchmarks of what a player feels (``make bench``), all with the default configuration.

1. **Processing per field update, in process.**  Whole games of each of the three games in
   virtual time, on identity and on presence boards, played by people
   (:data:`companion.sim.perform.PEOPLE`) and by the worst hands (:data:`HANDS`: every
   hesitation, slide, misplacement and step put back the scripts allow), the referee's
   default settings (debounce 20 ms, settle 400 ms).  For *every* field update: the CPU time
   of the thread handling it in the referee, with the timers it sets off until the next
   update (the debounce that accepts it, the settle time that commits a step), as milliseconds
   and as a ratio to the update's own time on the wire at 115200 baud (8N1: 10 bits a byte):
   the daemon's loop blocks on that and on handing the screen to the display, which draws
   in a thread of its own; so the CPU time of drawing the last screen the update led to on a
   16x16 RGB matrix is a column of its own.  Thread CPU time, not the wall clock, which other
   work on a shared machine inflates; each game played with what came before it frozen
   out of the collector's sight, as the daemon's loop freezes what start-up made.  Median,
   99th percentile and maximum, the worst update named with its game, step and cell.
   ``--before TREE`` takes the same figures of the companion in another source tree in the
   same run.
2. **Last input -> commit shown, end to end.**  Games of each game on identity and presence
   boards through the real stacks: the simulated board writes to a pseudo-terminal, the
   daemon (pyserial's reader thread, the queue, the referee, the display thread on a luma
   dummy device) commits and draws.  For every step, from the players' last input (the last
   piece put down or lifted, the dice or a card shown, or the last button pressed) to the commit
   and to the frame drawn on the device: the debounce and, for a step whose last piece may
   be on its way, the settle time are in it.
3. **Start-up against the games kept.**  The daemon's start (``new_or_resumed_game``: find
   the game in progress, else begin one) in a journal folder holding 0, 100 and 1000
   finished games, after the last game ended.
4. **Idle**: resident memory and CPU of ``companion run`` refereeing a game from a
   simulated board with nothing moving (the board's heartbeat every second).
5. **The live page** (``[web] listen``): the same idle daemon without the page, with it and
   no page open, and with a page open (an event stream read); each also timed from its
   start to ``READY=1`` on a notify socket (the board answered); and in process, the time
   from :meth:`WebView.publish` to the state read from an open event stream.
6. **The display**: the share of the whole games of part 1 spent drawing; the time of a
   frame on a 16x16 RGB matrix and a 32x8 MAX7219 chain, their screens drawn frame after
   frame as the display thread does; the CPU of ``companion run`` while the setup message
   scrolls (before it comes to rest).  ``--before TREE`` takes the same figures of the
   companion in another source tree (a git worktree of an earlier commit) in the same run,
   in turn with this one's, side by side (for part 1 too).
7. **The worst Enceladus field updates, counted** (``--only calls``): part 1's Enceladus
   games again, each in a process of its own (its caches cold, as at a game's start, whatever
   was played before; ``PYTHONHASHSEED=0``: sets of cells read in one order), and for every
   field update the function calls of the referee's work on it and its timers as part 1
   times it (cProfile's count: the same on any machine, where the time is not), the
   :data:`WORST` costliest of each sensing mode and way of handling pieces named with their
   game, step and cell, and the calls of all the updates.  With ``--before TREE`` the same
   games of the companion in that tree are counted in the same run, each update beside its
   own (the k-th update of one step to one cell and piece).

``make bench`` (or ``python bench/run.py``; ``--only`` picks parts) prints Markdown tables;
RESULTS.md holds the last figures with the machine they were taken on.  A Raspberry Pi Zero
2 W is about ten times slower than a current x86 core: read the ratios with that in mind.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import http.client
import json
import math
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Any

from companion import journal
from companion.board import protocol
from companion.config import BoardConfig, Config, GameConfig, JournalConfig
from companion.daemon.collector import IdleCollector
from companion.daemon.service import new_or_resumed_game
from companion.display import make_device, render, render_frame
from companion.display.text import Ticker
from companion.events import BoardMessage, Timer
from companion.referee.effects import Show
from companion.referee.mars import MarsTable
from companion.referee.referee import RefereeSettings
from companion.referee.uranus import CardTable, load_catalogue
from companion.rules import load
from companion.rules.uranus import BOARDS
from companion.sim.board import VirtualBoard
from companion.sim.harness import GameReport, VirtualTable
from companion.sim.perform import PEOPLE, THINKING, Noise

BAUD = 115200
ENCELADUS = load("enceladus").RULES
MARS = load("mars").RULES
URANUS = load("uranus").RULES
GAMES = ("enceladus", "mars", "uranus")


def wire_seconds(message: Any) -> float:
    """How long ``message``'s framed line takes on a 115200 baud UART (8N1: 10 bits a byte)."""
    return len(protocol.encode(message)) * 10 / BAUD


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def spread(values: list[float]) -> tuple[float, float, float]:
    """Median, 99th percentile and maximum."""
    return statistics.median(values), percentile(values, 0.99), max(values)


# ---- 1. processing per field update ---------------------------------------------------------


@dataclass
class Update:
    """One field update and the work it caused: ``handle`` seconds of CPU in the referee (the
    update and the timers it set off), ``screen`` the last screen it led to (``None``: none),
    ``rgb`` and ``mono`` seconds of CPU drawing it on a 16x16 RGB matrix and on a 32x8
    MAX7219 chain."""

    game: str
    step: str
    message: protocol.FieldUpdate
    handle: float
    screen: Any = None
    rgb: float = 0.0
    mono: float = 0.0

    @property
    def wire(self) -> float:
        return wire_seconds(self.message)

    def named(self) -> str:
        cell, piece = self.message.cell, self.message.piece or "lifted"
        return f"{self.game} step {self.step}, update {cell} {piece}"


class TimedTable(VirtualTable):
    """A virtual table that times the referee (thread CPU time) on every field update and on
    the timers that follow it until the next update, and draws the last screen each led to.
    Played inside ``collector`` (:meth:`play_collected`), it collects garbage as the daemon's
    loop does: when no event or timer is due, each collection's CPU time kept in
    ``collections`` (seconds), not in the update's."""

    game = ""
    samples: list[Update]
    current: Update | None = None
    collector: IdleCollector | None = None
    collections: list[float]

    def play_collected(self) -> GameReport:
        """Play the game (:meth:`play`) with automatic collection off, collecting when idle."""
        self.collections = []
        with IdleCollector(lambda: self.now) as self.collector:
            try:
                return self.play()
            finally:
                self.collector = None

    def _run_effects(self, effects: Any) -> None:
        super()._run_effects(effects)
        due = self.time.timers.values()
        if self.collector is not None and not self.time.waiting() and min(
                due, default=math.inf) > self.now:
            started = time.thread_time_ns()
            self.collector.idle()
            self.collections.append((time.thread_time_ns() - started) / 1e9)

    def deliver(self, event: Any) -> list[Any]:
        started = time.thread_time_ns()
        effects = super().deliver(event)
        took = (time.thread_time_ns() - started) / 1e9
        screens = [e.screen for e in effects if isinstance(e, Show)]
        message = event.message if isinstance(event, BoardMessage) else None
        if isinstance(message, protocol.FieldUpdate):
            self.close_update()
            step = self.report.performed[-1] if self.report.performed else "setup"
            self.current = Update(self.game, step, message, took)
        elif isinstance(event, Timer) and self.current is not None:
            self.current.handle += took
        else:
            return effects
        if screens and self.current is not None:
            self.current.screen = screens[-1]
        return effects

    def close_update(self) -> None:
        update, self.current = self.current, None
        if update is None:
            return
        if update.screen is not None:
            started = time.thread_time_ns()
            render(update.screen, width=16, height=16, mode="RGB")
            update.rgb = (time.thread_time_ns() - started) / 1e9
            started = time.thread_time_ns()
            render(update.screen, width=32, height=8, mode="1")
            update.mono = (time.thread_time_ns() - started) / 1e9
        self.samples.append(update)


HANDS = replace(THINKING, hesitate=1.0, slide=1.0, misplace=0.5, take_back=0.5)
"""The worst orders people handle pieces in, as often as the scripts allow: every moving piece
lifted and put back first and slid over the cells on its way, half the pieces set on a wrong
cell first, half the steps begun and put back, pauses of seconds mid-step."""

NOISES = {"people": PEOPLE, "worst hands": HANDS}
SENSING = ("identity", "presence")


def _table(game: str, seed: int, sensing: str, noise: Noise,
           kind: type[TimedTable] = TimedTable) -> TimedTable:
    """One game of ``game`` on a ``kind`` of table: 2-5 players by seed, the tray in every
    other Enceladus game on an identity board, the Mars dice tray, the Uranus card reader on
    the three boards."""
    players = 2 + seed % 4
    presence = sensing == "presence"
    settings = RefereeSettings(presence=presence, tray=not presence and seed % 2 == 0)
    if game == "enceladus":
        return kind(ENCELADUS, ENCELADUS.new_game(players, seed, {}), "enceladus",
                    seed=seed, noise=noise, settings=settings)
    if game == "mars":
        table = kind(MARS, MARS.new_game(players, seed, {}), "mars", seed=seed,
                     noise=noise, settings=settings)
        table.referee.extensions.append(MarsTable("tray", rng=random.Random(seed)))
        return table
    board = sorted(BOARDS)[seed % 3]
    state = URANUS.new_game(players, seed, {"board": board})
    table = kind(URANUS, state, f"uranus-{board}", seed=seed, noise=noise,
                 settings=settings)
    table.referee.extensions = [CardTable(load_catalogue(), cards="reader")]
    return table


def per_update(games: int) -> list[dict[str, Any]]:
    """For each game, sensing mode and way of handling pieces, ``games`` games: the referee's
    CPU time per field update and its timers (ms, and over the update's wire time) and the
    CPU time of the 16x16 RGB frame it led to (ms); median, p99, max, the worst update
    named."""
    rows = []
    for game in GAMES:
        for sensing in SENSING:
            for hands, noise in NOISES.items():
                samples: list[Update] = []
                collections: list[float] = []
                for seed in range(1, games + 1):
                    table = _table(game, seed, sensing, noise)
                    table.game, table.samples = game, samples
                    gc.collect()  # the games before are garbage, then frozen as start-up is
                    table.play_collected()
                    table.close_update()
                    collections += table.collections
                worst = max(samples, key=lambda s: s.handle / s.wire)
                rows.append({
                    "game": game, "sensing": sensing, "hands": hands,
                    "updates": len(samples),
                    "handle_ms": [v * 1000 for v in spread([s.handle for s in samples])],
                    "wire": spread([s.handle / s.wire for s in samples]),
                    "frame_ms": [v * 1000 for v in spread([s.rgb for s in samples])],
                    "worst": worst.named(),
                    "worst_ms": worst.handle * 1000,
                    "collect_ms": [v * 1000 for v in spread(collections or [0.0])],
                })
    return rows


def _from_tree(tree: str | None, flag: str, value: object, **env: str) -> Any:
    """What ``bench/run.py flag value`` prints as JSON, run in a process of its own with the
    companion of the source tree ``tree`` (default: this one) and ``env`` set."""
    environ = dict(os.environ, **env)
    if tree:
        environ["PYTHONPATH"] = tree
    return json.loads(subprocess.run([sys.executable, __file__, flag, str(value)], env=environ,
                                     check=True, capture_output=True, text=True).stdout)


def updates_side_by_side(games: int, before: str | None) -> None:
    """Part 1's table, for the companion in the tree ``before`` (when given) and this one, in
    one run, as Markdown."""
    runs: list[tuple[str, list[dict[str, Any]]]] = []
    if before:
        runs.append((f"before ({before})", _from_tree(before, "--per-update", games)))
    runs.append(("after" if before else "", per_update(games)))
    print(f"\n## Processing per field update, in process (default settings, {games} "
          "games of each)")
    print("referee: CPU time of the update and its timers (ms, and over the update's time on "
          "the wire at 115200 baud); frame: CPU time of the 16x16 RGB frame it led to, drawn "
          "in the display's own thread (ms)")
    print("idle gc: CPU time of the collections made between events, as the daemon's loop "
          "makes them (ms; - when the tree collects on the update's path)")
    print("| tree | game | sensing | hands | updates | ms median | ms p99 | ms max "
          "| / wire median | / wire p99 | / wire max | frame ms median | frame ms max "
          "| idle gc ms median | idle gc ms max | worst |")
    print("| --- " * 16 + "|")
    for label, rows in runs:
        for row in rows:
            ms, wire, frame = row["handle_ms"], row["wire"], row["frame_ms"]
            collect = row.get("collect_ms")
            idle = f"{collect[0]:.2f} | {collect[2]:.2f}" if collect else "- | -"
            print(f"| {label} | {row['game']} | {row['sensing']} | {row['hands']} "
                  f"| {row['updates']} | {ms[0]:.2f} | {ms[1]:.2f} | {ms[2]:.2f} "
                  f"| {wire[0]:.2f} | {wire[1]:.2f} | {wire[2]:.2f} "
                  f"| {frame[0]:.2f} | {frame[2]:.2f} | {idle} "
                  f"| {row['worst']}, {row['worst_ms']:.2f} ms |")


# ---- 2. last input -> commit shown, end to end -----------------------------------------------


class StampedBoard(VirtualBoard):
    """A virtual board that notes when each field update's line was written, and each
    message of its other inputs (the dice in the Mars dice tray, a Uranus card held to the
    reader)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inputs: list[float] = []

    def put(self, cell: str, piece: str) -> None:
        super().put(cell, piece)
        self.inputs.append(time.perf_counter())

    def send(self, message: Any) -> None:
        super().send(message)
        if isinstance(message, protocol.Dice | protocol.Card):  # not a heartbeat or a dump
            self.inputs.append(time.perf_counter())


def end_to_end(game: str, sensing: str, seed: int, speed: float) -> dict[str, list[float]]:
    """One game of ``game`` played by people on an ``sensing`` board through the pty,
    pyserial, the queue, the referee and the display thread, the default timings; seconds
    from each step's last input to its commit and to the frame that showed it, split by how
    the step was committed."""
    from companion.sim.demo import demo_config
    from companion.sim.table import seat

    commits: list[float] = []
    frames: list[float] = []
    defaults = BoardConfig()
    board_name = sorted(BOARDS)[seed % 3] if game == "uranus" else "hexagonal"
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        config = demo_config(game, 2 + seed % 2, seed, board_name, Path(folder), sensing)
        config = replace(config, board=replace(
            config.board, debounce_ms=defaults.debounce_ms, settle_ms=defaults.settle_ms,
            grace_ms=defaults.grace_ms))
        device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
        draw = device.display

        def stamped(image: Any) -> None:
            draw(image)
            frames.append(time.perf_counter())

        device.display = stamped
        seated = seat(config, stack, device=device, speed=speed, board_class=StampedBoard)
        board: StampedBoard = seated.board  # type: ignore[assignment]
        for pin in seated.players.pins.values():  # a button pressed is an input too
            def pressed(drive: Callable[[], None] = pin.drive_low) -> None:
                board.inputs.append(time.perf_counter())  # the press, not its release
                drive()

            pin.drive_low = pressed
        seated.service.commit_listeners.append(lambda _: commits.append(time.perf_counter()))
        seated.service.stop_when_over = True
        seated.players.start()
        seated.service.run()
        inputs = list(board.inputs)
    settle = defaults.settle_ms / 1000
    out: dict[str, list[float]] = {"commit": [], "frame": [], "at once": [], "settled": []}
    for committed in commits:
        last = max((t for t in inputs if t <= committed), default=None)
        drawn = [f for f in frames if f >= committed]
        if last is None or not drawn:
            continue
        out["commit"].append(committed - last)
        out["frame"].append(drawn[0] - last)
        out["at once" if committed - last < settle / 2 else "settled"].append(drawn[0] - last)
    return out


# ---- 3. start-up against the games kept -----------------------------------------------------


def _finished_games(folder: Path, count: int) -> None:
    """``count`` finished two-player Enceladus games, journaled as the daemon does it."""
    state = ENCELADUS.new_game(2, 1, {})
    header = {"journal": journal.VERSION, "game": "enceladus", "layout": "enceladus",
              "players": 2, "seed": 1, "options": {}, "setup": ENCELADUS.format_position(state)}
    for n in range(count):
        record = journal.Journal(folder / f"20250101-{n:06}-enceladus.jsonl", fsync=False)
        record.append({**header, "started": "2025-01-01T00:00:00+00:00"})
        for number, step in enumerate(("@L4", "@R4"), 1):
            record.step(number, number, step)
        record.append({"over": {"winners": [1], "termination": "bench", "ranking": []}})
        record.close()


def startup(counts: list[int], repeats: int = 7) -> dict[int, float]:
    """Median seconds of the daemon's start in a folder of ``count`` finished games (after
    the last game ended: a new one begins, and is removed again after each run)."""
    found = {}
    for count in counts:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            _finished_games(folder, count)
            config = Config(game=GameConfig(name="enceladus", seed=1),
                            journal=JournalConfig(directory=name, fsync=False))
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                start = new_or_resumed_game(config, ENCELADUS, folder, fsync=False)
                times.append(time.perf_counter() - started)
                assert start.journal is not None and not start.resumed
                start.journal.close()
                start.journal.path.unlink()
            found[count] = statistics.median(times)
    return found


# ---- 4. idle ----------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    utime, stime = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _companion_run(display: str, python_path: str | None = None,
                   web: str = "") -> Iterator[tuple[int, float]]:
    """``companion run`` refereeing the setup of a two-player Enceladus game from a simulated
    board (its heartbeat every second) on the dummy matrix of the ``[display]`` lines
    ``display``; yields the process id and the seconds from its start to ``READY=1`` on a
    notify socket (the board answered), and stops it on leaving.  ``python_path``: the tree
    to run the companion of (default: this one); ``web``: ``[web] listen`` (none when empty,
    so an earlier tree without the section runs too)."""
    state = ENCELADUS.new_game(2, 1, {})
    with (
        tempfile.TemporaryDirectory() as folder,
        VirtualBoard("enceladus", ENCELADUS.layout(state), ENCELADUS.board(state)) as board,
    ):
        config = Path(folder) / "companion.toml"
        config.write_text(
            f'[game]\nname = "enceladus"\nplayers = 2\nseed = 1\n'
            f'[board]\nport = "{board.port}"\n'
            f'[display]\n{display}'
            f'[buttons]\nbuzzer = ""\n'
            f'[journal]\ndirectory = "{folder}/journal"\n'
            + (f'[web]\nlisten = "{web}"\n' if web else "")
        )
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(f"{folder}/notify")
        notify.settimeout(30)
        env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock", NOTIFY_SOCKET=f"{folder}/notify")
        if python_path:
            env["PYTHONPATH"] = python_path
        started = time.perf_counter()
        child = subprocess.Popen(  # run from the folder: python -m looks first where it runs
            [sys.executable, "-m", "companion.cli", "run", "--config", str(config)],
            env=env, cwd=folder, stderr=subprocess.DEVNULL,
        )
        try:
            while b"READY=1" not in notify.recv(4096):
                pass
            yield child.pid, time.perf_counter() - started
        finally:
            child.terminate()
            child.wait(10)
            notify.close()


def resident_memory(seconds: float, warm_up: float = 35.0, web: str = "",
                    page: bool = False) -> dict[str, float]:
    """VmRSS/VmHWM (MiB) of ``companion run`` refereeing the setup of a simulated board, and
    its CPU use while idle: ``seconds`` after a ``warm_up`` (start, imports, the first dump,
    the matrix's scroll coming to rest), with the board's heartbeat every second; and the
    seconds from its start to ``READY=1``.  ``web``: ``[web] listen``; ``page``: a page is
    open on it throughout (its event stream read on a thread)."""
    with _companion_run('display = "dummy"\nwidth = 16\nheight = 16\nmode = "RGB"\n',
                        web=web) as (pid, ready):
        if page:
            threading.Thread(target=_read_events, args=(web,), daemon=True).start()
        time.sleep(warm_up)
        started = _cpu_seconds(pid)
        time.sleep(seconds)
        cpu = _cpu_seconds(pid) - started
        status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "rss_mib": int(fields["VmRSS"].split()[0]) / 1024,
        "hwm_mib": int(fields["VmHWM"].split()[0]) / 1024,
        "idle_cpu_percent": 100 * cpu / seconds,
        "seconds": seconds,
        "ready_s": ready,
    }


def _read_events(listen: str) -> None:
    """Read the live page's event stream at ``listen`` until it ends (a page left open)."""
    host, port = listen.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=None)
    conn.request("GET", "/events")
    response = conn.getresponse()
    while response.readline():
        pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def web_latency(count: int = 200) -> tuple[float, float, float]:
    """Milliseconds from :meth:`WebView.publish` of an Enceladus screen to its state read
    from an open event stream, over ``count`` screens one at a time."""
    from companion.referee.screen import Screen
    from companion.web.server import WebView

    state = ENCELADUS.new_game(2, 1, {})
    view = WebView("127.0.0.1:0")
    port = int(view.address.rsplit(":", 1)[1].rstrip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/events")
        response = conn.getresponse()
        times = []
        for n in range(count):
            screen = Screen("enceladus", "enceladus", ENCELADUS.board(state), message=str(n))
            sent = time.perf_counter()
            view.publish(screen, "up", n)
            while not response.readline().startswith(b"data: {\"seq\":%d," % (n + 1)):
                pass
            times.append((time.perf_counter() - sent) * 1000)
    finally:
        conn.close()
        view.close()
    return spread(times)


# ---- 5. the display ---------------------------------------------------------------------------

MATRICES = ((16, 16, "RGB"), (32, 8, "1"))
"""The matrices of the display figures: a 16 x 16 RGB panel, a 32 x 8 MAX7219 chain."""

RUN_FRAMES = 60
"""Consecutive frames drawn of each screen for the time of a frame: the hold at the start of
a ticker (20 frames) and 40 pixels of scrolling."""


def display_costs(games: int) -> dict[str, Any]:
    """Part 1's games of people on identity boards: the share of their whole time spent
    drawing (each update's last screen on both :data:`MATRICES`), and the CPU time of a
    frame on each matrix: every tenth of those screens drawn :data:`RUN_FRAMES` frames
    running on a ticker, as the display thread draws them, microseconds (median, p99,
    max)."""
    samples: list[Update] = []
    whole = 0.0
    for game in GAMES:
        for seed in range(1, games + 1):
            table = _table(game, seed, "identity", PEOPLE)
            table.game, table.samples = game, samples
            started = time.perf_counter()
            table.play()
            table.close_update()
            whole += time.perf_counter() - started
    screens = [s.screen for s in samples if s.screen is not None][::10]
    frames: dict[str, list[float]] = {}
    for width, height, mode in MATRICES:
        took, ticker, tick = [], Ticker(), 0
        for screen in screens:
            for frame in range(RUN_FRAMES):
                started = time.thread_time()  # CPU time: a shared machine's pauses left out
                render_frame(screen, width=width, height=height, mode=mode, frame=frame,
                             ticker=ticker, tick=tick)
                took.append(time.thread_time() - started)
                tick += 1
        frames[f"{width}x{height} {mode}"] = [t * 1e6 for t in spread(took)]
    return {"share": sum(s.rgb + s.mono for s in samples) / whole, "frame_us": frames,
            "screens": len(screens)}


def idle_scrolling(seconds: float, python_path: str | None = None) -> dict[str, float]:
    """CPU (% of a core) of ``companion run`` while the setup message scrolls on each of
    :data:`MATRICES`: ``seconds`` from 2 s after the board said hello, all before the scroll
    comes to rest (30 s after the screen came).  ``python_path``: as for :func:`_companion_run`."""
    found = {}
    for width, height, mode in MATRICES:
        lines = f'display = "dummy"\nwidth = {width}\nheight = {height}\nmode = "{mode}"\n'
        with _companion_run(lines, python_path) as (pid, _):
            time.sleep(2.0)  # the first dump and its screen
            started = _cpu_seconds(pid)
            time.sleep(seconds)
            found[f"{width}x{height} {mode}"] = 100 * (_cpu_seconds(pid) - started) / seconds
    return found


def display_side_by_side(games: int, before: str, seconds: float, rounds: int = 2) -> None:
    """The display figures of the companion in the tree ``before`` and of this one, taken in
    turn in one run (``rounds`` times the idle CPU, its median quoted), as a Markdown table."""
    found = {"before": dict(_from_tree(before, "--display-costs", games)),
             "after": dict(_from_tree(None, "--display-costs", games))}
    idle: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for _ in range(rounds):
        idle["before"].append(idle_scrolling(seconds, before))
        idle["after"].append(idle_scrolling(seconds, None))
    print(f"\n## The display: before ({before}) and after, in one run")
    print(f"{3 * games} games; a frame: {found['after']['screens']} of their screens drawn "
          f"{RUN_FRAMES} frames running on a ticker; idle: companion run while the setup message "
          f"scrolls, {seconds:.0f} s, median of {rounds}")
    print("| figure | before | after | after / before |\n| --- | --- | --- | --- |")

    def row(label: str, old: float, new: float, digits: int = 1) -> None:
        print(f"| {label} | {old:.{digits}f} | {new:.{digits}f} | {new / old:.2f} |")

    row("drawing, % of whole-game time", 100 * found["before"]["share"],
        100 * found["after"]["share"])
    for matrix, (median, p99, most) in found["after"]["frame_us"].items():
        old_median, old_p99, old_most = found["before"]["frame_us"][matrix]
        row(f"a frame {matrix}, median (µs CPU)", old_median, median, 0)
        row(f"a frame {matrix}, p99 (µs CPU)", old_p99, p99, 0)
        row(f"a frame {matrix}, max (µs CPU)", old_most, most, 0)
    for matrix in idle["after"][0]:
        old = statistics.median(run[matrix] for run in idle["before"])
        new = statistics.median(run[matrix] for run in idle["after"])
        row(f"idle CPU while scrolling, {matrix} (% of a core)", old, new, 2)


# ---- 7. the worst updates, counted ----------------------------------------------------------

WORST = 5
"""The costliest field updates in calls named for each sensing mode and way of handling pieces."""


class CountedTable(TimedTable):
    """A virtual table that counts, where :class:`TimedTable` times, the referee's work on
    every field update and on the timers that follow it until the next update: function
    calls, cProfile's count; ``counted`` holds ``[step, cell, piece, calls]`` in order."""

    counted: list[list[Any]]

    def deliver(self, event: Any) -> list[Any]:
        profile = cProfile.Profile()
        profile.enable()
        effects = VirtualTable.deliver(self, event)
        profile.disable()
        calls = sum(entry.callcount for entry in profile.getstats())
        message = event.message if isinstance(event, BoardMessage) else None
        if isinstance(message, protocol.FieldUpdate):
            step = self.report.performed[-1] if self.report.performed else "setup"
            self.counted.append([step, message.cell, message.piece or "lifted", calls])
        elif isinstance(event, Timer) and self.counted:
            self.counted[-1][3] += calls
        return effects


def count_calls(sensing: str, hands: str, seed: int) -> list[list[Any]]:
    """The calls of every field update of one Enceladus game of part 1 (:class:`CountedTable`),
    played in this process."""
    table = _table("enceladus", seed, sensing, NOISES[hands], CountedTable)
    assert isinstance(table, CountedTable)
    table.counted = []
    table.play()
    return table.counted


def _counted_games(games: int, tree: str | None) -> dict[tuple[Any, ...], int]:
    """``{(sensing, hands, seed, step, cell, piece, k): calls}`` of every field update of
    part 1's Enceladus games (``k``: the k-th update of that step to that cell and piece),
    each game counted in a process of its own with the companion of ``tree`` (default: this
    one)."""
    found: dict[tuple[Any, ...], int] = {}
    for sensing in SENSING:
        for hands in NOISES:
            for seed in range(1, games + 1):
                seen: dict[tuple[Any, ...], int] = {}
                for step, cell, piece, calls in _from_tree(
                        tree, "--count-calls", f"{sensing},{hands},{seed}", PYTHONHASHSEED="0"):
                    name = (sensing, hands, seed, step, cell, piece)
                    seen[name] = k = seen.get(name, 0) + 1
                    found[(*name, k)] = calls
    return found


def calls_side_by_side(games: int, before: str | None) -> None:
    """Part 7's table, for the companion in the tree ``before`` (when given) and this one, in
    one run, as Markdown: per sensing mode and way of handling pieces, the :data:`WORST`
    costliest updates of each tree, then the calls of all."""
    after = _counted_games(games, None)
    old = _counted_games(games, before) if before else {}
    print(f"\n## The worst Enceladus field updates, counted ({games} games of each; calls of "
          "the referee's work on the update and its timers, cProfile's count)")
    print("| sensing | hands | seed | update | k | "
          + (f"calls before ({before}) | calls after | after / before |" if before else
             "calls |"))
    print("| --- " * (8 if before else 6) + "|")

    def row(label: str, new: int | None, was: int | None) -> str:
        if not before:
            return f"{label} | {new:,} |"
        ratio = f"{new / was:.2f}" if new and was else "-"
        return f"{label} | {'-' if was is None else f'{was:,}'} " \
               f"| {'-' if new is None else f'{new:,}'} | {ratio} |"

    for sensing in SENSING:
        for hands in NOISES:
            was, new = ({k: v for k, v in counts.items() if k[:2] == (sensing, hands)}
                        for counts in (old, after))
            names = dict.fromkeys(chain.from_iterable(
                sorted(counts, key=counts.__getitem__, reverse=True)[:WORST]
                for counts in (was, new)))
            for name in sorted(names, key=lambda k: -max(was.get(k, 0), new.get(k, 0))):
                _, _, seed, step, cell, piece, k = name
                print(row(f"| {sensing} | {hands} | {seed} | {step}, update {cell} {piece} "
                          f"| {k}", new.get(name), was.get(name)))
            print(row(f"| {sensing} | {hands} | all | every update | ", sum(new.values()),
                      sum(was.values()) if before else None))


# ---- the report -------------------------------------------------------------------------------


def _figures(rows: list[tuple[str, tuple[float, float, float]]], digits: int = 2) -> None:
    print("| figure | median | p99 | max |\n| --- | --- | --- | --- |")
    for label, (median, p99, most) in rows:
        print(f"| {label} | {median:.{digits}f} | {p99:.{digits}f} | {most:.{digits}f} |")


PARTS = ("updates", "pty", "startup", "idle", "web", "display", "calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10,
                        help="virtual games of each game for the figures per update")
    parser.add_argument("--pty-games", type=int, default=3, help="games through the real stacks")
    parser.add_argument("--journals", default="0,100,1000",
                        help="finished games kept, for the start-up figures")
    parser.add_argument("--only", choices=PARTS, action="append", help="run only these parts")
    parser.add_argument("--before", metavar="TREE",
                        help="the figures per update and of the display of the companion in "
                        "this source tree too (e.g. a git worktree of an earlier commit), side "
                        "by side")
    parser.add_argument("--display-costs", type=int, metavar="GAMES", help=argparse.SUPPRESS)
    parser.add_argument("--per-update", type=int, metavar="GAMES", help=argparse.SUPPRESS)
    parser.add_argument("--count-calls", metavar="SENSING,HANDS,SEED", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.per_update:  # the figures per update as JSON, for --before
        print(json.dumps(per_update(args.per_update)))
        return
    if args.count_calls:  # the calls of one game's updates as JSON, for part 7
        sensing, hands, seed = args.count_calls.split(",")
        print(json.dumps(count_calls(sensing, hands, int(seed))))
        return
    if args.display_costs:  # the in-process display figures as JSON, for --before
        print(json.dumps(display_costs(args.display_costs)))
        return
    parts = args.only or PARTS
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"machine: {platform.machine()}, {python}, {os.cpu_count()} cores")

    if "updates" in parts:
        updates_side_by_side(args.games, args.before)

    if "pty" in parts and args.pty_games:
        print("\n## Last input -> commit shown, end to end (pty, pyserial thread, queue, "
              "referee, display; debounce 20 ms, settle 400 ms)")
        print("| game | sensing | steps | at once | after the settle time "
              "| committed median | p99 | max | frame drawn median | p99 | max |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for game in GAMES:
            for sensing in SENSING:
                runs = [end_to_end(game, sensing, seed, speed=6.0)
                        for seed in range(1, args.pty_games + 1)]
                joined = {key: [v * 1000 for run in runs for v in run[key]] for key in runs[0]}
                commit, frame = spread(joined["commit"]), spread(joined["frame"])
                print(f"| {game} | {sensing} | {len(joined['commit'])} "
                      f"| {len(joined['at once'])} | {len(joined['settled'])} "
                      f"| {commit[0]:.1f} | {commit[1]:.1f} | {commit[2]:.1f} "
                      f"| {frame[0]:.1f} | {frame[1]:.1f} | {frame[2]:.1f} |")

    if "startup" in parts:
        counts = [int(n) for n in args.journals.split(",")]
        found = startup(counts)
        print("\n## Start-up against the finished games kept (find the game in progress, "
              "else begin one)")
        print("| finished games | start (ms) |\n| --- | --- |")
        for count, seconds in found.items():
            print(f"| {count} | {seconds * 1000:.2f} |")
        if len(counts) > 1 and counts[-1] > counts[0]:
            slope = (found[counts[-1]] - found[counts[0]]) / (counts[-1] - counts[0])
            print(f"each finished game adds {slope * 1e6:.1f} µs")

    if "idle" in parts:
        memory = resident_memory(20.0)
        print("\n## companion run, idle in a game on a simulated board (heartbeat every second)")
        print("| VmRSS | VmHWM | idle CPU |\n| --- | --- | --- |")
        rss, hwm, cpu = memory["rss_mib"], memory["hwm_mib"], memory["idle_cpu_percent"]
        print(f"| {rss:.1f} MiB | {hwm:.1f} MiB | {cpu:.2f} % of a core |")

    if "web" in parts:
        print("\n## The live page ([web] listen): idle as above, start to READY=1")
        print("| | VmRSS | VmHWM | idle CPU | start to READY |\n| --- | --- | --- | --- | --- |")
        for label, listen, page in (("no [web]", "", False),
                                    ("[web] on, no page open", "127.0.0.1:0", False),
                                    ("[web] on, a page open", f"127.0.0.1:{_free_port()}", True)):
            memory = resident_memory(20.0, warm_up=15.0, web=listen, page=page)
            print(f"| {label} | {memory['rss_mib']:.1f} MiB | {memory['hwm_mib']:.1f} MiB | "
                  f"{memory['idle_cpu_percent']:.2f} % | {memory['ready_s']:.2f} s |")
        _figures([("publish -> state read from the event stream (ms)", web_latency())])

    if "display" in parts:
        if args.before:
            display_side_by_side(args.games, args.before, 20.0)
        else:
            costs, idle = display_costs(args.games), idle_scrolling(20.0)
            print(f"\n## The display ({costs['screens']} screens drawn {RUN_FRAMES} frames "
                  "running; idle: companion run while the setup message scrolls)")
            print(f"drawing: {100 * costs['share']:.1f} % of whole-game time")
            _figures([(f"a frame {m} (µs CPU)", tuple(v)) for m, v in costs["frame_us"].items()],
                   digits=0)
            for matrix, cpu in idle.items():
                print(f"idle CPU while scrolling, {matrix}: {cpu:.2f} % of a core")

    if "calls" in parts:
        calls_side_by_side(args.games, args.before)


if __name__ == "__main__":
    main()
