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

import json
import logging
from importlib import resources

import tornado.web

from companion.errors import CompanionError, UsageError
from companion.scoreboard.model import Scoreboard, TableView
from companion.web.handlers import EventStream, Handler, NotFound, Page
from companion.web.page import board_svg
from companion.web.server import PageServer, PinGuard

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
        except (ValueError, TypeError, KeyError, RecursionError):  # too deep: bad too
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


class ScoreboardPage(PageServer):
    """The page of ``board`` served on ``listen`` (``"host:port"``, port 0: a free one;
    :attr:`address` says where) from a daemon thread; ``pin``: the organiser's PIN (drawn
    when ``""``, :attr:`guard`).  :meth:`changed` says the board changed.  Raises
    :class:`UsageError` when ``listen`` cannot be listened on, before any thread starts."""

    def __init__(self, listen: str, board: Scoreboard, *, pin: str = "") -> None:
        host, colon, digits = listen.rpartition(":")
        if not (colon and digits.isdigit() and int(digits) <= 65535):
            raise UsageError(f"--listen {listen!r} is not HOST:PORT with a port from 0 to "
                             "65535, such as 0.0.0.0:8090 ('' for no page)")
        super().__init__(listen, lambda reason: UsageError(
            f"--listen {listen!r} cannot be listened on: {reason}"), "scoreboard-web")
        self.board = board
        self.guard = PinGuard(pin)
        self.html = resources.files("companion.scoreboard").joinpath(
            "static", "scoreboard.html").read_text("utf-8")
        self._drawn: dict[str, tuple[tuple[str, int], str]] = {}  # table -> (key, svg)
        self._rendered: tuple[int, dict[str, str], str] = (-1, {}, "")
        self.serve()

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

    def application(self) -> tornado.web.Application:
        args = {"page": self}
        return tornado.web.Application(
            [(r"/", _Page, args), (r"/events", _Events, args), (r"/name", _Name, args)],
            default_handler_class=_NotFound, default_handler_args=args,
            log_function=lambda handler: None, compress_response=False)
