"""The live page's New game form: the choices of the game the companion is configured for.

The sensor board is built for one game (and, for Gardens of Uranus, one board), so the page
offers that game alone: its players, its seed and the options its rules core reads (the
fields of the core's ``Options``, each with the configured value, else the core's default),
less those the board fixes (what :meth:`companion.config.GameConfig.rules_options` adds by
itself, the Uranus board).  A choice is checked by the rules core's own ``new_game``, so a
refusal is the core's own sentence.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from companion.config import MAX_SEED, SEATS, GameConfig
from companion.errors import CompanionError
from companion.rules import load


class Choices:
    """What the page may choose for a new game of ``game`` (the configured ``[game]``) and
    who sits where (``seats``, the configured ``[players] seats``)."""

    def __init__(self, game: GameConfig, seats: tuple[str, ...] = ()) -> None:
        self.game = game
        self.seats = seats
        module = load(game.name)
        self.rules = module.RULES
        fixed = set(dataclasses.replace(game, options={}).rules_options())
        self.defaults: dict[str, Any] = {
            f.name: game.options.get(f.name, f.default)
            for f in dataclasses.fields(module.Options) if f.name not in fixed}
        """Option name -> its value now (a bool, int, str or tuple of str)."""

    def describe(self) -> dict[str, Any]:
        """The form, JSON-ready: ``game``, ``players``, ``seed``, ``seats`` (comma-separated
        text, ``""`` for people everywhere), the seat ``strengths`` and ``options``
        (``[[name, value], ...]``, a tuple of names as one comma-separated text)."""
        return {"game": self.game.name, "players": self.game.players, "seed": self.game.seed,
                "seats": ", ".join(self.seats), "strengths": list(SEATS),
                "options": [[name, ", ".join(value) if isinstance(value, tuple) else value]
                            for name, value in self.defaults.items()]}

    def choose(self, players: Any, seed: Any, options: Any) -> tuple[int, int, dict[str, Any]]:
        """``(players, seed, options)`` checked: whole numbers, seed 0 (draw one) to
        :data:`MAX_SEED`, option names among the form's (a tuple of names given as
        comma-separated text), and a setup made by the rules core, which checks the values
        and the number of players.  Raises :class:`CompanionError` with a sentence for the
        page (the rules core's own for a choice it refuses)."""
        if not isinstance(players, int) or isinstance(players, bool):
            raise CompanionError("The number of players is a whole number")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
            raise CompanionError(f"The seed is a whole number from 0 (draw one) to {MAX_SEED}")
        if not isinstance(options, dict):
            raise CompanionError("The options are a list of names and values")
        chosen: dict[str, Any] = {}
        for name, value in options.items():
            if name not in self.defaults:
                raise CompanionError(f"Gardens of {self.game.name.capitalize()} on this board "
                                     f"has no option {name!r}")
            if isinstance(self.defaults[name], tuple) and isinstance(value, str):
                value = [part.strip() for part in value.split(",") if part.strip()]
            chosen[name] = value
        try:
            self.rules.new_game(players, seed or 1, dataclasses.replace(
                self.game, options=chosen).rules_options())
        except CompanionError as error:
            raise CompanionError(" ".join(str(error).split("\n"))) from None
        return players, seed, chosen

    def choose_seats(self, players: int, seats: Any) -> tuple[str, ...]:
        """``seats`` checked: comma-separated text (``""``: people everywhere) of one seat per
        player, each one of :data:`companion.config.SEATS`.  Raises :class:`CompanionError`
        with a sentence for the page."""
        if not isinstance(seats, str):
            raise CompanionError("The seats are text such as \"person, strong\"")
        chosen = tuple(part.strip() for part in seats.split(",") if part.strip())
        wrong = [seat for seat in chosen if seat not in SEATS]
        if wrong:
            raise CompanionError(f"A seat is {', '.join(SEATS[:-1])} or {SEATS[-1]}, "
                                 f"not {wrong[0]!r}")
        if chosen and len(chosen) != players:
            raise CompanionError(f"Give one seat per player: {players} seats, not "
                                 f"{len(chosen)}")
        return chosen
