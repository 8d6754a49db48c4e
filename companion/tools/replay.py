"""``companion replay FILE``: a game's journal read back as text and as an animated GIF.

The journal (:mod:`companion.journal`) holds the setup and every committed step in its game's
notation, chance outcomes included, so the whole game replays through the rules core alone:
:func:`replay_game` yields one :class:`Moment` per position, :func:`format_game` prints the
steps with the scores after each, and :func:`write_gif` draws every position as the matrix
shows it (:func:`companion.display.render_frame`), in real time: a frame every
:data:`FRAME_MS`, the tickers running on from step to step as on the matrix.  Reading never
changes the file: a torn last line is skipped, not cut off, and a damaged journal is shown up
to its last good line, with a line saying where and why it stops.  Journals of every version
this companion reads are replayed, those written before lines carried checks (version 1) too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from companion import journal
from companion.display import Screen, render_frame
from companion.display.text import Ticker
from companion.errors import CompanionError, InvalidArgumentError, JournalError, UsageError
from companion.files import replaced
from companion.rules import GAMES
from companion.rules import load as load_rules
from companion.rules.base import SomeRules

log = logging.getLogger("companion.replay")

STEP_MS = 800
"""How long each step stays on screen in the GIF, in milliseconds."""

END_MS = 4000
"""How long the last position stays on screen in the GIF at least, in milliseconds (longer
when its ranking takes longer to go by)."""

FRAME_MS = 50
"""Time between two frames of the GIF, in milliseconds: the matrix's default frame interval."""

MAX_GIF_SIDE = 1024
"""The widest and tallest GIF drawn, in image pixels (every frame is held in memory)."""


@dataclass(frozen=True, slots=True)
class Moment:
    """One position of a replayed game: ``number`` (0 for the setup), the ``player`` who made
    the step that led here and its ``step`` notation (0 and ``""`` for the setup), the
    ``state`` and the ``scores`` as the matrix shows them (``((1, "3-4-5-5-6"), ...)``)."""

    number: int
    player: int
    step: str
    state: object
    scores: tuple[tuple[int, str], ...]


def replay_game(record: journal.GameRecord, rules: SomeRules) -> Iterator[Moment]:
    """Every position of ``record`` from the setup on.  Raises
    :class:`companion.errors.JournalError` when the setup or a step cannot be replayed."""
    try:
        state = rules.parse_position(record.setup)
    except CompanionError as error:
        raise JournalError(f"{record.path}: its setup cannot be read: {error}") from None
    yield Moment(0, 0, "", state, tuple(rules.status(state)))
    for number, (before, step, after) in enumerate(record.replay(rules), 1):
        yield Moment(number, rules.to_move(before), rules.format_step(before, step), after,
                     tuple(rules.status(after)))


def _scores(scores: Sequence[tuple[int, str]], widths: Sequence[int]) -> str:
    """``P1 3 pts  P2 10 pts``, each player's column ``widths[i]`` wide but the last."""
    return "  ".join(f"P{player} {score:<{width}}" for (player, score), width
                     in zip(scores, widths, strict=False)).rstrip()


def format_game(record: journal.GameRecord, moments: Sequence[Moment]) -> list[str]:
    """The lines ``companion replay`` prints: the header, one line per step (number, player,
    step, scores after it), the end of the game, or how far it got, and the hints asked."""
    header = record.header
    lines = [f"Gardens of {str(header['game']).capitalize()}, {header['players']} players, "
             f"seed {header['seed']}, started {header.get('started', '?')} ({record.path.name})"]
    options = header.get("options")
    if isinstance(options, dict) and options:
        lines.append("options: " + ", ".join(f"{k}={v}" for k, v in sorted(options.items())))
    if record.damage is not None:
        lines.append(f"({damage_note(record, moments)})")
    elif record.dropped_torn_line:
        lines.append("(the last line was cut off by a power loss and is left out)")
    width = max((len(m.step) for m in moments), default=0)
    # every player's scores in one column, however many digits they come to
    columns = [max(len(score) for _, score in column)
               for column in zip(*(m.scores for m in moments), strict=False)]
    for moment in moments:
        if moment.number == 0:
            head = "  setup"
        else:
            head = f"{moment.number:4}. P{moment.player} {moment.step}"
        lines.append(f"{head:<{width + 12}}{_scores(moment.scores, columns)}")
    if record.over is not None:
        over = record.over
        winners = " and ".join(f"Player {p}" for p in over["winners"])
        ranking = ", ".join(f"P{p} {result} ({points})" for p, result, points in over["ranking"])
        lines.append(f"Game over ({over['termination']}): {winners} won; {ranking}")
    else:
        steps = len(moments) - 1
        lines.append(f"Unfinished after {steps} step{'' if steps == 1 else 's'}")
    if record.hints:
        lines.append("Hints asked: " + ", ".join(f"P{p} {n}"
                                                 for p, n in sorted(record.hints.items())))
    if record.damage is not None:  # said again at the end, where the reader stops
        lines.append(f"({damage_note(record, moments)})")
    return lines


