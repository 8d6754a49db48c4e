"""Debounce, per cell or per contact: a new reading counts once it has lasted the debounce
time; one that goes back to the settled reading first was a glitch and is dropped.

Pure and on the caller's clock (seconds): the referee debounces the board's field updates
with it on the events' time, the GPIO switch matrix its scans, the GPIO controls their
buttons' edges (with a timer set for :meth:`Debounce.next_at`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Debounce(Generic[K, V]):
    """The readings of keys (cells, contacts) waiting out ``hold_s`` seconds.

    :meth:`read` takes each new reading with the key's settled one; :meth:`due` gives the
    readings that have lasted ``hold_s`` (they are the settled ones from then on, which the
    caller keeps); :meth:`next_at` says when the next one will have, for a timer.
    """

    def __init__(self, hold_s: float) -> None:
        self.hold_s = hold_s
        self._pending: dict[K, tuple[V, float]] = {}

    def read(self, key: K, value: V, settled: V, now: float) -> None:
        """``key`` reads ``value`` at ``now`` while ``settled`` is what counts for it."""
        if value == settled:
            self._pending.pop(key, None)  # a glitch shorter than the debounce time
        elif key not in self._pending or self._pending[key][0] != value:
            self._pending[key] = (value, now)

    def due(self, now: float) -> list[tuple[K, V, float]]:
        """The ``(key, value, since)`` readings that have lasted ``hold_s`` at ``now``, in the
        order they began; they wait no more."""
        done = [(key, value, since) for key, (value, since) in self._pending.items()
                if now - since >= self.hold_s - 1e-9]
        for key, _, _ in done:
            del self._pending[key]
        return done

    def next_at(self) -> float | None:
        """When the first reading waiting will have lasted ``hold_s``; ``None`` for none."""
        if not self._pending:
            return None
        return min(since for _, since in self._pending.values()) + self.hold_s

    def __len__(self) -> int:
        """How many readings are waiting (none: every key reads what counts for it)."""
        return len(self._pending)

    def clear(self) -> None:
        """Forget every reading waiting (a whole new board was read)."""
        self._pending.clear()
