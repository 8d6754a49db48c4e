"""Virtual Gardens of Uranus tables: the card-reader players' operations, whole noisy games in
virtual time (every step committed exactly once, no false commit, no missed step, no alarm on
the matrix; people's hands, and players who stop to think mid-step), a table
without a reader, and one game in real time through the pty, the serial link and the GPIO pins.

200 simulated noisy games across the boards and 2-5 players (the slow
test; ``pytest -m slow``), ten of them in the default run.
"""

from __future__ import annotations

import random
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from companion.board import protocol
from companion.display import make_device
from companion.referee.referee import RefereeSettings
from companion.referee.uranus import CardTable, load_catalogue
from companion.rules.uranus import BOARDS, RULES, Claim, Move, Reveal, Score
from companion.sim import uranus as sim_uranus
from companion.sim.demo import demo_config
from companion.sim.harness import GameReport, VirtualTable
from companion.sim.perform import PEOPLE, THINKING, Noise, Press, Signal
from companion.sim.table import seat

CATALOGUE = load_catalogue()
CARD = {mission: card for card, mission in CATALOGUE.items()}


def game(seed: int, cards: str = "reader", noise: Noise = PEOPLE,
         presence: bool = False) -> GameReport:
    """One noisy game in virtual time; the board and the player count follow from ``seed``;
    ``presence``: the board senses only occupancy, with the default settle time (a gardener
    lifted off its flower is not seen to leave, so one slid over an empty hex at a person's
    pace, up to 0.35 s a hex, is told from a flower set there by the settle time alone)."""
    board = sorted(BOARDS)[seed % 3]
    players = 2 + seed % 4
    state = RULES.new_game(players, seed, {"board": board})
    settings = RefereeSettings(presence=True) if presence else RefereeSettings(settle_s=0.25)
    table = VirtualTable(RULES, state, f"uranus-{board}", seed=seed, noise=noise,
                         settings=settings)
    table.referee.extensions = [CardTable(CATALOGUE, cards=cards)]
    return table.play()


def check(reports: list[GameReport]) -> dict[str, int]:
    """Totals over ``reports``, after checking each game committed exactly what was played."""
    for report in reports:
        faults = (report.false_alarms, report.missed, report.false_commits)
        assert faults == (0, 0, 0), f"seed {report.seed}: (false alarms, missed, false commits)"
        assert report.committed == report.performed and report.over, report.seed
    return {
        "games": len(reports),
        "steps": sum(len(r.performed) for r in reports),
        "questions": sum(r.questions for r in reports),
        "corrections": sum(r.corrections for r in reports),
        "reached in": sum(r.reached_in for r in reports),
        "scores": sum(s.startswith("score:") for r in reports for s in r.committed),
        "shown at the end": sum(s.startswith("show:") for r in reports for s in r.committed),
    }


# -- the players' hands ---------------------------------------------------------------------


def test_a_card_scored_is_held_to_the_reader() -> None:
    state = RULES.new_game(2, 1, {})
    ops = sim_uranus.chance_ops(state, Score("triangle:yellow", 2), random.Random(1))
    assert len(ops) == 1 and isinstance(ops[0], Signal)
    assert ops[0].message == protocol.Card(seq=0, card_id=CARD["triangle:yellow"])


@pytest.mark.parametrize(("step", "mission"), [(Reveal("groups:red"), "groups:red"),
                                                (Claim(2), "hexagon")])
def test_cards_shown_at_the_end_and_the_hexagon_go_to_the_reader(step: Reveal | Claim,
                                                                 mission: str) -> None:
    ops = sim_uranus.chance_ops(RULES.new_game(2, 1, {}), step, random.Random(1))
    assert [op.message for op in ops if isinstance(op, Signal)] == [
        protocol.Card(seq=0, card_id=CARD[mission])]


