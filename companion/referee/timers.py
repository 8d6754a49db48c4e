"""The referee's timers, and the one way of running a referee in virtual time.

The referee asks for its timers with :class:`~companion.referee.effects.SetTimer` effects
and is handed an :class:`~companion.events.Timer` event when one runs out.  :class:`Timers`
keeps them, for the daemon's loop (on the real clock) and for :class:`Timeline`.

:class:`VirtualClock` is virtual seconds with the events posted on them; a :class:`Timeline`
is one with a referee's timers too, whose :meth:`Timeline.advance` hands the events and the
timers to the referee in time order, with no thread and no sleep, so a whole game runs in
milliseconds and replays exactly.  The simulator's tables, the scenario runner and the tests
drive the referee through a timeline; a test of the daemon's loop uses a virtual clock as the
loop's clock and the source of its events (:meth:`VirtualClock.wait`).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import replace

from companion.events import AnyEvent, Timer, TimerName
from companion.referee.effects import Effects, SetTimer


class Timers(dict[TimerName, float]):
    """A referee's timers: name -> when it runs out (seconds on the events' clock)."""

    def arm(self, effect: SetTimer) -> None:
        """Carry out ``effect``: set or replace its timer, or cancel it (``at=None``)."""
        if effect.at is None:
            self.pop(effect.name, None)
        else:
            self[effect.name] = effect.at

    def pop_due(self, until: float) -> tuple[TimerName, float] | None:
        """The timer that runs out first, if it does by ``until`` (seconds), taken off, with
        when it ran out; among those that run out together, the first whose name was set
        first.  ``None`` when none is due by then."""
        if not self:
            return None
        name = min(self, key=self.__getitem__)
        at = self[name]
        if at > until:
            return None
        del self[name]
        return name, at


def _ignore(effects: Effects) -> None:
    pass


class VirtualClock:
    """Virtual seconds and the events posted on them; ``now``: the clock at the start.

    The clock moves only forward, to each event as it is handed out (which then carries the
    clock's time) or on by a wait.  Events at the same time come in the order they were
    posted.  Calling it reads the clock, so it serves as the ``clock`` of the parts it feeds.
    """

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self._posted: list[tuple[float, int, AnyEvent]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        """The virtual clock, in seconds."""
        return self.now

    def post(self, event: AnyEvent, at: float | None = None) -> None:
        """Post ``event`` to come at ``at`` (seconds; its own ``t`` unless given)."""
        heapq.heappush(self._posted, (event.t if at is None else at, next(self._order), event))

    def wait(self, timeout: float | None) -> AnyEvent | None:
        """The next event posted, as a blocking queue's ``get(timeout=timeout)`` hands it out
        (``None``: however long it takes), the clock moved on to it; ``None`` when it comes
        later than ``timeout`` seconds from now, the clock moved on by ``timeout``.  Raises
        ``LookupError`` when no event is posted: nothing else could ever come."""
        if not self._posted:
            raise LookupError("no event is posted on the virtual clock: the wait would not end")
        if timeout is not None and self._posted[0][0] > self.now + timeout:
            self.now += timeout
            return None
        return self._pop()

    def waiting(self) -> bool:
        """Whether an event is posted for now or earlier: one a queue would hold already."""
        at = self._next_at()
        return at is not None and at <= self.now

    def _next_at(self) -> float | None:
        return self._posted[0][0] if self._posted else None

    def _pop(self) -> AnyEvent:
        at, _, event = heapq.heappop(self._posted)
        self.now = max(self.now, at)
        return replace(event, t=self.now)


class Timeline(VirtualClock):
    """A referee on a virtual clock: the events posted and the referee's timers, handed to
    it in time order by :meth:`advance`.

    ``handle``: hands one event to the referee and returns its effects (``Referee.handle``,
    or a caller's wrapper that records or times it).  ``on_effects``: given every list of
    effects once their timers are set (:meth:`run`).  ``now``: the clock at the start.

    A timer runs out at its time and is delivered as an :class:`~companion.events.Timer` at
    the clock's time; one that runs out as an event comes goes first, as the daemon's loop
    fires the timers due before it handles the event it woke for.
    """

    def __init__(
        self,
        handle: Callable[[AnyEvent], Effects],
        *,
        on_effects: Callable[[Effects], None] = _ignore,
        now: float = 0.0,
    ) -> None:
        super().__init__(now)
        self.timers = Timers()
        self._handle = handle
        self._on_effects = on_effects

    def run(self, effects: Effects) -> Effects:
        """Set the timers ``effects`` ask for, then give them to ``on_effects``; returned."""
        for effect in effects:
            if isinstance(effect, SetTimer):
                self.timers.arm(effect)
        self._on_effects(effects)
        return effects

    def deliver(self, event: AnyEvent) -> Effects:
        """Hand ``event`` to the referee now, whatever its time, and :meth:`run` its effects."""
        return self.run(self._handle(event))

    def advance(self, until: float) -> None:
        """Deliver every event posted and every timer that runs out by ``until`` (seconds),
        in time order, each with its effects run; then move the clock on to ``until``."""
        while (event := self._next(until)) is not None:
            self.deliver(event)
        self.now = max(self.now, until)

    def _next(self, until: float) -> AnyEvent | None:
        """The event or timer due first by ``until``, taken off, the clock moved on to it."""
        event_at = self._next_at()
        timer = self.timers.pop_due(until if event_at is None else min(until, event_at))
        if timer is not None:
            name, at = timer
            self.now = max(self.now, at)
            return Timer(self.now, name)
        if event_at is not None and event_at <= until:
            return self._pop()
        return None
