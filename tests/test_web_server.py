"""The live page's server without a browser: what it sends, what it refuses, what it costs.

Bad input gets a short answer and the server goes on serving (oversized and malformed
requests, unknown addresses, floods of connections and of event streams); a page that takes
nothing in never holds up :meth:`WebView.publish`; nothing is drawn while no page is open;
and without ``[web] listen`` neither the server nor Tornado is imported.
"""

from __future__ import annotations

import http.client
import json
import logging
import queue
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import pytest

from companion.config import WebConfig
from companion.errors import ConfigError
from companion.referee.screen import Screen
from companion.web import server as server_mod
from companion.web.page import board_svg
from companion.web.server import (
    LOCKOUT_S,
    MAX_BODY_BYTES,
    MAX_CONNECTIONS,
    MAX_STREAMS,
    MAX_WRONG_PINS,
    WebView,
)

CELLS = {"0,0": "", "1,0": "red", "0,1": "M1", "-1,1": "peak"}


def screen(message: str = "P1: your turn", **kw: object) -> Screen:
    return Screen("mars", "mars", CELLS, message=message, to_move=1,
                  scores=((1, "3 pts"), (2, "5 pts")), **kw)  # type: ignore[arg-type]


@pytest.fixture
def view() -> Iterator[WebView]:
    web = WebView("127.0.0.1:0")
    try:
        yield web
    finally:
        web.close()


def port(view: WebView) -> int:
    return int(view.address.rsplit(":", 1)[1].rstrip("/"))


def get(view: WebView, path: str) -> tuple[int, str]:
    with closing(http.client.HTTPConnection("127.0.0.1", port(view), timeout=5)) as conn:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()


def raw(view: WebView, data: bytes) -> bytes:
    """Send ``data`` and read the whole answer (the server closes after an error; a server
    that closes with ``data`` unread resets the connection: an empty answer)."""
    chunks = []
    with socket.create_connection(("127.0.0.1", port(view)), timeout=5) as sock:
        try:
            sock.sendall(data)
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (ConnectionResetError, BrokenPipeError):
            pass
    return b"".join(chunks)


class Stream:
    """An event stream read line by line, as a page's EventSource reads it."""

    def __init__(self, view: WebView) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port(view), timeout=5)
        self.conn.request("GET", "/events")
        self.response = self.conn.getresponse()

    def next_state(self) -> dict[str, object]:
        while True:
            line = self.response.readline().decode()
            assert line, "the stream ended"
            if line.startswith("data: "):
                state: dict[str, object] = json.loads(line[6:])
                return state

    def close(self) -> None:
        self.conn.close()


def test_the_page_and_its_first_event_are_the_whole_table(view: WebView) -> None:
    view.publish(screen(), "up", 7)
    status, page = get(view, "/")
    assert status == 200 and "<script>" in page and "EventSource" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # no CDN
    stream = Stream(view)
    try:
        state = stream.next_state()
        assert state["seq"] == 1 and state["steps"] == 7 and state["link"] == "up"
        assert state["scores"] == [[1, "3 pts"], [2, "5 pts"]]
        assert 'data-cell="0,1" data-piece="M1"' in str(state["board"])
        view.publish(screen("P1: go on", highlights={"0,0": "dest"}), "up", 7)
        state = stream.next_state()
        assert state["seq"] == 2 and 'data-cell="0,0" data-piece="" data-role="dest"' in str(
            state["board"])
    finally:
        stream.close()


def test_every_cell_of_each_layout_is_drawn_once() -> None:
    from companion.rules import load

    for game, options in (("enceladus", {}), ("mars", {}), ("uranus", {"board": "rhombus"})):
        rules = load(game).RULES
        state = rules.new_game(2, 1, options)
        layout = "uranus-rhombus" if game == "uranus" else game
        svg = board_svg(Screen(game, layout, rules.board(state)))
        for cell, piece in rules.board(state).items():
            assert svg.count(f'data-cell="{cell}" data-piece="{piece}"') == 1


def test_an_unknown_address_is_a_short_404_page(view: WebView) -> None:
    status, text = get(view, "/../../etc/passwd")
    assert status == 404 and "No such page" in text and "Traceback" not in text
    status, text = get(view, "/events/more")
    assert status == 404


