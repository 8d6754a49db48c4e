"""Virtual players at a real-time table (the pty, the daemon, mock pins): a piece left a
second on a cell beside its own, where it makes another legal step, is shown committed there
and corrected when it moves on, and the game goes on as the players made it."""

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
# than the settle time, so where that cell is a legal step, the companion commits it at once
# and corrects it when the piece moves on.
SLIPS = replace(Noise.none(), misplace=1.0, misplace_s=(1.0, 1.0))


def test_a_piece_left_beside_its_own_is_shown_there_then_corrected_where_it_goes(
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
    # a Martian left on the start square next to its own, then moved on: corrected
    assert any(c.corrects is not None for c in commits)
    assert players.misread == 0 and players.steps >= 3
    # the game the companion keeps is the players' own
    kept = service.referee.history
    assert len(kept) == players.steps


def test_a_fast_table_still_lifts_and_sets_each_piece_for_longer_than_the_debounce(
    tmp_path: Path,
) -> None:
    """At twenty times the pace of people a flower taken off a square and a Martian set
    there came 15 ms apart: no change a presence board debouncing 20 ms reports, so the
    companion never saw the Martian land.  A hand's every move lasts twice the debounce."""
    config = demo_config("enceladus", 4, 6, "", tmp_path, sensing="presence")
    with ExitStack() as stack:
        seated = seat(config, stack, device=make_device({"display": "dummy", **MATRIX}),
                      speed=20.0, noise=Noise.none())
        service, players = seated.service, seated.players
        players.step_timeout = 5.0

        def enough(commit: Committed) -> None:
            if commit.number >= 6:
                service.stop("enough steps")

        service.commit_listeners.append(enough)
        players.start()
        service.run()
    assert players.error is None
    assert len(service.referee.history) >= 6
