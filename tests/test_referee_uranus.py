"""Gardens of Uranus at the table: the card reader and the card menu, scoring by showing, the
deck menu, refusals, the preview, the Hexagon, the hands shown at the end, the screens.

Positions are written as in ``docs/CASES.md``; hands are secret (``unknown`` cards)
unless a test says otherwise, as at a real table.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from luma.core.device import dummy
from PIL import Image, ImageChops

from companion.board import protocol
from companion.config import check_config, parse_config
from companion.daemon.service import game_extensions
from companion.display import Screen, render
from companion.errors import ConfigError
from companion.events import BoardMessage, Button, Timer
from companion.referee.effects import Buzz, Committed, GameOver, Note, Show
from companion.referee.referee import Referee, RefereeSettings
from companion.referee.uranus import (
    CardTable,
    card_text,
    final_breakdown,
    load_catalogue,
)
from companion.rules.hexes import hex_name
from companion.rules.missions import ALL_MISSIONS
from companion.rules.uranus import BOARDS, CASES, RULES, Move, Place, State, validate

CATALOGUE = load_catalogue()
CARD = {mission: card for card, mission in CATALOGUE.items()}
GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("COMPANION_REGEN_GOLDEN") == "1"
SEATED = {"-3,3": "M1", "0,-3": "M2"}
RING = ("1,0", "0,1", "-1,1", "-1,0", "0,-1", "1,-1")


def position(cells: dict[str, str], *, unknown: tuple[int, ...] = (5, 5),
             board: str = "hexagonal", **fields: Any) -> State:
    """A case-format position with ``unknown[p - 1]`` secret cards in player p's hand."""
    players = len(unknown)
    numbers = [str(p) for p in range(1, players + 1)]
    pos = {
        "players": players, "to_move": 1, "cells": cells, "board": board,
        "reserves": {p: {"red": 3, "blue": 3} for p in numbers},
        "scores": dict.fromkeys(numbers, 0), "hands": {p: [] for p in numbers},
        "decks": [5] * BOARDS[board].decks, "no_plant_run": 0, **fields,
    }
    state = CASES.position({"options": {}, "position": pos})
    return validate(replace(state, unknown=unknown))


def table(state: State, cards: str = "reader") -> Referee:
    """A referee with the card extension, the board laid out as expected."""
    referee = Referee(RULES, state, f"uranus-{state.options.board}", RefereeSettings(),
                      extensions=[CardTable(CATALOGUE, cards=cards)])
    referee.start(0.0)
    pieces = tuple(referee.expected[c] for c in referee.layout)
    referee.handle(BoardMessage(0.0, protocol.Dump(seq=0, pieces=pieces)))
    return referee


def show(referee: Referee, card_id: str, t: float = 1.0) -> list[Any]:
    return referee.handle(BoardMessage(t, protocol.Card(seq=1, card_id=card_id)))


def press(referee: Referee, name: str, t: float = 2.0) -> list[Any]:
    return referee.handle(Button(t, name, True))


def last_message(effects: list[Any]) -> str:
    return str([e for e in effects if isinstance(e, Show)][-1].screen.message)


def committed(effects: list[Any]) -> list[str]:
    return [e.step for e in effects if isinstance(e, Committed)]


# -- the catalogue ([board] missions) -------------------------------------------------------


def test_the_catalogue_names_every_card_once() -> None:
    assert sorted(CATALOGUE.values()) == sorted(ALL_MISSIONS)
    assert CATALOGUE["U18"] == "triangle:yellow" and CATALOGUE["U36"] == "hexagon"


def test_a_missing_catalogue_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be read"):
        load_catalogue(tmp_path / "missions.toml")


def test_the_extension_takes_the_card_source_from_the_config() -> None:
    config = parse_config('[game]\nname = "uranus"\n[board]\ncards = "buttons"\n')
    (extension,) = game_extensions(config)
    assert extension.cards == "buttons" and extension.catalogue == CATALOGUE


