"""The referee against the real rules cores: what a player does on the board, what it commits.

Positions come from the case adapters (``docs/CASES.md``); events are fed in virtual
time, and the referee's own timers fire as the service would fire them.  Real-world table
scenarios (glitches, a genuine lift, a piece slid over cells) are named ``test_scenario_*``.
"""

from __future__ import annotations

from typing import Any

import pytest

from companion.board import protocol
from companion.events import BadLine, BoardMessage, Button
from companion.referee.effects import Buzz, Committed, GameOver, Note, Send, Show, Undone
from companion.referee.recognition import sensed_board
from companion.referee.referee import Referee, RefereeSettings
from companion.referee.timers import Timeline
from companion.rules import load
from companion.rules.mars import position as mars_position

ENCELADUS = load("enceladus")
MARS = load("mars")
URANUS = load("uranus")
SETTINGS = RefereeSettings(debounce_s=0.02, settle_s=0.4, grace_s=1.5, tray=True)


class Table:
    """Feeds a referee at the board's pace on a virtual clock and keeps what it asked for;
    its timers fire as the service would fire them."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self.effects: list[Any] = []
        self.time = Timeline(referee.handle, on_effects=self.effects.extend)
        self.seq = 0

    @property
    def now(self) -> float:
        return self.time.now

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass, firing the referee's timers on the way."""
        self.time.advance(self.now + seconds)

    def message(self, message: Any) -> None:
        self.time.deliver(BoardMessage(self.now, message))

    def dump(self) -> None:
        board = self.referee.rules.board(self.referee.state)
        if self.referee.settings.presence:
            board = sensed_board(board)
        self.message(protocol.Dump(seq=0, pieces=tuple(board[c] for c in self.referee.layout)))

    def put(self, cell: str, piece: str, *, after: float = 0.2, hold: float = 0.03) -> None:
        """After ``after`` seconds, the sensor of ``cell`` reads ``piece`` (and holds it
        ``hold`` seconds, past the debounce time, unless the next reading comes sooner)."""
        self.wait(after)
        self.seq += 1
        self.message(protocol.FieldUpdate(seq=self.seq, cell=cell, piece=piece))
        self.wait(hold)

    def press(self, name: str, *, after: float = 0.3) -> None:
        self.wait(after)
        self.time.deliver(Button(self.now, name, True))
        self.time.deliver(Button(self.now + 0.08, name, False))

    def commits(self) -> list[str]:
        """The steps in force: one corrected by hand replaced, one taken back left out."""
        steps: list[str] = []
        for effect in self.effects:
            if isinstance(effect, Committed):
                if effect.corrects is not None:
                    assert steps[-1] == effect.corrects
                    steps.pop()
                steps.append(effect.step)
            elif isinstance(effect, Undone):
                assert steps[-1] == effect.step
                steps.pop()
        return steps

    def shown(self) -> list[str]:
        """Every step the matrix showed committed, corrected ones too, in order."""
        return [e.step for e in self.effects if isinstance(e, Committed)]

    def screens(self) -> list[Any]:
        return [e.screen for e in self.effects if isinstance(e, Show)]


def enceladus(
    cells: dict[str, str],
    reserves: dict[str, dict[str, int]] | None = None,
    tube: dict[str, int] | None = None,
    settings: RefereeSettings = SETTINGS,
) -> Table:
    state = ENCELADUS.CASES.position(
        {
            "game": "enceladus",
            "options": {},
            "position": {
                "players": 2,
                "to_move": 1,
                "cells": cells,
                "reserves": reserves or {"1": {}, "2": {}},
                "tube": tube or {},
                "used_actions": [],
            },
        }
    )
    table = Table(Referee(ENCELADUS.RULES, state, "enceladus", settings))
    table.dump()
    return table


# enc-pick-01's position: M1 on f2 moves to f5 and picks f6 (tests/cases/enceladus.json)
PICK = {
    "f2": "M1",
    "f5": "red",
    "f6": "yellow",
    "g5": "blue",
    "h5": "blue",
    "e5": "peak",
    "L10": "M2",
    "c10": "green",
    "d10": "green",
}


@pytest.mark.parametrize(("message", "said"), [
    (protocol.Dice(seq=0, values=(3, 5)), "The dice tray is not used in Gardens of Enceladus"),
    (protocol.Card(seq=0, card_id="U17"), "The card reader is not used in Gardens of Enceladus"),
])
def test_a_part_the_game_has_no_use_for_is_named_in_words(message: Any, said: str) -> None:
    table = enceladus(PICK)
    effects = table.referee.handle(BoardMessage(table.now, message))
    assert [e.text for e in effects if isinstance(e, Note)] == [said]
    assert table.commits() == []


def test_a_move_made_piece_by_piece_is_committed_once_when_the_last_flower_goes() -> None:
    table = enceladus(PICK)
    table.put("f2", "")  # the Martian lifted
    table.put("f5", "")  # the flower it lands on taken
    table.put("f5", "M1")  # the Martian set down
    table.put("g5", "")  # the adjacent pick
    table.put("h5", "")  # a soliflower
    assert table.commits() == []
    table.put("f6", "")  # the last soliflower: no other step could still be under way
    assert table.commits() == ["f5/g5"]
    table.wait(5)
    assert table.commits() == ["f5/g5"]
    assert ENCELADUS.RULES.to_move(table.referee.state) == 2