def test_without_a_reader_ok_opens_the_menu_and_moves_need_nothing() -> None:
    state = RULES.new_game(2, 1, {})
    rng = random.Random(1)
    ops = sim_uranus.card_ops(state, Score("groups:red", 1), rng, source="buttons",
                              catalogue=CATALOGUE)
    assert [op.name for op in ops if isinstance(op, Press)] == ["ok"]
    assert sim_uranus.card_ops(state, Move((0, 0), "red"), rng, source="reader",
                               catalogue=CATALOGUE) == []
    with pytest.raises(ValueError, match="unknown card source"):
        sim_uranus.card_ops(state, Score("groups:red", 1), rng, source="camera",
                            catalogue=CATALOGUE)


# -- whole games in virtual time ------------------------------------------------------------


def test_ten_noisy_games_every_step_committed_once() -> None:
    totals = check([game(seed) for seed in range(1, 11)])
    assert totals["scores"] > 0 and totals["shown at the end"] > 0 and totals["questions"] > 0


def test_ten_games_of_players_who_stop_to_think_mid_step() -> None:
    check([game(seed, noise=THINKING) for seed in range(1, 11)])


def test_ten_noisy_games_on_a_presence_board() -> None:
    check([game(seed, presence=True) for seed in range(1, 11)])


def test_a_flower_set_on_a_wrong_hex_just_after_a_step_is_not_the_next_players_step() -> None:
    # Games 27 and 162: the last step committed while its gardener was still in the hand,
    # the player sets a flower on a wrong hex, then takes it away; on a presence board that
    # one hex looked like the next player's whole step.
    check([game(seed, presence=True) for seed in (27, 162)])


def test_ten_games_on_a_presence_board_of_players_who_stop_to_think() -> None:
    check([game(seed, noise=THINKING, presence=True) for seed in range(1, 11)])


def test_a_table_without_a_reader_plays_with_the_card_menu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def buttons(state: object, step: object, rng: random.Random) -> list[object]:
        return sim_uranus.card_ops(state, step, rng, source="buttons",  # type: ignore[arg-type]
                                   catalogue=CATALOGUE)

    monkeypatch.setattr(sim_uranus, "chance_ops", buttons)
    totals = check([game(seed, cards="buttons") for seed in range(21, 24)])
    assert totals["questions"] >= totals["scores"] + totals["shown at the end"]


@pytest.mark.slow
def test_two_hundred_noisy_games_across_the_boards_and_player_counts() -> None:
    started = time.monotonic()
    totals = check([game(seed) for seed in range(1, 201)])
    print(f"\n200 Uranus games: {totals}, {time.monotonic() - started:.1f} s")


@pytest.mark.slow
@pytest.mark.parametrize(("noise", "presence"), [(THINKING, False), (PEOPLE, True),
                                                 (THINKING, True)],
                         ids=["thinking", "presence", "thinking-on-presence"])
def test_two_hundred_games_of_people_who_think_or_on_a_presence_board(
        noise: Noise, presence: bool) -> None:
    totals = check([game(seed, noise=noise, presence=presence) for seed in range(1, 201)])
    print(f"\n200 Uranus games: {totals}, {totals['questions'] / 200:.1f} questions a game")


# -- one game in real time: pty, pyserial, gpiozero mock pins, the service -----------------


def test_a_whole_game_through_the_pty_with_the_card_reader(tmp_path: Path) -> None:
    seed, players, board = 7, 5, "hexagonal"  # five hands: few cards in the decks, a short game
    config = demo_config("uranus", players, seed, board, tmp_path / "journal")
    with ExitStack() as stack:
        device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
        seated = seat(config, stack, device=device, speed=6.0)
        service, table = seated.service, seated.players
        service.stop_when_over = True
        loop = threading.Thread(target=service.run, daemon=True)
        loop.start()
        table.start()
        loop.join(120)
        table.join(10)
        assert table.error is None
        assert service.outcome is not None
        steps = [RULES.format_step(before, step) for before, step in service.referee.history]
        assert len(steps) == table.steps
        assert any(s.startswith("score:") for s in steps)
        assert any(s.startswith("show:") for s in steps)
