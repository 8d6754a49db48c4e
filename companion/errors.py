"""The one exception tree of the companion.

Every error the companion raises on purpose derives from :class:`CompanionError`, and
``str(error)`` is a sentence a player or a maker can read.  Leaves also derive from the
builtin exception that fits (``ValueError``, ``OSError``), so callers that only know the
builtins still catch them.

Every message is worded one way, the way a player reads it on the matrix or a maker in a
terminal: first what is wrong, naming the thing as it was written, in the game's notation
(the step ``'3>2,-1=pink'``, the square ``'k11'``, the field of a position), quoted when it
is the reader's own text; then, after a semicolon, what would be right::

    'pink' is not a flower colour of Gardens of Mars; the colours are blue, yellow, ...
    7 players cannot play Gardens of Uranus; it is for 2 to 5 players (Gardens of Uranus, Setup)
    '3>2,-1=red': the gardener moves in a straight line (Gardens of Mars, Moving and Planting)

One sentence with no full stop (the command puts ``companion:`` before it); the game named
in full; a step the rules forbid names the rule last, in brackets (:class:`IllegalMoveError`
does it); where the step is known it comes first, then a colon.  A message that wraps another
adds where it happened before it (``'e5-f': cannot read ...``, ``t.trace, line 2: ...``).
Several problems found at once are joined with ``"; "``, except a deal by hand, whose
problems are shown one to a line and so are sentences each.
"""

from __future__ import annotations


class CompanionError(Exception):
    """Root of every error the companion raises on purpose."""


class ConfigError(CompanionError, ValueError):
    """A configuration file or value is wrong.

    ``problems`` lists every problem found, each already a full sentence naming the file,
    the line (when known), the key and what is wrong.
    """

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class UnreadableConfigError(ConfigError):
    """A configuration file cannot be read at all: missing, a folder, no permission, not
    UTF-8 text (``companion`` exits 66, EX_NOINPUT, as for any input file it cannot read;
    a file it read but whose settings are wrong is a :class:`ConfigError`, 78)."""


class ProtocolError(CompanionError, ValueError):
    """A line from (or for) the board controller breaks the wire protocol."""


class LinkError(CompanionError, OSError):
    """The serial link to the board controller failed or was lost, or its port cannot be
    opened (``companion`` exits 69, EX_UNAVAILABLE)."""


class UsageError(CompanionError, ValueError):
    """A command-line argument is wrong in a way only the command can tell (a cell that is
    not on the chosen board, a port number out of range); ``companion`` exits 2, as for the
    errors its argument parser finds."""


class InputFileError(CompanionError, OSError):
    """A file given to read cannot be read: missing, a folder, not readable, not text
    (``companion`` exits 66, EX_NOINPUT)."""


class OutputFileError(CompanionError, OSError):
    """A file to write cannot be created or written (``companion`` exits 73, EX_CANTCREAT)."""


class RulesError(CompanionError, ValueError):
    """Base of the errors of the rules cores."""


class UnknownGameError(RulesError, KeyError):
    """A name that is no game of the companion, or no board layout of one.  Also a
    ``KeyError``, as a lookup of a name that is not there; ``str()`` is the sentence."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidStepError(RulesError):
    """A step or position cannot be read: wrong syntax or an unknown name."""


class InvalidPositionError(RulesError):
    """A position is not one the rules allow (a piece off the board, a bad count...)."""


class IllegalMoveError(RulesError):
    """A step is well formed but the rules forbid it in this position.

    ``reason`` is the sentence for the player, ``rule`` names the rule and its source
    (e.g. ``"Gardens of Mars, Moving and Planting"``), ``step`` is the step's notation.
    """

    def __init__(self, reason: str, *, rule: str, step: str | None = None) -> None:
        self.reason = reason
        self.rule = rule
        self.step = step
        where = f"{step}: " if step else ""
        super().__init__(f"{where}{reason} ({rule})")


class SimulationError(CompanionError, RuntimeError):
    """The simulator cannot go on with its virtual game: its virtual players tried every step
    they may and the companion would recognise none of them through the noise asked for."""


class InvalidArgumentError(CompanionError, ValueError):
    """A function of the companion was given a value it does not take (a negative bounce
    time, an unknown dice source, a screen of a game that does not exist).  A fault of the
    calling code, never of what a person types: the command line and the configuration
    check every value first and say what is wrong in their own words."""


class MisuseError(CompanionError, RuntimeError):
    """An object of the companion was used in an order it does not allow (a scanning thread
    started twice, a display opened by a service that has no way to build one).  A fault of
    the calling code, never of what a person does."""


class JournalError(CompanionError):
    """A game journal cannot be read or written."""


class UnreadableJournalError(JournalError, InputFileError):
    """A game journal cannot be read at all: missing, a folder, no permission."""


class JournalBusyError(JournalError):
    """Another companion is refereeing with the same journal folder."""


class JournalDamagedError(JournalError):
    """A game journal whose header is damaged: nothing in it can be resumed.  ``line`` is the
    damaged line (1) and ``reason`` a few words (``"checksum"``, ``"cut off"``...)."""

    def __init__(self, message: str, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(message)