def damage_note(record: journal.GameRecord, moments: Sequence[Moment]) -> str:
    """What ``companion replay`` says of a damaged journal (first and last in the output, and
    on stderr): the line and why, and how far the game is shown (``moments``, the setup
    first)."""
    assert record.damage is not None
    return (f"damaged at line {record.damage.line} ({record.damage.reason}): shown up to step "
            f"{len(moments) - 1}, the rest is left out")


def layout_of(record: journal.GameRecord, rules: SomeRules) -> str:
    """The board layout a journal was played on (its game's own when it does not say)."""
    return str(record.header.get("layout", rules.name))


def history_moments(rules: SomeRules, history: Sequence[tuple[object, object]],
                    state: object) -> list[Moment]:
    """Every position of a game in play: ``history`` the referee's ``(state_before, step)``
    pairs, ``state`` the position after the last of them."""
    positions = [before for before, _ in history] + [state]
    moments = [Moment(0, 0, "", positions[0], tuple(rules.status(positions[0])))]
    for number, ((before, step), after) in enumerate(zip(history, positions[1:], strict=True),
                                                     1):
        moments.append(Moment(number, rules.to_move(before), rules.format_step(before, step),
                              after, tuple(rules.status(after))))
    return moments


def read_game(path: Path) -> tuple[journal.GameRecord, SomeRules, list[Moment]]:
    """The journal at ``path`` read and replayed: its record (checked), its game's rules and
    every position.  Raises :class:`companion.errors.JournalError` for a journal that cannot
    be read or replayed."""
    record = journal.read(path)
    game = record.header.get("game")
    if game not in GAMES or "setup" not in record.header:
        raise JournalError(f"{path} names no game this companion knows ({game!r}) or has "
                           "no setup")
    rules = load_rules(str(game)).RULES
    record = record.checked(rules)
    return record, rules, list(replay_game(record, rules))


def screens(layout: str, rules: SomeRules,
            moments: Sequence[Moment]) -> list[Screen]:
    """The matrix's screen at every position on the board ``layout``: the board, the scores
    and the step made, after the badge of the player who made it; at the end the ranking."""
    out = []
    for moment in moments:
        over = rules.outcome(moment.state)
        message = f"P{moment.player}: {moment.number}. {moment.step}" if moment.number else "Setup"
        ranking: tuple[tuple[int, str], ...] = ()
        if over is not None:
            winners = " and ".join(f"Player {p}" for p in over.winners)
            message = f"{moment.number}. P{moment.player} {moment.step}. {winners} won " \
                      f"({over.termination})"
            ranking = tuple((p, r) for p, r, _ in over.ranking)
        out.append(Screen(game=rules.name, layout=layout, cells=rules.board(moment.state),
                          scores=moment.scores, message=message, ranking=ranking,
                          to_move=moment.player if over is None else 0))
    return out


