"""The one debounce of the referee's field updates, the GPIO switch matrix's scans and the
buttons' edges: a new reading counts once it has lasted the debounce time; a glitch is
dropped."""

from __future__ import annotations

from companion.board.debounce import Debounce

HOLD = 0.02  # seconds


def test_a_reading_counts_once_it_has_lasted_the_debounce_time() -> None:
    debounce: Debounce[str, str] = Debounce(HOLD)
    assert not debounce
    debounce.read("a1", "M1", "", 1.0)
    assert debounce.due(1.0 + HOLD / 2) == [] and debounce.next_at() == 1.0 + HOLD
    assert len(debounce) == 1
    assert debounce.due(1.0 + HOLD) == [("a1", "M1", 1.0)]
    assert debounce.due(2.0) == [] and debounce.next_at() is None and not debounce


def test_a_glitch_back_to_the_settled_reading_is_dropped() -> None:
    debounce: Debounce[str, str] = Debounce(HOLD)
    debounce.read("a1", "M1", "", 1.0)
    debounce.read("a1", "", "", 1.003)
    assert debounce.due(2.0) == [] and debounce.next_at() is None


def test_the_same_reading_again_keeps_its_start_and_another_one_starts_anew() -> None:
    debounce: Debounce[int, str] = Debounce(HOLD)
    debounce.read(0, "occupied", "", 1.0)
    debounce.read(0, "occupied", "", 1.01)  # scanned again: still the same reading
    debounce.read(1, "occupied", "", 1.0)
    debounce.read(1, "M2", "", 1.01)  # another reading: its own wait
    assert debounce.due(1.0 + HOLD) == [(0, "occupied", 1.0)]
    assert debounce.next_at() == 1.01 + HOLD


def test_clear_forgets_every_reading_waiting() -> None:
    debounce: Debounce[str, str] = Debounce(HOLD)
    debounce.read("a1", "M1", "", 1.0)
    debounce.clear()
    assert debounce.due(2.0) == [] and debounce.next_at() is None
