"""Gardens of Uranus rules core: setup, moves, planting, scoring, the end and notation.

Positions are written as in ``docs/CASES.md`` and read by the case adapter.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion.errors import ConfigError, IllegalMoveError, InvalidPositionError, InvalidStepError
from companion.journal import Journal
from companion.journal import read as read_journal
from companion.rules.base import GameRules, board_diff
from companion.rules.missions import ALL_MISSIONS
from companion.rules.uranus import (
    BOARDS,
    CASES,
    ENDINGS,
    FLOWERS_EACH,
    RULES,
    Claim,
    Move,
    Place,
    Reveal,
    Score,
    State,
    Step,
    card_refusal,
    deal_missions,
    destinations,
    final_scores,
    may_hold,
    mission_value,
    split_evenly,
    table_setup,
    unused_flower_penalty,
    validate,
)

SEATED = {"-3,3": "M1", "0,-3": "M2"}


def position(
    cells: dict[str, str],
    *,
    players: int = 2,
    board: str = "hexagonal",
    options: dict[str, str] | None = None,
    **fields: Any,
) -> State:
    """A case-format position; unlisted fields get two-player defaults."""
    numbers = [str(p) for p in range(1, players + 1)]
    pos = {
        "players": players,
        "to_move": 1,
        "cells": cells,
        "board": board,
        "reserves": {p: {"red": 3, "blue": 3} for p in numbers},
        "scores": dict.fromkeys(numbers, 0),
        "hands": {p: [] for p in numbers},
        "decks": [5] * BOARDS[board].decks,
        "no_plant_run": 0,
        **fields,
    }
    return CASES.position({"options": options or {}, "position": pos})


def test_rules_implement_the_seam() -> None:
    rules: GameRules[State, Step] = RULES
    assert rules.name == "uranus"


# -- setup (the text, Setup; docs/RULINGS.md Uranus #1-#3) ---------------------------------


@pytest.mark.parametrize(
    ("board", "spots", "edge", "trees", "decks"),
    [("hexagonal", 61, 24, 1, 4), ("trapezoid", 63, 28, 2, 2), ("rhombus", 64, 28, 3, 3)],
)
def test_boards(board: str, spots: int, edge: int, trees: int, decks: int) -> None:
    shape = BOARDS[board]
    assert (len(shape.grid), len(shape.grid.edge), shape.trees, shape.decks) == (
        spots,
        edge,
        trees,
        decks,
    )
    state = RULES.new_game(2, 7, {"board": board})
    assert len(RULES.layout(state)) == spots
    assert len(state.trees) == trees and not state.trees & shape.grid.edge
    assert Counter(RULES.board(state).values())["tree"] == trees


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_new_game_deals_every_flower_and_five_secret_cards_each(players: int) -> None:
    state = RULES.new_game(players, 11, {})
    assert all(sum(reserve) == FLOWERS_EACH[players] for reserve in state.reserves)
    assert [sum(column) for column in zip(*state.reserves, strict=True)] == [12] * 5
    assert state.hands == ((),) * players and state.unknown == (5,) * players
    assert sum(state.decks) == 36 - 5 * players
    assert sum(state.decks) == 36 - 5 * players
    assert max(state.decks) - min(state.decks) <= 1
    assert (state.phase, state.to_move) == ("placement", 1)


def test_new_game_is_reproducible_from_its_seed() -> None:
    assert RULES.new_game(3, 5, {"board": "rhombus"}) == RULES.new_game(3, 5, {"board": "rhombus"})
    assert RULES.new_game(3, 5, {}) != RULES.new_game(3, 6, {})


def test_deal_missions_splits_the_rest_into_the_decks() -> None:
    deal = deal_missions(2, "hexagonal", 3)
    assert [len(d) for d in deal.decks] == [7, 7, 6, 6]
    every = [card for part in (*deal.hands, *deal.decks) for card in part]
    assert sorted(every) == sorted(ALL_MISSIONS)
    assert split_evenly(11, 4) == (3, 3, 3, 2)


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError) as caught:
        RULES.new_game(2, 1, {"board": "square", "colours": 6})
    assert caught.value.problems == [
        "'colours' is not a Gardens of Uranus option; the options are board, triangle_points",
        "option board: 'square' is not one of hexagonal, trapezoid, rhombus",
    ]


@pytest.mark.parametrize("players", [1, 6])
def test_two_to_five_players(players: int) -> None:
    with pytest.raises(InvalidPositionError, match="2 to 5 players"):
        RULES.new_game(players, 1, {})


def test_table_setup_takes_what_the_table_did() -> None:
    fresh = RULES.new_game(2, 1, {"board": "trapezoid"})
    hands = [ALL_MISSIONS[:5], ALL_MISSIONS[5:10]]
    reserves = [{"blue": 12, "red": 12, "yellow": 6}, {"yellow": 6, "green": 12, "purple": 12}]
    state = table_setup(fresh, trees=[(2, -2), (4, -4)], reserves=reserves, hands=hands)
    assert state.trees == {(2, -2), (4, -4)}
    assert state.reserves == ((12, 12, 6, 0, 0), (0, 0, 6, 12, 12))
    assert state.decks == (13, 13)


def test_table_setup_names_every_problem() -> None:
    fresh = RULES.new_game(2, 1, {})
    with pytest.raises(InvalidPositionError) as caught:
        table_setup(fresh, trees=[(4, 0)], reserves=[{"red": 30}, {"red": 30}], hands=[[], []])
    message = str(caught.value)
    assert "1 trees on distinct spots off the edge" in message
    assert "only 12 flowers of each colour" in message
    assert "holds 5 mission cards" in message


# -- placement and moves (the text, Your turn; docs/RULINGS.md Uranus #4) ------------------


def test_placement_in_turn_order_then_player_one_moves() -> None:
    state = RULES.new_game(2, 1, {})
    tree = next(iter(state.trees))
    with pytest.raises(IllegalMoveError, match="empty spot"):
        RULES.apply(state, Place(tree))
    assert list(RULES.candidates(state, frozenset({"0,0"}))) == [Place((0, 0))]
    assert list(RULES.candidates(state, frozenset({"0,0", "1,0"}))) == []
    state = RULES.apply(state, Place((0, 0)))
    assert list(RULES.legal_steps(state)).count(Place((0, 0))) == 0
    state = RULES.apply(state, Place((1, 0)))
    assert (state.phase, state.to_move) == ("turn", 1)


def test_gardeners_pass_over_gardeners_and_stop_before_trees() -> None:
    state = position({"0,0": "M1", "0,2": "M2", "0,-2": "tree"})
    moves = {s.to for s in RULES.legal_steps(state) if isinstance(s, Move)}
    assert (0, 1) in moves and (0, 3) in moves and (0, 2) not in moves
    assert (0, -1) in moves and (0, -2) not in moves and (0, -3) not in moves


def test_planting_is_mandatory_and_from_your_reserve() -> None:
    state = position({"0,0": "M1", "0,1": "M2"}, reserves={"1": {"red": 1}, "2": {"blue": 1}})
    assert [
        s.plant for s in RULES.legal_steps(state) if isinstance(s, Move) and s.to == (2, 0)
    ] == ["red"]
    with pytest.raises(IllegalMoveError, match="must plant"):
        RULES.apply(state, Move((2, 0)))
    after = RULES.apply(state, Move((2, 0), "red"))
    assert after.reserves[0] == (0, 0, 0, 0, 0)
    assert RULES.board(after)["2,0"] == "M1+red"


def test_moving_onto_a_flower_plants_nothing_and_counts_in_the_run() -> None:
    state = position({"0,0": "M1", "0,1": "M2", "2,0": "green"})
    assert [s for s in RULES.legal_steps(state) if isinstance(s, Move) and s.to == (2, 0)] == [
        Move((2, 0))
    ]
    after = RULES.apply(state, Move((2, 0)))
    assert (after.no_plant_run, after.to_move, after.reserves) == (1, 2, state.reserves)


def test_illegal_steps_say_why_and_which_rule() -> None:
    state = position({"0,0": "M1", "0,1": "M2", "2,0": "tree"})
    with pytest.raises(IllegalMoveError) as caught:
        RULES.apply(state, Move((3, 0), "red"))
    assert caught.value.reason == "a tree blocks the way"
    assert caught.value.rule == "Gardens of Uranus, Your turn"
    assert str(caught.value) == "3,0=red: a tree blocks the way (Gardens of Uranus, Your turn)"


# -- scoring a card (the text, Your turn 2; docs/CASES.md, Step semantics) -----------------


def test_scoring_adds_the_value_discards_and_draws() -> None:
    state = position(
        {"0,0": "red", "1,0": "red", **SEATED},
        hands={"1": ["biggest_group:red", "hexagon"], "2": []},
        no_plant_run=1,
    )
    after = RULES.apply(state, Score("biggest_group:red", 2, "groups:blue"))
    assert after.scores == (2, 0)
    assert after.hands[0] == ("groups:blue", "hexagon")
    assert after.decks == (5, 4, 5, 5)
    assert after.discarded == {"biggest_group:red"}
    assert (after.no_plant_run, after.to_move) == (0, 2)
    assert RULES.changes(state, Score("biggest_group:red", 2, "groups:blue")) == {}


def test_score_steps_offer_each_card_in_hand_from_every_deck_drawing_unknown() -> None:
    state = position(SEATED, hands={"1": ["groups:red"], "2": ["hexagon"]}, decks=[1, 0, 2, 0])
    scores = [s for s in RULES.legal_steps(state) if isinstance(s, Score)]
    assert scores == [Score("groups:red", 1), Score("groups:red", 3)]


# -- secret hands (the text, Setup: "secret mission cards") --------------------------------


def secret(state: State, *unknown: int) -> State:
    """``state`` with ``unknown[p - 1]`` unknown cards in player p's hand."""
    return validate(replace(state, unknown=unknown))


