"""The opponent engine: legal steps only, its budget in nodes, hidden cards left unseen."""

from __future__ import annotations

import random
import time

import pytest

from companion.opponent import (
    BUDGETS,
    Spend,
    Strength,
    chance_next,
    choose,
    decide,
    decision,
    interrupt,
    same_decision,
)
from companion.rules import load
from companion.rules import uranus as U
from companion.rules.enceladus import Action
from companion.rules.mars import Roll, dice_to_roll
from companion.rules.missions import ALL_MISSIONS
from companion.sim.players import VirtualSeats, play

GAMES = ("enceladus", "mars", "uranus")


def roll(state: object, rng: random.Random) -> Roll:
    return Roll(tuple(rng.randint(1, 6) for _ in range(dice_to_roll(state))))  # type: ignore[arg-type]


def positions(game: str, players: int, seed: int, count: int) -> list[object]:
    """``count`` positions of one seeded random game where a player decides."""
    rules = load(game).RULES
    rng = random.Random(seed)
    state = rules.new_game(players, seed, {})
    found = []
    while rules.outcome(state) is None and len(found) < count:
        if chance_next(rules, state):
            state = rules.apply(state, roll(state, rng))
            continue
        if rng.random() < 0.3:
            found.append(state)
        state = rules.apply(state, choose(rules, state, Strength.QUICK, rng=rng))
    return found


def hand_for(state: U.State, rng: random.Random) -> list[str]:
    """A hand the player to move may hold: shown cards and unseen ones for the unknown."""
    player = state.to_move
    pool = [c for c in ALL_MISSIONS if c not in U.seen(state)]
    rng.shuffle(pool)
    return [*state.hands[player - 1], *pool[: state.unknown[player - 1]]]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("strength", list(Strength))
def test_each_strength_returns_a_legal_step_within_its_budget(game: str,
                                                              strength: Strength) -> None:
    rules = load(game).RULES
    budget = BUDGETS[game][strength] // 4  # small budgets: the suite stays quick
    for players, seed in ((2, 3), (4, 5)):
        for state in positions(game, players, seed, 4):
            rng = random.Random(seed)
            known = hand_for(state, rng) if game == "uranus" else None  # type: ignore[arg-type]
            made = decide(rules, state, strength, rng=rng, budget=budget, known=known)
            assert made.step in set(rules.legal_steps(state))
            assert made.nodes <= max(budget, 1)
            if known is not None and isinstance(made.step, U.Score | U.Reveal):
                assert made.step.mission in known


def test_the_wall_clock_cap_stops_a_search_early() -> None:
    rules = load("mars").RULES
    state = next(s for s in positions("mars", 2, 7, 20) if len(s.pool) > 2)  # type: ignore[attr-defined]
    ticks = iter(range(1000))
    made = decide(rules, state, Strength.STRONG, rng=random.Random(1), time_cap=3,
                  clock=lambda: float(next(ticks)))
    assert made.step in set(rules.legal_steps(state))
    assert made.nodes < BUDGETS["mars"][Strength.STRONG]


def test_a_listing_is_counted_by_its_length_never_past_the_budget() -> None:
    spend = Spend(load("mars").RULES, 10, None, time.monotonic)
    spend.listed(19, 20)
    assert spend.nodes == 0
    spend.listed(1, 20)  # what was listed adds up across listings
    assert spend.nodes == 1
    spend.listed(100, 20)
    assert spend.nodes == 6
    spend.listed(1000, 20)
    assert spend.nodes == 10 and spend.exhausted


