"""The table's web page as data: a :class:`Snapshot` of what the matrix shows, drawn as SVG.

Pure and without a server (:mod:`companion.web.server` serves it, ``companion replay --html``
writes it to a file): :func:`snapshot` turns a :class:`~companion.referee.screen.Screen` and
the board link's state into a JSON-ready dict, :func:`board_svg` draws the board from the
same cell positions as the matrix's mini-map (:func:`companion.display.geometry.board_grid`),
squares for Gardens of Enceladus with its start squares, action strip and show tray, pointy-top
hexes for Mars and Uranus, in the matrix's colours (:mod:`companion.display.palette`), and
:func:`page_html` is the page around them (its script and style ship in this package).

Every drawn cell carries what it shows as data attributes, for the page's readers and tests:
``data-cell`` (the cell's name), ``data-piece`` (the canonical piece, ``""`` when empty) and
``data-role`` (the highlight: ``dest``, ``pick``, ``wrong``...; absent when none).
"""

from __future__ import annotations

import html
import json
import math
from importlib import resources
from typing import NotRequired, TypedDict

from companion.display import palette
from companion.display.geometry import board_grid
from companion.display.palette import Colour
from companion.display.render import DIE_FACE, empty_cell_colour  # the matrix's own colours
from companion.referee.referee import SET_UP
from companion.referee.screen import Screen
from companion.rules.base import parse_piece

SQUARE = 40
"""Pixels (SVG units) of a square cell."""

HEX_RADIUS = 22
"""Centre-to-corner distance of a hex cell, in SVG units."""

LINK_WORDS = {"waiting": "waiting for the board", "up": "board connected",
              "down": "board disconnected", "silent": "board silent",
              "record": "replayed from the journal"}
"""What the page says of the board link, by :attr:`companion.daemon.service.Service.board`
(``record``: a game record, no board)."""

PIN_EXTRA = "web"
"""The screen extra that shows the control PIN on the matrix; never sent to the page."""

class Snapshot(TypedDict):
    """One state of the page, JSON-ready: ``seq`` (from 1, rising), ``game``, ``layout``,
    ``message``, ``urgent``, ``to_move`` (0: nobody), ``menu`` and ``menu_index``, ``scores``
    and ``ranking`` (``[[player, text], ...]``, ranking best first and only once the game is
    over), ``extra`` (name -> text: ``pool``, ``tube``, ``track``, ``decks``...), ``link`` (a
    key of :data:`LINK_WORDS`), ``steps`` (steps committed), ``board`` (the SVG text),
    ``dice`` (the Mars dice pool as SVG, ``""`` without one) and ``to_fill``, while a setup is
    being laid out as the companion shows it, the cells still to fill (0 otherwise: the page
    then draws the board at its full size, as a guide).  The live page's state adds the
    ``record`` of steps (``[[player, step], ...]``) and the score ``chart``; a position of
    a :func:`record`, its ``step``."""

    seq: int
    game: str
    layout: str
    message: str
    urgent: bool
    to_move: int
    menu: list[str]
    menu_index: int
    scores: list[list[int | str]]
    ranking: list[list[int | str]]
    extra: dict[str, str]
    link: str
    link_words: str
    steps: int
    board: str
    dice: str
    to_fill: int
    record: NotRequired[list[list[int | str]]]
    chart: NotRequired[str]
    step: NotRequired[str]


class Record(TypedDict):
    """A game record as the page steps through it (:func:`record`); a finished game's adds
    its journal's ``name``."""

    positions: list[Snapshot]
    chart: str
    over: bool
    name: NotRequired[str]


def _css(colour: Colour) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def _lift(colour: Colour) -> Colour:
    """An LED's faint mark made visible on a screen (a dim matrix pixel is nearly black)."""
    r, g, b = colour
    return (min(255, 2 * r + 24), min(255, 2 * g + 24), min(255, 2 * b + 24))


def _hexagon(radius: float) -> str:
    corners = (
        (radius * math.cos(math.radians(60 * i - 30)), radius * math.sin(math.radians(60 * i - 30)))
        for i in range(6)
    )
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)


