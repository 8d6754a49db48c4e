"""What the referee keeps to make a field update cheap gives the answers it gave without it.

Whole virtual games of the three games, on identity and presence boards, by players who slide
pieces over cells and set them on wrong cells first: at every evaluation the referee's answer
is checked against the one worked out from scratch, on a fresh index of the state.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from itertools import combinations_with_replacement
from typing import Any

import pytest

from companion.referee import referee as referee_module
from companion.referee.mars import MarsTable
from companion.referee.recognition import (
    GUIDED,
    READ_FIRST,
    StepIndex,
    beyond,
    board_diff,
    guidance,
    lifted_pieces,
    neighbours,
    off_garden,
    sensed_board,
)
from companion.referee.referee import Referee, RefereeSettings, _head, _origin
from companion.referee.screen import Screen
from companion.referee.uranus import CardTable, load_catalogue
from companion.rules import enceladus, load
from companion.rules.base import EMPTY, Board, Cell, Move, Piece, Seated
from companion.rules.enceladus import Action
from companion.rules.uranus import BOARDS
from companion.sim.harness import VirtualTable
from companion.sim.perform import THINKING

HANDS = replace(THINKING, hesitate=1.0, slide=1.0, misplace=0.5, take_back=0.5)


def _table(game: str, seed: int, presence: bool, *, tray: bool = True) -> VirtualTable:
    rules = load(game).RULES
    settings = RefereeSettings(presence=presence, tray=tray and not presence)
    if game == "uranus":
        board = sorted(BOARDS)[seed % 3]
        return VirtualTable(rules, rules.new_game(2, seed, {"board": board}), f"uranus-{board}",
                            seed=seed, noise=HANDS, settings=settings,
                            extensions=[CardTable(load_catalogue(), cards="reader")])
    extensions = [MarsTable("tray", rng=random.Random(seed))] if game == "mars" else []
    return VirtualTable(rules, rules.new_game(2, seed, {}), game, seed=seed, noise=HANDS,
                        settings=settings, extensions=extensions)


def _in_transit_from_scratch(referee: Referee, diff: dict[Cell, Piece],
                             steps: Sequence[Hashable]) -> bool:
    """:meth:`Referee._in_transit` as its rule says, each cell next to or beyond the piece put
    down asked about on its own, on an index that keeps nothing from earlier updates."""
    if referee.last_put is None:
        return False
    index = StepIndex(referee.rules, referee.state, referee.expected, referee.settings.presence)
    cell, before = referee.last_put
    was = dict(diff)
    if before == referee.sensed_expected.get(cell, EMPTY):
        was.pop(cell, None)
    else:
        was[cell] = before
    for step in steps:
        changes = index.piece_changes(step)
        if cell not in changes:
            continue
        head = _head(changes[cell])
        if referee.settings.presence and head != changes[cell] and before == EMPTY:
            return True
        origin = _origin(referee.expected, changes, cell)
        ways = beyond(origin, cell) if origin is not None else []
        if origin is None or referee.settings.presence:
            ways = neighbours(cell) + ways
        for there in dict.fromkeys(c for c in ways if c in referee.layout_set):
            for other in index.candidates(frozenset(was) | {there}, distinct=True):
                puts = index.piece_changes(other).get(there)
                if puts is not None and _head(puts) == head and index.explains(other, was):
                    return True
    return False


def _completing_from_scratch(index: StepIndex, diff: Mapping[Cell, Piece],
                             handled: Collection[Cell], distinct: bool,
                             tray: Mapping[str, int] | None) -> list[Hashable]:
    """:meth:`StepIndex.completing` as its rule says: every candidate's changes asked of the
    rules core, on an index that keeps nothing from earlier updates."""
    if not diff:
        return []
    fresh = StepIndex(index.rules, index.state, index.expected, index.presence)
    cells = frozenset(diff)
    within = cells | frozenset(handled) if index.presence else cells
    steps = list(fresh.candidates(cells, within, distinct=distinct))
    found = []
    if tray:
        found = [s for s in index.rules.tray_filter(index.state, steps, dict(tray))
                 if fresh.completes(s, diff, handled)]
    return found or [s for s in steps if fresh.completes(s, diff, handled)]


@contextmanager
def _completing_checked() -> Iterator[list[int]]:
    """The number of steps of every answer of ``StepIndex.completing`` while the block runs,
    each checked."""
    sizes: list[int] = []
    kept = StepIndex.completing

    def checked(self: StepIndex, diff: Mapping[Cell, Piece],
                handled: Collection[Cell] = frozenset(), *, distinct: bool = False,
                tray: Mapping[str, int] | None = None) -> list[Hashable]:
        found = kept(self, diff, handled, distinct=distinct, tray=tray)
        assert found == _completing_from_scratch(self, diff, handled, distinct, tray), diff
        sizes.append(len(found))
        return found

    StepIndex.completing = checked  # type: ignore[method-assign]
    try:
        yield sizes
    finally:
        StepIndex.completing = kept  # type: ignore[method-assign]


@contextmanager
def _checked() -> Iterator[list[bool]]:
    """Every answer of ``Referee._in_transit`` while the block runs, each checked."""
    answers: list[bool] = []
    kept = Referee._in_transit

    def checked(self: Referee, diff: dict[Cell, Piece], steps: Sequence[Hashable]) -> bool:
        found = kept(self, diff, steps)
        assert found == _in_transit_from_scratch(self, diff, steps), (diff, steps)
        if self.last_put is not None:
            answers.append(found)
        return found

    Referee._in_transit = checked  # type: ignore[method-assign]
    try:
        yield answers
    finally:
        Referee._in_transit = kept  # type: ignore[method-assign]


@pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])
@pytest.mark.parametrize("game", ["enceladus", "mars", "uranus"])
def test_a_piece_on_its_way_is_told_from_the_steps_weighed_while_it_was_in_the_hand(
        game: str, presence: bool) -> None:
    with _checked() as answers:
        report = _table(game, 2, presence).play()
    assert report.over and not report.false_commits and not report.missed
    assert True in answers  # pieces put down on their way were weighed


@pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])
def test_the_payments_and_draws_of_one_set_of_changes_complete_together(presence: bool) -> None:
    with _completing_checked() as sizes:
        report = _table("enceladus", 3, presence, tray=False).play()
    assert report.over and not report.false_commits and not report.missed
    assert max(sizes) > 1  # steps of one set of changes (no tray to tell them) weighed together


class _Counted:
    """A rules core whose ``changes`` are counted (``changed``: the steps asked about); with
    ``listed`` False it lists no piece's moves itself (``moves_from``), so that its
    candidates' changes are asked instead."""

    def __init__(self, core: object, *, listed: bool = True) -> None:
        self.core, self.listed, self.asked = core, listed, 0
        self.changed: list[Hashable] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.core, name)

    def changes(self, state: Seated, step: Hashable) -> dict[Cell, Piece]:
        self.asked += 1
        self.changed.append(step)
        return self.core.changes(state, step)  # type: ignore[attr-defined, no-any-return]

    def moves_from(self, state: Seated, cell: Cell) -> list[Move] | None:
        if not self.listed:
            return None
        return self.core.moves_from(state, cell)  # type: ignore[attr-defined, no-any-return]


