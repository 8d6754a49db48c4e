"""The live page's server: Tornado on a thread and an asyncio loop of its own.

The referee thread never waits for the network: :meth:`WebView.publish` keeps the latest
screen (one assignment) and, only while a page is open, wakes the server's loop
(``call_soon_threadsafe``, which never blocks).  The loop turns the latest screen into the
page's JSON (:func:`companion.web.page.snapshot`) once per change, and only while a page is
open, and pushes it to every open page as a server-sent event; a page that connects, or
reconnects, gets the whole current state first.  A slow page only ever gets the newest state
(it is never queued behind older ones), and one whose write has not gone out within
:data:`~companion.web.handlers.WRITE_TIMEOUT_S` is dropped.

Bad input: request heads over :data:`MAX_HEADER_BYTES`, bodies over :data:`MAX_BODY_BYTES`
and malformed requests are refused by Tornado's HTTP parser (400/431, no traceback); an
unknown address gets a short 404 page; at most :data:`MAX_CONNECTIONS` connections are kept
(the next is closed at once) and :data:`MAX_STREAMS` event streams (the next is answered 503
in words); an idle connection is closed after :data:`IDLE_TIMEOUT_S`.

Control from the page (``POST /press``, JSON ``{"pin": "1234", "button": "ok"}``; the button
``hint`` asks for a hint, as a long Select press does): the PIN
is drawn at start and shown on the LED matrix (the ``web`` extra of every screen, which the
page leaves out), so only someone who can read the matrix, at the table, can press; without
it the page is read-only.  A press becomes exactly what a button makes: a
:class:`~companion.events.Button` press and release on the daemon's one event queue.  After
:data:`MAX_WRONG_PINS` wrong PINs in a row every press is refused for :data:`LOCKOUT_S`
seconds (four digits are few).

A new game from the page (``GET /game``: the form, :class:`companion.web.newgame.Choices`;
``POST /new``, JSON ``{"pin": ..., "players": 3, "seed": 0, "options": {...}, "names":
["Ann", "Bob", ""], "seats": "person, strong", "end": false}``),
behind the same PIN: a choice the rules core refuses is answered 400 with its sentence; while
a game is in progress (a step made, no ranking yet) it is refused 409 unless ``end`` confirms
that it is to be ended; else it becomes a :class:`~companion.events.StartGame` on the event
queue, and the daemon starts it as OK after the end starts the next game.

The game record, read-only and local to each page (stepping never changes the game):
``GET /record`` is the game so far (every position of the referee's history, drawn as the
record page draws a journal: :func:`companion.web.page.record`), ``GET /journals`` the names
of the finished games in the journal folder (newest first, at most :data:`MAX_JOURNALS`) and
``GET /journals/<name>`` one of them; any name the list does not hold is a 404, so no path
from a request ever reaches the file system.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import errno
import json
import logging
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import tornado.httpserver
import tornado.iostream
import tornado.netutil
import tornado.web

from companion import journal
from companion.errors import CompanionError, ConfigError, JournalError
from companion.events import AnyEvent, Button, Hint, StartGame
from companion.referee.effects import Committed
from companion.referee.screen import Screen
from companion.rules.base import SomeRules
from companion.tools.replay import history_moments, layout_of, read_game, screens
from companion.web.handlers import EventStream, Handler, NotFound, Page
from companion.web.newgame import Choices
from companion.web.page import PIN_EXTRA, Record, chart_svg, page_html, record, snapshot

log = logging.getLogger("companion.web")

MAX_HEADER_BYTES = 8 * 1024
MAX_BODY_BYTES = 4 * 1024
MAX_CONNECTIONS = 64
MAX_STREAMS = 16
"""Event streams open at once: a table's players and onlookers, with room to spare."""
IDLE_TIMEOUT_S = 60.0
BUTTONS = ("ok", "select", "undo", "hint")
"""The buttons the page can press."""
MAX_WRONG_PINS = 5
LOCKOUT_S = 60.0
MAX_JOURNALS = 100
"""Finished games the page lists, the newest first."""


Played = tuple[SomeRules, str, tuple[tuple[object, object], ...], object]
"""A game so far: its rules core, board layout, the referee's ``(state_before, step)``
history and the position after it."""


