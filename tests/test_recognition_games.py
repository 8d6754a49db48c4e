"""Whole noisy games in virtual time, played by people (companion.sim.perform.PEOPLE: pieces
held in the air, set on a wrong cell, steps begun and put back, the next player reaching in):
every step committed exactly once, nothing else, and no alarm on the matrix (200 games in the
slow run).  Players who also stop to think for seconds in the middle of a step
(``THINKING``) must get the same."""

from __future__ import annotations

import pytest

from companion.referee.referee import RefereeSettings
from companion.rules import load
from companion.sim.harness import GameReport, VirtualTable
from companion.sim.perform import PEOPLE, THINKING, Noise

ENCELADUS = load("enceladus").RULES


def play_enceladus(seed: int, *, presence: bool = False, noise: Noise = PEOPLE) -> GameReport:
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
        noise=noise,
        settings=RefereeSettings(tray=seed % 2 == 0 and not presence, presence=presence),
    )
    return table.play()


def check(reports: list[GameReport]) -> dict[str, int]:
    """Totals over ``reports`` (printed with ``-s``), after checking that every game ended
    with no false alarm, no missed step and no false commit."""
    steps = sum(len(r.performed) for r in reports)
    faults = {r.seed: (r.false_alarms, r.missed, r.false_commits) for r in reports}
    assert {seed: f for seed, f in faults.items() if f != (0, 0, 0)} == {}, \
        "seed: (false alarms, missed, false commits)"
    assert all(r.over for r in reports), [r.seed for r in reports if not r.over]
    # Committed == performed step by step, by the state each leads to: two notations may
    # name the same step (f5/f6 and f5/g5 when each leaves the other a soliflower).
    assert sum(len(r.committed) for r in reports) == steps
    totals = {"games": len(reports), "steps": steps,
              "questions": sum(r.questions for r in reports),
              "corrections": sum(r.corrections for r in reports),
              "reached in": sum(r.reached_in for r in reports)}
    print(f"\n{totals}, {totals['questions'] / len(reports):.1f} questions a game")
    return totals


def test_ten_noisy_enceladus_games() -> None:
    totals = check([play_enceladus(seed) for seed in range(1, 11)])
    assert totals["reached in"] > 0  # the next player's hand came in while a step settled


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


def test_ten_enceladus_games_of_players_who_stop_to_think_mid_step() -> None:
    # A flower picked, then a long think before the next: the board shows a shorter step
    # finished, which waiting must not commit.
    check([play_enceladus(seed, noise=THINKING) for seed in range(1, 11)])


def test_ten_enceladus_games_on_a_presence_board_of_players_who_stop_to_think() -> None:
    check([play_enceladus(seed, noise=THINKING, presence=True) for seed in range(1, 11)])


@pytest.mark.slow
def test_two_hundred_enceladus_games_of_players_who_stop_to_think_mid_step() -> None:
    check([play_enceladus(seed, noise=THINKING) for seed in range(1, 201)])


@pytest.mark.slow
def test_two_hundred_enceladus_games_on_a_presence_board_of_players_who_stop_to_think(
) -> None:
    check([play_enceladus(seed, noise=THINKING, presence=True) for seed in range(1, 201)])
