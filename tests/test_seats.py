"""The companion in a seat: whole games against it at each strength, its step announced part
by part and accepted alone at its seat, hints asked and counted, its Uranus cards secret.

Whole games run in virtual time (:class:`companion.sim.harness.VirtualTable`): a person's seat
played by a virtual person through the simulated board with people's noise, the companion's
seat carried out by the virtual person as the matrix announces it, everything refereed by the
real referee to the end.  The strong companion's games of Enceladus and Uranus are the slow
ones (``pytest -m slow``); Mars plays strong in the default run.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion import journal as journal_mod
from companion.board import protocol
from companion.config import Config, GameConfig, PlayersConfig, layout_name, parse_config
from companion.daemon.games import game_seats
from companion.daemon.service import game_extensions, new_game, new_or_resumed_game
from companion.errors import ConfigError
from companion.events import BoardMessage, Button, Hint
from companion.opponent import choose
from companion.referee.effects import Dealt, Hinted, Show
from companion.referee.referee import RefereeSettings
from companion.referee.seats import LONG_PRESS_S, Seats, describe
from companion.referee.uranus import card_text, load_catalogue
from companion.rules import load
from companion.rules.uranus import CASES, Score, validate
from companion.sim.harness import GameReport, VirtualTable, rehearse
from companion.sim.perform import Noise, Put, Signal
from companion.tools.replay import format_game, replay_game
from companion.web.page import snapshot

NOISELESS = Noise.none()


def table(game: str, seats: tuple[str, ...], seed: int, **options: Any) -> VirtualTable:
    """A virtual table of ``game`` with ``seats`` (``[players] seats``)."""
    config = replace(Config(), game=GameConfig(name=game, players=len(seats), seed=seed),
                     players=PlayersConfig(seats=seats))
    rules = load(game).RULES
    state = rules.new_game(len(seats), seed, config.game.rules_options())
    return VirtualTable(rules, state, layout_name(config), seed=seed,
                        extensions=game_extensions(config), seats=game_seats(config),
                        **options)


class Screens:
    """Every screen a table shows, in order."""

    def __init__(self, table: VirtualTable) -> None:
        self.shown: list[Any] = []
        run = table._run_effects

        def spy(effects: list[Any]) -> None:
            self.shown += [e.screen for e in effects if isinstance(e, Show)]
            run(effects)

        table._run_effects = spy  # type: ignore[method-assign]


def played(report: GameReport) -> None:
    faults = (report.false_alarms, report.missed, report.false_commits)
    assert faults == (0, 0, 0), f"seed {report.seed}: (false alarms, missed, false commits)"
    # Two Enceladus steps may leave the same state (a pick and a soliflower taking the same
    # flowers): the harness counts a commit whose state differs as a false commit.
    assert report.over and len(report.committed) == len(report.performed)


STRONG_SLOW = {"enceladus", "uranus"}
GAMES = [pytest.param(game, strength, id=f"{game}-{strength}",
                      marks=[pytest.mark.slow] if strength == "strong" and game in STRONG_SLOW
                      else [])
         for game in ("enceladus", "mars", "uranus") for strength in ("quick", "steady", "strong")]


@pytest.mark.parametrize(("game", "strength"), GAMES)
def test_a_whole_game_against_the_companion_is_refereed_to_its_end(
        game: str, strength: str) -> None:
    played_at = table(game, ("person", strength), seed=11)
    screens = Screens(played_at)
    report = played_at.play()
    played(report)
    seats = played_at.seats
    assert seats is not None and seats.times[strength]  # the companion chose its steps
    announced = [s.message for s in screens.shown if s.message.startswith("P2: companion: ")]
    assert len(announced) >= len(seats.times[strength]) // 2


@pytest.mark.parametrize("game", ["enceladus", "mars", "uranus"])
def test_a_presence_board_game_against_the_companion_is_refereed_to_its_end(game: str) -> None:
    played(table(game, ("person", "steady"), seed=6,
                 settings=RefereeSettings(presence=True)).play())


def test_a_companion_at_every_seat_plays_a_game_through() -> None:
    report = table("mars", ("quick", "steady", "quick"), seed=4).play()
    played(report)


# ---------------------------------------------------------------------- announced, refused


def test_the_companions_step_is_announced_part_by_part() -> None:
    rules = load("enceladus").RULES
    state = rules.new_game(2, 3, {})
    place = next(iter(rules.legal_steps(state)))
    [part] = describe(rules, state, place)
    assert part.text == f"place the Martian on {place.cell}" and part.cells == {
        place.cell: "dest"}
    mars = load("mars").RULES
    state = mars.new_game(2, 3, {})
    while mars.to_move(state) and state.phase.value != "move":
        state = mars.apply(state, next(iter(mars.legal_steps(state))))
    move = next(s for s in mars.legal_steps(state) if getattr(s, "plant", None))
    texts = [p.text for p in describe(mars, state, move)]
    assert texts[0].startswith("gardener ") and f"plant {move.plant}" in texts
    assert f"use die {move.die}" in texts


def enceladus_placing() -> tuple[Any, Any, VirtualTable]:
    """A noiseless Enceladus table where the companion places first."""
    played_at = table("enceladus", ("quick", "person"), seed=5, noise=NOISELESS,
                      heartbeat_s=None)
    played_at.referee.settings = replace(played_at.referee.settings, heartbeat_timeout_s=1e9)
    rules = played_at.rules
    announced = played_at.seats.announced(played_at.truth)  # type: ignore[union-attr]
    other = next(s for s in rules.legal_steps(played_at.truth) if s != announced)
    return announced, other, played_at


def test_the_referee_refuses_another_step_at_the_companions_seat_naming_its_cells() -> None:
    announced, other, played_at = enceladus_placing()
    played_at.start()
    assert played_at.screen.message == f"P1: companion: place the Martian on {announced.cell}"
    assert played_at.screen.highlights == {announced.cell: "dest"}
    played_at._play_ops([Put(0.5, other.cell, "M1")])  # a legal placement, not the one said
    played_at._advance(played_at.now + 3.0)
    assert played_at.report.committed == []
    assert played_at.screen.urgent
    assert played_at.screen.highlights == {other.cell: "wrong"}
    assert played_at.screen.message.startswith("Not the companion's step")
    # Put right, with a lift and a glitch on the way: the announced step is committed.
    ops = [Put(0.5, other.cell, ""), Put(0.4, announced.cell, "M1"),
           Put(0.002, announced.cell, ""), Put(0.002, announced.cell, "M1")]
    played_at._play_ops(ops)
    played_at._advance(played_at.now + 2.0)
    assert played_at.report.committed == [played_at.rules.format_step(played_at.truth,
                                                                      announced)]


def test_the_same_step_at_a_persons_seat_is_accepted() -> None:
    announced, other, played_at = enceladus_placing()
    rules = played_at.rules
    state = played_at.truth
    free = rehearse(rules, state, "enceladus", rules.board(state),
                    [Put(0.5, other.cell, "M1")], settings=RefereeSettings())
    seated = rehearse(rules, state, "enceladus", rules.board(state),
                      [Put(0.5, other.cell, "M1")], settings=RefereeSettings(),
                      seats=played_at.seats)
    assert free.committed == [rules.format_step(state, other)] and not free.wrong
    assert seated.committed == [] and seated.wrong == {other.cell}


def first_score(rules: Any, state: Any, strength: str, *, rng: random.Random,
                known: Any = None, time_cap: float | None = None) -> Any:
    """The quick companion, but scoring the first card of its hand whenever it may."""
    scores = [s for s in load("uranus").RULES.legal_steps(state)
              if isinstance(s, Score) and known and s.mission in known]
    return scores[0] if scores else choose(rules, state, "quick", rng=rng, known=known)


def uranus_table(cards: str = "buttons", **options: Any) -> VirtualTable:
    """A Uranus table, the companion at seat 2 scoring a card whenever it may; ``cards``:
    ``[board] cards`` (with ``"reader"`` its cards are read face down, else it deals them)."""
    config = replace(Config(), game=GameConfig(name="uranus", players=2, seed=9),
                     players=PlayersConfig(seats=("person", "quick")),
                     board=replace(Config().board, cards=cards))
    seats = game_seats(config)
    seats.choose = first_score
    state = load("uranus").RULES.new_game(2, 9, config.game.rules_options())
    return VirtualTable(load("uranus").RULES, state, layout_name(config), seed=9,
                        extensions=game_extensions(config), seats=seats, **options)


def test_a_card_shown_at_the_companions_seat_that_it_did_not_announce_is_refused() -> None:
    played_at = uranus_table(noise=NOISELESS, heartbeat_s=None)
    played_at.referee.settings = replace(played_at.referee.settings, heartbeat_timeout_s=1e9)
    played_at.start()
    for _ in range(3):  # both gardeners placed, then the person's first move
        played_at.play_step()
    seats = played_at.seats
    assert seats is not None
    announced = seats.announced(played_at.truth)
    assert isinstance(announced, Score)
    hand = seats.hand(played_at.rules, played_at.truth, 2)
    assert played_at.screen.message == (f"P2: companion: score {card_text(announced.mission)}, "
                                        f"draw from deck {announced.draw}, then OK")
    other = next(m for m in sorted(set(load_catalogue().values()))
                 if m not in hand and m != announced.mission)
    ids = {mission: card for card, mission in load_catalogue().items()}
    played_at._play_ops([Signal(0.5, protocol.Card(seq=0, card_id=ids[other]))])
    assert played_at.report.committed[-1] != played_at.rules.format_step(
        played_at.truth, announced)
    assert played_at.screen.message == ("Not the companion's step: the companion plays score "
                                        f"{card_text(announced.mission)}, draw from deck "
                                        f"{announced.draw}")
    assert played_at.screen.urgent
    assert played_at.play_step()  # OK carries out the announced score
    assert played_at.report.committed[-1] == played_at.rules.format_step(
        played_at.referee.history[-1][0], announced)


@pytest.mark.parametrize("cards", ["reader", "buttons"])
def test_the_companions_cards_are_shown_only_when_it_scores_or_shows_them(cards: str) -> None:
    played_at = uranus_table(cards)
    screens = Screens(played_at)
    report = played_at.play()
    played(report)
    rules, seats = played_at.rules, played_at.seats
    assert seats is not None
    by_state = {id(before): step for before, step in played_at.referee.history}
    mine = [(n, step) for n, (before, step) in enumerate(played_at.referee.history)
            if rules.to_move(before) == 2 and getattr(step, "mission", None)]
    assert mine and by_state  # the companion scored and showed cards
    texts = [" ".join((s.message, *s.extra.values(), *s.menu)) for s in screens.shown]
    for _, step in mine:
        said = card_text(step.mission)
        first = next(i for i, text in enumerate(texts) if said in text)
        assert texts[first].startswith("P2: companion: "), texts[first]


# ---------------------------------------------------------------------- hints


def long_select(played_at: VirtualTable, held: float) -> list[Any]:
    t = played_at.now + 0.5
    effects = played_at.deliver(Button(t, "select", True))
    effects += played_at.deliver(Button(t + held, "select", False))
    played_at.now = t + held
    played_at.time.run(effects)
    return effects


def test_a_long_select_press_shows_the_strong_step_as_a_hint_and_counts_it() -> None:
    played_at = table("mars", ("person", "quick"), seed=2, noise=NOISELESS)
    played_at.start()
    assert not [e for e in long_select(played_at, 0.3) if isinstance(e, Hinted)]
    [hinted] = [e for e in long_select(played_at, LONG_PRESS_S) if isinstance(e, Hinted)]
    assert (hinted.number, hinted.player) == (1, 1)
    assert played_at.screen.message.startswith("P1: hint: place the gardener on ")
    assert list(played_at.screen.highlights.values()) == ["dest"]
    effects = played_at.deliver(Hint(played_at.now + 1))  # the live page's button
    assert [e for e in effects if isinstance(e, Hinted)]
    report = played_at.play()
    played(report)
    assert played_at.seats is not None and played_at.seats.hints == {1: 2}
    assert played_at.screen.ranking and played_at.screen.extra["hints"] == "P1 2"


def test_no_hint_is_given_at_the_companions_turn() -> None:
    played_at = table("mars", ("quick", "person"), seed=2, noise=NOISELESS)
    played_at.start()
    effects = played_at.deliver(Hint(1.0))
    assert not [e for e in effects if isinstance(e, Hinted)]
    assert "No hint now" in effects[-1].screen.message


def test_hints_are_journaled_resumed_and_replayed(tmp_path: Path) -> None:
    config = replace(Config(), game=GameConfig(name="mars", players=2, seed=3),
                     players=PlayersConfig(seats=("person", "steady")))
    rules = load("mars").RULES
    state, journal = new_game(config, rules, tmp_path, fsync=False)
    assert journal is not None
    step = next(iter(rules.legal_steps(state)))
    journal.hint(1, 1)
    journal.step(1, 1, rules.format_step(state, step))
    journal.hint(2, 1)
    journal.close()
    record = journal_mod.read(journal.path)
    assert record.hints == {1: 2} and record.header["seats"] == ["person", "steady"]
    assert "Hints asked: P1 2" in format_game(record, list(replay_game(record, rules)))
    resumed = new_or_resumed_game(config, rules, tmp_path, fsync=False)
    assert resumed.resumed and resumed.hints == {1: 2} and len(resumed.history) == 1
    assert game_seats(config, resumed.hints).hints == {1: 2}


# ---------------------------------------------------------------------- configuration


def test_players_seats_are_read_and_checked() -> None:
    config = parse_config('[game]\nplayers = 3\n[players]\nseats = ["person", "strong", '
                          '"quick"]\n')
    assert config.players.seats == ("person", "strong", "quick")
    assert config.players.seat(2) == "strong"
    with pytest.raises(ConfigError) as wrong:
        parse_config('[players]\nseats = ["person", "best"]\n', "c.toml")
    assert wrong.value.problems == [
        'c.toml, line 2: [players] seats must be a list with one seat per player, each '
        '"person", "quick", "steady" or "strong", such as ["person", "strong"], or [] for '
        'people in every seat, not "best" (seat 2 of the list)']
    with pytest.raises(ConfigError) as counted:
        parse_config('[players]\nseats = ["strong"]\n', "c.toml")
    assert counted.value.problems == [
        "c.toml, line 2: [players] seats lists 1 seats but [game] players is 2; give one "
        "seat per player"]


def test_the_announced_step_is_the_same_after_undo() -> None:
    seats = Seats(("quick", "person"), seed=1)
    rules = load("enceladus").RULES
    state = rules.new_game(2, 1, {})
    first = seats.announce(rules, state)
    assert seats.announce(rules, state) == first
    assert Seats(("quick", "person"), seed=1).announce(rules, state) == first  # replays
    assert seats.announced(state) == first


# ---------------------------------------------------------------------- the demo


def test_the_demo_plays_against_the_companion_in_real_time(tmp_path: Path) -> None:
    """``companion demo --opponent steady``: the daemon built as ``companion run`` builds it,
    the board on a pseudo-terminal, the virtual person at the companion's seat carrying out
    what the matrix announces, to the end."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "companion.cli", "demo", "--game", "mars", "--opponent",
         "steady", "--display", "dummy", "--speed", "20", "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The companion plays P2 (steady)" in done.stdout
    assert "Winner: Player " in done.stdout
    [journal] = (tmp_path / "out" / "journals" / "demo-mars-2p-1").glob("*.jsonl")
    record = journal_mod.read(journal)
    assert record.header["seats"] == ["person", "steady"] and record.over is not None


