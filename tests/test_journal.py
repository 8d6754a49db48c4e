"""The game journal: durable appends, checks, damage and torn last lines, versions, undo, and
the daemon's resume from a damaged journal (journal.py, service.new_or_resumed_game)."""

from __future__ import annotations

import json
import logging
import zlib
from pathlib import Path

import pytest

from companion import journal
from companion.config import Config, GameConfig, JournalConfig
from companion.daemon.service import new_or_resumed_game
from companion.errors import JournalBusyError, JournalDamagedError, JournalError
from companion.rules import load

MARS = load("mars").RULES
ENCELADUS = load("enceladus").RULES
SEED = 11


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


def test_a_journal_of_a_newer_version_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"journal": journal.VERSION + 1, "game": "mars"}) + "\n")
    with pytest.raises(JournalError, match="newer companion"):
        journal.read(path)


def test_the_game_in_progress_is_the_one_the_folders_pointer_names(tmp_path: Path) -> None:
    setup = MARS.new_game(2, 3, {})
    done = journal.Journal.create(tmp_path, _header(setup))
    assert journal.latest_unfinished(tmp_path) == done.path
    assert (tmp_path / journal.POINTER).read_text() == f"{done.path.name}\n"
    done.append({"over": {"winners": [1], "termination": "test", "ranking": []}})
    done.close()
    assert (tmp_path / journal.POINTER).read_text() == "\n"  # no game in progress
    assert journal.latest_unfinished(tmp_path) is None
    # An unfinished journal that no pointer names is not the game in progress...
    stray = tmp_path / "20990101-000000-mars.jsonl"
    stray.write_text(json.dumps({"journal": 1, **_header(setup)}) + "\n")
    assert journal.latest_unfinished(tmp_path) is None
    # ...but a folder an older companion kept, without a pointer, is scanned once for it.
    (tmp_path / journal.POINTER).unlink()
    assert journal.latest_unfinished(tmp_path) == stray
    assert (tmp_path / journal.POINTER).read_text() == f"{stray.name}\n"


def test_an_undo_after_the_end_line_makes_the_game_in_progress_again(tmp_path: Path) -> None:
    """The step that ended the game taken back: the record has no end, and the folder's
    pointer names the journal again, so that a restart resumes the game."""
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    (before, step), = _play(setup, 1)
    record.step(1, 1, MARS.format_step(before, step))
    record.append({"over": {"winners": [1], "termination": "test", "ranking": []}})
    assert journal.read(record.path).over is not None
    assert journal.latest_unfinished(tmp_path) is None
    record.undo(1)
    record.close()
    assert journal.read(record.path).over is None
    assert journal.latest_unfinished(tmp_path) == record.path
    # a journal going on from such a record also knows the end is taken back
    again = journal.Journal.continuing(journal.read(record.path), fsync=False)
    again.step(1, 1, MARS.format_step(before, step))
    again.append({"over": {"winners": [1], "termination": "test", "ranking": []}})
    again.undo(1)
    again.close()
    assert journal.latest_unfinished(tmp_path) == record.path


def test_a_step_corrected_by_hand_is_one_write_of_its_undo_and_the_step_in_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    first, other = list(MARS.legal_steps(setup))[:2]
    record.step(1, 1, MARS.format_step(setup, first))
    writes: list[bytes] = []
    real_write = journal.os.write

    def counted(fd: int, data: bytes) -> int:
        writes.append(data)
        return real_write(fd, data)

    monkeypatch.setattr(journal.os, "write", counted)
    record.correct(1, 1, MARS.format_step(setup, other))
    record.close()
    assert len(writes) == 1 and writes[0].count(b"\n") == 2  # a kill leaves both or neither
    back = journal.read(record.path)
    assert [line.entry.get("undo") for line in back.lines[1:]] == [None, 1, None]
    assert [(b, s) for b, s, _ in back.replay(MARS)] == [(setup, other)]


