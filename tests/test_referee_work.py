"""The work a field update or a commit of a gardener game asks of the referee, counted (never
timed): what one update needs is worked out once, not again for the screen or the commit.

Gardens of Mars positions from the rules core (``companion.rules.mars.position``); the steps
the board shows are performed by the virtual-time harness without noise.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import pytest

from companion.board import protocol
from companion.events import BoardMessage, Timer
from companion.referee import mars as mars_table
from companion.referee.effects import Committed, Show
from companion.referee.mars import MarsTable
from companion.referee.recognition import Lazy, StepIndex, board_diff, guidance
from companion.rules import mars as mars_rules
from companion.rules.hexes import hex_name
from companion.rules.mars import RULES, Move, Place, Roll, State, destinations, position
from companion.sim.harness import VirtualTable
from companion.sim.perform import Noise

# Gardener 1 on 1,-1 (no flower under it) with flowers on three of its six neighbours.
CELLS = {"1,-1": "M1", "-2,3": "M2", "2,-1": "red", "1,0": "blue", "1,-2": "green"}
RESERVES = {1: {"red": 3, "blue": 2}, 2: {"red": 2}}


def _state(**kwargs: Any) -> State:
    return position(2, CELLS, reserves=RESERVES, **kwargs)


def _table(state: State, steps: list[Hashable]) -> VirtualTable:
    script = iter(steps)
    virtual = VirtualTable(RULES, state, "mars", seed=1, noise=Noise.none(),
                           choose=lambda rules, s, r: next(script))
    virtual.referee.extensions.append(MarsTable("tray", rng=random.Random(0)))
    virtual.start()
    return virtual


def _calls_from_the_referee(monkeypatch: pytest.MonkeyPatch, name: str) -> list[tuple[Any, ...]]:
    """The arguments of every call of the Mars rules core's method ``name`` made by the
    referee's own modules (not by the harness playing the table)."""
    calls: list[tuple[Any, ...]] = []
    kept: Callable[..., Any] = getattr(type(RULES), name)

    def counted(self: Any, *args: Any) -> Any:
        if sys._getframe(1).f_globals["__name__"].startswith("companion.referee"):
            calls.append(args)
        return kept(self, *args)

    monkeypatch.setattr(type(RULES), name, counted)
    return calls