def test_oversized_and_malformed_requests_are_refused_and_serving_goes_on(
    view: WebView, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    huge_head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"
    assert raw(view, huge_head) in (b"", b"HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n")
    body = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 10_000
    assert raw(view, body) in (b"", b"HTTP/1.1 400 Bad Request\r\n\r\n")
    assert raw(view, b"\x16\x03\x01 garbage\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert raw(view, b"GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert get(view, "/")[0] == 200
    assert "Traceback" not in caplog.text
    assert "Malformed" not in caplog.text  # a flood of them would flood the daemon's log


def test_event_streams_are_bounded_and_a_closed_one_frees_its_place(view: WebView) -> None:
    view.publish(screen())
    streams = [Stream(view) for _ in range(MAX_STREAMS)]
    try:
        for stream in streams:
            assert stream.next_state()["seq"] == 1
        status, text = get(view, "/events")
        assert status == 503 and "Too many pages" in text
        streams.pop().close()
        for _ in range(50):  # the server sees the close when it reads the socket's end
            late = Stream(view)
            if late.response.status == 200:
                break
            late.close()
        assert late.response.status == 200
        streams.append(late)
    finally:
        for stream in streams:
            stream.close()


def test_a_flood_of_connections_is_bounded_and_serving_goes_on(view: WebView) -> None:
    with ExitStack() as stack:
        idle = [stack.enter_context(socket.create_connection(("127.0.0.1", port(view))))
                for _ in range(MAX_CONNECTIONS)]
        extra = stack.enter_context(socket.create_connection(("127.0.0.1", port(view))))
        extra.settimeout(5)
        # closed at once, no answer: an end of stream, or a reset when the request was
        # already there unread (which of the two is the kernel's race, not the server's)
        try:
            extra.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert extra.recv(100) == b""
        except (ConnectionResetError, BrokenPipeError):
            pass
        assert len(idle) == MAX_CONNECTIONS
    assert first_served(view) == 200


def first_served(view: WebView) -> int:
    """The status of ``/`` once the server has seen closed connections go (it sees each
    when it reads its end)."""
    for _ in range(50):
        try:
            return get(view, "/")[0]
        except ConnectionResetError:
            continue
    raise AssertionError("the server never served again")


def test_a_page_that_reads_nothing_never_holds_up_the_referee(view: WebView) -> None:
    big = {f"{q},{r}": "red" for q in range(-5, 6) for r in range(-5, 6) if abs(q + r) <= 5}
    stalled = Stream(view)  # never read again: its socket buffers fill up
    try:
        for n in range(2000):
            view.publish(Screen("mars", "mars", big, message="x" * 2000 + str(n)))
        reader = Stream(view)
        try:
            assert reader.next_state()["message"] == "x" * 2000 + "1999"
        finally:
            reader.close()
    finally:
        stalled.close()


def test_nothing_is_drawn_while_no_page_is_open(
    view: WebView, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[int] = []
    real = server_mod.snapshot
    monkeypatch.setattr(server_mod, "snapshot",
                        lambda s, **kw: drawn.append(kw["seq"]) or real(s, **kw))
    for n in range(100):
        view.publish(screen(f"step {n}"))
    assert drawn == []
    stream = Stream(view)
    try:
        assert stream.next_state()["message"] == "step 99"
    finally:
        stream.close()
    assert drawn == [100]


def post(view: WebView, body: bytes) -> tuple[int, str]:
    with closing(http.client.HTTPConnection("127.0.0.1", port(view), timeout=5)) as conn:
        conn.request("POST", "/press", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status, response.reason


def test_presses_need_the_pin_and_wrong_ones_lock_the_buttons_for_a_while() -> None:
    events: queue.Queue[object] = queue.Queue()
    now = [100.0]
    web = WebView("127.0.0.1:0", events=events, clock=lambda: now[0], pin="0042")
    try:
        assert post(web, b"not json") == (400, 'A press is JSON: {"pin": "1234", "button": "ok"}')
        assert post(web, b'{"pin": "0042", "button": "fire"}')[0] == 400
        assert post(web, b'{"pin": "0042", "button": "ok"}') == (200, "OK")
        assert [(e.name, e.pressed) for e in (events.get_nowait(), events.get_nowait())] == [
            ("ok", True), ("ok", False)]  # type: ignore[attr-defined]
        for _ in range(MAX_WRONG_PINS):
            assert post(web, b'{"pin": "1234", "button": "undo"}') == (
                403, "Wrong PIN: the matrix shows it")
        assert post(web, b'{"pin": "0042", "button": "undo"}')[1].startswith("Too many wrong")
        now[0] += LOCKOUT_S
        assert post(web, b'{"pin": "0042", "button": "undo"}')[0] == 200
        assert events.qsize() == 2
    finally:
        web.close()


def test_a_pin_that_is_no_text_of_characters_is_a_wrong_pin_not_a_server_error(
    caplog: pytest.LogCaptureFixture
) -> None:
    """JSON may carry a lone surrogate (``"\\ud800"``), which is no character: such a PIN
    is wrong like any other, never a 500 with a traceback in the daemon's log."""
    events: queue.Queue[object] = queue.Queue()
    web = WebView("127.0.0.1:0", events=events, pin="0042")
    try:
        assert post(web, b'{"pin": "\\ud800", "button": "ok"}') == (
            403, "Wrong PIN: the matrix shows it")
    finally:
        web.close()
    assert events.empty() and "Traceback" not in caplog.text


def test_json_nested_too_deep_to_read_is_refused_like_any_other_bad_body(
    caplog: pytest.LogCaptureFixture
) -> None:
    """A body of nested brackets within the size limit is too deep for the JSON reader: a
    400 with the body's form, never a 500 with a traceback in the daemon's log."""
    from companion.config import GameConfig
    from companion.web.newgame import Choices

    web = WebView("127.0.0.1:0", events=queue.Queue(), pin="0042",
                  choices=Choices(GameConfig(name="mars")))
    deep = b"[" * (MAX_BODY_BYTES - 1)
    try:
        assert post(web, deep) == (400, 'A press is JSON: {"pin": "1234", "button": "ok"}')
        with closing(http.client.HTTPConnection("127.0.0.1", port(web), timeout=5)) as conn:
            conn.request("POST", "/new", body=deep)
            response = conn.getresponse()
            assert (response.status, response.reason) == (
                400, 'A new game is JSON: {"pin": "1234", "players": 3}')
    finally:
        web.close()
    assert "Traceback" not in caplog.text


def test_a_page_without_the_event_queue_is_read_only(view: WebView) -> None:
    assert post(view, b'{"pin": "", "button": "ok"}') == (403, "This page is read-only")
    assert view.mark(screen()) == screen()


def test_an_address_in_use_is_a_config_error(view: WebView) -> None:
    with pytest.raises(ConfigError, match=r"\[web\] listen '127.0.0.1:\d+' cannot be listened on"):
        WebView(f"127.0.0.1:{port(view)}")


def test_without_web_neither_the_server_nor_tornado_is_imported(tmp_path: Path) -> None:
    assert WebConfig().listen == ""
    code = (
        "import sys\n"
        "from contextlib import ExitStack\n"
        "from companion.sim.demo import demo_config, MATRIX\n"
        "from companion.sim.table import seat\n"
        "from companion.display import make_device\n"
        f"config = demo_config('enceladus', 2, 1, 'hexagonal', __import__('pathlib').Path("
        f"{str(tmp_path)!r}))\n"
        "with ExitStack() as stack:\n"
        "    seated = seat(config, stack, device=make_device({'display': 'dummy', **MATRIX}))\n"
        "    assert seated.service.web is None\n"
        "print(sorted(m for m in sys.modules if m.startswith(('tornado', 'companion.web'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("value", ['"8080"', '"localhost"', "8080", '":99999"'])
def test_a_listen_address_that_is_no_host_and_port_is_refused_by_name(
    tmp_path: Path, value: str
) -> None:
    from companion.config import load_config

    path = tmp_path / "companion.toml"
    path.write_text(f"[web]\nlisten = {value}\n")
    with pytest.raises(ConfigError, match=r'line 2: \[web\] listen must be "host:port"'):
        load_config(path)
    path.write_text('[web]\nlisten = "127.0.0.1:8080"\n')
    assert load_config(path).web.listen == "127.0.0.1:8080"


def test_web_without_tornado_installed_is_a_config_error_naming_the_extra(
    tmp_path: Path,
) -> None:
    code = (
        "import sys\n"
        "sys.modules['tornado'] = None  # as if the web extra were not installed\n"
        "from contextlib import ExitStack\n"
        "from pathlib import Path\n"
        "from companion.errors import ConfigError\n"
        "from companion.sim.demo import demo_config, MATRIX\n"
        "from companion.sim.table import seat\n"
        "from companion.display import make_device\n"
        f"config = demo_config('enceladus', 2, 1, 'hexagonal', Path({str(tmp_path)!r}), "
        "web='127.0.0.1:0')\n"
        "try:\n"
        "    with ExitStack() as stack:\n"
        "        seat(config, stack, device=make_device({'display': 'dummy', **MATRIX}))\n"
        "except ConfigError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == (
        "[web] listen is set but the web page cannot be served: tornado is not installed "
        "(pip install 'gardens-companion[web]')")
    assert list(tmp_path.glob("*.jsonl")) == []  # no journal of a game that never began


def test_only_the_finished_games_listed_open_and_any_other_name_is_refused(
    tmp_path: Path, view: WebView
) -> None:
    from test_replay import _game

    from companion.tools.replay import read_game

    finished = _game(tmp_path, seed=4)
    unfinished = _game(tmp_path, steps=5, seed=5)
    (tmp_path / "notes.txt").write_text("not a journal")
    web = WebView("127.0.0.1:0", journals=tmp_path)
    try:
        status, text = get(web, "/journals")
        assert status == 200 and json.loads(text) == {"journals": [finished.name]}
        status, text = get(web, f"/journals/{finished.name}")
        game = json.loads(text)
        _, rules, moments = read_game(finished)
        assert status == 200 and game["name"] == finished.name
        assert [p["board"] for p in game["positions"]] == [
            board_svg(Screen("enceladus", "enceladus", rules.board(m.state))) for m in moments]
        for name in (unfinished.name, "notes.txt", "..%2Fnotes.txt", "%2E%2E",
                     f"..%2F{tmp_path.name}%2F{finished.name}", "%2Fetc%2Fpasswd"):
            status, text = get(web, f"/journals/{name}")
            assert status == 404 and "No such" in text and "Traceback" not in text, name
    finally:
        web.close()
    assert get(view, "/journals") == (200, '{"journals": []}')  # no journal folder
    assert get(view, f"/journals/{finished.name}")[0] == 404


def new(view: WebView, **asked: object) -> tuple[int, str]:
    """``POST /new``: the status and the page's sentence (``""`` when started)."""
    with closing(http.client.HTTPConnection("127.0.0.1", port(view), timeout=5)) as conn:
        conn.request("POST", "/new", body=json.dumps(asked),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read()).get("refused", "")


def test_the_new_game_form_names_the_seats() -> None:
    from companion.config import GameConfig, PlayersConfig
    from companion.events import StartGame
    from companion.web.newgame import Choices

    events: queue.Queue[object] = queue.Queue()
    web = WebView("127.0.0.1:0", events=events, pin="0042", choices=Choices(
        GameConfig(name="mars", players=3), PlayersConfig(names=("Ann", "Bob"))))
    try:
        assert json.loads(get(web, "/game")[1])["names"] == ["Ann", "Bob", ""]
        for names, said in ((["A", "B", "C"], "3 names for 2 players"), ("Ann", "a list"),
                            (["x" * 41], "at most 40"), (["Ann\tBob\x07"], "signs only")):
            assert new(web, pin="0042", players=2, names=names) == (400, said) or \
                said in new(web, pin="0042", players=2, names=names)[1], names
        assert events.empty()
        assert new(web, pin="0042", players=2, names=[" Cy  Dee ", "Eve", "", ""]) == (200, "")
        started = events.get_nowait()
        assert isinstance(started, StartGame) and started.names == ("Cy Dee", "Eve")
    finally:
        web.close()


def test_a_new_game_needs_the_pin_a_choice_the_rules_core_takes_and_a_confirmation() -> None:
    """Refusals are the rules core's own sentences; a game in progress ends only when the
    page confirms it."""
    from companion.config import GameConfig
    from companion.events import StartGame
    from companion.web.newgame import Choices

    events: queue.Queue[object] = queue.Queue()
    web = WebView("127.0.0.1:0", events=events, pin="0042",
                  choices=Choices(GameConfig(name="mars", options={"peaks": 2})))
    try:
        status, form = get(web, "/game")
        described = json.loads(form)
        assert described["game"] == "mars" and ["peaks", 2] in described["options"]
        assert ["center_blocks_path", False] in described["options"]  # the core's default
        assert new(web, pin="1234", players=3) == (403, "Wrong PIN: the matrix shows it")
        assert new(web, pin="0042", players=3, options={"plant_score": "most"}) == (
            400, "Option 'plant_score' must be 'group_size' or 'connected_only', not 'most'.")
        assert new(web, pin="0042", players=7) == (
            400, "7 players cannot play Gardens of Mars; it is for 2 to 5 players")
        assert new(web, pin="0042", players=3, options={"board": "rhombus"}) == (
            400, "Gardens of Mars on this board has no option 'board'")
        assert new(web, pin="0042", players="three")[0] == 400
        assert events.empty()
        web.publish(screen(), "up", 4)  # a game in progress
        status, said = new(web, pin="0042", players=3, seed=9, options={"peaks": 1})
        assert status == 409 and "A game is in progress (4 steps)" in said and events.empty()
        assert new(web, pin="0042", players=3, seed=9, options={"peaks": 1}, end=True) == (
            200, "")
        started = events.get_nowait()
        assert isinstance(started, StartGame)
        assert (started.players, started.seed, dict(started.options)) == (3, 9, {"peaks": 1})
        web.publish(screen(ranking=((1, "20 pts"),)), "up", 30)  # over: no confirmation
        assert new(web, pin="0042", players=2) == (200, "")
        assert events.get_nowait().names == ()  # none given: the configured ones stay
    finally:
        web.close()
    read_only = WebView("127.0.0.1:0", choices=Choices(GameConfig(name="mars")))
    try:
        assert get(read_only, "/game")[0] == 404
        assert new(read_only, pin="", players=3) == (403, "This page cannot start games")
    finally:
        read_only.close()


def test_reserves_from_the_page_are_checked_in_a_sentence_before_a_game_starts() -> None:
    from companion.config import GameConfig
    from companion.events import StartGame
    from companion.web.newgame import Choices

    events: queue.Queue[object] = queue.Queue()
    web = WebView("127.0.0.1:0", events=events, pin="0042",
                  choices=Choices(GameConfig(name="uranus")))
    try:
        described = json.loads(get(web, "/game")[1])
        assert described["colours"] == ["blue", "red", "yellow", "green", "purple"]
        assert new(web, pin="0042", players=2, reserves={"red": 30}) == (
            400, "The reserves are a list of colour counts, one per player")
        assert new(web, pin="0042", players=2, reserves=[{"red": "30"}, {}]) == (
            400, "A reserve's counts are whole numbers")
        assert new(web, pin="0042", players=2, reserves=[{"red": 12, "blue": 12, "green": 6},
                                                         {"red": 1}]) == (
            400, "P2 has 1 flowers: with 2 players each is dealt 30. "
                 "The reserves hold 13 red flowers: the bag has only 12.")
        assert events.empty()
        deal = [{"red": 6, "blue": 6, "green": 6, "yellow": 6, "purple": 6}] * 2
        assert new(web, pin="0042", players=2, reserves=deal) == (200, "")
        started = events.get_nowait()
        assert isinstance(started, StartGame) and started.reserves == tuple(deal)
    finally:
        web.close()
    assert Choices(GameConfig(name="enceladus")).describe()["colours"] == []


def test_cards_registered_face_down_are_not_named_in_the_game_so_far() -> None:
    from companion.referee.screen import Screen
    from companion.rules.uranus import RULES

    state = RULES.new_game(2, 1, {})
    step = RULES.parse_step(state, "show:triangle:red")
    after = RULES.apply(state, step)
    web = WebView("127.0.0.1:0")
    try:
        screen = Screen("uranus", "uranus-hexagonal", RULES.board(after), message="P1: ...")
        web.publish(screen, "up", 1, (RULES, "uranus-hexagonal", ((state, step),), after))
        status, text = get(web, "/record")
        assert status == 200 and "triangle:red" not in text
        assert json.loads(text)["positions"][1]["step"] == "a card registered face down"
    finally:
        web.close()