def test_the_companions_hand_is_the_same_after_a_restart_and_a_scored_card_is_replaced() -> None:
    rules = load("uranus").RULES
    catalogue = load_catalogue()
    state = rules.new_game(3, 8, {})
    seats = Seats(("quick", "person", "steady"), seed=8, catalogue=catalogue)
    first, third = seats.hand(rules, state, 1), seats.hand(rules, state, 3)
    assert len(first) == len(third) == 5 and not set(first) & set(third)
    again = Seats(("quick", "person", "steady"), seed=8, catalogue=catalogue)
    assert again.hand(rules, state, 1) == first and seats.hand(rules, state, 2) == []
    scored = replace(state, discarded=frozenset({first[0]}))
    after = seats.hand(rules, scored, 1)
    assert first[0] not in after and set(first[1:]) <= set(after) and len(after) == 5


def test_the_announcement_stays_while_the_person_carries_it_out() -> None:
    _, _, played_at = enceladus_placing()
    played_at.start()
    assert played_at.play_step() and played_at.play_step()  # both Martians placed
    rules, state = played_at.rules, played_at.truth
    announced = played_at.seats.announced(state)  # type: ignore[union-attr]
    [origin] = [c for c, p in rules.board(state).items() if p.startswith("M1")]
    said = "; ".join(p.text for p in describe(rules, state, announced))
    assert played_at.screen.message == f"P1: companion: {said}"
    played_at._play_ops([Put(0.5, origin, "")])  # the Martian lifted
    played_at._advance(played_at.now + 0.2)
    assert played_at.screen.message == f"P1: companion: {said}: go on"
    assert "dest" in played_at.screen.highlights.values()  # guided to where it goes


