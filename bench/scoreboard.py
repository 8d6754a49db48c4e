"""The scoreboard at scale: twenty tables playing whole games at once through one Mosquitto.

Each table is its own process (``bench/table.py``: a daemon built as ``companion run`` builds
it, ``[mqtt]`` on, its simulated board on a pseudo-terminal and virtual players at a person's
pace times ``--speed``); the scoreboard (:class:`companion.scoreboard.model.Scoreboard` fed by
its MQTT client, as ``companion scoreboard`` runs it) follows them from this process.

Measured:

- **lag**: for every journal line of every table, from the moment it is durable in the
  table's journal (the table prints it) to the moment the scoreboard has applied it;
  median, 99th percentile and maximum;
- **correct**: every table's game on the scoreboard has the steps of its journal, and the
  standings are those the journals give;
- **the broker**: its CPU time over the run and its peak resident memory;
- **each companion's added cost**: the same twenty tables run again without a broker (they
  publish nothing), the CPU time and peak resident memory of each process (its rusage)
  compared seat by seat; median and maximum of the differences;
- **the scoreboard**: this process's CPU time while it follows the tables.

``python bench/scoreboard.py [--tables 20] [--speed 4]`` prints Markdown; run it with ``nice``
on a shared machine.  Needs Mosquitto (``/usr/sbin/mosquitto``) and the mqtt extra.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from companion import journal
from companion.scoreboard.client import Feed, parse_broker
from companion.scoreboard.model import FinishedView, Scoreboard, rank

HERE = Path(__file__).resolve().parent
MOSQUITTO = "/usr/sbin/mosquitto"
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Finn", "Gus", "Hal", "Ida", "Jo", "Kim", "Lou")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a running process has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


class TimedScoreboard(Scoreboard):
    """The scoreboard noting when it has applied each journal line of each table:
    :attr:`applied` maps ``(table, seq)`` to the time (``time.time()``)."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: dict[tuple[str, int], float] = {}
        self._last: dict[str, int] = {}

    def receive(self, topic: str, payload: bytes) -> bool:
        changed = super().receive(topic, payload)
        if changed:
            now, name = time.time(), topic.split("/")[-2]
            view = self.table(name)
            if view is not None and view.seq > self._last.get(name, 1):
                for seq in range(self._last.get(name, 1) + 1, view.seq + 1):
                    self.applied.setdefault((name, seq), now)
                self._last[name] = view.seq
        return changed