def parse_listen(listen: str) -> tuple[str, int]:
    """``"host:port"`` (``"[::1]:8080"`` for IPv6) -> ``(host, port)``."""
    host, _, port = listen.rpartition(":")
    return host.strip("[]"), int(port)


class PageServer(abc.ABC):
    """What the table's page and an event's scoreboard share: a Tornado application
    (:meth:`application`) served on ``listen`` (``"host:port"``, ``"[::1]:8080"`` for IPv6;
    port 0 takes a free one, :attr:`address` says which) from a daemon thread named
    ``thread``, the pages' open event streams (:attr:`streams`), woken by :meth:`changed`,
    and :meth:`close`.  The sockets are bound here, before any thread starts: when
    ``listen`` cannot be listened on this raises ``refused(reason)``, ``reason`` in words
    (``"Address already in use"``).  A subclass sets what its handlers read, then calls
    :meth:`serve`."""

    def __init__(self, listen: str, refused: Callable[[str], CompanionError],
                 thread: str) -> None:
        host, port = parse_listen(listen)
        try:
            self._sockets = tornado.netutil.bind_sockets(port, host or None,
                                                         family=socket.AF_UNSPEC)
        except (OSError, ValueError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            if getattr(error, "errno", None) == errno.EAFNOSUPPORT:  # systemd's sandbox
                reason += " (companion.service needs RestrictAddressFamilies=AF_UNIX AF_INET " \
                          "AF_INET6 for the page)"
            raise refused(reason) from None
        bound = self._sockets[0].getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        if shown in ("0.0.0.0", "[::]"):
            shown = socket.gethostname()
        self.address = f"http://{shown}:{bound[1]}/"
        """The page's address, such as ``http://127.0.0.1:8080/``."""
        self.streams: set[EventStream] = set()
        self._wake_pending = False
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=thread, daemon=True)

    @abc.abstractmethod
    def application(self) -> tornado.web.Application:
        """The routes served (called once, in the server's thread)."""

    def serve(self) -> None:
        """Start the server's thread; returns once it serves (or after 5 s)."""
        self._thread.start()
        self._started.wait(5.0)

    def changed(self) -> None:
        """What the pages show changed: wake the open ones (never blocks; any thread)."""
        if self.streams and not self._wake_pending:
            self._wake_pending = True
            with contextlib.suppress(RuntimeError):  # the loop is closing
                self._loop.call_soon_threadsafe(self._woken)

    def close(self) -> None:
        """Stop serving and close every connection; waits for the thread up to 5 s."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)

    def _woken(self) -> None:
        self._wake_pending = False
        for stream in self.streams:
            stream.wake.set()

    def _serve(self) -> None:
        # Tornado says at info level every malformed request it refuses: a flood of them
        # must not flood the daemon's log.
        logging.getLogger("tornado").setLevel(logging.WARNING)
        asyncio.set_event_loop(self._loop)
        server = BoundedServer(self.application(), max_header_size=MAX_HEADER_BYTES,
                               max_body_size=MAX_BODY_BYTES,
                               max_buffer_size=MAX_HEADER_BYTES + MAX_BODY_BYTES,
                               idle_connection_timeout=IDLE_TIMEOUT_S,
                               body_timeout=IDLE_TIMEOUT_S)
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


class _Base(Handler):
    view: WebView

    def initialize(self, view: WebView) -> None:
        self.view = view

    def error_page(self, status_code: int, reason: str) -> tuple[str, str]:
        return "text/html; charset=utf-8", (f"<!doctype html><title>{status_code}</title>"
                                            f'<p>{reason}. The table is at <a href="/">/</a>.</p>')


class _NotFound(_Base, NotFound):
    pass


class _Page(_Base, Page):
    def html(self) -> str:
        return self.view.page


class _Events(_Base, EventStream):
    """One page's event stream: the whole state at once, then every change."""

    max_streams = MAX_STREAMS
    too_many = "Too many pages are open on this table"
    _sent = 0

    def open_streams(self) -> set[EventStream]:
        return self.view.streams

    def news(self) -> str:
        seq, payload = self.view.current()
        if seq == self._sent:
            return ""
        self._sent = seq
        return f"data: {payload}\n\n"


