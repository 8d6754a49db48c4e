"""The Gardens of Mars extension of the referee: each dice source, each refusal, the penalties
confirmed with OK, the prompts and the scoring-track news (companion/referee/mars.py).

Positions are built with the rules core (``companion.rules.mars.position``) in the case files'
coordinates; steps the board shows are performed by the virtual-time harness without noise, so
the generic recognition commits them as it would at a table.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from luma.core.device import dummy
from PIL import Image, ImageChops

from companion.board import protocol
from companion.config import BoardConfig, ButtonPins, ButtonsConfig, Config, GameConfig
from companion.daemon.service import game_extensions
from companion.display import Screen, render
from companion.events import BoardMessage, Button, Timer
from companion.referee.effects import Buzz, Committed, Note, SetTimer, Show
from companion.referee.mars import MarsTable, reserve_text, track_text
from companion.referee.recognition import StepIndex
from companion.rules.hexes import hex_name
from companion.rules.mars import RULES, Move, Phase, Place, Roll, State, destinations, position
from companion.sim.harness import VirtualTable
from companion.sim.perform import Noise, Put

# Gardener 1 on 1,-1 with flowers on three of its six neighbours: three dice to roll
# (Gardens of Mars, Rolling Dice; the centre counts as empty, docs/RULINGS.md Mars #2).
THREE_DICE = {"1,-1": "M1", "-2,3": "M2", "2,-1": "red", "1,0": "blue", "1,-2": "green"}
RESERVES = {1: {"red": 3, "blue": 2}, 2: {"red": 2}, 3: {"red": 2}, 4: {"red": 2}}

# Gardener 1 in the corner 5,-5 with a flower on each of its three on-board neighbours.
SURROUNDED = {"5,-5": "M1", "-2,3": "M2", "5,-4": "red", "4,-4": "blue", "4,-5": "green"}

# Gardener 1 on 0,-5 hemmed in by three gardeners: neither a 5 nor a 6 moves (Mars #4).
HEMMED = {"0,-5": "M1", "0,-4": "M2", "1,-5": "M3", "-1,-4": "M4"}


def roll_state(cells: dict[str, str] = THREE_DICE, **kwargs: Any) -> State:
    players = max(int(p[1]) for p in cells.values() if p.startswith("M"))
    reserves = {p: RESERVES[p] for p in range(1, players + 1)}
    return position(players, cells, reserves=reserves, **kwargs)


def table(state: State, dice: str = "tray", *, steps: Iterable[Any] = (),
          rng: random.Random | None = None, roll_button: bool = False) -> VirtualTable:
    """A referee with the Mars extension on a board that shows ``state``; the harness
    performs ``steps`` one by one on :meth:`VirtualTable.play_step`."""
    script = iter(steps)
    virtual = VirtualTable(RULES, state, "mars", seed=1, noise=Noise.none(),
                           choose=lambda rules, s, r: next(script))
    virtual.referee.extensions.append(MarsTable(dice, rng=rng or random.Random(0),
                                                roll_button=roll_button))
    virtual.start()
    return virtual


def dice(t: VirtualTable, *values: int) -> list[Any]:
    """The effects of a dice-tray reading, less the board's keep-alive timer."""
    effects = t.referee.handle(BoardMessage(t.now, protocol.Dice(seq=0, values=values)))
    return [e for e in effects if not (isinstance(e, SetTimer) and e.name == "heartbeat")]


def press(t: VirtualTable, name: str) -> list[Any]:
    return t.referee.handle(Button(t.now, name, True))


def committed(effects: list[Any]) -> list[str]:
    return [e.step for e in effects if isinstance(e, Committed)]


def last_screen(effects: list[Any]) -> Any:
    return [e.screen for e in effects if isinstance(e, Show)][-1]


def assert_refused(t: VirtualTable, effects: list[Any], log: str, notice: str) -> None:
    """Refused: a warning naming the problem, the buzzer, an urgent notice, no step."""
    notes = [e.text for e in effects if isinstance(e, Note) and e.level == "warning"]
    assert notes and log in notes[0]
    assert Buzz("illegal") in effects
    screen = last_screen(effects)
    assert screen.urgent and notice in screen.message
    assert committed(effects) == [] and t.referee.history == []