def test_prefix_step_a_move_whose_pick_another_pick_takes_as_a_soliflower_waits_for_ok() -> None:
    table = enceladus(PICK)
    # f5/f6 is complete, but f5/g5 also takes f6 (then a soliflower): the player may go on
    for cell, piece in (("f2", ""), ("f5", ""), ("f5", "M1"), ("f6", "")):
        table.put(cell, piece)
    asking = table.screens()[-1]
    assert asking.menu == ("done",) and "OK when done" in asking.message
    assert dict(asking.highlights) == {"g5": "pick", "h5": "pick"}  # going on: f5/g5
    table.wait(60)  # a pause, however long, is not a commit
    assert table.commits() == []
    table.press("ok")
    assert table.commits() == ["f5/f6"]


def test_prefix_step_a_move_whose_pick_another_pick_takes_is_committed_by_the_next_player() -> None:
    table = enceladus(PICK)
    for cell, piece in (("f2", ""), ("f5", ""), ("f5", "M1"), ("f6", "")):
        table.put(cell, piece)
    table.wait(10)
    table.put("L10", "")  # player 2 lifts their Martian: player 1 was done
    assert table.commits() == ["f5/f6"]


# f2's Martian may land on f4 (taking f5) or on f5 beyond it (taking f4)
LINE = {"f2": "M1", "f4": "blue", "f5": "red", "L10": "M2", "c10": "green", "d10": "green"}


def test_a_step_completed_by_putting_a_piece_down_is_committed_at_once() -> None:
    table = enceladus(PICK)
    # f5/g5 leaves h5 and f6 soliflowers; the Martian set down last, where it could not be
    # passing over: nothing else could still be under way
    for cell, piece in (("g5", ""), ("h5", ""), ("f6", ""), ("f2", ""), ("f5", "")):
        table.put(cell, piece)
    table.put("f5", "M1", hold=SETTINGS.debounce_s)
    assert table.commits() == ["f5/g5"]


def test_a_martian_set_down_where_it_may_be_sliding_on_is_committed_at_once() -> None:
    table = enceladus(LINE)
    # f5 taken first, then the Martian down on f4: f4/f5, or on its way to f5 (f5/f4)
    for cell, piece in (("f5", ""), ("f2", ""), ("f4", ""), ("f4", "M1")):
        table.put(cell, piece, hold=SETTINGS.debounce_s)
    assert table.commits() == ["f4/f5"]  # the debounce is all it waits
    table.wait(60)
    assert table.shown() == ["f4/f5"]


def test_a_martian_slid_over_a_cell_it_could_stop_on_is_corrected_where_it_stops() -> None:
    table = enceladus(LINE)
    for cell, piece in (("f5", ""), ("f2", ""), ("f4", ""), ("f4", "M1")):
        table.put(cell, piece)
    assert table.commits() == ["f4/f5"]
    table.put("f4", "", after=0.35)  # slid on, over f4, at a person's pace ...
    table.wait(SETTINGS.grace_s + 0.2)  # (held in the air past the grace: no alarm)
    assert table.commits() == ["f4/f5"]
    table.put("f5", "M1", after=0.1)  # ... to f5, taking f4: nothing lies beyond
    assert table.shown() == ["f4/f5", "f5/f4"] and table.commits() == ["f5/f4"]
    corrected = [e for e in table.effects if isinstance(e, Committed)][-1]
    assert corrected.number == 1 and corrected.corrects == "f4/f5"
    assert not any(isinstance(e, (Buzz, Undone)) for e in table.effects)
    assert not any(s.urgent for s in table.screens())
    assert table.referee.steps_committed == 1
    assert [n.text for n in table.effects if isinstance(n, Note) and "corrected" in n.text] \
        == ["step 1 corrected by hand: f5/f4, not f4/f5"]


def test_a_martian_slid_on_over_empty_squares_is_still_corrected_where_it_lands() -> None:
    table = enceladus({"h6": "M1", "h5": "red", "h1": "blue", "h2": "yellow", "L10": "M2",
                       "c10": "green", "d10": "green"})
    for cell, piece in (("h5", ""), ("h6", ""), ("h5", "M1")):
        table.put(cell, piece)
    assert table.commits() == ["h5"] and table.referee.correcting is not None
    # on over h4 and h3, which no step stops on (the board explained by no step meanwhile)
    for cell, piece in (("h5", ""), ("h4", "M1"), ("h4", ""), ("h3", "M1"), ("h3", ""),
                        ("h1", ""), ("h1", "M1"), ("h2", "")):
        table.put(cell, piece)
    assert table.commits() == ["h1/h2"]
    assert not any(isinstance(e, Buzz) for e in table.effects)


def test_a_correction_ends_with_the_next_players_first_handling() -> None:
    table = enceladus(LINE)
    for cell, piece in (("f5", ""), ("f2", ""), ("f4", ""), ("f4", "M1")):
        table.put(cell, piece)
    table.put("L10", "")  # player 2 lifts their Martian: player 1's step stands
    table.put("L10", "M2")
    assert table.referee.correcting is None
    table.put("f4", "")  # player 1's Martian moved now is a board to put right
    table.put("f5", "M1")
    assert table.commits() == ["f4/f5"]
    table.wait(SETTINGS.grace_s)
    assert Buzz("illegal") in table.effects


