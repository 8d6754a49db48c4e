"""Reference images of every screen kind on every matrix size (luma's ``dummy`` device).

Each case renders a :class:`Screen` through ``render`` onto a ``luma.core.device.dummy`` and
compares the device's image with ``tests/golden/<name>.png`` pixel for pixel
(``ImageChops.difference(a, b).getbbox() is None``).  After a deliberate change of the drawing,
regenerate the references and look at them (scaled up, nearest neighbour) before committing:

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
from companion.display.palette import (
    BLACK,
    FLOWERS,
    GUIDE,
    WHITE,
    blink,
    piece_colour,
    player_colour,
)
from companion.display.render import DIE_FACE, FLASH
from companion.display.text import HOLD, Ticker, plain
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
        "enceladus-turn": Screen(
            "enceladus", "enceladus", mid, message="P2: your turn", scores=HANDS, to_move=2),
        "enceladus-over": Screen(
            "enceladus", "enceladus", mid,
            message="Player 1 wins (player 2 cannot reach any flower). OK: new game",
            scores=HANDS, ranking=HANDS),
        "mars-move": Screen(
            "mars", "mars", mars_cells, highlights=mars_dest, message="Move 3 or 5",
            scores=((1, "14 pts"), (2, "9 pts"), (3, "21 pts")), to_move=1,
            extra={"pool": "3 5", "track": "P1 14 (lap 1)"}),
        "mars-pool": Screen(
            "mars", "mars", mars_cells, message="P3: move 1, 2, 3, 4, 5 or 6",
            scores=((1, "14 pts"), (2, "9 pts"), (3, "21 pts")), to_move=3,
            extra={"pool": "1 2 3 4 5 6", "track": "P1 14 P2 9 P3 21"}),
        "mars-over": Screen(
            "mars", "mars", mars_cells, message="Player 3 wins (no moves left). OK: new game",
            scores=((1, "14 pts"), (2, "9 pts"), (3, "21 pts")),
            ranking=((3, "21 pts"), (1, "14 pts"), (2, "9 pts"))),
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
    for name, frame in (("enceladus-move", 8), ("enceladus-wrong", 4), ("mars-move", 40),
                        ("enceladus-turn", 10), ("enceladus-over", 40)):
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


def test_a_gardener_on_a_flower_is_drawn_in_its_players_colour() -> None:
    assert piece_colour("M2+red") == player_colour(2) == piece_colour("D2")
    assert piece_colour("D1") != piece_colour("D2")


def test_highlights_blink_so_the_screen_is_animated() -> None:
    screen = screens()["mars-move"]
    flowers = {c: p for c, p in screen.cells.items() if not p.startswith("M")}  # no flashing
    still = Screen(screen.game, screen.layout, flowers, message="Go")
    assert render_frame(screen, width=16, height=16, mode="RGB").animated
    assert not render_frame(still, width=16, height=16, mode="RGB").animated


def test_a_short_message_on_a_mono_chain_is_still() -> None:
    screen = Screen("mars", "mars", {}, message="OK?")
    assert not render_frame(screen, width=32, height=8, mode="1").animated


def test_a_long_message_rests_at_its_start_then_scrolls_one_pixel_a_frame() -> None:
    screen = text_screens()["text-message"]
    frames = [render(screen, width=32, height=8, mode="1", frame=f) for f in (0, HOLD, HOLD + 1)]
    assert pixels(frames[0]) == pixels(frames[1])
    shifted = frames[2].crop((9, 0, 31, 8))  # the text, right of the turn badge
    assert pixels(shifted) == pixels(frames[1].crop((10, 0, 32, 8)))


def test_an_urgent_message_replaces_the_scores_on_one_line() -> None:
    urgent = text_screens()["text-urgent"]
    alone = Screen(urgent.game, urgent.layout, urgent.cells, message=urgent.message, urgent=True,
                   to_move=urgent.to_move)
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


# ---- whose turn, dice, gardeners, the end -------------------------------------------------


def colours(image: Image.Image, box: tuple[int, int, int, int]) -> set[tuple[int, int, int]]:
    crop = image.convert("RGB").crop(box)
    return {crop.getpixel((x, y)) for x in range(crop.width) for y in range(crop.height)}


@pytest.mark.parametrize(("size", "mode", "badge"), [
    ((16, 16), "RGB", (0, 11, 5, 16)), ((32, 32), "RGB", (0, 23, 8, 31)),
    ((64, 32), "RGB", (0, 23, 8, 31)),
])
def test_the_badge_shows_whose_turn_in_their_colour(size: tuple[int, int], mode: str,
                                                    badge: tuple[int, int, int, int]) -> None:
    for player in (1, 2):
        screen = Screen("enceladus", "enceladus", enceladus_midgame(), message="P1: go on",
                        scores=HANDS, to_move=player)
        shown = colours(render(screen, width=size[0], height=size[1], mode=mode), badge)
        assert player_colour(player) in shown and player_colour(3 - player) not in shown


def test_the_mono_badge_is_an_inverted_digit_in_the_first_module() -> None:
    screen = Screen("enceladus", "enceladus", {}, message="P2: go on", scores=HANDS, to_move=2)
    image = render(screen, width=32, height=8, mode="1").convert("L")
    lit = sum(image.getpixel((x, y)) > 0 for x in range(8) for y in range(8))
    assert 30 < lit < 64  # a lit block with a dark digit in it...
    assert not any(image.getpixel((8, y)) for y in range(8))  # ...then a dark column
    assert pixels(render(screen, width=32, height=8, mode="1")) != pixels(render(
        Screen("enceladus", "enceladus", {}, message="P2: go on", scores=HANDS, to_move=1),
        width=32, height=8, mode="1"))


@pytest.mark.parametrize(("size", "mode"), [((16, 16), "RGB"), ((32, 8), "1"), ((64, 32), "RGB")])
def test_a_prompt_for_the_player_to_move_leaves_the_player_to_the_badge(
        size: tuple[int, int], mode: str) -> None:
    cells = enceladus_midgame()
    prompt = Screen("enceladus", "enceladus", cells, message="P2: go on", scores=HANDS, to_move=2)
    bare = Screen("enceladus", "enceladus", cells, message="go on", scores=HANDS, to_move=2)
    assert pixels(render(prompt, width=size[0], height=size[1], mode=mode)) == pixels(
        render(bare, width=size[0], height=size[1], mode=mode))


def die_digit(image: Image.Image, left: int, top: int) -> str:
    """The digit on the die whose face starts at ``left``, ``top``: its white pixels."""
    return "".join("#" if image.getpixel((x, y)) == WHITE else "."
                   for y in range(top, top + 7) for x in range(left, left + 5))


def test_mars_dice_show_their_values_as_digits() -> None:
    screen = screens()["mars-pool"]
    image = render(screen, width=64, height=32, mode="RGB").convert("RGB")
    faces = [die_digit(image, 23 + 6 * i, 0) for i in range(6)]
    assert len(set(faces)) == 6  # six values, six different faces
    assert image.getpixel((23, 0)) == DIE_FACE
    one = Screen("mars", "mars", screen.cells, extra={"pool": "1"})
    assert die_digit(render(one, width=64, height=32, mode="RGB").convert("RGB"), 23, 0) == \
        faces[0]


def test_a_16x16_matrix_shows_two_dice_and_the_rest_of_the_pool_in_words() -> None:
    screen = screens()["mars-pool"]
    image = render(screen, width=16, height=16, mode="RGB").convert("RGB")
    assert image.getpixel((11, 0)) == DIE_FACE and image.getpixel((11, 6)) == DIE_FACE
    two = Screen("mars", "mars", screen.cells, extra={"pool": "1 2"})
    assert pixels(render(two, width=16, height=16, mode="RGB").crop((11, 0, 16, 11))) == \
        pixels(image.crop((11, 0, 16, 11)))
    long = render_frame(screen, width=16, height=16, mode="RGB")
    short = render_frame(Screen("mars", "mars", screen.cells, message=screen.message,
                                scores=screen.scores, to_move=3,
                                extra={"track": screen.extra["track"]}),
                         width=16, height=16, mode="RGB")
    assert long.cycle > short.cycle  # "Pool 1 2 3 4 5 6" goes by on the ticker


def test_where_not_every_die_fits_each_value_shows_once() -> None:
    cells = screens()["mars-pool"].cells
    pool = render(Screen("mars", "mars", cells, extra={"pool": "2 2 5 5"}), width=16,
                  height=16, mode="RGB")
    values = render(Screen("mars", "mars", cells, extra={"pool": "2 5"}), width=16, height=16,
                    mode="RGB")
    assert pixels(pool.crop((11, 0, 16, 11))) == pixels(values.crop((11, 0, 16, 11)))


def test_each_players_gardener_has_their_colour_and_a_white_mark() -> None:
    cells = {name: "" for name in enceladus_midgame()} | {"e5": "M1", "g5": "M2+red"}
    image = render(Screen("enceladus", "enceladus", cells), width=32, height=32,
                   mode="RGB").convert("RGB")
    grid = enceladus_grid()
    for square, player in (("e5", 1), ("g5", 2)):
        x2, y = grid.positions[square]
        cell = colours(image, (x2, 2 * y, x2 + 2, 2 * y + 2))
        assert player_colour(player) in cell and WHITE in cell
    x2, y = grid.positions["g5"]
    assert image.getpixel((x2 + 1, 2 * y + 1)) == FLOWERS["red"]  # the flower it stands on


def test_at_one_pixel_a_cell_a_gardener_flashes_between_its_colour_and_white() -> None:
    cells = {name: "" for name in enceladus_midgame()} | {"e5": "M2"}
    screen = Screen("enceladus", "enceladus", cells)
    x2, y = enceladus_grid().positions["e5"]
    seen = [render_frame(screen, width=16, height=16, mode="RGB", frame=f) for f in (0, FLASH)]
    assert [f.image.getpixel((x2 // 2, y)) for f in seen] == [player_colour(2), WHITE]
    assert seen[0].animated


def test_the_end_screen_ranks_the_players_by_their_badges() -> None:
    screen = screens()["mars-over"]
    image = render(screen, width=32, height=32, mode="RGB")
    badges = [colours(image, (0, y, 5, y + 5)) for y in (1, 7, 13)]
    assert [player_colour(p) in b for p, b in zip((3, 1, 2), badges, strict=True)] == [True] * 3


def test_the_end_screen_waits_for_the_board_to_be_put_right() -> None:
    over = screens()["enceladus-over"]
    restoring = Screen(over.game, over.layout, over.cells, highlights={"e4": "place"},
                       message="Put the board back as shown", ranking=over.ranking)
    shown = render(restoring, width=16, height=16, mode="RGB")
    assert pixels(shown) != pixels(render(over, width=16, height=16, mode="RGB"))
    x2, y = enceladus_grid().positions["e4"]
    assert shown.getpixel((x2 // 2, y)) == GUIDE  # the map, with the empty square to fill


# ---- the ticker -------------------------------------------------------------------------


def ticked(ticker: Ticker, screen: Screen, tick: int, size: tuple[int, int] = (16, 16),
           mode: str = "RGB") -> Image.Image:
    return render_frame(screen, width=size[0], height=size[1], mode=mode, ticker=ticker,
                        tick=tick).image


def test_under_a_map_the_scores_go_on_scrolling_while_the_turns_go_by() -> None:
    cells = enceladus_midgame()
    ticker = Ticker()
    mine = Screen("enceladus", "enceladus", cells, message="P1: go on", scores=HANDS, to_move=1)
    ticked(ticker, mine, 0)
    before = ticked(ticker, mine, 60)  # the scores are in view by now
    yours = Screen("enceladus", "enceladus", cells, message="P2: your turn", scores=HANDS,
                   to_move=2)
    after = ticked(ticker, yours, 60)
    text = (6, 11, 16, 16)  # the ticker, right of the badge
    assert pixels(after.crop(text)) == pixels(before.crop(text))
    fresh = render(yours, width=16, height=16, mode="RGB")
    assert pixels(after.crop(text)) != pixels(fresh.crop(text))


def test_news_under_a_map_starts_the_line_over_once_it_has_gone_round() -> None:
    cells = enceladus_midgame()
    ticker = Ticker()
    first = Screen("enceladus", "enceladus", cells, message="Set up the board", scores=HANDS)
    start = render_frame(first, width=16, height=16, mode="RGB", ticker=ticker, tick=0)
    news = Screen("enceladus", "enceladus", cells, message="Show the tray", scores=HANDS)
    soon = ticked(ticker, news, start.cycle // 2)  # mid-way: the news takes its place
    assert pixels(soon) != pixels(render(news, width=16, height=16, mode="RGB"))
    later = Screen("enceladus", "enceladus", cells, message="Show the tray again", scores=HANDS)
    round_ = ticked(ticker, later, start.cycle + 1)
    assert pixels(round_) == pixels(render(later, width=16, height=16, mode="RGB"))


@pytest.mark.parametrize("size", [(32, 8), (64, 8)])
def test_on_a_text_matrix_a_new_message_starts_the_line_over(size: tuple[int, int]) -> None:
    ticker = Ticker()
    first = Screen("enceladus", "enceladus", {}, message="P1: your turn", scores=HANDS,
                   to_move=1)
    ticked(ticker, first, 0, size, "1")
    ticked(ticker, first, 50, size, "1")
    new = Screen("enceladus", "enceladus", {}, message="P1: go on", scores=HANDS, to_move=1)
    assert pixels(ticked(ticker, new, 51, size, "1")) == pixels(
        render(new, width=size[0], height=size[1], mode="1"))


def test_a_warning_starts_the_line_over_at_once() -> None:
    ticker = Ticker()
    cells = enceladus_midgame()
    calm = Screen("enceladus", "enceladus", cells, message="P1: go on", scores=HANDS, to_move=1)
    ticked(ticker, calm, 0)
    ticked(ticker, calm, 50)
    warning = Screen("enceladus", "enceladus", cells, message="Not a legal move: put it right",
                     urgent=True, scores=HANDS, to_move=1)
    assert pixels(ticked(ticker, warning, 51)) == pixels(
        render(warning, width=16, height=16, mode="RGB"))


def test_a_line_keeps_its_place_when_only_a_highlight_changes() -> None:
    ticker = Ticker()
    screen = text_screens()["text-message"]
    ticked(ticker, screen, 0, (32, 8), "1")
    lit = Screen(screen.game, screen.layout, screen.cells, message=screen.message,
                 scores=screen.scores, to_move=screen.to_move, highlights={"e5": "dest"})
    assert pixels(ticked(ticker, lit, HOLD + 5, (32, 8), "1")) == pixels(
        render(screen, width=32, height=8, mode="1", frame=HOLD + 5))
