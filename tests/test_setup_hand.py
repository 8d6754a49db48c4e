"""Whole games started from a setup the players laid out by hand, at random (drawn by the
simulator, never from the companion's seed), through the simulated board and the real
referee, refereed to their end; and what the referee shows while the setup is not legal."""

from __future__ import annotations

import random
from pathlib import Path

from companion.board import protocol
from companion.config import Config, GameConfig
from companion.daemon.games import game_extensions
from companion.events import BoardMessage, Button, Timer
from companion.referee.deal import DealTable
from companion.referee.effects import Adopted, Show
from companion.referee.referee import USE_GARDEN, Referee, RefereeSettings
from companion.rules import enceladus, mars, uranus
from companion.rules.squares import SQUARE_NAMES
from companion.sim.handsetup import bare_board, draw_deal, draw_setup
from companion.sim.harness import GameReport, VirtualTable


def _config(game: str) -> Config:
    """The configuration of a game whose setup is the players': garden and deal."""
    return Config(game=GameConfig(name=game, setup="board"))


def _clean(report: GameReport) -> None:
    assert report.over, f"seed {report.seed}: the game did not reach its end"
    assert (report.false_alarms, report.missed, report.false_commits) == (0, 0, 0)
    # every step committed once (two flowers of one colour swapped read as any such swap)
    assert len(report.committed) == len(report.performed)


def test_enceladus_whole_game_from_a_garden_laid_out_by_hand() -> None:
    state = enceladus.RULES.new_game(2, 11, {})
    setup = draw_setup(enceladus.RULES, state, random.Random(501))
    assert setup != enceladus.RULES.board(state)  # not the companion's seeded garden
    table = VirtualTable(enceladus.RULES, state, "enceladus", seed=7)
    report = table.play(setup=setup)
    _clean(report)
    assert {c: p for c, p in enceladus.RULES.board(table.referee.history[0][0]).items()
            if c in SQUARE_NAMES} == {c: setup[c] for c in SQUARE_NAMES}


def test_mars_whole_game_with_peaks_laid_out_by_hand() -> None:
    state = mars.RULES.new_game(3, 12, {"peaks": 4})
    setup = draw_setup(mars.RULES, state, random.Random(502))
    assert setup != mars.RULES.board(state)
    table = VirtualTable(mars.RULES, state, "mars", seed=8)
    table.referee.extensions = game_extensions(_config("mars"))  # the dice tray, the deal
    deal = draw_deal(mars.RULES, state, random.Random(602))
    report = table.play(setup=setup, deal=deal)
    _clean(report)
    assert table.referee.history[0][0].reserves == tuple(
        tuple(r[c] for c in mars.COLOURS) for r in deal) != state.reserves
    first = mars.RULES.board(table.referee.history[0][0])
    assert {c for c, p in first.items() if p == "peak"} == {
        c for c, p in setup.items() if p == "peak"}


def test_uranus_whole_game_with_trees_laid_out_by_hand() -> None:
    state = uranus.RULES.new_game(2, 13, {"board": "rhombus"})
    setup = draw_setup(uranus.RULES, state, random.Random(503))
    assert setup != uranus.RULES.board(state)
    table = VirtualTable(uranus.RULES, state, "uranus-rhombus", seed=9,
                         settings=RefereeSettings(settle_s=0.25))
    table.referee.extensions = game_extensions(_config("uranus"))  # the deal, the reader
    deal = draw_deal(uranus.RULES, state, random.Random(603))
    report = table.play(setup=setup, deal=deal)
    _clean(report)
    assert table.referee.history[0][0].reserves == tuple(
        tuple(r[c] for c in uranus.COLOURS) for r in deal) != state.reserves
    assert table.referee.history[0][0].trees == frozenset(
        uranus.parse_hex(c) for c, p in setup.items() if p == "tree")


def _dump(referee: Referee, board: dict[str, str], t: float) -> list[object]:
    pieces = tuple(board[c] for c in referee.layout)
    return referee.handle(BoardMessage(t, protocol.Dump(seq=0, pieces=pieces)))


