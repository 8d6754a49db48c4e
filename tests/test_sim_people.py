"""Virtual players who behave like people (companion/sim/perform.py, companion/sim/harness.py).

Each behaviour of the noise model on one Enceladus move: a piece held in the air, a piece
set on a wrong cell and moved on, a step begun and put back by hand, a pause to think; then
what the virtual table counts: an alarm the matrix raises, heartbeats that keep a quiet board
alive, the next player reaching in while the last step settles.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from companion.board import protocol
from companion.events import AnyEvent, BoardMessage, Button
from companion.referee.effects import Committed, Effects
from companion.referee.mars import MarsTable
from companion.referee.recognition import on_the_way
from companion.referee.referee import RefereeSettings
from companion.referee.uranus import CardTable, load_catalogue
from companion.rules import load
from companion.rules.base import EMPTY
from companion.sim.harness import VirtualTable
from companion.sim.perform import PEOPLE, Noise, Put, chance, perform
from companion.sim.players import choose_step

ENCELADUS = load("enceladus").RULES
QUIET = Noise.none()


def _moving() -> tuple[object, dict[str, str], dict[str, str]]:
    """A position where player 1's Martian stands on L4, its board and the move L4 -> d4
    taking the flower on d5."""
    state = ENCELADUS.new_game(2, 1, {})
    for text in ("@L4", "@R4"):
        state = ENCELADUS.apply(state, ENCELADUS.parse_step(state, text))
    step = ENCELADUS.parse_step(state, "d4/d5")
    return state, ENCELADUS.board(state), ENCELADUS.changes(state, step)


def _boards(board: dict[str, str], ops: list[Put]) -> list[dict[str, str]]:
    """The board after each operation."""
    now, seen = dict(board), []
    for op in ops:
        now[op.cell] = op.piece
        seen.append(dict(now))
    return seen


def _puts(ops: list[object]) -> list[Put]:
    assert all(isinstance(op, Put) for op in ops)
    return [op for op in ops if isinstance(op, Put)]


def test_a_piece_held_in_the_air_goes_down_seconds_after_it_was_lifted() -> None:
    _, board, changes = _moving()
    ops = _puts(perform(board, changes, random.Random(1), replace(QUIET, hold=1.0)))
    lift = next(n for n, op in enumerate(ops) if op.cell == "L4" and op.piece == EMPTY)
    held, pace = replace(QUIET, hold=1.0).hold_s, QUIET.pace
    assert held[0] + pace[0] <= ops[lift + 1].wait <= held[1] + pace[1]
    assert _boards(board, ops)[-1] == {**board, **changes}


def test_a_piece_set_on_a_wrong_cell_is_moved_on_within_the_settle_time() -> None:
    _, board, changes = _moving()
    board = {**board, "c4": EMPTY, "e5": EMPTY}  # flowers picked there earlier
    for seed in range(20):
        ops = _puts(perform(board, changes, random.Random(seed), replace(QUIET, misplace=1.0)))
        stray = [op for op in ops if op.cell not in changes]
        put, lifted = stray  # set down on an empty cell next to d4, then taken off it
        assert put.cell == lifted.cell and put.cell in {"c4", "e5"}
        assert (put.piece, lifted.piece) == ("M1", EMPTY)
        assert lifted.wait < RefereeSettings().settle_s
        assert _boards(board, ops)[-1] == {**board, **changes}


def _swapping() -> tuple[dict[str, str], dict[str, str]]:
    """The board and changes of the first Martian-and-flower swap of a seeded game."""
    state, rng = ENCELADUS.new_game(2, 0, {}), random.Random(0)
    while not ENCELADUS.format_step(state, step := choose_step(ENCELADUS, state, rng)).startswith(
            "swap_martian"):
        state = ENCELADUS.apply(state, step)
    return ENCELADUS.board(state), ENCELADUS.changes(state, step)


def test_a_flower_swapped_with_a_martian_is_set_down_once_and_never_on_a_wrong_cell() -> None:
    board, changes = _swapping()
    for seed in range(20):
        ops = _puts(perform(board, changes, random.Random(seed), replace(QUIET, misplace=1.0)))
        # Only the Martian in the hand is ever set on a wrong cell: the flower swapped into
        # its place is already down there, not a second flower beside it.
        assert {op.piece for op in ops if op.cell not in changes} <= {"M1", "M2", EMPTY}
        for cell, piece in changes.items():
            assert sum(op.cell == cell and op.piece == piece for op in ops) == 1
        assert _boards(board, ops)[-1] == {**board, **changes}


def test_a_step_begun_and_put_back_comes_back_to_the_board_before_it_is_made() -> None:
    _, board, changes = _moving()
    begun = 0
    for seed in range(20):
        ops = _puts(perform(board, changes, random.Random(seed), replace(QUIET, take_back=1.0)))
        boards = _boards(board, ops)
        back = [n for n, seen in enumerate(boards[:-1]) if seen == board]
        begun += bool(back)
        # The part made first is put back last piece first: the start again, then the step.
        assert boards[-1] == {**board, **changes}
        assert all(seen != boards[-1] for seen in boards[:-1])
    assert begun == 20


def test_a_pause_to_think_falls_where_every_piece_moved_is_lifted_or_in_place() -> None:
    _, board, changes = _moving()
    paused = 0
    for seed in range(30):
        noise = replace(QUIET, think=1.0, slide=1.0, misplace=0.5)
        ops = _puts(perform(board, changes, random.Random(seed), noise))
        long = [n for n, op in enumerate(ops) if op.wait >= noise.think_s[0]]
        for n in long:
            paused += 1
            before = _boards(board, ops)[n - 1]
            assert n > 0 and all(cell in changes and on_the_way(piece, changes[cell])
                                 for cell, piece in before.items() if piece != board[cell])
    assert paused >= 25  # a move of two operations or more always has such a point


def test_a_behaviour_that_is_off_draws_nothing() -> None:
    rng = random.Random(5)
    state = rng.getstate()
    assert not chance(rng, 0.0) and rng.getstate() == state
    _, board, changes = _moving()
    # The noise without the behaviours gives the scripts it always gave.
    assert perform(board, changes, random.Random(3), Noise()) == perform(
        board, changes, random.Random(3), replace(PEOPLE, hold=0, misplace=0, take_back=0))


# ---- what the virtual table counts -------------------------------------------------------


def _table(**kwargs: object) -> VirtualTable:
    state, _, _ = _moving()
    table = VirtualTable(ENCELADUS, state, "enceladus", seed=1, noise=QUIET, **kwargs)  # type: ignore[arg-type]
    table.start()
    return table


def test_a_board_no_step_explains_is_counted_as_an_alarm_once() -> None:
    table = _table()
    flower = table.board["j9"]
    table._play_ops([Put(0.2, "L4", EMPTY), Put(0.2, "j9", f"M1+{flower}")])  # out of reach
    table._advance(table.now + 5.0)
    table._play_ops([Put(0.2, "j9", flower), Put(0.2, "L4", "M1")])  # put right
    table._advance(table.now + 5.0)
    assert table.report.false_alarms == 1
    assert table.screen is not None and not table.screen.urgent


def test_heartbeats_keep_a_quiet_board_from_being_called_lost() -> None:
    table = _table()
    table._advance(30.0)
    assert table.report.false_alarms == 0
    silent = _table(heartbeat_s=None)
    silent._advance(30.0)
    assert silent.report.false_alarms == 1  # "Board disconnected": the board said nothing


def test_the_next_player_reaches_in_only_on_an_identity_board() -> None:
    state = ENCELADUS.new_game(3, 4, {})
    eager = replace(PEOPLE, reach_in=1.0)
    report = VirtualTable(ENCELADUS, state, "enceladus", seed=4, noise=eager).play()
    assert report.reached_in > 10
    assert (report.false_alarms, report.missed, report.false_commits) == (0, 0, 0)
    assert report.over and len(report.committed) == len(report.performed)
    presence = VirtualTable(ENCELADUS, state, "enceladus", seed=4, noise=eager,
                            settings=RefereeSettings(presence=True, tray=False)).play()
    assert presence.reached_in == 0 and presence.over


# ---- a step committed while its piece is on its way, corrected where it lands -------------

SLIDING = Noise(glitch=0.0, hesitate=0.0, slide=1.0, pace=(0.35, 0.35), misplace=1.0,
                misplace_s=(0.2, 0.2))
"""Every Martian and gardener slid over the cells on its way at 0.35 s a cell, every piece set
on a wrong cell next to its own for 0.2 s first: a board that completes a step it is only
passing through, again and again."""


class TimedTable(VirtualTable):
    """A virtual table that notes, for every commit, the seconds since the last input (a
    cell read, a button pressed, dice or a card shown)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.last_input = 0.0
        self.delays: list[float] = []

    def deliver(self, event: AnyEvent) -> Effects:
        if (isinstance(event, Button) and event.pressed) or (
                isinstance(event, BoardMessage)
                and not isinstance(event.message, protocol.Heartbeat)):
            self.last_input = event.t
        return super().deliver(event)

    def _run_effects(self, effects: Effects) -> None:
        self.delays += [self.now - self.last_input for e in effects if isinstance(e, Committed)]
        super()._run_effects(effects)


