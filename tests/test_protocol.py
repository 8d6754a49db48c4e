"""Wire protocol v1 (hardware/PROTOCOL.md): framing, every message, every refusal, layouts."""

from __future__ import annotations

import pytest

from companion.board.protocol import (
    CODES,
    LAYOUTS,
    MAX_LINE,
    PIECE_CODES,
    BoardErrorMessage,
    Card,
    Dice,
    Dump,
    FieldUpdate,
    Heartbeat,
    Hello,
    LedsOff,
    LineParser,
    LineRefused,
    RequestDump,
    RequestHello,
    SequenceCheck,
    SetLed,
    Unknown,
    checksum,
    decode_line,
    encode,
    frame,
)
from companion.errors import ProtocolError
from companion.rules import load


def line(body: str) -> bytes:
    """A correctly checksummed line, computed here independently of the module."""
    value = 0
    for char in body.encode("ascii"):
        value ^= char
    return f"{body}*{value:02X}\n".encode("ascii")


# --- framing and checksum (PROTOCOL.md, Framing) -------------------------------------------


def test_checksum_worked_example_of_protocol_md() -> None:
    # D 0x44 ^ U 0x55 = 0x11; ^ M 0x4D = 0x5C; ^ P 0x50 = 0x0C; ^ ? 0x3F = 0x33
    assert checksum("DUMP?") == "33"
    assert checksum(b"DUMP?") == "33"


def test_ready_made_commands_of_protocol_md() -> None:
    assert encode(RequestDump()) == b"DUMP?*33\n"
    assert encode(RequestHello()) == b"HELLO?*7D\n"
    assert encode(LedsOff()) == b"LEDS off*51\n"
    assert encode(SetLed("e6", None)) == b"LED e6 off*71\n"


def test_crlf_terminator_and_lowercase_checksum_are_accepted() -> None:
    assert decode_line(b"HELLO?*7D\r\n") == RequestHello()
    assert decode_line("LED e6 FF8800*1e") == SetLed("e6", "ff8800")


def test_extra_spaces_between_fields_are_accepted() -> None:
    assert decode_line(line("  F  12   e6 1r ")) == FieldUpdate(12, "e6", "M1+red")


def test_frame_refuses_star_and_non_printable_bodies() -> None:
    with pytest.raises(ProtocolError, match="reserved for the checksum"):
        frame("ERR 1 E1 a*b")
    with pytest.raises(ProtocolError, match="not printable ASCII"):
        frame("ERR 1 E1 tab\there")


# --- piece codes (PROTOCOL.md, Piece codes) -------------------------------------------------


@pytest.mark.parametrize(
    ("code", "piece"),
    [
        (".", ""),
        ("b", "blue"),
        ("r", "red"),
        ("y", "yellow"),
        ("g", "green"),
        ("p", "purple"),
        ("w", "white"),
        ("a", "gray"),
        ("x", "wild"),
        ("^", "peak"),
        ("T", "tree"),
        ("1", "M1"),
        ("5", "M5"),
        ("1r", "M1+red"),
        ("3a", "M3+gray"),
        ("D0", "D0"),
        ("D5", "D5"),
        ("#", "occupied"),
    ],
)
def test_piece_code_decodes_to_canonical_piece(code: str, piece: str) -> None:
    assert PIECE_CODES[code] == piece
    assert CODES[piece] == code
    assert decode_line(line(f"F 1 e6 {code}")) == FieldUpdate(1, "e6", piece)


def test_piece_code_table_is_complete() -> None:
    # 12 single codes, 5 gardeners, 5 x 7 gardeners on a flower, 6 discs
    assert len(PIECE_CODES) == 12 + 5 + 35 + 6
    assert len(CODES) == len(PIECE_CODES)


# --- every message ----------------------------------------------------------------------------


def test_hello() -> None:
    assert decode_line(line("HELLO 0 1 enceladus identity pico-7 fw0.3")) == Hello(
        0, "1", "enceladus", "identity", "pico-7", "fw0.3"
    )


def test_hello_of_a_newer_minor_version_is_accepted() -> None:
    hello = decode_line(line("HELLO 0 1.4 mars presence m1 2.0"))
    assert hello == Hello(0, "1.4", "mars", "presence", "m1", "2.0")


def test_hello_of_another_major_version_is_read_for_the_referee_to_refuse() -> None:
    hello = decode_line(line("HELLO 0 2.1 mars presence m1 2.0"))
    assert hello == Hello(0, "2.1", "mars", "presence", "m1", "2.0") and hello.major == 2


def test_dump_of_the_enceladus_layout() -> None:
    codes = ["."] * len(LAYOUTS["enceladus"])
    codes[0], codes[99], codes[100], codes[139] = "b", "^", "1", "x"
    message = decode_line(line("DUMP 17 " + " ".join(codes)), "enceladus")
    assert isinstance(message, Dump)
    assert message.seq == 17
    board = message.board("enceladus")
    assert (board["a1"], board["j10"], board["L1"], board["A10"]) == ("blue", "peak", "M1", "wild")
    assert board["T6"] == ""


