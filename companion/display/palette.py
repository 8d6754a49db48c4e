"""Colours of pieces, highlights, players and text on an RGB matrix (8-bit RGB tuples).

Chosen for LEDs, not screens: saturated primaries that stay apart at one pixel.  A Martian or
gardener is its player's colour (as are the player's discs, badge and score label) with a white
mark, so the Mars ``white`` flower is drawn a lighter grey and ``gray`` a darker one.
"""

from __future__ import annotations

from functools import lru_cache

from companion.rules.base import parse_piece

Colour = tuple[int, int, int]

BLACK: Colour = (0, 0, 0)
WHITE: Colour = (255, 255, 255)

FLOWERS: dict[str, Colour] = {
    "blue": (0, 80, 255),
    "red": (255, 0, 0),
    "yellow": (255, 190, 0),
    "green": (0, 200, 0),
    "purple": (170, 0, 255),
    "white": (160, 160, 160),
    "gray": (60, 60, 60),
}
UNKNOWN_FLOWER: Colour = (255, 120, 180)  # a colour named in config but not listed above
WILD: Colour = (100, 100, 100)  # the grey wildflower (Gardens of Enceladus, action 10)
PEAK: Colour = (150, 220, 255)  # ice
TREE: Colour = (120, 60, 0)
MARK: Colour = WHITE  # what tells a gardener or Martian from a flower of its player's colour
OCCUPIED: Colour = (200, 200, 200)  # a presence sensor's "something is here"
NEUTRAL_DISC: Colour = (50, 50, 50)  # D0: the cover of an action that is off in this game

# faint marks that show the shape of the board where nothing stands
START_SQUARE: Colour = (22, 22, 22)
EMPTY_HEX: Colour = (14, 14, 14)
CENTRE_HEX: Colour = (70, 30, 0)  # Mars' central space: never landed on
ACTION_FREE: Colour = (0, 45, 45)  # an Enceladus action still available
TRAY_SLOT: Colour = (22, 22, 22)

PLAYERS: tuple[Colour, ...] = (
    (255, 100, 0),
    (0, 210, 255),
    (255, 0, 170),
    (170, 255, 0),
    (255, 255, 255),
)

GUIDE: Colour = (0, 255, 255)  # a dark cell to move to or put a piece on: no piece is cyan

ROLE_COLOURS: dict[str, Colour | None] = {
    "dest": None,  # None: the cell flashes, a flower goes dark, an empty cell lights up (GUIDE)
    "place": None,
    "pick": WHITE,
    "restore": (255, 120, 0),
    "wrong": (255, 0, 0),
    "changed": (255, 0, 255),
}
ROLE_PERIODS: dict[str, int] = {role: 8 for role in ROLE_COLOURS} | {"wrong": 4}
"""Frames per blink phase; ``wrong`` blinks twice as fast, to stand out."""

_DARK = 100  # below this sum of channels a cell counts as dark (the faint board marks)

TEXT: Colour = WHITE
URGENT_TEXT: Colour = (255, 40, 40)
MENU_TEXT: Colour = (255, 190, 0)
LABEL_TEXT: Colour = (120, 120, 120)


def player_colour(player: int) -> Colour:
    """The colour of player ``player`` (from 1); white for anyone past the fifth."""
    return PLAYERS[player - 1] if 1 <= player <= len(PLAYERS) else WHITE


def dark(colour: Colour) -> Colour:
    """A dark shade of ``colour``: the block behind a small badge's digit."""
    return (colour[0] * 3 // 10, colour[1] * 3 // 10, colour[2] * 3 // 10)


def gardener_mark(player: int) -> Colour:
    """The mark drawn on player ``player``'s gardener: white, black on a white player."""
    return BLACK if player_colour(player) == MARK else MARK


@lru_cache(maxsize=512)
def piece_colour(piece: str) -> Colour:
    """The colour of a canonical piece (``companion.rules.base``) at one pixel.

    A Martian or gardener is its player's colour, on a flower too (see :func:`gardener_mark`
    for what tells it from a flower).  Raises
    :class:`companion.errors.InvalidStepError` for a name that is not a piece.
    """
    info = parse_piece(piece)
    if info.kind == "flower":
        return FLOWERS.get(info.colour, UNKNOWN_FLOWER)
    if info.kind == "martian":
        return player_colour(info.player)
    if info.kind == "disc":
        return player_colour(info.player) if info.player else NEUTRAL_DISC
    return {"wild": WILD, "peak": PEAK, "tree": TREE, "occupied": OCCUPIED}.get(info.kind, BLACK)


def blink_phase(role: str, frame: int) -> int:
    """The phase a ``role`` highlight's blinking is in at ``frame``: 0 the first (the role's
    colour, :func:`highlighted`), 1 the second (the cell's own colour)."""
    return (frame // ROLE_PERIODS[role]) % 2


def highlighted(normal: Colour, role: str) -> Colour:
    """The colour of a cell of colour ``normal`` in the first phase of a ``role`` highlight:
    the role's colour; for a role without one, or whose colour is the cell's (a red flower
    marked ``wrong``), the cell inverted: a lit cell goes dark, a dark one white (``GUIDE``
    for a role without a colour)."""
    colour = ROLE_COLOURS[role]
    if colour is None:
        return BLACK if sum(normal) > _DARK else GUIDE
    if colour == normal:
        return BLACK if normal == WHITE else WHITE
    return colour


def blink(normal: Colour, role: str, frame: int) -> Colour:
    """The colour of a highlighted cell at ``frame``: :func:`highlighted` in the first phase
    (so a new highlight shows at once), the cell's own colour in the second
    (:func:`blink_phase`)."""
    return normal if blink_phase(role, frame) else highlighted(normal, role)
