"""The scoreboard without a network: tables rebuilt from their messages, standings, names,
bad input, the terminal table and the page.

Games are played here by the rules cores with random legal steps; their messages are what
a companion publishes (``docs/MQTT.md``); the standings they must give are worked out from
the games' own outcomes.
"""

from __future__ import annotations

import functools
import http.client
import io
import itertools
import json
import logging
import random
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import CompanionError, OutputFileError
from companion.rules import load
from companion.scoreboard.model import (
    MAX_PAYLOAD_BYTES,
    FinishedView,
    Scoreboard,
    rank,
)
from companion.scoreboard.terminal import HOME_AND_CLEAR, TerminalBoard
from companion.sim.players import choose_step


def play(game: str, players: int, seed: int, options: dict[str, Any] | None = None
         ) -> tuple[str, list[str], Any]:
    """A whole game by random legal steps: its setup, its steps' notation, its outcome."""
    rules = load(game).RULES
    state = rules.new_game(players, seed, options or {})
    setup, steps, rng = rules.format_position(state), [], random.Random(seed)
    while rules.outcome(state) is None:
        step = choose_step(rules, state, rng)
        steps.append(rules.format_step(state, step))
        state = rules.apply(state, step)
    return setup, steps, rules.outcome(state)


def messages(table: str, game_id: str, game: str, players: int, setup: str, steps: list[str],
             names: list[str] | None = None, over: bool = True, states: bool = False
             ) -> list[tuple[str, bytes]]:
    """A table's messages for a game: its header, then one step message per journal line
    (each followed by the table's state with its history when ``states``)."""
    def out(kind: str, body: dict[str, Any]) -> tuple[str, bytes]:
        return f"gardens/{table}/{kind}", json.dumps(
            {"v": 1, "table": table, "game_id": game_id, **body}).encode()

    sent = [out("game", {"game": game, "layout": "", "players": players,
                         "names": names or [""] * players, "seed": 1, "options": {},
                         "setup": setup, "started": "2026-12-01T18:00:00+00:00"})]
    lines = [{"kind": "step", "n": n, "player": 1, "step": step}
             for n, step in enumerate(steps, 1)]
    if over:
        lines.append({"kind": "over", "n": len(steps), "over": {}})
    for seq, line in enumerate(lines, 2):
        sent.append(out("step", {"seq": seq, **line}))
        if states:
            done = steps[:seq - 1]
            sent.append(out("state", {"seq": seq, "game": game, "scores": [], "steps": len(done),
                                      "over": seq - 1 > len(steps), "history": done}))
    return sent


@pytest.fixture(scope="module")
def games() -> dict[str, tuple[str, list[str], Any]]:
    return {"enceladus": play("enceladus", 3, 4), "uranus": play("uranus", 2, 5),
            "enceladus2": play("enceladus", 2, 9)}


def feed(board: Scoreboard, sent: list[tuple[str, bytes]]) -> None:
    for topic, payload in sent:
        board.receive(topic, payload)


def test_every_table_is_rebuilt_and_the_standings_follow_the_games_outcomes(
        games: dict[str, tuple[str, list[str], Any]]) -> None:
    board = Scoreboard()
    setup, steps, outcome = games["enceladus"]
    one = messages("t1", "g1", "enceladus", 3, setup, steps, ["Ann", "Bob", "Cy"])
    setup2, steps2, outcome2 = games["uranus"]
    two = messages("t2", "g2", "uranus", 2, setup2, steps2, ["Bob", "Dee"])
    # every message twice (at-least-once delivery), the two tables interleaved, and a few
    # steps arriving before the ones they follow
    mixed = [m for pair in itertools.zip_longest(one, two) for m in pair if m is not None]
    mixed[5], mixed[7] = mixed[7], mixed[5]
    feed(board, [m for m in mixed for _ in range(2)])
    t1, t2 = board.tables()
    assert (t1.table, t1.game, t1.steps, t1.over, t1.note) == ("t1", "enceladus", len(steps),
                                                               True, "")
    assert t1.winners == outcome.winners and t2.winners == outcome2.winners
    assert t2.scores == tuple(sorted((p, r) for p, r, _ in outcome2.ranking))  # final
    assert t1.screen is not None and t1.screen.ranking
    names = {"t1": ["Ann", "Bob", "Cy"], "t2": ["Bob", "Dee"]}
    points: dict[str, int] = {}
    for table, result in (("t1", outcome), ("t2", outcome2)):
        for seat, _, got in result.ranking:
            who = names[table][seat - 1]
            points[who] = points.get(who, 0) + got
    assert {s.name: s.points for s in board.standings()} == points
    bob = next(s for s in board.standings() if s.name == "Bob")
    assert bob.games == 2