class Tables:
    """``count`` tables of ``bench/table.py`` started at once in ``folder``: each one's
    printed journal lines with their times, and its rusage once it has ended."""

    def __init__(self, count: int, folder: Path, broker: str, speed: float) -> None:
        self.lines: dict[str, list[tuple[int, float]]] = {}
        self.usage: dict[str, tuple[float, int]] = {}  # CPU s, peak RSS KiB
        self.failed: dict[str, str] = {}  # a table whose game did not finish: its last word
        threads = []
        for number in range(1, count + 1):
            name = f"t{number:02}"
            names = f"{NAMES[(2 * number) % len(NAMES)]},{NAMES[(2 * number + 3) % len(NAMES)]}"
            process = subprocess.Popen(
                [sys.executable, str(HERE / "table.py"), "--broker", broker, "--table", name,
                 "--journal", str(folder / name), "--seed", str(number), "--names", names,
                 "--speed", str(speed), "--game", "uranus" if number % 4 == 0 else "enceladus"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.lines[name] = []
            thread = threading.Thread(target=self._follow, args=(name, process), daemon=True)
            thread.start()
            threads.append(thread)
        self._threads = threads

    def _follow(self, name: str, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        last = ""
        for line in process.stdout:
            if line.startswith("line "):
                _, seq, at = line.split()
                self.lines[name].append((int(seq), float(at)))
            last = line.strip()
        _, status, usage = os.wait4(process.pid, 0)
        self.usage[name] = (usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
        if status != 0 or last != "over":
            self.failed[name] = last

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _expected(folder: Path) -> tuple[list[FinishedView], dict[str, int]]:
    finished, steps = [], {}
    for path in sorted(folder.glob("*/*.jsonl")):
        record = journal.read(path)
        table, names, over = path.parent.name, record.header["names"], record.over
        steps[table] = len(record.steps)
        if over is not None:
            finished.append(FinishedView(table, path.stem, record.header["game"], tuple(
                (seat, names[seat - 1], result, points)
                for seat, result, points in over["ranking"]),
                tuple(names[w - 1] for w in over["winners"])))
    return finished, steps


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{statistics.median(ordered) * 1000:.0f} | {p99 * 1000:.0f} | {ordered[-1] * 1000:.0f}"


def run(count: int, speed: float, timeout: float, baseline_too: bool = True) -> list[str]:
    out: list[str] = []
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        port = _free_port()
        (folder / "mosquitto.conf").write_text(
            f"listener {port} 127.0.0.1\npersistence false\nallow_anonymous true\n"
            "max_queued_messages 100000\n" + ("user root\n" if os.getuid() == 0 else ""))
        broker = subprocess.Popen([MOSQUITTO, "-c", str(folder / "mosquitto.conf")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)  # Mosquitto listens within a few milliseconds
            url = f"mqtt://127.0.0.1:{port}"
            board = TimedScoreboard()
            feed = Feed(parse_broker(url), board, lambda: None, client_id="bench-scoreboard")
            feed.start()
            deadline = time.monotonic() + 10
            while not feed.connected and time.monotonic() < deadline:
                time.sleep(0.05)
            load = os.getloadavg()
            cpu_before = resource.getrusage(resource.RUSAGE_SELF)
            broker_before = _proc_cpu(broker.pid)
            started, started_at = time.monotonic(), time.time()
            tables = Tables(count, folder / "with", url, speed)
            tables.join(timeout)
            wall = time.monotonic() - started
            time.sleep(1.0)  # the last messages on their way
            broker_cpu = _proc_cpu(broker.pid) - broker_before
            broker_peak = _proc_peak_kib(broker.pid)
            cpu_after = resource.getrusage(resource.RUSAGE_SELF)
            feed.stop()
        finally:
            broker.terminate()
            broker.wait(10)
        applied = board.applied
        done = {name: lines for name, lines in tables.lines.items() if name not in tables.failed}
        lags = [applied[(name, seq)] - at for name, lines in done.items()
                for seq, at in lines if (name, seq) in applied]
        # once every table has made its first step: the twenty start-ups (a few CPU seconds
        # each, all at once) are behind
        steady_from = max(lines[0][1] for lines in done.values() if lines)
        steady = [applied[(name, seq)] - at for name, lines in done.items()
                  for seq, at in lines if (name, seq) in applied and at > steady_from]
        missing = [(name, seq, seq == lines[-1][0]) for name, lines in done.items()
                   for seq, _ in lines if (name, seq) not in applied]
        finished, steps = _expected(folder / "with")
        views = {view.table: view for view in board.tables()}
        right = [name for name, count_ in steps.items() if name not in tables.failed
                 and name in views and views[name].steps == count_ and views[name].over]
        same = board.standings() == rank(finished)
        out += [f"{count} tables, {sum(len(v) for v in tables.lines.values())} journal lines "
                f"in {wall:.1f} s (load average {load[0]:.1f} before, {os.getloadavg()[0]:.1f} "
                f"after); games finished {count - len(tables.failed)} of {count}; the "
                f"scoreboard right on {len(right)} finished tables, its standings equal to the "
                f"journals': {same}; lines of finished tables never seen: {len(missing)}"
                + "".join(f"; {name} line {seq}{' (its last)' if last else ''}"
                          for name, seq, last in missing), "",
                *(f"- {name} did not finish: {why}" for name, why in
                  sorted(tables.failed.items())), "",
                "| figure | median | p99 | max |", "| --- | --- | --- | --- |",
                f"| lag, journal line durable -> on the scoreboard (ms), {len(lags)} lines of the "
                f"finished tables | {_ms(lags)} |",
                f"| the same, the {len(steady)} lines after every table had begun "
                f"({steady_from - started_at:.0f} s in) | {_ms(steady)} |", ""]
        self_cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (
            cpu_before.ru_utime + cpu_before.ru_stime)
        out.append(f"Broker: {broker_cpu:.2f} s CPU over the run ({broker_cpu / wall * 100:.1f} "
                   f"% of one core), peak RSS {broker_peak / 1024:.1f} MiB.  Scoreboard (this "
                   f"process, client and model): {self_cpu:.2f} s CPU "
                   f"({self_cpu / wall * 100:.1f} % of one core).")
        if not baseline_too:
            return out
        baseline = Tables(count, folder / "without", "", speed)
        baseline.join(timeout)
        added_cpu = [tables.usage[n][0] - baseline.usage[n][0] for n in tables.usage
                     if n in baseline.usage]
        added_rss = [(tables.usage[n][1] - baseline.usage[n][1]) / 1024 for n in tables.usage
                     if n in baseline.usage]
        with_cpu = statistics.median(u[0] for u in tables.usage.values())
        with_rss = statistics.median(u[1] for u in tables.usage.values()) / 1024
        out += ["", "Each companion, with [mqtt] against the same table without (seat by "
                "seat, the process's rusage over its whole game):", "",
                "| figure | with mqtt, median | added, median | added, max |",
                "| --- | --- | --- | --- |",
                f"| CPU (s per game) | {with_cpu:.2f} | {statistics.median(added_cpu):.2f} | "
                f"{max(added_cpu):.2f} |",
                f"| peak RSS (MiB) | {with_rss:.1f} | {statistics.median(added_rss):.1f} | "
                f"{max(added_rss):.1f} |"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--speed", type=float, default=4.0,
                        help="the players' pace, times a person's")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds the tables may take over their games")
    parser.add_argument("--no-baseline", action="store_true",
                        help="leave out the second run without a broker (no added costs)")
    args = parser.parse_args(argv)
    for line in run(args.tables, args.speed, args.timeout, not args.no_baseline):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
