"""Gardens of Enceladus: the listing of legal steps is a sequence that makes a step only when
it is read; its length, its items by index, its iteration and ``in`` agree with each other
on random positions of every variant."""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations, combinations_with_replacement
from typing import Any

import pytest

from companion.rules import enceladus as enc
from companion.rules.enceladus import Action, Move, Phase

VARIANTS: tuple[tuple[int, dict[str, Any]], ...] = (
    (2, {}),
    (3, {"tube": False}),
    (4, {"mode": "cooperative"}),
    (5, {}),
    (2, {"martians_per_player": 2}),
)


def _positions(players: int, options: dict[str, Any], seed: int) -> list[enc.State]:
    """Every position of a seeded random game, placements to its end: special actions are
    taken as often as moves, so that flowers pile up in the reserves and many are paid."""
    rng = random.Random(seed)
    state = enc.new_game(players, seed, options)
    seen = [state]
    while enc.outcome(state) is None:
        steps = list(enc.legal_steps(state))
        moves = [s for s in steps if not isinstance(s, Action)]
        state = enc.apply(state, rng.choice(moves if moves and rng.random() < 0.5 else steps))
        seen.append(state)
    return seen


def _near_misses(rng: random.Random, state: enc.State, step: enc.Step) -> list[object]:
    """Steps one field away from a listed ``step``: another payment colour, the cells
    reversed or one cell moved, another Martian, a draw more; most are not listed."""
    colours = state.options.colours
    squares = enc.LAYOUT[:100]
    if isinstance(step, Move):
        return [Move(rng.choice(squares), step.pick, step.martian),
                Move(step.to, rng.choice(squares), step.martian), Move(step.to, None, "L1")]
    if not isinstance(step, Action):
        return [enc.Place(rng.choice(enc.START_SQUARES))]
    out: list[object] = [step._replace(pay=c) for c in colours]
    out.append(step._replace(cells=step.cells[::-1]))
    out.append(step._replace(name=rng.choice(enc.ACTIONS)))
    out.append(step._replace(martian="a1" if step.martian is None else None))
    out.append(step._replace(cells=list(step.cells)))
    out.append(tuple(step))  # a plain tuple of the same fields: equal, as a tuple
    if step.cells:
        cells = list(step.cells)
        cells[rng.randrange(len(cells))] = rng.choice(squares)
        out.append(step._replace(cells=tuple(cells)))
        out.append(step._replace(cells=step.cells + ("a1",)))
        out.append(step._replace(cells=step.cells[:-1]))
        out.append(step._replace(cells=("L3",) * len(cells)))
    if step.drawn:
        out.append(step._replace(drawn=step.drawn[::-1]))
        out.append(step._replace(drawn=(*step.drawn, colours[0])))
    return out


def _among(step: object, listed: set[enc.Step]) -> bool:
    """Whether ``step`` equals a listed step, as ``in`` on a list of them says."""
    try:
        return step in listed
    except TypeError:  # unhashable: a list where a step has a tuple, so equal to none
        return False


@pytest.mark.parametrize(("players", "options"), VARIANTS)
def test_length_index_iteration_and_membership_agree(
    players: int, options: dict[str, Any]
) -> None:
    rng = random.Random(players)
    checked = 0
    for seed in range(3):
        for state in _positions(players, options, seed)[::2]:
            listing = enc.legal_steps(state)
            assert isinstance(listing, Sequence)
            steps = list(listing)
            assert len(listing) == len(steps)
            assert bool(listing) == bool(steps) == (state.phase is not Phase.OVER)
            assert [listing[i] for i in range(len(listing))] == steps
            assert len(set(steps)) == len(steps)  # no step twice
            if not steps:
                continue
            assert listing[-1] == steps[-1] and listing[-len(steps)] == steps[0]
            assert listing[1:4] == steps[1:4]
            for out in (len(steps), -len(steps) - 1):
                with pytest.raises(IndexError):
                    listing[out]
            listed = set(steps)
            for step in rng.sample(steps, min(40, len(steps))):
                assert step in listing
                for other in _near_misses(rng, state, step):
                    assert (other in listing) == _among(other, listed), other
            checked += 1
    assert checked > 50


