"""Virtual players at a real-time table (the pty, the daemon, mock pins): a step the
companion confirms as another one is taken back as a person would, and the game goes on."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from companion.display import make_device
from companion.referee.effects import Committed
from companion.sim.demo import MATRIX, demo_config
from companion.sim.perform import Noise
from companion.sim.table import seat

# Every piece first set on a free cell beside its own and left there for a second: longer
# than the settle time, so where that cell is a legal step, the companion commits it.
SLIPS = replace(Noise.none(), misplace=1.0, misplace_s=(1.0, 1.0))


def test_a_step_misread_is_undone_the_pieces_put_back_and_the_turn_played_again(
    tmp_path: Path,
) -> None:
    config = demo_config("enceladus", 2, 3, "", tmp_path)
    commits: list[Committed] = []
    with ExitStack() as stack:
        seated = seat(config, stack, device=make_device({"display": "dummy", **MATRIX}),
                      speed=1.0, noise=SLIPS)
        service, players = seated.service, seated.players

        def enough(commit: Committed) -> None:
            commits.append(commit)
            if players.steps >= 3:
                service.stop("enough steps")

        service.commit_listeners.append(enough)
        players.start()
        service.run()
    assert players.error is None
    assert players.misread >= 1  # a Martian left on the start square next to its own
    assert players.steps >= 3
    # every step misread was taken back: the game the companion keeps is the players' own
    kept = service.referee.history
    assert len(kept) == players.steps