def test_a_player_with_unknown_cards_may_show_any_card_nobody_has_shown() -> None:
    state = secret(position(SEATED, hands={"1": [], "2": ["hexagon"]}), 5, 0)
    shown = {s.mission for s in RULES.legal_steps(state) if isinstance(s, Score)}
    assert shown == set(ALL_MISSIONS) - {"hexagon"}
    assert may_hold(state, 1, "triangle:red") and not may_hold(state, 2, "triangle:red")


def test_scoring_an_unknown_card_draws_an_unknown_one() -> None:
    state = secret(position({"0,0": "red", "1,0": "red", **SEATED}), 5, 5)
    after = RULES.apply(state, Score("biggest_group:red", 3))
    assert (after.scores, after.hands[0], after.unknown) == ((2, 0), (), (5, 5))
    assert (after.decks, after.discarded) == ((5, 5, 4, 5), {"biggest_group:red"})


def test_a_known_card_scored_leaves_the_hand_and_the_draw_is_unknown() -> None:
    state = position(SEATED, hands={"1": ["groups:red"], "2": []})
    after = RULES.apply(state, Score("groups:red", 1))
    assert (after.hands[0], after.unknown) == ((), (1, 0))


@pytest.mark.parametrize(
    ("mission", "reason"),
    [
        ("groups:blue", "the groups:blue card has been scored already"),
        ("hexagon", "player 2 holds the hexagon card"),
    ],
)
def test_a_card_shown_twice_or_held_by_another_is_refused(mission: str, reason: str) -> None:
    state = secret(position(SEATED, hands={"1": [], "2": ["hexagon"]}), 5, 0)
    state = replace(state, discarded=frozenset({"groups:blue"}))
    with pytest.raises(IllegalMoveError) as caught:
        RULES.apply(state, Score(mission, 1))
    assert caught.value.reason == reason
    assert card_refusal(state, 1, mission) == reason


