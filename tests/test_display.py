"""Reference images of every screen kind on every matrix size (luma's ``dummy`` device).

Each case renders a :class:`Screen` through ``render`` onto a ``luma.core.device.dummy`` and
compares the device's image with ``tests/golden/<name>.png`` pixel for pixel
(``ImageChops.difference(a, b).getbbox() is None``).  After a deliberate change of the drawing,
regenerate the references and look at them before committing:

    COMPANION_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_display.py

Positions follow the rules' coordinates (docs/RULINGS.md, Coordinates); the boards are
seeded so every run draws the same pictures.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from luma.core.device import dummy
from PIL import Image, ImageChops

from companion.display import Screen, render, render_frame
from companion.display.geometry import COLUMNS, board_grid, enceladus_grid
from companion.display.palette import BLACK, FLOWERS, GUIDE, MARTIAN, WHITE, blink, piece_colour
from companion.display.text import HOLD, plain
from companion.rules.hexes import DIRECTIONS, HexGrid, add, hex_name, hexagon

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("COMPANION_REGEN_GOLDEN") == "1"

RGB_SIZES = ((16, 16), (32, 32), (64, 32))
MONO_SIZES = ((32, 8), (64, 8), (32, 16))
ENCELADUS_COLOURS = ("blue", "red", "yellow", "green", "purple")
HANDS = ((1, "3-4-5-5-6"), (2, "0-4-5-5-6"))


# ---- positions --------------------------------------------------------------------------


def enceladus_setup() -> dict[str, str]:
    """A full garden (19 flowers of each colour, 5 peaks; Gardens of Enceladus, Setup), empty
    start squares, the ten actions free with the wildflower on A10, an empty tray."""
    rng = random.Random(5)
    pieces = [c for c in ENCELADUS_COLOURS for _ in range(19)] + ["peak"] * 5
    rng.shuffle(pieces)
    squares = [f"{col}{row}" for row in range(1, 11) for col in COLUMNS]
    cells = dict(zip(squares, pieces, strict=True))
    cells |= {f"{side}{row}": "" for side in "LR" for row in range(1, 11)}
    cells |= {f"B{col}": "" for col in COLUMNS}
    cells |= {f"A{slot}": "" for slot in range(1, 10)} | {"A10": "wild"}
    cells |= {f"T{slot}": "" for slot in range(1, 7)}
    return cells


def enceladus_midgame() -> dict[str, str]:
    """Mid-game: picked squares empty, Martian 1 on e5, Martian 2 waiting on L3, the tube and
    swap-flowers actions used (discs of players 1 and 2), the wildflower taken."""
    cells = enceladus_setup()
    for square in ("e4", "f4", "e6", "c5", "c6", "h2", "h3", "b9", "i9", "j9", "d8"):
        cells[square] = ""
    cells |= {"e5": "M1", "L3": "M2", "A1": "D1", "A7": "D2", "A10": ""}
    return cells


def enceladus_destinations(cells: dict[str, str]) -> dict[str, str]:
    """Martian 1's normal moves from e5 (Your turn, step 2): along row and column, to any
    flower before the first peak."""
    out: dict[str, str] = {}
    for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        col, row = COLUMNS.index("e") + dc, 5 + dr
        while 0 <= col < 10 and 1 <= row <= 10:
            piece = cells[f"{COLUMNS[col]}{row}"]
            if piece == "peak":
                break
            if piece in ENCELADUS_COLOURS:
                out[f"{COLUMNS[col]}{row}"] = "dest"
            col, row = col + dc, row + dr
    return out


def mars_position() -> tuple[dict[str, str], dict[str, str]]:
    """The 91 hexes (Gardens of Mars, Components) with 24 flowers, gardener 1 on a red flower
    at 1,-1, gardener 2 at -2,3, and gardener 1's destinations for the pool 3 5."""
    grid = hexagon(5)
    rng = random.Random(11)
    colours = [c for c in ("blue", "yellow", "white", "gray", "red", "green") for _ in range(4)]
    spots = [c for c in grid.cells if c not in ((0, 0), (1, -1), (-2, 3))]
    cells = {hex_name(c): "" for c in grid.cells}
    for cell, colour in zip(rng.sample(spots, len(colours)), colours, strict=True):
        cells[hex_name(cell)] = colour
    cells |= {"1,-1": "M1+red", "-2,3": "M2"}
    return cells, _hex_destinations(grid, cells, (1, -1), (3, 5), land_on_centre=False)


