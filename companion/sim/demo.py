"""``companion demo``: a whole game refereed end to end, no hardware.

The simulated board controller speaks protocol v1 on a real pseudo-terminal; the daemon is
built by the same composition root as ``companion run`` (:func:`companion.daemon.service.build`) and
reads it through pyserial; the buttons are gpiozero's MockFactory pins, pressed by the virtual
players; the matrix is a luma.emulator device (an animated GIF by default, in real time;
luma's ``dummy`` when luma.emulator is not installed) and, when standard output is a
terminal, also drawn there, fitted to the terminal and redrawn in place
(:class:`companion.display.terminal.TerminalMatrix`); without a terminal nothing is drawn
there.  The end screen stays until its ranking has gone by once; then the final hands and rank
points are printed under the picture, which stays on screen.

Each game of the demo has its journal folder, named after the game, the players and the seed
(``out/journals/demo-enceladus-2p-1``), beside its GIF of the same name (or its folder of PNG
frames, ``--display capture``): run again, the demo plays the same game again, and its journal
and GIF take the earlier ones' places, as a rerun is expected to.  The earlier journal stays
until the new game has begun: every option is checked and the device made first, and the new
journal is kept aside (``.<name>.new``) until the game ends, so a wrong option or a game that
cannot start leaves the earlier one whole, and the folders made for it are taken away again.
"""

from __future__ import annotations

import shutil
import sys
import time
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from companion.config import (
    BoardConfig,
    Config,
    DisplayConfig,
    GameConfig,
    JournalConfig,
    PlayersConfig,
    WebConfig,
)
from companion.errors import OutputFileError
from companion.extras import installed
from companion.files import output_error
from companion.opponent import DEFAULT_STRENGTH, Strength
from companion.sim.table import seat

if TYPE_CHECKING:
    from companion.referee.screen import Screen

MATRIX: dict[str, str | int] = {"width": 16, "height": 16, "mode": "RGB"}
"""The demo's matrix: a 16x16 RGB panel, the smallest that shows the garden's mini-map."""

GIF: dict[str, str | int] = {"transform": "identity", "scale": 8, "max_frames": 6000}
"""The GIF's look: each matrix pixel an 8 x 8 square."""

WEB = "127.0.0.1:0"
"""Where the demo serves the live page: this machine only, on a free port."""

END_HOLD_S = (5.0, 15.0)
"""Shortest and longest time the end screen stays, in seconds."""


def demo_config(
    game: str, players: int, seed: int, board: str, journal_dir: Path, sensing: str = "identity",
    web: str = "", seats: tuple[str, ...] = (),
) -> Config:
    """The demo's configuration: the defaults with a quick table (players who know the game).
    A presence board has no way to tell colours, so no tray is fitted.  ``web``: ``[web]
    listen``; ``seats``: ``[players] seats``."""
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
        web=WebConfig(listen=web),
        players=PlayersConfig(seats=seats),
    )


def _end_hold(screen: Screen, interval: float) -> float:
    """Seconds for the end screen to stay: until its longest ticker has gone by once."""
    from companion.display import render_frame

    frames = render_frame(screen, width=int(MATRIX["width"]), height=int(MATRIX["height"]),
                          mode=str(MATRIX["mode"])).cycle
    shortest, longest = END_HOLD_S
    return min(longest, max(shortest, frames * interval))


