"""Wire protocol v1 under hypothesis: round trips of every message, and garbage of every kind
(random bytes, bit flips, truncated and spliced lines) never raises and never yields a message
from a line whose checksum is wrong; whatever text or object the decoder, the checksum and the
encoder are given (any Unicode, lone surrogates, a message with fields of the wrong type), they
raise nothing but ProtocolError."""

from __future__ import annotations

import contextlib
import dataclasses
import string

from hypothesis import given
from hypothesis import strategies as st

from companion.board.protocol import (
    CODES,
    LAYOUTS,
    MAX_DICE,
    SENSING,
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
    Message,
    RequestDump,
    RequestHello,
    SetLed,
    Unknown,
    checksum,
    decode_line,
    encode,
)
from companion.errors import ProtocolError

KNOWN_KINDS = {"HELLO", "DUMP", "F", "HB", "ERR", "DICE", "CARD", "DUMP?", "HELLO?", "LED", "LEDS"}
PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "*")

seqs = st.integers(0, 9999)
tokens = st.text(PRINTABLE.replace(" ", ""), min_size=1, max_size=32)
pieces = st.sampled_from(sorted(CODES))
layouts = st.sampled_from(sorted(LAYOUTS))

errors = st.builds(
    BoardErrorMessage, seqs, tokens, st.text(PRINTABLE, max_size=200).map(lambda t: t.strip(" "))
)
unknowns = st.builds(
    Unknown,
    st.from_regex(r"[A-Z][A-Z0-9_]{0,8}\??", fullmatch=True).filter(lambda k: k not in KNOWN_KINDS),
    st.lists(tokens, max_size=5).map(tuple),
)


def messages_of(layout: str) -> st.SearchStrategy[Message]:
    """Any message, consistent with a board of ``layout`` (a stream's layout is its hello's)."""
    cells = st.sampled_from(LAYOUTS[layout])
    return st.one_of(
        st.builds(
            Hello,
            seqs,
            st.sampled_from(["1", "1.0", "1.12"]),
            st.just(layout),
            st.sampled_from(SENSING),
            tokens,
            tokens,
        ),
        st.builds(Dump, seqs, st.tuples(*[pieces] * len(LAYOUTS[layout]))),
        st.builds(FieldUpdate, seqs, cells, pieces),
        st.builds(Heartbeat, seqs, st.integers(0, 2**32 - 1)),
        errors,
        st.builds(Dice, seqs, st.lists(st.integers(0, 9), max_size=MAX_DICE).map(tuple)),
        st.builds(Card, seqs, tokens),
        st.just(RequestDump()),
        st.just(RequestHello()),
        st.builds(SetLed, cells, st.none() | st.text("0123456789abcdef", min_size=6, max_size=6)),
        st.just(LedsOff()),
        unknowns,
    )


messages = layouts.flatmap(messages_of)


def streams(min_size: int = 0) -> st.SearchStrategy[list[Message]]:
    """Lists of messages a single board could send and receive."""
    return layouts.flatmap(lambda name: st.lists(messages_of(name), min_size=min_size, max_size=8))


def checksum_is_right(raw: bytes) -> bool:
    """Reference check of one line (terminator removed), written apart from the module."""
    raw = raw.removesuffix(b"\r")
    if raw.count(b"*") != 1:
        return False
    body, given_sum = raw.split(b"*")
    value = 0
    for byte in body:
        value ^= byte
    return given_sum.upper() == f"{value:02X}".encode()


def parsed_messages(data: bytes, chunk: int = 7) -> list[Message]:
    parser = LineParser()
    out = []
    for start in range(0, len(data), chunk):
        out += parser.feed(data[start : start + chunk])
    return [item for item in out if not isinstance(item, LineRefused)]


@given(messages)
def test_every_message_round_trips(message: Message) -> None:
    assert decode_line(encode(message)) == message


@given(streams(), st.integers(1, 64))
def test_a_stream_of_messages_round_trips_in_any_chunking(
    sent: list[Message], chunk: int
) -> None:
    data = b"".join(encode(message) for message in sent)
    assert parsed_messages(data, chunk) == sent