@contextmanager
def _lifts_checked() -> Iterator[list[dict[Cell, str]]]:
    """The destinations shown for every piece lifted alone while the block runs, each checked
    against the candidates' changes on a fresh index, and shown with no step's changes asked
    of the rules core."""
    shown: list[dict[Cell, str]] = []
    kept = referee_module.guidance

    def checked(index: StepIndex, expected: Board, diff: Mapping[Cell, Piece],
                handled: Collection[Cell] = frozenset()) -> dict[Cell, str]:
        found = kept(index, expected, diff, handled)
        if len(diff) == 1 and lifted_pieces(expected, diff):
            listed, worked = (_Counted(index.rules, listed=flag) for flag in (True, False))
            fresh = [kept(StepIndex(rules, index.state, index.expected, index.presence),  # type: ignore[arg-type]
                          expected, diff, handled) for rules in (listed, worked)]
            assert fresh == [found, found], diff
            assert listed.asked == 0, diff
            shown.append(found)
        return found

    referee_module.guidance = checked  # type: ignore[assignment]
    try:
        yield shown
    finally:
        referee_module.guidance = kept


@pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])
def test_a_lifted_martians_destinations_come_from_its_moves_not_from_each_moves_changes(
        presence: bool) -> None:
    with _lifts_checked() as shown:
        report = _table("enceladus", 4, presence).play()
    assert report.over and not report.false_commits and not report.missed
    assert any(shown)  # Martians lifted alone, their destinations shown


