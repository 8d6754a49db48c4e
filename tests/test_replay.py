"""``companion replay FILE``: a journaled game printed with its scores and drawn as a GIF."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from companion import journal
from companion.cli import main
from companion.rules import load
from companion.sim.players import choose_step
from companion.tools.replay import END_MS, FRAME_MS, STEP_MS

ENCELADUS = load("enceladus").RULES


def _game(directory: Path, *, steps: int | None = None, seed: int = 4) -> Path:
    """A journal of a seeded random game: ``steps`` steps, or to the end."""
    import random

    state = ENCELADUS.new_game(2, seed, {})
    record = journal.Journal.create(directory, {
        "game": "enceladus", "layout": "enceladus", "players": 2, "seed": seed, "options": {},
        "setup": ENCELADUS.format_position(state)}, fsync=False)
    rng = random.Random(seed)
    number = 0
    while ENCELADUS.outcome(state) is None and (steps is None or number < steps):
        step = choose_step(ENCELADUS, state, rng)
        number += 1
        record.step(number, ENCELADUS.to_move(state), ENCELADUS.format_step(state, step))
        state = ENCELADUS.apply(state, step)
    outcome = ENCELADUS.outcome(state)
    if outcome is not None:
        record.finish(outcome)
    record.close()
    return record.path


def test_replay_prints_every_step_with_the_scores_and_the_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _game(tmp_path)
    record = journal.read(path)
    assert main(["replay", str(path), "--no-gif"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Gardens of Enceladus, 2 players, seed 4")
    step_lines = [line for line in lines if line[:4].strip().isdigit()]
    assert len(step_lines) == len(record.steps)
    first = record.steps[0]
    assert step_lines[0].split()[:3] == ["1.", f"P{first['player']}", first["step"]]
    final = ENCELADUS.status(list(record.replay(ENCELADUS))[-1][2])
    assert step_lines[-1].endswith("  ".join(f"P{p} {s}" for p, s in final))
    assert lines[-1].startswith("Game over (") and record.over is not None


def test_the_scores_stay_in_their_columns_when_they_come_to_two_digits(
        tmp_path: Path) -> None:
    """The setup line's scores under the steps', and player 2's under player 2's when
    player 1's score grows a digit."""
    from companion.tools.replay import Moment, format_game

    record = journal.read(_game(tmp_path, steps=2))
    moments = [Moment(0, 0, "", None, ((1, "0 pts"), (2, "0 pts"))),
               Moment(1, 1, "@0,-4", None, ((1, "9 pts"), (2, "0 pts"))),
               Moment(2, 2, "2,-4=green", None, ((1, "12 pts"), (2, "103 pts")))]
    lines = format_game(record, moments)[1:4]
    assert [line.index("P1 ", 9) for line in lines] == [lines[0].index("P1 ")] * 3
    assert [line.rindex("P2 ") for line in lines] == [lines[2].rindex("P2 ")] * 3
    assert lines[2].endswith("P1 12 pts  P2 103 pts")