def test_a_game_in_progress_shows_whose_turn_and_its_board(
        games: dict[str, tuple[str, list[str], Any]]) -> None:
    board = Scoreboard()
    setup, steps, _ = games["enceladus"]
    feed(board, messages("t1", "g1", "enceladus", 3, setup, steps[:5], over=False))
    view = board.tables()[0]
    rules = load("enceladus").RULES
    state = rules.parse_position(setup)
    for text in steps[:5]:
        state = rules.apply(state, rules.parse_step(state, text))
    assert view.to_move == rules.to_move(state) and not view.over and view.steps == 5
    assert view.screen is not None and dict(view.screen.cells) == rules.board(state)
    assert view.scores == tuple(rules.status(state)) and board.standings() == []
    assert board.table("t1") == view and board.table("t2") is None
    # an undo takes the last step back
    board.receive("gardens/t1/step", json.dumps(
        {"v": 1, "table": "t1", "game_id": "g1", "seq": 7, "kind": "undo", "n": 5}).encode())
    assert board.tables()[0].steps == 4


def test_ties_share_the_higher_rank_points_and_names_are_one_player_whatever_their_case(
        ) -> None:
    tie = FinishedView("t1", "g1", "enceladus", ((1, "Ann", "6-6-6-8-10", 2),
                                                 (3, "Cy", "6-6-6-8-10", 2),
                                                 (2, "Bob", "5-5-5-6-13", 0)), ("Ann", "Cy"))
    other = FinishedView("t2", "g2", "mars", ((1, "bob ", "27 pts", 1),
                                              (2, "ann", "19 pts", 0)), ("bob ",))
    standings = rank([tie, other])
    assert [(s.rank, s.name, s.points, s.games, s.wins) for s in standings] == [
        (1, "Ann", 2, 2, 1), (1, "Cy", 2, 1, 1), (3, "Bob", 1, 2, 1)]


def test_names_set_on_the_scoreboard_follow_the_table_until_a_header_names_the_seat(
        games: dict[str, tuple[str, list[str], Any]]) -> None:
    board = Scoreboard()
    setup, steps, _ = games["enceladus2"]
    feed(board, messages("t1", "g1", "enceladus", 2, setup, steps, ["", "Bob"]))
    assert board.tables()[0].names == ("t1 seat 1", "Bob")
    board.set_name("t1", 1, "  Ann  ")
    board.set_name("t1", 2, "Bea")  # the organiser corrects the table's name for this game
    assert board.tables()[0].names == ("Ann", "Bea")
    assert {s.name for s in board.standings()} == {"Ann", "Bea"}
    # the next round at this table: seat 1 keeps Ann, seat 2 is named by the table
    feed(board, messages("t1", "g2", "enceladus", 2, setup, steps[:3], ["", "Cy"], over=False))
    assert board.tables()[0].names == ("Ann", "Cy")
    for table, seat, name, why in (("t9", 1, "X", "no table 't9'"), ("t1", 3, "X", "seats 1 to 2"),
                                   ("t1", 1, "X" * 41, "at most 40")):
        with pytest.raises(CompanionError, match=why):
            board.set_name(table, seat, name)


def test_a_table_whose_steps_were_missed_shows_the_scores_it_last_sent(
        games: dict[str, tuple[str, list[str], Any]]) -> None:
    board = Scoreboard()
    setup, steps, _ = games["enceladus2"]
    sent = messages("t1", "g1", "enceladus", 2, setup, steps, over=False)
    feed(board, [sent[0], *sent[4:]])  # the scoreboard came after step 3
    board.receive("gardens/t1/state", json.dumps(
        {"v": 1, "table": "t1", "game_id": "g1", "seq": 9, "game": "enceladus",
         "to_move": 2, "scores": ["1-2-3-4-5", "0-1-2-3-4"], "over": False, "winners": [],
         "steps": 8}).encode())
    view = board.tables()[0]
    assert view.screen is None and view.to_move == 2 and view.steps == 8
    assert view.scores == ((1, "1-2-3-4-5"), (2, "0-1-2-3-4"))
    assert "waiting for journal line 2" in view.note
    feed(board, sent[1:4])  # the missing steps come after all (a persistent session)
    view = board.tables()[0]
    assert view.note == "" and view.steps == len(steps) and view.screen is not None