def test_a_step_open_to_a_correction_put_back_by_hand_is_taken_back() -> None:
    table = enceladus(LINE)
    for cell, piece in (("f5", ""), ("f2", ""), ("f4", ""), ("f4", "M1")):
        table.put(cell, piece)
    for cell, piece in (("f4", ""), ("f4", "blue"), ("f5", "red"), ("f2", "M1")):
        table.put(cell, piece)
    assert table.commits() == ["f4/f5"]  # the piece may be on its way to another cell
    table.wait(SETTINGS.settle_s)
    assert [(e.number, e.step) for e in table.effects if isinstance(e, Undone)] == [
        (1, "f4/f5")]
    assert table.referee.steps_committed == 0 and table.screens()[-1].message == "P1: your turn"


def test_a_restart_inside_a_correction_window_takes_the_corrected_step_from_the_board() -> None:
    # Killed after f4/f5 was journaled, while the Martian slid on to f5: the board shows f5/f4.
    before = enceladus(LINE).referee.state
    slipped = ENCELADUS.RULES.parse_step(before, "f4/f5")
    meant = ENCELADUS.RULES.apply(before, ENCELADUS.RULES.parse_step(before, "f5/f4"))
    referee = Referee(ENCELADUS.RULES, ENCELADUS.RULES.apply(before, slipped), "enceladus",
                      SETTINGS, history=[(before, slipped)], resumed=True)
    table = Table(referee)
    board = ENCELADUS.RULES.board(meant)
    table.message(protocol.Dump(seq=0, pieces=tuple(board[c] for c in referee.layout)))
    corrected = [e for e in table.effects if isinstance(e, Committed)]
    assert [(e.number, e.step, e.corrects) for e in corrected] == [(1, "f5/f4", "f4/f5")]
    assert referee.state == meant and not referee.syncing


def test_lifting_the_martian_shows_its_legal_destinations() -> None:
    table = enceladus(PICK)
    table.put("f2", "")
    highlights = dict(table.screens()[-1].highlights)
    destinations = {
        str(c)
        for c in ENCELADUS.CASES.query(table.referee.state, "legal_moves", {})["destinations"]
    }
    assert set(highlights) == destinations and set(highlights.values()) == {"dest"}


def test_the_flowers_still_to_pick_are_shown_while_a_move_is_under_way() -> None:
    table = enceladus(PICK)
    # f5/g5 leaves h5 a soliflower (enc-pick-02): after f5, g5 only h5 is left to take
    for cell, piece in (("f2", ""), ("f5", ""), ("f5", "M1"), ("g5", ""), ("f6", "")):
        table.put(cell, piece)
    assert table.commits() == []
    assert dict(table.screens()[-1].highlights) == {"h5": "pick"}
    table.put("h5", "")
    assert table.commits() == ["f5/g5"]


def test_scenario_3_ms_glitches_on_a_steady_cell_are_ignored() -> None:
    table = enceladus(PICK)
    for _ in range(20):
        table.put("c10", "", after=0.5, hold=0.003)
        table.put("c10", "green", after=0.0)
    table.wait(10)
    assert table.referee.observed["c10"] == "green"
    assert not [e for e in table.effects if isinstance(e, Buzz)]
    assert table.commits() == []


def test_scenario_a_genuine_150_ms_lift_is_seen() -> None:
    table = enceladus(PICK)
    table.put("c10", "", hold=0.15)
    assert table.referee.observed["c10"] == ""
    table.put("c10", "green", after=0.0)
    assert table.referee.observed["c10"] == "green"


def test_scenario_a_board_that_matches_no_legal_step_shows_the_cells_and_commits_nothing() -> None:
    table = enceladus(PICK)
    table.put("c10", "")  # a flower nobody may take now
    table.put("a1", "red")  # and one put where none was
    table.wait(SETTINGS.grace_s + 0.1)
    warning = table.screens()[-1]
    assert warning.urgent and dict(warning.highlights) == {"c10": "wrong", "a1": "wrong"}
    assert [e.pattern for e in table.effects if isinstance(e, Buzz)] == ["illegal"]
    table.wait(600)  # however long it stays so
    assert table.commits() == []
    table.put("a1", "")
    table.put("c10", "green")
    assert not table.screens()[-1].urgent  # put right: the warning goes
    assert table.commits() == []


def test_undo_takes_the_last_step_back_and_shows_what_to_restore() -> None:
    table = enceladus(PICK)
    for cell, piece in (("f2", ""), ("f5", ""), ("f5", "M1"), ("f6", "")):
        table.put(cell, piece)
    table.press("ok")  # done: f5/f6, not f5/g5
    assert table.commits() == ["f5/f6"]
    table.press("undo")
    assert [e.step for e in table.effects if isinstance(e, Undone)] == ["f5/f6"]
    restore = table.screens()[-1]
    assert set(restore.highlights) == {"f2", "f5", "f6"}
    # the board still shows the step just undone: it is not committed again
    table.wait(5)
    assert table.shown() == ["f5/f6"]
    for cell, piece in (("f5", "red"), ("f6", "yellow"), ("f2", "M1")):
        table.put(cell, piece)
    assert not table.referee.syncing and table.referee.history == []
    for cell, piece in (("f2", ""), ("f5", ""), ("f5", "M1"), ("f6", "")):
        table.put(cell, piece)
    table.press("ok")
    assert table.shown() == ["f5/f6", "f5/f6"] and table.commits() == ["f5/f6"]


