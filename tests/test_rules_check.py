"""Every rule case file in ``tests/cases`` passes (``docs/CASES.md``).

Each case runs on its own (a failure names the case), and every file runs through
``companion rules check`` as a player would run it.  ``enceladus.json``, ``mars.json`` and
``uranus.json`` hold each game's core cases, the ``*_extra.json`` files the rest.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import rules_check

from companion.rules import load
from companion.rules.cases import check_files, default_adapter_for, load_cases, run_case

ROOT = Path(__file__).resolve().parents[1]
CASE_DIR = ROOT / "tests" / "cases"
CASE_FILES = sorted(CASE_DIR.glob("*.json"))
CASES = [case for path in CASE_FILES for case in load_cases(path)]
RULINGS = (ROOT / "docs" / "RULINGS.md").read_text(encoding="utf-8")
CASES_DOC = (ROOT / "docs" / "CASES.md").read_text(encoding="utf-8")
GAME_NAMES = {"enceladus": "Enceladus", "mars": "Mars", "uranus": "Uranus"}
FIRST_CASE = json.loads((CASE_DIR / "enceladus.json").read_text())[0]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    result = run_case(case, default_adapter_for)
    assert result.status == "PASS", result.line()


def test_case_ids_are_unique() -> None:
    assert len({case["id"] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_a_case_names_its_rule_and_a_source_in_the_repository(case: dict[str, Any]) -> None:
    assert case["rule"]
    game = GAME_NAMES[case["game"]]
    source = case["source"]
    ruling = re.fullmatch(rf"docs/RULINGS\.md ({game} #\w+)", source)
    section = re.fullmatch(r"docs/CASES\.md \((.+)\)", source)
    if ruling:
        assert f"### {ruling[1]}:" in RULINGS  # the ruling cited has its own heading
    elif section:
        assert f"\n## {section[1]}\n" in CASES_DOC
    else:
        assert source == f"Gardens of {game} rules"


def test_our_enceladus_cases_cover_every_special_action_and_variant() -> None:
    cases = load_cases(CASE_DIR / "enceladus_extra.json")
    used = {
        step["action"]
        for case in cases
        for step in case["query"].get("apply", [])
        if "action" in step
    }
    assert used == set(load("enceladus").ACTIONS)  # the ten of the text's table
    options = [case["options"] for case in cases]
    assert {"mode": "cooperative"} in options
    assert {"martians_per_player": 2} in options
    assert {"tube": False} in options


@pytest.mark.parametrize("game", GAME_NAMES)
def test_legal_moves_are_none_while_pieces_are_being_placed_in_every_game(game: str) -> None:
    module = load(game)
    state = module.RULES.new_game(2, 1, {})
    assert next(iter(module.RULES.legal_steps(state)), None) is not None  # placements are legal
    assert module.CASES.query(state, "legal_moves", {}) == {"destinations": []}


def test_every_game_has_its_core_and_extra_cases() -> None:
    assert [p.name for p in CASE_FILES] == [
        f"{game}{suffix}.json" for game in GAME_NAMES for suffix in ("", "_extra")
    ]


def test_the_example_of_the_case_format_passes() -> None:
    example = json.loads(re.search(r"```json\n(.*?)```", CASES_DOC, re.DOTALL)[1])
    assert example == next(case for case in CASES if case["id"] == example["id"])
    assert run_case(example, default_adapter_for).status == "PASS"


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: p.name)
def test_every_case_passes(path: Path) -> None:
    result = rules_check(path)
    lines = result.stdout.splitlines()
    cases = json.loads(path.read_text())
    assert lines[-1] == f"{len(cases)} passed, 0 failed", result.stdout + result.stderr
    assert [line.split()[1].rstrip(":") for line in lines[:-1]] == [c["id"] for c in cases]
    assert result.returncode == 0


def test_a_folder_stands_for_the_case_files_directly_in_it_by_name(tmp_path: Path) -> None:
    for name, case_id in (("b.json", "b-1"), ("a.json", "a-1"), ("deeper/c.json", "c-1")):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(json.dumps([{**FIRST_CASE, "id": case_id}]))
    (tmp_path / "notes.txt").write_text("not a case file")
    lines: list[str] = []
    assert check_files([tmp_path], lines.append) == 0
    assert lines == ["PASS a-1", "PASS b-1", "2 passed, 0 failed"]


def test_a_folder_with_no_case_file_is_one_sentence_and_exit_66(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a case file")
    result = rules_check(tmp_path)
    assert result.returncode == 66
    assert result.stderr == (f"companion: the folder {tmp_path} holds no case file "
                             "(a *.json file)\n")


def test_a_failing_case_is_reported_with_what_was_expected_and_exits_1(tmp_path: Path) -> None:
    case = copy.deepcopy(FIRST_CASE)
    case["expect"]["hands"]["1"] = "9-9-9-9-9"
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps([case]))
    result = rules_check(wrong)
    assert result.returncode == 1
    first, last = result.stdout.splitlines()
    assert re.fullmatch(rf"FAIL {case['id']}: expected .*9-9-9-9-9.*, got .*3-4-5-5-6.*", first)
    assert last == "0 passed, 1 failed"


def test_a_broken_case_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    result = rules_check(broken)
    assert result.returncode == 1
    assert "broken.json, line 1: not valid JSON" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_a_case_of_an_unknown_game_fails_rather_than_being_skipped(tmp_path: Path) -> None:
    case = {**copy.deepcopy(FIRST_CASE), "id": "x", "game": "chess"}
    path = tmp_path / "chess.json"
    path.write_text(json.dumps([case]))
    result = rules_check(path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "FAIL x: unknown game 'chess'; a case is of enceladus, mars, uranus", "0 passed, 1 failed"]


def test_a_malformed_position_fails_in_words_not_in_class_names(tmp_path: Path) -> None:
    case = copy.deepcopy(FIRST_CASE)
    case["position"]["players"] = "two"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([case]))
    first = rules_check(path).stdout.splitlines()[0]
    assert first.startswith(f"FAIL {case['id']}: the case is malformed: position.players")
    assert "Error" not in first


def test_the_help_points_at_the_case_format_in_the_repository() -> None:
    result = rules_check(Path("--help"))
    assert result.returncode == 0
    assert "docs/CASES.md" in " ".join(result.stdout.split())
    assert (ROOT / "docs" / "CASES.md").is_file()