def _shown(effects: list[object]) -> Show:
    return [e for e in effects if isinstance(e, Show)][-1]


def test_a_setup_that_breaks_a_condition_is_named_and_taken_once_put_right() -> None:
    state = enceladus.RULES.new_game(2, 11, {})
    setup = draw_setup(enceladus.RULES, state, random.Random(1))
    flower = next(c for c in SQUARE_NAMES if setup[c] != "peak")
    referee = Referee(enceladus.RULES, state, "enceladus", adopt=True)
    screen = _shown(_dump(referee, {**setup, flower: "", "R2": "M1"}, 0.0)).screen
    assert screen.message.startswith(
        f"Setup: Every square of the garden holds a flower or a peak: {flower} does not.")
    assert screen.message.endswith("(2 more)")
    assert screen.highlights == {flower: "place", "R2": "wrong"}  # to fill, to take away
    assert screen.cells[flower] == "" and screen.cells["R2"] == "M1"  # the board as it is
    assert referee.adopt and not referee.history
    # put right: taken after the settle time, never before
    effects = _dump(referee, setup, 1.0)
    assert not [e for e in effects if isinstance(e, Adopted)]
    effects = referee.handle(Timer(1.0 + referee.settings.settle_s, "settle"))
    adopted = [e for e in effects if isinstance(e, Adopted)]
    assert adopted and enceladus.RULES.parse_position(adopted[0].position) == referee.state
    assert not referee.adopt and not referee.syncing
    assert _shown(effects).screen.message == "P1: your turn"


def test_ok_on_use_this_garden_takes_the_garden_of_a_seeded_game() -> None:
    state = enceladus.RULES.new_game(2, 11, {})
    setup = draw_setup(enceladus.RULES, state, random.Random(2))
    referee = Referee(enceladus.RULES, state, "enceladus")
    screen = _shown(_dump(referee, setup, 0.0)).screen
    assert screen.message == "Set up the board as shown" and screen.menu == (USE_GARDEN,)
    effects = referee.handle(Button(0.5, "ok", True))  # the board has stood still: at once
    assert [e for e in effects if isinstance(e, Adopted)]
    assert enceladus.RULES.board(referee.state) == {**setup, **{
        c: "" for c in enceladus.TRAY_CELLS}}


def test_a_presence_board_is_never_offered_the_garden_as_it_stands() -> None:
    state = enceladus.RULES.new_game(2, 11, {})
    referee = Referee(enceladus.RULES, state, "enceladus",
                      settings=RefereeSettings(presence=True))
    board = {c: "occupied" if p else "" for c, p in bare_board(enceladus.RULES, state).items()}
    screen = _shown(_dump(referee, board, 0.0)).screen
    assert screen.message == "Set up the board as shown" and screen.menu == ()


def _press(referee: Referee, name: str, t: float) -> list[object]:
    return referee.handle(Button(t, name, True))


def _enter(referee: Referee, deal: list[list[int]], t: float) -> tuple[list[object], float]:
    """Enter ``deal`` (per player, the counts of every colour but the last) with Select and
    OK as the players do; the effects of the last OK and the time after it."""
    effects: list[object] = []
    for counts in deal:
        for count in counts:
            for _ in range(count):
                t += 0.3
                _press(referee, "select", t)
            t += 0.3
            effects = _press(referee, "ok", t)
    return effects, t