PAY = {
    "c8": "M1",
    "d7": "red",
    "e6": "peak",
    "f5": "blue",
    "R1": "M2",
    "a1": "yellow",
    "b1": "yellow",
    "c3": "red",
    "c2": "red",
}


def test_without_a_tray_the_payment_colour_is_asked_with_select_and_ok() -> None:
    table = enceladus(
        PAY, reserves={"1": {"blue": 3, "red": 3}, "2": {}}, settings=RefereeSettings(tray=False)
    )
    table.put("A4", "D1")  # the disc on the Pick slot
    table.put("f5", "")  # the flower picked
    question = table.screens()[-1]
    assert sorted(question.menu) == ["pay blue", "pay red"]
    assert table.commits() == []
    wanted = question.menu.index("pay red")
    for _ in range((wanted - question.menu_index) % 2):
        table.press("select")
    table.press("ok")
    assert table.commits() == ["pick:red:f5"]
    assert table.referee.state == ENCELADUS.RULES.apply(
        table.referee.history[0][0],
        ENCELADUS.RULES.parse_step(table.referee.history[0][0], "pick:red:f5"),
    )


def test_with_a_tray_the_payment_colour_is_read_from_the_flowers_shown() -> None:
    table = enceladus(PAY, reserves={"1": {"blue": 3, "red": 3}, "2": {}})
    for cell in ("T1", "T2", "T3"):
        table.put(cell, "blue")
    table.put("A4", "D1")
    table.put("f5", "")
    assert table.commits() == ["pick:blue:f5"]


def test_the_end_of_the_game_is_recognised_and_ranked() -> None:
    # enc-soli-01-like: after j3/i3 player 2's Martian on L5 still has c5; give player 2 none
    cells = {"j1": "M1", "j3": "red", "i3": "red", "L9": "M2"}
    table = enceladus(cells, reserves={"1": {"blue": 1}, "2": {}})
    for cell, piece in (("j1", ""), ("j3", ""), ("j3", "M1"), ("i3", "")):
        table.put(cell, piece)
    assert table.commits() == ["j3/i3"]
    over = [e for e in table.effects if isinstance(e, GameOver)]
    assert len(over) == 1 and over[0].outcome.winners == (1,)
    assert "Player 1 wins" in table.screens()[-1].message
    ranking = over[0].outcome.ranking
    assert table.screens()[-1].ranking == tuple((p, r) for p, r, _ in ranking)  # the end screen


def test_scenario_a_piece_slid_over_legal_stops_is_committed_only_at_its_final_cell() -> None:
    # Uranus: the gardener slides from 0,0 over 0,-1 and 0,-2 (green flowers: legal stops
    # where nothing is planted) and comes to rest on 0,-3.
    state = URANUS.CASES.position(
        {
            "game": "uranus",
            "options": {},
            "position": {
                "players": 2,
                "to_move": 1,
                "board": "hexagonal",
                "cells": {
                    "0,0": "M1",
                    "0,-1": "green",
                    "0,-2": "green",
                    "0,-3": "green",
                    "3,0": "M2",
                },
                "reserves": {"1": {"red": 3}, "2": {"red": 3}},
                "scores": {"1": 0, "2": 0},
                "hands": {"1": [], "2": []},
                "decks": [5, 5, 5, 5],
                "no_plant_run": 0,
            },
        }
    )
    table = Table(Referee(URANUS.RULES, state, "uranus-hexagonal", SETTINGS))
    table.dump()
    table.put("0,0", "")
    table.put("0,-1", "M1+green", after=0.3)
    table.put("0,-1", "green", after=0.2)
    table.put("0,-2", "M1+green", after=0.1)
    table.put("0,-2", "green", after=0.3)
    table.put("0,-3", "M1+green", after=0.2)
    table.wait(SETTINGS.settle_s + 0.01)
    assert table.commits() == ["0,-3"] and table.referee.steps_committed == 1
    assert not any(isinstance(e, Buzz) for e in table.effects)


def test_a_board_of_the_wrong_game_is_named() -> None:
    table = enceladus(PICK)
    table.message(
        protocol.Hello(
            seq=0, version="1", layout="mars", sensing="identity", board_id="X", firmware="f"
        )
    )
    assert "Wrong board" in table.screens()[-1].message


@pytest.mark.parametrize("cell", ["z9", "A11", "-1,0"])
def test_a_field_update_for_a_cell_the_layout_lacks_is_noted_once_and_ignored(cell: str) -> None:
    table = enceladus(PICK)
    before = dict(table.referee.observed)
    table.put(cell, "red")
    table.put(cell, "")
    assert table.referee.observed == before
    notes = [e for e in table.effects if type(e).__name__ == "Note" and cell in e.text]
    assert len(notes) == 1


# ---- a question weighed again when the sensors say more -------------------------------------


