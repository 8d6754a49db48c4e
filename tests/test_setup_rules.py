"""Setups laid out by hand: every setup condition of each rules core, broken one at a time,
is named with the cells that break it; a legal setup is adopted; reserves dealt by hand are
checked against the deal and the bag."""

from __future__ import annotations

import random

import pytest

from companion.errors import IllegalMoveError, InvalidPositionError
from companion.rules import enceladus, mars, uranus
from companion.rules.base import SetupProblem
from companion.rules.gardeners import FLOWERS_EACH
from companion.rules.squares import SQUARE_NAMES


def _enceladus(seed: int = 3, **options: object) -> tuple[enceladus.State, dict[str, str]]:
    state = enceladus.new_game(2, seed, options)
    return state, enceladus.board(state)


def _only(problems: list[SetupProblem], words: str) -> SetupProblem:
    assert len(problems) == 1, problems
    assert words in problems[0].text, problems[0].text
    return problems[0]


def _squares(board: dict[str, str], piece: str) -> list[str]:
    return [name for name in SQUARE_NAMES if board[name] == piece]


# ----------------------------------------------------------------------------- Enceladus


def test_enceladus_seeded_setup_has_no_problem_and_adopting_another_takes_its_garden() -> None:
    state, board = _enceladus(seed=3)
    assert enceladus.setup_problems(state, board) == []
    other = enceladus.board(enceladus.new_game(2, 4, {}))
    adopted = enceladus.RULES.adopt_setup(state, other)
    assert enceladus.board(adopted) == other
    assert adopted.reserves == state.reserves and adopted.phase == state.phase


def test_enceladus_an_empty_square_is_named() -> None:
    state, board = _enceladus()
    a_red = _squares(board, "red")[0]
    board[a_red] = ""
    problems = enceladus.setup_problems(state, board)
    assert problems[0] == SetupProblem(
        f"Every square of the garden holds a flower or a peak: {a_red} does not.", (a_red,))
    # the red flower missing is the second problem, and the empty square is where it goes
    assert problems[1].text == "The garden has 18 red flowers, 1 too few: it takes 19."
    assert problems[1].cells == (a_red,)
    assert len(problems) == 2


def test_enceladus_twenty_of_a_colour_names_that_colours_squares() -> None:
    state, board = _enceladus()
    blue = _squares(board, "blue")[0]
    board[blue] = "red"
    problems = enceladus.setup_problems(state, board)
    reds = tuple(_squares(board, "red"))
    assert len(reds) == 20
    assert SetupProblem("The garden has 20 red flowers, 1 too many: it takes 19.",
                        reds) in problems
    assert SetupProblem("The garden has 18 blue flowers, 1 too few: it takes 19.",
                        reds) in problems
    assert len(problems) == 2


def test_enceladus_a_sixth_peak_names_the_peaks() -> None:
    state, board = _enceladus()
    green = next(n for n in _squares(board, "green") if n[0] in "defg" and n[1:] in "456")
    board[green] = "peak"
    problems = enceladus.setup_problems(state, board)
    peaks = tuple(_squares(board, "peak"))
    assert SetupProblem("The garden has 6 peaks, 1 too many: it takes 5.", peaks) in problems
    assert {p.text for p in problems} == {
        "The garden has 6 peaks, 1 too many: it takes 5.",
        "The garden has 18 green flowers, 1 too few: it takes 19."}


def test_enceladus_a_corner_fenced_off_by_peaks_names_the_squares_cut_off() -> None:
    state, board = _enceladus()
    # peaks on a2 and b1 cut a1 off; the two peaks they replace take the flowers
    peaks = _squares(board, "peak")
    moved = [p for p in peaks if p not in ("a2", "b1")][:2]
    for square, peak in zip(("a2", "b1"), moved, strict=False):
        board[peak], board[square] = board[square], "peak"
    assert board["a1"] != "peak"  # seed 3 leaves the corner a flower, cut off now
    problem = _only(enceladus.setup_problems(state, board), "fence off")
    assert problem == SetupProblem(
        "Peaks fence off a1 from the rest of the garden: move a peak.", ("a1",))


def test_enceladus_a_martian_on_a_start_square_is_named() -> None:
    state, board = _enceladus()
    board["L4"], board["Bc"] = "M1", "red"
    problem = _only(enceladus.setup_problems(state, board), "start squares")
    assert problem.cells == ("L4", "Bc")
    assert problem.text == ("The start squares are empty before the Martians are placed: "
                            "clear L4 and Bc.")


def test_enceladus_the_action_strip_must_be_as_a_game_starts() -> None:
    state, board = _enceladus(tube=False)
    board["A1"], board["A10"], board["A3"] = "", "", "D1"
    problem = _only(enceladus.setup_problems(state, board), "action strip")
    assert problem.cells == ("A1", "A3", "A10")
    assert "the wildflower on A10 and the cover on A1" in problem.text


