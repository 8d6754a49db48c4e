"""What holds in every position of every game, over seeded random games of each game and
of every value of every option (docs/RULINGS.md Enceladus #10, Mars #10, Uranus #7) and every
player count: flowers are neither made nor lost (board, reserves, tube); a score moves only
by the gains and losses the rules give (recomputed here from the texts; in Enceladus, where
the score is the hand, the reserves and the final hands); taking a step back and playing it
again, as the daemon's undo and redo do from its record of states, gives the same state, also
through the notation a journal keeps; every step written in the game's notation reads back as
the same step; every listed legal step applies, and a step applies only if it was listed.

A few dozen games run by default; ``-m slow`` plays hundreds.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from companion.errors import IllegalMoveError, InvalidStepError
from companion.rules import enceladus, mars, uranus
from companion.rules.missions import ALL_MISSIONS

History = list[tuple[Any, Any, Any]]
"""``(state before, step, state after)`` for every step of a game."""


# ----------------------------------------------------------------------------- the games


def enceladus_game(seed: int) -> tuple[Any, History]:
    """A game of Enceladus: the variant from the seed, moves preferred to special actions."""
    rng = random.Random(seed)
    options: dict[str, Any] = [
        {},
        {"mode": "cooperative"},
        {"martians_per_player": 2},
        {"tube": False},
    ][seed % 4]
    players = 2 if options.get("martians_per_player") else 2 + (seed + seed // 4) % 4
    state = enceladus.new_game(players, seed, options)
    history: History = []
    while enceladus.outcome(state) is None:
        steps = list(enceladus.legal_steps(state))
        moves = [s for s in steps if not isinstance(s, enceladus.Action)]
        step = rng.choice(moves if moves and rng.random() < 0.8 else steps)
        after = enceladus.apply(state, step)
        history.append((state, step, after))
        state = after
    return enceladus.RULES, history


MARS_OPTIONS = [
    {},
    {"plant_score": "connected_only", "center_blocks_path": True},
    {"last_flower": "own_reserve", "track_extra_turns": False},
    {"last_flower_extra_turn": False, "peaks": 5},
]


def mars_game(seed: int) -> tuple[Any, History]:
    """A game of Mars with the options from the seed; the dice rolled by the test."""
    rng = random.Random(seed)
    rules = mars.RULES
    players = 2 + (seed + seed // len(MARS_OPTIONS)) % 4  # each option set with two counts
    state = rules.new_game(players, seed, MARS_OPTIONS[seed % len(MARS_OPTIONS)])
    history: History = []
    while rules.outcome(state) is None:
        if state.phase is mars.Phase.ROLL:
            step: mars.Step = mars.Roll(
                tuple(rng.randint(1, 6) for _ in range(mars.dice_to_roll(state)))
            )
        else:
            step = rng.choice(list(rules.legal_steps(state)))
        after = rules.apply(state, step)
        history.append((state, step, after))
        state = after
    return rules, history


def uranus_game(seed: int) -> tuple[Any, History]:
    """A game of Uranus on the board and with the triangle scoring from the seed, open hands,
    cards drawn from the decks as dealt; a card scored now and then."""
    rng = random.Random(seed)
    rules = uranus.RULES
    board = sorted(uranus.BOARDS)[seed % len(uranus.BOARDS)]
    triangle = ("perimeter", "one_side")[seed // len(uranus.BOARDS) % 2]
    players = 2 + seed % 4
    deal = uranus.deal_missions(players, board, seed)
    options = {"board": board, "triangle_points": triangle}
    state = uranus.table_setup(rules.new_game(players, seed, options), hands=deal.hands)
    piles = [deque(deck) for deck in deal.decks]
    history: History = []
    while rules.outcome(state) is None:
        steps = [s for s in rules.legal_steps(state) if not isinstance(s, uranus.Score)]
        step: uranus.Step
        if state.phase == "turn" and (rng.random() < 0.15 or not steps):
            deck = rng.choice([i for i, pile in enumerate(piles) if pile])
            mission = rng.choice(state.hands[state.to_move - 1])
            step = uranus.Score(mission, deck + 1, piles[deck].popleft())
        else:
            step = rng.choice(steps)
        after = rules.apply(state, step)
        history.append((state, step, after))
        state = after
    return rules, history


GAMES = {"enceladus": enceladus_game, "mars": mars_game, "uranus": uranus_game}
FAST = 8
"""Games per game by default: every variant at least twice, and at least once in the first
``FAST // 2``, the games of the slower checks."""