def observed_dump(table: Table, **cells: str) -> None:
    """A board dump of what stands on the board now, with ``cells`` as they really are."""
    board = {**table.referee.observed, **cells}
    table.message(protocol.Dump(seq=0, pieces=tuple(board[c] for c in table.referee.layout)))


def paying_blue_with_one_tray_line_lost() -> Table:
    """Three blue flowers shown on the tray, but the line of the second never arrived: the
    tray reads two blue, which is no payment, so the colour is asked."""
    table = enceladus(PAY, reserves={"1": {"blue": 3, "red": 3}, "2": {}})
    table.put("T1", "blue")
    table.put("T3", "blue")  # T2's line lost to noise
    table.put("A4", "D1")
    table.put("f5", "")
    assert sorted(table.screens()[-1].menu) == ["pay blue", "pay red"]
    return table


def test_a_question_the_repairing_dump_answers_closes_by_itself() -> None:
    table = paying_blue_with_one_tray_line_lost()
    table.wait(0.7)
    observed_dump(table, T2="blue")  # asked for after the gap in the sequence numbers
    table.wait(SETTINGS.settle_s + 0.01)
    assert table.commits() == ["pick:blue:f5"]
    assert table.referee.question is None and not table.screens()[-1].menu


def test_a_question_the_tray_put_right_answers_closes_by_itself() -> None:
    table = enceladus(PAY, reserves={"1": {"blue": 3, "red": 3}, "2": {}})
    for cell, colour in (("T1", "blue"), ("T2", "blue"), ("T3", "red")):  # one wrong flower
        table.put(cell, colour)
    table.put("A4", "D1")
    table.put("f5", "")
    assert table.screens()[-1].menu
    table.put("T3", "", after=1.0)
    assert table.screens()[-1].menu  # the question stands while the tray is being changed
    table.put("T3", "blue")
    table.wait(SETTINGS.settle_s + 0.01)
    assert table.commits() == ["pick:blue:f5"]


def test_a_question_stays_with_its_cursor_while_the_sensors_say_nothing_new() -> None:
    table = paying_blue_with_one_tray_line_lost()
    table.press("select")
    index = table.screens()[-1].menu_index
    observed_dump(table)  # the same board again
    table.put("T4", "yellow")  # a flower on the tray that is no payment either
    table.wait(SETTINGS.settle_s + 0.01)
    assert table.commits() == [] and table.referee.question is not None
    assert table.referee.question.index == index
    assert [e.pattern for e in table.effects if isinstance(e, Buzz)] == ["question"]


# ---- two steps in one burst ------------------------------------------------------------------


def test_the_next_players_step_begun_within_the_settle_time_commits_both() -> None:
    table = enceladus(PICK)
    for cell, piece in (("f2", ""), ("f5", ""), ("f6", ""), ("f5", "M1")):
        table.put(cell, piece)
    assert table.commits() == []  # the Martian may still be slid on...
    table.put("L10", "", after=0.1)  # ...but player 2 already lifts theirs
    assert table.commits() == ["f5/f6"]
    for cell, piece in (("c10", ""), ("c10", "M2"), ("d10", "")):
        table.put(cell, piece)
    assert table.commits() == ["f5/f6", "c10/d10"]
    assert not [e for e in table.effects if isinstance(e, Buzz)]


def test_both_steps_changes_in_one_batch_of_field_updates_commit_both_in_order() -> None:
    table = enceladus(PICK)
    table.wait(0.2)
    burst = (("f2", ""), ("f5", "M1"), ("f6", ""), ("L10", ""), ("c10", "M2"), ("d10", ""))
    for cell, piece in burst:  # one read of the port: every line at the same time
        table.seq += 1
        table.message(protocol.FieldUpdate(seq=table.seq, cell=cell, piece=piece))
    table.wait(SETTINGS.settle_s + 0.1)
    assert table.commits() == ["f5/f6", "c10/d10"]
    numbers = [e.number for e in table.effects if isinstance(e, Committed)]
    assert numbers == [1, 2] and ENCELADUS.RULES.to_move(table.referee.state) == 1
    assert not [e for e in table.effects if isinstance(e, Buzz)]


def test_a_step_and_a_change_no_step_of_the_next_player_explains_is_flagged() -> None:
    table = enceladus(PICK)
    for cell, piece in (("f2", ""), ("f5", "M1"), ("f6", ""), ("a1", "red")):
        table.put(cell, piece)
    table.wait(SETTINGS.grace_s + 0.1)
    assert table.commits() == []
    assert [e.pattern for e in table.effects if isinstance(e, Buzz)] == ["illegal"]


def test_a_glitch_shorter_than_the_debounce_time_is_never_seen() -> None:
    table = enceladus(PICK)
    shown = len(table.screens())
    table.put("c10", "", hold=0.003)
    assert table.referee.observed["c10"] == "green"  # not yet a reading: it has not lasted
    table.put("c10", "green", after=0.0)
    table.wait(SETTINGS.grace_s + 0.1)  # long enough to flag a wrong board
    assert len(table.screens()) == shown


def test_a_glitch_while_a_step_settles_does_not_hold_it_back() -> None:
    table = setup_table()
    # a Martian set on a start square waits the settle time: it may be the square next door
    table.put("L4", "M1")
    changed = table.now - 0.03 + SETTINGS.debounce_s  # L4 was read then
    table.put("c10", "", after=0.1, hold=0.003)  # a 3 ms glitch of a flower meanwhile
    table.put("c10", "yellow", after=0.0)
    table.wait(changed + SETTINGS.settle_s + 0.005 - table.now)
    assert table.commits() == ["@L4"]