def _hex_destinations(grid: HexGrid, cells: dict[str, str], start: tuple[int, int],
                      distances: tuple[int, ...], *, land_on_centre: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for direction in DIRECTIONS:
        for steps in distances:
            path = [add(start, direction, i) for i in range(1, steps + 1)]
            free = all(c in grid and not cells[hex_name(c)].startswith("M") for c in path)
            if free and (land_on_centre or path[-1] != (0, 0)):
                out[hex_name(path[-1])] = "dest"
    return out


URANUS_BOARDS: dict[str, Callable[[], HexGrid]] = {
    # Gardens of Uranus boards, docs/RULINGS.md Uranus #2
    "hexagonal": lambda: hexagon(4),
    "trapezoid": lambda: HexGrid((q, r) for q in range(7) for r in range(-(5 + q), 1)),
    "rhombus": lambda: HexGrid((q, r) for q in range(8) for r in range(-q, 8 - q)),
}
URANUS_TREES = {"hexagonal": 1, "trapezoid": 2, "rhombus": 3}


def uranus_position(board: str) -> tuple[dict[str, str], dict[str, str]]:
    """A Uranus board with its trees on non-edge spots, 16 flowers, gardeners 1 and 2, and
    gardener 1's straight-line moves (trees block, gardeners are passed over)."""
    grid = URANUS_BOARDS[board]()
    rng = random.Random(3)
    inner = [c for c in grid.cells if c not in grid.edge]
    trees = rng.sample(inner, URANUS_TREES[board])
    cells = {hex_name(c): "" for c in grid.cells} | {hex_name(c): "tree" for c in trees}
    free = [c for c in grid.cells if c not in trees]
    chosen = rng.sample(free, 18)
    for cell, colour in zip(chosen[:16], ENCELADUS_COLOURS * 4, strict=False):
        cells[hex_name(cell)] = colour
    me, other = chosen[16], chosen[17]
    cells[hex_name(me)] = "M1"
    cells[hex_name(other)] = "M2+" + ENCELADUS_COLOURS[1]
    dest: dict[str, str] = {}
    for ray in grid.rays[me]:
        for cell in ray:
            if cells[hex_name(cell)] == "tree":
                break
            if not cells[hex_name(cell)].startswith("M"):
                dest[hex_name(cell)] = "dest"
    return cells, dest


# ---- screens ----------------------------------------------------------------------------


def screens() -> dict[str, Screen]:
    """Every screen kind the referee shows, by golden-file stem."""
    setup = enceladus_setup()
    mid = enceladus_midgame()
    mars_cells, mars_dest = mars_position()
    out = {
        "enceladus-setup": Screen(
            "enceladus", "enceladus", setup, message="Player 1: place your Martian",
            highlights={f"{s}{n}": "place" for s in "LR" for n in range(1, 11)},
            scores=((1, "0-0-0-0-0"), (2, "0-0-0-0-0")), to_move=1),
        "enceladus-move": Screen(
            "enceladus", "enceladus", mid, highlights=enceladus_destinations(mid),
            message="Move your Martian", scores=HANDS, to_move=1, extra={"tube": "b3 r3"}),
        "enceladus-wrong": Screen(
            "enceladus", "enceladus", mid, highlights={"c3": "wrong", "g7": "wrong", "e5": "wrong"},
            message="Put back the pieces that blink", urgent=True, scores=HANDS, to_move=1),
        "enceladus-undo": Screen(
            "enceladus", "enceladus", mid | {"e4": "red", "f4": "blue"},
            highlights={"e4": "restore", "f4": "restore", "e5": "pick"},
            message="Undo: put back the flowers", scores=HANDS, to_move=1),
        "enceladus-menu": Screen(
            "enceladus", "enceladus", mid, message="Pay with which colour?",
            menu=("blue", "red", "yellow"), menu_index=1, scores=HANDS, to_move=1),
        "enceladus-over": Screen(
            "enceladus", "enceladus", mid, message="Player 1 wins: 3-4-5-5-6",
            scores=((1, "3-4-5-5-6 1pt"), (2, "0-4-5-5-6 0pt"))),
        "mars-move": Screen(
            "mars", "mars", mars_cells, highlights=mars_dest, message="Move 3 or 5",
            scores=((1, "14 pts"), (2, "9 pts"), (3, "21 pts")), to_move=1,
            extra={"pool": "3 5", "track": "P1 14 (lap 1)"}),
    }
    for board in URANUS_BOARDS:
        cells, dest = uranus_position(board)
        out[f"uranus-{board}"] = Screen(
            "uranus", f"uranus-{board}", cells, highlights=dest,
            message="Triangle red would score 6", scores=((1, "12 pts"), (2, "7 pts")), to_move=1)
    return out


def text_screens() -> dict[str, Screen]:
    """What a mono 32 x 8 chain shows: a prompt, scores, an urgent warning, a menu."""
    cells = enceladus_midgame()
    return {
        "text-message": Screen("enceladus", "enceladus", cells, message="Your move",
                               scores=HANDS, to_move=2),
        "text-scores": Screen("enceladus", "enceladus", cells, scores=HANDS, to_move=1),
        "text-urgent": Screen("enceladus", "enceladus", cells, message="Board wrong: c3 g7",
                              urgent=True, scores=HANDS, to_move=1),
        "text-menu": Screen("mars", "mars", mars_position()[0], message="Which die did you use?",
                            menu=("3", "5"), menu_index=0, scores=((1, "14 pts"),), to_move=1),
    }


def cases() -> list[tuple[str, Screen, tuple[int, int], str, int]]:
    """``(golden name, screen, size, mode, frame)`` for every screen kind x size, plus later
    frames where something blinks or scrolls."""
    out = []
    for name, screen in screens().items():
        for size in RGB_SIZES:
            out.append((name, screen, size, "RGB", 0))
        out.append((name, screen, (32, 8), "1", 0))
    for name, screen in text_screens().items():
        for size in MONO_SIZES:
            out.append((name, screen, size, "1", 0))
        out.append((name, screen, (16, 16), "RGB", 0))
    for name, frame in (("enceladus-move", 8), ("enceladus-wrong", 4), ("mars-move", 40)):
        out.append((name, screens()[name], (16, 16), "RGB", frame))
    for name, frame in (("text-message", 40), ("text-urgent", 30), ("text-menu", 60)):
        out.append((name, text_screens()[name], (32, 8), "1", frame))
    return [(f"{n}-{w}x{h}-{'mono' if m == '1' else 'rgb'}-f{f}", s, (w, h), m, f)
            for n, s, (w, h), m, f in out]


@pytest.mark.parametrize(("name", "screen", "size", "mode", "frame"), cases(),
                         ids=[c[0] for c in cases()])
def test_screen_matches_reference_png(name: str, screen: Screen, size: tuple[int, int],
                                      mode: str, frame: int) -> None:
    device = dummy(width=size[0], height=size[1], mode=mode)
    device.display(render(screen, width=size[0], height=size[1], mode=mode, frame=frame))
    path = GOLDEN / f"{name}.png"
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        device.image.save(path)
    reference = Image.open(path)
    assert reference.mode == device.image.mode
    difference = ImageChops.difference(reference.convert("RGB"), device.image.convert("RGB"))
    assert difference.getbbox() is None


# ---- the drawing's rules, one test each -------------------------------------------------


def pixels(image: Image.Image) -> bytes:
    return image.convert("RGB").tobytes()


def test_mars_board_folds_into_11_by_11_at_one_pixel_a_hex() -> None:
    grid = board_grid("mars", (hex_name(c) for c in hexagon(5).cells))
    assert grid.pixel_size(1) == (11, 11)
    assert len({(x2 // 2, y) for x2, y in grid.positions.values()}) == 91


def test_hex_rows_are_staggered_by_half_a_cell_at_two_pixels() -> None:
    grid = board_grid("mars", (hex_name(c) for c in hexagon(5).cells))
    (x_a, y_a), (x_b, y_b) = grid.positions["0,0"], grid.positions["0,1"]
    assert (y_b - y_a, x_b - x_a) == (1, 1)  # neighbour (0,+1): next row, half a cell right


@pytest.mark.parametrize(("board", "rows"), [("hexagonal", 9), ("trapezoid", 7), ("rhombus", 8)])
def test_uranus_boards_fit_a_16x16_matrix(board: str, rows: int) -> None:
    grid = board_grid(f"uranus-{board}", (hex_name(c) for c in URANUS_BOARDS[board]().cells))
    width, height = grid.pixel_size(1)
    assert height == rows and width <= 16
    assert len({(x2 // 2, y) for x2, y in grid.positions.values()}) == len(grid.positions)


def test_enceladus_rows_count_up_from_the_bottom_with_start_squares_around() -> None:
    positions = enceladus_grid().positions
    assert positions["a10"] == (2, 0) and positions["a1"] == (2, 9)
    assert positions["L1"] == (0, 9) and positions["R1"] == (22, 9)
    assert positions["Ba"] == (2, 10) and positions["A1"][1] == 0 and positions["A10"][1] == 9
    assert enceladus_grid().pixel_size(1) == (16, 11)


def test_wrong_cells_blink_red_twice_as_fast_as_destinations() -> None:
    blue = FLOWERS["blue"]
    assert [blink(blue, "wrong", f) for f in (0, 4, 8)] == [(255, 0, 0), blue, (255, 0, 0)]
    assert [blink(blue, "dest", f) for f in (0, 4, 8)] == [BLACK, BLACK, blue]


def test_wrong_on_a_red_flower_still_stands_out() -> None:
    assert blink(FLOWERS["red"], "wrong", 0) == WHITE


def test_an_empty_destination_lights_up_and_a_flower_destination_goes_dark() -> None:
    assert blink((14, 14, 14), "dest", 0) == GUIDE
    assert blink(FLOWERS["yellow"], "dest", 0) == BLACK


def test_a_gardener_on_a_flower_is_drawn_as_the_gardener() -> None:
    assert piece_colour("M2+red") == MARTIAN
    assert piece_colour("D1") != piece_colour("D2")


def test_highlights_blink_so_the_screen_is_animated() -> None:
    screen = screens()["mars-move"]
    still = Screen(screen.game, screen.layout, screen.cells, message="Go")
    assert render_frame(screen, width=16, height=16, mode="RGB").animated
    assert not render_frame(still, width=16, height=16, mode="RGB").animated


def test_a_short_message_on_a_mono_chain_is_still() -> None:
    screen = Screen("mars", "mars", {}, message="OK?")
    assert not render_frame(screen, width=32, height=8, mode="1").animated


def test_a_long_message_rests_at_its_start_then_scrolls_one_pixel_a_frame() -> None:
    screen = text_screens()["text-message"]
    frames = [render(screen, width=32, height=8, mode="1", frame=f) for f in (0, HOLD, HOLD + 1)]
    assert pixels(frames[0]) == pixels(frames[1])
    shifted = frames[2].crop((0, 0, 31, 8))
    assert pixels(shifted) == pixels(frames[1].crop((1, 0, 32, 8)))


def test_an_urgent_message_replaces_the_scores_on_one_line() -> None:
    urgent = text_screens()["text-urgent"]
    alone = Screen(urgent.game, urgent.layout, urgent.cells, message=urgent.message, urgent=True)
    for frame in (0, 50, 100):
        a = render(urgent, width=32, height=8, mode="1", frame=frame)
        b = render(alone, width=32, height=8, mode="1", frame=frame)
        assert pixels(a) == pixels(b)


def test_a_menu_shows_the_current_choice_first() -> None:
    menu = text_screens()["text-menu"]
    other = Screen(menu.game, menu.layout, menu.cells, message=menu.message, menu=menu.menu,
                   menu_index=1)
    assert pixels(render(menu, width=32, height=8, mode="1")) != pixels(
        render(other, width=32, height=8, mode="1"))


def test_mono_chains_get_text_even_where_a_map_would_fit() -> None:
    screen = screens()["enceladus-move"]
    text_only = Screen("enceladus", "enceladus", {}, message=screen.message, scores=screen.scores,
                       to_move=screen.to_move, extra=screen.extra)
    a = render(screen, width=32, height=16, mode="1")
    assert pixels(a) == pixels(render(text_only, width=32, height=16, mode="1"))


def test_text_is_folded_to_the_ascii_the_fonts_cover() -> None:
    assert plain("Équipe 2 gagne — bravo") == "Equipe 2 gagne ? bravo"


def test_render_returns_the_size_and_mode_asked_for() -> None:
    image = render(screens()["uranus-rhombus"], width=64, height=32, mode="1")
    assert (image.size, image.mode) == ((64, 32), "1")


def test_render_refuses_a_mode_luma_devices_do_not_use() -> None:
    with pytest.raises(ValueError, match="image mode"):
        render(screens()["mars-move"], width=16, height=16, mode="CMYK")


def test_a_screen_keeps_its_own_copy_of_the_cells() -> None:
    cells = {"e5": "M1"}
    screen = Screen("enceladus", "enceladus", cells)
    cells["e5"] = ""
    assert screen.cells["e5"] == "M1"
    with pytest.raises(TypeError):
        screen.cells["e5"] = ""  # type: ignore[index]


def test_a_screen_refuses_an_unknown_highlight_role() -> None:
    with pytest.raises(ValueError, match="role"):
        Screen("mars", "mars", {}, highlights={"0,1": "maybe"})