@cache
def games(name: str, count: int) -> tuple[tuple[Any, History], ...]:
    """The first ``count`` games of ``name`` (played once, for every test)."""
    return tuple(GAMES[name](seed) for seed in range(count))


VARIANTS: dict[str, dict[str, set[Any]]] = {
    "enceladus": {"mode": {"competitive", "cooperative"}, "martians_per_player": {1, 2},
                  "tube": {True, False}},
    "mars": {"plant_score": {"group_size", "connected_only"},
             "center_blocks_path": {False, True}, "last_flower": {"board", "own_reserve"},
             "last_flower_extra_turn": {True, False}, "track_extra_turns": {True, False},
             "peaks": {0, 5}},
    "uranus": {"board": set(uranus.BOARDS), "triangle_points": {"perimeter", "one_side"}},
}
"""Every value of every option of each game (docs/RULINGS.md Enceladus #10, Mars #10,
Uranus #7; the Mars peaks as off and the usual 5)."""


@pytest.mark.parametrize("name", GAMES)
def test_the_random_games_play_every_variant(name: str) -> None:
    """Each property below runs over every variant: the first ``FAST // 2`` games already
    play every value of every option, and every player count is played."""
    played = [history[0][0] for _, history in games(name, FAST // 2)]
    for option, values in VARIANTS[name].items():
        assert {getattr(state.options, option) for state in played} == values, option
    assert {history[0][0].players for _, history in games(name, FAST)} == {2, 3, 4, 5}


# ----------------------------------------------------------------------------- flowers


def flowers(name: str, state: Any) -> dict[str, int]:
    """Where the flowers are: ``{"board": n, "reserves": n, "tube": n, "wild": n}``."""
    if name == "enceladus":
        return {
            "board": sum(v >= 0 for v in state.garden),
            "reserves": sum(sum(r[:-1]) for r in state.reserves),
            "tube": sum(state.tube),
            "wild": sum(r[-1] for r in state.reserves) + (state.discs[-1] is None),
        }
    board = state.cells if name == "mars" else state.flowers
    return {
        "board": sum(piece in (mars.COLOURS if name == "mars" else uranus.COLOURS)
                     for piece in board),
        "reserves": sum(map(sum, state.reserves)),
    }


def check_flowers(name: str, history: History) -> None:
    first = flowers(name, history[0][0])
    total = first["board"] + first["reserves"] + first.get("tube", 0)
    for _, step, after in history:
        now = flowers(name, after)
        assert now["board"] + now["reserves"] + now.get("tube", 0) == total, step
        assert now.get("wild", 0) == first.get("wild", 0), step  # the one wildflower
    if name == "enceladus":
        assert total == enceladus.FLOWERS_PER_COLOUR * 5 and first["wild"] == 1


@pytest.mark.parametrize("name", GAMES)
def test_flowers_are_neither_made_nor_lost(name: str) -> None:
    for _, history in games(name, FAST):
        check_flowers(name, history)


def test_uranus_mission_cards_are_neither_made_nor_lost() -> None:
    for _, history in games("uranus", FAST):
        for _, step, after in history:
            held = sum(map(len, after.hands)) + sum(after.unknown)
            assert held + sum(after.decks) + len(after.discarded) == len(ALL_MISSIONS), step


# ----------------------------------------------------------------------------- scores


def mars_gain(before: mars.State, step: mars.Step) -> tuple[int, ...]:
    """The scores after ``step`` as the texts give them (docs/RULINGS.md Mars #4-#6): the
    size of the planted group (less the new flower with ``connected_only``), leapfrogging
    the spaces other Martians stand on; 1 point lost for landing on a flower or discarding,
    never below 0; nothing else scores."""
    scores = list(before.scores)
    p = before.to_move - 1
    if isinstance(step, mars.Discard) or (isinstance(step, mars.Move) and step.plant is None):
        scores[p] = max(0, scores[p] - 1)
    elif isinstance(step, mars.Move):
        group, frontier = {step.to}, [step.to]
        while frontier:
            q, r = frontier.pop()
            for dq, dr in ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)):
                n = (q + dq, r + dr)
                if n in mars.GRID and n not in group and before.at(n) == step.plant:
                    group.add(n)
                    frontier.append(n)
        points = len(group) - (before.options.plant_score == "connected_only")
        score = scores[p] + points
        taken = {mars.track_space(s).space for i, s in enumerate(scores) if i != p} - {0}
        leapfrog = points and before.options.track_extra_turns
        while leapfrog and mars.track_space(score).space in taken:
            score += 1
        scores[p] = score
    return tuple(scores)


