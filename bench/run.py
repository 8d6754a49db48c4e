"""Benchmarks of the referee's hot path and the daemon's memory (``make bench``).

1. **Commit latency, in process.**  Noisy Enceladus games in virtual time (debounce 0, so
   the field update that completes a step is handled on arrival).  For every step committed
   at once by a field update, the time the referee takes to handle that update (recognise,
   apply, build the next screen) plus the time to render the new frame for a 16x16 RGB
   matrix and a 32x8 MAX7219 chain; as a ratio to that update's time on the wire at 115200
   baud (10 bits a byte).  Median and 99th percentile.
2. **Commit latency, end to end.**  The same through the real stacks: the simulated board
   writes the completing line to a pseudo-terminal, the daemon (pyserial reader thread, the
   queue, the referee, the display thread on a luma dummy device) commits and draws.  From the
   write of the line's last byte to the frame on the device.
3. **Resident memory** of ``companion run`` refereeing a game from a simulated board: VmRSS
   and VmHWM from ``/proc``.

``make bench`` (or ``python bench/run.py``) prints a Markdown table; RESULTS.md holds the last
figures with the machine they were taken on.  A Raspberry Pi Zero 2 W is about ten times
slower than a current x86 core: read the ratios with that in mind.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from companion.board import protocol
from companion.display import make_device, render
from companion.events import BoardMessage
from companion.referee.effects import Committed, Show
from companion.referee.referee import RefereeSettings
from companion.rules import load
from companion.sim.board import VirtualBoard
from companion.sim.harness import VirtualTable

BAUD = 115200
ENCELADUS = load("enceladus").RULES


def wire_seconds(message: Any) -> float:
    """How long ``message``'s framed line takes on a 115200 baud UART (8N1: 10 bits a byte)."""
    return len(protocol.encode(message)) * 10 / BAUD


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class TimedTable(VirtualTable):
    """A virtual table that times the referee on every field update that commits a step.

    ``samples`` collects ``(handle s, render RGB 16x16 s, render mono 32x8 s, wire s)``.
    """

    samples: list[tuple[float, float, float, float]]

    def deliver(self, event: Any) -> list[Any]:
        started = time.perf_counter()
        effects = super().deliver(event)
        handled = time.perf_counter() - started
        if not (
            isinstance(event, BoardMessage) and isinstance(event.message, protocol.FieldUpdate)
        ):
            return effects
        screens = [e.screen for e in effects if isinstance(e, Show)]
        if screens and any(isinstance(e, Committed) for e in effects):
            started = time.perf_counter()
            render(screens[-1], width=16, height=16, mode="RGB")
            rgb = time.perf_counter() - started
            started = time.perf_counter()
            render(screens[-1], width=32, height=8, mode="1")
            mono = time.perf_counter() - started
            self.samples.append((handled, rgb, mono, wire_seconds(event.message)))
        return effects


def in_process(games: int) -> dict[str, float]:
    samples: list[tuple[float, float, float, float]] = []
    for seed in range(1, games + 1):
        table = TimedTable(
            ENCELADUS,
            ENCELADUS.new_game(2, seed, {}),
            "enceladus",
            seed=seed,
            settings=RefereeSettings(debounce_s=0.0, tray=True),
        )
        table.samples = samples
        table.play()
    return summarise(samples)


def summarise(samples: list[tuple[float, float, float, float]]) -> dict[str, float]:
    handle = [s[0] for s in samples]
    rgb = [(s[0] + s[1]) / s[3] for s in samples]
    mono = [(s[0] + s[2]) / s[3] for s in samples]
    return {
        "steps": len(samples),
        "handle_ms_median": statistics.median(handle) * 1000,
        "handle_ms_p99": percentile(handle, 0.99) * 1000,
        "wire_ms": statistics.median(s[3] for s in samples) * 1000,
        "ratio_rgb_median": statistics.median(rgb),
        "ratio_rgb_p99": percentile(rgb, 0.99),
        "ratio_mono_median": statistics.median(mono),
        "ratio_mono_p99": percentile(mono, 0.99),
    }