def test_a_renumbered_catalogue_named_in_the_config_is_the_one_used(tmp_path: Path) -> None:
    renumbered = tmp_path / "missions.toml"
    renumbered.write_text("[cards]\n" + "".join(f'T{n:02} = "{mission}"\n'
                                                for n, mission in enumerate(ALL_MISSIONS)))
    config = parse_config(f'[game]\nname = "uranus"\n[board]\nmissions = "{renumbered}"\n')
    (extension,) = game_extensions(config)
    assert extension.catalogue["T00"] == ALL_MISSIONS[0] and "U18" not in extension.catalogue


def test_check_config_names_a_catalogue_that_run_would_refuse(tmp_path: Path) -> None:
    broken = tmp_path / "missions.toml"
    broken.write_text('[cards]\nU01 = "triangle:orange"\n')
    text = f'[game]\nname = "uranus"\n[board]\ncards = "reader"\nmissions = "{broken}"\n'
    (config_file := tmp_path / "companion.toml").write_text(text)
    problems = check_config(config_file)
    assert problems[0] == (f"{config_file}, line 5: {broken}: card U01: 'triangle:orange' is "
                           "not a mission")
    assert problems[1].startswith(f"{config_file}, line 5: {broken}: no card for ")
    config_file.write_text(text.replace(str(broken), str(tmp_path / "gone.toml")))
    assert check_config(config_file) == [
        f"{config_file}, line 5: {tmp_path / 'gone.toml'}: the mission card catalogue cannot "
        "be read (there is no such file)"]
    parse_config(text.replace("uranus", "mars"))  # the other games never read it


def test_a_relative_catalogue_path_is_from_the_config_files_folder(tmp_path: Path) -> None:
    config = parse_config('[board]\nmissions = "cards/missions.toml"\n', "c.toml", tmp_path)
    assert config.board.missions == str(tmp_path / "cards" / "missions.toml")
    with pytest.raises(ConfigError, match=r'line 2: \[board\] missions must be the path'):
        parse_config('[board]\nmissions = " missions.toml"\n')


def test_an_unknown_card_source_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown card source"):
        CardTable(CATALOGUE, cards="camera")


# -- scoring by showing (the text, Your turn 2) --------------------------------------------


def test_a_card_shown_scores_on_the_board_as_it_stands_and_asks_the_deck() -> None:
    triangle = {"0,0": "yellow", "2,0": "yellow", "0,2": "yellow"}
    referee = table(position({**triangle, **SEATED}))
    effects = show(referee, CARD["triangle:yellow"])
    assert Buzz("question") in effects
    screen = [e for e in effects if isinstance(e, Show)][-1].screen
    assert screen.menu == ("deck 1", "deck 2", "deck 3", "deck 4")
    assert screen.message == "P1 scores 6 (triangle yellow): draw from which deck?"
    press(referee, "select")
    effects = press(referee, "ok", 3.0)
    assert committed(effects) == ["score:triangle:yellow/2"]
    state: State = referee.state
    assert (state.scores, state.decks, state.unknown) == ((6, 0), (5, 4, 5, 5), (5, 5))
    assert last_message(effects) == "P1 scored 6 (triangle yellow). P2: move or show a card"


def test_with_one_deck_left_the_score_is_committed_at_once() -> None:
    referee = table(position(SEATED, decks=[0, 0, 3, 0]))
    effects = show(referee, CARD["groups:red"])
    assert committed(effects) == ["score:groups:red/3"]
    assert referee.question is None


def test_drawing_the_last_card_ends_the_game_and_asks_for_the_hands() -> None:
    referee = table(position(SEATED, unknown=(1, 2), decks=[0, 1, 0, 0]))
    effects = show(referee, CARD["groups:red"])
    assert committed(effects) == ["score:groups:red/2"]
    assert last_message(effects) == "The end: P1, show the card in your hand"
    assert not any(isinstance(e, GameOver) for e in effects)


def test_the_deck_counts_are_on_every_screen() -> None:
    referee = table(position(SEATED, decks=[7, 7, 6, 6]))
    assert referee.screen(1.0).extra["decks"] == "7 7 6 6"