def _sliding_table(game: str, presence: bool, seed: int) -> TimedTable:
    rules = load(game).RULES
    settings = RefereeSettings(presence=presence, tray=False)
    if game == "uranus":
        state = rules.new_game(2, seed, {"board": "hexagonal"})
        table = TimedTable(rules, state, "uranus-hexagonal", seed=seed, noise=SLIDING,
                           settings=settings, extensions=[CardTable(load_catalogue())])
    elif game == "mars":
        state = rules.new_game(2, seed, {})
        table = TimedTable(rules, state, "mars", seed=seed, noise=SLIDING, settings=settings,
                           extensions=[MarsTable("tray", rng=random.Random(seed))])
    else:
        state = rules.new_game(2, seed, {})
        table = TimedTable(rules, state, "enceladus", seed=seed, noise=SLIDING,
                           settings=settings)
    return table


@pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])
@pytest.mark.parametrize("game", ["enceladus", "mars", "uranus"])
def test_pieces_slid_over_legal_cells_or_set_on_wrong_ones_are_shown_at_once_and_corrected(
        game: str, presence: bool) -> None:
    reports, delays = [], []
    for seed in (1, 2, 3):
        table = _sliding_table(game, presence, seed)
        reports.append(table.play(max_steps=30))
        delays += table.delays
    faults = [(r.false_alarms, r.missed, r.false_commits) for r in reports]
    assert faults == [(0, 0, 0)] * len(reports), "(false alarms, missed, false commits)"
    assert sum(r.corrections for r in reports) > 0
    # Every commit, corrected ones too, is shown within the debounce of the last input: no
    # step waits the settle time (none of these short games reaches its end), but, on a
    # presence board, one that the next player's first piece completes while the last step
    # is open to a correction (that piece may be the last player's hand still at work).
    settings = RefereeSettings()
    at_once = [d for d in delays if d <= settings.debounce_s + 1e-6]
    if presence:
        assert max(delays) <= settings.settle_s + settings.debounce_s + 1e-6
        assert len(at_once) >= 0.9 * len(delays)
    else:
        assert len(at_once) == len(delays)