def test_a_step_seen_on_the_board_is_applied_and_end_tested_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 1,-1 to 1,2 with a 3, planting blue: weighed for the end of the game (the gardener may
    # still be on its way), for one state among the candidates, then committed.
    move = Move(3, (1, 2), "blue")
    t = _table(_state(pool=[3, 5]), [move])
    applied = _calls_from_the_referee(monkeypatch, "apply")
    tested = _calls_from_the_referee(monkeypatch, "outcome")
    assert t.play_step()
    after = t.referee.state
    assert [step for _, step in applied if step == move] == [move]
    assert [s for (s,) in tested if s is after] == [after]


def test_a_roll_committed_by_the_dice_tray_is_applied_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(_state(), [])
    applied = _calls_from_the_referee(monkeypatch, "apply")
    effects = t.referee.handle(BoardMessage(t.now, protocol.Dice(seq=0, values=(5, 3, 5))))
    assert [e.step for e in effects if isinstance(e, Committed)] == ["roll:3,5,5"]
    assert [step for _, step in applied if isinstance(step, Roll)] == [Roll((3, 5, 5))]


def test_the_move_prompt_works_out_the_destinations_once_per_position(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state(pool=[3, 5])
    calls: list[State] = []

    def counted(s: State, die: int | None = None) -> frozenset[Any]:
        calls.append(s)
        return destinations(s, die)

    monkeypatch.setattr(mars_table, "destinations", counted)
    t = _table(state, [])
    first, second = t.referee.screen(t.now), t.referee.screen(t.now)
    assert first == second and first.message == "P1: move 3 or 5"
    assert dict(first.highlights) == {hex_name(c): "dest" for c in destinations(state)}
    assert calls == [state]  # the prompt's discards and the highlights read one answer


def test_the_board_is_compared_with_the_position_once_per_field_update() -> None:
    # The evaluation, the screen and the Mars prompt (is the board settled?) each ask for the
    # diff of the board; each comparison reads every one of its 91 hexes.
    t = _table(_state(pool=[3, 5]), [])
    referee = t.referee
    compared: list[tuple[Any, Any]] = []

    def profile(frame: Any, event: str, _: Any) -> None:
        if event == "call" and frame.f_code is board_diff.__code__:
            compared.append((frame.f_locals["expected"], frame.f_locals["observed"]))

    for n, (cell, piece) in enumerate([("1,-1", ""), ("1,-1", "M1")]):  # lifted, put back
        referee.handle(BoardMessage(t.now, protocol.FieldUpdate(seq=n, cell=cell, piece=piece)))
        compared.clear()
        sys.setprofile(profile)
        try:
            effects = referee.handle(Timer(t.now + 0.1, "debounce"))
        finally:
            sys.setprofile(None)
        assert any(isinstance(e, Show) for e in effects)
        assert compared == [(referee.sensed_expected, referee.observed)]
        t.now += 1.0


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Hashable]:
    """The steps each call of ``StepIndex.<name>`` is asked about while the test runs."""
    steps: list[Hashable] = []
    kept: Callable[..., Any] = getattr(StepIndex, name)

    def counted(self: StepIndex, step: Hashable, *args: Any) -> Any:
        steps.append(step)
        return kept(self, step, *args)

    monkeypatch.setattr(StepIndex, name, counted)
    return steps


def test_a_lifted_gardener_shows_its_destinations_from_its_moves_none_weighed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The core lists the gardener's landings (moves_from); no move's changes are worked out,
    # and lifted again in the same position it shows what the index kept.
    state = _state(pool=[3, 5])
    expected = RULES.board(state)
    index = StepIndex(RULES, state, expected)
    lifted = {"1,-1": ""}
    weighed = _counting(monkeypatch, "piece_changes")
    listed = _calls_from_the_referee(monkeypatch, "moves_from")
    first = guidance(index, expected, lifted)
    assert first == {hex_name(c): "dest" for c in destinations(state)}
    first["1,-1"] = "pick"  # the caller's copy: what the index keeps is not changed
    assert guidance(index, expected, lifted) == {hex_name(c): "dest" for c in destinations(state)}
    assert weighed == []
    assert len(listed) == 1


def test_a_lifted_gardener_is_no_complete_step_without_each_move_weighed_in_full(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Every move changes two hexes, the diff one: the number of cells tells them all apart.
    state = _state(pool=[3, 5])
    index = StepIndex(RULES, state, RULES.board(state))
    weighed = _counting(monkeypatch, "completes")
    assert index.completing({"1,-1": ""}, distinct=True) == []
    assert weighed == []
    assert index.completing({"1,-1": "", "1,2": "M1+blue"}, distinct=True) == [
        Move(3, (1, 2), "blue")]
    assert weighed  # the moves of the diff's size are weighed in full


def test_a_lifted_gardeners_complete_steps_are_sought_among_its_landings_on_handled_hexes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Lifted off an empty hex: the moves onto a flower alone are read (the flower stays
    # under the gardener; a presence board cannot see it land there), none onto an empty
    # hex, which changes a hex not handled.
    state = _state(pool=[1, 3])
    expected = RULES.board(state)
    onto_flowers = [m for m in RULES.legal_steps(state)
                    if isinstance(m, Move) and expected[hex_name(m.to)]]
    weighed = _counting(monkeypatch, "piece_changes")
    assert StepIndex(RULES, state, expected).completing({"1,-1": ""}, {"1,-1"}) == []
    assert onto_flowers and set(weighed) == set(onto_flowers)
    weighed.clear()
    presence = StepIndex(RULES, state, expected, presence=True)
    assert presence.completing({"1,-1": ""}, {"1,-1"}) == onto_flowers
    assert set(weighed) == set(onto_flowers)


def test_a_gardener_put_down_short_of_another_landing_is_told_from_its_moves_listed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Moved 3 to 1,2 with a 5 in the pool: 1,4 on the same line is a landing too, so the
    # gardener may still be sliding on, told from the landings the core lists without the
    # changes of any other move worked out.
    move = Move(3, (1, 2), "blue")
    state = _state(pool=[3, 5])
    assert Move(5, (1, 4), "blue") in RULES.legal_steps(state)
    referee = _table(state, []).referee
    referee.observed.update({"1,-1": "", "1,2": "M1+blue"})
    referee.last_put = ("1,2", "")
    weighed = _counting(monkeypatch, "piece_changes")
    assert referee._in_transit(referee.diff(), [move])
    assert set(weighed) == {move}


def test_lazy_all_draws_the_rest_once_and_keeps_it() -> None:
    drawn: list[int] = []

    def source() -> Iterator[int]:
        for n in range(4):
            drawn.append(n)
            yield n

    lazy = Lazy(source())
    assert lazy.first() == 0
    assert lazy.all() == [0, 1, 2, 3]
    assert lazy.all() == [0, 1, 2, 3] and list(lazy) == [0, 1, 2, 3]
    assert drawn == [0, 1, 2, 3]  # each item drawn from the source once


def test_a_placement_on_a_hex_is_found_without_every_placement_listed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = position(3, {"1,-1": "M1", "2,-1": "red"}, to_move=2)
    every = list(mars_rules._placements(state))
    assert len(every) == 88  # 91 hexes but the centre, the gardener and the flower
    listed: list[State] = []
    kept = mars_rules._placements
    monkeypatch.setattr(mars_rules, "_placements", lambda s: listed.append(s) or kept(s))
    for cell in RULES.layout(state):
        on = [s for s in RULES.candidates(state, frozenset({cell})) if isinstance(s, Place)]
        assert on == [p for p in every if hex_name(p.cell) == cell], cell
    assert listed == []