def test_a_hand_of_known_cards_only_cannot_show_another() -> None:
    state = position(SEATED, hands={"1": ["groups:red"], "2": []})
    with pytest.raises(IllegalMoveError, match="you do not hold the groups:blue card"):
        RULES.apply(state, Score("groups:blue", 1))


def test_the_hexagon_holder_wins_by_showing_the_card_at_any_moment() -> None:
    state = secret(position({**dict.fromkeys(RING, "purple"), **SEATED}), 5, 5)
    assert state.phase == "turn"  # nobody is known to hold the card
    claims = [s for s in RULES.legal_steps(state) if isinstance(s, Claim)]
    assert claims == [Claim(1), Claim(2)]
    assert Score("hexagon", 1) not in set(RULES.legal_steps(state))
    after = RULES.apply(state, Claim(2))  # not player 2's move
    assert (after.phase, after.ending, after.hexagon_winner, after.hands[1]) == (
        "reveal", "hexagon", 2, ("hexagon",))
    with pytest.raises(IllegalMoveError, match="wins the game"):
        RULES.apply(state, Score("hexagon", 1))


def test_a_claim_without_a_hexagon_on_the_board_is_refused() -> None:
    state = secret(position(SEATED), 5, 5)
    with pytest.raises(IllegalMoveError, match="no hexagon of one colour stands"):
        RULES.apply(state, Claim(1))


