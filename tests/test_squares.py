"""The Enceladus square grid: chess-style names, neighbours, rays, connectivity."""

from __future__ import annotations

import random

import pytest

from companion.errors import InvalidStepError
from companion.rules.squares import (
    DIAGONAL_RAYS,
    NEIGHBOURS,
    ORTHOGONAL_RAYS,
    SQUARE_NAMES,
    is_connected,
    parse_square,
    square_name,
)


def test_names_run_like_chess_columns_left_to_right_rows_from_the_bottom() -> None:
    assert square_name(0) == "a1"
    assert square_name(9) == "j1"
    assert square_name(10) == "a2"
    assert square_name(99) == "j10"
    assert [parse_square(name) for name in SQUARE_NAMES] == list(range(100))


@pytest.mark.parametrize("text", ["", "k1", "a0", "a11", "A1", "e 6", "L3"])
def test_a_name_outside_the_garden_is_refused_with_a_sentence(text: str) -> None:
    with pytest.raises(InvalidStepError, match="is not a garden square"):
        parse_square(text)


def test_corners_have_two_neighbours_edges_three_inner_squares_four() -> None:
    assert sorted(square_name(n) for n in NEIGHBOURS[parse_square("a1")]) == ["a2", "b1"]
    assert len(NEIGHBOURS[parse_square("e1")]) == 3
    assert sorted(square_name(n) for n in NEIGHBOURS[parse_square("e6")]) == [
        "d6",
        "e5",
        "e7",
        "f6",
    ]


def test_orthogonal_rays_run_outwards_nearest_first_up_to_the_edge() -> None:
    up, right, down, left = ORTHOGONAL_RAYS[parse_square("e6")]
    assert [square_name(s) for s in up] == ["e7", "e8", "e9", "e10"]
    assert [square_name(s) for s in right] == ["f6", "g6", "h6", "i6", "j6"]
    assert [square_name(s) for s in down] == ["e5", "e4", "e3", "e2", "e1"]
    assert [square_name(s) for s in left] == ["d6", "c6", "b6", "a6"]


def test_diagonal_rays_cross_the_whole_garden_from_a_corner() -> None:
    rays = DIAGONAL_RAYS[parse_square("a1")]
    assert [square_name(s) for s in rays[0]] == [f"{c}{n}" for n, c in enumerate("bcdefghij", 2)]
    assert [len(ray) for ray in rays[1:]] == [0, 0, 0]


def test_connectivity_of_square_sets() -> None:
    assert is_connected([])
    assert is_connected([parse_square(n) for n in ("a1", "a2", "b2")])
    assert not is_connected([parse_square(n) for n in ("a1", "b2")])  # diagonal only


def _plain_connected(members: set[int]) -> bool:
    """One region, walked neighbour by neighbour from one member."""
    if not members:
        return True
    start = min(members)
    seen, stack = {start}, [start]
    while stack:
        for n in NEIGHBOURS[stack.pop()]:
            if n in members and n not in seen:
                seen.add(n)
                stack.append(n)
    return seen == members


def test_connectivity_on_a_bit_board_is_that_walked_square_by_square() -> None:
    rng = random.Random(4)
    answers = set()
    for _ in range(600):
        dense = rng.choice((0.3, 0.6, 0.9, 0.95))  # from scattered squares to gardens of 5 peaks
        members = {s for s in range(100) if rng.random() < dense}
        assert is_connected(members) == _plain_connected(members), sorted(members)
        answers.add(is_connected(members))
    assert answers == {True, False}
    # a row end does not join the next row: j1 and a2 are not neighbours
    assert not is_connected([parse_square("j1"), parse_square("a2")])