def test_a_state_with_its_history_rebuilds_a_table_whose_steps_were_lost(
        games: dict[str, tuple[str, list[str], Any]]) -> None:
    board = Scoreboard()
    setup, steps, outcome = games["enceladus2"]
    sent = messages("t1", "g1", "enceladus", 2, setup, steps, states=True)
    lost = len(sent) // 2  # a broker restarted without its sessions: these never came
    feed(board, [sent[0], *sent[lost:lost + 2]])
    assert board.tables()[0].note == ""  # the state caught up with the step before it
    feed(board, sent[lost + 2:])
    view = board.tables()[0]
    assert view.over and view.winners == outcome.winners and view.steps == len(steps)
    assert len(board.finished()) == 1


def test_a_state_whose_history_the_rules_refuse_is_ignored_and_the_table_followed_on(
        games: dict[str, tuple[str, list[str], Any]], caplog: pytest.LogCaptureFixture) -> None:
    board = Scoreboard()
    setup, steps, outcome = games["enceladus2"]
    sent = messages("t1", "g1", "enceladus", 2, setup, steps, states=True)
    feed(board, sent[:5])  # the header, two steps and their states
    forged = {**json.loads(sent[4][1]), "seq": 10**6, "scores": ["9-9-9-9-9", "0-0-0-0-0"],
              "history": [*steps[:2], "z1/z2"]}
    assert not board.receive("gardens/t1/state", json.dumps(forged).encode())
    view = board.tables()[0]
    assert view.note == "" and view.steps == 2 and view.screen is not None
    assert view.ignored == 1 and "cannot be replayed" in caplog.text
    feed(board, sent[5:])  # the table's own steps and states go on being followed
    view = board.tables()[0]
    assert view.note == "" and view.over and view.winners == outcome.winners
    assert len(board.finished()) == 1


def step_message(seq: int, n: int, step: str, table: str = "t1", **extra: Any) -> bytes:
    return json.dumps({"v": 1, "table": table, "game_id": "g1", "seq": seq, "kind": "step",
                       "n": n, "step": step, **extra}).encode()


def test_bad_messages_are_ignored_each_kind_said_once_and_a_broken_game_shown_as_such(
        games: dict[str, tuple[str, list[str], Any]], caplog: pytest.LogCaptureFixture) -> None:
    board = Scoreboard()
    setup, steps, _ = games["enceladus2"]
    sent = messages("t1", "g1", "enceladus", 2, setup, steps[:4], over=False)
    feed(board, sent)
    caplog.set_level(logging.DEBUG, "companion.scoreboard")
    bad = [
        ("gardens/t1/step", b"not json"),
        ("gardens/t1/step", b"not json either"),
        ("gardens/t1/step", b"[" * 60_000),
        ("gardens/t1/state", b"{" + b" " * MAX_PAYLOAD_BYTES + b"}"),
        ("gardens/t1/step", step_message("2", 1, steps[0])),  # wrong type
        ("gardens/t1/step", step_message(2, 1, steps[0], v=2)),
        ("gardens/t1/step", step_message(2, 1, steps[0], table="t2")),
        ("gardens/t1/status", b"\xff\xfe"),
        ("gardens/../step", b"{}"),
        ("elsewhere/t1/step", b"{}"),
        ("gardens/t1/step", step_message(3, 2, steps[1])),  # a copy
        ("gardens/t1/step", step_message(2, 1, steps[0])),  # seq gone backwards
        ("gardens/t2/game", sent[0][1].replace(b'"t1"', b'"t2"').replace(b"enceladus", b"chess")),
    ]
    feed(board, bad)
    assert [v.table for v in board.tables()] == ["t1", "t2"]
    t1, t2 = board.tables()
    assert t1.steps == 4 and t1.note == "" and t1.ignored == 8
    assert "chess" in t2.note and t2.screen is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # one sentence per table and kind of problem: the second of a kind is not said again
    assert len(warnings) == 7 and all("\n" not in w and "Traceback" not in w for w in warnings)
    for said in ("step message of table t1 was ignored: it is not the JSON the companion sends",
                 "state message of table t1 was ignored: it is 65538 bytes, more than 65536",
                 "it is version 2 of table 't1'", "neither online nor offline",
                 "'gardens/../step' was ignored: it is no table's topic under gardens/",
                 "'elsewhere/t1/step' was ignored", "its game 'chess' is none this scoreboard"):
        assert any(said in w for w in warnings), said
    # a step the rules refuse: the game is shown as one that cannot be replayed, then ignored
    board.receive("gardens/t1/step", step_message(6, 5, "z9/z10"))
    board.receive("gardens/t1/step", step_message(7, 6, "z9/z10"))
    t1 = board.tables()[0]
    assert "cannot be replayed: step 5 ('z9/z10')" in t1.note and t1.screen is None
    assert sum("cannot be replayed" in r.getMessage() for r in caplog.records) == 1