def test_with_a_reader_the_companions_cards_are_read_face_down_and_named_nowhere(
        tmp_path: Path) -> None:
    played_at = uranus_table("reader", noise=NOISELESS, heartbeat_s=None)
    played_at.referee.settings = replace(played_at.referee.settings, heartbeat_timeout_s=1e9)
    screens = Screens(played_at)
    played_at.start()
    for _ in range(2):  # both gardeners placed: no card is needed for that
        assert played_at.play_step()
    seats = played_at.seats
    assert seats is not None and played_at.rules.to_move(played_at.truth) == 1
    assert played_at.play_step()  # the person's first move: then the companion's turn
    assert played_at.screen.message == ("P2: companion: hold 5 cards for it face down to the "
                                        "reader")
    assert seats.announced(played_at.truth) is None and seats.dealt == {}
    ids = sorted(load_catalogue())[:5]
    effects: list[Any] = []
    for card in [ids[0], ids[0], *ids[1:]]:  # one read twice: refused the second time
        t = played_at.now + 0.5
        effects += played_at.deliver(BoardMessage(t, protocol.Card(seq=0, card_id=card)))
        played_at.now = t
    assert [e.card for e in effects if isinstance(e, Dealt)] == ids
    assert any(isinstance(e, Show) and "a card known already" in e.screen.message
               for e in effects)
    hand = seats.hand(played_at.rules, played_at.truth, 2)
    assert sorted(hand) == sorted(load_catalogue()[card] for card in ids)
    announced = seats.announced(played_at.truth)
    assert announced is not None
    shown = [e.screen for e in effects if isinstance(e, Show)] + screens.shown
    said = getattr(announced, "mission", None)
    for screen in shown:
        text = " ".join((screen.message, *screen.extra.values(), *screen.menu))
        assert not [m for m in hand if m != said and (m in text or card_text(m) in text)]
    # The journal keeps the ids read, so a restart knows the hand.
    config = replace(Config(), game=GameConfig(name="uranus", players=2, seed=9),
                     players=PlayersConfig(seats=("person", "quick")))
    rules = load("uranus").RULES
    state, journal = new_game(config, rules, tmp_path, fsync=False)
    assert journal is not None
    for card in ids:
        journal.dealt(2, card)
    journal.close()
    resumed = new_or_resumed_game(config, rules, tmp_path, fsync=False)
    assert resumed.dealt == {2: ids}
    assert game_seats(config, dealt=resumed.dealt).dealt == {2: ids}