def test_a_wrong_board_buzzes_once_however_it_changes_until_it_is_put_right() -> None:
    table = enceladus(PICK)
    table.put("c10", "")  # a flower nobody may take now
    table.wait(SETTINGS.grace_s + 0.1)
    table.put("a1", "red")  # and more wrong
    table.put("a1", "")
    table.wait(SETTINGS.grace_s + 0.1)
    assert [e.pattern for e in table.effects if isinstance(e, Buzz)] == ["illegal"]
    table.put("c10", "green")  # put right; wrong again: a new warning, a new buzz
    table.put("c10", "")
    table.wait(SETTINGS.grace_s + 0.1)
    assert [e.pattern for e in table.effects if isinstance(e, Buzz)] == ["illegal", "illegal"]


def test_select_goes_round_the_menu_past_its_last_choice() -> None:
    table = enceladus(
        PAY, reserves={"1": {"blue": 3, "red": 3}, "2": {}}, settings=RefereeSettings(tray=False)
    )
    table.put("A4", "D1")
    table.put("f5", "")
    first = table.screens()[-1]
    shown = []
    for _ in range(len(first.menu)):
        table.press("select")
        shown.append(table.screens()[-1].menu_index)
    assert shown == [*range(first.menu_index + 1, len(first.menu)), *range(first.menu_index + 1)]


def setup_table() -> Table:
    """Gardens of Enceladus before any Martian is placed (two players)."""
    table = Table(Referee(ENCELADUS.RULES, ENCELADUS.RULES.new_game(2, 1, {}), "enceladus",
                          SETTINGS))
    table.dump()
    return table


def test_a_martian_set_on_the_wrong_start_square_first_is_corrected_where_it_stays() -> None:
    table = setup_table()
    table.put("L3", "M1")  # the square next to the one meant
    assert table.commits() == ["@L3"]
    table.put("L3", "", after=0.2)
    table.put("L4", "M1", after=0.05)
    assert table.commits() == ["@L4"] and table.shown() == ["@L3", "@L4"]
    table.wait(SETTINGS.settle_s)
    assert table.commits() == ["@L4"] and table.referee.steps_committed == 1


def test_a_disc_set_on_the_slot_next_to_its_own_first_is_corrected_where_it_stays() -> None:
    # Pick (A4) and Swap Martian (A5) side by side: the disc meant for A4 set on A5 for a moment
    table = enceladus(PAY, reserves={"1": {"blue": 3}, "2": {}})
    table.put("f5", "")  # the flower to pick, taken first
    table.put("A5", "D1")
    table.put("A5", "", after=0.2)
    table.put("A4", "D1", after=0.05, hold=SETTINGS.debounce_s)
    assert table.commits() == ["pick:blue:f5"]  # at once: A3 and A5 would be corrected
    table.wait(SETTINGS.settle_s)
    assert table.shown() == ["pick:blue:f5"] and not any(
        isinstance(e, Buzz) for e in table.effects)


# ---- a pause is not a commit: steps the board shows whole that a longer step extends --------
#
# Each such step is made, then nothing happens for a minute: nothing is committed, the matrix
# asks to go on or press OK, and OK commits it.

PRESENCE = RefereeSettings(debounce_s=0.02, settle_s=0.4, grace_s=1.5, tray=False, presence=True)


def waits_for_ok(table: Table) -> None:
    """Nothing is committed however long the board stays so; the matrix asks."""
    asking = table.screens()[-1]
    assert asking.menu == ("done",) and "OK when done" in asking.message
    table.wait(60)
    assert table.commits() == []


# Two yellow and two red flowers, player 1 able to pay blue only
SWAP = {"c8": "M1", "R1": "M2", "a1": "yellow", "b1": "yellow", "c3": "red", "c2": "red"}


def test_prefix_step_swap_flowers_of_two_flowers_of_one_colour_waits_for_ok() -> None:
    table = enceladus(SWAP, reserves={"1": {"blue": 3}, "2": {}})
    for cell in ("T1", "T2", "T3"):
        table.put(cell, "blue")  # the payment shown
    table.put("A7", "D1")  # the disc alone: two yellow flowers swapped, or two flowers to come
    waits_for_ok(table)
    table.press("ok")
    (step,) = table.commits()
    assert step.startswith("swap_flowers:blue:")
    assert table.referee.expected["a1"] == "yellow" and table.referee.expected["c3"] == "red"


def test_a_swap_of_two_flowers_of_two_colours_after_the_disc_is_committed_at_once() -> None:
    table = enceladus(SWAP, reserves={"1": {"blue": 3}, "2": {}})
    for cell in ("T1", "T2", "T3"):
        table.put(cell, "blue")
    for cell, piece in (("A7", "D1"), ("a1", ""), ("c3", ""), ("a1", "red")):
        table.put(cell, piece)
    assert table.commits() == []
    table.put("c3", "yellow", hold=SETTINGS.debounce_s)
    assert table.commits() == ["swap_flowers:blue:a1,c3"]


