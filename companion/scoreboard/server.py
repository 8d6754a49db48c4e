"""The scoreboard's web page: Tornado on a thread and an asyncio loop of its own, live through
server-sent events, as the table's own page (:mod:`companion.web.server`).

``GET /`` is the page; ``GET /events`` the stream: every table at once (``event: table``, its
JSON with its board drawn as the table's page draws it, :func:`companion.web.page.board_svg`)
and the standings (``event: standings``), then only what changed -- a table whose step came,
the standings when a game ended or a name changed.  A page that takes in slowly only ever
gets the newest of each (never a queue of old ones); one whose write has not gone out within
:data:`~companion.web.handlers.WRITE_TIMEOUT_S` is dropped; connections and streams are bounded
as on the table's page.

An organiser names a seat from the page (``POST /name``, JSON ``{"pin": "1234", "table":
"t3", "seat": 2, "name": "Ann"}``) with the PIN the scoreboard printed when it started; the
name is kept by the scoreboard (:meth:`Scoreboard.set_name`), nothing is sent to the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
from importlib import resources

import tornado.netutil
import tornado.web

from companion.errors import CompanionError, UsageError
from companion.scoreboard.model import Scoreboard, TableView
from companion.web.handlers import EventStream, Handler, NotFound, Page
from companion.web.page import board_svg
from companion.web.server import (
    IDLE_TIMEOUT_S,
    MAX_BODY_BYTES,
    MAX_HEADER_BYTES,
    BoundedServer,
    PinGuard,
    parse_listen,
)

log = logging.getLogger("companion.scoreboard")

MAX_STREAMS = 64
"""Event streams open at once: the organisers' screens, a projector, players' phones."""


def table_data(view: TableView, board: str) -> dict[str, object]:
    """One table as the page reads it, JSON-ready: the fields of ``view`` (``scores`` as
    ``[[seat, text], ...]``) and ``board``, its SVG (``""`` when not known)."""
    return {"table": view.table, "status": view.status, "game": view.game,
            "game_id": view.game_id, "names": list(view.names),
            "scores": [list(s) for s in view.scores], "to_move": view.to_move,
            "over": view.over, "winners": list(view.winners), "steps": view.steps,
            "note": view.note, "ignored": view.ignored, "board": board}


class _Base(Handler):
    page: ScoreboardPage

    def initialize(self, page: ScoreboardPage) -> None:
        self.page = page


class _NotFound(_Base, NotFound):
    missing = "No such page: the scoreboard is at /"


class _Page(_Base, Page):
    def html(self) -> str:
        return self.page.html


class _Events(_Base, EventStream):
    max_streams = MAX_STREAMS
    too_many = "Too many pages are open on the scoreboard"

    def initialize(self, page: ScoreboardPage) -> None:
        super().initialize(page)
        self._sent: dict[str, str] = {}  # what this page was sent: each table, "" the standings

    def open_streams(self) -> set[EventStream]:
        return self.page.streams

    def news(self) -> str:
        tables, standings = self.page.current()
        news = [f"event: table\ndata: {text}\n\n" for name, text in tables.items()
                if self._sent.get(name) != text]
        if self._sent.get("") != standings:
            news.append(f"event: standings\ndata: {standings}\n\n")
        if news:
            self._sent = {**tables, "": standings}
        return "".join(news)


class _Name(_Base):
    def post(self) -> None:
        try:
            asked = json.loads(self.request.body)
            pin, table, seat, name = asked["pin"], asked["table"], asked["seat"], asked["name"]
        except (ValueError, TypeError, KeyError):
            raise tornado.web.HTTPError(400, reason='A name is JSON: {"pin": "1234", "table": '
                                        '"t3", "seat": 2, "name": "Ann"}') from None
        if not (isinstance(pin, str) and isinstance(table, str) and isinstance(name, str)
                and isinstance(seat, int) and not isinstance(seat, bool)):
            raise tornado.web.HTTPError(400, reason="The PIN, table and name are text, the "
                                        "seat a number")
        refusal = self.page.guard.check(pin, f"a name for table {table[:40]!r}",
                                        "the scoreboard printed it when it started")
        if refusal:
            raise tornado.web.HTTPError(403, reason=refusal)
        try:
            self.page.board.set_name(table, seat, name)
        except CompanionError as error:
            raise tornado.web.HTTPError(400, reason=str(error)) from None
        self.page.changed()
        self.finish({"named": name})


class ScoreboardPage:
    """The page of ``board`` served on ``listen`` (``"host:port"``, port 0: a free one;
    :attr:`address` says where) from a daemon thread; ``pin``: the organiser's PIN (drawn
    when ``""``, :attr:`guard`).  :meth:`changed` says the board changed.  Raises
    :class:`UsageError` when ``listen`` cannot be listened on, before any thread starts."""

    def __init__(self, listen: str, board: Scoreboard, *, pin: str = "") -> None:
        host, colon, digits = listen.rpartition(":")
        if not (colon and digits.isdigit() and int(digits) <= 65535):
            raise UsageError(f"--listen {listen!r} is not HOST:PORT with a port from 0 to "
                             "65535, such as 0.0.0.0:8090 ('' for no page)")
        try:
            host, port = parse_listen(listen)
            self._sockets = tornado.netutil.bind_sockets(port, host or None,
                                                         family=socket.AF_UNSPEC)
        except (OSError, ValueError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            raise UsageError(f"--listen {listen!r} cannot be listened on: {reason}") from None
        bound = self._sockets[0].getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        if shown in ("0.0.0.0", "[::]"):
            shown = socket.gethostname()
        self.address = f"http://{shown}:{bound[1]}/"
        """The page's address, such as ``http://127.0.0.1:8090/``."""
        self.board = board
        self.guard = PinGuard(pin)
        self.html = resources.files("companion.scoreboard").joinpath(
            "static", "scoreboard.html").read_text("utf-8")
        self.streams: set[EventStream] = set()
        self._drawn: dict[str, tuple[tuple[str, int], str]] = {}  # table -> (key, svg)
        self._rendered: tuple[int, dict[str, str], str] = (-1, {}, "")
        self._wake_pending = False
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="scoreboard-web", daemon=True)
        self._thread.start()
        self._started.wait(5.0)

    def changed(self) -> None:
        """The board changed: wake the open pages (never blocks; any thread)."""
        if self.streams and not self._wake_pending:
            self._wake_pending = True
            with contextlib.suppress(RuntimeError):  # the loop is closing
                self._loop.call_soon_threadsafe(self._wake)

    def close(self) -> None:
        """Stop serving and close every connection; waits for the thread up to 5 s."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)

    def current(self) -> tuple[dict[str, str], str]:
        """Every table's JSON by name and the standings' JSON, made at most once per change
        of the board (loop thread); a board drawn once per position."""
        version = self.board.version
        if self._rendered[0] != version:
            tables = {}
            for view in self.board.tables():
                key = (view.game_id, view.seq)
                drawn = self._drawn.get(view.table)
                if drawn is None or drawn[0] != key:
                    drawn = (key, board_svg(view.screen) if view.screen is not None else "")
                    self._drawn[view.table] = drawn
                tables[view.table] = json.dumps(table_data(view, drawn[1]),
                                                separators=(",", ":"))
            standings = {
                "standings": [[s.rank, s.name, s.points, s.games, s.wins]
                              for s in self.board.standings()],
                "finished": [[f.table, f.game_id, f.game, [list(r) for r in f.ranking],
                              list(f.winners)] for f in self.board.finished()]}
            self._rendered = (version, tables, json.dumps(standings, separators=(",", ":")))
        return self._rendered[1], self._rendered[2]

    def _wake(self) -> None:
        self._wake_pending = False
        for stream in self.streams:
            stream.wake.set()

    def _serve(self) -> None:
        logging.getLogger("tornado").setLevel(logging.WARNING)
        asyncio.set_event_loop(self._loop)
        args = {"page": self}
        app = tornado.web.Application(
            [(r"/", _Page, args), (r"/events", _Events, args), (r"/name", _Name, args)],
            default_handler_class=_NotFound, default_handler_args=args,
            log_function=lambda handler: None, compress_response=False)
        server = BoundedServer(app, max_header_size=MAX_HEADER_BYTES, max_body_size=MAX_BODY_BYTES,
                         max_buffer_size=MAX_HEADER_BYTES + MAX_BODY_BYTES,
                         idle_connection_timeout=IDLE_TIMEOUT_S, body_timeout=IDLE_TIMEOUT_S)
        server.add_sockets(self._sockets)
        self._started.set()
        try:
            self._loop.run_forever()
        finally:
            server.stop()
            for stream in list(self.streams):
                stream.on_connection_close()
            self._loop.run_until_complete(server.close_all_connections())
            self._loop.close()
