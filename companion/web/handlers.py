"""What the table's live page (:mod:`companion.web.server`) and the scoreboard's
(:mod:`companion.scoreboard.server`) serve alike: Tornado handlers that answer an error with a
sentence, a 404 for any other address, the page itself, and a server-sent-events stream that
sends a page what changed and nothing else.

Each server subclasses these beside its own base (which holds what the handlers serve); the
stream is bounded (a 503 in words past the server's limit), sends only when woken
(:attr:`EventStream.wake`, set by the server's loop) and a comment every :data:`PING_S` while
quiet, and drops a page whose write has not gone out within :data:`WRITE_TIMEOUT_S`.
"""

from __future__ import annotations

import abc
import asyncio
from typing import ClassVar

import tornado.iostream
import tornado.web

WRITE_TIMEOUT_S = 10.0
"""Seconds a page may take to take in one state before it is dropped."""
PING_S = 20.0
"""Seconds between two comments on a quiet event stream, so a page that went away is found."""
RETRY_MS = 1000
"""How soon a page whose stream broke connects again (the browser's EventSource does it)."""


class Handler(tornado.web.RequestHandler):
    """A handler whose errors are a sentence (:meth:`error_page`), never a traceback."""

    def error_page(self, status_code: int, reason: str) -> tuple[str, str]:
        """``(content_type, body)`` answering error ``status_code``; ``reason`` is its
        sentence, without the full stop."""
        return "text/plain; charset=utf-8", f"{reason}.\n"

    def write_error(self, status_code: int, **kwargs: object) -> None:
        # Tornado shows a traceback only in debug mode, which is never set.
        content_type, body = self.error_page(status_code, self._reason)
        self.set_header("Content-Type", content_type)
        self.finish(body)


class NotFound(Handler):
    """An address the server does not serve: 404, with :attr:`missing` as its sentence."""

    missing: ClassVar[str] = "No such page"

    def prepare(self) -> None:
        raise tornado.web.HTTPError(404, reason=self.missing)


class Page(Handler, abc.ABC):
    """``GET``: the page (:meth:`html`), never cached (it is live)."""

    @abc.abstractmethod
    def html(self) -> str:
        """The page's HTML (each server's page has its own)."""

    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        self.finish(self.html())


class EventStream(Handler, abc.ABC):
    """One page's server-sent-events stream: ``retry``, then whatever :meth:`news` has each
    time the stream is woken, a ping while quiet.

    A subclass names the server's set of open streams (:meth:`open_streams`, at most
    :attr:`max_streams`; :attr:`too_many` is the 503's sentence past it) and what is new
    for this page since the last call (:meth:`news`: event-stream text, ``""`` for nothing).
    """

    max_streams: ClassVar[int]
    too_many: ClassVar[str]
    wake: asyncio.Event
    _gone = False

    @abc.abstractmethod
    def open_streams(self) -> set[EventStream]:
        """The server's set of open streams."""

    @abc.abstractmethod
    def news(self) -> str:
        """What is new for this page since the last call."""

    async def get(self) -> None:
        streams = self.open_streams()
        if len(streams) >= self.max_streams:
            raise tornado.web.HTTPError(503, reason=self.too_many)
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.wake = asyncio.Event()
        streams.add(self)
        try:
            await self._send(f"retry: {RETRY_MS}\n\n")
            while not self._gone:
                news = self.news()
                if news:
                    await self._send(news)
                    continue
                self.wake.clear()
                try:
                    await asyncio.wait_for(self.wake.wait(), PING_S)
                except TimeoutError:
                    await self._send(": ping\n\n")
        except (tornado.iostream.StreamClosedError, TimeoutError):
            pass  # the page went away, or takes nothing in: it reconnects if it can
        finally:
            streams.discard(self)
            if not self._gone and self.request.connection is not None:
                self.request.connection.close()  # type: ignore[attr-defined]

    async def _send(self, text: str) -> None:
        self.write(text)
        await asyncio.wait_for(self.flush(), WRITE_TIMEOUT_S)

    def on_connection_close(self) -> None:
        self._gone = True
        if hasattr(self, "wake"):
            self.wake.set()