# ---- dice tray (Gardens of Mars, Rolling Dice; hardware/PROTOCOL.md, DICE) ---------------


def test_tray_reading_of_the_dice_to_roll_is_the_roll() -> None:
    t = table(roll_state())
    effects = dice(t, 5, 3, 5)
    assert committed(effects) == ["roll:3,5,5"]
    assert t.referee.state.pool == (3, 5, 5)


def test_tray_value_0_is_refused_and_nothing_changes() -> None:
    t = table(roll_state())
    before = t.referee.state
    assert_refused(t, dice(t, 0, 3, 5), "a die shows 1 to 6, not 0", "0 is no die value")
    assert t.referee.state is before


def test_tray_value_7_is_refused_and_nothing_changes() -> None:
    t = table(roll_state())
    assert_refused(t, dice(t, 7, 3, 5), "not 7", "7 is no die value")


def test_tray_with_more_dice_than_the_game_has_is_refused() -> None:
    t = table(roll_state())
    effects = dice(t, 1, 2, 3, 4, 5, 6, 6)
    assert_refused(t, effects, "7 dice", "The game has 6")


def test_tray_with_another_count_than_the_dice_to_roll_is_refused() -> None:
    t = table(roll_state())
    assert_refused(t, dice(t, 2, 4, 4, 6), "must roll 3 dice", "P1: roll 3 dice, not 4")
    assert committed(dice(t, 2, 4, 6)) == ["roll:2,4,6"]  # rolled again, right this time


def test_tray_may_only_lose_dice_while_the_pool_has_dice() -> None:
    t = table(roll_state(pool=[3, 5, 5]))
    assert dice(t, 5, 5) == []  # the used 3 went back into the case
    assert_refused(t, dice(t, 2, 5), "the pool is 3 5 5", "The pool is 3 5 5")


def test_tray_reading_before_the_gardeners_are_placed_is_refused() -> None:
    t = table(RULES.new_game(2, 1, {}))
    assert_refused(t, dice(t, 3), "before every gardener is placed", "place the gardeners")


def sense(t: VirtualTable, cell: str, piece: str) -> None:
    """The sensor of ``cell`` reads ``piece`` for longer than the debounce time."""
    t.now += 0.1
    t.referee.handle(BoardMessage(t.now, protocol.FieldUpdate(seq=0, cell=cell, piece=piece)))
    t.now += 0.1
    t.referee.handle(Timer(t.now, "debounce"))


def test_tray_roll_made_while_the_board_is_wrong_is_taken_once_it_is_put_right() -> None:
    t = table(roll_state())
    sense(t, "0,3", "M2")  # a gardener of the other player set down: no step explains it
    assert committed(dice(t, 2, 1, 2)) == []
    sense(t, "0,3", "")
    assert [step for _, step in t.referee.history] == [Roll((1, 2, 2))]


def test_tray_roll_made_as_the_player_begins_to_move_is_taken_at_once() -> None:
    t = table(roll_state())
    sense(t, "1,-1", "")  # the gardener lifted already: a move once the dice are rolled
    assert committed(dice(t, 2, 1, 2)) == ["roll:1,2,2"]



def burst(t: VirtualTable, changes: dict[str, str], *extra: Any) -> list[Any]:
    """The board reads ``changes`` (one read of the port), then ``extra`` board messages
    arrive, all within the debounce time; then the settle time passes."""
    effects: list[Any] = []
    for cell, piece in changes.items():
        effects += t.referee.handle(BoardMessage(t.now, protocol.FieldUpdate(seq=0, cell=cell,
                                                                            piece=piece)))
    effects += t.referee.handle(Timer(t.now + 0.05, "debounce"))
    for message in extra:
        effects += t.referee.handle(BoardMessage(t.now + 0.1, message))
    t.now += 1.0
    return effects + t.referee.handle(Timer(t.now, "settle"))


def test_tray_roll_of_the_next_player_while_the_last_move_settles_is_taken_after_it() -> None:
    # The last die moves 1,-1 to 1,2; player 2 rolls before the gardener has settled.
    t = table(roll_state(pool=[3]))
    rolled = protocol.Dice(seq=0, values=(6, 2, 2, 5, 1, 3))  # six empty hexes around M2
    effects = burst(t, {"1,-1": "", "1,2": "M1+blue"}, rolled)
    assert Buzz("illegal") not in effects
    assert committed(effects) == ["3>1,2=blue", "roll:1,2,2,3,5,6"]
    assert t.referee.state.to_move == 2 and t.referee.state.pool == (1, 2, 2, 3, 5, 6)