class _Press(_Base):
    """A button pressed on the page: the PIN checked, then the press on the event queue."""

    def post(self) -> None:
        try:
            asked = json.loads(self.request.body)
            pin, button = asked["pin"], asked["button"]
        except (ValueError, TypeError, KeyError, RecursionError):  # too deep: bad too
            raise tornado.web.HTTPError(
                400, reason='A press is JSON: {"pin": "1234", "button": "ok"}') from None
        if button not in BUTTONS or not isinstance(pin, str):
            raise tornado.web.HTTPError(400, reason=f"The buttons are {', '.join(BUTTONS)}")
        refusal = self.view.allowed(pin, f"a press of {button}")
        if refusal:
            raise tornado.web.HTTPError(403, reason=refusal)
        self.view.press(button)
        self.finish({"pressed": button})


def _public(step: str, state: object) -> str:
    """A step as anyone watching the page may read it: a Gardens of Uranus mission card
    registered face down before the turns (``show:...`` while gardeners are being placed)
    is secret, so it is not named."""
    if step.startswith("show:") and getattr(state, "phase", "") == "placement":
        return "a card registered face down"
    return step


class _Form(_Base):
    def get(self) -> None:
        if self.view.choices is None:
            raise tornado.web.HTTPError(404, reason="This page cannot start games")
        self.finish(self.view.choices.describe())


class _NewGame(_Base):
    """A new game asked from the page: the PIN, the choices, the confirmation, then the
    event on the queue."""

    def post(self) -> None:
        try:
            asked = json.loads(self.request.body)
            pin = asked["pin"]
            chosen = (asked["players"], asked.get("seed", 0), asked.get("options", {}),
                      asked.get("names"))
        except (ValueError, TypeError, KeyError, RecursionError):  # too deep: bad too
            raise tornado.web.HTTPError(
                400, reason='A new game is JSON: {"pin": "1234", "players": 3}') from None
        if not isinstance(pin, str):
            raise tornado.web.HTTPError(400, reason="The PIN is text")
        status, refusal = self.view.start(pin, *chosen, end=asked.get("end") is True,
                                          reserves=asked.get("reserves"),
                                          seats=asked.get("seats", ""))
        self.set_status(status)  # the sentence in the body: a rules core's may be any text
        self.finish({"refused": refusal} if refusal else {"started": True})


class _GameSoFar(_Base):
    def get(self) -> None:
        self.set_header("Cache-Control", "no-cache")
        self.finish(dict(self.view.game_so_far()))


class _Journals(_Base):
    def get(self) -> None:
        self.set_header("Cache-Control", "no-cache")
        self.finish({"journals": self.view.finished_journals()})


class _Journal(_Base):
    def get(self, name: str) -> None:
        if name not in self.view.finished_journals():
            raise tornado.web.HTTPError(404, reason="No such finished game")
        try:
            game = self.view.finished_game(name)
        except JournalError as error:
            raise tornado.web.HTTPError(500, reason=f"This game cannot be read: {error}"
                                        ) from None
        self.finish(dict(game))


class BoundedServer(tornado.httpserver.HTTPServer):
    """Tornado's server with a bound on the connections it keeps (:data:`MAX_CONNECTIONS`;
    the next is closed at once)."""

    def handle_stream(self, stream: tornado.iostream.IOStream,
                      address: tuple[object, ...]) -> None:
        if len(self._connections) >= MAX_CONNECTIONS:
            stream.close()
            return
        super().handle_stream(stream, address)


class PinGuard:
    """A control PIN (``pin``, four digits drawn when ``""``): :meth:`check` lets a request
    through with the right one and, after :data:`MAX_WRONG_PINS` wrong ones in a row, none
    for :data:`LOCKOUT_S` seconds of ``clock`` (four digits are few)."""

    def __init__(self, pin: str = "", clock: Callable[[], float] = time.monotonic) -> None:
        self.pin = pin or f"{secrets.randbelow(10_000):04}"
        self._clock = clock
        self._wrong = 0
        self._locked_until = 0.0

    def check(self, pin: str, what: str, where: str) -> str:
        """``""`` when ``pin`` is the PIN, else why not, for the page (``where`` says where
        the PIN is to be read: ``"the matrix shows it"``); ``what`` was asked, for the log."""
        now = self._clock()
        if now < self._locked_until:
            return "Too many wrong PINs: try again in a minute"
        # JSON may carry a lone surrogate, which plain UTF-8 cannot encode: a wrong PIN too.
        if not secrets.compare_digest(pin.encode(errors="surrogatepass"), self.pin.encode()):
            self._wrong += 1
            if self._wrong >= MAX_WRONG_PINS:
                self._wrong, self._locked_until = 0, now + LOCKOUT_S
            log.warning("%s from the page was refused: wrong PIN", what)
            return f"Wrong PIN: {where}"
        self._wrong = 0
        return ""