def test_after_the_end_each_player_shows_the_cards_still_in_hand() -> None:
    state = secret(position(SEATED, hands={"1": ["groups:red"], "2": []}, decks=[0, 1, 0, 0]), 0, 2)
    state = RULES.apply(state, Score("groups:red", 2))  # the last card: the game ends
    assert (state.phase, state.to_move, state.unknown) == ("reveal", 1, (1, 2))
    assert RULES.outcome(state) is None
    with pytest.raises(IllegalMoveError, match="each player shows"):
        RULES.apply(state, Move((0, 0), "red"))
    state = RULES.apply(state, Reveal("triangle:red"))
    assert state.to_move == 2
    with pytest.raises(IllegalMoveError, match="player 1 holds the triangle:red card"):
        RULES.apply(state, Reveal("triangle:red"))
    state = RULES.apply(RULES.apply(state, Reveal("pairs:blue-red")), Reveal("hexagon"))
    assert (state.phase, state.hands[1], state.unknown) == (
        "over", ("hexagon", "pairs:blue-red"), (0, 0))
    assert RULES.outcome(state) is not None


def test_secret_hands_round_trip_through_the_notation() -> None:
    state = secret(position(SEATED, hands={"1": ["groups:red"], "2": []}), 2, 5)
    text = RULES.format_position(state)
    assert "hands=groups:red,?,?/?,?,?,?,?" in text
    assert RULES.parse_position(text) == state


def test_a_scored_card_cannot_be_drawn_again() -> None:
    state = position(SEATED, hands={"1": ["groups:red", "groups:blue"], "2": []})
    state = RULES.apply(state, Score("groups:red", 1, "triangle:red"))
    state = RULES.apply(state, Move((0, -2), "red"))
    with pytest.raises(IllegalMoveError, match="scored already"):
        RULES.apply(state, Score("groups:blue", 1, "groups:red"))


def test_mission_value_uses_the_triangle_option() -> None:
    cells = {"0,0": "yellow", "2,0": "yellow", "0,2": "yellow", **SEATED}
    assert mission_value(position(cells), "triangle:yellow") == 6
    one_side = position(cells, options={"triangle_points": "one_side"})
    assert mission_value(one_side, "triangle:yellow") == 3


# -- the end (the text, End of the game; docs/RULINGS.md Uranus #6, #6a) -------------------


@pytest.mark.parametrize(("unused", "penalty"), [(0, 0), (1, 1), (4, 10), (12, 78), (13, 91)])
def test_unused_flower_penalty(unused: int, penalty: int) -> None:
    assert unused_flower_penalty(unused) == penalty