def test_a_full_device_is_a_journal_error_not_a_crash() -> None:
    record = journal.Journal(Path("/dev/full"))  # every write fails with ENOSPC, as on a full card
    with pytest.raises(JournalError, match="could not be written: the disk is full"):
        record.step(1, 1, "roll:3")
    record.close()


def test_a_failed_sync_leaves_no_half_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = MARS.new_game(2, 3, {})
    record = journal.Journal.create(tmp_path, _header(setup))
    size = record.path.stat().st_size

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal.os, "fsync", no_space)
    with pytest.raises(JournalError, match="could not be written: the disk is full"):
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
        with pytest.raises(JournalError, match="could not be written: the disk is full"):
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
    with pytest.raises(JournalDamagedError, match="notes.txt is not a game journal"):
        journal.read(path)
    assert path.read_text() == "hello"


# --------------------------------------------------------------------------- checks and damage


def test_every_line_carries_its_place_and_a_check_chained_to_the_line_before(
    tmp_path: Path,
) -> None:
    path, _ = _enceladus_journal(tmp_path, 2)
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["seq"] for e in entries] == [1, 2, 3] and entries[0]["journal"] == 2
    crc = 0
    for entry in entries:
        written = entry.pop("crc")
        crc = zlib.crc32(json.dumps(entry, separators=(",", ":"), sort_keys=True).encode(), crc)
        assert written == f"{crc:08x}"


def _enceladus_journal(folder: Path, steps: int = 6, *,
                       illegal_at: int = 0) -> tuple[Path, list[object]]:
    """A journal of ``steps`` steps of a seeded game (step ``illegal_at`` written as a step the
    rules refuse, with a good check: a journal of another rules version) and the states."""
    import random

    from companion.sim.players import choose_step

    state = ENCELADUS.new_game(2, SEED, {})
    record = journal.Journal.create(folder, {
        "game": "enceladus", "layout": "enceladus", "players": 2, "seed": SEED, "options": {},
        "setup": ENCELADUS.format_position(state)}, fsync=False)
    rng, states = random.Random(SEED), [state]
    for number in range(1, steps + 1):
        step = choose_step(ENCELADUS, state, rng)
        text = "a1/a2" if number == illegal_at else ENCELADUS.format_step(state, step)
        record.step(number, ENCELADUS.to_move(state), text)
        state = ENCELADUS.apply(state, step)
        states.append(state)
    record.close()
    return record.path, states


def _another_last_step(lines: list[str], states: list[object]) -> list[str]:
    """The last step line rewritten as another legal step, its check left as it was."""
    before, after = states[-2], states[-1]
    other = next(s for s in ENCELADUS.legal_steps(before) if ENCELADUS.apply(before, s) != after)
    entry = json.loads(lines[-1])
    entry["step"] = ENCELADUS.format_step(before, other)
    return [*lines[:-1], json.dumps(entry, separators=(",", ":"), sort_keys=True)]


# kind: (how the lines of a six-step journal are damaged, the damaged line, why, resumed after)
DAMAGE = {
    "garbage": (lambda lines, _: [*lines[:4], "%$#@!", *lines[5:]],
                5, "not a journal entry", 3),
    "truncated line": (lambda lines, _: [*lines[:4], lines[4][:30], *lines[5:]],
                       5, "not a journal entry", 3),
    "deleted line": (lambda lines, _: [*lines[:4], *lines[5:]], 5, "out of sequence", 3),
    "duplicated line": (lambda lines, _: [*lines[:5], lines[4], *lines[5:]],
                        6, "out of sequence", 4),
    "reordered lines": (lambda lines, _: [*lines[:4], lines[5], lines[4], *lines[6:]],
                        5, "out of sequence", 3),
    "a changed step": (lambda lines, _: [*lines[:4], lines[4].replace('"n":4', '"n":5'),
                                         *lines[5:]], 5, "checksum", 3),
    "the last step replaced by another legal one": (_another_last_step, 7, "checksum", 5),
}


def _resume(folder: Path) -> object:
    config = Config(game=GameConfig(name="enceladus", seed=SEED),
                    journal=JournalConfig(directory=str(folder), fsync=False))
    start = new_or_resumed_game(config, ENCELADUS, folder, fsync=False)
    return start