def test_the_last_move_the_next_roll_and_the_next_move_in_one_burst_commit_all_three() -> None:
    # Player 1 uses the last die; the tray reads player 2's six dice as the gardener comes
    # down, and player 2 already lifts theirs.
    t = table(roll_state(pool=[3]))
    rolled = protocol.Dice(seq=0, values=(1, 1, 2, 4, 5, 6))
    effects = burst(t, {"1,-1": "", "1,2": "M1+blue", "-2,3": ""}, rolled)
    assert committed(effects) == ["3>1,2=blue", "roll:1,1,2,4,5,6"]  # the roll explains M2
    effects += burst(t, {"-1,3": "M2+red"})
    assert committed(effects) == ["3>1,2=blue", "roll:1,1,2,4,5,6", "1>-1,3=red"]
    assert Buzz("illegal") not in effects


def test_the_next_players_move_in_the_same_burst_commits_both_moves() -> None:
    # 1,-1 to 1,2 with the 3; player 2 goes on with the 5 from -2,3 to -2,-2 at once.
    t = table(roll_state(pool=[3, 5]))
    both = {"1,-1": "", "1,2": "M1+blue", "-2,3": "", "-2,-2": "M2+red"}
    effects = burst(t, both)
    assert committed(effects) == ["3>1,2=blue", "5>-2,-2=red"]
    assert Buzz("illegal") not in effects and t.referee.state.pool == ()

def test_tray_readings_are_ignored_with_other_dice_sources() -> None:
    t = table(roll_state(), "buttons")
    effects = dice(t, 1, 2, 3)
    assert committed(effects) == [] and isinstance(effects[0], Note)


# ---- dice entered with buttons --------------------------------------------------------------


def test_buttons_select_cycles_a_die_and_ok_confirms_each_die() -> None:
    t = table(roll_state(), "buttons")
    screen = t.referee.screen(t.now)
    assert screen.menu == ("1", "2", "3", "4", "5", "6") and screen.menu_index == 0
    assert screen.message == "P1: die 1 of 3, Select, OK"
    for _ in range(3):
        press(t, "select")
    assert t.referee.screen(t.now).menu_index == 3
    assert committed(press(t, "ok")) == []  # the first die: 4
    screen = t.referee.screen(t.now)
    assert screen.message == "P1: die 2 of 3 (4 so far), Select, OK" and screen.menu_index == 0
    press(t, "ok")  # the second die: 1
    for _ in range(7):  # once round and on to 2
        press(t, "select")
    assert committed(press(t, "ok")) == ["roll:1,2,4"]


# ---- virtual dice ---------------------------------------------------------------------------


def test_virtual_dice_are_rolled_by_the_companion_on_the_roll_button() -> None:
    t = table(roll_state(), "virtual", rng=random.Random(42), roll_button=True)
    assert t.referee.screen(t.now).message == "P1: press Roll to roll 3 dice"
    twin = random.Random(42)
    expected = Roll(tuple(twin.choice((1, 2, 3, 4, 5, 6)) for _ in range(3)))
    effects = press(t, "roll")
    assert committed(effects) == [RULES.format_step(roll_state(), expected)]
    assert last_screen(effects).message.startswith("P1 rolled ")


def test_virtual_dice_roll_on_ok_without_a_roll_button() -> None:
    t = table(roll_state(), "virtual")
    assert t.referee.screen(t.now).message == "P1: press OK to roll 3 dice"
    assert len(committed(press(t, "ok"))) == 1
    assert len(t.referee.state.pool) == 3


def test_extensions_follow_the_config() -> None:
    config = Config(game=GameConfig(name="mars", seed=7), board=BoardConfig(dice="virtual"),
                    buttons=ButtonsConfig(pins=ButtonPins(roll="GPIO5")))
    (ext,) = game_extensions(config)
    assert (ext.dice, ext.roll_button) == ("virtual", True)
    assert ext.rng.random() == random.Random(7).random()