def enceladus_reserves(before: enceladus.State, after: enceladus.State) -> list[list[int]]:
    """The reserves after a step as the text gives them (Your turn, Special actions): the
    player who acts gains, colour by colour, exactly the flowers that left the garden and the
    tube (what they paid went into the tube, so it counts as a loss), and the wildflower when
    it leaves its slot; nobody else's reserve changes."""
    reserves = [list(r) for r in before.reserves]
    mover = reserves[before.to_move - 1]
    for colour in range(len(before.tube)):
        mover[colour] += before.garden.count(colour) - after.garden.count(colour)
        mover[colour] += before.tube[colour] - after.tube[colour]
    mover[-1] += (before.discs[-1] is None) - (after.discs[-1] is None)
    return reserves


def enceladus_hands(state: enceladus.State) -> dict[int, str]:
    """Each player's hand as the text scores it: the five counts sorted, the wildflower on
    a lowest; in the cooperative game every player has the team's, the lowest hand."""
    hands = {}
    for player, reserve in enumerate(state.reserves, 1):
        counts = sorted(reserve[:-1])
        counts[0] += reserve[-1]
        hands[player] = tuple(sorted(counts))
    if state.options.mode == "cooperative":
        hands = dict.fromkeys(hands, min(hands.values()))
    return {player: "-".join(map(str, hand)) for player, hand in hands.items()}


def check_scores(name: str, history: History) -> None:
    """Mars and Uranus: the scores after each step; Enceladus, where the score is the hand:
    the reserves after each step, and the hands of the final ranking."""
    for before, step, after in history:
        if name == "enceladus":
            assert [list(r) for r in after.reserves] == enceladus_reserves(before, after), step
        elif name == "mars":
            assert after.scores == mars_gain(before, step), step
        else:
            gain = [0] * before.players
            if isinstance(step, uranus.Score):
                gain[before.to_move - 1] = uranus.mission_value(before, step.mission)
            expected = [s + g for s, g in zip(before.scores, gain, strict=True)]
            assert list(after.scores) == expected, step
    final = history[-1][2]
    if name == "mars":
        assert min(final.scores) >= 0
    if name == "enceladus":
        ranking = enceladus.outcome(final).ranking  # type: ignore[union-attr]
        assert {p: hand for p, hand, _ in ranking} == enceladus_hands(final)


@pytest.mark.parametrize("name", GAMES)
def test_a_score_moves_only_by_the_gains_and_losses_of_the_rules(name: str) -> None:
    for _, history in games(name, FAST):
        check_scores(name, history)


# ----------------------------------------------------------------------------- undo, redo


def check_undo_redo(rules: Any, history: History) -> None:
    """Undo goes back to the state recorded before the step; redo plays the step again, in
    memory or from the journal's notation."""
    states = [before for before, _, _ in history] + [history[-1][2]]
    for i, (before, step, after) in enumerate(history):
        assert states[i] == before and rules.apply(states[i], step) == after
        text, written = rules.format_position(before), rules.format_step(before, step)
        read = rules.parse_position(text)
        assert read == before
        assert rules.apply(read, rules.parse_step(read, written)) == after


@pytest.mark.parametrize("name", GAMES)
def test_undo_then_redo_gives_the_same_state(name: str) -> None:
    for rules, history in games(name, FAST):
        check_undo_redo(rules, history)


# ----------------------------------------------------------------------------- notation


def check_notation(rules: Any, history: History) -> None:
    """What the journal writes of a step, read back in the position it was played in, is
    that step, and its writing is one line."""
    for before, step, _ in history:
        written = rules.format_step(before, step)
        assert "\n" not in written and written.strip() == written, written
        assert rules.parse_step(before, written) == step, written