def test_final_scores_add_cards_in_hand_and_take_the_penalty() -> None:
    state = position(
        {"0,0": "blue", "1,0": "blue", "2,0": "blue", "3,0": "red", **SEATED},
        reserves={"1": {"red": 2}, "2": {}},
        scores={"1": 3, "2": 0},
        hands={"1": ["biggest_group:blue", "hexagon"], "2": ["pairs:red-blue"]},
    )
    assert final_scores(state) == (3 + 3 + 0 - 3, 1)


def test_the_player_without_flowers_ends_the_game_at_the_start_of_their_turn() -> None:
    state = position({"0,0": "M1", "0,1": "M2"}, reserves={"1": {"red": 2}, "2": {}})
    after = RULES.apply(state, Move((2, 0), "red"))
    assert (after.phase, after.ending) == ("over", "no_flowers")
    assert list(RULES.legal_steps(after)) == []


def test_a_round_of_moves_without_planting_ends_the_game() -> None:
    state = position({"0,0": "M1", "0,1": "M2", "2,0": "red", "0,3": "red"})
    state = RULES.apply(state, Move((2, 0)))
    assert state.phase == "turn"
    state = RULES.apply(state, Move((0, 3)))
    assert (state.phase, state.ending) == ("over", "no_planting")


def test_drawing_the_last_card_ends_the_game() -> None:
    state = position(SEATED, hands={"1": ["groups:red"], "2": []}, decks=[0, 1, 0, 0])
    after = RULES.apply(state, Score("groups:red", 2, "hexagon"))
    assert (after.phase, after.ending, after.hands[0]) == ("over", "last_card", ("hexagon",))


def test_a_position_whose_decks_are_all_empty_is_over_whoever_drew_the_last_card(
    tmp_path: Path,
) -> None:
    before = position(SEATED, hands={"1": ["groups:red"], "2": []}, decks=[0, 1, 0, 0])
    drawn = RULES.apply(before, Score("groups:red", 2, "hexagon"))
    given = position(SEATED, hands={"1": ["hexagon"], "2": []}, decks=[0] * 4, to_move=2)
    unsettled = RULES.format_position(replace(given, phase="turn", ending=""))
    journal = Journal.create(tmp_path, {"game": "uranus", "setup": RULES.format_position(before)})
    journal.step(1, 1, RULES.format_step(before, Score("groups:red", 2, "hexagon")))
    journal.close()
    (*_, (_, _, resumed)) = read_journal(journal.path).replay(RULES)
    for state in (drawn, given, RULES.parse_position(unsettled), resumed):
        assert (state.phase, state.ending) == ("over", "last_card")
        assert list(RULES.legal_steps(state)) == []
        assert CASES.query(state, "legal_moves", {}) == {"destinations": []}
        outcome = RULES.outcome(state)
        assert outcome is not None and outcome.termination == ENDINGS["last_card"]


def test_a_position_with_cards_left_in_some_deck_goes_on() -> None:
    state = position(SEATED, decks=[0, 0, 1, 0])
    assert state.phase == "turn" and RULES.outcome(state) is None


RING = ("1,0", "0,1", "-1,1", "-1,0", "0,-1", "1,-1")


def test_the_hexagon_holder_wins_when_anyone_completes_it() -> None:
    cells = {c: "purple" for c in RING if c != "0,-1"}
    state = position(
        {**cells, "0,-3": "M1", "-3,3": "M2"},
        reserves={"1": {"purple": 1, "red": 1}, "2": {"red": 1}},
        hands={"1": [], "2": ["hexagon"]},
        scores={"1": 40, "2": 0},
    )
    after = RULES.apply(state, Move((0, -1), "purple"))
    outcome = RULES.outcome(after)
    assert outcome is not None
    assert (after.ending, outcome.winners) == ("hexagon", (2,))
    assert outcome.ranking[0][0] == 2 and outcome.ranking[0][2] == 1


