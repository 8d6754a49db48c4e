"""Gardens of Enceladus rules core: one test per rule, values from the text, docs/RULINGS.md
(Enceladus #1-#10) and the case format.  Positions are built with the case adapter."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from companion.errors import ConfigError, IllegalMoveError, InvalidPositionError, InvalidStepError
from companion.rules import base, load
from companion.rules import enceladus as enc
from companion.rules.enceladus import Action, Move, Phase, Place

# The case file's favourite position: Martian 1 on c8 can reach c3 and c2 down column c.
BOARD_A = {
    "c8": "M1",
    "d7": "red",
    "e6": "peak",
    "f5": "blue",
    "R1": "M2",
    "a1": "yellow",
    "b1": "yellow",
    "c3": "red",
    "c2": "red",
}


def position(
    cells: dict[str, str],
    *,
    reserves: dict[str, dict[str, int]] | None = None,
    options: dict[str, Any] | None = None,
    players: int = 2,
    to_move: int = 1,
    tube: dict[str, int] | None = None,
    used: list[str] | None = None,
) -> enc.State:
    return enc.CASES.position(
        {
            "options": options or {},
            "position": {
                "players": players,
                "to_move": to_move,
                "cells": cells,
                "reserves": reserves or {},
                "tube": tube or {},
                "used_actions": used or [],
            },
        }
    )


def refusal(state: enc.State, step: enc.Step) -> IllegalMoveError:
    with pytest.raises(IllegalMoveError) as caught:
        enc.apply(state, step)
    return caught.value


# ----------------------------------------------------------------------------- options


def test_options_default_to_the_standard_game() -> None:
    assert enc.read_options({}) == enc.Options(
        "competitive", 1, True, ("blue", "red", "yellow", "green", "purple")
    )


def test_every_bad_option_is_named_with_what_is_allowed() -> None:
    with pytest.raises(ConfigError) as caught:
        enc.read_options({"mode": "solo", "martians_per_player": 3, "tube": "yes", "speed": 2})
    text = str(caught.value)
    assert len(caught.value.problems) == 4
    assert "'speed'" in text and "mode, martians_per_player, tube and colours" in text
    assert '"competitive" or "cooperative"' in text
    assert "use 1 or 2" in text
    assert "use true or false" in text


def test_colours_are_five_different_names() -> None:
    assert enc.read_options({"colours": ["a", "b", "c", "d", "e"]}).colours == tuple("abcde")
    with pytest.raises(ConfigError, match="option colours"):
        enc.read_options({"colours": ["blue", "blue", "red", "green", "purple"]})
    with pytest.raises(ConfigError, match="option colours"):
        enc.read_options({"colours": ["wild", "blue", "red", "green", "purple"]})


def test_two_martians_per_player_is_for_two_players_only() -> None:
    with pytest.raises(ConfigError, match="two-player variant; this game has 3 players"):
        enc.new_game(3, 1, {"martians_per_player": 2})


@pytest.mark.parametrize("players", [1, 6])
def test_two_to_five_players(players: int) -> None:
    with pytest.raises(InvalidPositionError, match="2 to 5 players"):
        enc.new_game(players, 1, {})


# ----------------------------------------------------------------------------- setup


@pytest.mark.parametrize("seed", range(20))
def test_setup_deals_95_flowers_19_of_each_colour_and_5_unfencing_peaks(seed: int) -> None:
    state = enc.new_game(2, seed, {})
    pieces = Counter(enc.board(state)[name] for name in enc.LAYOUT[:100])
    assert pieces == {c: 19 for c in enc.DEFAULT_COLOURS} | {"peak": 5}
    peaks = [name for name in enc.LAYOUT[:100] if enc.board(state)[name] == "peak"]
    assert enc.setup_valid(peaks)


def test_setup_is_seeded() -> None:
    assert enc.new_game(3, 42, {}) == enc.new_game(3, 42, {})
    assert enc.new_game(3, 42, {}).garden != enc.new_game(3, 43, {}).garden


def test_the_tube_starts_empty_and_each_payment_goes_into_it() -> None:
    state = enc.new_game(3, 4, {})
    assert state.tube == (0,) * len(state.tube)
    paid = enc.apply(
        position(BOARD_A, reserves={"1": {"red": 3}}), Action("wildflower", "red")
    )
    assert paid.tube == (0, 3, 0, 0, 0) and paid.reserves[0][1] == 0


def test_setup_valid_refuses_a_fenced_corner() -> None:
    assert not enc.setup_valid(["a2", "b1", "e5", "f6", "g7"])
    assert enc.setup_valid(["a5", "b5", "c5", "d5", "e5"])


def test_layout_is_garden_start_squares_slots_and_tray_in_dump_order() -> None:
    state = enc.new_game(2, 1, {})
    layout = enc.RULES.layout(state)
    assert len(layout) == 146
    assert layout[:11] == ("a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "i1", "j1", "a2")
    assert layout[99:102] == ("j10", "L1", "L2")
    assert layout[110] == "R1" and layout[120] == "Ba" and layout[129] == "Bj"
    assert layout[130:140] == tuple(f"A{k}" for k in range(1, 11))
    assert layout[140:] == ("T1", "T2", "T3", "T4", "T5", "T6")
    assert enc.RULES.tray_cells(state) == frozenset(layout[140:])


def test_the_wildflower_waits_on_slot_10_and_the_combinatorial_game_covers_the_tube() -> None:
    standard = enc.board(enc.new_game(2, 1, {}))
    assert standard["A10"] == "wild" and standard["A1"] == ""
    assert enc.board(enc.new_game(2, 1, {"tube": False}))["A1"] == "D0"


def test_placement_in_turn_order_then_the_starting_player_moves() -> None:
    state = enc.new_game(3, 5, {})
    for player, cell in zip((1, 2, 3), ("L1", "R4", "Bc"), strict=True):
        assert state.phase is Phase.PLACEMENT and state.to_move == player
        state = enc.apply(state, Place(cell))
    assert state.phase is Phase.TURN and state.to_move == 1
    assert {enc.board(state)[c] for c in ("L1", "R4", "Bc")} == {"M1", "M2", "M3"}


def test_placement_offers_every_free_start_square_not_facing_a_peak() -> None:
    state = position({"a3": "peak", "j7": "peak", "L5": "M2"}, to_move=1)
    assert state.phase is Phase.PLACEMENT
    offered = {step.cell for step in enc.legal_steps(state) if isinstance(step, Place)}
    assert offered == set(enc.START_SQUARES) - {"L3", "R7", "L5"}


def test_a_start_square_facing_a_peak_is_refused_with_the_reason() -> None:
    state = position({"c1": "peak"})
    error = refusal(state, Place("Bc"))
    assert error.rule == "docs/RULINGS.md Enceladus #3"
    assert "c1" in error.reason and "peak" in error.reason
    assert str(error).startswith("@Bc: ")


# ----------------------------------------------------------------------------- moves


def test_a_move_never_passes_a_peak_and_says_so() -> None:
    state = position({"e6": "M1", "g6": "yellow", "h6": "peak", "i6": "blue", "R1": "M2"})
    error = refusal(state, Move("i6"))
    assert error.rule == enc.RULE_MOVE
    assert "peak on h6 blocks the way" in error.reason


def test_a_move_off_the_martians_lines_is_refused() -> None:
    state = position({"e6": "M1", "e9": "red", "f7": "yellow", "R1": "M2"})
    assert "not in a straight line" in refusal(state, Move("f7")).reason


def test_the_adjacent_pick_lists_the_choices_when_missing() -> None:
    state = position({"f2": "M1", "f5": "red", "f6": "yellow", "g5": "blue", "L10": "M2"})
    error = refusal(state, Move("f5"))
    assert error.rule == "docs/RULINGS.md Enceladus #5"
    assert "f6 or g5" in error.reason


def test_the_flower_a_martian_stood_on_can_be_the_adjacent_pick() -> None:
    state = position({"c3": "M1+red", "c4": "blue", "c5": "green", "R9": "M2", "j9": "blue"})
    assert {s.pick for s in enc.legal_steps(state) if isinstance(s, Move) and s.to == "c4"} == {
        "c3",
        "c5",
    }


def test_soliflowers_go_to_the_player_who_moved_and_the_turn_passes() -> None:
    state = position(
        {"j1": "M1", "j3": "red", "i3": "red", "a10": "blue", "c8": "green", "L5": "M2"}
    )
    after = enc.apply(state, Move("j3", "i3"))
    assert after.reserves[0][:5] == (1, 2, 0, 1, 0)
    assert after.to_move == 2


def test_two_martians_move_names_the_martian() -> None:
    state = position(
        {"f2": "M1", "f8": "M1", "f5": "red", "L1": "M2", "L10": "M2", "c1": "green"},
        options={"martians_per_player": 2},
    )
    moves = {enc.notation(s) for s in enc.legal_steps(state) if isinstance(s, Move)}
    assert moves == {"f2-f5", "f8-f5"}
    assert "say which one moves" in refusal(state, Move("f5")).reason


# ----------------------------------------------------------------------------- special actions


def test_each_action_covers_its_slot_with_the_players_disc() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 3, "red": 3}})
    after = enc.apply(state, Action("pick", "blue", ("f5",)))
    assert enc.board(after)["A4"] == "D1"
    after = enc.apply(after, Action("wildflower", "red"))
    assert enc.board(after)["A10"] == ""
    assert after.reserves[0][-1] == 1


def test_the_wildflower_cannot_pay() -> None:
    state = position(BOARD_A, reserves={"1": {"wild": 1, "blue": 3}})
    error = refusal(state, Action("pick", "wild", ("f5",)))
    assert error.rule == enc.RULE_NOTES


def test_a_payment_needs_three_of_the_colour() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 2}})
    assert "you have 2 blue" in refusal(state, Action("pick", "blue", ("f5",))).reason


def test_the_tube_needs_three_flowers_before_paying() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 3}}, tube={"red": 2})
    error = refusal(state, Action("tube", "blue", (), ("blue", "red", "red")))
    assert error.rule == "docs/RULINGS.md Enceladus #7"


def test_tube_draws_are_every_multiset_the_tube_can_give() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 3}}, tube={"red": 2, "yellow": 1})
    draws = {s.drawn for s in enc.legal_steps(state) if isinstance(s, Action) and s.name == "tube"}
    # after paying, the tube holds blue 3, red 2, yellow 1
    assert draws == {
        ("blue", "blue", "blue"),
        ("blue", "blue", "red"),
        ("blue", "blue", "yellow"),
        ("blue", "red", "red"),
        ("blue", "red", "yellow"),
        ("red", "red", "yellow"),
    }


def test_martian_actions_are_refused_outside_the_garden() -> None:
    state = position(
        {"L3": "M1", "a3": "red", "b4": "blue", "R9": "M2"}, reserves={"1": {"blue": 3}}
    )
    error = refusal(state, Action("diagonal", "blue", ("b4",)))
    assert "outside the garden" in error.reason


def test_swap_martian_on_a_flower_is_refused() -> None:
    state = position({"e6": "M1+red", "c3": "peak", "R1": "M2"}, reserves={"1": {"blue": 3}})
    assert refusal(state, Action("swap_martian", "blue", ("c3",))).rule == enc.RULE_UNDER


@pytest.mark.parametrize("colour", enc.DEFAULT_COLOURS)
def test_a_martian_on_a_flower_of_any_colour_is_offered_no_swap(colour: str) -> None:
    state = position({"e6": f"M1+{colour}", "c3": "peak", "R1": "M2"},
                     reserves={"1": {"blue": 3}})
    assert [s for s in enc.legal_steps(state)
            if isinstance(s, Action) and s.name == "swap_martian"] == []


def test_swaps_accept_either_order() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 3}})
    one = enc.apply(state, Action("swap_flowers", "blue", ("a1", "d7")))
    other = enc.apply(state, Action("swap_flowers", "blue", ("d7", "a1")))
    assert one == other


def test_a_bound_martian_alone_acts_for_the_rest_of_the_turn() -> None:
    state = position(
        {"e6": "M1", "f6": "peak", "g6": "green", "g9": "red", "b2": "M1", "b5": "red", "L9": "M2",
         "R9": "M2"},
        reserves={"1": {"blue": 3, "red": 3}},
        options={"martians_per_player": 2},
    )
    after = enc.apply(state, Action("jump", "blue", ("g6",), (), "e6"))
    assert enc.board(after)["g6"] == "M1" and after.bound == enc.LAYOUT.index("g6")
    error = refusal(after, Action("diagonal", "red", ("a3",), (), "b2"))
    assert error.rule == "docs/RULINGS.md Enceladus #8a"
    assert {getattr(s, "martian", None) for s in enc.legal_steps(after)} == {"g6", None}
    assert {s.martian for s in enc.legal_steps(after) if isinstance(s, Move)} == {"g6"}


# ----------------------------------------------------------------------------- the end


def test_the_game_ends_at_once_when_no_move_can_be_made() -> None:
    state = position({"j1": "M1", "c5": "green", "d5": "green", "L8": "M2"})
    assert state.phase is Phase.OVER
    assert list(enc.legal_steps(state)) == []
    result = enc.outcome(state)
    assert result is not None and result.termination == "player 1 cannot reach any flower"
    assert refusal(state, Move("c5", "d5")).rule == enc.RULE_END


def test_an_affordable_action_that_creates_a_move_keeps_the_game_going() -> None:
    state = position(
        {"j1": "M1", "c5": "green", "d5": "green", "L8": "M2"}, reserves={"1": {"blue": 3}}
    )
    assert enc.outcome(state) is None
    assert all(isinstance(s, Action) for s in enc.legal_steps(state))


# ----------------------------------------------------------------------------- hands


def test_hands_from_the_text() -> None:
    assert enc.hand((3, 4, 5, 5, 6, 0)) == (3, 4, 5, 5, 6)
    assert enc.hand((6, 5, 0, 5, 4, 0)) == (0, 4, 5, 5, 6)
    assert enc.hand((0, 4, 5, 5, 6, 0)) < enc.hand((3, 4, 5, 5, 6, 0))
    assert enc.hand((2, 3, 3, 4, 5, 1)) == (3, 3, 3, 4, 5)
    assert enc.hand_text((3, 4, 5, 5, 6)) == "3-4-5-5-6"


def test_rank_points_share_the_higher_value_on_ties() -> None:
    hands = [(3, 3, 4, 5, 6), (3, 3, 4, 5, 6), (2, 5, 5, 5, 5), (0, 6, 6, 6, 6)]
    assert enc.rank_points(hands) == (3, 3, 1, 0)


def test_outcome_ranks_best_first_and_status_shows_hands() -> None:
    state = position(
        {"j1": "M1", "c5": "green", "L8": "M2"},
        reserves={
            "1": {"blue": 1},
            "2": {"blue": 1, "red": 1, "yellow": 1, "green": 1, "purple": 1},
        },
    )
    assert enc.outcome(state) == base.Outcome(
        (2,), "player 1 cannot reach any flower", ((2, "1-1-1-1-1", 1), (1, "0-0-0-0-1", 0))
    )
    assert enc.status(state) == ((1, "0-0-0-0-1"), (2, "1-1-1-1-1"))


# ----------------------------------------------------------------------------- tray and choices


def test_tray_filter_keeps_the_payment_and_the_draw_shown() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 3, "red": 3}}, tube={"yellow": 3})
    steps = list(enc.legal_steps(state))
    assert enc.tray_filter(steps, {}) == steps
    shown = enc.tray_filter(steps, {"red": 3})
    assert shown and all(isinstance(s, Action) and s.pay == "red" and not s.drawn for s in shown)
    tube = enc.tray_filter(steps, {"blue": 3, "yellow": 3})
    assert tube == [Action("tube", "blue", (), ("yellow", "yellow", "yellow"))]



def test_tray_filter_weighs_thousands_of_steps_without_counting_each_ones_flowers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Filtering is on the update a disc is set on the tube's slot, over every payment and
    draw: no count of flowers is built per step, and the steps kept are those whose payment
    and draw, counted, are the tray."""
    built = []

    class Counted(Counter[str]):
        def __init__(self, *args: Any) -> None:
            built.append(1)
            super().__init__(*args)

    state = position(BOARD_A, reserves={"1": {"blue": 3, "red": 4}},
                     tube={"yellow": 3, "red": 2, "blue": 1})
    steps = list(enc.legal_steps(state))
    steps += [Action("tube", pay, (), drawn) for pay in ("blue", "red")
              for drawn in [("red", "yellow"), ("yellow", "red"), ("blue",), ("red", "red")]]
    monkeypatch.setattr(enc, "Counter", Counted)
    for tray in ({"blue": 3, "yellow": 1, "red": 1}, {"red": 5}, {"red": 4, "blue": 1},
                 {"red": 3}, {"yellow": 3}, {"blue": 2, "red": 1}):
        kept = enc.tray_filter(steps, tray)
        assert kept == [s for s in steps if isinstance(s, Action) and Counter(
            (s.pay,) * 3 + s.drawn) == Counter(tray)], tray
    assert built == []


