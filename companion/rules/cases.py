"""``companion rules check``: run rule case files (``docs/CASES.md``).

Each case is a position, one query and the answer the rules require.  The runner is generic;
each game supplies a :class:`CaseAdapter` (its module's ``CASES``) that reads the case's
position and steps into rules objects and answers queries in the case format.

Output: one ``PASS id`` / ``FAIL id: expected ..., got ...`` (or ``SKIP id: ...`` for a game
whose rules core is not built) line per case, then ``N passed, M failed`` alone on the last
line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from companion import rules as rules_pkg
from companion.errors import (
    CompanionError,
    IllegalMoveError,
    InputFileError,
    InvalidStepError,
    RulesError,
)
from companion.files import read_text


class CaseAdapter(Protocol):
    """What a game gives the case runner.

    ``position(case)`` builds the state from ``case["position"]`` and ``case["options"]``;
    ``step(state, step_json)`` reads one ``apply`` step; ``snapshot(state)`` answers in the
    shape of an ``apply`` expectation (``cells`` with every occupied cell, ``reserves``,
    ``tube``, ``scores``, ``to_move``, ``hands``, ``over``: whatever the game has);
    ``query(state, name, arg)`` answers every other query in the shape of its expectation.
    Errors: :class:`InvalidStepError` / :class:`IllegalMoveError` for a step the rules refuse.
    """

    def position(self, case: Mapping[str, Any]) -> Any: ...

    def step(self, state: Any, step: Mapping[str, Any]) -> Any: ...

    def snapshot(self, state: Any) -> dict[str, Any]: ...

    def query(self, state: Any, name: str, arg: Any) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CaseResult:
    """One case's verdict: ``status`` is ``PASS``, ``FAIL`` or ``SKIP``."""

    case_id: str
    status: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.status} {self.case_id}" + (f": {self.detail}" if self.detail else "")


def _nonzero(counts: Mapping[str, int] | None) -> dict[str, int]:
    return {k: v for k, v in (counts or {}).items() if v}


