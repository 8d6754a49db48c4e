"""Draw the README's pictures of the matrix: ``docs/images/<game>.png``, one per game.

Each is a game in the middle, played by the simulator's virtual players in virtual time
(:class:`companion.sim.harness.VirtualTable`, the real referee and the game's extensions), as
the matrix shows it: on the demo's 16 x 16 RGB panel (8 times larger) and on a 64 x 32 one
(4 times larger), each pixel a square (nearest neighbour).  Run from the repository root:

    .venv/bin/python docs/images.py
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from companion.config import layout_name
from companion.daemon.service import game_extensions, referee_settings
from companion.display import render
from companion.referee.screen import Screen
from companion.rules import load
from companion.sim.demo import demo_config
from companion.sim.harness import VirtualTable
from companion.sim.perform import Noise

OUT = Path(__file__).resolve().parent / "images"
GAMES = {"enceladus": (2, 1, 24), "mars": (3, 7, 30), "uranus": (2, 1, 16)}
"""game -> (players, seed, steps played before the picture)."""

PANELS = ((16, 16, 8), (64, 32, 4))
"""The matrices drawn, ``(width, height, scale)``, side by side."""


def screen_of(game: str, players: int, seed: int, steps: int) -> Screen:
    """The matrix's screen after ``steps`` steps (Mars: the next one with dice in the pool)."""
    config = demo_config(game, players, seed, "hexagonal", OUT)
    rules = load(game).RULES
    state = rules.new_game(players, seed, config.game.rules_options())
    table = VirtualTable(rules, state, layout_name(config), seed=seed, noise=Noise.none(),
                         settings=referee_settings(config), extensions=game_extensions(config))
    table.start()
    played = 0
    while table.play_step():
        played += 1
        pool = getattr(table.referee.state, "pool", (1,))
        if played >= steps and pool:
            break
    return table.referee.screen(table.now)


def picture(screen: Screen) -> Image.Image:
    panels = [render(screen, width=w, height=h, mode="RGB").resize(
        (w * scale, h * scale), Image.Resampling.NEAREST) for w, h, scale in PANELS]
    gap = 8
    out = Image.new("RGB", (sum(p.width for p in panels) + gap * (len(panels) - 1),
                            max(p.height for p in panels)), (48, 48, 48))
    x = 0
    for panel in panels:
        out.paste(panel, (x, 0))
        x += panel.width + gap
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for game, (players, seed, steps) in GAMES.items():
        path = OUT / f"{game}.png"
        picture(screen_of(game, players, seed, steps)).save(path, optimize=True)
        print(f"{path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
