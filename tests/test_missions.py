"""Mission card values, names and the catalogue (docs/RULINGS.md Uranus #3, #5, #6a).

Values are worked out by hand on the hexagonal board (``max(|q|,|r|,|q+r|) <= 4``).
"""

from __future__ import annotations

from importlib.resources import files

import pytest

from companion.errors import ConfigError, InvalidStepError
from companion.rules.hexes import Hex, hexagon
from companion.rules.missions import (
    ALL_MISSIONS,
    Garden,
    hexagon_stands,
    hexagons_through,
    largest_triangle,
    longest_line,
    mission_value,
    parse_catalogue,
    parse_mission,
)

GRID = hexagon(4)
CATALOGUE = files("companion").joinpath("data", "missions.toml")


def garden(colour: str, *spots: Hex, trees: tuple[Hex, ...] = (), **more: list[Hex]) -> Garden:
    """A hexagonal garden with ``colour`` on ``spots`` and ``more[colour]`` on other spots."""
    flowers = {spot: colour for spot in spots}
    for other, cells in more.items():
        flowers.update(dict.fromkeys(cells, other))
    return Garden(GRID, flowers, frozenset(trees))


def test_the_36_cards_one_of_each_mission() -> None:
    assert len(ALL_MISSIONS) == len(set(ALL_MISSIONS)) == 36
    assert sum(m.startswith("pairs:") for m in ALL_MISSIONS) == 10
    assert sum(m.startswith("triangle:") for m in ALL_MISSIONS) == 5


def test_pairs_are_one_card_in_either_order() -> None:
    assert parse_mission("pairs:red-blue") == parse_mission(" Pairs:blue-red ") == "pairs:blue-red"


@pytest.mark.parametrize("text", ["pairs:red-red", "triangle:orange", "hex", "groups", ""])
def test_unknown_missions_are_refused(text: str) -> None:
    with pytest.raises(InvalidStepError, match="not a mission card"):
        parse_mission(text)


def test_catalogue_file_holds_every_card_once() -> None:
    catalogue = parse_catalogue(CATALOGUE.read_text(encoding="utf-8"), str(CATALOGUE))
    assert sorted(catalogue.values()) == sorted(ALL_MISSIONS)
    assert catalogue["U36"] == "hexagon"


def test_catalogue_names_every_problem() -> None:
    text = '[cards]\nA = "groups:red"\nB = "pairs:red-blue"\nC = "pairs:blue-red"\nD = "tree"\n'
    with pytest.raises(ConfigError) as caught:
        parse_catalogue(text, "cards.toml")
    problems = caught.value.problems
    assert "cards.toml: card C: pairs:blue-red is already card B" in problems
    assert "cards.toml: card D: 'tree' is not a mission" in problems
    assert problems[-1].startswith("cards.toml: no card for biggest_group:blue")


def test_catalogue_refuses_a_card_id_the_board_cannot_send() -> None:
    shipped = CATALOGUE.read_text(encoding="utf-8")
    for bad in ("U 02", "U*02", ""):
        text = shipped.replace('U02 =', f'"{bad}" =')
        with pytest.raises(ConfigError) as caught:
            parse_catalogue(text, "cards.toml")
        assert caught.value.problems[0] == (
            f"cards.toml: card {bad!r}: a card id is 1-32 printable characters without spaces "
            "or '*', as the board's CARD message carries it")


def test_catalogue_needs_a_cards_table() -> None:
    with pytest.raises(ConfigError, match="a \\[cards\\] table"):
        parse_catalogue("U01 = 'groups:red'")
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse_catalogue("[cards")
    with pytest.raises(ConfigError, match="nest too deeply to read"):
        parse_catalogue("U01 = " + "[" * 5000, "cards.toml")


def test_biggest_group_and_groups() -> None:
    # a line of three, an isolated flower and a pair: groups 3, the biggest 3
    view = garden("blue", (0, 0), (1, 0), (2, 0), (0, 2), (-3, 0), (-3, 1))
    assert mission_value(view, "biggest_group:blue") == 3
    assert mission_value(view, "groups:blue") == 3
    assert mission_value(view, "biggest_group:red") == mission_value(view, "groups:red") == 0


def test_groups_connect_through_the_six_neighbours_only() -> None:
    # (0,0)-(1,-1) touch; (1,1) is two steps from both
    assert mission_value(garden("red", (0, 0), (1, -1), (1, 1)), "groups:red") == 2


