"""The end of a game of Gardens of Enceladus: "If, on your turn, your Martian cannot reach any
flower, the game ends immediately.  You can still use special actions first to make a move",
as many as the player likes and can pay for (the text, Game end and Your turn; docs/RULINGS.md
Enceladus #8, #8a).

The rules core decides it with a pruned search (``companion/rules/enceladus.py``, the end
test); here it is checked against a plain exhaustive search that tries every special action
with every use, payment colour and tube draw, one after the other, on random positions of a
player who cannot move, with few flowers (so that the plain search stays small).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from companion.rules import enceladus as enc
from companion.rules.enceladus import Action, Phase, State


def exhaustive(state: State) -> bool:
    """Whether some sequence of special actions from ``state`` leaves a normal move: every
    legal action tried after every other, without the end test the rules core applies after
    each (hence the core's raw step and move test)."""
    known: dict[State, bool] = {}

    def search(s: State) -> bool:
        if s not in known:
            known[s] = any(
                enc._has_move(after) or search(after)
                for step in enc.legal_steps(s)
                if isinstance(step, Action)
                for after in (enc.advance(s, step),)
            )
        return known[s]

    return search(state)


def _stuck(
    rng: random.Random, flowers: tuple[int, int], opened: Callable[[], set[int]],
    reserve: Callable[[], tuple[int, ...]],
) -> State:
    """A random position whose player to move has no normal move: 1 or 2 Martians each (2 in
    a two-player game, sometimes bound), a few flowers and peaks, some on a Martian."""
    while True:
        players = rng.choice((2, 2, 3))
        per = 2 if players == 2 and rng.random() < 0.3 else 1
        garden = [enc.EMPTY_SQUARE] * 100
        squares = rng.sample(range(100), 12)
        nf, npk = rng.randint(*flowers), rng.randint(0, 4)
        for sq in squares[:nf]:
            garden[sq] = rng.randrange(5)
        for sq in squares[nf : nf + npk]:
            garden[sq] = enc.PEAK_SQUARE
        spots = squares[nf + npk :] + [100 + rng.randrange(30) for _ in range(2)]
        if rng.random() < 0.25:
            spots.insert(0, squares[0])  # a Martian on a flower
        cells = rng.sample(spots, players * per)
        martians = tuple(tuple(sorted(cells[p * per : (p + 1) * per])) for p in range(players))
        discs = tuple(None if k in opened() else 0 for k in range(len(enc.ACTIONS)))
        bound = martians[0][rng.randrange(2)] if per == 2 and rng.random() < 0.3 else None
        state = State(
            options=enc.read_options({"martians_per_player": per}),
            garden=tuple(garden),
            martians=martians,
            reserves=(reserve(),) + ((0,) * 6,) * (players - 1),
            tube=tuple(rng.randint(0, 2) for _ in range(5)),
            discs=discs,
            to_move=1,
            phase=Phase.TURN,
            bound=bound,
        )
        if not enc._has_move(state):
            return state


def few_actions(rng: random.Random) -> State:
    """One to four actions unused, one or two payments, a few partial colours."""

    def reserve() -> tuple[int, ...]:
        counts = [rng.randint(0, 2) for _ in range(5)]
        for c in rng.sample(range(5), rng.randint(1, 2)):
            counts[c] += 3
        return (*counts, 0)

    return _stuck(rng, (1, 4), lambda: set(rng.sample(range(10), rng.randint(1, 4))), reserve)


def tight_payments(rng: random.Random) -> State:
    """One payment and partial colours, the tube action (and mostly Swap flowers) unused: the
    further payments, if any, come from tube draws and the flowers the actions take."""

    def reserve() -> tuple[int, ...]:
        counts = [rng.choice((0, 1, 2, 2)) for _ in range(5)]
        counts[rng.randrange(5)] += 3
        return (*counts, 0)

    def opened() -> set[int]:
        swap = {enc.ACTIONS.index("swap_flowers")} if rng.random() < 0.7 else set()
        others = [k for k, name in enumerate(enc.ACTIONS) if name not in ("tube", "swap_flowers")]
        return {0} | swap | set(rng.sample(others, rng.randint(1, 3)))

    return _stuck(rng, (2, 4), opened, reserve)


def no_single_action(rng: random.Random) -> State:
    """Two or three of the actions that move something unused (not both Move flower and Move
    peak, so that the plain search stays small), two payments, and no single action that
    gives a move: the game goes on only if a chain of actions does."""
    movers = ["swap_peak_flower", "jump", "diagonal", "swap_martian", "pick"]

    def opened() -> set[int]:
        names = rng.sample([*movers, rng.choice(("move_flower", "move_peak"))], rng.randint(2, 3))
        return {enc.ACTIONS.index(name) for name in names} | set(rng.sample(range(10), 1))

    def reserve() -> tuple[int, ...]:
        counts = [rng.randint(0, 2) for _ in range(5)]
        for c in rng.sample(range(5), 2):
            counts[c] += 3
        return (*counts, 0)

    while True:
        state = _stuck(rng, (1, 4), opened, reserve)
        if not any(exhaustive(_only(state, name)) for name in enc.ACTIONS):
            return state


def _only(state: State, name: str) -> State:
    """``state`` with every action used but ``name`` (if unused)."""
    k = enc.ACTIONS.index(name)
    discs = tuple(disc if i == k else 0 for i, disc in enumerate(state.discs))
    return enc.replace(state, discs=discs)


def agree(make: Callable[[random.Random], State], seed: int, count: int) -> None:
    rng = random.Random(seed)
    answers = []
    for _ in range(count):
        state = make(rng)
        expected = exhaustive(state)
        assert enc._move_makeable(state) is expected, enc.format_position(state)
        answers.append(expected)
    assert True in answers and False in answers  # both kinds of position were met


@pytest.mark.parametrize(
    ("make", "count"), [(few_actions, 40), (no_single_action, 24), (tight_payments, 15)]
)
def test_the_end_test_agrees_with_a_plain_exhaustive_search(
    make: Callable[[random.Random], State], count: int
) -> None:
    agree(make, 1, count)


@pytest.mark.slow
@pytest.mark.parametrize(  # the plain search takes up to a minute on a tight payment
    ("make", "count"), [(few_actions, 300), (no_single_action, 100), (tight_payments, 20)]
)
def test_the_end_test_agrees_with_a_plain_exhaustive_search_on_hundreds(
    make: Callable[[random.Random], State], count: int
) -> None:
    agree(make, 2, count)


def chain(
    reserve: dict[str, int], unused: tuple[str, ...] = (), tube: dict[str, int] | None = None
) -> State:
    """Martian 1 on c3 sees no flower; the only flower in reach is h5, two rows up.  Every
    action is used but Move peak, Jump and ``unused``."""
    left = {"move_peak", "jump", *unused}
    return enc.CASES.position(
        {
            "options": {},
            "position": {
                "players": 2,
                "to_move": 1,
                "cells": {"c3": "M1", "h5": "red", "a10": "peak", "j10": "peak", "L8": "M2"},
                "reserves": {"1": reserve, "2": {}},
                "tube": tube or {},
                "used_actions": [name for name in enc.ACTIONS if name not in left],
            },
        }
    )


def test_a_chain_of_actions_keeps_the_game_going_until_it_is_broken() -> None:
    state = chain({"blue": 3, "green": 3})
    assert state.phase is Phase.TURN  # Move peak to c4, then Jump over it to c5: h5 in line
    assert {s.name for s in enc.legal_steps(state) if isinstance(s, Action)} == {"move_peak"}
    jumped = enc.apply(
        enc.apply(state, Action("move_peak", "blue", ("a10", "c4"))), Action("jump", "green", ())
    )
    assert [s.to for s in enc.legal_steps(jumped) if isinstance(s, enc.Move)] == ["h5"]
    wasted = enc.apply(state, Action("move_peak", "blue", ("a10", "a9")))
    assert wasted.phase is Phase.OVER  # no chain is left: the game ends at once (#8a)


def test_a_chain_needs_a_payment_for_each_action() -> None:
    assert chain({"blue": 3, "green": 2}).phase is Phase.OVER
    assert chain({"blue": 6}).phase is Phase.TURN


def test_a_tube_draw_counts_as_any_draw_the_tube_could_give() -> None:
    # pay blue into the tube, draw green, red and blue: green and red pay for the chain
    tube = {"green": 1, "red": 1, "yellow": 1}
    assert chain({"blue": 3, "green": 2, "red": 2}, ("tube",), tube).phase is Phase.TURN
    assert chain({"blue": 3, "green": 2, "red": 2}, ("tube",)).phase is Phase.OVER


def test_a_pick_can_free_the_square_swap_martian_needs_paid_by_a_tube_draw() -> None:
    # Martian 1 stands on a red flower, so it cannot swap (#8b): pay red for the tube, draw
    # blue, yellow and green, pick the red flower (blue), swap with the peak on d6 (yellow):
    # d1 is then in line.  Only the tube draw pays for the second and third action.
    cells = {"g2": "M1+red", "h10": "M2", "d6": "peak", "g5": "peak", "j8": "peak",
             "c5": "red", "b4": "purple", "d1": "yellow"}
    reserve = {"blue": 2, "red": 4, "yellow": 2, "green": 1}
    tube = {"red": 2, "yellow": 2, "green": 1, "purple": 1}
    used = ["jump", "diagonal", "swap_peak_flower", "move_flower", "move_peak", "wildflower"]
    position = {"players": 2, "to_move": 1, "cells": cells, "reserves": {"1": reserve},
                "tube": tube, "used_actions": used}
    assert enc.CASES.position({"position": position}).phase is Phase.TURN
    no_draw = position | {"tube": {"red": 2}}
    assert enc.CASES.position({"position": no_draw}).phase is Phase.OVER


def test_no_flower_that_could_stand_free_ends_the_game() -> None:
    # every flower is under another Martian, and Move flower is gone: nothing can be reached
    cells = {"e5": "M1", "a1": "M2+red", "j10": "M3+blue", "b2": "peak", "g4": "peak"}
    rich = {"1": dict.fromkeys(("blue", "red", "yellow", "green", "purple"), 9)}
    case = {"players": 3, "to_move": 1, "cells": cells, "reserves": rich, "tube": {}}
    used = {"used_actions": ["move_flower"]}
    assert enc.CASES.position({"position": case | used}).phase is Phase.OVER
    assert enc.CASES.position({"position": case | {"used_actions": []}}).phase is Phase.TURN
