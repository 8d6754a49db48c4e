"""Every command, given what a person gets wrong (a missing file, a folder, a binary file, an
empty one, a port that is not there, a number out of range), answers in one sentence on
stderr with the documented exit status, never a traceback, and leaves nothing half-written;
a reader that stops reading the output (``| head``) ends the command quietly.

Each command runs as the ``companion`` script does, in its own process, from an empty
working folder that must stay empty (``companion replay`` writes its GIF there by default).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion import journal
from companion.cli import EX_PIPE, EXIT_STATUSES
from companion.rules import load
from companion.sim.serve import ServedBoard
from companion.tools.trace import HEADER, parse_trace

ROOT = Path(__file__).resolve().parents[1]
COMPANION = [sys.executable, "-c", "import sys; from companion.cli import main; sys.exit(main())"]
TIMEOUT_S = 60
"""Bound on any one command; they all answer at once, this only keeps a fault from hanging."""


def companion(*args: str, cwd: Path, stdout: int = subprocess.PIPE
              ) -> subprocess.CompletedProcess[str]:
    """Run ``companion args`` in ``cwd``; its stdout goes to ``stdout`` (default: kept)."""
    return subprocess.run([*COMPANION, *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=TIMEOUT_S, check=False)


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Path]:
    """A folder of what people pass by mistake, and a few good files."""
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "binary.dat").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "bad.scenario").write_text("game enceladus\njump e5\n")
    (tmp_path / "bad.trace").write_text(f"{HEADER}\n0.5 a\\z\n")
    # nested too deep for the JSON and TOML readers
    (tmp_path / "deep.json").write_text("[" * 5000 + "\n")
    (tmp_path / "deep.toml").write_text("key = " + "[" * 5000)
    # JSON may write a lone surrogate, which is no character and has no UTF-8
    (tmp_path / "no-characters.json").write_text('[{"id": "\\ud800"}]')
    rules = load("enceladus").RULES
    state = rules.new_game(2, 1, {})
    game = journal.Journal.create(tmp_path / "journals", {
        "game": "enceladus", "layout": "enceladus", "players": 2, "seed": 1, "options": {},
        "setup": rules.format_position(state)}, fsync=False)
    game.close()
    game.path.rename(tmp_path / "game.jsonl")
    busy = socket.create_server(("127.0.0.1", 0))  # a port another program listens on
    (tmp_path / "busy-port").write_text(str(busy.getsockname()[1]))
    with busy:
        yield tmp_path


def _expand(args: tuple[str, ...], folder: Path) -> list[str]:
    port = (folder / "busy-port").read_text()
    return [arg.format(dir=folder, busy=port, root=ROOT) for arg in args]


SENTENCE, USAGE, REPORT = "sentence", "usage", "report"
"""How a command says what is wrong: one ``companion: ...`` line on stderr; argparse's usage
and one ``error:`` line; or its report on stdout (``FAIL ...``, the config's problems)."""

CASES = {
    # id: (arguments, exit status, how it is said, files that must not exist afterwards)
    "record-missing-port": (("record", "{dir}/ttyUSB9", "{dir}/t.txt"), 69, SENTENCE, ["t.txt"]),
    "record-folder-as-port": (("record", "{dir}/a-folder", "{dir}/t.txt"), 69, SENTENCE,
                              ["t.txt"]),
    "record-file-as-port": (("record", "{dir}/binary.dat", "{dir}/t.txt"), 69, SENTENCE,
                            ["t.txt"]),
    "record-unknown-url": (("record", "bogus://x", "{dir}/t.txt"), 69, SENTENCE, ["t.txt"]),
    "record-no-such-folder": (("record", "loop://", "{dir}/nonexistent/dir/t.txt"), 73,
                              SENTENCE, ["nonexistent"]),
    "record-into-a-folder": (("record", "loop://", "{dir}/a-folder"), 73, SENTENCE, []),
    "record-over-the-journal": (("record", "loop://", "{dir}/game.jsonl"), 2, SENTENCE, []),
    "record-seconds-not-a-number": (("record", "loop://", "{dir}/t.txt", "--seconds", "x"), 2,
                                    USAGE, ["t.txt"]),
    "record-seconds-negative": (("record", "loop://", "{dir}/t.txt", "--seconds", "-1"), 2,
                                USAGE, ["t.txt"]),
    "monitor-missing-port": (("monitor", "{dir}/ttyUSB9", "--seconds", "30"), 69, SENTENCE, []),
    "monitor-unknown-url": (("monitor", "bogus://x", "--seconds", "30"), 69, SENTENCE, []),
    "monitor-file-as-port": (("monitor", "{dir}/binary.dat", "--seconds", "30"), 69, SENTENCE,
                             []),
    "monitor-empty-port": (("monitor", ""), 2, USAGE, []),
    "record-empty-port": (("record", " ", "{dir}/t.txt"), 2, USAGE, ["t.txt"]),
    "monitor-seconds-zero": (("monitor", "loop://", "--seconds", "0"), 2, USAGE, []),
    "monitor-stuck-after-not-a-number": (("monitor", "loop://", "--stuck-after", "x"), 2, USAGE,
                                         []),
    "monitor-missing-config": (("monitor", "loop://", "--config", "{dir}/missing.toml"), 66,
                               SENTENCE, []),
    "sim-replay-missing": (("sim", "--replay", "{dir}/missing.trace"), 66, SENTENCE, []),
    "sim-replay-folder": (("sim", "--replay", "{dir}/a-folder"), 66, SENTENCE, []),
    "sim-replay-binary": (("sim", "--replay", "{dir}/binary.dat"), 66, SENTENCE, []),
    "sim-replay-under-a-file": (("sim", "--replay", "{dir}/binary.dat/t.trace"), 66, SENTENCE,
                                []),
    "sim-replay-empty": (("sim", "--replay", "{dir}/empty.txt"), 1, SENTENCE, []),
    "sim-replay-with-a-scenario": (("sim", "--replay",
                                    "{root}/tests/traces/enceladus-4-steps.trace",
                                    "--scenario", "{dir}/missing.scenario"), 2, SENTENCE, []),
    "sim-replay-speed-zero": (("sim", "--replay", "{root}/tests/traces/enceladus-4-steps.trace",
                               "--speed", "0"), 2, USAGE, []),
    "sim-scenario-missing": (("sim", "--scenario", "{dir}/missing.scenario"), 66, SENTENCE, []),
    "sim-scenario-folder": (("sim", "--scenario", "{dir}/a-folder"), 66, SENTENCE, []),
    "sim-scenario-binary": (("sim", "--scenario", "{dir}/binary.dat"), 66, SENTENCE, []),
    "sim-scenario-empty": (("sim", "--scenario", "{dir}/empty.txt"), 1, SENTENCE, []),
    "sim-scenario-not-an-action": (("sim", "--scenario", "{dir}/bad.scenario"), 1, SENTENCE, []),
    "sim-replay-not-an-escaped-chunk": (("sim", "--replay", "{dir}/bad.trace"), 1, SENTENCE, []),
    "sim-serve-not-a-url": (("sim", "--serve", "bogus"), 2, SENTENCE, []),
    "sim-serve-port-out-of-range": (("sim", "--serve", "socket://127.0.0.1:99999"), 2, SENTENCE,
                                    []),
    "sim-serve-other-machine": (("sim", "--serve", "socket://192.0.2.1:7777"), 2, SENTENCE, []),
    "sim-serve-port-in-use": (("sim", "--serve", "socket://127.0.0.1:{busy}"), 69, SENTENCE, []),
    "sim-stuck-not-a-cell": (("sim", "--stuck", "zz"), 2, SENTENCE, []),
    "sim-hand-setup-interactive": (("sim", "--hand-setup", "--players", "2", "--interactive"),
                                   2, SENTENCE, []),
    "sim-players-9": (("sim", "--players", "9"), 2, USAGE, []),
    "sim-seed-not-a-number": (("sim", "--seed", "x"), 2, USAGE, []),
    "sim-seed-negative": (("sim", "--seed", "-1"), 2, USAGE, []),
    "sim-seed-above-the-configs": (("sim", "--seed", str(2**63)), 2, USAGE, []),
    "sim-board-outside-uranus": (("sim", "--board", "rhombus"), 2, SENTENCE, []),
    "replay-missing": (("replay", "{dir}/missing.jsonl"), 66, SENTENCE, []),
    "replay-folder": (("replay", "{dir}/a-folder"), 66, SENTENCE, []),
    "replay-binary": (("replay", "{dir}/binary.dat"), 1, SENTENCE, []),
    "replay-empty": (("replay", "{dir}/empty.txt"), 1, SENTENCE, []),
    "replay-nested-too-deep": (("replay", "{dir}/deep.json"), 1, SENTENCE, []),
    "replay-gif-no-such-folder": (("replay", "{dir}/game.jsonl", "--gif",
                                   "{dir}/nonexistent/game.gif"), 73, SENTENCE, ["nonexistent"]),
    "replay-gif-into-a-folder": (("replay", "{dir}/game.jsonl", "--gif", "{dir}/a-folder"), 73,
                                 SENTENCE, []),
    "replay-gif-too-large": (("replay", "{dir}/game.jsonl", "--gif", "{dir}/game.gif",
                              "--width", "1024", "--scale", "8"), 2, SENTENCE, ["game.gif"]),
    "replay-html-under-a-file": (("replay", "{dir}/game.jsonl", "--html",
                                  "{dir}/binary.dat/game.html"), 73, SENTENCE, []),
    "replay-gif-is-the-journal": (("replay", "{dir}/game.jsonl", "--gif", "{dir}/game.jsonl"),
                                  2, SENTENCE, []),
    "replay-width-zero": (("replay", "{dir}/game.jsonl", "--width", "0"), 2, USAGE, []),
    "replay-scale-not-a-number": (("replay", "{dir}/game.jsonl", "--scale", "x"), 2, USAGE, []),
    "demo-players-9": (("demo", "--players", "9"), 2, USAGE, []),
    "demo-seed-not-a-number": (("demo", "--seed", "x"), 2, USAGE, []),
    "demo-seed-negative": (("demo", "--seed", "-1"), 2, USAGE, []),
    "demo-seed-zero": (("demo", "--seed", "0"), 2, USAGE, []),
    "demo-seed-above-the-configs": (("demo", "--seed", str(2**63)), 2, USAGE, []),
    "demo-board-outside-uranus": (("demo", "--game", "mars", "--board", "rhombus"), 2,
                                  SENTENCE, []),
    "demo-unknown-display": (("demo", "--display", "banana", "--out", "{dir}/out"), 2,
                             SENTENCE, ["out"]),
    "demo-speed-zero": (("demo", "--speed", "0"), 2, USAGE, []),
    "demo-speed-too-slow-to-wait": (("demo", "--speed", "1e-300"), 2, USAGE, []),
    "sim-speed-too-slow-to-wait": (("sim", "--speed", "1e-300"), 2, USAGE, []),
    "demo-opponent-unknown": (("demo", "--opponent", "best"), 2, USAGE, []),
    "demo-opponent-more-than-players": (("demo", "--opponent", "quick,steady,strong"), 2,
                                        SENTENCE, []),
    "demo-out-is-a-file": (("demo", "--display", "dummy", "--out", "{dir}/binary.dat"), 73,
                           SENTENCE, []),
    "run-missing-config": (("run", "--config", "{dir}/missing.toml"), 66, SENTENCE, []),
    "run-folder-as-config": (("run", "--config", "{dir}/a-folder"), 66, SENTENCE, []),
    "run-binary-config": (("run", "--config", "{dir}/binary.dat"), 66, SENTENCE, []),
    "run-config-nested-too-deep": (("run", "--config", "{dir}/deep.toml"), 78, SENTENCE, []),
    "monitor-config-nested-too-deep": (("monitor", "loop://", "--config", "{dir}/deep.toml"),
                                       78, SENTENCE, []),
    "check-config-missing": (("check-config", "{dir}/missing.toml"), 66, SENTENCE, []),
    "check-config-folder": (("check-config", "{dir}/a-folder"), 66, SENTENCE, []),
    "check-config-binary": (("check-config", "{dir}/binary.dat"), 66, SENTENCE, []),
    "check-config-nested-too-deep": (("check-config", "{dir}/deep.toml"), 78, REPORT, []),
    "rules-check-missing": (("rules", "check", "{dir}/missing.json"), 66, SENTENCE, []),
    "rules-check-folder": (("rules", "check", "{dir}/a-folder"), 66, SENTENCE, []),
    "rules-check-binary": (("rules", "check", "{dir}/binary.dat"), 66, SENTENCE, []),
    "rules-check-empty": (("rules", "check", "{dir}/empty.txt"), 1, REPORT, []),
    "rules-check-id-of-no-characters": (("rules", "check", "{dir}/no-characters.json"), 1,
                                        REPORT, []),
    "scoreboard-pin-letters": (("scoreboard", "--broker", "mqtt://127.0.0.1:1", "--pin", "abc"),
                               2, USAGE, []),
    "scoreboard-pin-short": (("scoreboard", "--broker", "mqtt://127.0.0.1:1", "--pin", "12"),
                             2, USAGE, []),
    "no-command": ((), 2, USAGE, []),
    "unknown-command": (("bogus",), 2, USAGE, []),
}


@pytest.mark.parametrize(("args", "status", "said", "absent"), CASES.values(), ids=CASES.keys())
def test_a_wrong_input_gets_one_sentence_and_its_exit_status(
    files: Path, args: tuple[str, ...], status: int, said: str, absent: list[str]
) -> None:
    work = files / "work"
    work.mkdir()
    before = sorted(files.iterdir())
    done = companion(*_expand(args, files), cwd=work)
    err = done.stderr.splitlines()
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    if said == SENTENCE:
        assert len(err) == 1 and err[0].startswith("companion: "), done.stderr
        assert len(err[0]) > len("companion: ") + 10
    elif said == USAGE:
        assert err[0].startswith("usage: companion"), done.stderr
        assert ": error: " in err[-1] and not any(": error: " in line for line in err[:-1])
    else:
        assert done.stderr == "" and done.stdout.strip()
        assert "Traceback" not in done.stdout
    assert not list(work.iterdir()), "nothing is left in the working folder"
    assert sorted(files.iterdir()) == before
    for name in absent:
        assert not (files / name).exists()


def test_a_wrong_demo_option_leaves_the_earlier_demos_journal(files: Path) -> None:
    earlier = files / "out" / "journals" / "demo-enceladus-2p-1" / "earlier.jsonl"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("{}\n")
    done = companion("demo", "--display", "banana", "--out", str(files / "out"), cwd=files)
    assert done.returncode == 2 and 'not "banana"' in done.stderr
    assert done.stderr.startswith("companion: --display must be one of")
    assert [p.name for p in earlier.parent.parent.iterdir()] == [earlier.parent.name]
    assert earlier.read_text() == "{}\n"


def test_a_file_where_the_demos_journal_folder_goes_is_said_before_the_game(
        files: Path) -> None:
    """Said before a game is played, not after it as a rename's traceback; the file is kept
    and no hidden folder of a new journal is left beside it."""
    in_the_way = files / "out" / "journals" / "demo-enceladus-2p-1"
    in_the_way.parent.mkdir(parents=True)
    in_the_way.write_text("mine\n")
    done = companion("demo", "--display", "dummy", "--out", str(files / "out"), cwd=files)
    assert done.returncode == 73, done.stderr
    assert done.stderr == (f"companion: cannot write the journal folder {in_the_way}: "
                           "it is a file, not a folder\n")
    assert [p.name for p in in_the_way.parent.iterdir()] == [in_the_way.name]
    assert in_the_way.read_text() == "mine\n"


@pytest.mark.parametrize("args", [
    ("replay", "missing.jsonl"), ("sim", "--replay", "missing.trace"),
    ("sim", "--scenario", "missing.scenario"), ("rules", "check", "missing.json")],
    ids=["replay", "sim-replay", "sim-scenario", "rules-check"])
def test_a_missing_input_file_is_said_in_the_same_words_by_every_command(
        files: Path, args: tuple[str, ...]) -> None:
    done = companion(*args, cwd=files)
    assert done.returncode == 66, done.stderr
    assert done.stderr.startswith("companion: cannot read the ")
    assert done.stderr.endswith(f" {args[-1]}: there is no such file\n"), done.stderr


@pytest.mark.parametrize(("text", "said"), [
    ("", "is empty: no game header"),
    ("my notes\n", "is not a game journal: its first line is not a journal header"),
    ('{"journal": 99}\n', "was written by a newer companion"),
], ids=["empty", "not-a-journal", "newer"])
def test_a_journal_that_is_not_one_is_named_by_the_path_given(files: Path, text: str,
                                                               said: str) -> None:
    """The path as the person typed it, folder and all: a name alone could be any folder's."""
    (files / "games").mkdir()
    (files / "games" / "x.jsonl").write_text(text)
    done = companion("replay", "games/x.jsonl", "--no-gif", cwd=files)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"companion: games/x.jsonl {said}"), done.stderr