def _mismatches(
    expect: Mapping[str, Any], got: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parts of ``expect`` that ``got`` does not satisfy, and what ``got`` has there.

    Only what ``expect`` lists is compared; ``cells`` and per-player maps are compared key by
    key; colour counts ignore zeros; lists of cells or names compare as sets.
    """
    want: dict[str, Any] = {}
    have: dict[str, Any] = {}
    over = bool(got.get("over", False))
    for key, value in expect.items():
        if key == "to_move" and over:
            continue  # docs/CASES.md: to_move after the end is not compared
        if key == "cells":
            cells = got.get("cells", {})
            bad = {c: p for c, p in value.items() if cells.get(c, "") != p}
            if bad:
                want[key], have[key] = bad, {c: cells.get(c, "") for c in bad}
        elif key == "empty":
            cells = got.get("cells", {})
            bad_cells = [c for c in value if cells.get(c, "")]
            if bad_cells:
                want[key], have[key] = bad_cells, {c: cells[c] for c in bad_cells}
        elif key in ("reserves", "tube", "scores", "hands", "hands_by_player"):
            theirs = got.get(key, {})
            if key == "tube":
                if _nonzero(value) != _nonzero(theirs):
                    want[key], have[key] = value, _nonzero(theirs)
                continue
            bad_players = {}
            for player, v in value.items():
                g = theirs.get(player)
                if key == "reserves":
                    ok = _nonzero(v) == _nonzero(g)
                elif isinstance(v, list):
                    ok = sorted(v) == sorted(g or [])
                else:
                    ok = v == g
                if not ok:
                    bad_players[player] = g
            if bad_players:
                want[key] = {p: value[p] for p in bad_players}
                have[key] = bad_players
        elif key in ("destinations", "actions"):
            if set(value) != set(got.get(key, [])) or len(value) != len(set(value)):
                want[key], have[key] = sorted(value), sorted(got.get(key, []))
        elif value != got.get(key):
            want[key], have[key] = value, got.get(key)
    return want, have


def run_case(
    case: Mapping[str, Any], adapter_for: Callable[[str], CaseAdapter | None]
) -> CaseResult:
    """Run one case.  ``adapter_for(game)`` gives the game's adapter or ``None`` if not built."""
    case_id = str(case.get("id", "?"))
    game = str(case.get("game"))
    if game not in rules_pkg.GAMES:
        known = ", ".join(rules_pkg.GAMES)
        return CaseResult(case_id, "FAIL", f"unknown game {game!r}; a case is of {known}")
    adapter = adapter_for(game)
    if adapter is None:
        return CaseResult(case_id, "SKIP", f"the rules of {game!r} are not built yet")
    try:
        query = case["query"]
        expect = case["expect"]
        ((name, arg),) = query.items()
        state = adapter.position(case)
        if name == "apply":
            rules = rules_pkg.load(case["game"]).RULES
            try:
                for step_json in arg:
                    state = rules.apply(state, adapter.step(state, step_json))
            except (IllegalMoveError, InvalidStepError) as error:
                got: dict[str, Any] = {"legal": False, "reason": str(error)}
            else:
                got = {"legal": True, **adapter.snapshot(state)}
        else:
            got = adapter.query(state, name, arg)
    except (RulesError, CompanionError, KeyError, ValueError, TypeError) as error:
        what = str(error) if isinstance(error, CompanionError) else f"a malformed case ({error})"
        return CaseResult(case_id, "FAIL", f"the case could not be run: {what}")
    want, have = _mismatches(expect, got)
    if not want:
        return CaseResult(case_id, "PASS")
    detail = f"expected {json.dumps(want, sort_keys=True)}, got {json.dumps(have, sort_keys=True)}"
    if "reason" in got and want.get("legal") is True:
        detail += f" ({got['reason']})"
    return CaseResult(case_id, "FAIL", detail)


def default_adapter_for(game: str) -> CaseAdapter | None:
    """The adapter of a built game, else ``None``."""
    try:
        module = rules_pkg.load(game)
    except (KeyError, ModuleNotFoundError):
        return None
    adapter: CaseAdapter | None = getattr(module, "CASES", None)
    return adapter


def load_cases(path: Path) -> list[dict[str, Any]]:
    """Read a case file: a JSON list of case objects.  Raises
    :class:`companion.errors.InputFileError` when the file cannot be read or is not text,
    :class:`CompanionError` when it is not such a list."""
    text = read_text(path, "case file")
    if not text.strip():
        raise CompanionError(f"{path} is empty: a case file holds a JSON list of case objects")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CompanionError(
            f"{path}, line {error.lineno}: not valid JSON ({error.msg})"
        ) from error
    if not isinstance(data, list) or not all(isinstance(c, dict) for c in data):
        raise CompanionError(f"{path}: a case file must hold a JSON list of case objects")
    return data


def check_files(paths: Iterable[Path], out: Callable[[str], None] = print) -> int:
    """Run every case of every file, print the verdicts and the closing line.

    Returns the exit status: 0 when nothing failed, 1 otherwise.  Raises the
    :class:`companion.errors.InputFileError` of the first file that could not be read
    (missing, a folder, not text) after every other file was run and the closing line printed.
    """
    passed = failed = skipped = 0
    unreadable: InputFileError | None = None
    for path in paths:
        try:
            cases = load_cases(path)
        except CompanionError as error:
            out(f"FAIL {path}: {error}")
            failed += 1
            if isinstance(error, InputFileError):
                unreadable = unreadable or error
            continue
        for case in cases:
            result = run_case(case, default_adapter_for)
            out(result.line())
            if result.status == "PASS":
                passed += 1
            elif result.status == "FAIL":
                failed += 1
            else:
                skipped += 1
    out(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if unreadable is not None:
        raise unreadable
    return 1 if failed else 0