def _piece_svg(piece: str, size: float) -> str:
    """The piece drawn around (0, 0) in a cell ``size`` across; ``""`` for an empty cell."""
    if not piece:
        return ""
    info = parse_piece(piece)
    colour = _css(palette.piece_colour(piece))
    r = size * 0.32
    if info.kind in ("flower", "wild"):  # ringed: Mars' grey flower on a grey hex
        return f'<circle r="{r:.1f}" fill="{colour}" stroke="#999" stroke-width="1"/>'
    if info.kind == "peak":
        return (f'<polygon points="0,{-r * 1.1:.1f} {r:.1f},{r * 0.8:.1f} {-r:.1f},{r * 0.8:.1f}"'
                f' fill="{colour}"/>')
    if info.kind == "tree":
        return (f'<rect x="{-r * 0.2:.1f}" y="0" width="{r * 0.4:.1f}" height="{r:.1f}" '
                f'fill="{colour}"/><circle cy="{-r * 0.3:.1f}" r="{r * 0.75:.1f}" '
                f'fill="#2f7a2f" stroke="{colour}" stroke-width="2"/>')
    if info.kind == "martian":
        mark = _css(palette.gardener_mark(info.player))
        under = ""
        if info.colour:  # the flower under a gardener shows round it
            under = (f'<circle r="{size * 0.44:.1f}" '
                     f'fill="{_css(palette.piece_colour(info.colour))}"/>')
        return (f'{under}<circle r="{r * 1.05:.1f}" fill="{colour}" stroke="{mark}" '
                f'stroke-width="3"/><text class="who" dy="0.35em" fill="{mark}">'
                f'{info.player}</text>')
    if info.kind == "disc":
        return (f'<circle r="{r * 0.9:.1f}" fill="{colour}" stroke="#000" stroke-width="2"/>'
                + (f'<text class="who" dy="0.35em">{info.player}</text>' if info.player else ""))
    return f'<rect x="{-r:.1f}" y="{-r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" ' \
           f'fill="{colour}"/>'  # occupied: a presence sensor's "something is here"


def board_svg(screen: Screen) -> str:
    """The board of ``screen`` as an ``<svg>`` element: every cell of its layout at the
    matrix's positions, its piece, its highlight (a ring, blinking through the page's style)
    and, on the Enceladus side zones, the slot's name."""
    grid = board_grid(screen.layout, screen.cells)
    square = screen.layout == "enceladus"
    step_x: float
    step_y: float
    if square:
        step_x, step_y, margin = SQUARE / 2, SQUARE, SQUARE / 2
        size: float = SQUARE
    else:
        step_x, step_y = HEX_RADIUS * math.sqrt(3) / 2, HEX_RADIUS * 1.5
        margin, size = HEX_RADIUS, HEX_RADIUS * math.sqrt(3)
    width = (grid.width2 - 2) * step_x + 2 * margin if grid.positions else 0
    height = (grid.height - 1) * step_y + 2 * margin if grid.positions else 0
    shape = (f'<rect x="{-SQUARE / 2 + 1}" y="{-SQUARE / 2 + 1}" width="{SQUARE - 2}" '
             f'height="{SQUARE - 2}" rx="3"' if square
             else f'<polygon points="{_hexagon(HEX_RADIUS - 1)}"')
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="board" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" data-layout="{screen.layout}">']
    for name, (x2, y) in grid.positions.items():
        piece = screen.cells.get(name, "")
        role = screen.highlights.get(name)
        x, y_px = margin + x2 * step_x, margin + y * step_y
        attrs = f'data-cell="{html.escape(name)}" data-piece="{html.escape(piece)}"'
        if role:
            attrs += f' data-role="{role}"'
        fill = _css(_lift(empty_cell_colour(screen.layout, name)))
        parts.append(f'<g class="cell" {attrs} transform="translate({x:.1f},{y_px:.1f})">'
                     f'{shape} fill="{fill}"/>{_piece_svg(piece, size)}')
        if square and name[0] in "AT":
            parts.append(f'<text class="slot" x="{-SQUARE / 2 + 3}" y="{-SQUARE / 2 + 10}">'
                         f'{name}</text>')
        if role:
            colour = palette.ROLE_COLOURS[role] or palette.GUIDE
            parts.append(f'{shape} class="role {role}" fill="none" stroke="{_css(colour)}"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def dice_svg(pool: str) -> str:
    """The Mars dice pool (``"2 5 5"``) as white digits on red dice, ``""`` for none."""
    values = pool.split()
    if not values:
        return ""
    face, pitch = 36, 42
    dice = "".join(
        f'<g data-die="{html.escape(v)}" transform="translate({i * pitch},0)">'
        f'<rect width="{face}" height="{face}" rx="6" fill="{_css(DIE_FACE)}"/>'
        f'<text x="{face / 2}" y="{face / 2}" dy="0.35em">{html.escape(v)}</text></g>'
        for i, v in enumerate(values))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="dice" '
            f'viewBox="0 0 {len(values) * pitch - (pitch - face)} {face}">{dice}</svg>')