def test_an_unknown_dice_source_is_refused() -> None:
    with pytest.raises(ValueError, match="dice source"):
        MarsTable("camera")


# ---- turns without a die to use (Gardens of Mars, Rolling Dice; docs/RULINGS.md Mars #4) --


def test_no_dice_to_roll_ok_ends_the_turn_without_penalty() -> None:
    t = table(roll_state(SURROUNDED))
    screen = t.referee.screen(t.now)
    assert screen.message == "P1: no empty hex next to your gardener, OK ends your turn"
    assert committed(press(t, "select")) == []
    assert committed(press(t, "ok")) == ["roll:none"]
    assert t.referee.state.to_move == 2 and t.referee.state.scores == (0, 0)


def test_no_legal_move_select_picks_the_die_and_ok_discards_it_for_a_point() -> None:
    t = table(roll_state(HEMMED, pool=[5, 6], scores={1: 4}))
    screen = t.referee.screen(t.now)
    assert screen.message == "P1: no move, discard a die (-1 point)"
    assert screen.menu == ("discard 5", "discard 6") and screen.menu_index == 0
    assert last_screen(press(t, "select")).menu_index == 1
    assert committed(press(t, "ok")) == ["discard:6"]
    state = t.referee.state
    assert state.pool == (5,) and state.scores[0] == 3 and state.to_move == 2


def test_buttons_are_not_taken_while_moves_are_possible() -> None:
    t = table(roll_state(pool=[3]))
    assert press(t, "ok") == [] and press(t, "select") == []


# ---- prompts, pool, track (Gardens of Mars, Turn Structure; Mars #6) ----------------------


def test_placement_prompt_shows_the_players_dealt_reserve() -> None:
    state = RULES.new_game(3, 4, {})
    t = table(state, steps=[Place((2, 2))])
    assert t.referee.screen(t.now).message == (
        f"P1: take {reserve_text(state, 1)}, place your gardener")
    t.play_step()
    assert t.referee.screen(t.now).message == (
        f"P2: take {reserve_text(state, 2)}, place your gardener")


def test_reserve_is_written_with_the_protocol_colour_letters() -> None:
    state = roll_state()
    assert reserve_text(state, 1) == "b2 y0 w0 a0 r3 g0"


def test_roll_prompt_names_the_dice_to_roll() -> None:
    t = table(roll_state())
    assert t.referee.screen(t.now).message == "P1: roll 3 dice"


def test_move_prompt_names_the_dice_and_highlights_every_destination() -> None:
    state = roll_state(pool=[3, 5, 5])
    t = table(state)
    screen = t.referee.screen(t.now)
    assert screen.message == "P1: move 3 or 5"
    assert screen.extra["pool"] == "3 5 5"
    assert dict(screen.highlights) == {hex_name(c): "dest" for c in destinations(state)}


def test_planting_tells_where_the_scoring_martian_goes() -> None:
    # 1,-1 to 1,2 with a 3 (Moving and Planting); blue joins nothing: 1 point.
    t = table(roll_state(pool=[3, 5]), steps=[Move(3, (1, 2), "blue")])
    assert t.play_step()
    screen = t.referee.screen(t.now)
    assert screen.message == "P1: scoring Martian to 1. P2: move 5"
    assert screen.extra["track"] == "P1 1 P2 0"


def test_landing_on_a_flower_sends_the_scoring_martian_back() -> None:
    # 1,-1 to 1,0 (the blue flower) with a 1: lose a point (Moving and Planting).
    t = table(roll_state(pool=[1, 4], scores={1: 6}), steps=[Move(1, (1, 0))])
    assert t.play_step()
    assert t.referee.screen(t.now).message.startswith("P1: scoring Martian back to 5. ")


def test_a_score_past_50_is_shown_with_its_lap() -> None:
    # Mars #6: the space of a score is (score - 1) mod 50 + 1.
    assert track_text((53, 50, 0)) == "P1 3 lap 2 P2 50 P3 0"


def test_an_extra_turn_is_announced() -> None:
    # Mars #6: the would-be space 30 is taken by player 2 and above 25: leapfrog to 31 and
    # play again with the die left.
    t = table(roll_state(pool=[3, 5], scores={1: 29, 2: 30}), steps=[Move(3, (1, 2), "blue")])
    assert t.play_step()
    state = t.referee.state
    assert state.to_move == 1 and state.extra_turn and state.phase is Phase.MOVE
    assert t.referee.screen(t.now).message == (
        "P1: scoring Martian to 31. P1: extra turn, move 5")