@pytest.mark.parametrize("lost", ["missing", "empty"])
def test_a_game_in_progress_whose_journal_is_lost_is_said_on_the_matrix(
    tmp_path: Path, lost: str
) -> None:
    """The pointer names the game in progress, but its journal is gone or was never
    written: a new game starts, and the players are told why theirs did not resume."""
    path, _ = _enceladus_journal(tmp_path)
    if lost == "missing":
        path.unlink()
    else:
        path.write_bytes(b"")
    start = _resume(tmp_path)
    assert not start.resumed  # type: ignore[attr-defined]
    assert start.note == f"Journal of the last game {lost}: a new game starts"  # type: ignore[attr-defined]


def test_an_empty_pointer_file_is_no_pointer_and_the_game_is_found(tmp_path: Path) -> None:
    """The companion writes its pointer as a line (empty once a game has ended); a file with
    nothing in it was never written, and the folder is looked through for the game."""
    path, states = _enceladus_journal(tmp_path)
    (tmp_path / journal.POINTER).write_bytes(b"")
    start = _resume(tmp_path)
    assert start.resumed and start.journal.path == path  # type: ignore[attr-defined]
    assert start.state == states[6]  # type: ignore[attr-defined]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_journal_resumes_after_its_last_good_line_and_is_kept(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    damage, line, reason, after = DAMAGE[kind]
    path, states = _enceladus_journal(tmp_path)
    lines = path.read_text().splitlines()
    damaged = "\n".join(damage(lines, states)) + "\n"
    path.write_text(damaged)

    with caplog.at_level(logging.INFO, logger="companion"):
        start = _resume(tmp_path)
    assert start.resumed and len(start.history) == after and start.state == states[after]
    kept = path.with_name(path.name + ".damaged")
    assert _warnings(caplog) == [
        f"journal {path.name} is damaged at line {line} ({reason}); the game resumes after "
        f"step {after}; the damaged file is kept as {kept.name}"]
    assert start.note == f"Journal damaged at line {line}: the game resumes after step {after}"
    assert kept.read_text() == damaged  # kept whole, beside the journal
    assert path.read_text() == "\n".join(damaged.splitlines()[:line - 1]) + "\n"
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == [path.name]  # no new game


def test_a_step_the_rules_refuse_is_damage_even_with_a_good_check(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, states = _enceladus_journal(tmp_path, illegal_at=4)
    with caplog.at_level(logging.INFO, logger="companion"):
        start = _resume(tmp_path)
    assert start.resumed and len(start.history) == 3 and start.state == states[3]
    assert _warnings(caplog) == [
        f"journal {path.name} is damaged at line 5 (illegal step 'a1/a2'); the game resumes "
        f"after step 3; the damaged file is kept as {path.name}.damaged"]


@pytest.mark.parametrize("entry", [
    {"hint": 10**30, "n": 3}, {"hint": 0, "n": 3}, {"dealt": 3, "card": "U17"},
    {"step": "roll:3", "n": 3, "player": 7},
])
def test_a_line_naming_a_player_the_game_has_not_is_damage(
    entry: dict[str, object], tmp_path: Path
) -> None:
    path, _ = _enceladus_journal(tmp_path, 2)
    record = journal.Journal.continuing(journal.read(path), fsync=False)
    record.append(entry)  # with a good check: written so, not damaged since
    record.close()
    back = journal.read(path)
    player = next(v for k, v in entry.items() if k in ("hint", "dealt", "player"))
    assert back.damage == journal.Damage(4, f"no player {player} in a game of 2")
    assert back.hints == {} and len(back.lines) == 3


@pytest.mark.parametrize("over", [
    {}, {"winners": "1", "termination": "test", "ranking": []},
    {"winners": [1], "termination": "test", "ranking": [[1, "27 pts"]]},
])
def test_an_end_line_without_winners_termination_and_ranking_is_damage(
    over: dict[str, object], tmp_path: Path
) -> None:
    path, _ = _enceladus_journal(tmp_path, 2)
    record = journal.Journal.continuing(journal.read(path), fsync=False)
    record.append({"over": over})  # with a good check: written so, not damaged since
    record.close()
    back = journal.read(path)
    assert back.damage == journal.Damage(4, "not a journal entry") and back.over is None
    assert len(back.lines) == 3  # a game resumed after its last step, not a finished one


def test_a_setup_that_is_not_text_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "20990101-000000-mars.jsonl"
    path.write_text(json.dumps({"journal": 1, **_header(MARS.new_game(2, 3, {})),
                                "setup": 7}) + "\n")
    with pytest.raises(JournalError, match=r"the setup cannot be read: it is not text$"):
        journal.read(path).checked(MARS)


def test_a_resumed_damaged_journal_goes_on_whole(tmp_path: Path) -> None:
    path, states = _enceladus_journal(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:4], *lines[5:]]) + "\n")  # line 5 (step 4) deleted
    start = _resume(tmp_path)
    assert start.journal is not None and len(start.history) == 3
    before = states[3]
    step = next(iter(ENCELADUS.legal_steps(before)))
    start.journal.step(4, ENCELADUS.to_move(before), ENCELADUS.format_step(before, step))
    start.journal.close()
    back = journal.read(path).checked(ENCELADUS)
    assert back.damage is None and [e["n"] for e in back.steps] == [1, 2, 3, 4]