class StampedBoard(VirtualBoard):
    """A virtual board that notes when each field update's last byte was written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.puts: list[float] = []

    def put(self, cell: str, piece: str) -> None:
        super().put(cell, piece)
        self.puts.append(time.perf_counter())


def end_to_end(seed: int, speed: float) -> dict[str, float]:
    """One noisy game through the pty, pyserial, the queue, the referee and the display thread."""
    from companion.sim.demo import demo_config
    from companion.sim.table import seat

    commits: list[float] = []
    frames: list[float] = []
    with tempfile.TemporaryDirectory() as journal, ExitStack() as stack:
        config = demo_config("enceladus", 2, seed, "hexagonal", Path(journal))
        config = replace(config, board=replace(config.board, debounce_ms=0, settle_ms=250))
        device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
        draw = device.display

        def stamped(image: Any) -> None:
            draw(image)
            frames.append(time.perf_counter())

        device.display = stamped
        seated = seat(config, stack, device=device, speed=speed, board_class=StampedBoard)
        seated.service.commit_listeners.append(lambda _: commits.append(time.perf_counter()))
        seated.service.stop_when_over = True
        seated.players.start()
        seated.service.run()
        puts = seated.board.puts  # type: ignore[attr-defined]
    to_commit, to_frame = [], []
    for committed in commits:
        last = max((t for t in puts if t <= committed), default=None)
        if last is None or committed - last > 0.1:
            continue  # committed after the settle time, not by the update itself
        to_commit.append(committed - last)
        drawn = [f for f in frames if f >= committed]
        if drawn:
            to_frame.append(drawn[0] - last)
    wire = wire_seconds(protocol.FieldUpdate(seq=1234, cell="e10", piece=""))
    return {
        "steps": len(to_commit),
        "commit_ms_median": statistics.median(to_commit) * 1000,
        "commit_ms_p99": percentile(to_commit, 0.99) * 1000,
        "frame_ms_median": statistics.median(to_frame) * 1000,
        "frame_ms_p99": percentile(to_frame, 0.99) * 1000,
        "ratio_median": statistics.median(to_frame) / wire,
        "ratio_p99": percentile(to_frame, 0.99) / wire,
    }


def _cpu_seconds(pid: int) -> float:
    utime, stime = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


def resident_memory(seconds: float, warm_up: float = 35.0) -> dict[str, float]:
    """VmRSS/VmHWM (MiB) of ``companion run`` refereeing the setup of a simulated board, and
    its CPU use while idle: ``seconds`` after a ``warm_up`` (start, imports, the first dump,
    the matrix's scroll coming to rest), with the board's heartbeat every second."""
    state = ENCELADUS.new_game(2, 1, {})
    with (
        tempfile.TemporaryDirectory() as folder,
        VirtualBoard("enceladus", ENCELADUS.layout(state), ENCELADUS.board(state)) as board,
    ):
        config = Path(folder) / "companion.toml"
        config.write_text(
            f'[game]\nname = "enceladus"\nplayers = 2\nseed = 1\n'
            f'[board]\nport = "{board.port}"\n'
            f'[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\nmode = "RGB"\n'
            f'[buttons]\nbuzzer = ""\n'
            f'[journal]\ndirectory = "{folder}/journal"\n'
        )
        env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock")
        child = subprocess.Popen(
            [sys.executable, "-m", "companion.cli", "run", "--config", str(config)],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(warm_up)
            started = _cpu_seconds(child.pid)
            time.sleep(seconds)
            cpu = _cpu_seconds(child.pid) - started
            status = Path(f"/proc/{child.pid}/status").read_text()
        finally:
            child.terminate()
            child.wait(10)
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "rss_mib": int(fields["VmRSS"].split()[0]) / 1024,
        "hwm_mib": int(fields["VmHWM"].split()[0]) / 1024,
        "idle_cpu_percent": 100 * cpu / seconds,
        "seconds": seconds,
    }


def _table(rows: list[tuple[str, float, float]], digits: int = 2) -> None:
    print("| figure | median | p99 |\n| --- | --- | --- |")
    for label, median, p99 in rows:
        print(f"| {label} | {median:.{digits}f} | {p99:.{digits}f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="virtual games, in-process figures")
    parser.add_argument("--pty-games", type=int, default=2, help="games through the real stacks")
    args = parser.parse_args()
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"machine: {platform.machine()}, {python}, {os.cpu_count()} cores")

    inner = in_process(args.games)
    print("\n## Commit latency in process: the field update that completes a step")
    print(f"{inner['steps']:.0f} steps; the update takes {inner['wire_ms']:.2f} ms on the wire")
    _table(
        [
            ("referee handles the update (ms)", inner["handle_ms_median"], inner["handle_ms_p99"]),
            ("+ render 16x16 RGB, / wire time", inner["ratio_rgb_median"], inner["ratio_rgb_p99"]),
            (
                "+ render 32x8 mono, / wire time",
                inner["ratio_mono_median"],
                inner["ratio_mono_p99"],
            ),
        ]
    )

    if args.pty_games:
        outer = [end_to_end(seed, speed=6.0) for seed in range(1, args.pty_games + 1)]
        print("\n## Commit latency end to end: pty, pyserial thread, queue, referee, display")
        print(f"{sum(o['steps'] for o in outer):.0f} steps committed by their last field update")
        _table(
            [
                (
                    label,
                    statistics.median(o[f"{key}_median"] for o in outer),
                    max(o[f"{key}_p99"] for o in outer),
                )
                for key, label in (
                    ("commit_ms", "last byte -> committed (ms)"),
                    ("frame_ms", "last byte -> frame drawn (ms)"),
                    ("ratio", "last byte -> frame, / wire time"),
                )
            ]
        )

    memory = resident_memory(20.0)
    print("\n## companion run, idle in a game on a simulated board (heartbeat every second)")
    print("| VmRSS | VmHWM | idle CPU |\n| --- | --- | --- |")
    rss, hwm, cpu = memory["rss_mib"], memory["hwm_mib"], memory["idle_cpu_percent"]
    print(f"| {rss:.1f} MiB | {hwm:.1f} MiB | {cpu:.2f} % of a core |")


if __name__ == "__main__":
    main()