@pytest.mark.parametrize("name", GAMES)
def test_every_step_written_in_the_notation_reads_back_as_the_same_step(name: str) -> None:
    for rules, history in games(name, FAST):
        check_notation(rules, history)


# ----------------------------------------------------------------------------- legal steps


def random_steps(name: str, state: Any, rng: random.Random, count: int) -> Iterator[Any]:
    """Steps made up at random, of every kind the game has, most of them illegal."""
    if name == "mars":
        cells = list(mars.GRID.cells)
        for _ in range(count):
            kind = rng.randrange(4)
            if kind == 0:
                yield mars.Place(rng.choice(cells))
            elif kind == 1:
                yield mars.Discard(rng.randint(1, 6))
            else:
                plant = rng.choice([None, *mars.COLOURS])
                yield mars.Move(rng.randint(1, 6), rng.choice(cells), plant)
    elif name == "uranus":
        cells = list(state.shape.grid.cells)
        for _ in range(count):
            kind = rng.randrange(3)
            if kind == 0:
                yield uranus.Place(rng.choice(cells))
            elif kind == 1:
                yield uranus.Score(rng.choice(ALL_MISSIONS), rng.randint(1, 4))
            else:
                yield uranus.Move(rng.choice(cells), rng.choice([None, *uranus.COLOURS]))
    else:
        squares = enceladus.LAYOUT[:130]
        colours = state.options.colours
        for _ in range(count):
            name_ = rng.choice(enceladus.ACTIONS)
            if rng.random() < 0.4:
                yield enceladus.Move(rng.choice(squares), rng.choice([None, *squares[:100]]))
            elif rng.random() < 0.1:
                yield enceladus.Place(rng.choice(squares))
            else:
                width = {"tube": 0, "wildflower": 0, "pick": 1, "jump": 1, "diagonal": 1,
                         "swap_martian": 1}.get(name_, 2)
                drawn = tuple(sorted(rng.choices(colours, k=3), key=colours.index))
                yield enceladus.Action(
                    name_, rng.choice(colours), tuple(rng.sample(squares[:100], width)),
                    drawn if name_ == "tube" else (),
                )


def check_listing(name: str, rules: Any, history: History, rng: random.Random) -> None:
    for before, _, _ in history[:: max(1, len(history) // 12)]:
        listed = list(rules.legal_steps(before))
        for step in rng.sample(listed, min(len(listed), 60)):
            rules.apply(before, step)  # every listed step applies
        known = set(listed)
        for step in random_steps(name, before, rng, 80):
            try:
                rules.apply(before, step)
            except (IllegalMoveError, InvalidStepError):
                continue
            assert step in known or _same_listed(name, step, known), step


def _same_listed(name: str, step: Any, known: set[Any]) -> bool:
    """An Enceladus step written more briefly than the listed one it is: without naming the
    Martian (only one fits), a jump without where it lands (only one landing), a swap with
    its two squares the other way round."""
    if name != "enceladus" or not isinstance(step, enceladus.Move | enceladus.Action):
        return False
    for listed in known:
        if type(listed) is not type(step) or step.martian not in (None, listed.martian):
            continue
        if isinstance(step, enceladus.Move) and (step.to, step.pick) == (listed.to, listed.pick):
            return True
        if isinstance(step, enceladus.Action) and (step.name, step.pay, step.drawn) == (
            listed.name, listed.pay, listed.drawn
        ):
            swapped = step.name in ("swap_flowers", "swap_peak_flower")
            if step.cells in (listed.cells, ()) or (swapped and step.cells[::-1] == listed.cells):
                return True
    return False


@pytest.mark.parametrize("name", GAMES)
def test_every_listed_step_applies_and_a_step_applies_only_if_listed(name: str) -> None:
    rng = random.Random(7)
    for rules, history in games(name, FAST // 2):
        check_listing(name, rules, history, rng)


@pytest.mark.slow
@pytest.mark.parametrize("name", GAMES)
def test_every_invariant_over_hundreds_of_games(name: str) -> None:
    rng = random.Random(11)
    for rules, history in games(name, 120):
        check_flowers(name, history)
        check_scores(name, history)
        check_undo_redo(rules, history[:: 5])
        check_notation(rules, history)
        check_listing(name, rules, history[:: 5], rng)