def test_the_prompt_highlights_the_legal_destinations() -> None:
    referee = table(position({"0,0": "M1", "2,0": "tree", **{"0,-3": "M2"}}))
    screen = referee.screen(1.0)
    assert screen.message == "P1: move or show a card"
    assert screen.highlights["1,0"] == "dest" and "3,0" not in screen.highlights
    assert "0,-3" not in screen.highlights  # another gardener's spot


def test_the_destinations_are_listed_without_building_the_scoring_steps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Every card the player may hold, on every deck, is a scoring step: the destinations
    # shown on each screen need the moves only.
    state = position({"0,0": "M1", "2,0": "tree", "0,-3": "M2"})
    expected = {s.to for s in RULES.legal_steps(state) if isinstance(s, Move)}

    def scores(*_: Any) -> Any:
        raise AssertionError("the scoring steps were built to show the destinations")

    monkeypatch.setattr(type(RULES), "_scores", scores)
    screen = table(state).screen(1.0)
    dests = {cell for cell, kind in screen.highlights.items() if kind == "dest"}
    assert dests == {hex_name(cell) for cell in expected} and len(dests) > 3


def test_the_destinations_shown_after_a_move_are_worked_out_without_listing_its_moves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The screen of the update that commits a move shows the next player's destinations: the
    # landings of their moves (rules.uranus.destinations), not the moves listed one by one.
    state = position({"0,0": "M1", "2,0": "tree", "0,-3": "M2"})
    referee = table(state)
    after = RULES.apply(state, Move((1, 0), "red"))
    expected = {hex_name(s.to) for s in RULES.legal_steps(after) if isinstance(s, Move)}
    listed: list[Any] = []
    kept = type(RULES).candidates

    def candidates(self: Any, *args: Any, **kwargs: Any) -> Any:
        if sys._getframe(1).f_globals["__name__"] == "companion.referee.uranus":
            listed.append(args)
        return kept(self, *args, **kwargs)

    monkeypatch.setattr(type(RULES), "candidates", candidates)
    effects = settling(referee, {"0,0": "", "1,0": "M1+red"}, 1.0)
    assert committed(effects) == ["1,0=red"]
    screen = [e for e in effects if isinstance(e, Show)][-1].screen
    assert {c for c, kind in screen.highlights.items() if kind == "dest"} == expected
    assert len(expected) > 3 and listed == []


# -- refusals (an unknown card id, a card shown twice) -------------------------------------


def refused(effects: list[Any]) -> str:
    assert Buzz("illegal") in effects
    assert any(isinstance(e, Note) and e.level == "warning" for e in effects)
    shows = [e.screen for e in effects if isinstance(e, Show)]
    assert shows[-1].urgent
    return str(shows[-1].message)


def test_an_unknown_card_id_is_refused() -> None:
    referee = table(position(SEATED))
    before = referee.state
    assert refused(show(referee, "X99")) == "Unknown card X99: not a Gardens of Uranus mission"
    assert referee.state is before


def test_a_card_shown_twice_is_refused() -> None:
    referee = table(position(SEATED, decks=[0, 0, 3, 0]))
    show(referee, CARD["groups:red"])
    referee.handle(BoardMessage(1.5, protocol.Card(seq=2, card_id=CARD["groups:blue"])))
    message = refused(show(referee, CARD["groups:red"], 2.0))
    assert message == "P1: the groups:red card has been scored already"
    assert referee.steps_committed == 2


def test_a_card_another_player_is_known_to_hold_is_refused() -> None:
    state = position(SEATED, unknown=(5, 4), hands={"1": [], "2": ["pairs:blue-red"]})
    message = refused(show(table(state), CARD["pairs:blue-red"]))
    assert message == "P1: player 2 holds the pairs:blue-red card"


def test_a_card_shown_while_a_move_is_under_way_is_refused() -> None:
    referee = table(position(SEATED))
    referee.handle(BoardMessage(0.5, protocol.FieldUpdate(seq=1, cell="-3,3", piece="")))
    referee.handle(Timer(0.6, "debounce"))  # the gardener is lifted
    effects = show(referee, CARD["groups:red"])
    assert Buzz("illegal") in effects and referee.steps_committed == 0