def test_a_damaged_header_is_kept_aside_and_a_new_game_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _ = _enceladus_journal(tmp_path)
    damaged = path.read_text().replace('"seed":11', '"seed":12', 1)
    path.write_text(damaged)
    with caplog.at_level(logging.INFO, logger="companion"):
        start = _resume(tmp_path)
    assert not start.resumed and start.history == [] and start.journal is not None
    kept = path.with_name(path.name + ".damaged")
    assert _warnings(caplog) == [
        f"journal {path.name} is damaged at line 1 (checksum); kept as {kept.name}; "
        "a new game starts"]
    assert start.note == "Journal damaged at line 1: a new game starts"
    assert kept.read_text() == damaged
    assert len(journal.read(start.journal.path).lines) == 1  # the new game's header
    start.journal.close()


def test_a_torn_last_line_is_cut_off_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, states = _enceladus_journal(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"n":7,"player":1,"st')  # the power went here
    with caplog.at_level(logging.INFO, logger="companion"):
        start = _resume(tmp_path)
    assert start.resumed and len(start.history) == 6 and start.note == ""
    assert _warnings(caplog) == [
        f"{path.name}: the last line was cut off (power loss?) and is dropped"]
    assert path.read_bytes() == whole  # appends go on from a clean line
    assert not list(tmp_path.glob("*.damaged"))


def test_reading_never_changes_a_damaged_file(tmp_path: Path) -> None:
    path, _ = _enceladus_journal(tmp_path, 2)
    text = path.read_text().replace('"n":2', '"n":3') + '{"n":3'
    path.write_text(text)
    record = journal.read(path)
    assert record.damage == journal.Damage(3, "checksum") and len(record.steps) == 1
    assert path.read_text() == text


# --------------------------------------------------------------------------- version 1


def _version_1(folder: Path, steps: int = 4) -> tuple[Path, list[object]]:
    """A journal as companions before checks wrote it: no ``seq``, no ``crc``."""
    path, states = _enceladus_journal(folder, steps)
    old = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        del entry["seq"], entry["crc"]
        if "journal" in entry:
            entry["journal"] = 1
        old.append(json.dumps(entry, separators=(",", ":"), sort_keys=True))
    path.write_text("\n".join(old) + "\n")
    return path, states


def test_a_version_1_journal_resumes_and_goes_on_in_its_own_format(tmp_path: Path) -> None:
    path, states = _version_1(tmp_path)
    start = _resume(tmp_path)
    assert start.resumed and len(start.history) == 4 and start.journal is not None
    before = states[4]
    step = next(iter(ENCELADUS.legal_steps(before)))
    start.journal.step(5, ENCELADUS.to_move(before), ENCELADUS.format_step(before, step))
    start.journal.close()
    last = json.loads(path.read_text().splitlines()[-1])
    assert "crc" not in last and last["n"] == 5
    assert journal.read(path).checked(ENCELADUS).damage is None


def test_a_version_1_journal_missing_a_step_line_resumes_before_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, states = _version_1(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:3], *lines[4:]]) + "\n")  # step 3 deleted
    with caplog.at_level(logging.INFO, logger="companion"):
        start = _resume(tmp_path)
    assert start.resumed and len(start.history) == 2 and start.state == states[2]
    assert "damaged at line 4 (out of sequence)" in _warnings(caplog)[0]