def test_replay_never_writes_its_gif_over_the_journal(files: Path) -> None:
    journal_file = files / "game.jsonl"
    before = journal_file.read_bytes()
    (files / "link.jsonl").symlink_to(journal_file)
    for gif in ("game.jsonl", "./game.jsonl", "link.jsonl"):
        done = companion("replay", "game.jsonl", "--gif", gif, cwd=files)
        assert done.returncode == 2, done.stderr
        assert done.stderr == "companion: the GIF would overwrite the journal game.jsonl it " \
                              "is drawn from: give --gif another file name\n"
    assert journal_file.read_bytes() == before


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="a kernel's folder (Linux /proc)")
def test_an_output_in_a_folder_that_takes_no_files_is_not_called_a_missing_folder(
        files: Path) -> None:
    """/proc is there but refuses new files (with "no such file"): saying there is no folder
    /proc would send the reader looking for the wrong fault."""
    done = companion("replay", "game.jsonl", "--gif", "/proc/game.gif", cwd=files)
    assert done.returncode == 73, done.stderr
    assert done.stderr == ("companion: cannot write the GIF /proc/game.gif: the folder /proc "
                           "takes no new file\n")
    done = companion("replay", "game.jsonl", "--gif", "missing/game.gif", cwd=files)
    assert done.stderr == ("companion: cannot write the GIF missing/game.gif: there is no "
                           "folder missing\n")


