"""One simulated table of an event, as its own process: a real companion daemon publishing to
an MQTT broker, its simulated board and its virtual players.

The daemon is built by the same composition root as ``companion run``
(:func:`companion.service.build`, with ``[mqtt]`` set) and reads its board through pyserial
on a pseudo-terminal, as ``companion demo`` does; the players wait for each step to be
confirmed before the next.  Started again in the same journal folder after being killed, it
resumes the game in progress: the board is laid out as the journal left it (the physical
board would still stand so), the daemon resumes the journal and publishes what it had not
sent, and the players play on.

Each journal line, once durable, is printed as ``line <seq> <unix time>``; ``over`` once the
daemon has stopped, a few seconds after the end (a companion stays up after a game: the
last lines go out meanwhile).
Without ``--broker`` the same table publishes nothing (what publishing costs is the
difference).
Used by the scoreboard's benchmark (``bench/scoreboard.py``) and its end-to-end test::

    python bench/table.py --broker mqtt://127.0.0.1:1883 --table t1 --journal DIR --seed 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from companion import journal
from companion.config import MqttConfig, PlayersConfig
from companion.rules import load
from companion.sim.demo import demo_config
from companion.sim.table import seat
from companion.tools.replay import read_game


def last_seq(path: Path) -> int:
    """The ``seq`` of the journal's last line (read from its tail)."""
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - 4096))
        seq: int = json.loads(file.read().splitlines()[-1])["seq"]
    return seq


def play(*, broker: str, table: str, directory: Path, game: str, players: int, seed: int,
         names: tuple[str, ...], speed: float, linger: float = 3.0) -> int:
    """Play the table's game to its end (or on from where its journal stands), stay up
    ``linger`` seconds after it as a companion does, then stop; the exit status."""
    from companion.display import make_device

    config = demo_config(game, players, seed, "hexagonal", directory)
    config = replace(config, players=PlayersConfig(names=names),
                     mqtt=MqttConfig(broker=broker, table=table, discovery=""))
    rules = load(game).RULES
    state, resumed_at = None, 0
    unfinished = journal.latest_unfinished(directory) if directory.is_dir() else None
    if unfinished is not None:
        state, resumed_at = read_game(unfinished)[2][-1].state, last_seq(unfinished)
    with ExitStack() as stack:
        # players started again do not repeat the choices of their first start
        sat = seat(config, stack, device=make_device({"display": "dummy", "width": 16,
                                                      "height": 16}),
                   speed=speed, state=state, players_seed=seed + resumed_at)
        service, seated = sat.service, sat.players

        def written(path: Path) -> None:
            print(f"line {last_seq(path)} {time.time():.6f}", flush=True)

        service.journal_listeners.append(written)
        lingering = threading.Timer(linger, service.stop, ("the game is over",))
        stack.callback(lingering.cancel)

        def committed(step: Any) -> None:
            if rules.outcome(step.state) is not None and not lingering.is_alive():
                lingering.start()  # a companion stays up after the end: its last lines go out

        service.commit_listeners.append(committed)
        seated.start()
        outcome: Any = service.run()
    print("over" if outcome is not None else f"stopped: {seated.error}", flush=True)
    return 0 if outcome is not None else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", default="", help="no broker: the table publishes nothing")
    parser.add_argument("--table", required=True)
    parser.add_argument("--journal", required=True, type=Path)
    parser.add_argument("--game", default="enceladus")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--names", default="", help="comma-separated, seat 1 first")
    parser.add_argument("--speed", type=float, default=4.0)
    args = parser.parse_args()
    os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")
    names = tuple(n.strip() for n in args.names.split(",")) if args.names else ()
    return play(broker=args.broker, table=args.table, directory=args.journal, game=args.game,
                players=args.players, seed=args.seed, names=names, speed=args.speed)


if __name__ == "__main__":
    sys.exit(main())
