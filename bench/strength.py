"""The opponent's strengths measured against each other, and its step times.

``python bench/strength.py [--games N] [--players 2 3 4] [--pairing ...] [--out FILE]``: for
each game and player count, N games of ``steady`` against ``quick`` and N of ``strong`` against
``steady`` (``--pairing strong-steady``: that pairing alone; the virtual players' seats of
:class:`companion.sim.players.VirtualSeats`, no board), played in
rounds of ``--round`` games of every pairing so that a run stopped early has measured every
pairing alike.  Game k of a pairing seats the stronger player at seat ``k mod n + 1`` and
the weaker at every other seat, and is set up from seed k.

*Beats*: the stronger seat finishes ahead of a weaker seat (more rank points; a tie counts
half).  With two players that is one comparison a game; with three or four, one for each
weaker seat, so the comparisons of one game are not independent and the interval for those
rows is somewhat narrower than it would be for as many separate games.  The rate is given
with its Wilson 95 % interval.  Step times are those of every decision of each strength:
wall-clock (``time.perf_counter``) and the process's CPU time (``time.process_time``,
which a machine shared with other work inflates less), with the nodes spent.

Each game's result is appended to ``--out`` (JSON lines) as it ends; ``--table`` prints the
tables of such a file.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from companion.opponent import Strength
from companion.rules import GAMES, load
from companion.sim.players import VirtualSeats

PAIRINGS = ((Strength.STEADY, Strength.QUICK), (Strength.STRONG, Strength.STEADY))


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``wins`` out of ``n`` (95 % for the default ``z``)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def play_timed(game: str, players: int, stronger: Strength, weaker: Strength,
               k: int) -> dict[str, Any]:
    """Game ``k`` of a pairing (see the module docstring), as one JSON-ready record with
    the time and nodes of every decision, by strength."""
    rules = load(game).RULES
    seat = k % players + 1
    strengths = [stronger if p == seat else weaker for p in range(1, players + 1)]
    state = rules.new_game(players, k, {})
    seats = VirtualSeats(rules, state, strengths, seed=k)
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    nodes: dict[str, list[int]] = {}
    steps = 0
    while rules.outcome(state) is None:
        started, started_cpu = time.perf_counter(), time.process_time()
        step = seats.step(state)
        if seats.decided is not None:
            strength = str(seats.strengths[rules.to_move(state) - 1])
            times.setdefault(strength, []).append(time.perf_counter() - started)
            cpu.setdefault(strength, []).append(time.process_time() - started_cpu)
            nodes.setdefault(strength, []).append(seats.decided.nodes)
        seats.played(state, step)
        state = rules.apply(state, step)
        steps += 1
    outcome = rules.outcome(state)
    assert outcome is not None
    points = {player: rank for player, _, rank in outcome.ranking}
    beats = sum(1.0 if points[seat] > points[p] else 0.5 if points[seat] == points[p] else 0.0
                for p in points if p != seat)
    return {"game": game, "players": players, "stronger": str(stronger),
            "weaker": str(weaker), "k": k, "seat": seat, "beats": beats,
            "pairs": players - 1, "steps": steps, "times": times, "cpu": cpu, "nodes": nodes,
            "ranking": [list(r) for r in outcome.ranking]}


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def tables(records: list[dict[str, Any]]) -> str:
    """The win-rate table and the step-time table of ``records``, in Markdown."""
    lines = ["| game | players | pairing | games | comparisons | beats | rate | Wilson 95 % |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    cells: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for r in records:
        cells.setdefault((r["game"], r["players"], f"{r['stronger']} v {r['weaker']}"),
                         []).append(r)
    for (game, players, pairing), rs in sorted(cells.items()):
        wins = sum(r["beats"] for r in rs)
        n = sum(r["pairs"] for r in rs)
        low, high = wilson(wins, n)
        lines.append(f"| {game} | {players} | {pairing} | {len(rs)} | {n} | {wins:g} | "
                     f"{wins / n:.0%} | {low:.0%}-{high:.0%} |")
    lines += ["", "| game | strength | steps | kind | p50 ms | p95 ms | max ms | "
              "x10 p95 s | x10 max s | nodes p50 | nodes max |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    timing: dict[tuple[str, str], tuple[list[float], list[float], list[int]]] = {}
    for r in records:
        for strength, times in r["times"].items():
            entry = timing.setdefault((r["game"], strength), ([], [], []))
            entry[0].extend(times)
            entry[1].extend(r["cpu"][strength])
            entry[2].extend(r["nodes"][strength])
    order = {s.value: i for i, s in enumerate(Strength)}
    for (game, strength), (times, cpu, nodes) in sorted(
            timing.items(), key=lambda t: (t[0][0], order[t[0][1]])):
        for kind, values in (("wall", times), ("cpu", cpu)):
            lines.append(
                f"| {game} | {strength} | {len(values)} | {kind} | "
                f"{1000 * _quantile(values, 0.5):.1f} | {1000 * _quantile(values, 0.95):.1f} | "
                f"{1000 * max(values):.1f} | {10 * _quantile(values, 0.95):.2f} | "
                f"{10 * max(values):.2f} | {statistics.median(nodes):g} | {max(nodes)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per pairing and row")
    parser.add_argument("--round", type=int, default=10, help="games per pairing a round")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--game", choices=GAMES, nargs="+", default=list(GAMES))
    names = [f"{stronger}-{weaker}" for stronger, weaker in PAIRINGS]
    parser.add_argument("--pairing", choices=names, nargs="+", default=names,
                        help="the pairings to play (default: every one)")
    parser.add_argument("--out", type=Path, default=Path("out/strength.jsonl"))
    parser.add_argument("--table", action="store_true", help="print the tables of --out only")
    args = parser.parse_args(argv)
    if not args.table:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        done = {(r["game"], r["players"], r["stronger"], r["k"])
                for r in _read(args.out)} if args.out.exists() else set()
        with args.out.open("a") as out:
            for first in range(0, args.games, args.round):
                for game in args.game:
                    for players in args.players:
                        for stronger, weaker in PAIRINGS:
                            if f"{stronger}-{weaker}" not in args.pairing:
                                continue
                            for k in range(first + 1, min(first + args.round, args.games) + 1):
                                if (game, players, str(stronger), k) in done:
                                    continue
                                record = play_timed(game, players, stronger, weaker, k)
                                out.write(json.dumps(record) + "\n")
                                out.flush()
                print(f"{min(first + args.round, args.games)} games of each pairing",
                      file=sys.stderr, flush=True)
    print(tables(_read(args.out)))
    return 0


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


if __name__ == "__main__":
    sys.exit(main())