def _calls(work: Callable[[], object]) -> tuple[object, int]:
    """What ``work`` gives and the Python and builtin calls made while it ran."""
    calls = [0]

    def count(frame: object, event: str, arg: object) -> None:
        calls[0] += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        found = work()
    finally:
        sys.setprofile(None)
    return found, calls[0]


def test_the_steps_of_a_disc_on_the_tube_slot_are_drawn_and_filtered_with_no_call_a_step(
) -> None:
    # A disc on the Tube slot: every payment and draw (dozens, often a hundred) is a candidate, and
    # the tray filters them; neither costs a Python call of its own for each step.
    state = position(BOARD_A, reserves={"1": {"blue": 4, "red": 3, "green": 5}},
                     tube={"yellow": 3, "red": 2, "blue": 3, "purple": 1})
    steps = list(enc.candidates(state, frozenset({"A1"})))  # the position's own work done
    again, drawn = _calls(lambda: list(enc.candidates(state, frozenset({"A1"}))))
    assert again == steps and len(steps) > 50
    assert all(isinstance(s, Action) and s.name == "tube" for s in steps)
    assert drawn < 40, drawn
    tray = {"green": 4, "yellow": 1, "purple": 1}
    kept, filtered = _calls(lambda: enc.tray_filter(steps, tray))
    assert kept == [s for s in steps if isinstance(s, Action) and Counter(
        (s.pay,) * 3 + s.drawn) == Counter(tray)] and kept
    assert filtered <= len(steps) + 30, filtered