def test_field_update() -> None:
    assert decode_line(line("F 12 -3,2 2g")) == FieldUpdate(12, "-3,2", "M2+green")
    assert decode_line(line("F 13 A4 D2")) == FieldUpdate(13, "A4", "D2")


def test_heartbeat() -> None:
    assert decode_line(line("HB 9999 4294967295")) == Heartbeat(9999, 2**32 - 1)


def test_board_error_keeps_its_text() -> None:
    message = decode_line(line("ERR 4 E12 row 3 reads open,  check cable J2"))
    assert message == BoardErrorMessage(4, "E12", "row 3 reads open,  check cable J2")
    assert decode_line(line("ERR 5 boot")) == BoardErrorMessage(5, "boot", "")


def test_dice_from_none_to_six() -> None:
    assert decode_line(line("DICE 3")) == Dice(3, ())
    assert decode_line(line("DICE 4 6 1 3 3 5 2")) == Dice(4, (6, 1, 3, 3, 5, 2))


def test_dice_values_are_checked_by_the_referee_not_the_parser() -> None:
    assert decode_line(line("DICE 4 0 9")) == Dice(4, (0, 9))


def test_card() -> None:
    assert decode_line(line("CARD 8 U17")) == Card(8, "U17")


def test_pi_commands() -> None:
    assert decode_line(line("DUMP?")) == RequestDump()
    assert decode_line(line("HELLO?")) == RequestHello()
    assert decode_line(line("LED -3,2 00FF00")) == SetLed("-3,2", "00ff00")
    assert decode_line(line("LED T1 off")) == SetLed("T1", None)
    assert decode_line(line("LEDS off")) == LedsOff()


def test_unknown_message_type_of_a_newer_minor_version_is_decoded_not_refused() -> None:
    message = decode_line(line("TILT 41 12 -3"))
    assert message == Unknown("TILT", ("41", "12", "-3"))
    assert isinstance(message, Unknown)
    assert message.seq == 41
    assert Unknown("PING?", ()).seq is None