# ---------------------------------------------------------------------- the Hexagon


def hexagon_table(hexagon_held: bool) -> VirtualTable:
    """Gardens of Uranus, the person at seat 1 about to close a purple hexagon around 0,0
    (gardener on 1,-3, the ring but 1,0 planted), the companion at seat 2 with five cards
    read face down, the Hexagon among them when ``hexagon_held``."""
    ring = ("0,1", "-1,1", "-1,0", "0,-1", "1,-1")
    reserves = {"red": 3, "purple": 3}
    state = validate(replace(CASES.position({"options": {}, "position": {
        "players": 2, "to_move": 1, "board": "hexagonal",
        "cells": {**dict.fromkeys(ring, "purple"), "1,-3": "M1", "-3,3": "M2"},
        "reserves": {"1": reserves, "2": reserves}, "scores": {"1": 0, "2": 0},
        "hands": {"1": [], "2": []}, "decks": [5] * 4, "no_plant_run": 0}}), unknown=(5, 5)))
    catalogue = load_catalogue()
    ids = {mission: card for card, mission in catalogue.items()}
    cards = ["groups:red", "pairs:blue-red", "edge_trees:blue", "longest_line:red",
             "hexagon" if hexagon_held else "biggest_group:purple"]
    seats = Seats(("person", "steady"), seed=3, catalogue=catalogue, reader=True,
                  dealt={2: [ids[c] for c in cards]})
    rules = load("uranus").RULES
    def person(rules: Any, state: Any, rng: random.Random) -> Any:
        closing = [s for s in rules.legal_steps(state)
                   if rules.format_step(state, s) == "1,0=purple"]
        return closing[0] if closing else choose(rules, state, "quick", rng=rng)

    config = replace(Config(), game=GameConfig(name="uranus", players=2, seed=3),
                     board=replace(Config().board, cards="reader"))
    return VirtualTable(rules, state, layout_name(config), seed=3, choose=person,
                        extensions=game_extensions(config), seats=seats, noise=NOISELESS)


def test_the_companion_claims_the_hexagon_the_moment_a_persons_step_makes_one() -> None:
    played_at = hexagon_table(hexagon_held=True)
    screens = Screens(played_at)
    played_at.start()
    assert played_at.play_step()  # the person plants the sixth purple flower
    assert played_at.report.committed == ["1,0=purple", "claim:2"]
    assert played_at.truth.hexagon_winner == 2
    claimed = "P2: companion: shows the Hexagon card and wins. "
    assert played_at.screen.message.startswith(claimed)
    # the table view shows it as the matrix does
    assert snapshot(played_at.screen, seq=1, link="up", steps=2)["message"].startswith(claimed)
    report = played_at.play()  # the hands shown, to the end
    played(report)
    outcome = played_at.referee.outcome
    assert outcome is not None and outcome.winners == (2,)
    assert screens.shown[-1].message.startswith("Player 2 wins (the Hexagon was completed)")


def test_without_the_hexagon_card_the_companion_claims_nothing() -> None:
    played_at = hexagon_table(hexagon_held=False)
    played_at.start()
    assert played_at.play_step()
    assert played_at.report.committed == ["1,0=purple"]
    assert played_at.referee.outcome is None and played_at.referee.to_move == 2