def test_every_documented_exit_status_is_in_the_help() -> None:
    done = companion("--help", cwd=ROOT)
    text = " ".join(done.stdout.split())
    for status, meaning in EXIT_STATUSES:
        assert f"{status} {' '.join(meaning.split())}" in text
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for status, _ in EXIT_STATUSES:
        assert f" {status} " in readme.partition("exits with a status")[2][:700], status


# Root reads a file of mode 000: as root the command runs without the capabilities that
# let it (setpriv, util-linux), as an ordinary user would.
UNPRIVILEGED = (["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
                if os.geteuid() == 0 else [])


@pytest.mark.skipif(bool(UNPRIVILEGED) and shutil.which("setpriv") is None,
                    reason="root without setpriv reads a file of mode 000")
def test_a_file_without_read_permission_is_named(files: Path) -> None:
    secret = files / "secret.trace"
    secret.write_text(HEADER + "\n")
    secret.chmod(0)
    done = subprocess.run([*UNPRIVILEGED, *COMPANION, "sim", "--replay", str(secret)],
                          cwd=files, capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=False)
    assert done.returncode == 66, done.stderr
    assert done.stderr == f"companion: cannot read the trace file {secret}: permission denied\n"


# ---------------------------------------------------------------- a reader that stops reading


PIPED = {
    # argparse drops what it cannot print itself: --help ends as usual
    "help": (("--help",), 0),
    "rules-check": (("rules", "check", "{root}/tests/cases/enceladus.json"), EX_PIPE),
    "check-config": (("check-config", "{root}/config/companion.toml"), EX_PIPE),
    "replay": (("replay", "{dir}/game.jsonl", "--no-gif"), EX_PIPE),
    "monitor": (("monitor", "loop://", "--seconds", "30"), EX_PIPE),
    "sim": (("sim", "--serve", "socket://127.0.0.1:0"), EX_PIPE),
}


@pytest.mark.parametrize(("args", "status"), PIPED.values(), ids=PIPED.keys())
def test_output_into_a_closed_pipe_ends_quietly(files: Path, args: tuple[str, ...],
                                                status: int) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader has gone before the first line: every write fails
    try:
        done = companion(*_expand(args, files), cwd=files, stdout=writer)
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (status, "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(("args", "status"), PIPED.values(), ids=PIPED.keys())
def test_output_onto_a_full_disk_is_one_sentence_and_73(files: Path, args: tuple[str, ...],
                                                        status: int) -> None:
    """Standard output redirected to a file on a full disk (/dev/full: every write fails
    with ENOSPC) cannot be written: said once, exit 73, as for any output."""
    with open("/dev/full", "wb") as full:
        done = companion(*_expand(args, files), cwd=files, stdout=full.fileno())
    if args == ("--help",):  # argparse drops what it cannot print itself, as into a pipe
        assert done.returncode == 0
        return
    assert (done.returncode, done.stderr) == (
        73, "companion: cannot write the standard output: the disk is full\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("display", ["gifanim", "capture"])
def test_a_demo_whose_output_cannot_be_written_leaves_no_folders(files: Path,
                                                                 display: str) -> None:
    """The demo stops at its first line, before its game begins: the folders it made for
    the journal and the frames are taken away again, not left empty."""
    with open("/dev/full", "wb") as full:
        done = companion("demo", "--display", display, "--out", str(files / "out"),
                         cwd=files, stdout=full.fileno())
    assert (done.returncode, done.stderr) == (
        73, "companion: cannot write the standard output: the disk is full\n")
    assert not (files / "out").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_demo_without_the_live_page_on_a_full_disk_leaves_no_folders(files: Path) -> None:
    """Without the web extra the demo's first line says the live page is not served: it is
    said before the journal's folders are made, so nothing is left of them."""
    no_web = "import sys; sys.modules['tornado'] = None; " + COMPANION[2]
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-c", no_web, "demo", "--out", str(files / "out")], cwd=files,
            stdout=full.fileno(), stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S,
            check=False)
    assert (done.returncode, done.stderr) == (
        73, "companion: cannot write the standard output: the disk is full\n")
    assert not (files / "out").exists()


def test_a_fault_that_is_no_output_error_adds_nothing_to_the_output(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An ``OSError`` of the command's own (not of writing its output) is a fault, raised
    as it is; telling it from the output's writes nothing more to the output."""
    from companion import cli

    def broken(args: object) -> int:
        print("half of the work")
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(cli, "_check_config", broken)
    with pytest.raises(OSError, match="Input/output error"):
        cli.main(["check-config", "x.toml"])
    assert capsys.readouterr().out == "half of the work\n"


def test_a_closed_standard_output_is_no_traceback(files: Path) -> None:
    """Started with its standard output closed (``>&-``), Python has no ``sys.stdout``:
    what would be printed is dropped, and the command does its work."""
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *COMPANION, "replay",
                           str(files / "game.jsonl"), "--gif", str(files / "game.gif")],
                          cwd=files, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert (files / "game.gif").stat().st_size > 0


def _line_within(stream: int, seconds: float) -> bytes:
    """The next line from the pipe ``stream``, waiting at most ``seconds`` for each byte."""
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], seconds)
        assert ready, f"no line within {seconds} s (so far {line!r})"
        byte = os.read(stream, 1)
        assert byte, f"the output ended (so far {line!r})"
        line += byte
    return line


