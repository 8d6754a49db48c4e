"""The live page's New game form: the choices of the game the companion is configured for.

The sensor board is built for one game (and, for Gardens of Uranus, one board), so the page
offers that game alone: its players, its seed, the options its rules core reads (the
fields of the core's ``Options``, each with the configured value, else the core's default),
less those the board fixes (what :meth:`companion.config.GameConfig.rules_options` adds by
itself, the Uranus board), and the seats' names (``[players] names``).  A choice is checked
by the rules core's own ``new_game``, so a refusal is the core's own sentence.
"""

from __future__ import annotations

import dataclasses

from companion.config import MAX_NAME, MAX_SEED, SEATS, GameConfig, PlayersConfig
from companion.errors import CompanionError
from companion.rules import load


class Choices:
    """What the page may choose for a new game of ``game`` (the configured ``[game]``),
    with the names and seats of ``players`` (``[players]``)."""

    def __init__(self, game: GameConfig, players: PlayersConfig | None = None) -> None:
        self.game = game
        self.players = players or PlayersConfig()
        module = load(game.name)
        self.rules = module.RULES
        fixed = set(dataclasses.replace(game, options={}).rules_options())
        self.defaults: dict[str, object] = {
            f.name: game.options.get(f.name, f.default)
            for f in dataclasses.fields(module.Options) if f.name not in fixed}
        """Option name -> its value now (a bool, int, str or tuple of str)."""

    def describe(self) -> dict[str, object]:
        """The form, JSON-ready: ``game``, ``players``, ``seed``, ``seats`` (comma-separated
        text, ``""`` for people everywhere), the seat ``strengths``, ``options``
        (``[[name, value], ...]``, a tuple of names as one comma-separated text),
        ``colours``, the flower colours of reserves dealt by hand (``[]`` for a game that
        deals none), and ``names`` (one per seat, ``""`` for a seat without one)."""
        return {"game": self.game.name, "players": self.game.players, "seed": self.game.seed,
                "seats": ", ".join(self.players.seats), "strengths": list(SEATS),
                "options": [[name, ", ".join(value) if isinstance(value, tuple) else value]
                            for name, value in self.defaults.items()],
                "colours": list(getattr(load(self.game.name), "COLOURS", ())),
                "names": self.players.seat_names(self.game.players)}

    def seat_names(self, names: object, players: int) -> tuple[str, ...]:
        """``names`` (a list of texts, seat 1 first) checked for a game of ``players``: at
        most one a seat, :data:`~companion.config.MAX_NAME` characters each, spaces tidied.  Raises
        :class:`CompanionError` with a sentence for the page."""
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise CompanionError("The names are a list of texts, seat 1 first")
        tidy = [" ".join(name.split()) for name in names]
        while tidy and not tidy[-1]:  # seats left blank at the end of the list
            tidy.pop()
        if len(tidy) > players:
            raise CompanionError(f"{len(tidy)} names for {players} players: one a seat")
        if any(len(name) > MAX_NAME or not name.isprintable() for name in tidy):
            raise CompanionError(f"A name is at most {MAX_NAME} characters, letters and "
                                 "signs only")
        return tuple(tidy)

    def choose(self, players: object, seed: object, options: object, reserves: object = None
               ) -> tuple[int, int, dict[str, object], tuple[dict[str, int], ...]]:
        """``(players, seed, options, reserves)`` checked: whole numbers, seed 0 (draw one)
        to :data:`MAX_SEED`, option names among the form's (a tuple of names given as
        comma-separated text), and a setup made by the rules core, which checks the values
        and the number of players; ``reserves`` (``None``: the seed deals them) each
        player's ``{colour: count}`` as dealt by hand, which the rules core checks against
        its deal and bag.  Raises :class:`CompanionError` with a sentence for the page (the
        rules core's own for a choice it refuses, every sentence of a deal that does not
        add up)."""
        if not isinstance(players, int) or isinstance(players, bool):
            raise CompanionError("The number of players is a whole number")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
            raise CompanionError(f"The seed is a whole number from 0 (draw one) to {MAX_SEED}")
        if not isinstance(options, dict):
            raise CompanionError("The options are a list of names and values")
        chosen: dict[str, object] = {}
        for name, value in options.items():
            if name not in self.defaults:
                raise CompanionError(f"Gardens of {self.game.name.capitalize()} on this board "
                                     f"has no option {name!r}")
            if isinstance(self.defaults[name], tuple) and isinstance(value, str):
                value = [part.strip() for part in value.split(",") if part.strip()]
            chosen[name] = value
        try:
            state = self.rules.new_game(players, seed or 1, dataclasses.replace(
                self.game, options=chosen).rules_options())
        except CompanionError as error:
            raise CompanionError(" ".join(str(error).split("\n"))) from None
        dealt = _reserves(reserves)
        problems = self.rules.reserve_problems(state, dealt) if dealt else []
        if problems:
            raise CompanionError(" ".join(problems))
        return players, seed, chosen, dealt


    def choose_seats(self, players: int, seats: object) -> tuple[str, ...]:
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


def _reserves(reserves: object) -> tuple[dict[str, int], ...]:
    """Reserves as the page sends them (``None``, or a list of ``{colour: count}``), checked
    for their shape.  Raises :class:`CompanionError` with a sentence."""
    if reserves is None:
        return ()
    shape = CompanionError("The reserves are a list of colour counts, one per player")
    if not isinstance(reserves, list):
        raise shape
    dealt = [r for r in reserves if isinstance(r, dict)]
    if len(dealt) != len(reserves):
        raise shape
    for counts in dealt:
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in counts.values()):
            raise CompanionError("A reserve's counts are whole numbers")
    return tuple(dict(counts) for counts in dealt)