def test_every_pair_of_flowers_is_one_swap_at_its_own_index() -> None:
    """Swap flowers lists each pair of flowers once, the first before the second, as the
    pairs of :func:`itertools.combinations`; its index is worked out, not searched."""
    state = next(s for s in _positions(2, {}, 7)
                 if s.phase is Phase.TURN and enc.hand(s.reserves[s.to_move - 1])[-1] >= 3
                 and s.discs[enc.ACTIONS.index("swap_flowers")] is None)
    listing = enc.legal_steps(state)
    swaps = [s for s in listing if isinstance(s, Action) and s.name == "swap_flowers"]
    flowers = [enc.LAYOUT[sq] for sq in range(100) if state.garden[sq] >= 0]
    pays = sorted({s.pay for s in swaps}, key=state.options.colours.index)
    assert [s.cells for s in swaps[::len(pays)]] == list(combinations(flowers, 2))
    start = list(listing).index(swaps[0])
    assert listing[start:start + len(swaps)] == swaps


def _plain_reach(state: enc.State) -> list[tuple[tuple[int, int], tuple[int, ...]]]:
    """The normal moves of ``state`` walked square by square from the cells: along each ray
    of each Martian that may move, nearest first, every flower with no Martian on it until
    the first peak; the flowers next to it, with no other Martian on them, to pick."""
    occupied = {cell for cells in state.martians for cell in cells}
    out = []
    for origin in enc._movers(state):
        rays = (enc.ORTHOGONAL_RAYS[origin] if origin < 100
                else (enc.ENTRY_RAYS[origin - 100],))
        for ray in rays:
            for sq in ray:
                if state.garden[sq] == enc.PEAK_SQUARE:
                    break
                if state.garden[sq] >= 0 and sq not in occupied:
                    picks = tuple(n for n in enc.NEIGHBOURS[sq] if state.garden[n] >= 0
                                  and (n == origin or n not in occupied))
                    out.append(((origin, sq), picks))
    return out


@pytest.mark.parametrize(("players", "options"), VARIANTS)
def test_the_moves_read_from_bit_boards_are_those_walked_square_by_square(
    players: int, options: dict[str, Any]
) -> None:
    for seed in range(3):
        for state in _positions(players, options, 300 + seed):
            if state.phase is Phase.TURN:
                reach = enc._reach(state)
                assert list(reach.items()) == _plain_reach(state)
                moves = [(o, to, pick) for (o, to), picks in _plain_reach(state)
                         for pick in picks or (None,)]
                assert [reach.move_at(i) for i in range(reach.moves)] == moves
                assert all(reach[key] == picks and key in reach for key, picks in reach.items())


def _plain_boards(garden: Sequence[int]) -> tuple[int, int]:
    """The flowers and the peaks of ``garden`` as bits, square by square."""
    return (sum(1 << sq for sq, value in enumerate(garden) if value >= 0),
            sum(1 << sq for sq, value in enumerate(garden) if value == enc.PEAK_SQUARE))


@pytest.mark.parametrize(("players", "options"), VARIANTS)
def test_the_bit_boards_a_move_hands_on_are_those_of_the_garden_it_leaves(
    players: int, options: dict[str, Any]
) -> None:
    rng = random.Random(players)
    state = enc.new_game(players, 400 + players, options)
    moves = 0
    while enc.outcome(state) is None:
        step = rng.choice(enc.legal_steps(state))
        state = enc.apply(state, step)  # its end test asked for the boards of the new garden
        assert enc._boards(state.garden) == _plain_boards(state.garden)
        moves += isinstance(step, Move)
    assert moves > 10


def _plain_targets(state: enc.State, name: str, m: int) -> list[int]:
    """The squares Martian action ``name`` may take the Martian on ``m`` to (or swap it
    with), walked square by square from the cells, in the order of the rays."""
    garden = state.garden
    occupied = {cell for cells in state.martians for cell in cells}
    if name == "jump":
        return [ray[1] for ray in enc.ORTHOGONAL_RAYS[m] if len(ray) >= 2
                and garden[ray[0]] == enc.PEAK_SQUARE and garden[ray[1]] != enc.PEAK_SQUARE
                and ray[1] not in occupied]
    if name == "diagonal":
        out = []
        for ray in enc.DIAGONAL_RAYS[m]:
            for sq in ray:
                if garden[sq] == enc.PEAK_SQUARE:
                    break
                if sq not in occupied:
                    out.append(sq)
        return out
    if garden[m] >= 0:
        return []
    return [sq for sq in range(100) if garden[sq] != enc.EMPTY_SQUARE and sq not in occupied]


