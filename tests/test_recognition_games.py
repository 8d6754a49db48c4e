"""Whole noisy games in virtual time: every step committed exactly once, nothing else
(200 games in the slow run)."""

from __future__ import annotations

import pytest

from companion.referee.referee import RefereeSettings
from companion.rules import load
from companion.sim.harness import GameReport, VirtualTable
from companion.sim.perform import Noise

ENCELADUS = load("enceladus").RULES


def play_enceladus(seed: int, *, presence: bool = False) -> GameReport:
    """One game: 2-5 players, the variants in turn, the tray fitted in every other game (never
    on a presence board, whose tray could not tell colours)."""
    players = 2 + seed % 4
    options: dict[str, object] = {}
    if seed % 5 == 1:
        options["mode"] = "cooperative"
    if seed % 7 == 2:
        options["tube"] = False
    if players == 2 and seed % 3 == 0:
        options["martians_per_player"] = 2
    state = ENCELADUS.new_game(players, seed, options)
    table = VirtualTable(
        ENCELADUS,
        state,
        "enceladus",
        seed=seed,
        noise=Noise(),
        settings=RefereeSettings(tray=seed % 2 == 0 and not presence, presence=presence),
    )
    return table.play()


def check(reports: list[GameReport]) -> None:
    steps = sum(len(r.performed) for r in reports)
    assert all(r.over for r in reports), [r.seed for r in reports if not r.over]
    assert sum(r.false_commits for r in reports) == 0
    assert sum(r.missed for r in reports) == 0
    # Committed == performed step by step, by the state each leads to: two notations may
    # name the same step (f5/f6 and f5/g5 when each leaves the other a soliflower).
    assert sum(len(r.committed) for r in reports) == steps


def test_ten_noisy_enceladus_games() -> None:
    check([play_enceladus(seed) for seed in range(1, 11)])


@pytest.mark.slow
def test_two_hundred_noisy_enceladus_games() -> None:
    check([play_enceladus(seed) for seed in range(1, 201)])


def test_ten_noisy_enceladus_games_on_a_presence_board() -> None:
    reports = [play_enceladus(seed, presence=True) for seed in range(1, 11)]
    check(reports)
    assert sum(r.questions for r in reports) > 0  # colours drawn, paid, swapped are asked


@pytest.mark.slow
def test_two_hundred_noisy_enceladus_games_on_a_presence_board() -> None:
    check([play_enceladus(seed, presence=True) for seed in range(1, 201)])