def _unmake(staging: Path, made: list[Path]) -> None:
    """Take away what a demo whose game did not begin has made: its new journal's
    ``staging`` folder, then each folder of ``made`` (made by this demo, outermost first)
    that is empty."""
    shutil.rmtree(staging, ignore_errors=True)
    for folder in reversed(made):
        with suppress(OSError):  # not empty: something else is kept there
            folder.rmdir()


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
    strength: str = DEFAULT_STRENGTH,
    seats: tuple[str, ...] = (),
) -> int:
    """Play one game, every virtual player at ``strength`` (``quick``, ``steady`` or
    ``strong``, :mod:`companion.opponent`); returns the exit status (0 when the game reached
    its end).  Raises :class:`companion.errors.ConfigError` for a display the device cannot
    be made from and :class:`companion.errors.OutputFileError` when the folders in ``out``
    cannot be made, both before any file is touched.  ``seats``: ``[players] seats`` (the
    companion's seats, whose steps the virtual people there carry out as announced).  The
    GIF, or with
    ``display="capture"`` the folder of PNG frames, and the journal folder go into ``out``
    (see the module docstring).

    An emulator ``display`` (the GIF) without luma.emulator installed falls back to luma's
    ``dummy`` device, and a note says which extra gives the GIF.
    """
    from companion.display import Display, make_device
    from companion.display.device import EMULATOR_INSTALL, needs_emulator
    from companion.display.terminal import TerminalMatrix
    from companion.web import WEB_INSTALL

    name = "-".join((f"demo-{game}", *([board] if game == "uranus" else []),
                     *([sensing] if sensing != "identity" else []), f"{players}p-{seed}"))
    gif, frames = out / f"{name}.gif", out / f"{name}-frames"
    if needs_emulator(display):
        print(f"The matrix is not drawn: display {display} needs luma.emulator, which is not "
              f"installed ({EMULATOR_INSTALL}).")
        display = "dummy"
    device_options: dict[str, object] = {"display": display, **MATRIX}
    if display == "gifanim":
        device_options |= {"filename": str(gif), **GIF}
    elif display == "capture":
        device_options |= {"file_template": str(frames / "luma_{0:06}.png"), **GIF}
    device = make_device(device_options)  # a wrong display option is said before any file
    web = WEB if installed("tornado") else ""
    if not web:  # said before any folder is made: an output that fails stops the demo here
        print(f"The live page is not served: it needs the web extra ({WEB_INSTALL}).")
    journal_dir = out / "journals" / name
    if journal_dir.is_symlink() or journal_dir.exists() and not journal_dir.is_dir():
        # the new journal could not take its place once the game is played
        kind = "a link" if journal_dir.is_symlink() else "a file"
        raise OutputFileError(f"cannot write the journal folder {journal_dir}: it is {kind}, "
                              "not a folder")
    staging = journal_dir.with_name(f".{name}.new")
    shutil.rmtree(staging, ignore_errors=True)  # left by a demo that was killed
    # the folders this demo makes (``out``, ``out/journals`` on a first run; the frames'):
    # taken away again, when empty, if the game does not begin
    made = [folder for folder in (out, staging.parent, *([frames] * (display == "capture")))
            if not folder.exists()]
    try:
        staging.mkdir(parents=True)
    except OSError as error:
        raise output_error(journal_dir, "journal folder", error) from None
    if display == "capture":
        try:
            frames.mkdir(exist_ok=True)
            for old in frames.glob("luma_*.png"):  # an earlier run's, not to mix with these
                old.unlink()
        except OSError as error:
            _unmake(staging, made)
            raise output_error(frames, "frames folder", error) from None
    config = demo_config(game, players, seed, board, staging, sensing, web, seats)
    interval = config.display.frame_interval_ms / 1000
    started = time.monotonic()
    began = False
    try:
        with ExitStack() as stack:
            seated = seat(config, stack, device=device, speed=speed,
                          strength=Strength(strength))
            service, table = seated.service, seated.players
            if service.web is not None:
                print(f"Live page: {service.web.address}", flush=True)
            if sys.stdout.isatty():
                # the rows printed at the end stay free under the picture: two of summary, a
                # player each, the winner, the GIF, the journal
                # the live page's address, printed above, would be cleared off by the picture
                address = "" if service.web is None else f"Live page: {service.web.address}"
                picture = TerminalMatrix(int(MATRIX["width"]), int(MATRIX["height"]),
                                         reserve=players + 5, caption=address)
                terminal = Display(picture, frame_interval=interval)
                stack.callback(terminal.close)
                service.screen_listeners.append(terminal.show)
            service.stop_when_over = True
            began = True
            table.start()
            outcome = service.run()
            seconds = time.monotonic() - started
            if outcome is not None and service.last_screen is not None:
                time.sleep(_end_hold(service.last_screen, interval))
    finally:
        if began:  # the new game's journal, closed now, takes the earlier one's place
            shutil.rmtree(journal_dir, ignore_errors=True)
            staging.rename(journal_dir)
        else:
            _unmake(staging, made)
    print(f"Gardens of {game.capitalize()}, {players} players, seed {seed}, {sensing} board:")
    if seats:
        print("The companion plays " + ", ".join(
            f"P{player} ({seat})" for player, seat in enumerate(seats, 1) if seat != "person"))
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
    elif display == "capture":
        print(f"Matrix frames: {frames}")
    print(f"Journal: {journal_dir}")
    return 0
