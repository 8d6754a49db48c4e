"""The rules package as the one list of games, boards and layouts, the shape every core shares
(one base class, the gardener games' shared class), and the errors of its lookups."""

from __future__ import annotations

import pytest

from companion import rules
from companion.cli import make_parser
from companion.errors import CompanionError, InvalidPositionError, InvalidStepError
from companion.rules import base, enceladus, gardeners, mars, uranus


def test_an_unknown_game_is_a_companion_error_in_one_sentence() -> None:
    with pytest.raises(CompanionError) as caught:
        rules.load("chess")
    assert isinstance(caught.value, KeyError)  # a lookup, as callers that know KeyError catch
    assert str(caught.value) == "'chess' is not a game; the games are enceladus, mars, uranus"


def test_an_unknown_layout_is_a_companion_error_in_one_sentence() -> None:
    with pytest.raises(CompanionError, match="'uranus-round' is not a board layout; the "
                       "layouts are enceladus, mars, uranus-hexagonal") as caught:
        rules.layout_cells("uranus-round")
    assert isinstance(caught.value, KeyError)


def test_the_layouts_are_each_game_and_each_board_of_a_game_with_several() -> None:
    assert rules.LAYOUTS == ("enceladus", "mars", "uranus-hexagonal", "uranus-trapezoid",
                             "uranus-rhombus")
    assert tuple(uranus.BOARDS) == rules.BOARDS["uranus"]
    for layout in rules.LAYOUTS:
        assert rules.layout_cells(layout)


def test_the_command_line_offers_the_games_and_boards_the_rules_package_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rules, "GAMES", (*rules.GAMES, "chess"))
    monkeypatch.setattr(rules, "BOARDS", {**rules.BOARDS, "uranus": ("round",)})
    for command in ("demo", "sim"):
        args = make_parser().parse_args([command, "--game", "chess", "--board", "round"])
        assert (args.game, args.board) == ("chess", "round")


def test_every_core_derives_from_the_one_base_and_the_gardener_games_share_theirs() -> None:
    assert isinstance(enceladus.RULES, base.Rules)
    assert not isinstance(enceladus.RULES, gardeners.GardenerRules)
    assert isinstance(mars.RULES, gardeners.GardenerRules)
    assert isinstance(uranus.RULES, gardeners.GardenerRules)


def test_uranus_phases_are_an_enum_like_the_other_games() -> None:
    state = uranus.RULES.new_game(2, 1, {})
    assert state.phase is uranus.Phase.PLACEMENT
    text = uranus.RULES.format_position(state)
    assert " phase=placement " in text
    assert uranus.RULES.parse_position(text).phase is uranus.Phase.PLACEMENT


def test_a_uranus_position_with_a_field_short_of_players_says_which() -> None:
    text = uranus.RULES.format_position(uranus.RULES.new_game(2, 1, {}))
    short = text.replace(" scores=0/0 ", " scores=0 ")
    with pytest.raises(InvalidStepError, match="scores gives one entry for each of the 2 players"):
        uranus.RULES.parse_position(short)


def test_a_uranus_position_in_no_phase_is_refused_as_before() -> None:
    text = uranus.RULES.format_position(uranus.RULES.new_game(2, 1, {}))
    with pytest.raises(InvalidPositionError, match="player 1 in phase 'lunch' cannot be to move"):
        uranus.RULES.parse_position(text.replace(" phase=placement ", " phase=lunch "))


def test_a_negative_mars_score_is_a_rules_error() -> None:
    with pytest.raises(InvalidPositionError, match="never negative"):
        mars.track_space(-1)


def test_the_ranking_shares_rank_points_between_equal_keys() -> None:
    outcome = base.ranked([(3, 1), (5, 0), (3, 1)], ["3 pts", "5 pts", "3 pts"], "the end")
    assert outcome.winners == (2,)
    assert outcome.ranking == ((2, "5 pts", 2), (1, "3 pts", 1), (3, "3 pts", 1))
    assert base.ranked([(1,), (1,)], ["a", "b"], "tie").winners == (1, 2)


def test_a_piece_comes_apart_into_its_top_and_the_flower_under_it() -> None:
    assert base.top_and_under("M1+red") == ("M1", "red")
    assert base.top_and_under("M2") == ("M2", "")
    assert base.top_and_under("red") == ("red", "")
    assert base.top_and_under("") == ("", "")