def test_enceladus_a_flower_left_on_the_show_tray_is_named() -> None:
    state, board = _enceladus()
    board["T1"], board["T4"] = "red", "blue"
    problem = _only(enceladus.setup_problems(state, board), "show tray")
    assert problem.cells == ("T1", "T4")
    assert problem.text == "The show tray is empty at the start: clear T1 and T4."


def test_enceladus_a_setup_with_problems_is_refused_in_their_words() -> None:
    state, board = _enceladus()
    board["L1"] = "M2"
    with pytest.raises(InvalidPositionError, match="clear L1"):
        enceladus.RULES.adopt_setup(state, board)


# ----------------------------------------------------------------------------- Mars


def test_mars_an_empty_board_is_adopted_and_anything_on_it_is_named() -> None:
    state = mars.RULES.new_game(2, 1, {})
    empty = dict.fromkeys(mars.RULES.layout(state), "")
    assert mars.RULES.setup_problems(state, empty) == []
    assert mars.RULES.adopt_setup(state, empty) == state
    board = {**empty, "2,-1": "red", "0,0": "M1"}
    problem = _only(mars.RULES.setup_problems(state, board), "empty at the start")
    assert problem == SetupProblem("The board is empty at the start: clear 2,-1 and 0,0.",
                                   ("2,-1", "0,0"))


def test_mars_peaks_variant_names_peaks_too_many_touching_or_central() -> None:
    state = mars.RULES.new_game(2, 1, {"peaks": 2})
    empty = dict.fromkeys(mars.RULES.layout(state), "")
    board = {**empty, "2,0": "peak", "-3,1": "peak"}
    adopted = mars.RULES.adopt_setup(state, board)
    assert {c for c, p in mars.RULES.board(adopted).items() if p == "peak"} == {"2,0", "-3,1"}
    three = {**board, "4,-4": "peak"}
    assert mars.RULES.setup_problems(state, three) == [SetupProblem(
        "The board has 3 peaks, 1 too many: the game is set for 2.", ("4,-4", "2,0", "-3,1"))]
    touching = {**empty, "2,0": "peak", "3,0": "peak"}
    assert mars.RULES.setup_problems(state, touching) == [SetupProblem(
        "No two peaks stand next to each other: 2,0 and 3,0 do.", ("2,0", "3,0"))]
    central = {**empty, "0,0": "peak", "3,0": "peak"}
    assert mars.RULES.setup_problems(state, central)[0] == SetupProblem(
        "The board is empty at the start but for its peaks, off the central space: clear 0,0.",
        ("0,0",))
    one = {**empty, "3,0": "peak"}
    assert mars.RULES.setup_problems(state, one) == [SetupProblem(
        "The board has 1 peaks, 1 too few: the game is set for 2.", ())]


# ----------------------------------------------------------------------------- Uranus


def _uranus(board: str) -> tuple[uranus.State, dict[str, str]]:
    state = uranus.RULES.new_game(3, 5, {"board": board})
    return state, dict.fromkeys(uranus.RULES.layout(state), "")


@pytest.mark.parametrize(("board", "trees"), [("hexagonal", ("0,0",)),
                                             ("trapezoid", ("2,-3", "4,-5")),
                                             ("rhombus", ("2,2", "3,1", "4,1"))])
def test_uranus_trees_off_the_edge_of_the_chosen_board_are_adopted(
        board: str, trees: tuple[str, ...]) -> None:
    state, empty = _uranus(board)
    laid = {**empty, **dict.fromkeys(trees, "tree")}
    assert uranus.RULES.setup_problems(state, laid) == []
    adopted = uranus.RULES.adopt_setup(state, laid)
    assert {c for c, p in uranus.RULES.board(adopted).items() if p == "tree"} == set(trees)
    assert adopted.reserves == state.reserves


def test_uranus_a_tree_on_the_edge_is_named() -> None:
    state, empty = _uranus("trapezoid")
    problem = _only(uranus.RULES.setup_problems(state, {**empty, "0,0": "tree",
                                                        "3,-4": "tree"}), "edge")
    assert problem == SetupProblem(
        "Trees never stand on the edge of the garden: move 0,0 inwards.", ("0,0",))


