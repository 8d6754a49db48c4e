"""Whole seeded games on every board, 2-5 players: every step legal, ``changes()`` equal to
the board diff, ``candidates()`` a superset, notation round-trips, and every game ends
(docs/RULINGS.md Uranus #6: each turn plants, scores or lengthens the no-planting run).
Open hands (the dealt cards known, draws named) and secret hands (as at a real table: cards
learned when shown, the hands shown after the end) both."""

from __future__ import annotations

import random
from itertools import takewhile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.base import board_diff
from companion.rules.uranus import (
    BOARDS,
    RULES,
    Score,
    State,
    Step,
    deal_missions,
    final_scores,
    table_setup,
    validate,
)


def play(
    players: int, board: str, seed: int, steps: int | None = None
) -> tuple[list[State], list[Step]]:
    """A game of random legal steps with open hands (the states and the steps between them);
    cards are drawn from the top of the dealt decks."""
    rng = random.Random(seed)
    deal = deal_missions(players, board, seed)
    state = table_setup(RULES.new_game(players, seed, {"board": board}), hands=deal.hands)
    piles = [list(deck) for deck in deal.decks]
    states, played = [state], []
    while RULES.outcome(state) is None and (steps is None or len(states) <= steps):
        # legal_steps yields the board steps first, then the (many) scores
        board_steps = list(takewhile(lambda s: not isinstance(s, Score), RULES.legal_steps(state)))
        step: Step
        if state.phase == "turn" and (rng.random() < 0.15 or not board_steps):
            deck = rng.choice([i for i, pile in enumerate(piles) if pile])
            mission = rng.choice(state.hands[state.to_move - 1])
            step = Score(mission, deck + 1, piles[deck].pop(0))
            assert Score(mission, deck + 1) in RULES.legal_steps(state)  # the draw unseen
        else:
            step = rng.choice(board_steps)
        state = RULES.apply(state, step)
        states.append(state)
        played.append(step)
    return states, played


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_hundred_games_per_board(board: str) -> None:
    endings = set()
    for seed in range(100):
        players = 2 + seed % 4
        states, steps = play(players, board, seed)
        for before, step, after in zip(states[:-1], steps, states[1:], strict=True):
            validate(after)
            diff = board_diff(RULES.board(before), RULES.board(after))
            assert RULES.changes(before, step) == diff
            seen_as = Score(step.mission, step.draw) if isinstance(step, Score) else step
            assert seen_as in RULES.candidates(before, frozenset(diff))
            assert RULES.parse_step(before, RULES.format_step(before, step)) == step
        final = states[-1]
        assert RULES.parse_position(RULES.format_position(final)) == final
        outcome = RULES.outcome(final)
        assert outcome is not None and len(outcome.ranking) == players
        if final.ending != "hexagon":
            best = max(final_scores(final))
            assert [final_scores(final)[p - 1] for p in outcome.winners] == [best] * len(
                outcome.winners
            )
        endings.add(final.ending)
    assert endings >= {"no_flowers", "last_card"}


@settings(max_examples=60, deadline=None)
@given(
    players=st.integers(2, 5),
    board=st.sampled_from(sorted(BOARDS)),
    seed=st.integers(0, 10**6),
    steps=st.integers(0, 60),
)
def test_positions_round_trip_through_notation(
    players: int, board: str, seed: int, steps: int
) -> None:
    state = play(players, board, seed, steps)[0][-1]
    assert RULES.parse_position(RULES.format_position(state)) == state
    for step in list(RULES.legal_steps(state))[:40]:
        assert RULES.parse_step(state, RULES.format_step(state, step)) == step


def play_secret(players: int, board: str, seed: int) -> tuple[list[State], list[Step]]:
    """A game of random legal steps with secret hands, up to the last card shown."""
    rng = random.Random(seed)
    state = RULES.new_game(players, seed, {"board": board})
    states, played = [state], []
    while RULES.outcome(state) is None:
        step = rng.choice(list(RULES.legal_steps(state)))
        state = RULES.apply(state, step)
        states.append(state)
        played.append(step)
    return states, played


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_secret_hands_games_end_with_every_card_shown(board: str) -> None:
    for seed in range(20):
        players = 2 + seed % 4
        states, steps = play_secret(players, board, seed)
        for before, step, after in zip(states[:-1], steps, states[1:], strict=True):
            validate(after)
            assert RULES.parse_step(before, RULES.format_step(before, step)) == step
            assert RULES.parse_position(RULES.format_position(after)) == after
            held = sum(map(len, after.hands)) + sum(after.unknown)
            assert held == 5 * players  # a card shown is replaced until the end
        final = states[-1]
        assert final.phase == "over" and not any(final.unknown)
        assert len(final.discarded) + sum(map(len, final.hands)) + sum(final.decks) == 36