# ---- start-up does not grow with the games kept -------------------------------------------


class _FilesTouched:
    """The files opened and the folders listed while it is active (Python's audit events:
    every open, os.open and scandir of this process)."""

    def __init__(self) -> None:
        self.active = False
        self.opened: list[str] = []
        self.listed: list[str] = []

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        if not self.active:
            return
        if event == "open" and isinstance(args[0], str | Path):
            self.opened.append(str(args[0]))
        elif event in ("os.scandir", "os.listdir"):
            self.listed.append(str(args[0]))


_TOUCHED = _FilesTouched()


@pytest.fixture
def touched() -> _FilesTouched:
    import sys

    if not getattr(sys, "_companion_test_hook", False):  # audit hooks cannot be removed
        sys.addaudithook(_TOUCHED)
        sys._companion_test_hook = True  # type: ignore[attr-defined]
    _TOUCHED.opened.clear()
    _TOUCHED.listed.clear()
    return _TOUCHED


def _finished_games(folder: Path, count: int) -> None:
    """``count`` finished Mars games, journaled as the daemon journals them."""
    setup = MARS.new_game(2, 3, {})
    for n in range(count):
        record = journal.Journal(folder / f"20250101-{n:06}-mars.jsonl", fsync=False)
        record.append({"journal": journal.VERSION, **_header(setup), "started": "2025-01-01"})
        record.append({"over": {"winners": [1], "termination": "test", "ranking": []}})
        record.close()


def _start(folder: Path, touched: _FilesTouched) -> tuple[object, list[str], list[str]]:
    """The daemon's start in ``folder`` (the game resumed or a new one), with the files it
    opened (their names) and the folders it listed, in ``folder``."""
    touched.active = True
    try:
        start = _resume(folder)
    finally:
        touched.active = False
    # Only the journal folder's own files: a module imported for the first time on the way
    # opens and lists its own.
    opened = [Path(name).name for name in touched.opened if Path(name).is_relative_to(folder)]
    listed = [name for name in touched.listed if Path(name).is_relative_to(folder)]
    touched.opened.clear()
    touched.listed.clear()
    return start, opened, listed


def test_a_start_reads_the_same_files_however_many_games_are_finished(
    tmp_path: Path, touched: _FilesTouched
) -> None:
    seen = []
    for finished in (1, 1000):
        folder = tmp_path / str(finished)
        folder.mkdir()
        _finished_games(folder, finished)
        path, states = _enceladus_journal(folder)  # the game in progress, then a crash
        start, opened, listed = _start(folder, touched)
        assert start.resumed and start.journal.path == path  # type: ignore[attr-defined]
        assert start.state == states[6] and len(start.history) == 6  # type: ignore[attr-defined]
        seen.append(([name.replace(path.name, "<game>") for name in opened], listed))
    # The pointer, then the game's own journal (read, checked, opened to go on), nothing else.
    assert seen[0] == seen[1] == ([journal.POINTER, "<game>", "<game>", "<game>"], [])