@given(st.binary(max_size=3000), st.integers(1, 512))
def test_random_bytes_never_raise_and_never_pass_a_wrong_checksum(data: bytes, chunk: int) -> None:
    found = parsed_messages(data, chunk)
    good_lines = sum(checksum_is_right(raw) for raw in data.split(b"\n")[:-1])
    assert len(found) <= good_lines


@given(streams(min_size=1), st.data())
def test_a_single_bit_flip_never_yields_a_new_message(
    sent: list[Message], data: st.DataObject
) -> None:
    stream = bytearray(b"".join(encode(message) for message in sent))
    position = data.draw(st.integers(0, len(stream) - 1))
    stream[position] ^= 1 << data.draw(st.integers(0, 7))
    assert all(message in sent for message in parsed_messages(bytes(stream)))


@given(streams(min_size=1), st.data())
def test_a_truncated_line_is_refused_and_the_others_arrive(
    sent: list[Message], data: st.DataObject
) -> None:
    # what a board reset mid-line leaves: a half line, then the newline a board sends first
    lines = [encode(message) for message in sent]
    cut = data.draw(st.integers(0, len(lines) - 1))
    lines[cut] = lines[cut][: data.draw(st.integers(0, len(lines[cut]) - 2))] + b"\n"
    assert parsed_messages(b"".join(lines)) == sent[:cut] + sent[cut + 1 :]


@given(streams(min_size=2), st.data())
def test_spliced_half_lines_never_raise_and_pass_only_right_checksums(
    sent: list[Message], data: st.DataObject
) -> None:
    lines = [encode(message) for message in sent]
    cut = data.draw(st.integers(0, len(lines) - 2))
    lines[cut] = lines[cut][: data.draw(st.integers(0, len(lines[cut]) - 2))]  # no newline
    stream = b"".join(lines)
    found = parsed_messages(stream)
    assert len(found) <= sum(checksum_is_right(raw) for raw in stream.split(b"\n")[:-1])


@given(st.text(string.printable, max_size=300))
def test_decode_line_raises_only_protocol_errors(text: str) -> None:
    with contextlib.suppress(ProtocolError):
        decode_line(text)


any_text = st.text(st.characters(exclude_categories=()) | st.characters(categories=["Cs"]))
"""Any code point, lone surrogates (which hypothesis leaves out unless asked) too."""
anything = st.one_of(
    st.none(), st.booleans(), st.integers(), st.just(10**5000), st.floats(), any_text,
    st.binary(), st.lists(st.integers(), max_size=3), st.tuples(any_text),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.builds(object),
)
"""Values of every type a wrongly built message might hold."""

MESSAGE_TYPES = (Hello, Dump, FieldUpdate, Heartbeat, BoardErrorMessage, Dice, Card, SetLed,
                 Unknown)


@given(any_text)
def test_decode_line_raises_only_protocol_errors_for_any_text(text: str) -> None:
    with contextlib.suppress(ProtocolError):
        decode_line(text)


@given(any_text | st.binary())
def test_checksum_of_any_text_is_two_hex_digits_or_a_protocol_error(body: str | bytes) -> None:
    try:
        value = checksum(body)
    except ProtocolError:
        assert isinstance(body, str) and not body.isascii()
    else:
        assert len(value) == 2 and int(value, 16) >= 0


@given(anything, anything)
def test_decode_line_and_checksum_raise_only_protocol_errors_for_any_object(
    line: object, layout: object
) -> None:
    with contextlib.suppress(ProtocolError):
        decode_line(line, layout)  # type: ignore[arg-type]
    with contextlib.suppress(ProtocolError):
        decode_line(line)  # type: ignore[arg-type]
    with contextlib.suppress(ProtocolError):
        checksum(line)  # type: ignore[arg-type]


@given(st.sampled_from(MESSAGE_TYPES).flatmap(
    lambda kind: st.tuples(*[anything] * len(dataclasses.fields(kind))).map(lambda f: kind(*f))))
def test_encode_of_wrongly_typed_fields_raises_only_protocol_errors(message: Message) -> None:
    try:
        line = encode(message)
    except ProtocolError:
        return
    assert decode_line(line) == message
