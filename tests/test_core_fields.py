"""The fields a rules core keeps up step by step instead of working them out again from the
board (the Mars peaks as bits and flowers of each colour, a standing Uranus hexagon, the
hexagons through a spot) equal what the board gives, in every position of random full games
of every variant and player count, and where a step changes them (a hexagon completed by
the flower planted); the states a step makes in place equal those of the plain reading."""

from __future__ import annotations

import itertools
import random
import types
from collections.abc import Sequence
from dataclasses import replace

import pytest

from companion.errors import IllegalMoveError, InvalidArgumentError
from companion.rules import hexes, mars, missions, uranus
from companion.rules.base import evolved

MARS_OPTIONS = (
    {},
    {"peaks": 5, "center_blocks_path": True},
    {"peaks": 12, "plant_score": "connected_only"},
    {"last_flower": "own_reserve", "track_extra_turns": False},
)
URANUS_OPTIONS = tuple({"board": board} for board in uranus.BOARDS)


def peak_bits(state: mars.State) -> int:
    """The peaks of ``state`` as bits, worked out from its cells."""
    return sum(1 << i for i, piece in enumerate(state.cells) if piece == mars.PEAK)


@pytest.mark.parametrize("options", MARS_OPTIONS)
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_mars_peaks_and_flowers_a_step_hands_on_are_those_on_the_board(
        players: int, options: dict[str, object]) -> None:
    rng = random.Random(players)
    rules = mars.RULES
    state = rules.new_game(players, rng.randrange(1 << 30), options)
    assert state.peak_bits == peak_bits(state)
    assert bin(state.peak_bits).count("1") == state.options.peaks
    while rules.outcome(state) is None:
        state = rules.apply(state, rng.choice(list(rules.legal_steps(state))))
        assert state.peak_bits == peak_bits(state) == replace(state).peak_bits
        assert state.on_board == tuple(map(state.cells.count, mars.COLOURS))


def test_a_mars_peak_blocks_the_path_through_it() -> None:
    state = mars.position(2, {"1,0": "M1", "3,0": "peak", "-3,3": "M2"}, pool=[3, 1],
                          reserves={1: {"red": 3}, 2: {"red": 3}})
    assert state.peak_bits == peak_bits(state) != 0
    assert mars.destinations(state, 3) == {(1, 3), (-2, 3), (-2, 0), (1, -3), (4, -3)}
    with pytest.raises(mars.IllegalMoveError, match="the peak on 3,0 is in the way"):
        mars.RULES.apply(state, mars.Move(3, (4, 0), "red"))


def standing(state: uranus.State) -> bool:
    """Whether a hexagon stands on the board of ``state``, worked out from its flowers."""
    return missions.hexagon_stands(uranus.garden(state))


@pytest.mark.parametrize("options", URANUS_OPTIONS)
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_uranus_hexagon_a_step_hands_on_is_the_one_on_the_board(
        players: int, options: dict[str, object]) -> None:
    rng = random.Random(players)
    rules = uranus.RULES
    state = rules.new_game(players, rng.randrange(1 << 30), options)
    while rules.outcome(state) is None:
        steps = list(rules.legal_steps(state))
        moves = [s for s in steps if isinstance(s, uranus.Move)]  # mostly moves: flowers
        state = rules.apply(state, rng.choice(moves if moves and rng.random() < 0.9 else steps))
        assert state.standing_hexagon == standing(state) == replace(state).standing_hexagon


RING = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))


