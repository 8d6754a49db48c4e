"""Recognition's questions to the rules cores: the narrowed candidates never lose a step the
referee needs, and weighing a diff never walks every step it allows.

``candidates(state, touched, within, distinct)`` (companion/rules/base.py) may leave a step out
only when one with the same changes (and, without ``distinct``, the same state after) is
yielded; the referee's :class:`StepIndex` asks it for the steps a diff completes within the
diff's cells, and for the steps that explain a diff one per set of changes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from companion.referee.recognition import StepIndex
from companion.rules import load
from companion.rules.base import GameRules
from companion.sim.players import choose_step

GAMES = ("enceladus", "mars", "uranus")


def positions(rules: GameRules[Any, Any], seed: int, every: int) -> Iterator[Any]:
    """Every ``every``-th position of a seeded game of random legal steps."""
    rng = random.Random(seed)
    state = rules.new_game(2 + seed % 3, seed, {})
    for number in range(400):
        if rules.outcome(state) is not None:
            return
        if number % every == 0:
            yield state
        state = rules.apply(state, choose_step(rules, state, rng))


def sample(rules: GameRules[Any, Any], state: Any, rng: random.Random) -> list[Any]:
    steps = [s for s in rules.legal_steps(state) if rules.changes(state, s)]
    return rng.sample(steps, min(40, len(steps)))


def stacked(before: str, after: str) -> bool:
    """A gardener stepping onto or off the flower under it: ``"red"`` <-> ``"M1+red"``."""
    return bool(after) and before.endswith(f"+{after}") or bool(before) and after.endswith(
        f"+{before}")


@pytest.mark.parametrize("game", GAMES)
def test_candidates_within_a_steps_cells_keep_one_of_its_changes_and_state(game: str) -> None:
    rules = load(game).RULES
    rng = random.Random(1)
    for seed in (1, 2):
        for state in positions(rules, seed, 9):
            board = rules.board(state)
            for step in sample(rules, state, rng):
                changes = rules.changes(state, step)
                # as a presence board asks: a gardener onto or off its flower is not a bound
                within = frozenset(c for c, p in changes.items() if not stacked(board[c], p))
                found = rules.candidates(state, frozenset(changes), within)
                after = rules.apply(state, step)
                assert any(
                    rules.changes(state, s) == changes and rules.apply(state, s) == after
                    for s in found
                ), rules.format_step(state, step)


def change_sets(rules: GameRules[Any, Any], state: Any, touched: frozenset[str],
                within: frozenset[str], *, distinct: bool = False) -> set[frozenset[Any]]:
    """The sets of changes of the steps ``candidates`` yields for these arguments."""
    return {frozenset(rules.changes(state, s).items())
            for s in rules.candidates(state, touched, within, distinct)}


@pytest.mark.parametrize("game", GAMES)
def test_distinct_candidates_keep_one_step_of_every_set_of_changes(game: str) -> None:
    rules = load(game).RULES
    rng = random.Random(2)
    for seed in (3, 4):
        for state in positions(rules, seed, 9):
            for step in sample(rules, state, rng):
                changes = rules.changes(state, step)
                for touched in (frozenset(changes), frozenset(list(changes)[:1])):
                    found = rules.candidates(state, touched, distinct=True)
                    assert any(rules.changes(state, s) == changes for s in found)
                # every step of a call has the changes of one the same call yields distinct
                within = frozenset(changes)
                assert change_sets(rules, state, within, within) <= change_sets(
                    rules, state, within, within, distinct=True)


def test_a_disc_on_swap_flowers_asks_for_a_handful_of_steps_not_thousands() -> None:
    # A position of a real game with 6,000 ways to swap flowers: the disc alone is explained
    # by every one, completed by the swaps of two flowers of one colour, and extended by the
    # others; weighing it draws a few steps only.
    rules = load("enceladus").RULES
    state = next(
        s for s in positions(rules, 5, 1)
        if sum(getattr(t, "name", "") == "swap_flowers" for t in rules.legal_steps(s)) > 3000
    )
    drawn: list[Any] = []

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(rules, name)

        def candidates(self, *args: Any) -> Iterator[Any]:
            for step in rules.candidates(*args):
                drawn.append(step)
                yield step

    for presence in (False, True):
        drawn.clear()
        expected = rules.board(state)
        index = StepIndex(Counting(), state, expected, presence)  # type: ignore[arg-type]
        slot = "A7"
        diff = {slot: "occupied" if presence else f"D{rules.to_move(state)}"}
        assert index.explained(diff)
        completing = index.completing(diff, {slot})
        assert completing and all(index.completes(s, diff, {slot}) for s in completing)
        assert index.extension(diff, {slot}, completing[0]) is not None
        assert len(drawn) < 50, len(drawn)