class _Unprobed(StepIndex):
    """A step index that asks the rules core for every candidate of a slot at once."""

    def probed(self, touched: frozenset[Cell]) -> Iterator[Hashable]:
        return iter(())


class _Drawn:
    """A rules core that notes the ``touched`` cells of every candidates call read from with
    no ``within`` cells to narrow it."""

    def __init__(self, core: object) -> None:
        self.core, self.read = core, set[frozenset[Cell]]()

    def __getattr__(self, name: str) -> object:
        return getattr(self.core, name)

    def candidates(self, state: Seated, touched: frozenset[Cell],
                   within: frozenset[Cell] | None = None, distinct: bool = False
                   ) -> Iterator[Hashable]:
        if within is None:
            self.read.add(touched)
        yield from self.core.candidates(state, touched, within, distinct)  # type: ignore[attr-defined]


def _turns(seed: int, count: int) -> Iterator[Seated]:
    """The positions of a random two-player Enceladus game where the player to move can pay
    for a special action, ``count`` of them at most."""
    rules = load("enceladus").RULES
    rng = random.Random(seed)
    state = rules.new_game(2, seed, {})
    while count and rules.outcome(state) is None:
        steps = list(rules.legal_steps(state))
        if any(isinstance(s, Action) for s in steps):
            count -= 1
            yield state
        state = rules.apply(state, rng.choice(steps))


@pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])
def test_a_disc_on_swap_flowers_is_weighed_without_every_pair_of_flowers(presence: bool) -> None:
    rules = load("enceladus").RULES
    weighed = 0
    for state in (state for seed in (5, 6, 7, 8) for state in _turns(seed, 12)):
        expected = rules.board(state)
        disc = "occupied" if presence else f"D{rules.to_move(state)}"
        for slot in ("A7", "A8"):  # Swap flowers, Move a flower: thousands of uses each
            if expected[slot]:
                continue
            diff = {slot: disc}
            answers, drawn = [], _Drawn(rules)
            for kind, core in ((StepIndex, drawn), (_Unprobed, rules)):
                index = kind(core, state, expected, presence)
                done = index.completing(diff, frozenset(), distinct=True)
                answers.append((
                    index.explained(diff), done,
                    [index.extension(diff, frozenset(), s) is not None for s in done],
                    guidance(index, expected, diff)))
            assert answers[0] == answers[1], (slot, answers)
            assert answers[0][0]  # a disc on the slot is a step begun
            assert frozenset({slot}) not in drawn.read, slot  # the pairs were never listed
            weighed += 1
    assert weighed > 10


class _Wide:
    """A rules core whose candidates are not narrowed by the ``within`` cells."""

    def __init__(self, core: object) -> None:
        self.core = core

    def __getattr__(self, name: str) -> object:
        return getattr(self.core, name)

    def candidates(self, state: Seated, touched: frozenset[Cell],
                   within: frozenset[Cell] | None = None, distinct: bool = False
                   ) -> Iterator[Hashable]:
        return self.core.candidates(state, touched, None, distinct)  # type: ignore[attr-defined, no-any-return]