@functools.cache
def _valid() -> list[tuple[str, bytes]]:
    """A short game's real messages, for the random ones to start from."""
    return messages("t1", "g1", "enceladus", 2, *play("enceladus", 2, 3)[:2])


def _mutated(data: st.DataObject) -> tuple[str, bytes]:
    """A real message with one field changed to anything JSON can hold."""
    topic, payload = data.draw(st.sampled_from(_valid()[:12]))
    body = json.loads(payload)
    key = data.draw(st.sampled_from(sorted(body)))
    body[key] = data.draw(st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                    max_size=4), max_leaves=10))
    return topic, json.dumps(body).encode()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_payloads_never_crash_the_scoreboard(data: st.DataObject) -> None:
    board = Scoreboard()
    for _ in range(data.draw(st.integers(1, 8))):
        kind = data.draw(st.sampled_from(("bytes", "json", "mutated", "valid")))
        if kind == "mutated":
            topic, payload = _mutated(data)
        elif kind == "valid":
            topic, payload = data.draw(st.sampled_from(_valid()))
        else:
            topic = data.draw(st.sampled_from(
                ("gardens/t1/game", "gardens/t1/step", "gardens/t1/state", "gardens/t1/status",
                 "gardens/t1/other", "gardens//step", "gardens/t1")))
            payload = data.draw(st.binary(max_size=200)) if kind == "bytes" else json.dumps(
                data.draw(st.dictionaries(st.sampled_from(
                    ("v", "table", "game_id", "seq", "kind", "n", "step", "setup", "game",
                     "players", "names", "scores")), st.integers() | st.text(max_size=10)
                    | st.lists(st.integers(), max_size=3)))).encode()
        board.receive(topic, payload)
        board.tables()
        board.standings()


def test_a_kept_scoreboard_started_again_has_the_rounds_and_names_it_had(
        games: dict[str, tuple[str, list[str], Any]], tmp_path: Path) -> None:
    from companion.scoreboard.kept import KeptScoreboard

    path = tmp_path / "evening.jsonl"
    board = KeptScoreboard(path)
    setup, steps, _ = games["enceladus2"]
    feed(board, messages("t1", "g1", "enceladus", 2, setup, steps, ["Ann", ""]))
    board.receive("gardens/t1/step", b"not json")  # not kept
    board.set_name("t1", 2, "Bob")
    feed(board, messages("t1", "g2", "enceladus", 2, setup, steps[:4], ["", ""], over=False))
    board.close()
    with path.open("a") as file:
        file.write('{"topic": "gardens/t1/st')  # cut off by a power loss
    again = KeptScoreboard(path)
    assert again.standings() == board.standings()
    assert again.tables() == [replace(v, ignored=0) for v in board.tables()]  # bad ones not kept
    assert {s.name for s in again.standings()} == {"Ann", "Bob"}
    assert again.tables()[0].names == ("t1 seat 1", "Bob") and again.tables()[0].steps == 4
    again.close()
    (tmp_path / "folder").mkdir()
    with pytest.raises(OutputFileError, match="cannot write the scoreboard file"):
        KeptScoreboard(tmp_path / "folder")
    with pytest.raises(OutputFileError, match=f"there is no folder {tmp_path / 'nowhere'}"):
        KeptScoreboard(tmp_path / "nowhere" / "evening.jsonl")  # said at start, not later


