"""Board wire protocol v1: messages, the line parser and the encoder (``hardware/PROTOCOL.md``).

Pure code: bytes in, messages out, no I/O and no threads.  A *line* is printable ASCII,
``<body>*HH`` terminated by ``\\n`` (``\\r\\n`` accepted), at most :data:`MAX_LINE` bytes
before the terminator; ``HH`` is the XOR of every body byte as two hex digits
(:func:`checksum`).  Piece codes on the wire are decoded into the canonical piece names of
:mod:`companion.rules.base`, so nothing downstream of this module knows a wire code.

Three entry points:

- :class:`LineParser` (``feed(data) -> list[Message | LineRefused]``) for a byte stream;
  it never raises for bad input and keeps its memory bounded whatever arrives.
- :func:`decode_line` (one line -> one message, raises :class:`ProtocolError`).
- :func:`encode` (one message -> the framed line, both directions: the Pi's commands and,
  for the simulator and the reference firmware's host tests, the board's messages).

Example::

    >>> encode(FieldUpdate(12, "e6", "M1+red"))
    b'F 12 e6 1r*75\\n'
    >>> LineParser().feed(b"HB 7 1500*39\\r\\n")
    [Heartbeat(seq=7, uptime_ms=1500)]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Final, TypeAlias

from companion.errors import ProtocolError
from companion.rules import LAYOUTS as LAYOUT_NAMES
from companion.rules import layout_cells
from companion.rules.base import Cell, Piece

VERSION: Final = 1
"""The major protocol version this module speaks (the ``1`` in ``HELLO <seq> 1 ...``)."""

MAX_LINE: Final = 1024
"""Longest line in bytes, body and ``*HH`` included, the terminator not."""

SEQ_MODULO: Final = 10000
"""Board sequence numbers run ``0..9999`` and wrap to ``0``."""

UPTIME_MODULO: Final = 2**32
"""Heartbeat uptimes are unsigned 32-bit milliseconds (a microcontroller's ``millis()``)."""

MAX_DICE: Final = 6
"""A ``DICE`` message lists at most this many dice."""

SENSING: Final = ("identity", "presence")
"""Sensing modes a board declares in its hello."""

_COLOURS: Final = {
    "b": "blue",
    "r": "red",
    "y": "yellow",
    "g": "green",
    "p": "purple",
    "w": "white",
    "a": "gray",
}


def _piece_codes() -> dict[str, Piece]:
    codes: dict[str, Piece] = {".": "", "x": "wild", "^": "peak", "T": "tree", "#": "occupied"}
    codes.update(_COLOURS)
    for player in range(1, 6):
        codes[str(player)] = f"M{player}"
        for code, colour in _COLOURS.items():
            codes[f"{player}{code}"] = f"M{player}+{colour}"
    for player in range(6):
        codes[f"D{player}"] = f"D{player}"
    return codes


PIECE_CODES: Final[Mapping[str, Piece]] = MappingProxyType(_piece_codes())
"""Wire code -> canonical piece name (``"1r" -> "M1+red"``), see PROTOCOL.md, Piece codes."""

CODES: Final[Mapping[Piece, str]] = MappingProxyType({p: c for c, p in PIECE_CODES.items()})
"""Canonical piece name -> wire code, the inverse of :data:`PIECE_CODES`."""


class _Layouts(Mapping[str, tuple[Cell, ...]]):
    """Layout name -> its cells in dump order, from the rules cores (one definition), each
    game imported only when its layout is first asked for."""

    def __getitem__(self, layout: str) -> tuple[Cell, ...]:
        return layout_cells(layout)

    def __iter__(self) -> Iterator[str]:
        return iter(LAYOUT_NAMES)

    def __len__(self) -> int:
        return len(LAYOUT_NAMES)


LAYOUTS: Final[Mapping[str, tuple[Cell, ...]]] = _Layouts()
"""Layout name (as in ``HELLO``) -> its cells in dump order: 146, 91, 61, 63 and 64 cells
(:func:`companion.rules.layout_cells`)."""


@lru_cache(maxsize=len(LAYOUT_NAMES))
def _layout_set(layout: str) -> frozenset[Cell]:
    return frozenset(layout_cells(layout))


_CELL_NAME = re.compile(
    r"[a-j](?:10|[1-9])|[LRA](?:10|[1-9])|B[a-j]|T[1-6]|-?[0-9]{1,2},-?[0-9]{1,2}"
)
"""The cell names of every layout: garden squares, start squares, action slots, tray cells
(Enceladus) and ``q,r`` hexes; without a layout a cell is checked against these."""

_TOKEN = re.compile(r"[!-)+-~]{1,32}")  # printable, no space, no '*'
_SEQ = re.compile(r"[0-9]{1,4}")
_DIGITS = re.compile(r"[0-9]{1,10}")
_VERSION = re.compile(r"([0-9]{1,3})(?:\.[0-9]{1,3})?")
_KIND = re.compile(r"[A-Z][A-Z0-9_]*\??")
_RGB = re.compile(r"[0-9a-fA-F]{6}")
_HEX2 = re.compile(r"[0-9a-fA-F]{2}")
_ERROR = re.compile(r" *(\S+) +(\S+)(?: +(.*?))? *")


# --- messages --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """``HELLO <seq> <version> <layout> <sensing> <board-id> <firmware>``: who the board is.

    ``version`` is ``"<major>"`` or ``"<major>.<minor>"`` (:attr:`major`; a board of
    another major than :data:`VERSION` is the referee's to refuse); ``layout`` a key of
    :data:`LAYOUTS`; ``sensing`` one of :data:`SENSING`; ``board_id`` and ``firmware`` are
    tokens of 1-32 printable characters without spaces or ``*``.  Resets the sequence check.
    """

    seq: int
    version: str
    layout: str
    sensing: str
    board_id: str
    firmware: str

    @property
    def major(self) -> int:
        """The major protocol version the board speaks (the ``2`` of ``2.1``)."""
        return int(self.version.partition(".")[0])


@dataclass(frozen=True, slots=True)
class Dump:
    """``DUMP <seq> <code> ...``: every cell of the layout, in its dump order.

    ``pieces`` holds one canonical piece name per cell of :data:`LAYOUTS` ``[layout]``.
    """

    seq: int
    pieces: tuple[Piece, ...]

    def board(self, layout: str) -> dict[Cell, Piece]:
        """The dump as ``{cell: piece}`` for ``layout``.

        Raises :class:`ProtocolError` when ``layout`` is unknown or has another cell count.
        """
        cells = _layout_cells(layout)
        if len(cells) != len(self.pieces):
            raise ProtocolError(_count_mismatch(len(self.pieces), layout))
        return dict(zip(cells, self.pieces, strict=True))


@dataclass(frozen=True, slots=True)
class FieldUpdate:
    """``F <seq> <cell> <code>``: the piece on one cell changed (after the board's debounce)."""

    seq: int
    cell: Cell
    piece: Piece


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """``HB <seq> <uptime-ms>``: sent every second; ``uptime_ms`` wraps at 2**32."""

    seq: int
    uptime_ms: int


@dataclass(frozen=True, slots=True)
class BoardErrorMessage:
    """``ERR <seq> <code> [<text>]``: the board reports a problem of its own.

    ``code`` is a token (``"E12"``, ``"sensor"``); ``text`` free printable text, no ``*``,
    without leading or trailing spaces (may be empty).
    """

    seq: int
    code: str
    text: str


@dataclass(frozen=True, slots=True)
class Dice:
    """``DICE <seq> [<v> ...]``: the values of the 0-6 dice in the dice tray.

    Each value is one decimal digit; the referee, not the parser, checks they are 1-6.
    """

    seq: int
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Card:
    """``CARD <seq> <card-id>``: a card held to the card reader (``"U17"``)."""

    seq: int
    card_id: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """A checksummed line of a message type this version does not know.

    A newer minor version may add message types; they are ignored (and logged) rather than
    refused.  ``fields`` are the space-separated fields after ``kind``.
    """

    kind: str
    fields: tuple[str, ...]

    @property
    def seq(self) -> int | None:
        """The sequence number, if the first field is one (every board message has it)."""
        if self.fields and _SEQ.fullmatch(self.fields[0]):
            return int(self.fields[0])
        return None


@dataclass(frozen=True, slots=True)
class RequestDump:
    """``DUMP?`` (Pi -> board): send a full dump now."""


@dataclass(frozen=True, slots=True)
class RequestHello:
    """``HELLO?`` (Pi -> board): send the hello now."""


@dataclass(frozen=True, slots=True)
class SetLed:
    """``LED <cell> <rrggbb>`` / ``LED <cell> off`` (Pi -> board): light or clear one cell.

    ``colour`` is six lowercase hex digits (``"ff8800"``) or ``None`` for off.
    """

    cell: Cell
    colour: str | None


@dataclass(frozen=True, slots=True)
class LedsOff:
    """``LEDS off`` (Pi -> board): every cell LED off."""


BoardToPi: TypeAlias = Hello | Dump | FieldUpdate | Heartbeat | BoardErrorMessage | Dice | Card
"""The messages a board sends; each has a ``seq``."""

PiToBoard: TypeAlias = RequestDump | RequestHello | SetLed | LedsOff
"""The commands the Pi sends."""

Message: TypeAlias = BoardToPi | PiToBoard | Unknown
"""Anything :func:`decode_line` returns and :func:`encode` accepts."""


@dataclass(frozen=True, slots=True)
class LineRefused:
    """A line the parser refused: ``reason`` is a sentence for a maker, ``excerpt`` the
    first bytes of the line made printable (non-printable bytes as ``\\xNN``)."""

    reason: str
    excerpt: str


# --- framing ---------------------------------------------------------------------------------


def checksum(body: str | bytes) -> str:
    """The checksum of a line body: the XOR of its bytes as two uppercase hex digits.

    >>> checksum("DUMP?")
    '33'

    Raises :class:`ProtocolError` for a ``str`` that is not ASCII, or a body that is neither
    text nor bytes.
    """
    data = _ascii(body) if isinstance(body, str) else _bytes(body)
    value = 0
    for byte in data:
        value ^= byte
    return f"{value:02X}"


def frame(body: str) -> bytes:
    """``body`` framed as a line: ``<body>*HH\\n``.

    Raises :class:`ProtocolError` when the body is not printable ASCII, contains ``*`` or
    the line would exceed :data:`MAX_LINE` bytes, or is not text at all.
    """
    if not isinstance(body, str):
        raise ProtocolError(f"a line body is text, not {type(body).__name__}")
    problem = _body_problem(body)
    if problem:
        raise ProtocolError(f"cannot send {_excerpt(body.encode('utf-8', 'replace'))!r}: {problem}")
    line = f"{body}*{checksum(body)}"
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a line of {len(line)} bytes is longer than {MAX_LINE}")
    return line.encode("ascii") + b"\n"


def _ascii(text: str) -> bytes:
    """``text`` as ASCII bytes; raises :class:`ProtocolError` naming the first other character."""
    try:
        return text.encode("ascii")
    except UnicodeEncodeError as error:
        raise ProtocolError(
            f"character {text[error.start]!r} at position {error.start} is not ASCII"
        ) from None


def _bytes(data: object) -> bytes:
    """``data`` (bytes, a bytearray or a memoryview) as bytes; raises :class:`ProtocolError`
    for anything else."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    raise ProtocolError(f"a line is text or bytes, not {type(data).__name__}")


def _shown(message: object, limit: int = 120) -> str:
    """``repr(message)`` cut to ``limit`` characters, for an error (whatever its fields)."""
    try:
        text = repr(message)
    except Exception:  # a field whose repr fails (an int too long to print...)
        return f"a {type(message).__name__}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _body_problem(body: str) -> str:
    for index, char in enumerate(body):
        if not " " <= char <= "~":
            return f"character {char!r} at position {index} is not printable ASCII"
    if "*" in body:
        return "'*' is reserved for the checksum"
    return ""


def _excerpt(data: bytes, limit: int = 40) -> str:
    """The first ``limit`` bytes, printable ASCII kept, the rest as ``\\xNN``."""
    text = "".join(chr(b) if 0x20 <= b <= 0x7E else f"\\x{b:02x}" for b in data[:limit])
    return text + ("..." if len(data) > limit else "")


# --- decoding --------------------------------------------------------------------------------


def decode_line(line: str | bytes, layout: str | None = None) -> Message:
    """Decode one framed line (with or without its ``\\n`` / ``\\r\\n``).

    With ``layout`` (a key of :data:`LAYOUTS`) a ``DUMP`` must have that layout's cell
    count and a cell must belong to it; without, any cell of any layout is accepted.

    Raises :class:`ProtocolError` whose text says what is wrong, e.g.
    ``"checksum 3A expected, line says 4B"`` or ``"'z' is not a piece code (cell 5)"``,
    whatever ``line`` and ``layout`` are (a ``str`` that is not ASCII, not a line at all).
    """
    if layout is not None:
        _layout_cells(layout)
    if isinstance(line, str):
        for index, char in enumerate(line.removesuffix("\n").removesuffix("\r")):
            if not " " <= char <= "~":
                raise ProtocolError(f"character {char!r} at position {index} is not printable "
                                    "ASCII")
        data = line.encode("ascii")
    else:
        data = _bytes(line)
    data = data.removesuffix(b"\n").removesuffix(b"\r")
    if len(data) > MAX_LINE:
        raise ProtocolError(f"line of {len(data)} bytes is longer than {MAX_LINE}")
    for index, byte in enumerate(data):
        if not 0x20 <= byte <= 0x7E:
            raise ProtocolError(f"byte 0x{byte:02x} at position {index} is not printable ASCII")
    text = data.decode("ascii")
    body, star, given = text.partition("*")
    if not star:
        raise ProtocolError("no checksum: a line ends with *HH, the XOR of the bytes before *")
    if not _HEX2.fullmatch(given):
        raise ProtocolError(f"checksum {given!r} is not two hex digits after a single *")
    expected = checksum(body)
    if given.upper() != expected:
        raise ProtocolError(f"checksum {expected} expected, line says {given.upper()}")
    return _decode_body(body, layout)


def _decode_body(body: str, layout: str | None) -> Message:
    kind, _, rest = body.strip(" ").partition(" ")
    if kind == "ERR":
        return _decode_error(rest)
    fields = tuple(rest.split())
    decoder = _DECODERS.get(kind)
    if decoder is not None:
        return decoder(fields, layout)
    if not _KIND.fullmatch(kind):
        raise ProtocolError(f"{kind!r} is not a message type (types are upper case, e.g. HELLO)")
    return Unknown(kind, fields)


def _expect(kind: str, fields: tuple[str, ...], names: tuple[str, ...]) -> None:
    if len(fields) != len(names):
        usage = " ".join((kind, *(f"<{name}>" for name in names)))
        raise ProtocolError(
            f"{kind} takes {len(names)} field(s) ({usage}), the line has {len(fields)}"
        )


def _seq(text: str) -> int:
    if not _SEQ.fullmatch(text):
        raise ProtocolError(f"sequence number {text!r} is not a whole number 0..{SEQ_MODULO - 1}")
    return int(text)


def _token(what: str, text: str) -> str:
    if not _TOKEN.fullmatch(text):
        raise ProtocolError(f"{what} {text!r} is not 1-32 printable characters without spaces")
    return text


def _piece(code: str, where: str) -> Piece:
    piece = PIECE_CODES.get(code)
    if piece is None:
        raise ProtocolError(f"{code!r} is not a piece code ({where}); see PROTOCOL.md, Piece codes")
    return piece


def _layout_cells(layout: str) -> tuple[Cell, ...]:
    cells = LAYOUTS.get(layout) if isinstance(layout, str) else None
    if cells is None:
        raise ProtocolError(f"unknown layout {_shown(layout)}; one of {', '.join(LAYOUTS)}")
    return cells


def _count_mismatch(count: int, layout: str) -> str:
    return f"the dump has {count} cells, the {layout} layout has {len(LAYOUTS[layout])}"


def _cell(text: str, layout: str | None) -> Cell:
    known = _CELL_NAME.fullmatch(text) if layout is None else text in _layout_set(layout)
    if not known:
        where = "any layout" if layout is None else f"the {layout} layout"
        raise ProtocolError(f"{text!r} is not a cell of {where}")
    return text


def _decode_hello(fields: tuple[str, ...], layout: str | None) -> Hello:
    _expect("HELLO", fields, ("seq", "version", "layout", "sensing", "board-id", "firmware"))
    seq, version, board_layout, sensing, board_id, firmware = fields
    match = _VERSION.fullmatch(version)
    if not match:
        raise ProtocolError(f"protocol version {version!r} is not a number like 1 or 1.2")
    _layout_cells(board_layout)
    if sensing not in SENSING:
        raise ProtocolError(f"unknown sensing mode {sensing!r}; one of {', '.join(SENSING)}")
    return Hello(
        _seq(seq),
        version,
        board_layout,
        sensing,
        _token("board id", board_id),
        _token("firmware", firmware),
    )


def _decode_dump(fields: tuple[str, ...], layout: str | None) -> Dump:
    if not fields:
        raise ProtocolError("DUMP takes a sequence number and one code per cell")
    seq, codes = _seq(fields[0]), fields[1:]
    if not codes:
        raise ProtocolError("the dump lists no cells")
    if layout is not None and len(codes) != len(LAYOUTS[layout]):
        raise ProtocolError(_count_mismatch(len(codes), layout))
    return Dump(seq, tuple(_piece(code, f"dump cell {n}") for n, code in enumerate(codes, 1)))


def _decode_field(fields: tuple[str, ...], layout: str | None) -> FieldUpdate:
    _expect("F", fields, ("seq", "cell", "code"))
    return FieldUpdate(_seq(fields[0]), _cell(fields[1], layout), _piece(fields[2], fields[1]))


def _decode_heartbeat(fields: tuple[str, ...], layout: str | None) -> Heartbeat:
    _expect("HB", fields, ("seq", "uptime-ms"))
    uptime = fields[1]
    if not _DIGITS.fullmatch(uptime) or int(uptime) >= UPTIME_MODULO:
        raise ProtocolError(f"uptime {uptime!r} is not a whole number of ms below 2^32")
    return Heartbeat(_seq(fields[0]), int(uptime))


def _decode_error(rest: str) -> BoardErrorMessage:
    match = _ERROR.fullmatch(rest)
    if not match:
        raise ProtocolError("ERR takes a sequence number, a code and a text (ERR <seq> <code> ...)")
    seq, code, text = match.groups(default="")
    return BoardErrorMessage(_seq(seq), _token("error code", code), text)


def _decode_dice(fields: tuple[str, ...], layout: str | None) -> Dice:
    if not fields:
        raise ProtocolError("DICE takes a sequence number and 0 to 6 dice values")
    values = fields[1:]
    if len(values) > MAX_DICE:
        raise ProtocolError(f"the dice tray holds at most {MAX_DICE} dice, not {len(values)}")
    for value in values:
        if len(value) != 1 or not value.isdigit():
            raise ProtocolError(f"die value {value!r} is not a single digit")
    return Dice(_seq(fields[0]), tuple(int(value) for value in values))


def _decode_card(fields: tuple[str, ...], layout: str | None) -> Card:
    _expect("CARD", fields, ("seq", "card-id"))
    return Card(_seq(fields[0]), _token("card id", fields[1]))


def _decode_request_dump(fields: tuple[str, ...], layout: str | None) -> RequestDump:
    _expect("DUMP?", fields, ())
    return RequestDump()


def _decode_request_hello(fields: tuple[str, ...], layout: str | None) -> RequestHello:
    _expect("HELLO?", fields, ())
    return RequestHello()


def _decode_led(fields: tuple[str, ...], layout: str | None) -> SetLed:
    _expect("LED", fields, ("cell", "rrggbb|off"))
    cell, colour = _cell(fields[0], layout), fields[1]
    if colour == "off":
        return SetLed(cell, None)
    if not _RGB.fullmatch(colour):
        raise ProtocolError(f"LED colour {colour!r} is not six hex digits rrggbb or off")
    return SetLed(cell, colour.lower())


def _decode_leds(fields: tuple[str, ...], layout: str | None) -> LedsOff:
    if fields != ("off",):
        raise ProtocolError("LEDS takes one field, off (LEDS off)")
    return LedsOff()


_DECODERS: Final[Mapping[str, Callable[[tuple[str, ...], str | None], Message]]] = MappingProxyType(
    {
        "HELLO": _decode_hello,
        "DUMP": _decode_dump,
        "F": _decode_field,
        "HB": _decode_heartbeat,
        "DICE": _decode_dice,
        "CARD": _decode_card,
        "DUMP?": _decode_request_dump,
        "HELLO?": _decode_request_hello,
        "LED": _decode_led,
        "LEDS": _decode_leds,
    }
)


# --- encoding --------------------------------------------------------------------------------


def _code(piece: Piece) -> str:
    code = CODES.get(piece)
    if code is None:
        raise ProtocolError(f"piece {_shown(piece)} has no wire code")
    return code


def _body(message: Message) -> str:
    match message:
        case Hello(seq, version, layout, sensing, board_id, firmware):
            return f"HELLO {seq} {version} {layout} {sensing} {board_id} {firmware}"
        case Dump(seq, pieces):
            return " ".join(("DUMP", str(seq), *(_code(piece) for piece in pieces)))
        case FieldUpdate(seq, cell, piece):
            return f"F {seq} {cell} {_code(piece)}"
        case Heartbeat(seq, uptime_ms):
            return f"HB {seq} {uptime_ms}"
        case BoardErrorMessage(seq, code, text):
            return f"ERR {seq} {code} {text}" if text else f"ERR {seq} {code}"
        case Dice(seq, values):
            return " ".join(("DICE", str(seq), *(str(value) for value in values)))
        case Card(seq, card_id):
            return f"CARD {seq} {card_id}"
        case RequestDump():
            return "DUMP?"
        case RequestHello():
            return "HELLO?"
        case SetLed(cell, colour):
            return f"LED {cell} {colour or 'off'}"
        case LedsOff():
            return "LEDS off"
        case Unknown(kind, fields):
            return " ".join((kind, *fields))
    raise ProtocolError(f"{message!r} is not a protocol message")


def encode(message: Message) -> bytes:
    """The framed line for ``message``: ASCII bytes ending ``*HH\\n``.

    Raises :class:`ProtocolError` when the message cannot be sent as is (a piece with no
    wire code, a sequence number out of range, a text with ``*``, a field of the wrong
    type...); the message is checked by decoding the line again, so whatever ``encode``
    returns ``decode_line`` reads back equal.
    """
    try:
        line = frame(_body(message))
    except (TypeError, ValueError, AttributeError) as error:
        if isinstance(error, ProtocolError):
            raise
        raise ProtocolError(f"cannot send {_shown(message)}: a field has the wrong type "
                            f"({error})") from None
    try:
        decoded = decode_line(line)
    except ProtocolError as error:
        raise ProtocolError(f"cannot send {_shown(message)}: {error}") from None
    if decoded != message:
        raise ProtocolError(f"cannot send {_shown(message)}: it would be read back as "
                            f"{_shown(decoded)}")
    return line


# --- the stream parser -----------------------------------------------------------------------


class LineParser:
    """Split a byte stream into lines and decode them, incrementally and without raising.

    ``feed(data)`` returns, in order, a message for every good line and a
    :class:`LineRefused` for every bad one.  Blank lines are ignored.  A line longer than
    :data:`MAX_LINE` is refused once, as soon as it is too long, and then skipped up to its
    newline without being stored, so memory stays bounded whatever arrives.

    ``layout`` (a key of :data:`LAYOUTS`) checks dump sizes and cell names; when ``None``
    the parser takes it from the first ``HELLO`` and follows every later one.
    """

    def __init__(self, layout: str | None = None) -> None:
        if layout is not None:
            _layout_cells(layout)
        self.layout = layout
        self._buffer = bytearray()
        self._skipping = False

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held (never more than :data:`MAX_LINE` + 1)."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Message | LineRefused]:
        """Take the next bytes of the stream; return what the lines completed by them say."""
        out: list[Message | LineRefused] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            start = len(data) if end < 0 else end + 1
            if self._skipping:
                self._skipping = end < 0
                continue
            # room for the line and a '\r' before the '\n'
            if len(self._buffer) + len(piece) > MAX_LINE + 1:
                excerpt = _excerpt(bytes(self._buffer[:40]) + piece[:40])
                out.append(LineRefused(f"line longer than {MAX_LINE} bytes, dropped", excerpt))
                self._buffer.clear()
                self._skipping = end < 0
                continue
            self._buffer += piece
            if end >= 0:
                line = bytes(self._buffer)
                self._buffer.clear()
                result = self._line(line)
                if result is not None:
                    out.append(result)
        return out

    def _line(self, line: bytes) -> Message | LineRefused | None:
        if not line.strip(b" \r"):
            return None
        try:
            message = decode_line(line, self.layout)
        except ProtocolError as error:
            return LineRefused(str(error), _excerpt(line.removesuffix(b"\r")))
        if isinstance(message, Hello):
            self.layout = message.layout
        return message


class SequenceCheck:
    """Notice lost lines from the board's sequence numbers.

    ``observe(seq)`` returns how many lines were lost just before this one (0 normally);
    ``restart()`` (on a ``HELLO``, or a new connection) accepts any next number.
    """

    def __init__(self) -> None:
        self._last: int | None = None

    def restart(self) -> None:
        """Accept any sequence number next (a board starts again after a reset)."""
        self._last = None

    def observe(self, seq: int) -> int:
        """Record ``seq``; return the number of lines missing between the last one and it."""
        last, self._last = self._last, seq
        if last is None:
            return 0
        return (seq - last - 1) % SEQ_MODULO