def test_drawing_the_hexagon_while_one_stands_wins() -> None:
    state = position(
        {**dict.fromkeys(RING, "purple"), **SEATED}, hands={"1": ["groups:red"], "2": []}
    )
    assert state.phase == "turn"  # nobody holds the card yet
    after = RULES.apply(state, Score("groups:red", 1, "hexagon"))
    assert (after.phase, after.hexagon_winner) == ("over", 1)


def test_outcome_ranks_by_final_score_and_shares_ties() -> None:
    state = position(
        {"0,0": "M1", "0,1": "M2", "-2,0": "M3"},
        players=3,
        reserves={"1": {}, "2": {"red": 1}, "3": {}},
        scores={"1": 4, "2": 5, "3": 9},
    )
    outcome = RULES.outcome(state)
    assert outcome is not None
    assert outcome.winners == (3,)
    assert outcome.termination == "a player had no flowers left at the start of their turn"
    assert outcome.ranking == ((3, "9 pts", 2), (1, "4 pts", 1), (2, "4 pts", 1))
    assert RULES.status(state) == ((1, "4 pts"), (2, "5 pts"), (3, "9 pts"))


def test_a_game_in_progress_has_no_outcome() -> None:
    assert RULES.outcome(position(SEATED)) is None


# -- the seam: board, changes, candidates, choices -----------------------------------------


def test_board_shows_trees_flowers_and_gardeners() -> None:
    state = position({"1,1": "tree", "0,0": "M1+green", "2,0": "red", "0,-3": "M2"})
    board = RULES.board(state)
    assert (board["1,1"], board["0,0"], board["2,0"], board["0,-3"], board["3,0"]) == (
        "tree",
        "M1+green",
        "red",
        "M2",
        "",
    )
    assert RULES.tray_cells(state) == frozenset()


def test_changes_of_a_move_off_a_flower() -> None:
    state = position({"0,0": "M1+green", "0,-3": "M2"})
    step = Move((2, 0), "red")
    assert RULES.changes(state, step) == {"0,0": "green", "2,0": "M1+red"}
    assert RULES.changes(state, step) == board_diff(
        RULES.board(state), RULES.board(RULES.apply(state, step))
    )


def test_candidates_explain_the_touched_cells() -> None:
    state = position({"0,0": "M1", "0,-3": "M2"})

    def moves(*touched: str) -> list[Move]:
        found = list(RULES.candidates(state, frozenset(touched)))
        assert all(isinstance(s, Move) for s in found)
        return [s for s in found if isinstance(s, Move)]

    assert {s.plant for s in moves("0,0", "2,0")} == {"red", "blue"}
    assert {s.to for s in moves("0,0")} >= {(2, 0), (0, 4)}
    assert moves("2,0", "0,2") == []
    assert moves("0,-3") == []


def test_choice_path_names_what_a_presence_board_cannot_see() -> None:
    state = position(SEATED, hands={"1": ["groups:red"], "2": []})
    assert RULES.choice_path(state, Move((0, 0), "red")) == ("plant red",)
    assert RULES.choice_path(state, Move((0, 0))) == ()
    assert RULES.choice_path(state, Score("groups:red", 2, "hexagon")) == (
        "groups",
        "groups:red",
        "deck 2",
        "drew hexagon",
    )
    assert RULES.choice_path(state, Score("pairs:blue-red", 1)) == (
        "pairs",
        "pairs:blue-red",
        "deck 1",
    )
    assert RULES.choice_path(state, Reveal("hexagon")) == ("hexagon", "hexagon")
    assert RULES.choice_path(state, Claim(2)) == ("hexagon", "hexagon", "P2")
    steps = [Move((0, 0), "red")]
    assert RULES.tray_filter(state, steps, {"red": 1}) == steps


# -- notation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("@0,0", Place((0, 0))),
        ("0,3=red", Move((0, 3), "red")),
        ("-2,3", Move((-2, 3))),
        ("score:triangle:yellow/2:groups:red", Score("triangle:yellow", 2, "groups:red")),
        ("score:triangle:yellow/2", Score("triangle:yellow", 2)),
        ("claim:2", Claim(2)),
        ("show:groups:red", Reveal("groups:red")),
    ],
)
def test_step_notation(text: str, step: Step) -> None:
    state = position(SEATED)
    assert RULES.parse_step(state, text) == step
    assert RULES.format_step(state, step) == text