@pytest.mark.parametrize("last", RING)
def test_the_flower_that_completes_a_hexagon_makes_it_stand(last: tuple[int, int]) -> None:
    cells = {uranus.hex_name(c): "purple" for c in RING if c != last}
    start = uranus.hex_name((last[0] * 3, last[1] * 3))
    state = uranus.CASES.position({"options": {}, "position": {
        "players": 2, "to_move": 1, "board": "hexagonal",
        "cells": {**cells, start: "M1", "-4,4": "M2"},
        "reserves": {"1": {"purple": 2}, "2": {"red": 1}}, "scores": {"1": 0, "2": 0},
        "hands": {"1": ["groups:red"], "2": ["groups:blue"]}, "decks": [5, 5, 5, 5],
    }})
    assert not state.standing_hexagon
    after = uranus.RULES.apply(state, uranus.Move(last, "purple"))
    assert after.standing_hexagon and standing(after) and after.phase == "turn"
    won = uranus.RULES.apply(after, uranus.Score("groups:blue", 1, "hexagon"))
    assert (won.phase, won.hexagon_winner) == ("over", 2)  # drawn while a hexagon stands


def mars_plain_moves(state: mars.State) -> set[mars.Step]:
    """The moves of a Mars position in the move phase by the text itself: each pool die
    along each ray of the gardener, the path tested hex by hex (``mars._obstacle``), every
    colour of the reserve onto an empty hex."""
    start = state.gardeners[state.to_move - 1]
    assert start is not None
    reserve = state.reserve(state.to_move)
    others = frozenset(g for p, g in enumerate(state.gardeners, 1)
                       if g is not None and p != state.to_move)
    moves: set[mars.Step] = set()
    for die in set(state.pool):
        for ray in mars.GRID.rays[start]:
            if len(ray) < die or mars._obstacle(state, ray[:die], others) is not None:
                continue
            to = ray[die - 1]
            if state.at(to):
                moves.add(mars.Move(die, to))
            else:
                moves |= {mars.Move(die, to, colour) for colour, n in reserve.items() if n}
    return moves or {mars.Discard(die) for die in state.pool}


@pytest.mark.parametrize("options", MARS_OPTIONS)
def test_the_mars_moves_listed_from_the_routes_are_those_of_the_text(
        options: dict[str, object]) -> None:
    rng = random.Random(7)
    rules = mars.RULES
    for players in (2, 3, 4, 5):
        state = rules.new_game(players, rng.randrange(1 << 30), options)
        while rules.outcome(state) is None:
            steps = list(rules.legal_steps(state))
            if state.phase is mars.Phase.MOVE:
                assert len(set(steps)) == len(steps)
                assert set(steps) == mars_plain_moves(state)
            state = rules.apply(state, rng.choice(steps))


def uranus_plain_moves(state: uranus.State) -> set[uranus.Move]:
    """The moves of a Uranus turn by the text itself: along each ray up to the first tree,
    every spot without a gardener, every colour of the reserve onto an empty spot."""
    here = state.gardeners[state.to_move - 1]
    assert here is not None
    grid, index = state.shape.grid, state.shape.index
    reserve = state.reserves[state.to_move - 1]
    moves: set[uranus.Move] = set()
    for ray in grid.rays[here]:
        for spot in ray:
            if spot in state.trees:
                break
            if spot in state.gardeners:
                continue
            if state.flowers[index[spot]]:
                moves.add(uranus.Move(spot))
            else:
                moves |= {uranus.Move(spot, c) for c, n in zip(uranus.COLOURS, reserve,
                                                                strict=True) if n}
    return moves


@pytest.mark.parametrize("options", URANUS_OPTIONS)
def test_the_uranus_moves_listed_are_those_of_the_text_and_a_state_evolved_is_one_replaced(
        options: dict[str, object]) -> None:
    rng = random.Random(8)
    rules = uranus.RULES
    for players in (2, 3, 4, 5):
        state = rules.new_game(players, rng.randrange(1 << 30), options)
        while rules.outcome(state) is None:
            steps = list(rules.legal_steps(state))
            if state.phase is uranus.Phase.TURN:
                moves = [s for s in steps if isinstance(s, uranus.Move)]
                assert len(set(moves)) == len(moves)
                assert set(moves) == uranus_plain_moves(state)
                here = uranus.hex_name(state.gardeners[state.to_move - 1] or (0, 0))
                assert list(rules.candidates(state, frozenset({here}))) == moves
            after = rules.apply(state, rng.choice(steps))
            changed = {"scores": after.scores, "to_move": after.to_move,
                       "flowers": after.flowers, "discarded": after.discarded}
            assert evolved(state, **changed) == replace(state, **changed)
            state = after