def test_uranus_the_wrong_number_of_trees_is_named() -> None:
    state, empty = _uranus("hexagonal")
    two = {**empty, "0,0": "tree", "1,0": "tree"}
    # the count on the board comes first, as the Enceladus flowers and peaks say it
    assert uranus.RULES.setup_problems(state, two) == [
        SetupProblem("The garden has 2 trees, 1 too many: the hexagonal board takes 1.",
                     ("0,0", "1,0"))]
    none = uranus.RULES.setup_problems(state, empty)
    assert none == [SetupProblem(
        "The garden has 0 trees, 1 too few: the hexagonal board takes 1, on spots off the "
        "edge.", ())]
    state, empty = _uranus("trapezoid")
    assert "has 1 tree, " in uranus.RULES.setup_problems(state, {**empty, "2,-3": "tree"})[0].text


def test_uranus_flowers_or_gardeners_on_the_board_are_named() -> None:
    state, empty = _uranus("hexagonal")
    problem = _only(uranus.RULES.setup_problems(
        state, {**empty, "0,0": "tree", "1,1": "red", "-2,0": "M2"}), "only its trees")
    assert problem.cells == ("-2,0", "1,1")


# ----------------------------------------------------------------------------- reserves


def _random_deal(players: int, colours: tuple[str, ...], per_colour: int, each: int,
                 seed: int) -> list[dict[str, int]]:
    bag = [c for c in colours for _ in range(per_colour)]
    random.Random(seed).shuffle(bag)
    return [{c: bag[p * each:(p + 1) * each].count(c) for c in colours}
            for p in range(players)]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_deal_from_the_bag_adds_up_in_both_games(players: int) -> None:
    deal = _random_deal(players, mars.COLOURS, 10, FLOWERS_EACH[players], players)
    fresh = mars.RULES.new_game(players, 1, {})
    assert mars.RULES.reserve_problems(fresh, deal) == []
    state = mars.RULES.deal_reserves(fresh, deal)
    assert state.reserves == tuple(tuple(r[c] for c in mars.COLOURS) for r in deal)
    deal = _random_deal(players, uranus.COLOURS, 12, FLOWERS_EACH[players], players)
    fresh_uranus = uranus.RULES.new_game(players, 1, {})
    assert uranus.RULES.reserve_problems(fresh_uranus, deal) == []
    state_uranus = uranus.RULES.deal_reserves(fresh_uranus, deal)
    assert state_uranus.reserves == tuple(tuple(r[c] for c in uranus.COLOURS) for r in deal)


def test_what_does_not_add_up_in_a_deal_is_said_in_a_sentence() -> None:
    deal = _random_deal(2, mars.COLOURS, 10, 30, 1)
    wrong = [{**deal[0], "red": deal[0]["red"] + 1}, deal[1]]
    assert mars.RULES.reserve_problems(mars.RULES.new_game(2, 1, {}), wrong) == [
        "P1 has 31 flowers: with 2 players each is dealt 30.",
        "The reserves hold 11 red flowers: the bag has only 10."]
    three = uranus.RULES.new_game(3, 1, {})
    assert uranus.RULES.reserve_problems(three, [{"red": 20}, {"blue": 20}, {"pink": 20}]) == [
        "P3's reserve names pink: the colours are blue, red, yellow, green, purple.",
        "P3 has 0 flowers: with 3 players each is dealt 20.",
        "The reserves hold 20 blue flowers: the bag has only 12.",
        "The reserves hold 20 red flowers: the bag has only 12."]
    two = uranus.RULES.new_game(2, 1, {})
    assert uranus.RULES.reserve_problems(two, [{"red": 12, "blue": 12, "green": 6}]) == [
        "2 players are dealt flowers, not 1."]
    with pytest.raises(InvalidPositionError, match="P1 has 31 flowers"):
        mars.RULES.deal_reserves(mars.RULES.new_game(2, 1, {}), wrong)


# ----------------------------------------------------------------------------- Uranus hands


def test_uranus_cards_registered_face_down_become_known_and_are_refused_when_they_cannot_be(
) -> None:
    state = uranus.RULES.new_game(2, 1, {})
    step = uranus.RULES.parse_step(state, "show:triangle:red")
    after = uranus.RULES.apply(state, step)
    assert (after.hands[0], after.unknown, after.to_move, after.phase) == (
        ("triangle:red",), (4, 5), 1, "placement")
    assert uranus.RULES.parse_position(uranus.RULES.format_position(after)) == after
    with pytest.raises(IllegalMoveError, match="registered already"):
        uranus.RULES.apply(after, step)
    for mission in ("groups:red", "groups:blue", "hexagon", "pairs:blue-red"):
        after = uranus.RULES.apply(after, uranus.Reveal(mission))
    with pytest.raises(IllegalMoveError, match="all 5 of player 1's cards are registered"):
        uranus.RULES.apply(after, uranus.Reveal("groups:green"))
    placed = uranus.RULES.apply(after, next(iter(uranus.RULES.legal_steps(after))))
    with pytest.raises(IllegalMoveError, match="player 1 holds the triangle:red card"):
        uranus.RULES.apply(placed, step)
