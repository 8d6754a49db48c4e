"""Gardens of Mars played at random to the end: the seam's promises hold in every position.

100 seeded games, 2 to 5 players, every combination of the docs/RULINGS.md Mars #10
options; dice come from the test's own ``random.Random`` (chance from outside the rules).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.errors import InvalidStepError
from companion.rules import mars
from companion.rules.base import board_diff
from companion.rules.mars import RULES, Phase, Roll, State

SWITCHES = list(
    itertools.product(
        ("group_size", "connected_only"), (False, True), ("board", "own_reserve"),
        (True, False), (True, False), (0, 5),
    )
)
"""All 64 combinations of the options; peaks sampled as off and the usual 5."""

MAX_STEPS = 5000
"""Far above any real game (about 60 plantings plus penalties); a loop would hit it."""


def game_options(game: int) -> dict[str, Any]:
    values = SWITCHES[game % len(SWITCHES)]
    names = ("plant_score", "center_blocks_path", "last_flower", "last_flower_extra_turn",
             "track_extra_turns", "peaks")
    options = dict(zip(names, values, strict=True))
    if game >= len(SWITCHES):
        options["peaks"] = game % (mars.MAX_PEAKS + 1)
    return options


def check_seam(state: State) -> None:
    """Every legal step's changes equal the board diff and it is among its candidates."""
    before = RULES.board(state)
    by_touched: dict[frozenset[str], set[mars.Step]] = {}
    for step in RULES.legal_steps(state):
        diff = board_diff(before, RULES.board(RULES.apply(state, step)))
        assert RULES.changes(state, step) == diff, step
        by_touched.setdefault(frozenset(diff), set()).add(step)
    for touched, explained in by_touched.items():
        assert explained <= set(RULES.candidates(state, touched)), touched


def play(game: int, check_every: int = 0) -> tuple[State, int]:
    """Play game ``game`` with random legal steps; check the seam every ``check_every``."""
    rng = random.Random(game)
    state = RULES.new_game(2 + game % 4, seed=game, options=game_options(game))
    for count in range(MAX_STEPS):
        if RULES.outcome(state) is not None:
            return state, count
        if check_every and count % check_every == 0:
            check_seam(state)
        if state.phase is Phase.ROLL:
            values = tuple(rng.randint(1, 6) for _ in range(mars.dice_to_roll(state)))
            step: mars.Step = Roll(values)
        else:
            step = rng.choice(list(RULES.legal_steps(state)))
        after = RULES.apply(state, step)
        assert RULES.changes(state, step) == board_diff(RULES.board(state), RULES.board(after))
        assert RULES.parse_step(state, RULES.format_step(state, step)) == step
        assert RULES.parse_position(RULES.format_position(after)) == after
        assert min(after.scores) >= 0
        state = after
    raise AssertionError(f"game {game} did not end in {MAX_STEPS} steps")


@pytest.mark.parametrize("game", range(100))
def test_random_game_reaches_an_outcome(game: int) -> None:
    state, steps = play(game, check_every=9)
    outcome = RULES.outcome(state)
    assert outcome is not None and steps > 0
    assert list(RULES.legal_steps(state)) == []
    best = max(zip(state.scores, state.planted, strict=True))
    keys = list(zip(state.scores, state.planted, strict=True))
    assert outcome.winners == tuple(p for p, key in enumerate(keys, start=1) if key == best)
    assert [entry[0] for entry in outcome.ranking][: len(outcome.winners)] == list(outcome.winners)
    # Mars #8a: the game ends on an empty reserve or at the stalemate, nothing else.
    if all(any(r) for r in state.reserves):
        assert not state.pool and mars.dice_to_roll(state) == 0


def test_every_option_combination_is_played() -> None:
    assert {tuple(game_options(g).values()) for g in range(100)} >= set(SWITCHES)


# --- notation fuzz -------------------------------------------------------------------------

hexes = st.tuples(st.integers(-9, 9), st.integers(-9, 9))
dice = st.integers(1, 6)
steps = st.one_of(
    st.builds(mars.Place, hexes),
    st.builds(mars.Roll, st.lists(dice, max_size=6).map(tuple)),
    st.builds(mars.Move, dice, hexes, st.none() | st.sampled_from(mars.COLOURS)),
    st.builds(mars.Discard, dice),
)


@given(steps)
def test_step_notation_round_trips(step: mars.Step) -> None:
    assert mars.parse_step(mars.format_step(step)) == step


@given(st.text(max_size=20))
def test_step_parser_raises_only_invalid_step_errors(text: str) -> None:
    try:
        mars.parse_step(text)
    except InvalidStepError as error:
        assert str(error)


SAMPLE = (
    "mars players=4 to_move=3 extra=no pool=2,3,3,4 scores=22,23,21,13 planted=7,7,6,5 "
    "reserves=1.0.1.3.2.1/0.3.0.1.2.2/2.2.2.2.1.0/1.1.2.0.2.4 cells=2,-5=blue;0,-4=M4+red;"
    "2,-4=white;4,-4=yellow;0,-2=white;2,-2=green;-1,-1=blue;1,-1=yellow;3,-1=gray;-3,0=white;"
    "2,0=yellow;-2,1=gray;0,1=M1+red;4,1=white;-4,2=green;0,2=gray;-5,3=M3+gray;-4,3=M2+yellow;"
    "-3,3=white;-2,3=green;0,3=blue;2,3=blue;-4,4=blue;-2,4=blue;-4,5=red options=-"
)
"""A mid-game position (4 players, 25 flowers, 4 dice in the pool)."""


def test_sample_position_is_legal_and_round_trips() -> None:
    state = RULES.parse_position(SAMPLE)
    assert state.phase is Phase.MOVE and RULES.format_position(state) == SAMPLE
    check_seam(state)


@given(st.integers(0, len(SAMPLE)), st.integers(0, 12), st.text(max_size=12))
def test_position_parser_raises_only_invalid_step_errors(at: int, cut: int, text: str) -> None:
    try:
        RULES.parse_position(SAMPLE[:at] + text + SAMPLE[at + cut :])
    except InvalidStepError as error:
        assert str(error)