# --- refusals: each reason a maker can read ---------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"HB 1 100", "no checksum: a line ends with \\*HH"),
        (b"HB 1 100*G1", "checksum 'G1' is not two hex digits"),
        (b"HB 1 100*3*39", "is not two hex digits after a single \\*"),
        (b"DUMP?*34", "checksum 33 expected, line says 34"),
        (b"HB 1 1\x0700*39", "byte 0x07 at position 6 is not printable ASCII"),
        ("F 1 e6 b\u00e9*00", "character 'é' at position 8 is not printable ASCII"),
        (line("hello 0 1 mars identity a b"), "'hello' is not a message type"),
        (line("HB 1"), "HB takes 2 field\\(s\\) \\(HB <seq> <uptime-ms>\\), the line has 1"),
        (line("HB 10000 5"), "sequence number '10000' is not a whole number 0..9999"),
        (line("HB x 5"), "sequence number 'x'"),
        (line("HB 1 4294967296"), "uptime '4294967296' is not a whole number of ms below 2\\^32"),
        (line("HB 1 -5"), "uptime '-5'"),
        (line("HELLO 0 one mars identity a b"), "protocol version 'one' is not a number"),
        (line("HELLO 0 1 chess identity a b"), "unknown layout 'chess'; one of enceladus, mars"),
        (line("HELLO 0 1 mars colour a b"), "unknown sensing mode 'colour'; one of identity"),
        (line("HELLO 0 1 mars identity " + "a" * 33 + " b"), "board id 'a{33}' is not 1-32"),
        (line("DUMP 3"), "the dump lists no cells"),
        (line("DUMP"), "DUMP takes a sequence number and one code per cell"),
        (line("DUMP 3 . b z"), "'z' is not a piece code \\(dump cell 3\\)"),
        (line("F 1 k5 b"), "'k5' is not a cell of any layout"),
        (line("F 1 e6 1x"), "'1x' is not a piece code \\(e6\\)"),
        (line("ERR 3"), "ERR takes a sequence number, a code and a text"),
        (line("DICE 1 1 2 3 4 5 6 1"), "the dice tray holds at most 6 dice, not 7"),
        (line("DICE 1 12"), "die value '12' is not a single digit"),
        (line("DICE"), "DICE takes a sequence number"),
        (line("CARD 2"), "CARD takes 2 field"),
        (line("LED e6 red"), "LED colour 'red' is not six hex digits rrggbb or off"),
        (line("LEDS on"), "LEDS takes one field, off"),
        (line("DUMP? now"), "DUMP\\? takes 0 field"),
        (line("HELLO? 1"), "HELLO\\? takes 0 field"),
    ],
)
def test_refused_line_says_why(raw: bytes | str, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        decode_line(raw)


def test_dump_with_the_wrong_cell_count_for_the_layout_is_refused() -> None:
    with pytest.raises(ProtocolError, match="the dump has 90 cells, the mars layout has 91"):
        decode_line(line("DUMP 1 " + " ".join("." * 90)), "mars")


def test_cell_of_another_layout_is_refused_once_the_layout_is_known() -> None:
    assert decode_line(line("F 1 e6 b")) == FieldUpdate(1, "e6", "blue")
    with pytest.raises(ProtocolError, match="'e6' is not a cell of the mars layout"):
        decode_line(line("F 1 e6 b"), "mars")


def test_unknown_layout_argument_is_refused() -> None:
    with pytest.raises(ProtocolError, match="unknown layout 'chess'"):
        decode_line(line("DUMP?"), "chess")
    with pytest.raises(ProtocolError, match="unknown layout 'chess'"):
        LineParser("chess")


def test_line_of_max_length_is_accepted_and_one_byte_more_refused() -> None:
    head = "ERR 1 E "
    longest = head + "t" * (MAX_LINE - 3 - len(head))
    assert len(line(longest)) == MAX_LINE + 1
    assert decode_line(line(longest)) == BoardErrorMessage(1, "E", longest[len(head) :])
    assert decode_line(line(longest)[:-1] + b"\r\n") == BoardErrorMessage(
        1, "E", longest[len(head) :]
    )
    with pytest.raises(ProtocolError, match=f"line of {MAX_LINE + 1} bytes is longer than 1024"):
        decode_line(line(longest + "t"))


# --- encoding -------------------------------------------------------------------------------


def test_encode_every_message() -> None:
    assert encode(FieldUpdate(12, "e6", "M1+red")) == line("F 12 e6 1r")
    assert encode(Hello(0, "1", "mars", "identity", "b", "f")) == line(
        "HELLO 0 1 mars identity b f"
    )
    assert encode(Dump(2, ("blue", "", "peak"))) == line("DUMP 2 b . ^")
    assert encode(Heartbeat(3, 1000)) == line("HB 3 1000")
    assert encode(BoardErrorMessage(4, "E1", "row 3")) == line("ERR 4 E1 row 3")
    assert encode(BoardErrorMessage(4, "E1", "")) == line("ERR 4 E1")
    assert encode(Dice(5, (3, 5))) == line("DICE 5 3 5")
    assert encode(Dice(5, ())) == line("DICE 5")
    assert encode(Card(6, "U01")) == line("CARD 6 U01")
    assert encode(SetLed("-3,2", "ff8800")) == line("LED -3,2 ff8800")
    assert encode(Unknown("TILT", ("7", "1"))) == line("TILT 7 1")


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (FieldUpdate(1, "e6", "M9"), "piece 'M9' has no wire code"),
        (Heartbeat(10000, 1), "sequence number '10000'"),
        (BoardErrorMessage(1, "E1", "a*b"), "reserved for the checksum"),
        (BoardErrorMessage(1, "E1", " padded"), "would be read back as"),
        (SetLed("e6", "FF8800"), "would be read back as"),
        (Hello(0, "1", "chess", "identity", "b", "f"), "unknown layout 'chess'"),
        (Dump(1, ("blue",) * 600), "longer than 1024"),
    ],
)
def test_encode_refuses_what_cannot_be_read_back(message: object, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        encode(message)  # type: ignore[arg-type]


# --- layouts (PROTOCOL.md, Layouts; docs/RULINGS.md, Coordinates) -----------------------------


def test_enceladus_dump_order() -> None:
    cells = LAYOUTS["enceladus"]
    assert len(cells) == 146
    assert cells[:11] == ("a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "i1", "j1", "a2")
    assert cells[99] == "j10"
    assert cells[100:102] == ("L1", "L2")
    assert cells[110:112] == ("R1", "R2")
    assert cells[120:122] == ("Ba", "Bb")
    assert cells[130] == "A1"
    assert cells[139] == "A10"
    assert cells[140:] == ("T1", "T2", "T3", "T4", "T5", "T6")


def test_hex_layout_sizes_from_the_settled_readings() -> None:
    # Mars #1: 91 cells; Uranus #2: 61, 63 and 64 spots
    sizes = {name: len(cells) for name, cells in LAYOUTS.items() if name != "enceladus"}
    assert sizes == {
        "mars": 91,
        "uranus-hexagonal": 61,
        "uranus-trapezoid": 63,
        "uranus-rhombus": 64,
    }


def test_hex_dump_order_is_by_r_then_q() -> None:
    mars = LAYOUTS["mars"]
    assert mars[:3] == ("0,-5", "1,-5", "2,-5")
    assert mars[45] == "0,0"
    assert mars[-1] == "0,5"
    assert LAYOUTS["uranus-trapezoid"][:3] == ("6,-11", "5,-10", "6,-10")
    assert LAYOUTS["uranus-rhombus"][:2] == ("7,-7", "6,-6")


def test_dump_board_of_another_layout_is_refused() -> None:
    with pytest.raises(ProtocolError, match="the dump has 3 cells, the mars layout has 91"):
        Dump(1, ("", "", "")).board("mars")


# --- the stream parser ------------------------------------------------------------------------


def test_parser_joins_lines_split_across_chunks() -> None:
    parser = LineParser()
    data = line("HB 1 10") + line("F 2 e6 b")
    results = [item for byte in data for item in parser.feed(bytes([byte]))]
    assert results == [Heartbeat(1, 10), FieldUpdate(2, "e6", "blue")]


def test_parser_ignores_blank_lines() -> None:
    assert LineParser().feed(b"\n\r\n  \n" + line("HB 1 10")) == [Heartbeat(1, 10)]


def test_parser_reports_a_bad_line_and_reads_the_next() -> None:
    results = LineParser().feed(b"HB 1 10*00\n" + line("HB 2 10"))
    assert results == [
        LineRefused("checksum 3A expected, line says 00", "HB 1 10*00"),
        Heartbeat(2, 10),
    ]


def test_parser_excerpt_shows_non_printable_bytes() -> None:
    (refused,) = LineParser().feed(b"\x00\xffHB\n")
    assert isinstance(refused, LineRefused)
    assert refused.excerpt == "\\x00\\xffHB"


def test_one_megabyte_line_is_refused_once_in_bounded_memory() -> None:
    parser = LineParser()
    results = []
    chunk = b"Z" * 4096
    for _ in range(256):
        results += parser.feed(chunk)
        assert parser.pending <= MAX_LINE + 1
    results += parser.feed(b"ZZZ\n" + line("HB 5 1"))
    assert len(results) == 2
    assert isinstance(results[0], LineRefused)
    assert results[0].reason == "line longer than 1024 bytes, dropped"
    assert results[0].excerpt.startswith("Z" * 40)
    assert results[1] == Heartbeat(5, 1)


def test_one_megabyte_line_in_one_chunk() -> None:
    results = LineParser().feed(b"Q" * 1_000_000 + b"\n" + line("HB 6 1"))
    assert [type(item) for item in results] == [LineRefused, Heartbeat]


def test_parser_learns_the_layout_from_hello() -> None:
    parser = LineParser()
    results = parser.feed(line("HELLO 0 1 mars identity b f") + line("F 1 e6 b"))
    assert parser.layout == "mars"
    assert isinstance(results[1], LineRefused)
    assert results[1].reason == "'e6' is not a cell of the mars layout"


# --- sequence numbers -------------------------------------------------------------------------


def test_sequence_check_counts_lost_lines_and_wraps() -> None:
    check = SequenceCheck()
    assert check.observe(9997) == 0
    assert check.observe(9998) == 0
    assert check.observe(1) == 2  # 9999 and 0 lost
    check.restart()
    assert check.observe(0) == 0
    assert check.observe(1) == 0


@pytest.mark.parametrize(
    ("layout", "game", "options"),
    [
        ("enceladus", "enceladus", {}),
        ("mars", "mars", {}),
        ("uranus-hexagonal", "uranus", {"board": "hexagonal"}),
        ("uranus-trapezoid", "uranus", {"board": "trapezoid"}),
        ("uranus-rhombus", "uranus", {"board": "rhombus"}),
    ],
)
def test_rules_cores_lay_out_their_boards_in_the_wire_dump_order(
    layout: str, game: str, options: dict[str, str]
) -> None:
    rules = load(game).RULES
    assert rules.layout(rules.new_game(2, 1, options)) == LAYOUTS[layout]


def test_the_delete_byte_is_no_printable_ascii() -> None:
    body = "ERR 1 E a\x7fb"
    with pytest.raises(ProtocolError, match="byte 0x7f at position 9 is not printable ASCII"):
        decode_line(f"{body}*{checksum(body)}\n".encode("ascii"))


def test_the_stream_parser_holds_at_most_a_longest_line_and_its_cr() -> None:
    parser = LineParser()
    head = "ERR 1 E "
    longest = line(head + "t" * (MAX_LINE - 3 - len(head)))[:-1] + b"\r"  # all but the newline
    assert parser.feed(longest) == [] and parser.pending == MAX_LINE + 1
    (refused,) = parser.feed(b"t")  # one byte more: refused at once, before any newline
    assert isinstance(refused, LineRefused)
    assert refused.reason == "line longer than 1024 bytes, dropped"
    assert parser.pending == 0