def test_what_a_kept_scoreboard_keeps_after_a_line_cut_off_is_read_back(
        games: dict[str, tuple[str, list[str], Any]], tmp_path: Path) -> None:
    """The line cut off by a power loss is ended before the next one is kept: appended to
    it, the first name or message of the evening's next start would be lost with it."""
    from companion.scoreboard.kept import KeptScoreboard

    path = tmp_path / "evening.jsonl"
    board = KeptScoreboard(path)
    setup, steps, _ = games["enceladus2"]
    feed(board, messages("t1", "g1", "enceladus", 2, setup, steps[:4], ["", ""], over=False))
    board.set_name("t1", 1, "Ann")
    board.close()
    with path.open("a") as file:
        file.write('{"name": ["t1", 2, "Bo')  # cut off by a power loss
    again = KeptScoreboard(path)
    again.set_name("t1", 2, "Bob")
    again.close()
    third = KeptScoreboard(path)
    assert third.tables()[0].names == ("Ann", "Bob")
    third.close()


def test_a_file_that_is_not_a_kept_scoreboard_is_refused_and_left_as_it_is(
        tmp_path: Path) -> None:
    from companion.errors import UsageError
    from companion.scoreboard.kept import KeptScoreboard

    config = tmp_path / "companion.toml"
    config.write_text('[game]\nname = "mars"\n')
    with pytest.raises(UsageError, match=f"^{config} is not a scoreboard file"):
        KeptScoreboard(config)
    assert config.read_text() == '[game]\nname = "mars"\n'
    for begun in ("", '{"topic": "gardens/t1/st'):  # empty, or its first line cut off
        path = tmp_path / "evening.jsonl"
        path.write_text(begun)
        KeptScoreboard(path).close()


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_terminal_table_redraws_on_a_terminal_and_appends_changes_on_a_pipe(
        games: dict[str, tuple[str, list[str], Any]]) -> None:
    board = Scoreboard()
    setup, steps, outcome = games["enceladus2"]
    sent = messages("t1", "g1", "enceladus", 2, setup, steps, ["Ann", "Bob"])
    feed(board, sent[:3])
    feed(board, messages("t2", "g1", "enceladus", 2, setup, [], ["Cy", "Dee"], over=False))
    pipe, tty = io.StringIO(), Tty()
    on_pipe, on_tty = TerminalBoard(pipe, in_place=False), TerminalBoard(tty, in_place=True)
    for shown in (on_pipe, on_tty):
        shown.show(board)
    first = pipe.getvalue().splitlines()
    assert first[0].startswith("t1  unknown  enceladus  2 steps  ") and "Ann" in first[0]
    assert first[1].startswith("t2") and ">Cy" in first[1]
    assert first[2] == "Standings after 0 finished games"
    feed(board, sent[3:])
    for shown in (on_pipe, on_tty):
        shown.show(board)
    added = pipe.getvalue().splitlines()[len(first):]
    won = " and ".join(["Ann", "Bob"][w - 1] for w in outcome.winners)
    assert added[0].startswith("t1") and added[0].endswith(f"-- over, {won} won")
    assert added[1] == "Standings after 1 finished game" and len(added) == 4  # t2 unchanged
    assert tty.getvalue().count(HOME_AND_CLEAR) == 2
    assert tty.getvalue().rsplit(HOME_AND_CLEAR, 1)[1].splitlines()[1].startswith("t2")


# ---------------------------------------------------------------------------------- the page

@pytest.fixture
def page() -> Iterator[Any]:
    from companion.scoreboard.server import ScoreboardPage

    shown = ScoreboardPage("127.0.0.1:0", Scoreboard(), pin="4321")
    try:
        yield shown
    finally:
        shown.close()


def _port(page: Any) -> int:
    return int(page.address.rsplit(":", 1)[1].rstrip("/"))


def _post(page: Any, path: str, body: bytes) -> tuple[int, str]:
    with closing(http.client.HTTPConnection("127.0.0.1", _port(page), timeout=5)) as conn:
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        answer = conn.getresponse()
        return answer.status, answer.read().decode()


