"""``companion demo``: a whole game refereed end to end, no hardware.

The simulated board controller speaks protocol v1 on a real pseudo-terminal; the daemon is
built by the same composition root as ``companion run`` (:func:`companion.service.build`) and
reads it through pyserial; the buttons are gpiozero's MockFactory pins, pressed by the virtual
players; the matrix is a luma.emulator device (an animated GIF by default, in real time;
luma's ``dummy`` when luma.emulator is not installed) and, when standard output is a
terminal, also drawn there, fitted to the terminal and redrawn in place
(:class:`companion.display.terminal.TerminalMatrix`); without a terminal nothing is drawn
there.  The end screen stays until its ranking has gone by once; then the final hands and rank
points are printed under the picture, which stays on screen.
"""

from __future__ import annotations

import shutil
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from companion.config import BoardConfig, Config, DisplayConfig, GameConfig, JournalConfig
from companion.files import output_error
from companion.sim.table import seat

MATRIX: dict[str, str | int] = {"width": 16, "height": 16, "mode": "RGB"}
"""The demo's matrix: a 16x16 RGB panel, the smallest that shows the garden's mini-map."""

GIF: dict[str, str | int] = {"transform": "identity", "scale": 8, "max_frames": 6000}
"""The GIF's look: each matrix pixel an 8 x 8 square."""

END_HOLD_S = (5.0, 15.0)
"""Shortest and longest time the end screen stays, in seconds."""


def demo_config(
    game: str, players: int, seed: int, board: str, journal_dir: Path, sensing: str = "identity"
) -> Config:
    """The demo's configuration: the defaults with a quick table (players who know the game).
    A presence board has no way to tell colours, so no tray is fitted."""
    return Config(
        game=GameConfig(name=game, players=players, seed=seed, board=board),
        board=BoardConfig(
            port="",
            sensing=sensing,
            tray=sensing == "identity",
            debounce_ms=20,
            settle_ms=250,
            grace_ms=1500,
        ),
        display=DisplayConfig(luma={"display": "dummy", **MATRIX}),
        journal=JournalConfig(directory=str(journal_dir), fsync=True),
    )


def _end_hold(screen: Any, interval: float) -> float:
    """Seconds for the end screen to stay: until its longest ticker has gone by once."""
    from companion.display import render_frame

    frames = render_frame(screen, width=int(MATRIX["width"]), height=int(MATRIX["height"]),
                          mode=str(MATRIX["mode"])).cycle
    shortest, longest = END_HOLD_S
    return min(longest, max(shortest, frames * interval))


def run_demo(
    *,
    game: str,
    players: int,
    seed: int,
    display: str,
    board: str,
    out: Path,
    speed: float,
    sensing: str = "identity",
) -> int:
    """Play one game; returns the exit status (0 when the game reached its end).  Raises
    :class:`companion.errors.OutputFileError` when the folder ``out`` cannot be made.

    An emulator ``display`` (the GIF) without luma.emulator installed falls back to luma's
    ``dummy`` device, and a note says which extra gives the GIF.
    """
    from companion.display import Display, make_device
    from companion.display.device import EMULATOR_INSTALL, needs_emulator
    from companion.display.terminal import TerminalMatrix

    name = "-".join((f"demo-{game}", *([board] if game == "uranus" else []),
                     *([sensing] if sensing != "identity" else []), f"{players}p-{seed}"))
    # The demo's own journal folder, emptied first: a demo never resumes an older demo.
    journal_dir = out / "journals" / name
    shutil.rmtree(journal_dir, ignore_errors=True)
    try:
        journal_dir.mkdir(parents=True)
    except OSError as error:
        raise output_error(journal_dir, "journal folder", error) from None
    config = demo_config(game, players, seed, board, journal_dir, sensing)
    gif = out / f"{name}.gif"
    if needs_emulator(display):
        print(f"The matrix is not drawn: display {display} needs luma.emulator, which is not "
              f"installed ({EMULATOR_INSTALL}).")
        display = "dummy"
    device_options: dict[str, Any] = {"display": display, **MATRIX}
    if display == "gifanim":
        device_options |= {"filename": str(gif), **GIF}
    interval = config.display.frame_interval_ms / 1000
    started = time.monotonic()
    with ExitStack() as stack:
        seated = seat(config, stack, device=make_device(device_options), speed=speed)
        service, table = seated.service, seated.players
        if sys.stdout.isatty():
            # the rows printed at the end stay free under the picture: two of summary, a
            # player each, the winner, the GIF, the journal
            picture = TerminalMatrix(int(MATRIX["width"]), int(MATRIX["height"]),
                                     reserve=players + 5)
            terminal = Display(picture, frame_interval=interval)
            stack.callback(terminal.close)
            service.screen_listeners.append(terminal.show)
        service.stop_when_over = True
        table.start()
        outcome = service.run()
        seconds = time.monotonic() - started
        if outcome is not None and service.last_screen is not None:
            time.sleep(_end_hold(service.last_screen, interval))
    print(f"Gardens of {game.capitalize()}, {players} players, seed {seed}, {sensing} board:")
    print(f"{table.steps} steps refereed in {seconds:.1f} s, {table.questions} "
          f"question{'' if table.questions == 1 else 's'} asked")
    if outcome is None:
        print(f"The game did not finish: {table.error or 'stopped'}")
        return 1
    label = "hand" if game == "enceladus" else "score"
    for rank, (player, result, points) in enumerate(outcome.ranking, 1):
        print(f"  {rank}. Player {player}: {label} {result}, rank points {points}")
    winners = " and ".join(f"Player {p}" for p in outcome.winners)
    print(f"Winner: {winners} ({outcome.termination})")
    if display == "gifanim":
        print(f"Matrix animation: {gif}")
    print(f"Journal: {journal_dir}")
    return 0