@pytest.mark.parametrize(("steps", "said"), [(0, "0 steps"), (1, "1 step"), (2, "2 steps")])
def test_replay_counts_the_steps_of_an_unfinished_game_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], steps: int, said: str
) -> None:
    assert main(["replay", str(_game(tmp_path, steps=steps)), "--no-gif"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"Unfinished after {said}"


def test_replay_draws_the_game_in_real_time_with_its_ticker_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _game(tmp_path, steps=6)
    gif = tmp_path / "game.gif"
    assert main(["replay", str(path), "--gif", str(gif), "--scale", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[-2] == "Unfinished after 6 steps"
    durations = []
    with Image.open(gif) as image:
        assert image.size == (32, 32)
        for index in range(image.n_frames):
            image.seek(index)
            durations.append(image.info["duration"])
    assert len(durations) > 7 * 2  # seven positions, and the text moving on each
    assert all(ms % FRAME_MS == 0 for ms in durations)
    assert sum(durations) >= 6 * STEP_MS + END_MS


def test_replay_skips_a_torn_last_line_without_touching_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _game(tmp_path, steps=3)
    torn = path.read_bytes() + b'{"n": 4, "pla'
    path.write_bytes(torn)
    assert main(["replay", str(path), "--no-gif"]) == 0
    out = capsys.readouterr().out
    assert "cut off by a power loss" in out and "Unfinished after 3 steps" in out
    assert path.read_bytes() == torn


def test_replay_of_a_file_that_is_no_journal_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text('{"journal": 1, "game": "chess"}\n')
    assert main(["replay", str(path), "--no-gif"]) == 1
    assert "names no game this companion knows ('chess')" in capsys.readouterr().err


def test_replay_of_a_named_pipe_says_so_without_opening_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Opening a pipe waits for a writer, for ever when there is none: it is refused first.
    A writer stands ready here, so that a replay that opened it would read a whole game."""
    import os
    import threading

    game = _game(tmp_path / "game", steps=2).read_bytes()
    pipe = tmp_path / "game.jsonl"
    os.mkfifo(pipe)

    def write() -> None:
        fd = os.open(pipe, os.O_WRONLY)  # waits for a reader
        os.write(fd, game)
        os.close(fd)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        status = main(["replay", str(pipe), "--no-gif"])
    finally:
        reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer through
        writer.join()
        os.close(reader)
    assert status == 66
    assert capsys.readouterr().err == (
        f"companion: cannot read the journal {pipe}: it is a named pipe, not a file\n")


def test_replay_of_a_damaged_journal_shows_it_up_to_its_last_good_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _game(tmp_path, steps=5)
    lines = path.read_text().splitlines()
    damaged = "\n".join([*lines[:3], *lines[4:]]) + "\n"  # step 3 deleted
    path.write_text(damaged)
    assert main(["replay", str(path), "--no-gif"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "(damaged at line 4 (out of sequence): shown up to step 2, the rest is left out)" in out
    assert out[-2] == "Unfinished after 2 steps" and out[-1] == out[1]
    assert path.read_text() == damaged


def test_replay_of_a_journal_whose_game_ends_mid_game_stops_at_that_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import random

    path = _game(tmp_path, steps=5)
    state, rng = ENCELADUS.new_game(2, 4, {}), random.Random(4)
    for _ in range(5):
        state = ENCELADUS.apply(state, choose_step(ENCELADUS, state, rng))
    record = journal.Journal.continuing(journal.read(path), fsync=False)
    # A well-formed end line, its checks right, where the game has not ended; then a step.
    record.append({"over": {"winners": [1], "termination": "score", "ranking": []}})
    step = choose_step(ENCELADUS, state, rng)
    record.step(6, ENCELADUS.to_move(state), ENCELADUS.format_step(state, step))
    record.close()
    assert main(["replay", str(path), "--no-gif"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == out[-1] == ("(damaged at line 7 (game over before the game has ended): "
                                 "shown up to step 5, the rest is left out)")
    assert out[-2] == "Unfinished after 5 steps" and not any("Game over" in o for o in out)


@pytest.mark.parametrize(("header", "said"), [
    ({"options": {"bogus": 1}}, "unknown Enceladus option 'bogus'"),
    ({"options": {"tube": "yes"}}, "option tube is 'yes'; use true or false"),
    ({"options": ["tube"]}, "are not a number and a table"),
    ({"seed": -3}, "the header's seed -3 is not a whole number, 0 or more"),
    ({"seed": "4"}, "the header's seed '4' is not a whole number, 0 or more"),
    ({"seed": True}, "the header's seed True is not a whole number, 0 or more"),
    ({"players": 9}, "the header's players and options are not a game's"),
], ids=["unknown-option", "option-of-the-wrong-type", "options-not-a-table", "negative-seed",
        "seed-as-text", "seed-true", "nine-players"])
def test_replay_refuses_a_header_whose_players_seed_or_options_make_no_game(
    header: dict[str, object], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = ENCELADUS.new_game(2, 4, {})
    record = journal.Journal.create(tmp_path, {
        "game": "enceladus", "layout": "enceladus", "players": 2, "seed": 4, "options": {},
        "setup": ENCELADUS.format_position(state), **header}, fsync=False)
    record.close()
    assert main(["replay", str(record.path), "--no-gif"]) == 1
    err = capsys.readouterr().err
    assert f"{record.path.name}: " in err and said in err and len(err.splitlines()) == 1


def test_replay_reads_a_journal_written_before_lines_carried_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = _game(tmp_path, steps=4)
    old = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        del entry["seq"], entry["crc"]
        old.append(json.dumps({**entry, "journal": 1} if "journal" in entry else entry))
    path.write_text("\n".join(old) + "\n")
    assert main(["replay", str(path), "--no-gif"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "Unfinished after 4 steps"


@pytest.mark.parametrize(("option", "what"), [("--gif", "GIF"), ("--html", "page")])
def test_replay_never_writes_over_a_file_that_it_did_not_write(
    option: str, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another game's journal (or any other file) given as the output by mistake is kept as
    it was; an earlier GIF or page and an empty file are written over."""
    path = _game(tmp_path / "one", steps=3)
    other = _game(tmp_path / "two", steps=2)
    kept = other.read_bytes()
    out = ["--no-gif"] if option == "--html" else []
    assert main(["replay", str(path), *out, option, str(other)]) == 2
    assert capsys.readouterr().err == (
        f"companion: {other} is not a {what} that replay wrote, so it does not write over it: "
        f"give {option} another file name\n")
    assert other.read_bytes() == kept
    written = tmp_path / "written"
    for earlier in (None, "its own", b""):  # not there, written before, empty
        if isinstance(earlier, bytes):
            written.write_bytes(earlier)
        assert main(["replay", str(path), *out, option, str(written)]) == 0
        assert written.stat().st_size > 0


def test_a_gif_that_cannot_be_written_leaves_the_last_one_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _game(tmp_path, steps=3)
    gif = tmp_path / "game.gif"
    assert main(["replay", str(path), "--gif", str(gif)]) == 0
    good = gif.read_bytes()

    def full_disk(image: Image.Image, target: Path, **options: object) -> None:
        Path(target).write_bytes(b"GIF89a half")  # what a full card leaves of a frame or two
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Image.Image, "save", full_disk)
    capsys.readouterr()
    assert main(["replay", str(path), "--gif", str(gif)]) == 73
    assert capsys.readouterr().err == f"companion: cannot write the GIF {gif}: the disk is full\n"
    assert gif.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name, journal.POINTER, gif.name])  # the journal folder's pointer, no part file


def test_a_page_that_cannot_be_written_beside_a_gif_is_named_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page is written while the GIF is: the page's sentence is the one said, and the GIF
    is left out whole, not half written."""
    path = _game(tmp_path, steps=3)
    gif = tmp_path / "game.gif"
    page = tmp_path / "missing" / "game.html"
    assert main(["replay", str(path), "--gif", str(gif), "--html", str(page)]) == 73
    assert capsys.readouterr().err == (
        f"companion: cannot write the page {page}: there is no folder {page.parent}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, journal.POINTER])


@pytest.mark.parametrize(("damage", "line", "reason", "shown"), [
    (lambda lines: [*lines[:4], lines[4].replace('"seq":5', '"seq":9'), *lines[5:]], 5,
     "out of sequence", 3),
    (lambda lines: [*lines[:4], lines[4].replace('"step":"', '"step":"x'), *lines[5:]], 5,
     "checksum", 3),
    (lambda lines: [*lines, "junk"], 8, "not a journal entry", 6),
    (lambda lines: [*lines, "junk", "more junk"], 8, "not a journal entry", 6),
], ids=["seq-changed", "step-changed", "a-junk-line-at-the-end", "junk-lines-at-the-end"])
def test_replay_says_where_a_journal_is_damaged_first_last_and_on_stderr(
    tmp_path: Path, damage: object, line: int, reason: str, shown: int
) -> None:
    path = _game(tmp_path, steps=6)
    path.write_text("\n".join(damage(path.read_text().splitlines())) + "\n")  # type: ignore[operator]
    done = subprocess.run([sys.executable, "-c", "import sys; from companion.cli import main; "
                           "sys.exit(main())", "replay", str(path), "--no-gif"],
                          capture_output=True, text=True, timeout=60, check=False)
    note = f"damaged at line {line} ({reason}): shown up to step {shown}, the rest is left out"
    out = done.stdout.splitlines()
    assert done.returncode == 0
    assert out[1] == out[-1] == f"({note})" and out[-2] == f"Unfinished after {shown} steps"
    assert done.stderr.endswith(f"WARNING companion.replay: {path} is {note}\n")
    assert len(done.stderr.splitlines()) == 1