def test_a_flower_of_another_colour_splits_a_group() -> None:
    view = garden("red", (0, 0), (2, 0), blue=[(1, 0)])
    assert mission_value(view, "groups:red") == 2


@pytest.mark.parametrize(
    ("spots", "length", "value"),
    [
        (((2, -2), (2, -1), (2, 0), (2, 1), (2, 2)), 5, 8),  # axis (0,1)
        (((1, -1), (0, 0), (-1, 1)), 3, 4),  # axis (-1,1)
        (((0, 0), (1, 0), (2, -1), (3, -2)), 3, 4),  # a bend starts a new line
        (((0, 0),), 1, 0),  # a lone flower is no line
        ((), 0, 0),
    ],
)
def test_longest_line_scores_two_per_flower_but_the_first(
    spots: tuple[Hex, ...], length: int, value: int
) -> None:
    view = garden("green", *spots)
    assert longest_line(view, "green") == length
    assert mission_value(view, "longest_line:green") == value


def test_triangle_of_side_one_scores_its_three_spots() -> None:
    view = garden("yellow", (0, 0), (1, 0), (0, 1))
    assert largest_triangle(view, "yellow") == 1
    assert mission_value(view, "triangle:yellow") == 3
    assert mission_value(view, "triangle:yellow", "one_side") == 2


def test_triangle_other_orientation_only_the_biggest_scores() -> None:
    # A, A + 3*(1,0), A + 3*(1,-1) with A = (-1,1); a small one at (-3,0) too
    view = garden("yellow", (-1, 1), (2, 1), (2, -2), (-3, 0), (-2, 0), (-3, 1))
    assert largest_triangle(view, "yellow") == 3
    assert mission_value(view, "triangle:yellow") == 9
    assert mission_value(view, "triangle:yellow", "one_side") == 4


def test_triangle_needs_all_three_corners_on_grid_lines() -> None:
    assert mission_value(garden("yellow", (0, 0), (2, 0), (1, 1)), "triangle:yellow") == 0
    assert mission_value(garden("yellow", (0, 0), (2, 0), (-2, 2)), "triangle:yellow") == 0


def test_edge_and_trees_count_each_flower_once() -> None:
    # (2,1) by the tree (1,1); (4,-4) and (3,1) on the edge; (4,-1) on the edge and by the
    # tree (3,-1): counted once; (0,0) neither
    view = garden("purple", (2, 1), (4, -4), (3, 1), (4, -1), (0, 0), trees=((1, 1), (3, -1)))
    assert mission_value(view, "edge_trees:purple") == 4


def test_pairs_count_connections_not_flowers() -> None:
    # red (0,0) touches three yellows, red (2,-1) touches two of them
    view = garden("red", (0, 0), (2, -1), yellow=[(1, 0), (1, -1), (-1, 0)])
    assert mission_value(view, "pairs:red-yellow") == 5
    assert mission_value(view, "pairs:yellow-red") == 5
    assert mission_value(view, "pairs:red-blue") == 0


HEXAGON_SIDE_2 = ((2, 0), (0, 2), (-2, 2), (-2, 0), (0, -2), (2, -2))


def test_hexagon_of_side_two_stands_and_scores_nothing() -> None:
    view = garden("green", *HEXAGON_SIDE_2)
    assert hexagon_stands(view)
    assert mission_value(view, "hexagon") == 0


def test_hexagon_needs_one_colour_on_all_six_corners() -> None:
    assert not hexagon_stands(garden("green", *HEXAGON_SIDE_2[:5], red=[HEXAGON_SIDE_2[5]]))
    assert not hexagon_stands(garden("green", *HEXAGON_SIDE_2[:5]))


def test_a_turned_hexagon_is_not_on_the_lines_of_the_board() -> None:
    turned = ((1, 1), (-1, 2), (-2, 1), (-1, -1), (1, -2), (2, -1))
    assert not hexagon_stands(garden("green", *turned))


def test_hexagon_at_the_edge_and_through_each_corner() -> None:
    # centre (2,-1), side 2: (4,-1) (2,1) (0,1) (0,-1) (2,-3) (4,-3), all on the board
    corners = ((4, -1), (2, 1), (0, 1), (0, -1), (2, -3), (4, -3))
    view = garden("blue", *corners)
    assert hexagon_stands(view)
    for corner in corners:  # the hexagons with a corner there include this one, once
        assert [set(h) for h in hexagons_through(view.grid, corner)].count(set(corners)) == 1
    assert all(corners not in hexagons_through(view.grid, c) for c in ((2, -1), (3, -1)))