def settling(referee: Referee, changes: dict[str, str], t: float) -> list[Any]:
    """The board reads ``changes`` from ``t`` (one read of the port) past the debounce time;
    the settle time has not passed yet."""
    effects: list[Any] = []
    for cell, piece in changes.items():
        effects += referee.handle(BoardMessage(t, protocol.FieldUpdate(seq=1, cell=cell,
                                                                        piece=piece)))
    return effects + referee.handle(Timer(t + 0.05, "debounce"))


def test_a_card_shown_by_the_next_player_just_after_the_last_move_counts_for_them() -> None:
    referee = table(position(SEATED, decks=[0, 0, 3, 0]))
    effects = settling(referee, {"-3,3": "", "-2,3": "M1+blue"}, 0.5)  # P1's gardener set down
    assert committed(effects) == ["-2,3=blue"] and referee.correcting is not None
    effects = show(referee, CARD["groups:red"], 0.6)
    assert Buzz("illegal") not in effects and committed(effects) == ["score:groups:red/3"]
    assert referee.history[-1][0].to_move == 2  # the card counted for player 2
    assert referee.correcting is None  # the card follows the step: it stands


def test_the_next_players_move_in_the_same_burst_commits_both_moves() -> None:
    referee = table(position(SEATED))
    both = {"-3,3": "", "-2,3": "M1+blue", "0,-3": "", "1,-3": "M2+blue"}
    effects = settling(referee, both, 0.5) + referee.handle(Timer(1.0, "settle"))
    assert committed(effects) == ["-2,3=blue", "1,-3=blue"]
    assert Buzz("illegal") not in effects


# -- the preview: what a card would score now ----------------------------------------------


def test_select_arms_ask_mode_and_the_next_card_is_only_valued() -> None:
    referee = table(position({"0,0": "red", "1,0": "red", **SEATED}))
    effects = press(referee, "select")
    assert last_message(effects) == "Ask: show a card to see what it would score"
    effects = show(referee, CARD["biggest_group:red"], 3.0)
    assert committed(effects) == [] and last_message(effects) == (
        "biggest_group:red would score 2 now")
    assert referee.screen(4.0).message == "P1: move or show a card"  # ask mode is over


def test_a_card_shown_before_the_turns_begin_is_only_valued_in_ask_mode() -> None:
    referee = table(position({"0,0": "red"}, unknown=(5, 5)))
    assert referee.state.phase == "placement"
    assert last_message(press(referee, "select")) == (
        "Ask: show a card to see what it would score")
    effects = show(referee, CARD["groups:red"])
    assert committed(effects) == [] and last_message(effects) == "groups:red would score 1 now"


def test_the_five_drafted_cards_are_registered_face_down_before_placing() -> None:
    """Held to the reader before the gardener is placed, each card is journaled as shown
    and known from then on; the matrix counts them and never names one."""
    referee = table(position({"0,0": "red"}, unknown=(5, 5)))
    hand = ["groups:red", "triangle:blue", "pairs:blue-red", "edge_trees:green",
            "longest_line:yellow"]
    for n, mission in enumerate(hand, 1):
        effects = show(referee, CARD[mission], float(n))
        assert committed(effects) == [f"show:{mission}"]
        message = last_message(effects)
        assert message.startswith(f"P1: {n} of 5 cards registered") and ":" not in message[3:]
    state: State = referee.state
    assert (state.phase, state.to_move, state.unknown) == ("placement", 1, (0, 5))
    assert state.hands[0] == tuple(sorted(hand))
    assert last_message(effects) == "P1: 5 of 5 cards registered; place your gardener"
    effects = show(referee, CARD["hexagon"], 9.0)  # a sixth: only valued, as ever
    assert committed(effects) == [] and "would score" in last_message(effects)
    referee.commit(RULES.parse_step(referee.state, "@1,0"), 10.0)
    pieces = tuple(referee.expected[c] for c in referee.layout)  # the gardener set down
    referee.handle(BoardMessage(10.5, protocol.Dump(seq=2, pieces=pieces)))
    effects = show(referee, CARD["groups:red"], 11.0)  # P2 cannot register P1's card
    assert committed(effects) == []
    assert last_message(effects) == "P2: player 1 holds the groups:red card"