@pytest.mark.parametrize(("players", "options"), VARIANTS)
def test_the_martian_actions_listed_from_bit_boards_are_those_walked_square_by_square(
    players: int, options: dict[str, Any]
) -> None:
    checked = 0
    for state in _positions(players, options, 500 + players):
        if state.phase is not Phase.TURN:
            continue
        flowers, peaks = enc._boards(state.garden)
        under = enc._under(state.martians)
        for m in enc._movers(state):
            for name in sorted(enc.MARTIAN_ACTIONS):
                if m < 100:
                    found = enc._LISTED_TARGETS[name](state.garden, flowers, peaks, under, m)
                    assert found == _plain_targets(state, name, m), (name, m)
                    checked += len(found)
    assert checked > 100


def test_a_narrowed_group_works_out_only_the_uses_of_the_steps_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The referee asks which steps could have put a disc on the Swap flowers slot and reads
    them in turn: the first step costs a few pairs of flowers, not every pair in the garden."""
    k = enc.ACTIONS.index("swap_flowers")
    state = next(
        s for s in _positions(3, {}, 7)
        if s.phase is Phase.TURN and s.discs[k] is None and enc._affordable(s)
    )
    drawn = 0
    uses = enc._uses

    def counted(*args: Any) -> Any:
        nonlocal drawn
        for use in uses(*args):
            drawn += 1
            yield use

    monkeypatch.setattr(enc, "_uses", counted)
    first = next(iter(enc.candidates(state, frozenset({enc.ACTION_SLOTS[k]}), distinct=True)))
    assert first.name == "swap_flowers"
    assert drawn <= 50  # the garden holds some 90 flowers: some 4,000 pairs


def _plain_operands(state: enc.State, name: str) -> tuple[list[int], list[int]]:
    """The first and second squares of an action on squares, square by square."""
    garden = state.garden
    occupied = {cell for cells in state.martians for cell in cells}
    flowers = [sq for sq in range(100) if garden[sq] >= 0]
    free = [sq for sq in flowers if sq not in occupied]
    peaks = [sq for sq in range(100) if garden[sq] == enc.PEAK_SQUARE]
    empties = [sq for sq in range(100) if garden[sq] == enc.EMPTY_SQUARE and sq not in occupied]
    return {"pick": (flowers, flowers), "swap_flowers": (flowers, flowers),
            "swap_peak_flower": (peaks, free), "move_flower": (flowers, empties),
            "move_peak": (peaks, empties)}[name]


@pytest.mark.parametrize(("players", "options"), VARIANTS)
def test_the_squares_of_the_actions_on_squares_from_bit_boards_are_those_of_the_cells(
    players: int, options: dict[str, Any]
) -> None:
    names = ("pick", "swap_flowers", "swap_peak_flower", "move_flower", "move_peak")
    for state in _positions(players, options, 600 + players):
        if state.phase is Phase.TURN:
            for name in names:
                assert enc._operands(state, name) == _plain_operands(state, name), name


def test_the_draws_of_a_tube_capped_at_three_a_colour_are_those_of_the_whole_tube() -> None:
    rng = random.Random(8)
    colours = enc.DEFAULT_COLOURS
    for _ in range(300):
        tube = tuple(rng.choice((0, 0, 1, 2, 3, 4, 7, 19)) for _ in colours)
        pay = rng.randrange(len(colours))
        after = list(tube)
        after[pay] += enc.PAYMENT
        plain = tuple(
            tuple(colours[c] for c in drawn)
            for drawn in combinations_with_replacement(range(len(colours)), enc.DRAW)
            if all(after[c] >= drawn.count(c) for c in drawn)
        )
        assert enc._paid_draws(colours, tube, pay) == plain