class WebView(PageServer):
    """The live page of one table, served on ``listen`` (``"host:port"``; port 0 takes a
    free one, :attr:`address` says which) from a daemon thread.

    ``title``: the page's heading.  ``events``: the daemon's event queue, where the page's
    presses go (``None``: the page is read-only); ``clock``: the daemon's clock, for their
    time stamps; ``pin``: the control PIN (drawn when not given), :attr:`pin`;
    ``journals``: the journal folder whose finished games the page lists (``None``: none);
    ``choices``: what a new game started from the page may be (``None``: it cannot).  Raises
    :class:`ConfigError` when the address cannot be listened on (in use, not an address of
    this machine), before any thread starts.
    """

    def __init__(self, listen: str, *, title: str = "Gardens Companion",
                 events: queue.SimpleQueue[AnyEvent] | None = None,
                 clock: Callable[[], float] = time.monotonic, pin: str = "",
                 journals: Path | None = None, choices: Choices | None = None) -> None:
        super().__init__(listen, lambda reason: ConfigError(
            f"[web] listen {listen!r} cannot be listened on: {reason}"), "companion-web")
        self.page = page_html(title)
        self._guard = PinGuard(pin, clock)
        self.pin = self._guard.pin
        """The PIN that lets the page press the buttons, shown on the matrix."""
        self._events = events
        self._clock = clock
        self._journals = journals
        self.choices = choices if events is not None else None
        self._played: Played | None = None
        self._steps: list[tuple[int, str]] = []  # (player, notation) of each step committed
        self._scores: list[tuple[tuple[int, str], ...]] = []  # after each step, the setup first
        # (seq, screen, link, steps committed, their (player, notation), the scores after each)
        self._latest: tuple[int, Screen | None, str, int, tuple[tuple[int, str], ...],
                            tuple[tuple[tuple[int, str], ...], ...]] = (
            0, None, "waiting", 0, (), ())
        self._rendered: tuple[int, str] = (0, "")
        self.serve()

    # ------------------------------------------------------------------ the referee's side
    def publish(self, screen: Screen, link: str = "waiting", steps: int = 0,
                played: Played | None = None) -> None:
        """Make ``screen`` (a :class:`~companion.referee.screen.Screen`) the page's state,
        with the board link's state and the steps committed (fewer than before: steps were
        taken back), and ``played``, the game so far for ``GET /record`` (kept as it is:
        nothing in it may change afterwards).  Never blocks, draws nothing: the server's
        loop draws it if a page is open."""
        if played is not None:
            self._played = played
        del self._steps[steps:]
        self._scores[steps:] = [tuple(screen.scores)]
        seq = self._latest[0] + 1
        self._latest = (seq, screen, link, steps, tuple(self._steps), tuple(self._scores))
        self.changed()

    def commit(self, committed: Committed) -> None:
        """Record a step committed (a :class:`~companion.referee.effects.Committed`) for the
        page's list of steps; its screen follows with :meth:`publish`."""
        self._steps[committed.number - 1:] = [(committed.player, committed.step)]

    def mark(self, screen: Screen) -> Screen:
        """``screen`` with the control PIN among its extras, for the matrix (the page
        leaves it out); unchanged when the page is read-only."""
        if self._events is None:
            return screen
        return replace(screen, extra={**screen.extra, PIN_EXTRA: f"PIN {self.pin}"})

    def allowed(self, pin: str, what: str) -> str:
        """``""`` when a page that gave ``pin`` may control the table, else why not (``what``
        it asked, for the log: ``"a press of ok"``)."""
        if self._events is None:
            return "This page is read-only"
        return self._guard.check(pin, what, "the matrix shows it")

    def press(self, button: str) -> None:
        """Press ``button`` (one of :data:`BUTTONS`; the page :meth:`allowed`): its press and
        release go on the event queue."""
        assert self._events is not None
        now = self._clock()
        if button == "hint":  # the page's own button: what a long Select press asks
            self._events.put(Hint(now))
            return
        self._events.put(Button(now, name=button, pressed=True))
        self._events.put(Button(now, name=button, pressed=False))

    def start(self, pin: str, players: object, seed: object, options: object,
              names: object = None, *, end: bool = False, reserves: object = None,
              seats: object = "") -> tuple[int, str]:
        """Start a new game of ``players`` with ``seed``, ``options``, the seats' ``names``
        (``None``: as configured), ``reserves`` dealt by hand and ``seats`` (checked by
        :meth:`Choices.choose`, :meth:`Choices.seat_names` and :meth:`Choices.choose_seats`)
        for a page that gave ``pin``, ending the game in progress only when ``end``: a
        :class:`StartGame` on the event queue.  Returns ``(200, "")``, or the HTTP status and
        the sentence of the refusal."""
        if self.choices is None:
            return 403, "This page cannot start games"
        refusal = self.allowed(pin, "a new game")
        if refusal:
            return 403, refusal
        try:
            players, seed, options, dealt = self.choices.choose(players, seed, options,
                                                                reserves)
            named = () if names is None else self.choices.seat_names(names, players)
            chosen_seats = self.choices.choose_seats(players, seats)
        except CompanionError as error:
            return 400, str(error)
        screen, steps = self._latest[1], self._latest[3]
        if steps and screen is not None and not screen.ranking and not end:
            return 409, (f"A game is in progress ({steps} steps): confirm that it ends to "
                         "start the new one")
        assert self._events is not None
        self._events.put(StartGame(self._clock(), players=players, seed=seed, options=options,
                                   reserves=dealt, names=named, seats=chosen_seats))
        log.info("a new game of %d players was asked from the page", players)
        return 200, ""

    # ------------------------------------------------------------------ the server's loop
    def current(self) -> tuple[int, str]:
        """The latest state's ``(seq, JSON)``, drawn at most once per state (loop thread)."""
        seq, screen, link, steps, made, scores = self._latest
        if self._rendered[0] != seq and screen is not None:
            data = snapshot(screen, seq=seq, link=link, steps=steps)
            data["record"] = [[player, step] for player, step in made]
            data["chart"] = chart_svg(list(scores))
            self._rendered = (seq, json.dumps(data, separators=(",", ":")))
        return self._rendered

    def game_so_far(self) -> Record:
        """The game so far as the page steps through it (:func:`companion.web.page.record`;
        no position before the first publish with ``played``)."""
        if self._played is None:
            return {"positions": [], "chart": "", "over": False}
        rules, layout, history, state = self._played
        moments = [replace(m, step=_public(m.step, m.state))
                   for m in history_moments(rules, history, state)]
        return record(screens(layout, rules, moments), [m.step for m in moments])

    def finished_journals(self) -> list[str]:
        """The names of the journals in the journal folder whose game has ended, the newest
        first (at most :data:`MAX_JOURNALS`); journals that cannot be read are left out."""
        if self._journals is None or not self._journals.is_dir():
            return []
        names = []
        for path in sorted(self._journals.glob("*.jsonl"), reverse=True):
            try:
                if journal.read(path).over is not None:
                    names.append(path.name)
            except JournalError:
                continue
            if len(names) == MAX_JOURNALS:
                break
        return names

    def finished_game(self, name: str) -> Record:
        """The finished game of journal ``name`` (one :meth:`finished_journals` lists) as the
        page steps through it.  Raises :class:`JournalError` when it cannot be replayed."""
        assert self._journals is not None
        found, rules, moments = read_game(self._journals / name)
        return {**record(screens(layout_of(found, rules), rules, moments),
                         [m.step for m in moments]), "name": name}

    def application(self) -> tornado.web.Application:
        return tornado.web.Application(
            [(r"/", _Page, {"view": self}), (r"/events", _Events, {"view": self}),
             (r"/press", _Press, {"view": self}), (r"/record", _GameSoFar, {"view": self}),
             (r"/journals", _Journals, {"view": self}),
             (r"/journals/([^/]+)", _Journal, {"view": self}),
             (r"/game", _Form, {"view": self}), (r"/new", _NewGame, {"view": self})],
            default_handler_class=_NotFound, default_handler_args={"view": self},
            log_function=_log_request, compress_response=False,
        )


def _log_request(handler: tornado.web.RequestHandler) -> None:
    status = handler.get_status()
    log.debug("%d %s %s", status, handler.request.method, handler.request.uri)
