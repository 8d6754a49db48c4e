"""Speed of the rules cores: full random playouts per second of each game, and for Gardens of
Enceladus what listing and applying one legal step costs.

A playout starts from ``RULES.new_game`` and takes a random legal step (``legal_steps``, then
``apply``) until ``outcome`` says the game is over.  The step is ``rng.choice`` of the listing
itself when ``legal_steps`` gives a sequence (a random index, then the one step there), of
``list(...)`` when it gives an iterator: uniform over the legal steps either way, and the
same random numbers drawn, so a tree whose listing is an iterator is measured as before.

Games cycle through 2 to 5 players and the variants of each game (Enceladus with and
without the tube, cooperative, two Martians each; Mars with peaks and the other scoring and
last-flower rules; Uranus on its three boards).  Only that part of the rules API is used, so
the script measures any tree that has it: ``--tree PATH`` imports ``companion`` from PATH
(default: the tree holding this file).

    python bench/cores.py [--tree PATH] [--game NAME] [--seconds S | --playouts N] [--steps]

prints one line per game, ``<game> <playouts/s> playouts/s (<n> playouts, <steps> steps)``;
``--steps`` adds a line per game, for positions met in random playouts (in Enceladus those
listing over 100 steps), the cost of listing every legal step (per step listed), of choosing
one at random as a playout does (per position: the listing, its length and one step), of
applying one and of saying what one changes on the board (``changes``, per step), in
microseconds.  Every
figure is in seconds of this process's CPU time, which other work on a shared machine
disturbs far less than the clock on the wall.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

VARIANTS: dict[str, tuple[tuple[tuple[int, ...], dict[str, Any]], ...]] = {
    "enceladus": (
        ((2, 3, 4, 5), {}),
        ((2, 3, 4, 5), {"tube": False}),
        ((3, 4), {"mode": "cooperative"}),
        ((2,), {"martians_per_player": 2}),
    ),
    "mars": (
        ((2, 3, 4, 5), {}),
        ((2, 3, 4), {"peaks": 3, "plant_score": "connected_only"}),
        ((3, 5), {"last_flower": "own_reserve", "center_blocks_path": True}),
    ),
    "uranus": (
        ((2, 3, 4, 5), {"board": "hexagonal"}),
        ((2, 3, 4), {"board": "trapezoid"}),
        ((2, 3, 4), {"board": "rhombus", "triangle_points": "one_side"}),
    ),
}
"""Per game, ``(player counts, options)``: the games a run cycles through."""

MAX_STEPS = 5000
"""A playout longer than this is cut (none should be: every game ends)."""


def setups(game: str) -> list[tuple[int, dict[str, Any]]]:
    """The ``(players, options)`` of a run, in the order played."""
    return [(n, options) for counts, options in VARIANTS[game] for n in counts]


def playout(rules: Any, players: int, options: dict[str, Any], rng: random.Random) -> int:
    """One random game to its end; the number of steps taken."""
    state = rules.new_game(players, rng.randrange(1 << 30), options)
    for steps in range(MAX_STEPS):
        if rules.outcome(state) is not None:
            return steps
        steps = rules.legal_steps(state)
        if not isinstance(steps, Sequence):
            steps = list(steps)
        state = rules.apply(state, rng.choice(steps))
    raise RuntimeError(f"{rules.name}: a playout took more than {MAX_STEPS} steps")


def playouts(
    rules: Any, seconds: float, count: int | None = None, seed: int = 1
) -> tuple[int, int, float]:
    """Playouts cycling through :func:`setups`, ``count`` of them, or else for at least
    ``seconds`` (and one round of them): ``(playouts, steps, seconds taken)``."""
    rng = random.Random(seed)
    order = setups(rules.name)
    done = steps = 0
    start = time.process_time()
    while (
        done < count
        if count is not None
        else done < len(order) or time.process_time() - start < seconds
    ):
        players, options = order[done % len(order)]
        steps += playout(rules, players, options, rng)
        done += 1
    return done, steps, time.process_time() - start


def step_costs(
    rules: Any, positions: int = 40, seed: int = 2
) -> tuple[float, float, float, float, int]:
    """For ``positions`` positions from random playouts (in Enceladus, of over 100 legal
    steps): microseconds per step listed, per random choice of a step (a position), per
    step applied, per step's ``changes``, and the mean number listed."""
    rng = random.Random(seed)
    least = 100 if rules.name == "enceladus" else 0
    states: list[Any] = []
    while len(states) < positions:
        players, options = rng.choice(setups(rules.name))
        state = rules.new_game(players, rng.randrange(1 << 30), options)
        while rules.outcome(state) is None and len(states) < positions:
            steps = list(rules.legal_steps(state))
            if len(steps) > least and rng.random() < 0.05:
                states.append(state)
            state = rules.apply(state, rng.choice(steps))
    listed = applied = 0
    list_time = choice_time = apply_time = changes_time = 0.0
    for state in states:
        start = time.process_time()
        steps = list(rules.legal_steps(state))
        list_time += time.process_time() - start
        start = time.process_time()
        for _ in range(10):
            some = rules.legal_steps(state)
            rng.choice(some if isinstance(some, Sequence) else list(some))
        choice_time += (time.process_time() - start) / 10
        listed += len(steps)
        sample = rng.sample(steps, min(50, len(steps)))
        start = time.process_time()
        for step in sample:
            rules.apply(state, step)
        apply_time += time.process_time() - start
        start = time.process_time()
        for step in sample:
            rules.changes(state, step)
        changes_time += time.process_time() - start
        applied += len(sample)
    return (1e6 * list_time / listed, 1e6 * choice_time / len(states),
            1e6 * apply_time / applied, 1e6 * changes_time / applied, listed // len(states))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--game", choices=sorted(VARIANTS), action="append")
    parser.add_argument("--seconds", type=float, default=3.0, help="per game (default 3)")
    parser.add_argument("--playouts", type=int, help="per game, instead of --seconds: the same "
                        "games on every tree, for timing the whole process")
    parser.add_argument("--steps", action="store_true", help="step costs too")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.tree.resolve()))
    from companion import rules as cores

    games = args.game or sorted(VARIANTS)
    for game in games:
        rules = cores.load(game).RULES
        done, steps, taken = playouts(rules, args.seconds, args.playouts)
        print(f"{game} {done / taken:.2f} playouts/s ({done} playouts, {steps} steps)")
    for game in games if args.steps else ():
        per_list, per_choice, per_apply, per_change, size = step_costs(cores.load(game).RULES)
        print(f"{game} list {per_list:.2f} us/step, choose one {per_choice:.0f} us, apply "
              f"{per_apply:.1f} us/step, changes {per_change:.1f} us/step ({size} steps a "
              "position)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