def test_a_card_registered_twice_is_refused_without_naming_it() -> None:
    """The matrix faces the whole table: a card held to the reader a second time while
    registering is refused as "that card", never by its mission."""
    referee = table(position({"0,0": "red"}, unknown=(5, 5)))
    show(referee, CARD["triangle:blue"], 1.0)
    effects = show(referee, CARD["triangle:blue"], 2.0)
    assert committed(effects) == []
    assert last_message(effects) == "P1: that card is registered already"


# -- the Hexagon (the text, Mission cards) -------------------------------------------------


def hexagon_position() -> State:
    return position({**dict.fromkeys(RING, "purple"), **SEATED})


def test_a_standing_hexagon_is_announced() -> None:
    message = table(hexagon_position()).screen(1.0).message
    assert message.startswith("Hexagon on the board: its holder shows the card to win!")


def test_the_hexagon_card_shown_asks_whose_it_is_and_wins() -> None:
    referee = table(hexagon_position())
    effects = show(referee, CARD["hexagon"])
    screen = [e for e in effects if isinstance(e, Show)][-1].screen
    assert screen.menu == ("P1", "P2") and screen.message.startswith("Hexagon! Whose card")
    press(referee, "select")
    effects = press(referee, "ok", 3.0)
    assert committed(effects) == ["claim:2"]
    state: State = referee.state
    assert (state.phase, state.hexagon_winner) == ("reveal", 2)


def test_when_one_player_may_hold_the_hexagon_it_wins_at_once() -> None:
    referee = table(replace(hexagon_position(), unknown=(0, 5), hands=(("groups:red",), ())))
    assert committed(show(referee, CARD["hexagon"])) == ["claim:2"]


# -- the end: hands shown, final scores ----------------------------------------------------


def test_each_player_shows_the_cards_left_then_the_final_scores_are_logged() -> None:
    cells = {"0,0": "blue", "1,0": "blue", **SEATED}
    state = position(cells, unknown=(1, 2), decks=[0, 1, 0, 0], scores={"1": 3, "2": 0})
    referee = table(state)
    show(referee, CARD["groups:red"])
    effects = show(referee, CARD["biggest_group:blue"], 2.0)
    assert last_message(effects) == "The end: P2, show the 2 cards in your hand"
    show(referee, CARD["groups:blue"], 3.0)
    effects = show(referee, CARD["pairs:blue-red"], 4.0)
    over = [e for e in effects if isinstance(e, GameOver)]
    # P1: 3 + biggest_group:blue 2 - 21 (6 flowers left); P2: 0 + groups:blue 1 + pairs 0 - 21
    assert over and over[0].outcome.ranking == ((1, "-16 pts", 1), (2, "-20 pts", 0))
    notes = [e.text for e in effects if isinstance(e, Note)]
    assert final_breakdown(referee.state) in notes
    assert final_breakdown(referee.state) == (
        "final scores: P1 3 + cards 2 - unused 21 = -16; P2 0 + cards 1 - unused 21 = -20")


def test_a_card_counted_already_is_not_shown_again() -> None:
    state = position(SEATED, unknown=(1, 1), decks=[0, 1, 0, 0],
                     hands={"1": ["groups:blue"], "2": []})
    referee = table(state)
    show(referee, CARD["groups:red"])
    effects = show(referee, CARD["groups:blue"], 2.0)
    assert last_message(effects) == "groups:blue is counted already for P1"


def test_final_breakdown_adds_cards_and_takes_the_penalty() -> None:
    state = position({"0,0": "blue", "1,0": "blue", **SEATED}, unknown=(0, 0),
                     hands={"1": ["biggest_group:blue"], "2": []}, scores={"1": 3, "2": 0},
                     reserves={"1": {"red": 2}, "2": {}})
    assert final_breakdown(state) == (
        "final scores: P1 3 + cards 2 - unused 3 = 2; P2 0 + cards 0 - unused 0 = 0")