def test_pairs_in_a_step_are_made_canonical() -> None:
    step = RULES.parse_step(position(SEATED), "score:pairs:red-blue/1:pairs:purple-green")
    assert step == Score("pairs:blue-red", 1, "pairs:green-purple")


@pytest.mark.parametrize(
    "text", ["0,3=pink", "score:groups:red", "score:groups:red/x:hexagon", "@a", "claim:x",
             "show:triangle"]
)
def test_bad_step_notation(text: str) -> None:
    with pytest.raises(InvalidStepError):
        RULES.parse_step(position(SEATED), text)


def test_position_notation_round_trips() -> None:
    state = position(
        {"1,1": "tree", "0,0": "M1+green", "2,0": "red", "0,-3": "M2"},
        hands={"1": ["hexagon", "pairs:blue-red"], "2": []},
        no_plant_run=1,
    )
    text = RULES.format_position(state)
    assert text.startswith("uranus board=hexagonal triangle_points=perimeter players=2")
    assert RULES.parse_position(text) == state


@pytest.mark.parametrize(
    "text", ["mars board=hexagonal", "uranus board=hexagonal", "uranus " + "x=1 " * 16]
)
def test_bad_position_notation(text: str) -> None:
    with pytest.raises(InvalidStepError):
        RULES.parse_position(text)


def test_impossible_positions_name_every_problem() -> None:
    with pytest.raises(InvalidPositionError) as caught:
        position({"0,0": "M1", "1,0": "M1"}, hands={"1": ["hexagon"], "2": ["hexagon"]})
    assert "a mission card is in two places" in str(caught.value)
    with pytest.raises(InvalidPositionError, match="cannot stand there"):
        position({"9,9": "red"})


def _landings(state: State) -> frozenset[Any]:
    return frozenset(s.to for s in RULES.legal_steps(state) if isinstance(s, Move))


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_the_destinations_are_the_landings_of_the_legal_moves(board: str) -> None:
    # Random whole games; at each turn also with the player's reserve emptied (a move onto an
    # empty spot plants a flower: none is left to plant).
    rng = random.Random(board)
    state, turns = RULES.new_game(3, 7, {"board": board}), 0
    while state.phase != "over":
        if state.phase == "turn":
            turns += 1
            assert destinations(state) == _landings(state)
            emptied = list(state.reserves)
            emptied[state.to_move - 1] = (0,) * len(emptied[state.to_move - 1])
            bare = replace(state, reserves=tuple(emptied))
            assert destinations(bare) == _landings(bare) < _landings(state)
        else:
            assert destinations(state) == frozenset()
        state = RULES.apply(state, rng.choice(list(RULES.legal_steps(state))))
    assert turns > 10


@pytest.mark.parametrize("game", ["mars", "uranus"])
@pytest.mark.parametrize("cell", ["٠,-4", "+0,-4", "0,+4", "0, -4", "0,-4_0", "0,-４",
                                  "-0,-4", "0,-04", " 0,-4"],
                         ids=["arabic-indic", "plus", "plus-r", "space-within", "underscore",
                              "fullwidth", "minus-zero", "leading-zero", "space-before"])
def test_a_hex_is_written_in_ascii_digits_with_a_minus_sign_or_none(game: str, cell: str) -> None:
    import re

    from companion.rules import hexes, load

    rules = load(game).RULES
    state = rules.new_game(2, 1, {})
    assert rules.parse_step(state, "@0,-4") in set(rules.legal_steps(state))
    with pytest.raises(InvalidStepError, match=re.escape(
            f"{cell!r} is not a hex cell; write it as q,r with the digits 0-9")):
        rules.parse_step(state, f"@{cell}")
    with pytest.raises(InvalidStepError):
        hexes.parse_hex(cell)
    assert hexes.parse_hex("-3,2") == (-3, 2)