@contextmanager
def _gardeners_checked() -> Iterator[list[int]]:
    """While the block runs, every answer of ``StepIndex.completing`` checked against the
    one of candidates not narrowed by ``within``, and the destinations of every gardener
    lifted alone against the landings of the moves that explain the board, each worked out
    from its changes; the sizes of the destinations shown."""
    shown: list[int] = []
    completing, kept = StepIndex.completing, referee_module.guidance

    def completed(self: StepIndex, diff: Mapping[Cell, Piece],
                  handled: Collection[Cell] = frozenset(), *, distinct: bool = False,
                  tray: Mapping[str, int] | None = None) -> list[Hashable]:
        found = completing(self, diff, handled, distinct=distinct, tray=tray)
        wide = StepIndex(_Wide(self.rules), self.state, self.expected, self.presence)  # type: ignore[arg-type]
        assert found == completing(wide, diff, handled, distinct=distinct, tray=tray), diff
        return found

    def guided(index: StepIndex, expected: Board, diff: Mapping[Cell, Piece],
               handled: Collection[Cell] = frozenset()) -> dict[Cell, str]:
        found = kept(index, expected, diff, handled)
        lifted = lifted_pieces(expected, diff)
        if len(diff) == 1 and lifted:
            fresh = StepIndex(index.rules, index.state, index.expected, index.presence)
            landings = {cell: "dest" for s in index.rules.legal_steps(index.state)
                        if fresh.explains(s, diff)
                        for cell, piece in fresh.piece_changes(s).items()
                        if diff.get(cell) != piece and piece.partition("+")[0] in lifted}
            assert found == landings, diff
            shown.append(len(found))
        return found

    StepIndex.completing = completed  # type: ignore[method-assign]
    referee_module.guidance = guided  # type: ignore[assignment]
    try:
        yield shown
    finally:
        StepIndex.completing = completing  # type: ignore[method-assign]
        referee_module.guidance = kept


@pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])
@pytest.mark.parametrize("game", ["mars", "uranus"])
def test_a_gardeners_steps_narrowed_to_the_cells_handled_give_the_answers_of_all_of_them(
        game: str, presence: bool) -> None:
    with _gardeners_checked() as shown:
        report = _table(game, 3, presence).play()
    assert report.over and not report.false_commits and not report.missed
    assert any(shown)  # gardeners lifted alone, their landings shown


def _moves_changing_by_rule(state: enceladus.State, squares: frozenset[str]) -> list[Hashable]:
    """The normal moves among ``enceladus.candidates`` for the garden ``squares`` touched, by
    its rule: each square the Martian's own, a soliflower already, or one the move may change
    (its landing, its pick, a flower it leaves alone)."""
    cells = {enceladus.LAYOUT.index(name) for name in squares}
    lonely = set(enceladus._soliflowers(state.garden))
    return [
        enceladus._move_step(state, origin, to, pick)
        for origin, to, pick in enceladus._moves(state)
        if all(sq == origin or sq in lonely or enceladus._moved_on(state.garden, sq, to, pick)
               for sq in cells)
    ]


