"""hardware/PROTOCOL.md is what makers type and copy: every checksummed line in it must be
right, and its MicroPython checksum function must agree with the companion's."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from companion.board.protocol import LAYOUTS, Dump, checksum, decode_line
from companion.errors import ProtocolError

DOC = (Path(__file__).parent.parent / "hardware" / "PROTOCOL.md").read_text(encoding="utf-8")
LINE = re.compile(r"[A-Z][A-Z?]*(?: [^\s*`|]+)*\*[0-9A-F]{2}(?![0-9A-Za-z])")
GARBLED = "F 8 d3 ,*27"  # the example session's garbled line
BODIES = st.text("".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "*"), max_size=100)


def maker_checksum() -> Callable[[str], str]:
    """The MicroPython checksum function of PROTOCOL.md, run as printed."""
    section = DOC.split("### The checksum in MicroPython", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Callable[[str], str]] = {}
    exec(code, namespace)
    return namespace["checksum"]


def test_every_line_in_protocol_md_decodes_but_the_garbled_example() -> None:
    lines = LINE.findall(DOC)
    assert len(lines) > 40
    refused = {}
    for text in lines:
        try:
            message = decode_line(text)
        except ProtocolError as error:
            refused[text] = str(error)
            continue
        if isinstance(message, Dump):
            assert len(message.pieces) in {len(cells) for cells in LAYOUTS.values()}
    assert refused == {GARBLED: "checksum 25 expected, line says 27"}
    assert refused[GARBLED] in DOC


def test_micropython_checksum_of_protocol_md_gives_the_worked_example() -> None:
    assert maker_checksum()("DUMP?") == "33"


@given(BODIES)
def test_micropython_checksum_of_protocol_md_agrees_with_the_companion(body: str) -> None:
    assert maker_checksum()(body) == checksum(body)