# -- without a reader: the card menu (Select/OK) -------------------------------------------


def test_without_a_reader_ok_opens_the_card_menu_kind_then_card_then_deck() -> None:
    referee = table(position({"0,0": "red", "1,0": "red", **SEATED}), cards="buttons")
    assert referee.screen(1.0).message == "P1: move, or OK to score a card"
    menu = [e for e in press(referee, "ok") if isinstance(e, Show)][-1].screen.menu
    assert menu[:3] == ("biggest_group", "groups", "longest_line")
    effects = press(referee, "ok", 3.0)  # biggest_group
    screen = [e for e in effects if isinstance(e, Show)][-1].screen
    assert screen.menu[0] == "biggest_group:blue"
    assert screen.message == "biggest_group:blue would score 0. Select, then OK"
    effects = press(referee, "select", 4.0)
    assert last_message(effects) == "biggest_group:red would score 2. Select, then OK"
    press(referee, "ok", 5.0)
    effects = press(referee, "ok", 6.0)  # deck 1
    assert committed(effects) == ["score:biggest_group:red/1"]
    assert referee.state.scores == (2, 0)


def test_undo_leaves_the_card_menu_without_scoring() -> None:
    referee = table(position(SEATED), cards="buttons")
    press(referee, "ok")
    press(referee, "undo", 3.0)
    assert referee.question is None and referee.steps_committed == 0


def test_card_text() -> None:
    assert card_text("edge_trees:red") == "edge trees red"
    assert card_text("pairs:blue-red") == "pairs blue-red"


# -- reference PNGs of the Uranus screens, each board --------------------------------------


def midgame(board: str) -> Referee:
    """A two-player game on ``board`` (seed 4): gardeners placed, a few flowers planted."""
    state = RULES.new_game(2, 4, {"board": board})
    cells = [c for c in BOARDS[board].grid.cells if c not in state.trees]
    state = RULES.apply(RULES.apply(state, Place(cells[0])), Place(cells[-1]))
    for _ in range(6):
        moves = [s for s in RULES.legal_steps(state) if isinstance(s, Move) and s.plant]
        state = RULES.apply(state, moves[len(moves) // 2])
    return table(state)


def uranus_screens() -> dict[str, Screen]:
    out = {}
    for board in sorted(BOARDS):
        referee = midgame(board)
        out[f"uranus-{board}-turn"] = referee.screen(1.0)
        effects = show(referee, CARD["groups:red"])
        out[f"uranus-{board}-deck"] = [e for e in effects if isinstance(e, Show)][-1].screen
    hexagon = table(hexagon_position())
    out["uranus-hexagonal-hexagon"] = hexagon.screen(1.0)
    end = table(position(SEATED, unknown=(1, 2), decks=[0, 1, 0, 0]))
    out["uranus-hexagonal-reveal"] = [
        e for e in show(end, CARD["groups:red"]) if isinstance(e, Show)][-1].screen
    return out


SIZES = (((16, 16), "RGB"), ((32, 32), "RGB"), ((32, 8), "1"))
SCREEN_CASES = [(name, screen, size, mode) for name, screen in uranus_screens().items()
                for size, mode in SIZES]


@pytest.mark.parametrize(
    ("name", "screen", "size", "mode"), SCREEN_CASES,
    ids=[f"{n}-{w}x{h}-{'mono' if m == '1' else 'rgb'}" for n, _, (w, h), m in SCREEN_CASES])
def test_uranus_screen_matches_reference_png(name: str, screen: Screen, size: tuple[int, int],
                                             mode: str) -> None:
    device = dummy(width=size[0], height=size[1], mode=mode)
    device.display(render(screen, width=size[0], height=size[1], mode=mode))
    path = GOLDEN / f"{name}-{size[0]}x{size[1]}-{'mono' if mode == '1' else 'rgb'}-f0.png"
    if REGEN:
        device.image.save(path)
    reference = Image.open(path)
    difference = ImageChops.difference(reference.convert("RGB"), device.image.convert("RGB"))
    assert difference.getbbox() is None