def test_prefix_step_swap_flowers_of_one_colour_on_a_presence_board_waits_for_ok() -> None:
    table = enceladus(SWAP, reserves={"1": {"blue": 3}, "2": {}}, settings=PRESENCE)
    table.put("A7", "occupied")
    waits_for_ok(table)
    table.press("ok")
    assert [s.partition(":")[0] for s in table.commits()] == ["swap_flowers"]


# f2's Martian can only land on f5, where no flower is next to it: it picks nothing.  With three
# blue, it may instead swap with f5's flower (Swap Martian): the red flower to f2, the disc on A5.
LONE = {"f2": "M1", "f5": "red", "L10": "M2", "c10": "green", "d10": "green"}


def test_prefix_step_a_move_that_picks_nothing_waits_for_ok() -> None:
    table = enceladus(LONE, reserves={"1": {"blue": 3}, "2": {}})
    for cell, piece in (("f2", ""), ("f5", ""), ("f5", "M1")):
        table.put(cell, piece)
    waits_for_ok(table)
    table.press("ok")
    assert table.commits() == ["f5"]


def test_prefix_step_a_move_onto_one_of_two_neighbouring_flowers_on_a_presence_board_waits_for_ok(
) -> None:
    # Occupancy cannot tell f4/f5 (the Martian on f4, f5 picked) from f5/f4 under way (f5's
    # flower lifted for the Martian, f4 still to pick).
    table = enceladus(LINE, settings=PRESENCE)
    for cell, piece in (("f2", ""), ("f4", ""), ("f4", "occupied"), ("f5", "")):
        table.put(cell, piece)
    waits_for_ok(table)
    table.press("ok")
    assert table.commits() == ["f4/f5"]


def presence_table(rules: Any, state: Any, layout: str) -> Table:
    table = Table(Referee(rules, state, layout, PRESENCE))
    table.dump()
    return table


def test_prefix_step_a_mars_gardeners_first_move_onto_a_flower_on_a_presence_board_waits_for_ok(
) -> None:
    # Gardener 1 still on the empty hex it was placed on, a 3 in the pool: lifting it already
    # makes 3>3,-1 (onto the flower there, which occupancy cannot see), or a move that plants.
    state = mars_position(2, {"0,-1": "M1", "-3,3": "M2", "3,-1": "red"}, pool=[3],
                          reserves={1: {"blue": 2}, 2: {"blue": 2}})
    table = presence_table(MARS.RULES, state, "mars")
    table.put("0,-1", "")
    waits_for_ok(table)
    table.press("ok")
    assert table.commits() == ["3>3,-1"]


def test_prefix_step_a_uranus_gardeners_first_move_onto_a_flower_on_a_presence_board_waits_for_ok(
) -> None:
    state = URANUS.CASES.position({"game": "uranus", "options": {}, "position": {
        "players": 2, "to_move": 1, "board": "hexagonal",
        "cells": {"0,0": "M1", "0,-2": "green", "3,0": "M2"},
        "reserves": {"1": {"red": 3}, "2": {"red": 3}}, "scores": {"1": 0, "2": 0},
        "hands": {"1": [], "2": []}, "decks": [5, 5, 5, 5], "no_plant_run": 0}})
    table = presence_table(URANUS.RULES, state, "uranus-hexagonal")
    table.put("0,0", "")  # onto 0,-2 already, or on its way to plant red
    waits_for_ok(table)
    table.press("ok")
    assert table.commits() == ["0,-2"]


def test_on_a_presence_board_a_gardener_from_flower_to_flower_is_said_with_ok() -> None:
    # Occupancy shows nothing of it: the players press OK, the only such move is committed.
    state = URANUS.CASES.position({"game": "uranus", "options": {}, "position": {
        "players": 2, "to_move": 1, "board": "hexagonal",
        "cells": {"0,0": "M1+red", "0,-2": "green", "3,0": "M2"},
        "reserves": {"1": {"red": 3}, "2": {"red": 3}}, "scores": {"1": 0, "2": 0},
        "hands": {"1": [], "2": []}, "decks": [5, 5, 5, 5], "no_plant_run": 0}})
    table = presence_table(URANUS.RULES, state, "uranus-hexagonal")
    table.press("ok")
    assert table.commits() == ["0,-2"]


def uranus_gardener_on_a_flower() -> Table:
    # Gardener 1 on red at 0,0 moves onto the green flower at 0,-2: occupancy shows nothing.
    state = URANUS.CASES.position({"game": "uranus", "options": {}, "position": {
        "players": 2, "to_move": 1, "board": "hexagonal",
        "cells": {"0,0": "M1+red", "0,-2": "green", "3,0": "M2"},
        "reserves": {"1": {"red": 3}, "2": {"red": 3}}, "scores": {"1": 0, "2": 0},
        "hands": {"1": [], "2": []}, "decks": [5, 5, 5, 5], "no_plant_run": 0}})
    return presence_table(URANUS.RULES, state, "uranus-hexagonal")


def test_on_a_presence_board_the_flower_lifted_where_a_gardener_lands_is_a_step_under_way(
) -> None:
    # The player lifts the green flower to set the gardener on it and stops to think:
    # a cell the step changes, read empty on the way, never an alarm.
    table = uranus_gardener_on_a_flower()
    table.put("0,-2", "")
    table.wait(1.9)  # past the grace period (the board's heartbeat is not fed here)
    assert not [s for s in table.screens() if "wrong" in s.highlights.values()]
    table.put("0,-2", "occupied")
    table.press("ok")
    assert table.commits() == ["0,-2"]