def test_the_moves_that_may_change_a_touched_square_are_worked_out_once_per_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # While a step is under way the referee asks for the candidates of the same touched
    # squares on every field update: which moves may change a square is kept per state.
    asked: list[int] = []
    kept = enceladus._moved_on

    def counted(*args: Any) -> bool:
        asked.append(args[1])
        return kept(*args)

    tried = 0
    for state in _turns(3, 6):
        name = enceladus.LAYOUT.__getitem__
        flowers = [n for n in enceladus.SQUARE_NAMES if state.garden[enceladus._CELL[n]] >= 0]
        moves = list(enceladus._moves(state))
        origin, to, pick = moves[len(moves) // 2]
        landing = {name(to)} if pick is None else {name(to), name(pick)}
        for touched in ({name(to)}, landing, {name(origin), name(to)}, {flowers[0], name(to)}):
            squares = frozenset(touched)
            expected = _moves_changing_by_rule(state, squares)
            monkeypatch.setattr(enceladus, "_moved_on", counted)
            first = [s for s in enceladus.candidates(state, squares)
                     if isinstance(s, enceladus.Move)]
            asked.clear()
            again = [s for s in enceladus.candidates(state, squares)
                     if isinstance(s, enceladus.Move)]
            monkeypatch.setattr(enceladus, "_moved_on", kept)
            assert first == again == expected, (state, touched)
            assert asked == [], touched  # nothing asked again of the same state
            tried += bool(expected)
    assert tried > 12


def test_a_screen_of_a_step_under_way_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Screen copies every cell of the board: built once, not built and then replaced.
    t = _table("enceladus", 2, False)
    t.start()
    referee = t.referee
    while referee.state.phase is not enceladus.Phase.TURN:
        assert t.play_step()
    martian = next(c for c, p in referee.expected.items() if p.startswith("M"))
    built: list[Screen] = []
    kept = Screen.__post_init__

    def counted(self: Screen) -> None:
        built.append(self)
        kept(self)

    monkeypatch.setattr(Screen, "__post_init__", counted)
    referee.observed[martian] = EMPTY  # lifted
    screen = referee._screen(t.now, diff={martian: EMPTY}, guide=True)
    assert built == [screen]
    assert screen.message.endswith("go on") and screen.cells[martian] == EMPTY


def test_a_disc_set_down_after_its_martian_moved_weighs_only_the_next_slots_steps() -> None:
    # A presence board: the Martian moved for a diagonal, jump or swap Martian, then the disc
    # set on the slot.  Whether the disc may be on its way to the slot beside is asked of that
    # slot's steps alone, never of every move the Martian lifted might have made.
    rules = load("enceladus").RULES
    checked = 0
    for state in (state for seed in (5, 6, 7) for state in _turns(seed, 10)):
        steps = [s for s in rules.legal_steps(state)
                 if isinstance(s, Action) and s.name in ("diagonal", "jump", "swap_martian")]
        if not steps:
            continue
        step = steps[len(steps) // 2]
        core = _Counted(rules)
        referee = Referee(core, state, "enceladus", RefereeSettings(presence=True))  # type: ignore[arg-type]
        changes = rules.changes(state, step)
        slot = next(c for c in changes if off_garden(c))
        after = sensed_board({**referee.expected, **changes})
        diff = board_diff(referee.sensed_expected, after, frozenset())
        referee.last_put = (slot, EMPTY)
        answer = referee._in_transit(diff, [step])
        weighed = [s for s in core.changed if s != step]
        assert all(set(rules.changes(state, s)) & set(neighbours(slot)) for s in weighed), slot
        assert answer == _in_transit_from_scratch(referee, diff, [step])
        checked += 1
    assert checked > 5


def test_a_flower_lifted_that_dozens_of_steps_may_move_is_guided_without_their_changes() -> None:
    # More than GUIDED steps explain the flower lifted: no cell is singled out, which counting
    # them tells without the rules core working out the changes of any.
    rules = load("enceladus").RULES
    tried = 0
    for state in (state for seed in (5, 6) for state in _turns(seed, 6)):
        expected = rules.board(state)
        for cell in [c for c, p in expected.items() if p in state.options.colours][:6]:
            diff = {cell: EMPTY}
            core = _Counted(rules)
            index = StepIndex(core, state, expected)
            if len(index.candidates(frozenset(diff), distinct=True).all()) <= GUIDED:
                continue
            assert guidance(StepIndex(core, state, expected), expected, diff) == {}
            assert core.changed == [], cell
            tried += 1
    assert tried > 5


def test_a_peak_put_on_an_empty_square_is_explained_without_every_flower_that_could_move_there(
) -> None:
    # Identity board: a peak set down first on the empty square it is moved to.  Every flower
    # of the garden could be moved there too (Move a flower), but a step that brings the peak
    # from a square showing one is found among the few steps within those squares, read
    # before any of those flowers' moves is worked out; the answer is the one of every
    # candidate.
    rules = load("enceladus").RULES
    tried = 0
    for state in (state for seed in (5, 6, 7) for state in _turns(seed, 8)):
        expected = rules.board(state)
        moved = [s for s in rules.legal_steps(state)
                 if isinstance(s, Action) and s.name == "move_peak"]
        if not moved or expected["A8"]:  # the flowers' moves to the square are candidates too
            continue
        diff = {moved[0].cells[1]: "peak"}
        core = _Counted(rules)
        assert StepIndex(core, state, expected).explained(diff)
        flowers = len(StepIndex(rules, state, expected).candidates(frozenset(diff)).all())
        if flowers < READ_FIRST + 20:
            continue
        assert len(core.changed) <= 8, (diff, core.changed)
        tried += 1
    assert tried > 5


def test_the_labels_of_a_tube_question_are_not_built_again_for_each_question() -> None:
    # A disc on the Tube slot asks among 100-180 payments and draws, labelling each (and each
    # again on every press of Select): the rules core builds a step's choice path once.
    rules = load("enceladus").RULES
    state = next(_turns(5, 1))
    colours = state.options.colours
    for step in (Action("tube", pay, (), drawn, None) for pay in colours
                 for drawn in combinations_with_replacement(colours, 3)):
        path = rules.choice_path(state, step)
        assert path[0] == f"pay {step.pay}" and len(path) == 4
        assert rules.choice_path(state, Action(*step)) is path, step


def test_the_changes_of_an_action_candidate_need_no_legality_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The referee asks the changes of each action the rules core's candidates give for a
    # touched square (a peak put on an empty square: every flower Move a flower could take
    # there, 70-80 late in a game).  Each is legal, so none runs the legality check again;
    # the changes are still the diff of the boards before and after the step.
    rules = load("enceladus").RULES
    checked = []
    uses = enceladus._uses

    def counted(*args: Any) -> Any:
        checked.append(args)
        return uses(*args)

    weighed = 0
    for state in (state for seed in (5, 6, 7) for state in _turns(seed, 8)):
        expected = rules.board(state)
        for cell in [c for c in expected if enceladus._CELL[c] < 100][::7]:
            steps = [s for s in rules.candidates(state, frozenset({cell}))
                     if isinstance(s, Action)]
            monkeypatch.setattr(enceladus, "_uses", counted)
            found = [rules.changes(state, s) for s in steps]
            monkeypatch.setattr(enceladus, "_uses", uses)
            assert checked == [], cell
            for step, changes in zip(steps[::5], found[::5], strict=True):
                after = rules.board(rules.apply(state, step))
                assert changes == {c: p for c, p in after.items() if expected[c] != p}, step
            weighed += len(steps)
    assert weighed > 1000


def test_steps_asked_whether_they_lead_to_one_state_are_advanced_without_their_end_tests(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A disc on the Tube slot of a presence board completes every payment and draw; whether
    # they lead to one state is asked of each advanced (GameRules.advance), never through the
    # end test of each, a search; what is committed is what the players made.
    rules = load("enceladus").RULES
    applied: list[Hashable] = []
    advanced: list[Hashable] = []

    class Core:
        def __getattr__(self, name: str) -> object:
            return getattr(rules, name)

        def apply(self, state: Seated, step: Hashable) -> Seated:
            applied.append(step)
            return rules.apply(state, step)

        def advance(self, state: Seated, step: Hashable) -> Seated:
            advanced.append(step)
            return rules.advance(state, step)

    asked: list[int] = []
    one_state = Referee._one_state

    def watched(self: Referee, steps: Sequence[Hashable]) -> bool:
        before = len(applied)
        found = one_state(self, steps)
        asked.append(len(applied) - before)
        return found

    monkeypatch.setattr(Referee, "_one_state", watched)
    settings = RefereeSettings(presence=True)
    table = VirtualTable(Core(), rules.new_game(2, 1, {}), "enceladus", seed=1,  # type: ignore[arg-type]
                         noise=HANDS, settings=settings)
    report = table.play()
    assert report.over and not report.false_commits and not report.missed
    assert report.questions and len(advanced) > 1
    assert asked and not any(asked)


@pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])
def test_the_board_after_a_commit_is_the_board_before_with_the_steps_changes(
        presence: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every cell of the board is not worked out again on a commit: the step's changes are
    # laid on the board before; the board is the one the rules core gives for the state.
    rules = load("enceladus").RULES
    boards: list[Seated] = []

    class Core:
        def __getattr__(self, name: str) -> object:
            return getattr(rules, name)

        def board(self, state: Seated) -> dict[Cell, Piece]:
            boards.append(state)
            return rules.board(state)

    checked: list[int] = []
    commit = Referee._commit

    def watched(self: Referee, step: Hashable, now: float, **kwargs: Any) -> list[Any]:
        effects = commit(self, step, now, **kwargs)
        if self.state is not None:
            expected = rules.board(self.state)
            assert self.expected == expected
            assert self.sensed_expected == (sensed_board(expected) if presence else expected)
            checked.append(1)
        return effects

    monkeypatch.setattr(Referee, "_commit", watched)
    table = VirtualTable(Core(), rules.new_game(2, 3, {}), "enceladus",  # type: ignore[arg-type]
                         seed=3, noise=HANDS, settings=RefereeSettings(presence=presence))
    report = table.play()
    assert report.over and not report.false_commits and not report.missed
    assert len(checked) > 20 and len(boards) <= 2 + report.corrections
