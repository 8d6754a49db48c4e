"""The Enceladus opponent: its costliest positions stay within their nodes, and the strong
seat beats the steady one on a seeded sample."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from companion.opponent import BUDGETS, Strength, decide
from companion.opponent.enceladus import END_TESTS
from companion.rules import enceladus as E
from companion.sim.players import play

# Positions of seeded strong-against-steady games whose decision cost most: before an end-of-
# game test counted as more than one node, up to a second here (the player to move has one
# normal move left, which most special actions take away, or none); the last, since then,
# the costliest (each of its end-of-game tests takes some tens of milliseconds).
COSTLY = (
    "43^......./........../......^.../........../.^....^.../.......^../........../.........."
    "/........../.......... j3/a9 10.8.9.8.8.0/9.8.9.7.8.0 0.3.0.3.3 1-221----- 2:turn "
    "mode=competitive,martians_per_player=1,tube=true,colours=blue/red/yellow/green/purple",
    ".^......../........../53....^..1/....^41..1/........../........../........^./.........."
    "/........../.^........ c6/b7 6.9.8.8.7.0/7.7.10.10.8.0 3.3.0.0.3 2-122----- 1:turn "
    "mode=competitive,martians_per_player=1,tube=true,colours=blue/red/yellow/green/purple",
    "........../.......^.2/.........1/........../...^....../.^.32...../^........4/.^.......4"
    "/.........4/.......... e4/f1 8.9.9.9.5.0/10.8.9.7.8.0 0.0.0.0.6 1-1-1----- 2:turn "
    "mode=competitive,martians_per_player=1,tube=true,colours=blue/red/yellow/green/purple",
    "..^4554.../...3..3.../...3541.../...^^134../.....1..../.....154../..^......./.....^43.."
    "/........../.....1521. i2/g2 6.6.6.4.7.0/7.6.8.6.7.0 0.6.0.3.0 --2-1--1-- 1:turn "
    "mode=competitive,martians_per_player=1,tube=true,colours=blue/red/yellow/green/purple",
)


class EndTests(E.EnceladusRules):
    """The rules of Gardens of Enceladus, counting the positions built whose end-of-game
    test ran (the player to move has no normal move)."""

    def __init__(self) -> None:
        self.count = 0

    def apply(self, state: E.State, step: E.Step) -> E.State:
        after = E.apply(state, step)
        if after.phase is E.Phase.OVER or (
                after.phase is E.Phase.TURN
                and not isinstance(next(iter(E.legal_steps(after)), None), E.Move)):
            self.count += 1
        return after


@pytest.mark.parametrize("text", COSTLY)
@pytest.mark.parametrize("strength", [Strength.STEADY, Strength.STRONG])
def test_the_costliest_positions_run_few_end_tests(text: str, strength: Strength) -> None:
    state = E.parse_position(text)
    rules = EndTests()
    budget = BUDGETS["enceladus"][strength]
    made = decide(rules, state, strength, rng=random.Random(1))
    assert made.step in set(E.legal_steps(state))
    assert made.nodes <= budget
    assert rules.count <= END_TESTS


def test_a_player_without_a_move_first_weighs_bringing_a_flower_into_its_line() -> None:
    state = E.parse_position(COSTLY[1])  # player 1 holds 9 red, the most of a colour
    names = {s.name for s in E.legal_steps(state) if isinstance(s, E.Action)}
    assert {"swap_peak_flower", "move_flower"} <= names and "jump" not in names
    made = decide(E.RULES, state, Strength.STEADY, rng=random.Random(1), budget=1)
    assert isinstance(made.step, E.Action)
    assert (made.step.name, made.step.pay) == ("move_flower", "red")
    assert isinstance(next(iter(E.legal_steps(E.apply(state, made.step)))), E.Move)


def test_strong_beats_steady_on_a_seeded_sample() -> None:
    rules = E.RULES
    wins = 0.0
    for k in range(5, 9):  # the strong seat second, then first
        seat = k % 2 + 1
        strengths = [Strength.STRONG if p == seat else Strength.STEADY for p in (1, 2)]
        outcome = rules.outcome(play(rules, strengths, seed=k))
        assert outcome is not None
        wins += 1.0 if outcome.winners == (seat,) else 0.5 if seat in outcome.winners else 0.0
    assert wins >= 3


@pytest.mark.parametrize("strength", [Strength.STEADY, Strength.STRONG])
def test_a_search_lists_the_special_actions_of_the_position_it_decides_in_alone(
        strength: Strength, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing the special actions costs most of a listing: the positions searched are
    asked only for their normal moves (whether there is one, and which is best)."""
    listed: list[E.State] = []

    def counting(work: Callable[..., object]) -> Callable[..., object]:
        def counted(state: E.State, *args: object) -> object:
            listed.append(state)
            return work(state, *args)
        return counted

    # a listing's groups, and those narrowed to a few squares
    monkeypatch.setattr(E, "_listed", counting(E._listed))
    monkeypatch.setattr(E, "_action_groups", counting(E._action_groups))
    for text in COSTLY:
        state = E.parse_position(text)
        listed.clear()
        decide(E.RULES, state, strength, rng=random.Random(1))
        assert set(listed) == {state}


def test_a_search_works_out_the_hand_of_each_reserve_once() -> None:
    """A search weighs the same few reserves again and again: each hand is worked out once."""
    from companion.opponent.enceladus import _reserve_worth

    _reserve_worth.cache_clear()
    state = E.parse_position(COSTLY[3])
    decide(E.RULES, state, Strength.STRONG, rng=random.Random(1))
    info = _reserve_worth.cache_info()
    assert info.hits > 2 * info.misses > 0
