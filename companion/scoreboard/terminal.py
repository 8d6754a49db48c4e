"""The scoreboard as plain text: one line per table, then the standings.

:func:`table_line` and :func:`standings_lines` are the text; :class:`TerminalBoard` writes
it to a stream: on a terminal the whole board is redrawn in place, on a pipe or a file only
the lines that changed are appended, so a log of the evening reads in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from companion.scoreboard.model import Scoreboard, Standing, TableView

HOME_AND_CLEAR = "\x1b[H\x1b[J"
"""Cursor to the top left, the screen below cleared (ECMA-48)."""


def table_line(view: TableView) -> str:
    """One table: its name, whether it is online, its game and steps, every seat's name and
    score (``>`` before the seat to move), and the end or what is wrong::

        t3  online   enceladus  24 steps  >Ann 3-4-5-5-6 | Bob 0-4-5-5-6
    """
    if not view.game:
        return f"{view.table}  {view.status:<7}  {view.note}"
    scores = dict(view.scores)
    seats = " | ".join(
        f"{'>' if seat == view.to_move else ''}{name} {scores.get(seat, '-')}"
        for seat, name in enumerate(view.names, 1))
    line = f"{view.table}  {view.status:<7}  {view.game}  {view.steps} steps  {seats}"
    if view.over:
        winners = " and ".join(view.names[w - 1] for w in view.winners
                               if 0 < w <= len(view.names))
        line += f"  -- over, {winners} won"
    if view.note:
        line += f"  ({view.note})"
    return line


def standings_lines(standings: Sequence[Standing], games: int) -> list[str]:
    """The standings after ``games`` finished games: a title, then one line a player
    (rank, name, rank points, games, wins)."""
    lines = [f"Standings after {games} finished game{'' if games == 1 else 's'}"]
    width = max((len(s.name) for s in standings), default=0)
    for s in standings:
        lines.append(f"{s.rank:3}. {s.name:<{width}}  {s.points:3} pts  {s.games} played  "
                     f"{s.wins} won")
    return lines


def board_lines(board: Scoreboard) -> list[str]:
    """The whole board: a line per table, a blank line, the standings."""
    tables = board.tables()
    lines = [table_line(view) for view in tables] or ["no table has been heard from yet"]
    return [*lines, "", *standings_lines(board.standings(), len(board.finished()))]


class TerminalBoard:
    """Writes the board to ``stream``: redrawn whole in place when ``in_place`` (a
    terminal), else only the lines that changed since the last write, appended."""

    def __init__(self, stream: TextIO, *, in_place: bool) -> None:
        self.stream = stream
        self.in_place = in_place
        self._last: list[str] = []

    def show(self, board: Scoreboard) -> None:
        """Write ``board`` as it is now."""
        lines = board_lines(board)
        if self.in_place:
            self.stream.write(HOME_AND_CLEAR + "\n".join(lines) + "\n")
        else:
            standings = lines.index("")
            tables, rest = lines[:standings], lines[standings + 1:]
            old = set(self._last)
            new = [line for line in tables if line not in old]
            before = self._last[self._last.index("") + 1:] if "" in self._last else None
            if rest != before:
                new += rest
            if new:
                self.stream.write("\n".join(new) + "\n")
        self.stream.flush()
        self._last = lines