def test_a_name_too_deep_to_read_or_with_a_pin_of_no_characters_is_refused_not_a_500(
        page: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Brackets nested too deep for the JSON reader are a body of the wrong form (400); a
    lone surrogate (``"\\ud800"``, no character) as the PIN is a wrong PIN (403): neither is
    a 500 with a traceback in the organiser's log."""
    assert _post(page, "/name", b"[" * 4000)[0] == 400
    assert _post(page, "/name", b'{"pin": "\\ud800", "table": "t1", "seat": 1, '
                 b'"name": "Ann"}')[0] == 403
    assert "Traceback" not in caplog.text


class Events:
    """The page's event stream read as its EventSource reads it."""

    def __init__(self, page: Any) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", _port(page), timeout=5)
        self.conn.request("GET", "/events")
        self.response = self.conn.getresponse()

    def next(self) -> tuple[str, dict[str, Any]]:
        kind = ""
        while True:
            line = self.response.readline().decode()
            assert line, "the stream ended"
            if line.startswith("event: "):
                kind = line[7:].strip()
            elif line.startswith("data: "):
                data: dict[str, Any] = json.loads(line[6:])
                return kind, data


def test_the_page_streams_every_table_then_what_changed_and_takes_names_with_the_pin(
        page: Any, games: dict[str, tuple[str, list[str], Any]]) -> None:
    setup, steps, _ = games["enceladus2"]
    sent = messages("t1", "g1", "enceladus", 2, setup, steps, ["Ann", ""])
    feed(page.board, sent[:4])
    feed(page.board, messages("t2", "g9", "enceladus", 2, setup, [], over=False))
    with closing(http.client.HTTPConnection("127.0.0.1", _port(page), timeout=5)) as conn:
        conn.request("GET", "/")
        answer = conn.getresponse()
        html = answer.read().decode()
    assert answer.status == 200 and "EventSource" in html
    stream = Events(page)
    try:
        got = dict(stream.next() for _ in range(3))
        assert got["table"]["table"] in ("t1", "t2") and "standings" in got
        feed(page.board, sent[4:])
        page.changed()
        seen = [stream.next()]  # the page may already show steps on the way, never t2 again
        while not (seen[-1][0] == "standings" and seen[-1][1]["finished"]):
            seen.append(stream.next())
        tables = [data for kind, data in seen if kind == "table"]
        assert {data["table"] for data in tables} == {"t1"} and tables[-1]["over"]
        assert 'data-cell="e6"' in tables[-1]["board"] and len(seen[-1][1]["finished"]) == 1
        assert _post(page, "/name", json.dumps(
            {"pin": "0000", "table": "t1", "seat": 2, "name": "Bob"}).encode())[0] == 403
        assert _post(page, "/name", b"{")[0] == 400
        status, text = _post(page, "/name", json.dumps(
            {"pin": "4321", "table": "t1", "seat": 5, "name": "Bob"}).encode())
        assert status == 400 and "seats 1 to 2" in text
        assert _post(page, "/name", json.dumps(
            {"pin": "4321", "table": "t1", "seat": 2, "name": "Bob"}).encode())[0] == 200
        kind, data = stream.next()
        assert kind == "table" and data["names"] == ["Ann", "Bob"]
        kind, data = stream.next()
        assert kind == "standings" and {row[1] for row in data["standings"]} == {"Ann", "Bob"}
    finally:
        stream.conn.close()


@pytest.mark.parametrize("value", ["xyz", "x" * 10_000], ids=["short", "long"])
def test_a_setup_with_a_wrong_option_is_refused_naming_the_value(value: str) -> None:
    rules = load("mars").RULES
    setup = rules.format_position(rules.new_game(2, 1, {})).replace(
        "options=-", f"options=plant_score:{value}")
    board = Scoreboard()
    feed(board, messages("t1", "g1", "mars", 2, setup, [], over=False))
    shown = repr(value) if len(value) < 10 else f"'{value[:36]}..."
    assert board.tables()[0].note.endswith(
        "its setup cannot be read (not a Gardens of Mars position: Option 'plant_score' must "
        f"be 'group_size' or 'connected_only', not {shown}.)")