@pytest.mark.parametrize("options", URANUS_OPTIONS)
def test_a_uranus_move_is_applied_exactly_when_the_text_allows_it(
        options: dict[str, object]) -> None:
    # apply finds the ray to the landing and tests the spots passed at once: every move to
    # every spot, planting each colour or nothing, is taken or refused as the text says
    rng = random.Random(10)
    rules = uranus.RULES
    for players in (2, 3, 4, 5):
        state = rules.new_game(players, rng.randrange(1 << 30), options)
        while rules.outcome(state) is None:
            steps = list(rules.legal_steps(state))
            if state.phase is uranus.Phase.TURN and rng.random() < 0.2:
                allowed = uranus_plain_moves(state)
                for spot in (*state.shape.grid.cells, (9, 9)):
                    for plant in (None, *uranus.COLOURS):
                        move = uranus.Move(spot, plant)
                        if move in allowed:
                            rules.apply(state, move)
                        else:
                            with pytest.raises(IllegalMoveError):
                                rules.apply(state, move)
            state = rules.apply(state, rng.choice(steps))


@pytest.mark.parametrize("core", [mars, uranus], ids=["mars", "uranus"])
def test_a_gardener_game_lists_its_steps_in_one_sequence_read_as_often_as_asked(
        core: types.ModuleType) -> None:
    # the listing is handed over as made (no iterator over it for a caller to copy again)
    rng = random.Random(11)
    rules = core.RULES
    for setup in range(8):
        state = rules.new_game(2 + setup % 4, rng.randrange(1 << 30), {})
        while True:
            steps = rules.legal_steps(state)
            assert isinstance(steps, Sequence)
            assert list(steps) == list(steps) == [steps[i] for i in range(len(steps))]
            if rules.outcome(state) is not None:
                assert not steps
                break
            state = rules.apply(state, rng.choice(steps))


@pytest.mark.parametrize("options", URANUS_OPTIONS)
def test_the_uranus_cards_listed_to_score_are_those_a_player_may_hold(
        options: dict[str, object]) -> None:
    # the scores are memoised by what is known of the cards: each listing equals every card
    # the player may hold from every deck holding cards, the Hexagon not while one stands
    rng = random.Random(12)
    rules = uranus.RULES
    for players, open_hands in itertools.product((2, 3, 4, 5), (False, True)):
        state = rules.new_game(players, rng.randrange(1 << 30), options)
        if open_hands:
            deal = uranus.deal_missions(players, state.options.board, rng.randrange(1 << 30))
            state = uranus.table_setup(state, hands=deal.hands)
        while rules.outcome(state) is None:
            steps = list(rules.legal_steps(state))
            if state.phase is uranus.Phase.TURN:
                standing = uranus.hexagon_standing(state)
                plain = [uranus.Score(card, deck)
                         for card in missions.ALL_MISSIONS
                         if uranus.may_hold(state, state.to_move, card)
                         and not (standing and card == missions.HEXAGON)
                         for deck, left in enumerate(state.decks, 1) if left]
                assert [s for s in steps if isinstance(s, uranus.Score)] == plain
            step = rng.choice(steps)
            if open_hands and isinstance(step, uranus.Score):
                unseen = set(missions.ALL_MISSIONS) - uranus.seen(state) - {step.mission}
                step = uranus.Score(step.mission, step.draw, rng.choice(sorted(unseen)))
            state = rules.apply(state, step)


def test_evolving_a_state_refuses_a_name_that_is_no_field() -> None:
    state = uranus.RULES.new_game(2, 1, {})
    with pytest.raises(InvalidArgumentError, match="State has no field colour, size"):
        evolved(state, to_move=2, colour="red", size=3)