def write_gif(shown: Sequence[Screen], path: Path, *, width: int, height: int, mode: str = "RGB",
              scale: int = 8) -> None:
    """Draw ``shown`` as an animated GIF at ``path`` on a ``width`` x ``height`` matrix in
    ``mode`` (see :func:`companion.display.render_frame`), each pixel ``scale`` x ``scale``
    image pixels: every screen for :data:`STEP_MS`, the last one for :data:`END_MS` or until
    its tickers have gone by once, a frame every :data:`FRAME_MS`.

    Raises :class:`InvalidArgumentError` for an empty ``shown``, a bad mode or size
    (:class:`companion.errors.UsageError` for a GIF over :data:`MAX_GIF_SIDE` pixels a side);
    ``OSError`` when the file cannot be written.
    """
    if not shown:
        raise InvalidArgumentError("a GIF needs at least one screen")
    if max(width, height) * scale > MAX_GIF_SIDE:
        raise UsageError(f"a {width} x {height} matrix at scale {scale} makes a GIF wider than "
                         f"{MAX_GIF_SIDE} pixels: choose a smaller --scale")
    ticker = Ticker()
    frames: list[Image.Image] = []
    durations: list[int] = []
    tick = 0
    for number, screen in enumerate(shown, 1):
        count, frame = STEP_MS // FRAME_MS, 0
        while frame < count:
            rendered = render_frame(screen, width=width, height=height, mode=mode, frame=frame,
                                    ticker=ticker, tick=tick)
            if frame == 0 and number == len(shown):  # the end: until its ranking went by
                count = max(END_MS // FRAME_MS, rendered.cycle)
            image = rendered.image.convert("RGB")
            if frames and image.tobytes() == frames[-1].tobytes():
                durations[-1] += FRAME_MS  # nothing moved: the last GIF frame stays longer
            else:
                frames.append(image)
                durations.append(FRAME_MS)
            frame, tick = frame + 1, tick + 1
    big = [f.resize((width * scale, height * scale), Image.Resampling.NEAREST) for f in frames]
    big[0].save(path, format="GIF", save_all=True, append_images=big[1:], duration=durations,
                loop=0)


_OUTPUTS = (("GIF", "--gif", b"GIF8"), ("page", "--html", b"<!doctype html>"))
"""What replay writes: the GIF and the page, each with its option and how it begins."""


def _begins(path: Path, begins: bytes) -> bool:
    """Whether the file at ``path`` may be written over: it begins with ``begins`` (an
    earlier output), is empty, or is not there (or cannot be read: writing it will say)."""
    try:
        with path.open("rb") as existing:
            first = existing.read(len(begins))
    except OSError:
        return True
    return not first or first == begins


def _same_file(one: Path, other: Path) -> bool:
    """Whether ``one`` and ``other`` name the same file (a link to it included)."""
    try:
        return one.samefile(other)
    except OSError:  # one of them is not there: not the same file
        return False


def replay(path: Path, *, gif: Path | None, width: int = 16, height: int = 16, mode: str = "RGB",
           scale: int = 8, html: Path | None = None) -> list[str]:
    """Read the journal at ``path``, return the lines to print and write the GIF to ``gif``
    and the game record page to ``html`` (unless ``None``; each written whole or not at all,
    and neither when the other cannot be: :func:`companion.web.page.record_html`, one
    self-contained file).  Raises
    :class:`companion.errors.JournalError` for a journal that cannot be read or replayed,
    :class:`companion.errors.UsageError` when ``gif`` or ``html`` is the journal itself or
    a file that is not an earlier GIF or page (another game's journal given by mistake),
    :class:`companion.errors.OutputFileError` when the GIF or the page cannot be written."""
    for (what, option, begins), out in zip(_OUTPUTS, (gif, html), strict=True):
        if out is None:
            continue
        if _same_file(out, path):
            raise UsageError(f"the {what} would overwrite the journal {path} it is drawn from: "
                             f"give {option} another file name")
        if not _begins(out, begins):
            raise UsageError(f"{out} is not a {what} that replay wrote, so it does not write "
                             f"over it: give {option} another file name")
    record, rules, moments = read_game(path)
    if record.damage is not None:
        log.warning("%s is %s", path, damage_note(record, moments))
    lines = format_game(record, moments)
    layout = layout_of(record, rules)
    # Both files are begun before either is written and renamed into place only when both are
    # whole: a page that cannot be written leaves no GIF behind, and the other way round.
    with ExitStack() as outputs:
        gif_temp = None if gif is None else outputs.enter_context(replaced(gif, "GIF"))
        html_temp = None if html is None else outputs.enter_context(replaced(html, "page"))
        if gif_temp is not None:
            write_gif(screens(layout, rules, moments), gif_temp, width=width, height=height,
                      mode=mode, scale=scale)
            lines.append(f"Matrix animation: {gif}")
        if html_temp is not None:
            from companion.web.page import record_html

            title = f"Gardens of {rules.name.capitalize()}: {path.stem}"
            page = record_html(title, screens(layout, rules, moments), [m.step for m in moments])
            html_temp.write_text(page, encoding="utf-8")
            lines.append(f"Game record page: {html}")
    return lines
