"""The game journal: durable appends, torn last lines, versions, undo, resume (journal.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from companion import journal
from companion.errors import JournalBusyError, JournalError
from companion.rules import load

MARS = load("mars").RULES


def _header(state: object) -> dict[str, object]:
    return {
        "game": "mars",
        "players": 2,
        "seed": 3,
        "options": {},
        "setup": MARS.format_position(state),
    }


def _play(state: object, count: int) -> list[tuple[object, object]]:
    played = []
    for _ in range(count):
        step = next(iter(MARS.legal_steps(state)))
        played.append((state, step))
        state = MARS.apply(state, step)
    return played


def test_a_game_reads_back_step_by_step(tmp_path: Path) -> None:
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    played = _play(setup, 4)
    for number, (before, step) in enumerate(played, 1):
        record.step(number, MARS.to_move(before), MARS.format_step(before, step))
    record.close()

    back = journal.read(record.path)
    assert back.header["seed"] == 3 and back.header["journal"] == journal.VERSION
    replayed = list(back.replay(MARS))
    assert [(b, s) for b, s, _ in replayed] == played
    assert back.over is None and not back.dropped_torn_line


def test_an_undone_step_is_not_replayed(tmp_path: Path) -> None:
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    played = _play(setup, 2)
    for number, (before, step) in enumerate(played, 1):
        record.step(number, 1, MARS.format_step(before, step))
    record.undo(2)
    record.close()
    assert len(journal.read(record.path).steps) == 1


def test_a_torn_last_line_is_dropped_with_a_warning_and_cut_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    ((before, step),) = _play(setup, 1)
    record.step(1, 1, MARS.format_step(before, step))
    record.close()
    whole = record.path.read_bytes()
    record.path.write_bytes(whole + b'{"n": 2, "player": 2, "st')  # the power went here

    with caplog.at_level(logging.WARNING, logger="companion.journal"):
        back = journal.read(record.path)
    assert back.dropped_torn_line and len(back.steps) == 1
    assert "cut off" in caplog.text
    assert record.path.read_bytes() == whole  # appends go on from a clean line


def test_a_journal_of_a_newer_version_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"journal": journal.VERSION + 1, "game": "mars"}) + "\n")
    with pytest.raises(JournalError, match="newer companion"):
        journal.read(path)


def test_a_broken_line_in_the_middle_is_an_error_not_a_guess(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"journal": 1, "game": "mars"}\nnot json\n{"n": 1, "step": "x"}\n')
    with pytest.raises(JournalError, match="line 2"):
        journal.read(path)


def test_latest_unfinished_skips_finished_games(tmp_path: Path) -> None:
    setup = MARS.new_game(2, 3, {})
    done = journal.Journal.create(tmp_path, _header(setup))
    done.append({"over": {"winners": [1], "termination": "test", "ranking": []}})
    done.close()
    assert journal.latest_unfinished(tmp_path) is None
    (tmp_path / "20990101-000000-mars.jsonl").write_text(
        json.dumps({"journal": 1, **_header(setup)}) + "\n"
    )
    assert journal.latest_unfinished(tmp_path) == tmp_path / "20990101-000000-mars.jsonl"


def test_a_full_device_is_a_journal_error_not_a_crash() -> None:
    record = journal.Journal(Path("/dev/full"))  # every write fails with ENOSPC, as on a full card
    with pytest.raises(JournalError, match="could not be written: No space left"):
        record.step(1, 1, "roll:3")
    record.close()


def test_a_failed_sync_leaves_no_half_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    size = record.path.stat().st_size

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal.os, "fsync", no_space)
    with pytest.raises(JournalError, match="No space left"):
        record.step(1, 1, "roll:3")
    assert record.path.stat().st_size == size


def test_lines_a_full_card_refused_are_written_in_order_once_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    played = _play(setup, 3)
    texts = [MARS.format_step(before, step) for before, step in played]
    real_write = journal.os.write
    full = True

    def maybe_full(fd: int, data: bytes) -> int:
        if full:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(journal.os, "write", maybe_full)
    for number, text in enumerate(texts[:2], 1):
        with pytest.raises(JournalError, match="No space left"):
            record.step(number, 1, text)
    assert record.behind == 2 and len(journal.read(record.path).steps) == 0
    full = False
    record.step(3, 1, texts[2])
    assert record.behind == 0
    assert [e["step"] for e in journal.read(record.path).steps] == texts
    record.close()


def test_a_header_the_full_card_refused_waits_for_the_first_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = MARS.new_game(2, 3, {})
    real_write = journal.os.write
    monkeypatch.setattr(
        journal.os,
        "write",
        lambda fd, data: (_ for _ in ()).throw(OSError(28, "No space left on device")),
    )
    record = journal.Journal.create(tmp_path, _header(setup))
    assert record.behind == 1 and record.path.read_bytes() == b""
    assert journal.latest_unfinished(tmp_path) is None  # an empty file is no game
    monkeypatch.setattr(journal.os, "write", real_write)
    ((before, step),) = _play(setup, 1)
    record.step(1, 1, MARS.format_step(before, step))
    back = journal.read(record.path)
    assert back.header["seed"] == 3 and len(back.steps) == 1
    record.close()


def test_one_companion_at_a_time_refs_with_a_journal_folder(tmp_path: Path) -> None:
    first = journal.FolderLock(tmp_path)
    with pytest.raises(JournalBusyError, match="already refereeing"):
        journal.FolderLock(tmp_path)
    first.close()
    journal.FolderLock(tmp_path).close()  # free again once the first one stops


def test_a_file_where_the_journal_folder_should_be_is_named(tmp_path: Path) -> None:
    (tmp_path / "games").write_text("")
    with pytest.raises(JournalError, match="is a file, not a folder"):
        journal.FolderLock(tmp_path / "games")


def test_a_file_that_is_not_a_journal_is_named_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(JournalError, match="notes.txt is not a game journal"):
        journal.read(path)
    assert path.read_text() == "hello"