@pytest.mark.parametrize("game", ["enceladus", "mars"])
def test_a_strong_search_counts_the_steps_its_positions_list(game: str) -> None:
    """Listing a position's steps costs the strong search as much as building some
    positions, more where there are many: the nodes spent count the positions built and
    the steps listed, so that a position with many steps spends more of the budget."""
    from companion.opponent.enceladus import _flowers

    base = load(game).RULES

    class Built(type(base)):  # type: ignore[misc]
        """The game's rules, counting the positions built."""

        count = 0

        def apply(self, state: object, step: object) -> object:
            Built.count += 1
            return super().apply(state, step)

    def opening(state: object) -> bool:  # a move to make, many flowers, no end test
        if game == "mars":
            return state.phase == "move" and not chance_next(base, state)  # type: ignore[attr-defined]
        return state.phase == "turn" and _flowers(state) >= 60  # type: ignore[attr-defined,arg-type]

    state = next(s for s in positions(game, 3, 4, 20) if opening(s))
    made = decide(Built(), state, Strength.STRONG, rng=random.Random(1), budget=400)
    assert made.nodes == 400
    assert Built.count < 400 * 0.9


def test_a_roll_is_chance_s_not_the_engine_s() -> None:
    rules = load("mars").RULES
    rng = random.Random(2)
    state = rules.new_game(2, 2, {})
    while not chance_next(rules, state):
        state = rules.apply(state, choose(rules, state, Strength.QUICK, rng=rng))
    with pytest.raises(ValueError, match="chance"):
        choose(rules, state, Strength.STEADY, rng=rng)


def test_a_tube_action_is_decided_without_its_draw() -> None:
    rules = load("enceladus").RULES
    for state in positions("enceladus", 2, 11, 40):
        tubes = [s for s in rules.legal_steps(state)
                 if isinstance(s, Action) and s.name == "tube"]
        pays = {s.pay for s in tubes}
        if len(pays) > 1 and len(tubes) > len(pays):
            break
    else:
        pytest.fail("no position with a tube action to pay in two colours")
    one = [s for s in tubes if s.pay == tubes[0].pay]
    assert len({decision(rules, state, s) for s in one}) == 1
    assert same_decision(rules, state, one[0], one[-1])
    other = next(s for s in tubes if s.pay != tubes[0].pay)
    assert not same_decision(rules, state, one[0], other)


def public_and_open(seed: int) -> tuple[U.State, list[tuple[str, ...]]]:
    """A Uranus game some steps in as the companion sees it (hands unknown) and the deal."""
    rules = U.RULES
    deal = U.deal_missions(2, "hexagonal", seed)
    state = rules.new_game(2, seed, {})
    rng = random.Random(seed)
    while state.phase == "placement" or rng.random() < 0.9:
        moves = [s for s in rules.legal_steps(state) if not isinstance(s, U.Score)]
        state = rules.apply(state, rng.choice(moves))
    return state, list(deal.hands)


def test_uranus_scores_only_cards_of_its_own_hand_and_never_claims_for_another() -> None:
    state, hands = public_and_open(4)
    for strength in Strength:
        for seed in range(5):
            step = choose(U.RULES, state, strength, rng=random.Random(seed), known=hands[0])
            if isinstance(step, U.Score):
                assert step.mission in hands[0]
            assert not isinstance(step, U.Claim)
    assert interrupt(U.RULES, state, 1, hands[0]) is None


def test_uranus_never_sees_the_others_hidden_cards() -> None:
    """The engine gets only the companion's view (the others' hands counted, not named) and
    the seat's own hand, so no step can depend on the others' hidden cards: each strength
    gives the same step on every call, and what the engine takes player 2 to hold is only
    what player 2 has shown."""
    from companion.opponent.uranus import _seat_hands

    state, hands = public_and_open(6)
    assert state.hands[1] == () and state.unknown[1] > 0  # nothing of player 2's is known
    for strength in Strength:
        steps = {choose(U.RULES, state, strength, rng=random.Random(1), known=hands[0])
                 for _ in range(2)}
        assert len(steps) == 1
    seat = _seat_hands(state, 1, hands[0])
    assert seat[0] == frozenset(hands[0]) and seat[1] == frozenset()


