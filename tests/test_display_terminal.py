"""The matrix in a terminal: a real pseudo-terminal of a given size, read back through pyte's
VT100 emulator.  The picture fits the terminal, never scrolls it, is redrawn in place with
only what changed, and stays on screen with the cursor under it at the end."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyte
import pytest
from PIL import Image

from companion.display import Display, Screen, render
from companion.display.terminal import UPPER_HALF, TerminalMatrix, fit, xterm_colour
from tests.test_display import HANDS, enceladus_midgame

WAIT = 10.0  # seconds; a safety net, never reached when the code works
DEMO_S = 300.0  # seconds; a bound on a whole demo game, only to keep a fault from hanging


@dataclass
class Pty:
    """A pseudo-terminal of ``columns`` x ``rows``: the matrix writes to ``stream``, what
    arrives on the other side is fed to a pyte screen of the same size."""

    columns: int
    rows: int
    stream: object
    screen: pyte.HistoryScreen
    received: bytearray
    slave: int
    arrived: threading.Condition

    def size(self) -> tuple[int, int]:
        size = os.get_terminal_size(self.slave)
        return size.columns, size.lines


@pytest.fixture(params=[(80, 24), (120, 40), (20, 6)], ids=lambda s: f"{s[0]}x{s[1]}")
def pty(request: pytest.FixtureRequest) -> Iterator[Pty]:
    columns, rows = request.param
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST  # the bytes as written: no newline translation
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    screen = pyte.HistoryScreen(columns, rows, history=1000)
    stream = pyte.ByteStream(screen)
    received = bytearray()
    arrived = threading.Condition()

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the slave side closed
                return
            if not data:
                return
            with arrived:
                received.extend(data)
                stream.feed(data)
                arrived.notify_all()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    out = open(slave, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - closed below
    yield Pty(columns, rows, out, screen, received, slave, arrived)
    out.close()
    os.close(slave)
    reader.join(WAIT)
    os.close(master)


def settle(pty: Pty, matrix: TerminalMatrix) -> None:
    """Wait until everything the matrix wrote has been read back."""
    with pty.arrived:
        assert pty.arrived.wait_for(lambda: len(pty.received) >= matrix.bytes_written, WAIT)


def screen(message: str, **kwargs: object) -> Screen:
    return Screen("enceladus", "enceladus", enceladus_midgame(), message=message, scores=HANDS,
                  to_move=1, **kwargs)  # type: ignore[arg-type]


def picture_rows(pty: Pty) -> list[str]:
    lines = [pty.screen.buffer[y] for y in range(pty.rows)]
    return ["".join(line[x].data for x in range(pty.columns)).rstrip() for line in lines]


def test_the_picture_fits_the_terminal_and_never_scrolls_it(pty: Pty) -> None:
    matrix = TerminalMatrix(16, 16, stream=pty.stream, reserve=4, size=pty.size)  # type: ignore[arg-type]
    for frame in range(0, 200, 7):
        matrix.display(render(screen("P1: your turn"), width=16, height=16, mode="RGB",
                              frame=frame))
    matrix.cleanup()
    settle(pty, matrix)
    width, height = fit(16, 16, pty.columns, pty.rows - 4 - 1)
    rows = picture_rows(pty)
    assert not pty.screen.history.top  # nothing ever scrolled off the top
    assert rows[: height // 2] == [UPPER_HALF * width] * (height // 2)
    assert all(not row for row in rows[height // 2:])
    assert (pty.screen.cursor.y, pty.screen.cursor.x) == (height // 2, 0)  # under the picture
    assert width <= pty.columns and height // 2 + 1 <= pty.rows - 4  # and the cursor's row


def test_the_caption_stays_under_the_picture_with_the_cursor_under_it(pty: Pty) -> None:
    caption = "Live page: http://127.0.0.1:8080/"
    matrix = TerminalMatrix(16, 16, stream=pty.stream, reserve=4, caption=caption,
                            size=pty.size)  # type: ignore[arg-type]
    for frame in range(0, 100, 7):
        matrix.display(render(screen("P1: your turn"), width=16, height=16, mode="RGB",
                              frame=frame))
    matrix.cleanup()
    settle(pty, matrix)
    width, height = fit(16, 16, pty.columns, max(1, pty.rows - 4 - 1 - 1))
    rows = picture_rows(pty)
    assert not pty.screen.history.top
    assert rows[: height // 2] == [UPPER_HALF * width] * (height // 2)
    assert rows[height // 2] == caption[:pty.columns]
    assert (pty.screen.cursor.y, pty.screen.cursor.x) == (height // 2 + 1, 0)


def test_a_frame_with_nothing_new_writes_nothing_and_a_ticker_frame_little(pty: Pty) -> None:
    matrix = TerminalMatrix(16, 16, stream=pty.stream, size=pty.size)  # type: ignore[arg-type]
    long = screen("P1: move your gardener to a flower in its row or column")
    matrix.display(render(long, width=16, height=16, mode="RGB", frame=0))
    first = matrix.bytes_written
    matrix.display(render(long, width=16, height=16, mode="RGB", frame=0))
    assert matrix.bytes_written == first
    matrix.display(render(long, width=16, height=16, mode="RGB", frame=30))  # scrolled
    assert 0 < matrix.bytes_written - first < first / 3


@pytest.mark.parametrize("pty", [(80, 24)], indirect=True, ids=["80x24"])
def test_the_colours_are_the_matrix_colours(pty: Pty) -> None:
    matrix = TerminalMatrix(2, 2, stream=pty.stream, size=lambda: (2, 1))  # type: ignore[arg-type]
    image = Image.new("RGB", (2, 2))
    image.putpixel((0, 0), (255, 0, 0))
    image.putpixel((0, 1), (0, 80, 255))
    matrix.display(image)
    settle(pty, matrix)
    cell = pty.screen.buffer[0][0]
    assert cell.data == UPPER_HALF
    assert (cell.fg, cell.bg) == (_pyte_colour(xterm_colour((255, 0, 0))),
                                  _pyte_colour(xterm_colour((0, 80, 255))))


def _pyte_colour(index: int) -> str:
    return pyte.graphics.FG_BG_256[index]


@pytest.mark.parametrize("pty", [(80, 24)], indirect=True, ids=["80x24"])
def test_a_resized_terminal_gets_a_picture_fitted_to_its_new_size(pty: Pty) -> None:
    sizes = iter([(80, 24), (40, 10)])
    matrix = TerminalMatrix(16, 16, stream=pty.stream, size=lambda: next(sizes))  # type: ignore[arg-type]
    image = render(screen("Hello"), width=16, height=16, mode="RGB")
    matrix.display(image)
    matrix.display(image)  # the terminal shrank: cleared and drawn again, smaller
    settle(pty, matrix)
    rows = picture_rows(pty)
    assert rows[:8] == [UPPER_HALF * 16] * 8 and not any(rows[8:])


@pytest.mark.parametrize("pty", [(80, 24)], indirect=True, ids=["80x24"])
def test_the_display_thread_draws_in_the_terminal(pty: Pty) -> None:
    matrix = TerminalMatrix(16, 16, stream=pty.stream, size=pty.size)  # type: ignore[arg-type]
    display = Display(matrix, clock=lambda: 0.0, frame_interval=3600.0)
    display.show(screen("Hello"))
    assert display.wait_frames(1, WAIT)
    display.close()
    settle(pty, matrix)
    assert picture_rows(pty)[0].startswith(UPPER_HALF)


def test_grey_marks_of_the_board_keep_a_grey_of_their_own() -> None:
    assert xterm_colour((22, 22, 22)) not in (xterm_colour((0, 0, 0)), 16)
    assert xterm_colour((255, 0, 0)) == 196 and xterm_colour((0, 0, 0)) == 16


def test_a_terminal_smaller_than_the_matrix_gets_it_scaled_down() -> None:
    assert fit(16, 16, 80, 16) == (32, 32)
    assert fit(64, 32, 40, 40) == (40, 20)


@pytest.mark.parametrize("pty", [(80, 24), (120, 40)], indirect=True, ids=["80x24", "120x40"])
def test_the_demo_leaves_its_last_picture_and_its_result_on_screen(
    pty: Pty, tmp_path: Path
) -> None:
    attrs = termios.tcgetattr(pty.slave)
    attrs[1] |= termios.OPOST | termios.ONLCR  # a terminal as a shell has it, for print()
    termios.tcsetattr(pty.slave, termios.TCSANOW, attrs)
    earlier = tmp_path / "out" / "journals" / "demo-enceladus-2p-1"
    earlier.mkdir(parents=True)
    (earlier / "earlier-game.jsonl").write_text("{}\n")
    demo = subprocess.run(
        [sys.executable, "-c", "import sys; from companion.cli import main; sys.exit(main())",
         "demo", "--display", "capture", "--out", "out", "--speed", "20"],
        cwd=tmp_path, stdin=pty.slave, stdout=pty.slave, stderr=pty.slave, timeout=DEMO_S,
        check=False)
    with pty.arrived:
        assert pty.arrived.wait_for(lambda: b"Journal: " in pty.received, WAIT)
        rows = [row.rstrip() for row in pty.screen.display]
    assert demo.returncode == 0, "\n".join(rows)
    frames = tmp_path / "out" / "demo-enceladus-2p-1-frames"
    summary = ["Gardens of Enceladus, 2 players, seed 1, identity board:",
               f"Matrix frames: {Path('out') / frames.name}",
               f"Journal: {Path('out') / earlier.relative_to(tmp_path / 'out')}"]
    assert all(line in rows for line in summary), "\n".join(rows)
    assert any(row.startswith("Winner: Player ") for row in rows)
    assert any(row.startswith("Live page: http://127.0.0.1:") for row in rows)  # not cleared
    assert rows[0].startswith(UPPER_HALF)  # the last picture, above the result
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no frame in the folder
    assert len(list(frames.glob("luma_*.png"))) > 100
    assert [p.name for p in earlier.iterdir()] != ["earlier-game.jsonl"]  # the new game's
    assert sorted(p.name for p in earlier.parent.iterdir()) == [earlier.name]