def snapshot(screen: Screen, *, seq: int, link: str, steps: int) -> Snapshot:
    """What the page shows for ``screen`` (see :data:`Snapshot`); ``link`` is the board
    link's state, ``steps`` the steps committed so far."""
    return {
        "seq": seq,
        "game": screen.game,
        "layout": screen.layout,
        "message": screen.message,
        "urgent": screen.urgent,
        "to_move": screen.to_move,
        "menu": list(screen.menu),
        "menu_index": screen.menu_index,
        "scores": [list(s) for s in screen.scores],
        "ranking": [list(r) for r in screen.ranking],
        "extra": {k: v for k, v in screen.extra.items() if k != PIN_EXTRA},
        "link": link,
        "link_words": LINK_WORDS.get(link, link),
        "steps": steps,
        "board": board_svg(screen),
        "dice": dice_svg(screen.extra.get("pool", "")),
        "to_fill": sum(role == "place" for role in screen.highlights.values())
        if screen.message == SET_UP else 0,
    }


def score_value(text: str) -> int | None:
    """The number a score line charts: its first whole number (``"14 pts"`` -> 14; an
    Enceladus hand ``"3-4-5-5-6"`` -> 3, its lowest colour count, which ranks first);
    ``None`` when it has none."""
    digits = ""
    for ch in text:
        if ch.isdigit() or (ch == "-" and not digits):
            digits += ch
        elif digits:
            break
    try:
        return int(digits)
    except ValueError:
        return None


def chart_svg(scores: list[tuple[tuple[int, str], ...]]) -> str:
    """Every player's score (:func:`score_value`) after every step as a line in their
    colour: ``scores[i]`` is the scores after step ``i`` (0: the setup)."""
    series: dict[int, list[tuple[int, int]]] = {}
    for step, after in enumerate(scores):
        for player, text in after:
            value = score_value(text)
            if value is not None:
                series.setdefault(player, []).append((step, value))
    values = [v for points in series.values() for _, v in points]
    if not values:
        return ""
    width, height, pad = 600, 200, 24
    low, high = min(0, *values), max(1, *values)
    last = max(1, len(scores) - 1)

    def x(step: int) -> float:
        return pad + step * (width - 2 * pad) / last

    def y(value: int) -> float:
        return height - pad - (value - low) * (height - 2 * pad) / (high - low)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} '
             f'{height}"><line x1="{pad}" y1="{y(low):.1f}" x2="{width - pad}" '
             f'y2="{y(low):.1f}" stroke="#555"/><text class="axis" x="{pad - 4}" '
             f'y="{y(high):.1f}">{high}</text><text class="axis" x="{pad - 4}" '
             f'y="{y(low):.1f}">{low}</text>']
    for player, points in sorted(series.items()):
        line = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in points)
        parts.append(f'<polyline data-player="{player}" points="{line}" fill="none" '
                     f'stroke="{_css(palette.player_colour(player))}" stroke-width="2"/>')
    parts.append(f'<line id="chart-cursor" x1="{pad}" x2="{pad}" y1="{pad / 2}" '
                 f'y2="{height - pad}" stroke="#fff" stroke-dasharray="3 3" '
                 f'data-left="{pad}" data-step="{(width - 2 * pad) / last:.3f}"/></svg>')
    return "".join(parts)


def record(screens: list[Screen], steps: list[str]) -> Record:
    """A game record as the page steps through it, JSON-ready: ``positions``, the
    :data:`Snapshot` after every step (each with its ``step`` notation), and ``chart``, the
    score chart, and ``over``, whether the game has ended (its last position shows the
    ranking), for the page to say a game in progress of one that has not; ``screens[i]`` is
    the position after step ``i`` (0: the setup), ``steps[i]`` that step's notation (``""``
    for the setup)."""
    positions = []
    for i, (screen, step) in enumerate(zip(screens, steps, strict=True)):
        position = snapshot(screen, seq=i + 1, link="record", steps=i)
        position["step"] = step
        positions.append(position)
    return {"positions": positions,
            "chart": chart_svg([tuple(screen.scores) for screen in screens]),
            "over": bool(screens and screens[-1].ranking)}


def record_html(title: str, screens: list[Screen], steps: list[str]) -> str:
    """The game record (:func:`record`) as one self-contained page, stepped through forwards
    and backwards, with the score chart."""
    return page_html(title, initial=record(screens, steps))


def _asset(name: str) -> str:
    return resources.files("companion.web").joinpath("static", name).read_text("utf-8")


def page_html(title: str, *, initial: Record | None = None) -> str:
    """The whole page, its script and style inline (nothing is fetched from elsewhere).

    Without ``initial`` the page follows the table live (server-sent events from
    ``events``) and steps through the game so far and the finished games on request; with a
    :func:`record` it shows that game alone, stepped through with its buttons (a game record
    in a file)."""
    data = "" if initial is None else json.dumps(initial, separators=(",", ":"))
    # "</" inside a script element would end it: JSON allows the escaped form.
    data = data.replace("</", "<\\/")
    return (_asset("page.html")
            .replace("{{title}}", html.escape(title))
            .replace("{{style}}", _asset("page.css"))
            .replace("{{script}}", _asset("page.js"))
            .replace("{{record}}", data))