@pytest.mark.parametrize("game", GAMES)
def test_steady_beats_quick_on_a_seeded_sample(game: str) -> None:
    rules = load(game).RULES
    wins = 0
    for k in range(1, 5):  # the steady seat first, then second
        seat = k % 2 + 1
        strengths = [Strength.STEADY if p == seat else Strength.QUICK for p in (1, 2)]
        outcome = rules.outcome(play(rules, strengths, seed=k))
        assert outcome is not None
        wins += outcome.winners == (seat,)
    assert wins >= 3


@pytest.mark.parametrize("players", [2, 3, 4])
def test_virtual_uranus_players_plant_their_flowers_and_score_their_own_cards(
        players: int) -> None:
    """Steady virtual players hold real hands and plant their flowers before they score
    cards (a card is worth more than a flower only once a few are left), so a game no
    longer ends on large negative scores."""
    rules = U.RULES
    state = rules.new_game(players, players, {})
    seats = VirtualSeats(rules, state, [Strength.STEADY] * players, seed=players)
    while rules.outcome(state) is None:
        step = seats.step(state)
        if isinstance(step, U.Score | U.Reveal):
            assert step.mission in seats.known(state.to_move)
        if isinstance(step, U.Score):
            assert sum(state.reserves[state.to_move - 1]) <= 6
        seats.played(state, step)
        state = rules.apply(state, step)
    assert min(U.final_scores(state)) >= 0, U.final_scores(state)


def test_seated_mars_players_roll_one_die_for_each_free_hex() -> None:
    rules = load("mars").RULES
    state = rules.new_game(2, 3, {})
    seats = VirtualSeats(rules, state, [Strength.STEADY, Strength.QUICK], seed=3)
    rolls = 0
    while rules.outcome(state) is None and rolls < 10:
        step = seats.step(state)
        if chance_next(rules, state):
            assert isinstance(step, Roll) and len(step.values) == dice_to_roll(state)
            assert seats.decided is None
            rolls += 1
        seats.played(state, step)
        state = rules.apply(state, step)
    assert rolls == 10


def test_seats_refuse_a_strength_list_of_the_wrong_length() -> None:
    rules = load("mars").RULES
    with pytest.raises(ValueError, match="3 strengths for 2 players"):
        VirtualSeats(rules, rules.new_game(2, 1, {}), [Strength.QUICK] * 3, seed=1)


def test_demo_and_sim_take_a_strength() -> None:
    from companion.cli import make_parser

    parser = make_parser()
    assert parser.parse_args(["demo"]).strength == "steady"
    assert parser.parse_args(["demo", "--strength", "strong"]).strength == "strong"
    assert parser.parse_args(["sim", "--players", "2", "--strength", "quick"]).strength == "quick"
    with pytest.raises(SystemExit):
        parser.parse_args(["demo", "--strength", "fierce"])


def test_strong_mars_weighs_a_flower_planted_by_the_group_it_joins() -> None:
    """The others' steps in the strong search are weighed without building each position:
    the group a flower joins must be the group the rules core scores."""
    from companion.opponent.mars import DICE_WEIGHT, PLANTED_WEIGHT, _weighed
    from companion.rules.mars import GRID, Move

    rules = load("mars").RULES
    checked = 0
    for state in positions("mars", 4, 5, 12):
        if state.phase != "move":  # type: ignore[attr-defined]
            continue
        spend = Spend(rules, 10**6, None, time.monotonic)
        for step, gain in _weighed(state, spend):  # type: ignore[arg-type]
            if not isinstance(step, Move) or step.plant is None:
                continue
            after = rules.apply(state, step)
            group, frontier = {step.to}, [step.to]
            while frontier:
                for n in GRID.neighbours[frontier.pop()]:
                    if n not in group and after.at(n) == step.plant:
                        group.add(n)
                        frontier.append(n)
            dice = sum(1 for n in GRID.neighbours[step.to] if after.at(n) in ("", "peak"))
            assert gain == pytest.approx(len(group) + PLANTED_WEIGHT + DICE_WEIGHT * dice)
            checked += 1
    assert checked > 20