def test_choice_path_names_the_payment_and_the_draws() -> None:
    assert enc.choice_path(Action("tube", "blue", (), ("red", "red", "yellow"))) == (
        "pay blue",
        "draw 1: red",
        "draw 2: red",
        "draw 3: yellow",
    )
    assert enc.choice_path(Action("pick", "blue", ("f5",))) == ("pay blue",)
    assert enc.choice_path(Move("f5", "f6")) == ()


# ----------------------------------------------------------------------------- candidates


def test_candidates_of_a_touched_slot_are_that_actions_uses_only() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 3}})
    found = list(enc.candidates(state, frozenset({"A7", "a1"})))
    assert found
    assert all(
        isinstance(s, Action) and s.name == "swap_flowers" and "a1" in s.cells for s in found
    )
    assert list(enc.candidates(state, frozenset({"A7", "A8"}))) == []
    assert list(enc.candidates(state, frozenset({"T1"}))) == []


def test_candidates_of_nothing_touched_are_every_legal_step() -> None:
    state = position(BOARD_A, reserves={"1": {"blue": 3}})
    assert set(enc.candidates(state, frozenset())) == set(enc.legal_steps(state))


# ----------------------------------------------------------------------------- notation


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("@L3", Place("L3")),
        ("f5/f6", Move("f5", "f6")),
        ("f5", Move("f5")),
        ("e5-f5/f6", Move("f5", "f6", "e5")),
        ("L3-a3", Move("a3", None, "L3")),
        ("pick:blue:f5", Action("pick", "blue", ("f5",))),
        ("jump:blue:g6", Action("jump", "blue", ("g6",))),
        ("jump:blue", Action("jump", "blue")),
        ("jump:blue:e6-g6", Action("jump", "blue", ("g6",), (), "e6")),
        ("swap_flowers:purple:a1,d7", Action("swap_flowers", "purple", ("a1", "d7"))),
        ("move_flower:red:c3>c9", Action("move_flower", "red", ("c3", "c9"))),
        ("tube:blue:red2,yellow1", Action("tube", "blue", (), ("red", "red", "yellow"))),
        ("wildflower:green", Action("wildflower", "green")),
    ],
)
def test_notation_examples(text: str, step: enc.Step) -> None:
    state = enc.new_game(2, 1, {})
    assert enc.parse_step(state, text) == step
    assert enc.notation(step) == text
    assert enc.RULES.format_step(state, step) == text


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "the step is empty"),
        ("k5", "not a garden square"),
        ("f5/", "not a garden square"),
        ("@Z9", "not a square of the garden"),
        ("dance:blue:f5", "not a special action"),
        ("pick:pink:f5", "not a flower colour"),
        ("pick:blue:f5,f6", "pick names 2 square(s); it takes 1"),
        ("tube:blue:red", "not a draw"),
        ("pick", "name:colour"),
    ],
)
def test_garbage_steps_are_refused_with_a_sentence(text: str, words: str) -> None:
    with pytest.raises(InvalidStepError, match="cannot read the step") as caught:
        enc.parse_step(enc.new_game(2, 1, {}), text)
    assert words in str(caught.value)


def test_a_position_round_trips_through_its_one_line() -> None:
    state = enc.apply(enc.new_game(2, 9, {"mode": "cooperative", "tube": False}), Place("L4"))
    line = enc.format_position(state)
    assert len(line.split()) == 7
    assert enc.parse_position(line) == state


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "0 fields; it has 7"),
        ("x " * 7, "is not an options field"),
        (" ".join(["x"] * 6 + [enc.format_position(enc.new_game(2, 1, {})).split()[-1]]),
         "is not a garden field"),
    ],
)
def test_garbage_positions_are_refused_naming_the_field(text: str, words: str) -> None:
    with pytest.raises(InvalidStepError, match=words):
        enc.parse_position(text)


def test_the_module_is_the_enceladus_game_of_the_package() -> None:
    module = load("enceladus")
    assert module.RULES.name == "enceladus" and module.CASES is enc.CASES
