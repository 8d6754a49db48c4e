"""``changes(state, step)`` of every game is exactly what ``apply`` does to the board: the cells
whose piece differs between ``board(state)`` and ``board(apply(state, step))``, with their new
piece, though it is worked out from the step alone (the referee asks it of every candidate step
on a field update).  Checked on random positions of seeded random games of every variant and
player count, for a sample of the legal steps of each position (all the special actions of
Enceladus among them: picks, swaps under Martians, soliflowers taken after a move)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from companion.rules import load
from companion.rules.base import board_diff

SETUPS: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "enceladus": [(2, {}), (3, {"tube": False}), (4, {"mode": "cooperative"}),
                  (2, {"martians_per_player": 2}), (5, {})],
    "mars": [(2, {}), (3, {"peaks": 3, "plant_score": "connected_only"}),
             (5, {"last_flower": "own_reserve", "center_blocks_path": True}), (4, {})],
    "uranus": [(2, {"board": "hexagonal"}), (3, {"board": "trapezoid"}),
               (4, {"board": "rhombus", "triangle_points": "one_side"}), (5, {})],
}
"""Per game, ``(players, options)`` of the games played: every variant, 2 to 5 players."""


@pytest.mark.parametrize("game", sorted(SETUPS))
def test_changes_are_the_board_diff_of_apply(game: str) -> None:
    rules = load(game).RULES
    rng = random.Random(3)
    checked = 0
    for players, options in SETUPS[game]:
        state = rules.new_game(players, rng.randrange(1 << 30), options)
        while rules.outcome(state) is None:
            steps = list(rules.legal_steps(state))
            if rng.random() < 0.3:
                before = rules.board(state)
                for step in rng.sample(steps, min(25, len(steps))):
                    after = rules.board(rules.apply(state, step))
                    assert rules.changes(state, step) == board_diff(before, after), step
                    checked += 1
            state = rules.apply(state, rng.choice(steps))
    assert checked > 300