def uranus_plain_after(state: uranus.State, after: uranus.State) -> uranus.State:
    """The state after a step from ``state`` by the plain reading, given the parts the step
    changed (those of ``after``): a turn (a move or a score) hands the turn on, unless it
    won by the Hexagon, and :func:`uranus.settle` or :func:`uranus.end` ends the game as the
    text says; a card revealed at the end passes to the next player with unknown cards, or
    the game is over; each made by ``replace``, which works the standing hexagon out."""
    parts = {"flowers": after.flowers, "gardeners": after.gardeners,
             "reserves": after.reserves, "scores": after.scores, "hands": after.hands,
             "unknown": after.unknown, "decks": after.decks, "discarded": after.discarded,
             "no_plant_run": after.no_plant_run}
    if state.phase is uranus.Phase.REVEAL:
        showing = next((p for p, n in enumerate(after.unknown, 1) if n), 0)
        if showing:
            return replace(state, **parts, to_move=showing)
        return replace(state, **parts, phase=uranus.Phase.OVER)
    if after.hexagon_winner and not state.hexagon_winner:
        return uranus.end(replace(state, **parts), "hexagon", after.hexagon_winner)
    turned = replace(state, **parts, to_move=state.to_move % state.players + 1)
    return uranus.settle(turned, check_hexagon=False)


@pytest.mark.parametrize("options", URANUS_OPTIONS)
def test_the_uranus_state_after_a_turn_or_a_card_revealed_is_the_plain_one(
        options: dict[str, object]) -> None:
    rng = random.Random(9)
    rules = uranus.RULES
    for players, open_hands in itertools.product((2, 3, 4, 5), (False, True)):
        state = rules.new_game(players, rng.randrange(1 << 30), options)
        if open_hands:  # every card known, each drawn named: a game over with no reveal
            deal = uranus.deal_missions(players, state.options.board, rng.randrange(1 << 30))
            state = uranus.table_setup(state, hands=deal.hands)
        while rules.outcome(state) is None:
            step = rng.choice(list(rules.legal_steps(state)))
            if open_hands and isinstance(step, uranus.Score):
                unseen = set(missions.ALL_MISSIONS) - uranus.seen(state) - {step.mission}
                step = uranus.Score(step.mission, step.draw, rng.choice(sorted(unseen)))
            after = rules.apply(state, step)
            if isinstance(step, uranus.Move | uranus.Score | uranus.Reveal):
                plain = uranus_plain_after(state, after)
                assert after == plain
                assert after.standing_hexagon == plain.standing_hexagon
            state = after


@pytest.mark.parametrize("board", uranus.BOARDS)
def test_the_uranus_hexagons_through_a_spot_are_those_of_the_missions(board: str) -> None:
    shape = uranus.BOARDS[board]
    places = tuple(range(len(shape.grid)))  # a getter of corners gives their places
    for spot in shape.grid.cells:
        getters = uranus._HEXAGONS_THROUGH[board][shape.index[spot]]
        found = [frozenset(corners(places)) for corners in getters]
        assert len(set(found)) == len(found)
        assert set(found) == {frozenset(map(shape.index.__getitem__, corners))
                              for corners in missions.hexagons_through(shape.grid, spot)}


@pytest.mark.parametrize("grid", [mars.GRID, *(shape.grid for shape in uranus.BOARDS.values()),
                                  uranus.HexGrid([(0, 0), (1, 0), (3, 0), (4, 0), (2, 1)])])
def test_a_ray_walked_once_along_its_line_is_the_walk_from_its_cell(grid: uranus.HexGrid) -> None:
    for cell in grid.cells:
        for direction, ray in zip(hexes.DIRECTIONS, grid.rays[cell], strict=True):
            walk, at = [], hexes.add(cell, direction)
            while at in grid:
                walk.append(at)
                at = hexes.add(at, direction)
            assert ray == tuple(walk)