def test_a_start_after_the_end_reads_the_pointer_and_no_journal(
    tmp_path: Path, touched: _FilesTouched
) -> None:
    _finished_games(tmp_path, 1000)
    start, opened, listed = _start(tmp_path, touched)
    new = start.journal.path  # type: ignore[attr-defined]
    assert not start.resumed and listed == []  # type: ignore[attr-defined]
    assert opened == [journal.POINTER, new.name, f"{journal.POINTER}.partial"]  # the new game
    # A power cut after the new game's header is durable: it is the game resumed.
    again, opened, _ = _start(tmp_path, touched)
    assert again.resumed and again.journal.path == new  # type: ignore[attr-defined]


def test_a_power_cut_between_the_end_line_and_the_pointer_starts_a_new_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = _enceladus_journal(tmp_path)
    ended = journal.Journal.continuing(journal.read(path), fsync=False)
    with monkeypatch.context() as cut:  # the power went before the pointer was replaced
        cut.setattr(journal, "point_to", lambda *args, **kwargs: None)
        ended.append({"over": {"winners": [1], "termination": "test", "ranking": []}})
    ended.close()
    assert (tmp_path / journal.POINTER).read_text() == f"{path.name}\n"
    start = _resume(tmp_path)
    assert not start.resumed and start.journal.path != path  # type: ignore[attr-defined]


def test_a_power_cut_while_the_pointer_is_replaced_leaves_the_old_one(tmp_path: Path) -> None:
    path, states = _enceladus_journal(tmp_path)
    (tmp_path / f"{journal.POINTER}.partial").write_text("20990101-0")  # torn, never renamed
    start = _resume(tmp_path)
    assert start.resumed and start.journal.path == path  # type: ignore[attr-defined]
    assert start.state == states[6]  # type: ignore[attr-defined]


def test_a_pointer_that_cannot_be_written_is_tried_again_after_the_next_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    setup = MARS.new_game(2, 3, {})
    with monkeypatch.context() as full, caplog.at_level(logging.WARNING, logger="companion"):
        full.setattr(journal.os, "replace", _no_space)
        record = journal.Journal.create(tmp_path, _header(setup), fsync=False)
    assert _warnings(caplog) == [
        f"the journal folder's pointer {journal.POINTER} could not be written (the disk is full); "
        "it is removed: a restart looks through the folder for the game"]
    (before, step), = _play(setup, 1)
    record.step(1, 1, MARS.format_step(before, step))
    assert journal.latest_unfinished(tmp_path) == record.path
    record.close()


@pytest.mark.parametrize("ended", [1, 0])
def test_a_game_begun_on_a_full_card_is_resumed_not_begun_again(
    ended: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _finished_games(tmp_path, 1)  # the pointer names it, or says no game is in progress
    journal.point_to(tmp_path, "20250101-000000-mars.jsonl" if ended else "", fsync=False)
    with monkeypatch.context() as full:  # room for the journal's lines, none for a new file
        full.setattr(journal.os, "replace", _no_space)
        path, states = _enceladus_journal(tmp_path)
    start = _resume(tmp_path)
    assert start.resumed and start.journal.path == path  # type: ignore[attr-defined]
    assert start.state == states[6]  # type: ignore[attr-defined]
    assert (tmp_path / journal.POINTER).read_text() == f"{path.name}\n"
    start.journal.close()  # type: ignore[attr-defined]


def test_a_pointer_that_cannot_be_written_is_said_once_and_leaves_no_part_of_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    setup = MARS.new_game(2, 3, {})
    played = _play(setup, 3)
    with monkeypatch.context() as full, caplog.at_level(logging.WARNING, logger="companion"):
        full.setattr(journal.os, "replace", _no_space)
        record = journal.Journal.create(tmp_path, _header(setup), fsync=False)
        for number, (before, step) in enumerate(played[:2], 1):
            record.step(number, 1, MARS.format_step(before, step))
    assert len(_warnings(caplog)) == 1  # not once a step
    assert sorted(p.name for p in tmp_path.iterdir()) == [record.path.name]  # no .partial
    before, step = played[2]
    record.step(3, 1, MARS.format_step(before, step))
    assert journal.latest_unfinished(tmp_path) == record.path
    record.close()


def _no_space(*args: object) -> None:
    raise OSError(28, "No space left on device")
