"""Gardens of Enceladus over random play: every game ends with an outcome, changes() is exactly
the board diff, candidates() never loses a step, the notations round-trip, and apply() accepts
exactly the legal steps."""

from __future__ import annotations

import contextlib
import random
from dataclasses import replace
from itertools import combinations
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.errors import IllegalMoveError, InvalidStepError
from companion.rules import enceladus as enc
from companion.rules.base import board_diff
from companion.rules.enceladus import Action, Move, Phase

RULE_SOURCES = ("Gardens of Enceladus, ", "docs/RULINGS.md Enceladus #")


def _options(seed: int) -> tuple[int, dict[str, Any]]:
    """Players and options covering every variant across seeds."""
    if seed % 4 == 1:
        return 2, {"martians_per_player": 2, "tube": seed % 8 == 1}
    options: dict[str, Any] = {"mode": "cooperative"} if seed % 5 == 2 else {}
    if seed % 6 == 3:
        options["tube"] = False
    return 2 + seed % 4, options


def _pick(rng: random.Random, steps: list[enc.Step]) -> enc.Step:
    """A random legal step; moves often enough that games reach their end."""
    moves = [s for s in steps if not isinstance(s, Action)]
    return rng.choice(moves if moves and rng.random() < 0.75 else steps)


def _play(seed: int) -> tuple[list[tuple[enc.State, enc.Step]], enc.State]:
    """Every (state, step) of a seeded random game, and its final state."""
    rng = random.Random(seed)
    players, options = _options(seed)
    state = enc.new_game(players, seed, options)
    history: list[tuple[enc.State, enc.Step]] = []
    while enc.outcome(state) is None:
        steps = list(enc.legal_steps(state))
        assert steps, enc.format_position(state)
        step = _pick(rng, steps)
        history.append((state, step))
        state = enc.apply(state, step)
    return history, state


def test_100_seeded_random_games_end_with_an_outcome_and_exact_changes() -> None:
    for seed in range(100):
        history, final = _play(seed)
        result = enc.outcome(final)
        assert result is not None and final.phase is Phase.OVER
        points = [n for _, _, n in result.ranking]
        assert points == sorted(points, reverse=True)
        assert sorted(p for p, _, _ in result.ranking) == list(range(1, final.players + 1))
        assert set(result.winners) == {p for p, _, n in result.ranking if n == points[0]}
        for state, step in history:
            after = enc.apply(state, step)
            assert enc.changes(state, step) == board_diff(enc.board(state), enc.board(after))


def test_a_step_advanced_is_the_step_applied_but_for_the_end_and_tells_states_apart_alike(
) -> None:
    # The referee asks whether steps lead to one state of their advance, never of the end
    # test of each: it must answer as apply does.  Many steps of a position (every payment
    # and draw of a tube action among them) are compared with each other.
    rng = random.Random(7)
    ended = compared = 0
    for seed in range(40):
        for state, _ in _play(seed)[0]:
            steps = list(enc.legal_steps(state))
            chosen = rng.sample(steps, min(len(steps), 6))
            applied = [enc.apply(state, s) for s in chosen]
            advanced = [enc.advance(state, s) for s in chosen]
            for after, raw in zip(applied, advanced, strict=True):
                assert raw.phase is not Phase.OVER
                assert replace(raw, phase=after.phase) == after
                ended += after.phase is Phase.OVER
            for (a, raw_a), (b, raw_b) in combinations(zip(applied, advanced, strict=True), 2):
                assert (raw_a == raw_b) == (a == b)
                compared += a == b
    assert ended > 20 and compared > 20, (ended, compared)


def test_candidates_keep_every_step_for_every_subset_of_its_changed_cells() -> None:
    for seed in range(12):
        for state, step in _play(seed)[0]:
            touched = sorted(enc.changes(state, step))
            for k in range(len(touched) + 1):
                for subset in combinations(touched, k):
                    assert step in enc.candidates(state, frozenset(subset)), (step, subset)


def test_candidates_are_legal_and_cover_the_touched_cells_exactly_when_filtered() -> None:
    for seed in range(3):
        for state, step in _play(seed)[0][::5]:
            touched = frozenset(enc.changes(state, step))
            legal = set(enc.legal_steps(state))
            found = list(enc.candidates(state, touched))
            assert set(found) <= legal
            exact = {s for s in legal if touched <= set(enc.changes(state, s))}
            assert exact <= set(found)


def test_steps_and_positions_round_trip_through_their_notation() -> None:
    for seed in range(20):
        history, final = _play(seed)
        for state, step in history:
            assert enc.parse_step(state, enc.notation(step)) == step
            assert enc.parse_position(enc.format_position(state)) == state
        assert enc.parse_position(enc.format_position(final)) == final


def _random_step(rng: random.Random, state: enc.State) -> enc.Step:
    squares = enc.LAYOUT[:100]
    colours = state.options.colours
    martians = [enc.LAYOUT[c] for c in state.martians[state.to_move - 1]]
    martian = rng.choice(martians) if state.options.martians_per_player == 2 else None
    if rng.random() < 0.3:
        neighbours = [rng.choice(squares), None]
        return Move(rng.choice(squares), rng.choice(neighbours), martian)
    name = rng.choice(enc.ACTIONS)
    single = name == "pick" or name in enc.MARTIAN_ACTIONS
    count = 0 if name in ("tube", "wildflower") else 1 if single else 2
    drawn = tuple(sorted(rng.choices(colours, k=3), key=colours.index)) if name == "tube" else ()
    return Action(
        name,
        rng.choice(colours),
        tuple(rng.sample(squares, count)),
        drawn,
        martian if name in enc.MARTIAN_ACTIONS else None,
    )


def test_apply_accepts_exactly_the_legal_steps_and_explains_every_refusal() -> None:
    rng = random.Random(3)
    for seed in range(8):
        for state, _ in _play(seed)[0][::3]:
            if state.phase is not Phase.TURN:
                continue
            legal = set(enc.legal_steps(state))
            for _ in range(60):
                step = _random_step(rng, state)
                if isinstance(step, Action) and step.name in ("swap_flowers", "swap_peak_flower"):
                    swapped = Action(step.name, step.pay, step.cells[::-1], (), step.martian)
                    canonical = {step, swapped} & legal
                else:
                    canonical = {step} & legal
                try:
                    enc.apply(state, step)
                except IllegalMoveError as error:
                    assert not canonical, (step, error)
                    assert error.rule.startswith(RULE_SOURCES)
                    assert error.reason and error.step == enc.notation(step)
                else:
                    assert canonical, step


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_any_text_is_a_step_or_an_invalid_step_error(text: str) -> None:
    state = enc.new_game(2, 1, {})
    try:
        step = enc.parse_step(state, text)
    except InvalidStepError as error:
        assert str(error).startswith("cannot read the step")
    else:
        assert enc.parse_step(state, enc.notation(step)) == step


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="12345.^/-,:0123456789abcdefghijLRBturnoverplacement= ", max_size=120)
)
def test_any_text_is_a_position_or_an_invalid_step_error(text: str) -> None:
    with contextlib.suppress(InvalidStepError):
        enc.parse_position(text)
