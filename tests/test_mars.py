"""Gardens of Mars rules core: one test per rule, values from the text and docs/RULINGS.md.

Positions are built with :func:`companion.rules.mars.position`, as the case files are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from companion.errors import ConfigError, IllegalMoveError, InvalidPositionError, InvalidStepError
from companion.rules import mars
from companion.rules.base import GameRules, Outcome, board_diff
from companion.rules.hexes import distance
from companion.rules.mars import (
    RULES,
    Discard,
    Move,
    Phase,
    Place,
    Roll,
    State,
    dice_to_roll,
    parse_step,
    track_space,
)

STD = {"red": 5, "blue": 5}


def at(
    cells: Mapping[str, str],
    *,
    players: int = 2,
    pool: tuple[int, ...] = (),
    scores: Mapping[int, int] | None = None,
    reserves: Mapping[int, Mapping[str, int]] | None = None,
    to_move: int = 1,
    options: Mapping[str, Any] | None = None,
) -> State:
    """A position; every player holds 5 red and 5 blue unless ``reserves`` says otherwise."""
    return mars.position(
        players,
        cells,
        to_move=to_move,
        pool=pool,
        scores=scores,
        reserves=reserves or {p: STD for p in range(1, players + 1)},
        options=options,
    )


# --- setup (Gardens of Mars, Setup; docs/RULINGS.md Mars #1, #9, #10) -----------------------


def test_grid_is_91_hexes_around_the_centre() -> None:
    assert len(mars.GRID) == 91
    assert mars.CENTRE in mars.GRID
    assert max(distance(c, mars.CENTRE) for c in mars.GRID.cells) == 5


@pytest.mark.parametrize(("players", "each"), [(2, 30), (3, 20), (4, 15), (5, 12)])
def test_deal_shares_out_all_sixty_flowers(players: int, each: int) -> None:
    state = RULES.new_game(players, seed=7, options={})
    assert [sum(r) for r in state.reserves] == [each] * players
    assert [sum(column) for column in zip(*state.reserves, strict=True)] == [10] * 6
    assert state.phase is Phase.PLACEMENT and state.to_move == 1
    assert set(RULES.board(state).values()) == {""}


def test_deal_is_seeded() -> None:
    assert RULES.new_game(3, 1, {}) == RULES.new_game(3, 1, {})
    assert any(RULES.new_game(3, 1, {}) != RULES.new_game(3, s, {}) for s in range(2, 6))


@pytest.mark.parametrize("players", [1, 6])
def test_two_to_five_players(players: int) -> None:
    with pytest.raises(InvalidPositionError, match="2 to 5 players"):
        RULES.new_game(players, 0, {})


@pytest.mark.parametrize("count", [1, 5, 12])
def test_peaks_variant_places_non_adjacent_peaks_off_the_centre(count: int) -> None:
    for seed in range(30):
        state = RULES.new_game(2, seed, {"peaks": count})
        peaks = [c for c in mars.GRID.cells if state.at(c) == "peak"]
        assert len(peaks) == count
        assert mars.CENTRE not in peaks
        assert all(distance(a, b) > 1 for a in peaks for b in peaks if a != b)


def test_option_defaults_are_those_of_rulings_mars_10() -> None:
    assert mars.read_options({}) == mars.Options(
        plant_score="group_size",
        center_blocks_path=False,
        last_flower="board",
        last_flower_extra_turn=True,
        track_extra_turns=True,
        peaks=0,
    )


def test_bad_options_are_all_named_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        RULES.new_game(
            2,
            0,
            {
                "plant_scores": "group_size",
                "plant_score": "size",
                "center_blocks_path": "yes",
                "last_flower": "hand",
                "peaks": 13,
            },
        )
    problems = caught.value.problems
    assert len(problems) == 5
    assert "no option 'plant_scores'" in problems[0]
    assert all(p.endswith(".") for p in problems)


@pytest.mark.parametrize("value", [True, "5", -1])
def test_peaks_option_is_a_count(value: object) -> None:
    with pytest.raises(ConfigError, match="peaks"):
        mars.read_options({"peaks": value})


def test_every_scoring_martian_starts_on_zero() -> None:
    state = RULES.new_game(4, 3, {})
    assert state.scores == (0, 0, 0, 0) and state.planted == (0, 0, 0, 0)
    assert RULES.status(state) == tuple((p, "0 pts") for p in range(1, 5))


def test_gardeners_are_placed_in_turn_order_then_player_one_rolls() -> None:
    state = RULES.new_game(3, 0, {})
    for player, cell in zip((1, 2, 3), ((1, -1), (-2, 3), (4, 0)), strict=True):
        assert state.to_move == player and state.phase is Phase.PLACEMENT
        state = RULES.apply(state, Place(cell))
    assert state.phase is Phase.ROLL and state.to_move == 1
    assert RULES.board(state)["-2,3"] == "M2"


def test_placement_is_never_on_the_centre_nor_an_occupied_hex() -> None:
    state = RULES.apply(RULES.new_game(2, 0, {}), Place((1, -1)))
    with pytest.raises(IllegalMoveError, match="central space") as caught:
        RULES.apply(state, Place((0, 0)))
    assert caught.value.rule == mars.RULE_SETUP
    with pytest.raises(IllegalMoveError, match="not empty"):
        RULES.apply(state, Place((1, -1)))
    places = {s.cell for s in RULES.legal_steps(state) if isinstance(s, Place)}
    assert places == set(mars.GRID.cells) - {(0, 0), (1, -1)}


# --- rolling dice (Rolling Dice; Mars #2, #9) -----------------------------------------------


def test_dice_count_next_to_the_centre_and_at_the_edge() -> None:
    assert dice_to_roll(at({"1,0": "M1", "-4,0": "M2"})) == 6  # the centre counts as empty
    assert dice_to_roll(at({"5,0": "M1", "-4,0": "M2"})) == 3  # off-board does not count
    assert dice_to_roll(at({"5,-5": "M1", "-4,0": "M2"})) == 3  # a corner


def test_roll_phase_offers_every_sorted_roll() -> None:
    state = at({"0,-5": "M1", "0,-4": "red", "-4,0": "M2"})  # 3 on-board neighbours
    assert dice_to_roll(state) == 2
    rolls = list(RULES.legal_steps(state))
    assert len(rolls) == 21 and Roll((5, 3)) in rolls  # multisets of two dice
    assert RULES.apply(state, Roll((5, 3))).pool == (3, 5)


def test_surrounded_gardener_rolls_nothing_and_the_turn_passes() -> None:
    ring = {"3,2": "red", "2,3": "red", "1,3": "red", "1,2": "blue", "2,1": "blue", "3,1": "red"}
    state = at({"2,2": "M1", **ring, "-4,0": "M2"}, scores={1: 4})
    assert list(RULES.legal_steps(state)) == [Roll(())]
    after = RULES.apply(state, Roll(()))
    assert (after.to_move, after.scores, after.phase) == (2, (4, 0), Phase.ROLL)


def test_a_roll_of_the_wrong_size_is_refused_with_the_count() -> None:
    with pytest.raises(IllegalMoveError, match="2 dice are rolled; roll 3") as caught:
        RULES.apply(at({"5,0": "M1", "-4,0": "M2"}), Roll((1, 2)))
    assert caught.value.step == "roll:1,2"


# --- moving (Moving and Planting; Mars #3, #4, #9) ------------------------------------------


def test_moves_are_exact_straight_and_pass_the_centre() -> None:
    state = at({"-2,0": "M1", "5,-5": "M2"}, pool=(4,))
    assert mars.destinations(state, 4) == {(2, 0), (-2, 4), (2, -4)}
    assert mars.destinations(state, 3) == frozenset()  # no 3 in the pool


def test_centre_blocks_the_path_with_the_option() -> None:
    state = at({"-2,0": "M1", "5,-5": "M2"}, pool=(4,), options={"center_blocks_path": True})
    assert mars.destinations(state) == {(-2, 4), (2, -4)}
    with pytest.raises(IllegalMoveError, match="center_blocks_path") as caught:
        RULES.apply(state, Move(4, (2, 0), "red"))
    assert caught.value.rule == mars.RULE_CENTRE


def test_landing_on_the_centre_is_refused() -> None:
    state = at({"-3,0": "M1", "4,-4": "M2"}, pool=(3,))
    with pytest.raises(IllegalMoveError, match="never stop on it"):
        RULES.apply(state, Move(3, (0, 0), "red"))


def test_gardeners_block_the_way() -> None:
    state = at({"-4,2": "M1", "-2,2": "M2"}, pool=(3,))
    with pytest.raises(IllegalMoveError, match="gardener on -2,2 is in the way"):
        RULES.apply(state, Move(3, (-1, 2), "red"))


def test_peaks_block_the_way_and_the_landing() -> None:
    state = at({"-2,0": "M1", "5,-5": "M2", "-2,2": "peak", "2,-4": "peak"}, pool=(4,))
    assert mars.destinations(state) == {(2, 0)}
    with pytest.raises(IllegalMoveError, match="peak on -2,2") as caught:
        RULES.apply(state, Move(4, (-2, 4), "red"))
    assert caught.value.rule == mars.RULE_PEAKS


def test_a_move_that_turns_is_refused() -> None:
    state = at({"-2,0": "M1", "5,-5": "M2"}, pool=(4,))
    with pytest.raises(IllegalMoveError, match="straight line"):
        RULES.apply(state, Move(4, (0, 2), "red"))


def test_discard_only_when_no_die_can_move() -> None:
    blocked = {"5,0": "M1", "4,1": "M2", "3,0": "M3", "5,-1": "M4"}
    state = at(blocked, players=4, pool=(1, 4))
    assert mars.destinations(state, 4) == frozenset()
    assert {s for s in RULES.legal_steps(state) if isinstance(s, Discard)} == set()
    with pytest.raises(IllegalMoveError, match="discarded only when none can move") as caught:
        RULES.apply(state, Discard(4))
    assert caught.value.rule == mars.RULE_DIE
    jammed = at({**blocked, "3,0": "", "4,0": "M3"}, players=4, pool=(4, 4, 6), scores={1: 5})
    assert list(RULES.legal_steps(jammed)) == [Discard(4), Discard(6)]
    after = RULES.apply(jammed, Discard(4))
    assert (after.pool, after.scores[0], after.to_move) == ((4, 6), 4, 2)


# --- planting and scoring (Mars #5, #6) -----------------------------------------------------


GROUP = {"0,4": "M1", "1,0": "red", "2,0": "red", "2,-1": "red", "-1,2": "red", "1,1": "blue",
         "-4,0": "M2"}


def test_planting_scores_the_whole_group() -> None:
    after = RULES.apply(at(GROUP, pool=(3,)), Move(3, (0, 1), "red"))
    assert after.scores == (5, 0)
    assert after.planted == (1, 0)
    assert after.reserve(1) == {**dict.fromkeys(mars.COLOURS, 0), "red": 4, "blue": 5}
    assert RULES.board(after)["0,1"] == "M1+red" and RULES.board(after)["0,4"] == ""


def test_connected_only_scores_the_group_less_the_new_flower() -> None:
    state = at(GROUP, pool=(3,), options={"plant_score": "connected_only"})
    assert RULES.apply(state, Move(3, (0, 1), "red")).scores == (4, 0)


def test_landing_on_a_flower_costs_a_point_never_below_zero() -> None:
    cells = {"-3,2": "M1", "-3,-1": "white", "4,-4": "M2"}
    assert RULES.apply(at(cells, pool=(3,), scores={1: 7}), Move(3, (-3, -1))).scores == (6, 0)
    assert RULES.apply(at(cells, pool=(3,)), Move(3, (-3, -1))).scores == (0, 0)


def test_plant_only_on_empty_and_only_from_the_reserve() -> None:
    state = at({"-2,0": "M1", "5,-5": "M2", "-2,4": "white"}, pool=(4,),
               reserves={1: {"red": 1}, 2: STD})
    with pytest.raises(IllegalMoveError, match="already holds a white flower"):
        RULES.apply(state, Move(4, (-2, 4), "red"))
    with pytest.raises(IllegalMoveError, match="plants a flower"):
        RULES.apply(state, Move(4, (2, 0)))
    with pytest.raises(IllegalMoveError, match="no blue flower left"):
        RULES.apply(state, Move(4, (2, 0), "blue"))
    assert {s for s in RULES.legal_steps(state) if isinstance(s, Move) and s.to == (2, 0)} == {
        Move(4, (2, 0), "red")
    }


@pytest.mark.parametrize(
    ("score", "space", "laps"),
    [(0, 0, 0), (1, 1, 0), (25, 25, 0), (50, 50, 0), (51, 1, 1), (53, 3, 1), (100, 50, 1)],
)
def test_track_space_wraps_every_fifty(score: int, space: int, laps: int) -> None:
    assert track_space(score) == (space, laps)


def test_track_space_refuses_a_negative_score() -> None:
    with pytest.raises(ValueError, match="never negative"):
        track_space(-1)


def track(scores: dict[int, int], pool: tuple[int, ...], **options: Any) -> State:
    players = len(scores)
    cells = {"0,4": "M1", "1,0": "red", "2,0": "red", "-4,0": "M2", "4,-4": "M3"}
    if players == 2:
        del cells["4,-4"]
    return at(cells, players=players, pool=pool, scores=scores, options=options)


def test_leapfrog_counts_the_spaces_jumped() -> None:
    after = RULES.apply(track({1: 10, 2: 13, 3: 14}, (3,)), Move(3, (0, 1), "red"))
    assert after.scores == (15, 13, 14)


def test_occupied_space_above_25_gives_an_extra_turn_with_a_die_left() -> None:
    after = RULES.apply(track({1: 24, 2: 27}, (3, 5)), Move(3, (0, 1), "red"))
    assert (after.scores, after.to_move, after.extra_turn, after.pool) == ((28, 27), 1, True, (5,))
    assert after.phase is Phase.MOVE  # no new roll: the die left is played
    done = RULES.apply(after, Move(5, (-5, 1), "blue"))
    assert (done.to_move, done.extra_turn) == (2, False)


def test_no_extra_turn_without_a_die_left_or_below_26() -> None:
    assert RULES.apply(track({1: 24, 2: 27}, (3,)), Move(3, (0, 1), "red")).to_move == 2
    low = RULES.apply(track({1: 20, 2: 23}, (3, 5)), Move(3, (0, 1), "red"))
    assert (low.scores[0], low.to_move) == (24, 2)


def test_track_extra_turns_off_means_no_leapfrog_and_no_extra_turn() -> None:
    state = track({1: 24, 2: 27}, (3, 5), track_extra_turns=False)
    after = RULES.apply(state, Move(3, (0, 1), "red"))
    assert (after.scores, after.to_move) == ((27, 27), 2)


# --- last flower (Mars #7) and the end (Mars #8, #8a) ---------------------------------------


NINE_RED = dict.fromkeys(("0,-5", "1,-5", "2,-5", "3,-5", "4,-5", "5,-5", "5,-4", "5,-3", "5,-2"),
                         "red")


@pytest.mark.parametrize(
    ("options", "extra"),
    [
        ({}, True),
        ({"last_flower_extra_turn": False}, False),
        ({"last_flower": "own_reserve"}, False),
    ],
)
def test_tenth_flower_of_a_colour_on_the_board(options: dict[str, Any], extra: bool) -> None:
    state = at({"0,4": "M1", "-4,0": "M2", **NINE_RED}, pool=(3, 5), options=options)
    after = RULES.apply(state, Move(3, (0, 1), "red"))
    assert after.extra_turn is extra and after.to_move == (1 if extra else 2)


def test_own_reserve_reading_rewards_the_planters_last_flower_of_a_colour() -> None:
    state = at({"0,4": "M1", "-4,0": "M2"}, pool=(3, 5),
               reserves={1: {"red": 1, "blue": 5}, 2: STD}, options={"last_flower": "own_reserve"})
    assert RULES.apply(state, Move(3, (0, 1), "red")).to_move == 1


def test_an_empty_reserve_ends_the_game_before_any_extra_turn() -> None:
    state = at({"0,4": "M1", "-4,0": "M2", **NINE_RED}, pool=(3, 5),
               reserves={1: {"red": 1}, 2: STD}, scores={2: 9})
    after = RULES.apply(state, Move(3, (0, 1), "red"))
    assert after.phase is Phase.OVER and not after.extra_turn
    assert list(RULES.legal_steps(after)) == []
    outcome = RULES.outcome(after)
    assert outcome is not None
    assert outcome.winners == (2,) and outcome.termination == "player 1 planted their last flower"
    assert outcome.ranking == ((2, "9 pts", 1), (1, "1 pts", 0))
    with pytest.raises(IllegalMoveError, match="game is over") as caught:
        RULES.apply(after, Move(5, (-5, 1), "blue"))
    assert caught.value.rule == mars.RULE_END


def test_stalemate_ends_the_game_when_the_last_die_is_discarded() -> None:
    jam = {"5,0": "M1+white", "4,1": "M2+red", "4,0": "M3+red", "5,-1": "M4+blue",
           "3,2": "gray", "3,1": "gray", "3,0": "green", "4,-1": "green", "5,-2": "yellow"}
    state = at(jam, players=4, pool=(4,), scores={1: 5})
    after = RULES.apply(state, Discard(4))
    assert after.phase is Phase.OVER
    outcome = RULES.outcome(after)
    assert outcome is not None and outcome.termination == "no one can move or roll"


def test_ties_go_to_flowers_planted_then_are_shared() -> None:
    def final(planted: dict[int, int]) -> Outcome:
        state = mars.position(3, {"0,4": "M1", "-4,0": "M2", "4,-4": "M3"},
                              scores={1: 9, 2: 9, 3: 4}, planted=planted,
                              reserves={1: {}, 2: STD, 3: STD})
        outcome = RULES.outcome(state)
        assert outcome is not None
        return outcome

    assert final({1: 11, 2: 12, 3: 20}).winners == (2,)
    shared = final({1: 12, 2: 12, 3: 20})
    assert shared.winners == (1, 2)
    assert shared.ranking == ((1, "9 pts", 2), (2, "9 pts", 2), (3, "4 pts", 0))


def test_no_outcome_while_the_game_goes_on() -> None:
    assert RULES.outcome(at({"5,0": "M1", "-4,0": "M2"})) is None


# --- the seam: board, changes, candidates, choices, status, notation ------------------------


def test_rules_implement_the_whole_seam() -> None:
    seam: GameRules[State, mars.Step] = RULES  # mypy checks every signature here
    methods = [n for n, v in vars(GameRules).items() if callable(v) and not n.startswith("_")]
    assert len(methods) == 24
    assert all(callable(getattr(seam, n)) for n in methods) and seam.name == "mars"


def test_board_shows_gardeners_flowers_and_peaks() -> None:
    state = at({"1,-1": "M1+red", "2,2": "M2", "3,-3": "peak", "-1,1": "gray"})
    board = RULES.board(state)
    assert RULES.layout(state) == tuple(board) and len(board) == 91
    assert {c: p for c, p in board.items() if p} == {
        "1,-1": "M1+red", "2,2": "M2", "3,-3": "peak", "-1,1": "gray"
    }
    assert RULES.tray_cells(state) == frozenset()


def test_changes_of_a_move_leave_the_flower_behind() -> None:
    state = at({"-2,0": "M1+red", "5,-5": "M2", "2,0": "white"}, pool=(4,))
    for step in (Move(4, (2, 0)), Move(4, (-2, 4), "blue")):
        after = RULES.apply(state, step)
        assert RULES.changes(state, step) == board_diff(RULES.board(state), RULES.board(after))
    assert RULES.changes(state, Move(4, (2, 0))) == {"-2,0": "red", "2,0": "M1+white"}
    assert RULES.changes(state, Discard(4)) == {}


def test_candidates_follow_the_touched_hexes() -> None:
    state = at({"-2,0": "M1", "5,-5": "M2"}, pool=(1, 4))
    every = set(RULES.legal_steps(state))
    assert set(RULES.candidates(state, frozenset())) == every
    assert set(RULES.candidates(state, frozenset({"-2,0"}))) == every  # gardener lifted
    assert set(RULES.candidates(state, frozenset({"-2,0", "2,0"}))) == {
        Move(4, (2, 0), "red"), Move(4, (2, 0), "blue")
    }
    assert set(RULES.candidates(state, frozenset({"2,0", "-2,4"}))) == set()
    placing = RULES.new_game(2, 0, {})
    assert list(RULES.candidates(placing, frozenset({"1,-1"}))) == [Place((1, -1))]
    assert list(RULES.candidates(placing, frozenset({"0,0"}))) == []


def test_choice_path_asks_only_what_the_board_cannot_show() -> None:
    state = at({"-2,0": "M1", "5,-5": "M2"}, pool=(4,))
    assert RULES.choice_path(state, Move(4, (2, 0), "red")) == ("plant red",)
    assert RULES.choice_path(state, Move(4, (2, 0))) == ()
    assert RULES.choice_path(state, Roll((3, 5))) == ("roll 3 5",)
    assert RULES.choice_path(state, Discard(4)) == ("discard 4",)
    steps = list(RULES.legal_steps(state))
    assert RULES.tray_filter(state, steps, {"red": 1}) == steps


def test_status_shows_each_track_score() -> None:
    assert RULES.status(at({"5,0": "M1", "-4,0": "M2"}, scores={1: 12})) == (
        (1, "12 pts"), (2, "0 pts")
    )


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("@1,-1", Place((1, -1))),
        ("roll:3,5", Roll((5, 3))),
        ("roll:none", Roll(())),
        ("3>0,1=red", Move(3, (0, 1), "red")),
        ("3>2,0", Move(3, (2, 0))),
        ("discard:4", Discard(4)),
    ],
)
def test_step_notation(text: str, step: mars.Step) -> None:
    assert parse_step(text) == step
    assert mars.format_step(step) == text


@pytest.mark.parametrize("text", ["", "3", "3>0,1=pink", "x>0,1", "roll:a", "discard:", "@0"])
def test_bad_step_notation_says_what_was_expected(text: str) -> None:
    with pytest.raises(InvalidStepError):
        parse_step(text)


def test_position_notation_round_trips_with_options() -> None:
    state = at({"1,-1": "M1+red", "2,2": "M2", "3,-3": "peak"}, pool=(3, 5), scores={2: 4},
               options={"peaks": 5, "plant_score": "connected_only"})
    text = RULES.format_position(state)
    assert text == (
        "mars players=2 to_move=1 extra=no pool=3,5 scores=0,4 planted=0,0 "
        "reserves=5.0.0.0.5.0/5.0.0.0.5.0 cells=3,-3=peak;1,-1=M1+red;2,2=M2 "
        "options=plant_score:connected_only,peaks:5"
    )
    assert RULES.parse_position(text) == state


@pytest.mark.parametrize(
    "text",
    [
        "uranus players=2",
        "mars players=2",
        "mars players=2 to_move=1 extra=no pool=- scores=0,0 planted=0,0 reserves=1.2/3.4 "
        "cells=- options=-",
        "mars players=2 to_move=1 extra=no pool=- scores=0,0 planted=0,0 "
        "reserves=5.0.0.0.5.0/5.0.0.0.5.0 cells=0,0=M1 options=-",
        "mars players=2 to_move=1 extra=no pool=- scores=0,0 planted=0,0 "
        "reserves=5.0.0.0.5.0/5.0.0.0.5.0 cells=- options=peaks:99",
    ],
)
def test_bad_position_text_is_refused(text: str) -> None:
    with pytest.raises(InvalidStepError):
        RULES.parse_position(text)


def test_position_names_every_problem() -> None:
    with pytest.raises(InvalidPositionError) as caught:
        mars.position(2, {"0,0": "M1", "9,9": "red", "1,1": "M7", "2,2": "pink"}, pool=(7,))
    message = str(caught.value)
    for part in ("central space", "9,9 is off", "no player 7", "'pink'", "at most 6 dice"):
        assert part in message
