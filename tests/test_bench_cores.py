"""The rules-core benchmark (bench/cores.py) plays whole games of every variant it names, on the
tree it is given, and reports what it measured."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from conftest import load_bench

from companion import rules

ROOT = Path(__file__).resolve().parent.parent


def _bench() -> ModuleType:
    return load_bench("cores")


@pytest.mark.parametrize("game", rules.GAMES)
def test_every_variant_is_a_game_played_to_its_end(game: str) -> None:
    bench = _bench()
    core = rules.load(game).RULES
    order = bench.setups(game)
    assert {players for players, _ in order} == {2, 3, 4, 5}
    done, steps, _ = bench.playouts(core, 0.0, count=len(order))
    assert done == len(order)
    assert steps > 10 * done  # whole games, not a few steps each


def test_the_figures_are_printed_for_the_tree_given(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    assert bench.main(["--tree", str(ROOT), "--game", "mars", "--playouts", "2"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("mars ") and "playouts/s (2 playouts, " in line