def test_on_a_presence_board_a_landing_begun_and_put_back_is_not_the_landing_made() -> None:
    # M1 f2 -> f5 picking f6, begun and put back by hand (f2 lifted, f5's flower lifted and
    # set back, the Martian back on f2), then made: f6 picked and f2 lifted do not finish it,
    # as f5 was set down before the Martian left f2; only the flower lifted again does.
    table = enceladus(PICK, settings=PRESENCE)
    for cell, piece in (("f2", ""), ("f5", ""), ("f5", "occupied"), ("f2", "occupied"),
                        ("f6", ""), ("f2", "")):
        table.put(cell, piece)
    table.press("ok")  # it is not done: OK commits nothing
    assert table.commits() == []
    table.put("f5", "")
    table.put("f5", "occupied")
    table.press("ok")
    assert table.commits() == ["f5/f6"]


def mars_planting_on_a_presence_board() -> Table:
    # M1 on red at 0,-1 with a 3 to move: every step moves it along a line onto an empty hex
    # (none next to another) and plants blue there; occupancy shows the whole step once the
    # blue flower is down.
    state = mars_position(2, {"0,-1": "M1+red", "-3,3": "M2"}, pool=[3],
                          reserves={1: {"blue": 2}, 2: {"blue": 2}})
    return presence_table(MARS.RULES, state, "mars")


def test_on_a_presence_board_a_flower_planted_is_committed_at_once() -> None:
    table = mars_planting_on_a_presence_board()
    table.put("3,-1", "occupied")  # the flower; the gardener lifted off red unseen
    assert table.commits() == ["3>3,-1=blue"]
    table.wait(5)
    assert table.shown() == ["3>3,-1=blue"]


def test_on_a_presence_board_a_flower_set_down_and_taken_back_at_once_is_no_step() -> None:
    # The step begun and put back: the flower down for 0.3 s, then back in the reserve.
    table = mars_planting_on_a_presence_board()
    table.put("3,-1", "occupied", hold=0.3)
    table.put("3,-1", "", after=0.0)
    table.wait(3.0)
    assert table.commits() == []
    assert not [s for s in table.screens() if "wrong" in s.highlights.values()]


def test_a_board_sending_only_garbled_lines_is_not_called_disconnected() -> None:
    table = enceladus(PICK)
    timeout = table.referee.settings.heartbeat_timeout_s
    for _ in range(int(timeout * 10) + 1):  # garbage every 100 ms, no good line
        table.wait(0.1)
        table.time.deliver(BadLine(table.now, "bad checksum", "F 3 a1 x*00"))
    notes = [e.text for e in table.effects if isinstance(e, Note)]
    assert notes[-1] == (f"the board has sent only garbled lines for {timeout:g} s")
    assert table.screens()[-1].message == "Board garbled: check cable and speed"


def test_one_cut_line_and_then_silence_is_still_a_silent_board() -> None:
    table = enceladus(PICK)
    table.time.deliver(BadLine(table.now, "bad checksum", "F 3 a"))
    table.wait(table.referee.settings.heartbeat_timeout_s + 0.1)
    assert table.screens()[-1].message == "Board disconnected: check the cable"


def _hello(layout: str, sensing: str = "identity", version: str = "1") -> protocol.Hello:
    return protocol.Hello(seq=0, version=version, layout=layout, sensing=sensing,
                          board_id="X", firmware="f")


@pytest.mark.parametrize(("layout", "sensing", "version"), [
    ("mars", "identity", "1"), ("uranus-hexagonal", "presence", "1"),
    ("uranus-hexagonal", "identity", "2.0")])
def test_a_board_that_says_it_is_not_the_games_is_not_read_until_one_that_is_says_hello(
    layout: str, sensing: str, version: str
) -> None:
    # A Mars board (radius 5) names every cell of the Uranus hexagonal board (radius 4): its
    # field updates were taken as steps of the Uranus game, as a presence board's were.
    rules = URANUS.RULES
    state = rules.new_game(2, 3, {})
    table = Table(Referee(rules, state, "uranus-hexagonal", SETTINGS))
    table.message(_hello("uranus-hexagonal"))
    table.dump()
    empty = next(c for c, p in rules.board(state).items() if not p)
    table.message(_hello(layout, sensing, version))
    refused = table.screens()[-1]
    assert refused.message.startswith(("Wrong board", "Board senses", "Board speaks protocol 2"))
    assert refused.urgent
    table.put(empty, "M1")
    table.message(protocol.Dump(seq=0, pieces=("occupied",) * len(table.referee.layout)))
    table.wait(SETTINGS.settle_s + 0.1)
    assert table.commits() == [] and table.referee.observed[empty] == ""
    assert table.screens()[-1].message == refused.message

    table.effects.clear()
    table.message(_hello("uranus-hexagonal"))  # the right board again
    assert Send(protocol.RequestDump()) in table.effects  # what stands on it is not known
    table.dump()
    assert table.screens()[-1].message.endswith("your turn")
