"""Bad case files fail in words (``docs/CASES.md``): every malformed file, case, position or
step gives a ``FAIL`` line naming the case and the field, and a non-zero exit, never a
traceback; impossible positions are refused with every problem named at once."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import rules_check
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.cases import check_files, default_adapter_for, load_cases, run_case

CASE_DIR = Path(__file__).resolve().parent / "cases"
FIRST = {
    game: load_cases(CASE_DIR / f"{game}.json")[0] for game in ("enceladus", "mars", "uranus")
}
APPLY = {  # a case with an apply query of each game, so that steps get fuzzed too
    game: next(
        c for c in load_cases(CASE_DIR / f"{game}_extra.json") if "apply" in c["query"]
    )
    for game in ("enceladus", "mars", "uranus")
}


def run(case: dict[str, Any]) -> str:
    return run_case(case, default_adapter_for).line()


def changed(game: str, **position: Any) -> dict[str, Any]:
    case = copy.deepcopy(FIRST[game])
    case["position"].update(position)
    return case


TOO_DEEP = "lists and objects nest more than 32 levels deep; a case file may nest at most 32\n"
"""Said alike whether the JSON reader gives up or the depth check finds it: one limit."""


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, TOO_DEEP),
        ("[" * 40 + "]" * 40, TOO_DEEP),
        ("[" + "9" * 5000 + "]", "a number has more than 4300 digits"),
        ('[{"id": NaN}]', "not valid JSON (NaN is not a JSON number)"),
        ("{}", "is not a list of case objects; a case file holds a JSON list"),
        ("[1, 2]", "is not a list of case objects; a case file holds a JSON list"),
        ('"cases"', "is not a list of case objects; a case file holds a JSON list"),
        ("", "is empty; a case file holds a JSON list of case objects"),
        ("[{", "line 1: not valid JSON"),
    ],
    ids=["deep", "deeper-than-cases", "long-number", "nan", "object", "numbers", "text",
         "empty", "cut-short"],
)
def test_a_malformed_file_is_one_failure_in_words(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    result = rules_check(path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        result.stdout.splitlines()[0], "0 passed, 1 failed"], result.stdout
    assert result.stdout.startswith(f"FAIL {path}: ") and said in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_named_pipe_or_a_device_is_refused_not_waited_on(tmp_path: Path, kind: str) -> None:
    import os
    import subprocess
    import sys

    path = tmp_path / "cases.json"
    if kind == "fifo":
        os.mkfifo(path)  # nobody ever writes to it: opening it to read would wait for ever
    else:
        path = Path("/dev/zero")  # endless
    result = subprocess.run([sys.executable, "-m", "companion.cli", "rules", "check", str(path)],
                            capture_output=True, text=True, timeout=120, check=False)
    what = "a named pipe" if kind == "fifo" else "a device"
    said = f"cannot read the case file {path}: it is {what}, not a file"
    assert result.returncode == 66
    assert result.stdout.splitlines() == [f"FAIL {path}: {said}", "0 passed, 1 failed"]
    assert result.stderr == f"companion: {said}\n"


@pytest.mark.parametrize(
    ("case", "said"),
    [
        (changed("enceladus", to_move=7), "position.to_move is 7; expected a player from 1 to 2"),
        (changed("enceladus", reserves={"1": {"blue": -5}}),
         "position.reserves.1.blue is -5; expected a whole number, 0 or more"),
        (changed("enceladus", reserves={"1": {"blue": 1e308}}),
         "position.reserves.1.blue is 1e+308; expected a whole number"),
        (changed("enceladus", reserves={"1": {"blue": True}}),
         "position.reserves.1.blue is true; expected a whole number"),
        (changed("enceladus", reserves={"3": {}}), "position.reserves names player '3'"),
        (changed("enceladus", players=9), "position.players is 9; expected 2 to 5 players"),
        (changed("enceladus", reserves={"1": {"wild": 1}, "2": {"wild": 1}}),
         "position.reserves: 2 wildflowers; the game has one"),
        (changed("enceladus", reserves={"1": {"bleu": 1}}),
         "position.reserves.1: 'bleu' is not a colour of this game"),
        (changed("enceladus", cells={"z99": "blue"}),
         "position.cells: 'z99' is not a garden or start square"),
        (changed("enceladus", cells={"e5": "M3"}), "position.cells.e5: 'M3' is the Martian of no"),
        (changed("enceladus", cells={"L3": "peak"}),
         "position.cells.L3: flowers and peaks stand only in the garden"),
        (changed("mars", reserves={"1": {"blue": 31}}),
         "position.reserves.1 holds 31 flowers; each of 2 players is dealt 30"),
        (changed("mars", to_move=0), "position.to_move is 0; expected a player from 1 to 2"),
        # -0 is no coordinate a person writes: it would be a second key for the hex 0,1
        (changed("mars", cells={"-0,1": "red"}), "'-0,1' is not a hex cell"),
        (changed("uranus", cells={"-0,1": "red"}), "'-0,1' is not a hex cell"),
        # nor is a space before it: " 0,1" beside "0,1" named one hex twice, one dropped
        (changed("mars", cells={"0,1": "red", " 0,1": "blue"}), "' 0,1' is not a hex cell"),
        (changed("uranus", cells={"0,1": "red", " 0,1": "blue"}), "' 0,1' is not a hex cell"),
        (changed("mars", pool=[2.5]), "position.pool entry 1 is 2.5; expected a whole number"),
        (changed("uranus", reserves={"1": {"red": 31}}),
         "position.reserves.1 holds 31 flowers; each of 2 players is dealt 30"),
        (changed("uranus", reserves={"1": {"red": 7}, "2": {"red": 6}}),
         "position: 13 red flowers on the board and in the reserves; the game has 12"),
        (changed("uranus", hands={"1": ["hexagon"] * 6}),
         "position.hands.1 holds 6 cards; a hand holds at most 5"),
        (changed("uranus", decks=[-1]), "position.decks entry 1 is -1; expected a whole number"),
        (changed("uranus", decks=[10**18, 0, 0, 0]),
         "position: 1000000000000000000 mission cards in the decks and hands; the game has 36"),
        (changed("uranus", decks=[9, 9, 9, 9], hands={"1": ["hexagon"]}),
         "position: 37 mission cards in the decks and hands; the game has 36"),
    ],
    ids=lambda value: None if isinstance(value, dict) else value[:40],
)
def test_an_impossible_position_fails_naming_the_case_and_field(
    case: dict[str, Any], said: str
) -> None:
    line = run(case)
    assert line.startswith(f"FAIL {case['id']}: "), line
    assert said in line


def test_more_flowers_of_a_colour_than_the_game_has_are_answered_and_said(
    tmp_path: Path,
) -> None:
    # No Enceladus step or score depends on the supply, so the question is answered; the
    # verdict line stays the contract's, the slip goes to standard error.
    case = changed("enceladus", reserves={"1": {"blue": 20}, "2": {}})
    case["query"], case["expect"] = {"hands": {}}, {"hands": {"1": "0-0-0-0-20"}}
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([case]))
    result = rules_check(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [f"PASS {case['id']}", "1 passed, 0 failed"]
    assert result.stderr == (
        f"companion: {case['id']}: position: 20 blue flowers in the garden, reserves and tube; "
        "the game has 19 of each colour; answered as given\n")


def test_every_problem_of_a_position_is_named_at_once() -> None:
    line = run(changed("enceladus", to_move=7, reserves={"1": {"blue": -5, "red": 1e308}}))
    assert "position.to_move is 7" in line
    assert "position.reserves.1.blue is -5" in line
    assert "position.reserves.1.red is 1e+308" in line
    supply = run(changed("enceladus", cells={"z1": "blue", "e5": "M9"},
                         reserves={"1": {"blue": 25, "wild": 2}}))
    assert "'z1'" in supply and "'M9'" in supply
    assert "2 wildflowers" in supply


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda c: c["position"].pop("board"),
         "position.board is missing"),
        (lambda c: c["query"].update(outcome={}),
         "query is {\"board_info\": {}, \"outcome\": {}}; expected one question"),
        (lambda c: c.update(query={}), "query is {}; expected one question"),
        (lambda c: c.pop("expect"), "expect is missing"),
        (lambda c: c.update(expect=[]), "expect is []; expected an object"),
        (lambda c: c.update(expected={}), "expected is not a field of a case"),
        (lambda c: c["position"].update(tube={}), "position.tube is not a key of a uranus"),
        (lambda c: c.update(query={"mission_value": 3}),
         "query.mission_value is 3; expected a text"),
        (lambda c: c.update(expect={"destinations": [[1]]}),
         "expect.destinations entry 1 is [1]; expected a text"),
    ],
    ids=["no-board", "two-queries", "no-query", "no-expect", "expect-list", "unknown-field",
         "other-game-key", "mission-number", "destinations-lists"],
)
def test_a_malformed_case_names_the_field_and_what_is_expected(change: Any, said: str) -> None:
    case = copy.deepcopy(FIRST["uranus"])
    assert case["query"] == {"board_info": {}}  # the two-query example relies on it
    change(case)
    line = run(case)
    assert line.startswith(f"FAIL {case['id']}: the case is malformed: "), line
    assert said in line
    assert "Error" not in line and "unpack" not in line


@pytest.mark.parametrize(
    ("game", "query", "expect", "said"),
    [
        ("mars", {"legal_moves": {"die": "x"}}, {"destinations": []},
         "query.legal_moves.die is \"x\"; expected a whole number"),
        ("enceladus", {"legal_moves": {"die": 4}}, {"destinations": []},
         "query.legal_moves.die is not a key of that question; it takes nothing"),
        ("mars", {"legal_moves": {"dice": 4}}, {"destinations": []},
         "query.legal_moves.dice is not a key of that question; it takes die in mars"),
        ("uranus", {"outcome": {}}, {"zzz": None}, "expect.zzz is not a key of any answer"),
    ],
    ids=["mars-die-text", "enceladus-die", "mars-dice", "unknown-answer"],
)
def test_a_question_or_answer_key_no_question_has_is_malformed(
    game: str, query: dict[str, Any], expect: dict[str, Any], said: str
) -> None:
    case = {**copy.deepcopy(FIRST[game]), "query": query, "expect": expect}
    line = run(case)
    assert line.startswith(f"FAIL {case['id']}: the case is malformed: "), line
    assert said in line


def test_a_case_id_cannot_print_a_line_of_its_own() -> None:
    case = {**copy.deepcopy(FIRST["mars"]), "id": "x\nPASS forged\x1b[2J"}
    line = run(case)
    assert "\n" not in line and "\x1b" not in line
    assert line.startswith("PASS x\\nPASS forged\\x1b[2J") or line.startswith(
        "FAIL x\\nPASS forged\\x1b[2J"), line


def test_a_step_of_no_known_form_is_named_with_its_number() -> None:
    case = copy.deepcopy(APPLY["enceladus"])
    case["query"] = {"apply": [{"action": "move_flower", "from": "e5"}]}
    line = run(case)
    assert line == (
        f"FAIL {case['id']}: query.apply step 1 is {{\"action\": \"move_flower\", \"from\": "
        "\"e5\"}; expected a step of enceladus as docs/CASES.md (Steps) gives it"
    )


def test_a_huge_tube_draw_is_refused_not_counted_out() -> None:
    case = copy.deepcopy(APPLY["enceladus"])
    case["query"] = {"apply": [{"action": "tube", "pay": "blue", "drawn": {"red": 10**18}}]}
    case["expect"] = {"legal": False}
    assert run(case) == f"PASS {case['id']}"


def test_the_same_file_twice_fails_every_repeated_id(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([FIRST["mars"], FIRST["uranus"]]))
    lines: list[str] = []
    assert check_files([path, path], lines.append) == 1
    assert lines[:2] == [f"PASS {FIRST['mars']['id']}", f"PASS {FIRST['uranus']['id']}"]
    assert lines[2] == (
        f"FAIL {FIRST['mars']['id']}: id {FIRST['mars']['id']!r} is the id of an earlier case, "
        f"in {path}; ids are unique across the files given"
    )
    assert lines[-1] == "2 passed, 2 failed"
    other = tmp_path / "other.json"
    other.write_text(json.dumps([FIRST["mars"]]))
    lines.clear()
    check_files([path, other], lines.append)
    assert f"is the id of an earlier case, in {path};" in lines[2]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=12,
)


def _fields(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``value`` a fuzzed value may go: each field of the case, and each
    key or item within it, however deep."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else ()
    return [p for key, v in items for p in [(*path, key), *_fields(v, (*path, key))]]


BASES = [*FIRST.values(), *APPLY.values()]
PLACES = [(n, place) for n, case in enumerate(BASES) for place in _fields(case)]


@settings(max_examples=300, deadline=None)
@given(where=st.sampled_from(PLACES), value=JSON, extra=st.booleans())
def test_no_case_file_makes_the_checker_raise(
    where: tuple[int, tuple[Any, ...]], value: Any, extra: bool
) -> None:
    n, place = where
    case = copy.deepcopy(BASES[n])
    target: Any = case
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = value
    if extra and isinstance(target, dict):  # a key no case has, beside the fuzzed one
        target["x"] = value
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzzed.json"
        path.write_text(json.dumps([case]))
        status = check_files([path], lines.append)
    assert status in (0, 1)
    assert all(line.split(" ", 1)[0] in ("PASS", "FAIL", "SKIP") for line in lines[:-1])
    assert lines[-1].endswith(("passed, 0 failed", "passed, 1 failed"))


def test_the_checked_shapes_have_the_keys_the_checks_know() -> None:
    """The typed shapes a checked case is read into name exactly the keys the case checks
    know, so that no key is checked and left untyped, or typed and never checked."""
    from companion.rules.cases import _POSITION, _STEP, MarsStep, Position, UranusStep

    def keys(shape: Any) -> set[str]:
        return set(shape.__required_keys__ | shape.__optional_keys__)

    assert keys(Position) == {"players", "to_move", *_POSITION}
    assert keys(MarsStep) == set(_STEP["mars"])
    assert keys(UranusStep) == set(_STEP["uranus"])