def test_reserves_dealt_by_hand_are_entered_with_select_and_ok_and_checked() -> None:
    from companion.config import BoardConfig

    config = Config(game=GameConfig(name="mars", setup="board"), board=BoardConfig(dice="tray"))
    state = mars.RULES.new_game(2, 3, {})
    referee = Referee(mars.RULES, state, "mars", adopt=True, extensions=game_extensions(config))
    empty = dict.fromkeys(referee.layout, "")
    _dump(referee, empty, 0.0)
    effects = referee.handle(Timer(referee.settings.settle_s, "settle"))  # the empty board
    assert [e for e in effects if isinstance(e, Adopted)] and not referee.adopt
    assert _shown(effects).screen.message == (
        "Reserves dealt by hand: P1 blue? 0 (Select +1, OK next)")
    assert _shown(_press(referee, "select", 1.0)).screen.message.startswith(
        "Reserves dealt by hand: P1 blue? 1")
    _press(referee, "ok", 1.2)  # P1 has one blue flower: the bag's other 9 are P2's at most
    effects, t = _enter(referee, [[5, 6, 6, 6], [10, 4, 4, 4, 4]], 2.0)
    screen = _shown(effects).screen
    # each player's last colour is the rest of their deal: only the bag can be overdrawn
    assert screen.urgent and screen.message.startswith(
        "The reserves hold 11 blue flowers: the bag has only 10.")
    assert screen.message.endswith("Again: Reserves dealt by hand: P1 blue? 0 "
                                   "(Select +1, OK next)")
    effects, t = _enter(referee, [[4, 6, 5, 5, 5], [6, 4, 5, 5, 5]], t)
    adopted = [e for e in effects if isinstance(e, Adopted)]
    wanted = ((4, 6, 5, 5, 5, 5), (6, 4, 5, 5, 5, 5))
    assert referee.state.reserves == wanted and adopted
    assert mars.RULES.parse_position(adopted[0].position).reserves == wanted
    assert _shown(effects).screen.message.startswith("P1: take ")  # placement goes on


def test_select_never_counts_past_what_is_left_of_a_players_deal() -> None:
    """With 30 flowers of a 2-player Mars deal counted in three colours, Select leaves the
    fourth at 0: the rest of the deal cannot go below 0, a count the players never gave."""
    from companion.config import BoardConfig

    config = Config(game=GameConfig(name="mars", setup="board"), board=BoardConfig(dice="tray"))
    referee = Referee(mars.RULES, mars.RULES.new_game(2, 3, {}), "mars", adopt=True,
                      extensions=game_extensions(config))
    _dump(referee, dict.fromkeys(referee.layout, ""), 0.0)
    referee.handle(Timer(referee.settings.settle_s, "settle"))
    _, t = _enter(referee, [[10, 10, 5]], 1.0)  # blue, yellow, white: 25 of P1's 30
    assert _shown(_press(referee, "select", t + 0.3)).screen.message.startswith(
        "Reserves dealt by hand: P1 gray? 1")
    _, t = _enter(referee, [[4]], t + 0.3)  # gray 5 in all: nothing left for red
    assert _shown(_press(referee, "select", t + 0.3)).screen.message.startswith(
        "Reserves dealt by hand: P1 red? 0")


def test_reserves_typed_in_on_the_page_are_not_asked_again_at_the_companion(
        tmp_path: Path) -> None:
    import queue

    from companion.config import JournalConfig
    from companion.daemon.service import Service
    from companion.events import StartGame

    config = Config(game=GameConfig(name="mars", setup="board"),
                    journal=JournalConfig(directory=str(tmp_path), fsync=False))
    state = mars.RULES.new_game(2, 3, {})
    referee = Referee(mars.RULES, state, "mars", adopt=True, extensions=game_extensions(config))
    assert any(isinstance(e, DealTable) for e in referee.extensions)
    service = Service(referee, queue.Queue(), config=config)
    deal = ({"blue": 4, "yellow": 6, "white": 5, "gray": 5, "red": 5, "green": 5},
            {"blue": 6, "yellow": 4, "white": 5, "gray": 5, "red": 5, "green": 5})
    service._handle(StartGame(0.0, players=2, seed=9, reserves=deal))
    assert service.referee.state.reserves == ((4, 6, 5, 5, 5, 5), (6, 4, 5, 5, 5, 5))
    assert service.referee.adopt  # the garden is still the players'
    assert not any(isinstance(e, DealTable) for e in service.referee.extensions)
    service._handle(StartGame(1.0, players=2, seed=9))  # no counts typed in: asked
    assert any(isinstance(e, DealTable) for e in service.referee.extensions)
    if service.journal is not None:
        service.journal.close()