def test_strong_mars_measures_the_seat_against_every_other_player() -> None:
    """With three or more players the strong search weighs the seat against the others'
    average (it means to finish ahead of each), steady against the best of them."""
    from dataclasses import replace

    from companion.opponent.mars import evaluate

    state = next(s for s in positions("mars", 3, 2, 10) if s.phase == "move")  # type: ignore[attr-defined]
    scored = replace(state, scores=(10, 12, 0))  # type: ignore[type-var]
    assert evaluate(scored, 1, field=True) - evaluate(scored, 1) == pytest.approx(6)


def test_strong_uranus_weighs_each_card_scored_once() -> None:
    """Which deck replaces a card scored changes nothing the seat knows, so the strong
    search weighs each card once (drawing from the first deck with cards)."""
    from companion.opponent.uranus import _one_deck

    state, _ = public_and_open(4)
    steps = list(U.RULES.legal_steps(state))
    scores = [s for s in _one_deck(steps) if isinstance(s, U.Score)]
    first = next(d for d, left in enumerate(state.decks, 1) if left)
    assert len({s.mission for s in steps if isinstance(s, U.Score)}) == len(scores) > 1
    assert {s.draw for s in scores} == {first}
    assert [s for s in _one_deck(steps) if not isinstance(s, U.Score)] == \
        [s for s in steps if not isinstance(s, U.Score)]


def test_strong_uranus_counts_the_hexagon_corners_it_can_still_fill() -> None:
    """The Hexagon card's progress: the most corners of one colour of a hexagon the seat can
    still complete with the flowers of that colour in its reserve."""
    from dataclasses import replace

    from companion.opponent.uranus import hexagon_progress, live_hexagons
    from companion.rules.missions import hexagons_through

    state = U.RULES.new_game(2, 4, {})
    grid = state.shape.grid
    corners = next([state.shape.index[c] for c in hexagon] for spot in grid.cells
                   for hexagon in hexagons_through(grid, spot) if not state.trees & set(hexagon))
    tree = next([state.shape.index[c] for c in hexagon] for spot in state.trees
                for hexagon in hexagons_through(grid, spot))
    assert len(live_hexagons(state)) < len(live_hexagons(replace(state, trees=frozenset())))
    red = U.COLOURS.index("red")
    flowers = list(state.flowers)
    for i in corners[:4]:
        flowers[i] = "red"
    reserve = list(state.reserves[0])
    reserve[red] = 2
    four = replace(state, flowers=tuple(flowers), reserves=(tuple(reserve), state.reserves[1]))
    assert hexagon_progress(four, 1) == 4
    reserve[red] = 1  # one flower short
    assert hexagon_progress(replace(four, reserves=(tuple(reserve), four.reserves[1])), 1) < 4
    flowers[corners[4]] = "blue"  # another colour on a corner: that hexagon is lost
    assert hexagon_progress(replace(four, flowers=tuple(flowers)), 1) < 4
    flowers = list(state.flowers)
    trees = {state.shape.index[t] for t in state.trees}
    for i in set(tree) - trees:  # five corners in red, a tree on the sixth
        flowers[i] = "red"
    five = replace(four, flowers=tuple(flowers))
    assert hexagon_progress(replace(five, trees=frozenset()), 1) == 5
    assert hexagon_progress(five, 1) < 5


def test_strong_uranus_plants_the_hexagon_of_the_card_it_holds() -> None:
    """Dealt the Hexagon card, the strong seat plants the corners of a hexagon in one
    colour and wins at once by showing the card (the steady seat scores it for nothing)."""
    deal = U.deal_missions(2, "hexagonal", 4)
    assert "hexagon" in deal.hands[0]
    final = play(U.RULES, [Strength.STRONG, Strength.STEADY], seed=4)
    assert (final.ending, final.hexagon_winner) == ("hexagon", 1)


