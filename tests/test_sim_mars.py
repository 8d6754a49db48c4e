"""Whole Gardens of Mars games refereed from a simulated board (companion/sim/mars.py).

Across noisy games with 2-5 players (people's hands: companion.sim.perform.PEOPLE, and
players who stop to think mid-step) every step performed is committed exactly once, nothing
else is committed, and the matrix raises no alarm.  Virtual time (the harness) for many
games; one game through the pseudo-terminal, pyserial, gpiozero's mock pins and the service
loop in real time.  The slow test runs 200 games: ``pytest -m slow tests/test_sim_mars.py``.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

import companion.sim.mars
from companion.board import protocol
from companion.display import make_device
from companion.referee.effects import Committed
from companion.referee.mars import MarsTable
from companion.referee.referee import RefereeSettings
from companion.rules.base import GameRules
from companion.rules.mars import RULES, Discard, Move, Phase, Roll, State, dice_to_roll, position
from companion.sim.demo import MATRIX, demo_config
from companion.sim.harness import GameReport, VirtualTable
from companion.sim.mars import chance_ops, dice_ops
from companion.sim.perform import PEOPLE, THINKING, Noise, Press, Signal
from companion.sim.players import choose_step
from companion.sim.table import seat


def play(seed: int, dice: str = "tray", options: dict[str, Any] | None = None,
         noise: Noise = PEOPLE, presence: bool = False) -> GameReport:
    """One noisy game of 2 to 5 players (by seed) with the dice from ``dice``; with
    ``"virtual"`` the players roll what the companion's dice (seeded alike) will show;
    ``presence``: the board senses only occupancy."""
    players = 2 + seed % 4
    state = RULES.new_game(players, seed, options or {})
    twin = random.Random(seed)

    def choose(rules: GameRules[Any, Any], state: State, rng: random.Random) -> Any:
        count = dice_to_roll(state)
        if dice == "virtual" and state.phase is Phase.ROLL and count:
            return Roll(tuple(twin.choice((1, 2, 3, 4, 5, 6)) for _ in range(count)))
        return choose_step(rules, state, rng)

    table = VirtualTable(RULES, state, "mars", seed=seed, choose=choose, noise=noise,
                         settings=RefereeSettings(presence=presence))
    table.referee.extensions.append(MarsTable(dice, rng=random.Random(seed)))
    return table.play()


def assert_clean(reports: list[GameReport]) -> None:
    for report in reports:
        assert report.over, f"seed {report.seed} did not finish"
        faults = (report.false_alarms, report.missed, report.false_commits)
        assert faults == (0, 0, 0), f"seed {report.seed}: (false alarms, missed, false commits)"
        assert report.committed == report.performed
    questions = sum(r.questions for r in reports)
    print(f"\n{len(reports)} games, {questions} questions "
          f"({questions / len(reports):.1f} a game), "
          f"{sum(r.corrections for r in reports)} corrections, "
          f"{sum(r.reached_in for r in reports)} steps reached in early")


def test_ten_noisy_games_with_the_dice_tray_commit_every_step_once() -> None:
    assert_clean([play(seed) for seed in range(1, 11)])


def test_ten_games_of_players_who_stop_to_think_mid_step() -> None:
    assert_clean([play(seed, noise=THINKING) for seed in range(1, 11)])


def test_ten_noisy_games_on_a_presence_board() -> None:
    assert_clean([play(seed, presence=True) for seed in range(1, 11)])


def test_ten_games_on_a_presence_board_of_players_who_stop_to_think() -> None:
    assert_clean([play(seed, noise=THINKING, presence=True) for seed in range(1, 11)])


def test_noisy_games_with_dice_entered_by_buttons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(companion.sim.mars, "chance_ops",
                        functools.partial(dice_ops, source="buttons"))
    assert_clean([play(seed, "buttons") for seed in range(1, 5)])


def test_noisy_games_with_the_companions_virtual_dice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(companion.sim.mars, "chance_ops",
                        functools.partial(dice_ops, source="virtual"))
    assert_clean([play(seed, "virtual") for seed in range(1, 5)])


def test_noisy_games_with_peaks_and_the_rulebook_options() -> None:
    # docs/RULINGS.md Mars #9 and #10: peaks block paths; the other readings change scores.
    options = {"peaks": 5, "plant_score": "connected_only", "center_blocks_path": True,
               "last_flower": "own_reserve"}
    assert_clean([play(seed, options=options) for seed in range(1, 5)])


@pytest.mark.slow
def test_two_hundred_noisy_games_commit_every_step_once() -> None:
    reports = [play(seed) for seed in range(1, 201)]
    assert_clean(reports)
    assert {2 + seed % 4 for seed in range(1, 201)} == {2, 3, 4, 5}


@pytest.mark.slow
def test_two_hundred_games_of_players_who_stop_to_think_mid_step() -> None:
    assert_clean([play(seed, noise=THINKING) for seed in range(1, 201)])


@pytest.mark.slow
def test_two_hundred_noisy_games_on_a_presence_board() -> None:
    assert_clean([play(seed, presence=True) for seed in range(1, 201)])


@pytest.mark.slow
def test_two_hundred_games_on_a_presence_board_of_players_who_stop_to_think() -> None:
    assert_clean([play(seed, noise=THINKING, presence=True) for seed in range(1, 201)])


# ---- the players' hands for what no cell shows ------------------------------------------


ROLLING = position(2, {"1,-1": "M1", "-2,3": "M2"}, reserves={1: {"red": 2}, 2: {"red": 2}})
MOVING = position(2, {"1,-1": "M1", "-2,3": "M2"}, pool=[3, 5, 5],
                  reserves={1: {"red": 2}, 2: {"red": 2}})


def test_a_roll_lands_in_the_tray_as_one_reading_of_every_die() -> None:
    (op,) = chance_ops(ROLLING, Roll((6, 1, 1, 2, 4, 4)), random.Random(3))
    assert isinstance(op, Signal) and isinstance(op.message, protocol.Dice)
    assert Counter(op.message.values) == Counter((6, 1, 1, 2, 4, 4))


def test_a_roll_of_no_dice_is_ok() -> None:
    assert [op.name for op in chance_ops(ROLLING, Roll(()), random.Random(3))
            if isinstance(op, Press)] == ["ok"]


def test_a_used_die_goes_back_into_the_case() -> None:
    for step in (Move(5, (1, 4), "red"), Discard(5)):
        (op,) = chance_ops(MOVING, step, random.Random(3))
        assert isinstance(op, Signal) and op.message == protocol.Dice(seq=0, values=(3, 5))


def test_dice_entered_with_buttons_select_up_to_each_value_then_ok() -> None:
    ops = dice_ops(ROLLING, Roll((3, 1)), random.Random(3), source="buttons")  # kept sorted
    assert [op.name for op in ops if isinstance(op, Press)] == [
        "ok", "select", "select", "ok"]


def test_virtual_dice_press_roll_or_ok() -> None:
    step = Roll((1, 2, 3, 4, 5, 6))
    for roll_button, name in ((True, "roll"), (False, "ok")):
        ops = dice_ops(ROLLING, step, random.Random(3), source="virtual",
                       roll_button=roll_button)
        assert [op.name for op in ops if isinstance(op, Press)] == [name]


# ---- real time: pseudo-terminal, pyserial, mock pins, the service loop --------------------


def test_a_game_starts_in_real_time_through_the_pty(tmp_path: Path) -> None:
    config = demo_config("mars", 3, 5, "hexagonal", tmp_path)
    commits: list[Committed] = []
    with ExitStack() as stack:
        seated = seat(config, stack, device=make_device({"display": "dummy", **MATRIX}),
                      speed=8.0)
        service, players = seated.service, seated.players

        def enough(commit: Committed) -> None:
            commits.append(commit)
            if len(commits) == 12:
                service.stop("enough steps")

        service.commit_listeners.append(enough)
        players.start()
        service.run()
    assert players.error is None
    # a gardener set on a wrong spot, then moved on by hand, is committed there and corrected
    steps = list({c.number: c.step for c in commits}.values())
    assert steps[:3] == [s for s in steps if s.startswith("@")]  # three gardeners placed first
    assert any(s.startswith("roll:") for s in steps) and len(commits) == 12
    assert players.steps >= 11