def test_monitor_piped_into_head_ends_quietly_when_head_has_its_lines(tmp_path: Path) -> None:
    with ServedBoard("socket://127.0.0.1:0", "enceladus", {}) as board:
        monitor = subprocess.Popen([*COMPANION, "monitor", board.port, "--seconds", "60"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        try:
            assert monitor.stdout is not None
            first = _line_within(monitor.stdout.fileno(), 20)  # shown at once, not at exit
            assert b"link up" in first
            monitor.stdout.close()  # what head does after its lines
            board.board.put("e6", "M1")  # one more line for the monitor to write
            _, err = monitor.communicate(timeout=TIMEOUT_S)
        finally:
            if monitor.poll() is None:
                monitor.kill()
                monitor.wait()
    assert (monitor.returncode, err) == (EX_PIPE, b"")


# ---------------------------------------------------------------- a tool stopped: 130 or 143


STOPS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _stopped(command: list[str], ready: bytes, stop: signal.Signals, stream: str = "stdout"
             ) -> tuple[int, str, str]:
    """Run ``companion command`` until it writes ``ready`` on ``stream``, send it ``stop``;
    its exit status, the rest of its stdout and its stderr."""
    tool = subprocess.Popen([*COMPANION, *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        pipe = tool.stdout if stream == "stdout" else tool.stderr
        assert pipe is not None
        seen = b""
        while ready not in seen:
            seen += _line_within(pipe.fileno(), 20)
        tool.send_signal(stop)
        out, err = tool.communicate(timeout=TIMEOUT_S)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    return tool.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: s.name)
def test_sim_stopped_exits_with_the_signals_status_and_no_traceback(stop: signal.Signals) -> None:
    status, out, err = _stopped(["sim"], b"simulated enceladus board", stop)
    assert (status, err) == (STOPS[stop], "")


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: s.name)
def test_monitor_stopped_prints_its_summary_then_exits_with_the_signals_status(
    stop: signal.Signals,
) -> None:
    with ServedBoard("socket://127.0.0.1:0", "enceladus", {}) as board:
        status, out, err = _stopped(["monitor", board.port], b"HELLO board", stop)
    assert (status, err) == (STOPS[stop], "")
    assert "refused lines" in out.splitlines()[-1]


def test_monitor_without_a_hello_from_the_board_exits_69(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # a port that never says HELLO
        port = f"socket://127.0.0.1:{silent.getsockname()[1]}"
        done = companion("monitor", port, "--seconds", "0.5", cwd=tmp_path)
    assert done.returncode == 69
    assert done.stdout.splitlines()[-1] == "no HELLO from the board: nothing to report"
    assert done.stderr == (f"companion: no HELLO from a board on {port}: is the board there, "
                           "with its firmware running?\n")


def test_monitor_of_a_board_lost_and_not_back_exits_69(tmp_path: Path) -> None:
    board = ServedBoard("pty", "enceladus", {})
    with board:
        monitor = subprocess.Popen([*COMPANION, "monitor", board.port, "--seconds", "3"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert monitor.stdout is not None
            seen = ""
            while "HELLO board" not in seen:
                seen += _line_within(monitor.stdout.fileno(), 20).decode()
        finally:
            board.close()  # the board goes away and stays away
    try:
        out, err = monitor.communicate(timeout=TIMEOUT_S)
    finally:
        if monitor.poll() is None:
            monitor.kill()
            monitor.wait()
    assert monitor.returncode == 69, err
    assert "link down" in out
    assert err == (f"companion: the board on {board.port} was lost, and had not come back at "
                   "the end\n")


# ---------------------------------------------------------------- record: what was recorded stays


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: s.name)
def test_record_stopped_keeps_the_trace_and_exits_with_the_signals_status(
    tmp_path: Path, stop: signal.Signals,
) -> None:
    trace = tmp_path / "t.trace"
    with ServedBoard("pty", "enceladus", {"e6": "M1"}) as board:
        recorder = subprocess.Popen([*COMPANION, "record", board.port, str(trace)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert board.wait_for_host(20), "the recorder asks for the board on connecting"
            recorder.send_signal(stop)
            out, err = recorder.communicate(timeout=TIMEOUT_S)
        finally:
            if recorder.poll() is None:
                recorder.kill()
                recorder.wait()
    assert recorder.returncode == STOPS[stop], err
    recorded = parse_trace(trace.read_text(encoding="ascii"), str(trace))
    chunks = len(recorded.chunks)
    assert err == f"{chunks} chunk{'' if chunks == 1 else 's'} recorded in {trace}\n"
    assert out == ""


def test_record_of_a_board_that_goes_away_keeps_the_trace_and_says_so(tmp_path: Path) -> None:
    trace = tmp_path / "t.trace"
    with ServedBoard("pty", "enceladus", {}) as board:
        recorder = subprocess.Popen([*COMPANION, "record", board.port, str(trace)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert board.wait_for_host(20)
        finally:
            board.close()  # the pseudo-terminal goes, as a board unplugged
        try:
            _, err = recorder.communicate(timeout=TIMEOUT_S)
        finally:
            if recorder.poll() is None:
                recorder.kill()
                recorder.wait()
    assert recorder.returncode == 69
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert err.startswith(f"companion: lost the board on {board.port} after ")
    assert err.endswith(f"what came before is in {trace}\n")
    assert trace.read_text(encoding="ascii").startswith(HEADER)


# ---------------------------------------------------------------- the daemon without its board


def test_the_daemon_says_once_that_its_board_port_is_missing(tmp_path: Path) -> None:
    port = tmp_path / "ttyUSB9"
    config = tmp_path / "companion.toml"
    config.write_text(f'[board]\nport = "{port}"\n[display]\ndisplay = "dummy"\n'
                      f'[journal]\ndirectory = "{tmp_path / "journals"}"\n')
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock"}
    env.pop("JOURNAL_STREAM", None)
    daemon = subprocess.Popen([*COMPANION, "run", "--config", str(config)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert daemon.stderr is not None
        line = b""
        while b"not found" not in line:
            line = _line_within(daemon.stderr.fileno(), 20)
        daemon.send_signal(signal.SIGTERM)
        rest = daemon.communicate(timeout=TIMEOUT_S)[1]
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    text = line.decode()
    assert text.count(str(port)) == 1, text
    assert text.rstrip().endswith(
        f"board disconnected: port {port} not found; trying again "
        "(plug the board in, or check [board] port)")
    assert str(port) not in rest.decode(), "said once, not again in another line"
    assert daemon.returncode == 0