def test_undo_of_a_roll_brings_the_roll_prompt_back() -> None:
    t = table(roll_state())
    dice(t, 3, 3, 4)
    press(t, "undo")
    assert t.referee.state.pool == () and t.referee.screen(t.now).message == "P1: roll 3 dice"


# ---- the screens on the matrix: reference PNGs ----------------------------------------------
# Compared pixel for pixel through luma's dummy device as tests/test_display.py does; after a
# deliberate change, regenerate and look at them before committing:
#     COMPANION_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_referee_mars.py

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("COMPANION_REGEN_GOLDEN") == "1"
SIZES = ((16, 16, "RGB"), (32, 32, "RGB"), (64, 32, "RGB"), (32, 8, "1"))


def mars_screens() -> dict[str, Screen]:
    """Every kind of screen the Mars extension makes, by golden-file stem."""
    placing = table(RULES.new_game(3, 4, {}))
    entering = table(roll_state(), "buttons")
    press(entering, "select")
    moving = table(roll_state(pool=[3, 5, 5]), steps=[Move(3, (1, 2), "blue")])
    moving.play_step()
    hemmed = table(roll_state(HEMMED, pool=[5, 6]))
    refused = table(roll_state())
    return {
        "mars-table-place": placing.referee.screen(placing.now),
        "mars-table-dice-buttons": entering.referee.screen(entering.now),
        "mars-table-move": moving.referee.screen(moving.now),
        "mars-table-discard": hemmed.referee.screen(hemmed.now),
        "mars-table-tray-refused": last_screen(dice(refused, 0, 3, 5)),
    }


@pytest.mark.parametrize(("name", "size"), [(n, s) for n in mars_screens() for s in SIZES],
                         ids=lambda v: v if isinstance(v, str) else f"{v[0]}x{v[1]}")
def test_mars_screen_matches_reference_png(name: str, size: tuple[int, int, str]) -> None:
    width, height, mode = size
    device = dummy(width=width, height=height, mode=mode)
    device.display(render(mars_screens()[name], width=width, height=height, mode=mode))
    path = GOLDEN / f"{name}-{width}x{height}-{'mono' if mode == '1' else 'rgb'}-f0.png"
    if REGEN:
        device.image.save(path)
    reference = Image.open(path)
    assert reference.mode == device.image.mode
    assert ImageChops.difference(reference.convert("RGB"),
                                 device.image.convert("RGB")).getbbox() is None


@pytest.mark.parametrize("first", ["flower", "gardener"])
def test_a_planting_half_made_for_seconds_is_no_wrong_board(first: str) -> None:
    """Planting, the player sets down one part of the gardener-on-a-flower (the flower, or
    the gardener before the flower under it) and stops to think: a cell on its way, not a
    wrong board; the move counts once the other part is down."""
    move = Move(3, (1, 2), "blue")
    t = table(roll_state(pool=[3, 5]))
    notation = RULES.format_step(t.truth, move)
    part = "blue" if first == "flower" else "M1"
    think = t.referee.settings.grace_s + 5.0
    t._play_ops([Put(0.2, "1,-1", ""), Put(0.2, "1,2", part)])
    t._advance(t.now + think)
    assert t.report.false_alarms == 0 and not t.screen.urgent
    assert t.report.committed == []
    t._play_ops([Put(0.2, "1,2", "M1+blue")])
    t._advance(t.now + think)
    assert t.report.committed == [notation] and t.report.false_alarms == 0


def test_on_a_presence_board_a_gardener_landing_on_a_flower_needs_no_lift_there() -> None:
    """The flower stays on its hex under the gardener: the move is complete once the
    gardener has left its hex, though the landing reads occupied all along."""
    state = roll_state(pool=[1, 4])
    onto = Move(1, (1, 0))  # onto the blue flower
    index = StepIndex(RULES, state, RULES.board(state), presence=True)
    assert index.unseen(onto) == set()
    assert onto in index.explaining({"1,-1": ""})
    assert index.completes(onto, {"1,-1": ""}, frozenset())