@pytest.mark.parametrize(("players", "plies"), [(3, 8), (4, 6)])
def test_strong_mars_looks_fewer_plies_on_with_four_players(players: int, plies: int) -> None:
    """With four players the strong search stops at the replies to the seat's next step (the
    nodes go to more of the seat's own steps); with three it looks eight plies on."""
    from companion.opponent.mars import DEPTH, DEPTH_FOUR
    from companion.rules.mars import MarsRules

    class Plies(MarsRules):
        """The Mars rules, keeping how many steps (not rolls) each position built lies
        beyond the root's."""

        def __init__(self, root: object) -> None:
            self.plies: dict[object, int] = {root: 0}

        def apply(self, state, step):  # type: ignore[no-untyped-def]
            after = super().apply(state, step)
            self.plies.setdefault(after, self.plies[state] + (not isinstance(step, Roll)))
            return after

    assert (DEPTH, DEPTH_FOUR) == (8, 6)
    state = next(s for s in positions("mars", players, 3, 20) if s.phase == "move")  # type: ignore[attr-defined]
    rules = Plies(state)
    decide(rules, state, Strength.STRONG, rng=random.Random(1))
    assert max(rules.plies.values()) == 1 + plies


def test_uranus_card_values_are_kept_by_the_spots_of_their_colours(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """:class:`Values` gives each card's value on the board now, and works a card out again
    only when a flower of one of its colours has been planted since."""
    from dataclasses import replace

    from companion.opponent import uranus as engine
    from companion.rules import missions

    monkeypatch.setattr(engine._Memo, "context", None)
    monkeypatch.setattr(engine._Memo, "values", {})
    worked: list[str] = []
    value_of = missions.mission_value

    def counted(garden: missions.Garden, card: str, points: str = "perimeter") -> int:
        worked.append(card)
        return value_of(garden, card, points)

    monkeypatch.setattr(missions, "mission_value", counted)
    state, _ = public_and_open(7)
    values = engine.Values(state)
    assert [values(c) for c in ALL_MISSIONS] == \
        [value_of(U.garden(state), c, state.options.triangle_points) for c in ALL_MISSIONS]
    assert len(worked) == len(ALL_MISSIONS)
    empty = state.flowers.index("")
    flowers = (*state.flowers[:empty], "red", *state.flowers[empty + 1:])
    after = replace(state, flowers=flowers)
    worked.clear()
    values = engine.Values(after)
    assert [values(c) for c in ALL_MISSIONS] == \
        [value_of(U.garden(after), c, after.options.triangle_points) for c in ALL_MISSIONS]
    assert set(worked) == {c for c in ALL_MISSIONS if "red" in c}


def test_steady_uranus_draws_among_the_steps_within_its_margin_of_the_best() -> None:
    """The steady Uranus seat takes a step whose estimate is within ``STEADY_MARGIN`` of the
    best, drawn by its generator: never one further off, and not always the best."""
    from companion.opponent import uranus as engine

    rules = U.RULES
    drawn_apart = 0
    for state in positions("uranus", 2, 5, 12):
        if state.phase != "turn":  # type: ignore[attr-defined]
            continue
        known = hand_for(state, random.Random(1))  # type: ignore[arg-type]
        steps = list(engine.own_steps(state, known))  # type: ignore[arg-type]
        ranked = engine._ranked(state, steps, engine._seat_hands(  # type: ignore[arg-type]
            state, state.to_move, known), Spend(rules, 10**6, None, time.monotonic))  # type: ignore[attr-defined]
        near = {step for value, _, step in ranked if value >= ranked[0][0] - engine.STEADY_MARGIN}
        chosen = {choose(rules, state, Strength.STEADY, rng=random.Random(seed), known=known,
                         budget=10**6) for seed in range(12)}
        assert chosen <= near
        drawn_apart += len(chosen) > 1
    assert drawn_apart >= 3
