"""Scenario files (companion.sim.scenario): the script syntax, errors named by line, the
format round trip, and every scenario of tests/scenarios played with its steps asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.board import protocol
from companion.errors import InvalidStepError
from companion.sim.perform import Press, Put, Signal
from companion.sim.scenario import (
    Expect,
    format_scenario,
    parse_scenario,
    random_scenario,
    read_scenario,
    run_scenario,
)

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.scenario"))


def test_actions_read_as_the_docstring_says() -> None:
    scenario = parse_scenario("""
        game mars   # a comment
        players 3
        seed 7
        pace 100 ms
        place 0,0 1r
        wait 300 ms
        lift 0,0
        place 1,-1 M2+blue
        press OK
        dice 3 5
        expect roll:3,5
    """)
    assert (scenario.game, scenario.players, scenario.seed, scenario.layout) == (
        "mars", 3, 7, "mars")
    assert scenario.actions == (
        Put(0.1, "0,0", "M1+red"), Put(0.4, "0,0", ""), Put(0.1, "1,-1", "M2+blue"),
        Press(0.1, "ok"), Signal(0.1, protocol.Dice(0, (3, 5))), Expect("roll:3,5"))
    assert scenario.expected == ["roll:3,5"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [("place e5 M1\n", "line 1: the header must name the game first"),
     ("game enceladus\nplace k5 M1\n", "line 2: 'k5' is not a cell of this board"),
     ("game enceladus\nplace e5 M9\n", "line 2: 'M9' is not a piece"),
     ("game enceladus\nwait soon\n", "line 2: 'soon' is not a duration"),
     ("game enceladus\njump e5\n", "line 2: 'jump e5' is not an action"),
     ("game enceladus\nlift e5\nseed 3\n", "line 3: seed belongs in the header"),
     ("game chess\n", "line 1: 'game chess' is not a header line"),
     ("seed 3\n", "the scenario names no game")],
)
def test_a_broken_scenario_is_named_by_line(text: str, problem: str) -> None:
    with pytest.raises(InvalidStepError, match=problem):
        parse_scenario(text, "s.scenario")


@pytest.mark.parametrize("game", ["enceladus", "mars"])
def test_random_scenario_formats_parses_and_commits_every_step(game: str) -> None:
    scenario = random_scenario(game, seed=11, steps=8)
    text = format_scenario(scenario)
    again = parse_scenario(text)
    assert format_scenario(again) == text
    assert run_scenario(again).committed == scenario.expected


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_corpus_scenario_commits_exactly_its_expected_steps(path: Path) -> None:
    scenario = read_scenario(path)
    run = run_scenario(scenario)
    assert run.committed == scenario.expected
    assert run.menus == []


def test_the_wrong_players_martian_put_right_commits_only_the_legal_step() -> None:
    # From the 4-step corpus game: player 1 enters on R4, after player 2's Martian by mistake.
    scenario = parse_scenario("""
        game enceladus
        seed 8
        place R4 M2
        wait 300 ms
        lift R4
        place R4 M1
        wait 800 ms
    """)
    assert run_scenario(scenario).committed == ["@R4"]
